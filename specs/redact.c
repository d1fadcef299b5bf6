/*
 * redact.c - the one place that decides what a URL looks like when it leaves the process or
 * goes to disk: conda's remove_auth (the userinfo "user:password@" of the authority removed)
 * and mask_anaconda_token ("/t/<token>" becomes "/t/<TOKEN>"), and a URL's query
 * ("...x.conda?token=SECRET", a signed URL's "?sig=...") removed, as issue 22 keeps every
 * credential where the user put it (conda 26.7.1 refuses a query in an explicit URL; a
 * lockfile's URL is downloaded with it, and recorded without). Every writer of history,
 * conda-meta/ files, exports, plans, progress, errors and --json goes through it, and the CLI
 * passes everything it prints through menv_text_redact as a last line of defence.
 *
 * The userinfo ends at the LAST '@' of the URL, not of the authority: a password holding a raw
 * '/', '?', '#', ' ' or '@' (which should have been %-encoded, and which Python's urlparse
 * would split elsewhere) is still removed whole. The one exception is a VCS URL of pip
 * ("git+https://host/org/repo@v1.0", a scheme with '+') whose authority is a well-formed
 * host[:port]: its last '@' names a revision, and only the authority's userinfo goes.
 *
 * Where a URL ends in free text: at the matching quote when a quote (' " `) opens it (a
 * message quoting a channel, a JSON string), so a password holding a space is still inside
 * it; otherwise at whitespace, a quote, angle brackets, a backslash or a control byte, except
 * that an authority that is no host[:port] ("usr:S3c ret@host") goes on to the next '@' of
 * the line.
 *
 * A proxy setting may have no scheme ("user:password@host:port", which curl and requests take
 * as http://): menv_proxy_redact removes its userinfo the same way.
 *
 * And the one place a file name comes from a URL (menv_url_basename): the path's last
 * component without the query and the fragment, so that neither reaches a file's name.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "specs.h"

/* Ends a URL inside free text: whitespace, quotes, angle brackets, backslash, control bytes. */
static bool url_end(unsigned char c)
{
	return c <= ' ' || c == 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' ||
	       c == '\\' || c == '`';
}

/* Whether [h, e) is a well-formed authority without userinfo: empty (file:///), "[v6]" or a
 * host of unreserved / sub-delim / %-escape characters, either with ":" and a port of digits.
 * "usr:S3c" (what is left of "usr:S3c/ret@host" before its '/') is not. */
static bool host_ok(const char *h, const char *e)
{
	if (h < e && *h == '[') {
		const char *c = memchr(h, ']', (size_t)(e - h));
		if (!c)
			return false;
		h = c + 1;
	} else {
		while (h < e && *h != ':') {
			unsigned char c = (unsigned char)*h++;
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || strchr("-._~%!$&'()*+,;=", c)))
				return false;
		}
	}
	if (h == e)
		return true;
	if (*h++ != ':')
		return false;
	while (h < e && *h >= '0' && *h <= '9')
		h++;
	return h == e;
}

/* The last '@' in [s, e), or NULL. */
static const char *last_at(const char *s, const char *e)
{
	const char *at = NULL;

	while (s < e && (s = memchr(s, '@', (size_t)(e - s))) != NULL)
		at = s++;
	return at;
}

/* The first '/' in [s, e), or e. */
static const char *first_slash(const char *s, const char *e)
{
	const char *q = memchr(s, '/', (size_t)(e - s));
	return q ? q : e;
}

/* Appends the redacted URL [s, end) (`s` just after "://"). `ssh`: an ssh URL
 * ("git+ssh://git@host/..."), whose user name alone is a login, not a secret, and is kept (a
 * password never is). */
static void redact_one(struct menv_buf *b, const char *s, const char *end, bool ssh)
{
	const char *const whole_end = end;
	const char *auth_end = first_slash(s, end), *at = last_at(s, auth_end), *p;

	if (!host_ok(at ? at + 1 : s, auth_end)) {
		/* the authority up to the first '/' is no host[:port] ("usr:S3c" of
		 * "usr:S3c/ret@host/chan"): a password holding a raw '/'. The userinfo ends at the
		 * first later '@' that a well-formed host follows, else at the last '@'. A
		 * well-formed authority is kept as RFC 3986 cuts it: an '@' in the path
		 * ("http://host:8080/sub@x", pip's "git+https://host/repo@v1") is no userinfo. */
		const char *q = auth_end, *last = last_at(s, end);
		while (q < end && (q = memchr(q, '@', (size_t)(end - q))) != NULL &&
		       !host_ok(q + 1, first_slash(q + 1, end)))
			q++;
		if (q && q < end)
			last = q;
		if (last && last >= auth_end) {
			at = last;
			auth_end = first_slash(at, end);
			ssh = false; /* a "user" holding '/' is no login name */
		}
	}
	if (at && !(ssh && !memchr(s, ':', (size_t)(at - s))))
		s = at + 1;
	/* the query ("?token=...", "?sig=..."), before the fragment, is removed; the fragment
	 * (a package's "#<md5>") stays after what is left */
	const char *h = at ? at + 1 : s, *tail = end;
	const char *frag = memchr(h, '#', (size_t)(end - h));
	const char *query = memchr(h, '?', (size_t)((frag ? frag : end) - h));
	if (query) {
		tail = frag ? frag : end;
		end = query;
		if (auth_end > end)
			auth_end = end;
	}
	menv_buf_add(b, s, (size_t)(auth_end - s));
	/* every "/t/<token>" segment of the path, not only the first as conda does */
	p = auth_end;
	while (p < end) {
		const char *t = NULL;
		for (const char *q = p; q + 3 <= end; q++)
			if (q[0] == '/' && q[1] == 't' && q[2] == '/') {
				t = q;
				break;
			}
		if (!t) {
			menv_buf_add(b, p, (size_t)(end - p));
			break;
		}
		menv_buf_add(b, p, (size_t)(t + 3 - p));
		p = t + 3;
		size_t n = 0;
		while (p + n < end && p[n] != '/' && p[n] != '?' && p[n] != '#')
			n++;
		if (n)
			menv_buf_adds(b, "<TOKEN>");
		p += n;
	}
	if (query)
		menv_buf_add(b, tail, (size_t)(whole_end - tail));
}

/* How far past a space an unquoted URL with a cut password looks for its '@' */
#define MAX_GAP 256

static bool scheme_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '-' || c == '.';
}

/* Where the URL whose "://" starts at `sep` ends inside [.., text_end): at the quote that closes
 * the one before its scheme (`scheme` is where the scheme starts, `lo` the start of the
 * text), on the same line; without one, at the first url_end byte. */
static const char *url_stop(const char *lo, const char *scheme, const char *sep,
                            const char *text_end)
{
	const char *e = sep + 3;

	if (scheme > lo && (scheme[-1] == '\'' || scheme[-1] == '"' || scheme[-1] == '`')) {
		const char *q = e;
		while (q < text_end && *q != scheme[-1] && *q != '\n' && *q != '\r')
			q++;
		if (q < text_end && *q == scheme[-1])
			return q;
	}
	while (e < text_end && !url_end((unsigned char)*e))
		e++;
	/* "http://usr:S3c ret@host/c" unquoted: an authority that is no host ("usr:S3c") and no
	 * '@' before the space is a password cut by it; the URL goes on to the word holding the
	 * next '@' on the line (looked for in the next MAX_GAP bytes, which keeps this linear) */
	if (!memchr(sep + 3, '@', (size_t)(e - sep - 3)) &&
	    !host_ok(sep + 3, first_slash(sep + 3, e))) {
		const char *q = e, *lim = text_end - e > MAX_GAP ? e + MAX_GAP : text_end;
		while (q < lim && *q != '@' && *q != '\n' && *q != '\r')
			q++;
		if (q < lim && *q == '@')
			for (e = q; e < text_end && !url_end((unsigned char)*e);)
				e++;
	}
	return e;
}

/* The first "://" in [p, end), or NULL. memchr stops at each ':' it finds, so finding every
 * "://" of a text costs O(its length) in all; a strstr(p, "://") loop measured the rest of
 * the text at each call under ASan (its interceptor runs strlen on the haystack), which made
 * the CLI's redaction of a 9 MB --json plan of 10,000 URLs take minutes there. */
static const char *scheme_sep(const char *p, const char *end)
{
	while (end - p >= 3 && (p = memchr(p, ':', (size_t)(end - p - 2))) != NULL) {
		if (p[1] == '/' && p[2] == '/')
			return p;
		p++;
	}
	return NULL;
}

/* Redacts the text [text, end); `whole`: the text is one URL, which ends where the text does. */
static char *redact(const char *text, const char *end, bool whole)
{
	struct menv_buf b = MENV_BUF_INIT;
	const char *p = text, *sep;

	menv_buf_init(&b);
	while ((sep = scheme_sep(p, end)) != NULL) {
		const char *scheme = sep;
		while (scheme > p && scheme_char((unsigned char)scheme[-1]))
			scheme--;
		bool ssh = sep - p >= 3 && !strncmp(sep - 3, "ssh", 3);
		const char *stop = whole ? end : url_stop(text, scheme, sep, end);
		menv_buf_add(&b, p, (size_t)(sep + 3 - p));
		redact_one(&b, sep + 3, stop, ssh);
		p = stop;
		if (whole)
			break;
	}
	menv_buf_add(&b, p, (size_t)(end - p));
	return menv_buf_detach(&b);
}

char *menv_text_redact(const char *text)
{
	return redact(text, text + strlen(text), false);
}

char *menv_url_redact(const char *url)
{
	return redact(url, url + strlen(url), true);
}

char *menv_proxy_redact(const char *proxy)
{
	if (strstr(proxy, "://"))
		return menv_url_redact(proxy);
	/* "user:pw@host:port": the URL requests and curl make of it, redacted, less its scheme */
	char *url = menv_xasprintf("http://%s", proxy), *safe = menv_url_redact(url);
	char *out = menv_xstrdup(safe + strlen("http://"));
	free(url);
	free(safe);
	return out;
}

void menv_proxy_json_redact(json_t *j)
{
	const char *k;
	json_t *v;

	if (json_is_string(j)) {
		char *r = menv_proxy_redact(json_string_value(j));
		json_string_set(j, r);
		free(r);
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v) menv_proxy_json_redact(v);
	}
}

void menv_json_set_url(json_t *obj, const char *key, const char *url)
{
	if (!url)
		return;
	char *safe = menv_url_redact(url);
	json_object_set_new(obj, key, json_string(safe));
	free(safe);
}

bool menv_text_needs_redaction(const char *text)
{
	char *r = menv_text_redact(text);
	bool differs = strcmp(r, text) != 0;
	free(r);
	return differs;
}

void menv_json_redact(json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_string(j)) {
		char *r = menv_text_redact(json_string_value(j));
		if (strcmp(r, json_string_value(j)))
			json_string_set(j, r);
		free(r);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) menv_json_redact(v);
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v) menv_json_redact(v);
	}
}

void menv_buf_redact(struct menv_buf *b)
{
	char *r;

	if (!b->len)
		return;
	r = menv_text_redact(b->buf);
	menv_buf_reset(b);
	menv_buf_adds(b, r);
	free(r);
}

/* ---------------------------------------------------------------------------------------- */
/* File names from URLs                                                                      */

const char *menv_url_basename(const char *url, size_t *len)
{
	const char *end = url + strcspn(url, "?#"), *p = end;
	while (p > url && p[-1] != '/')
		p--;
	*len = (size_t)(end - p);
	return p;
}

char *menv_url_filename(const char *url)
{
	size_t n;
	const char *p = menv_url_basename(url, &n);
	return menv_xstrndup(p, n);
}

bool menv_url_folder(const char *url, size_t *off, size_t *len)
{
	size_t n;
	const char *p = menv_url_basename(url, &n);
	if (p <= url + 1)
		return false;
	const char *q = p - 1;
	while (q > url && q[-1] != '/')
		q--;
	/* the authority ("h" of "https://h/x.conda") is no folder of the path */
	const char *auth = strstr(url, "://");
	if (auth && auth < q && q <= auth + 3 + strcspn(auth + 3, "/"))
		return false;
	if (q >= p - 1)
		return false;
	*off = (size_t)(q - url);
	*len = (size_t)(p - 1 - q);
	return true;
}

/* "%XY" at s (XY case-insensitive) */
static bool pct(const char *s, const char *xy)
{
	return s[0] == '%' && s[1] && s[2] && tolower((unsigned char)s[1]) == xy[0] &&
	       tolower((unsigned char)s[2]) == xy[1];
}

bool menv_url_path_climbs(const char *path)
{
	const char *end = path + strcspn(path, "?#");

	for (const char *p = path; p < end;) {
		const char *stop = p + strcspn(p, "/");
		size_t dots = 0, len;

		if (stop > end)
			stop = end;
		for (const char *q = p; q < stop; q++)
			if (*q == '\\' || pct(q, "2f") || pct(q, "5c"))
				return true; /* a '/' once decoded, or one to some servers */
		/* the segment up to its parameters (";x": "..;" is ".." to some servers) */
		len = strcspn(p, ";/");
		if (p + len > stop)
			len = (size_t)(stop - p);
		for (size_t k = 0; k < len;) {
			if (p[k] == '.')
				k++;
			else if (pct(p + k, "2e"))
				k += 3;
			else
				break;
			dots++;
			if (k == len && dots <= 2)
				return true;
		}
		p = stop < end ? stop + 1 : end;
	}
	return false;
}
