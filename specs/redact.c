/*
 * redact.c - the one place that decides what a URL looks like when it leaves the process or
 * goes to disk: conda's remove_auth (the userinfo "user:password@" of the authority removed)
 * and mask_anaconda_token ("/t/<token>" becomes "/t/<TOKEN>"). Every writer of history,
 * conda-meta/ files, exports, plans, progress, errors and --json goes through it, and the CLI
 * passes everything it prints through menv_text_redact as a last line of defence.
 *
 * The authority is everything after "://" up to the first '/' (or the end of the word): a
 * password holding '?' or '#' is still removed, and with several '@' the LAST one ends the
 * userinfo (as Python's urlparse, which conda uses, takes netloc.rpartition('@')).
 */
#include <stdlib.h>
#include <string.h>

#include "specs.h"

/* Ends a URL inside free text: whitespace, quotes, angle brackets, backslash, control bytes. */
static bool url_end(unsigned char c)
{
	return c <= ' ' || c == 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' ||
	       c == '\\' || c == '`';
}

/* Appends the redacted URL that starts at `s` (just after "://") and returns where it ends.
 * `ssh`: an ssh URL ("git+ssh://git@host/..."), whose user name alone is a login, not a
 * secret, and is kept (a password never is). */
static const char *redact_one(struct menv_buf *b, const char *s, bool ssh)
{
	const char *auth_end = s, *at = NULL, *end, *p;

	while (*auth_end && *auth_end != '/' && !url_end((unsigned char)*auth_end)) {
		if (*auth_end == '@')
			at = auth_end;
		auth_end++;
	}
	if (at && !(ssh && !memchr(s, ':', (size_t)(at - s))))
		s = at + 1;
	menv_buf_add(b, s, (size_t)(auth_end - s));
	end = auth_end;
	while (*end && !url_end((unsigned char)*end))
		end++;
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
	return end;
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

char *menv_text_redact(const char *text)
{
	struct menv_buf b = MENV_BUF_INIT;
	const char *p = text, *end = text + strlen(text), *sep;

	menv_buf_init(&b);
	while ((sep = scheme_sep(p, end)) != NULL) {
		bool ssh = sep - p >= 3 && !strncmp(sep - 3, "ssh", 3);
		menv_buf_add(&b, p, (size_t)(sep + 3 - p));
		p = redact_one(&b, sep + 3, ssh);
	}
	menv_buf_adds(&b, p);
	return menv_buf_detach(&b);
}

char *menv_url_redact(const char *url)
{
	return menv_text_redact(url);
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
