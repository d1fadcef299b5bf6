/*
 * channel.c - channel names and URLs (CEP-26), resolved the way conda's Channel model does:
 * a name goes through custom_channels (longest matching prefix), the members of
 * default_channels, else channel_alias; a URL is split into scheme, credentials ("user:pass@"),
 * token ("/t/<token>"), location, channel name, subdir and package file name, and mapped back
 * to a configured channel where one matches (migrated_custom_channels, migrated_channel_aliases,
 * custom_channels, channel_alias). The canonical name is what conda shows ("conda-forge",
 * "defaults"), never with credentials. Data-driven against conformance/channel_urls.tsv.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "specs.h"

static const char *const known_subdirs[] = {
        "noarch",       "linux-32",          "linux-64",      "linux-aarch64", "linux-armv6l",
        "linux-armv7l", "linux-ppc64",       "linux-ppc64le", "linux-riscv64", "linux-s390x",
        "osx-64",       "osx-arm64",         "win-32",        "win-64",        "win-arm64",
        "zos-z",        "emscripten-wasm32", "wasi-wasm32",   "freebsd-64",
};

#define NSUBDIRS (sizeof(known_subdirs) / sizeof(*known_subdirs))

bool menv_subdir_known(const char *subdir)
{
	for (size_t i = 0; subdir && i < NSUBDIRS; i++)
		if (!strcmp(subdir, known_subdirs[i]))
			return true;
	return false;
}

static bool has_scheme(const char *s)
{
	/* conda: [a-z][a-z0-9]{0,11}:// */
	size_t i = 0;

	if (!(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (i = 1; i < 13 && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')); i++)
		;
	return !strncmp(s + i, "://", 3);
}

static bool is_path(const char *s)
{
	return s[0] == '/' || s[0] == '~' || !strncmp(s, "./", 2) || !strncmp(s, "../", 3) ||
	       !strcmp(s, ".") || !strcmp(s, "..");
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static bool is_package_file(const char *s)
{
	return ends_with(s, ".conda") || ends_with(s, ".tar.bz2");
}

static char *xstrdup_or_null(const char *s)
{
	return s && *s ? menv_xstrdup(s) : NULL;
}

static void rstrip_slash(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
}

/* A copy of s without leading and trailing slashes. */
static char *strip_slashes(const char *s)
{
	size_t n;

	while (*s == '/')
		s++;
	n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		n--;
	return menv_xstrndup(s, n);
}

/* conda's join_url: the parts without their slashes, joined by "/"; a leading "/" when the
 * first part is missing or starts with one. NULL or empty parts are skipped. */
static char *join_url(const char *const *parts, size_t n)
{
	struct menv_buf b = MENV_BUF_INIT;

	menv_buf_init(&b);
	if (n == 0 || !parts[0] || !parts[0][0] || parts[0][0] == '/')
		menv_buf_addch(&b, '/');
	for (size_t i = 0; i < n; i++) {
		char *p;
		if (!parts[i] || !parts[i][0])
			continue;
		p = strip_slashes(parts[i]);
		if (*p) {
			if (b.len && b.buf[b.len - 1] != '/')
				menv_buf_addch(&b, '/');
			menv_buf_adds(&b, p);
		}
		free(p);
	}
	return menv_buf_detach(&b);
}

static char *join2(const char *a, const char *b)
{
	const char *p[2] = {a, b};
	return join_url(p, 2);
}

/* Splits "/t/<token>" off a URL (conda's split_anaconda_token). Returns the cleaned URL
 * without trailing slashes; *token gets the token or NULL. */
static char *split_token(const char *url, char **token)
{
	const char *t = strstr(url, "/t/");
	char *clean;
	size_t n;

	*token = NULL;
	if (!t)
		goto none;
	n = strspn(t + 3, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
	if (n == 0)
		goto none;
	*token = menv_xstrndup(t + 3, n);
	clean = menv_xasprintf("%.*s%s", (int)(t - url), url, t + 3 + n);
	rstrip_slash(clean);
	return clean;
none:
	clean = menv_xstrdup(url);
	rstrip_slash(clean);
	return clean;
}

/* Splits a known subdir off a URL or name (conda's split_platform: the first "/<subdir>"
 * followed by "/" or the end, case-insensitive). *platform gets it or NULL. */
static char *split_platform(const char *url, char **platform)
{
	const char *best = NULL;
	size_t best_len = 0;
	char *clean;

	*platform = NULL;
	for (const char *p = strchr(url, '/'); p; p = strchr(p + 1, '/')) {
		for (size_t i = 0; i < NSUBDIRS; i++) {
			size_t n = strlen(known_subdirs[i]);
			if (!strncasecmp(p + 1, known_subdirs[i], n) &&
			    (p[1 + n] == '/' || p[1 + n] == '\0')) {
				best = p;
				best_len = n;
				break;
			}
		}
		if (best)
			break;
	}
	if (!best) {
		clean = menv_xstrdup(url);
	} else {
		*platform = menv_xstrndup(best + 1, best_len);
		clean = menv_xasprintf("%.*s%s", (int)(best - url), url, best + 1 + best_len);
	}
	rstrip_slash(clean);
	return clean;
}

struct url_parts {
	char *scheme;   /* NULL when none */
	char *auth;     /* "user:pass" or NULL */
	char *hostport; /* "host[:port]" or NULL (file:///path) */
	char *path;     /* "" or "/..." */
};

static void url_parts_release(struct url_parts *u)
{
	free(u->scheme);
	free(u->auth);
	free(u->hostport);
	free(u->path);
}

/* scheme://[auth@]host[:port][/path]; without a scheme the first segment is the host. */
static void parse_url(const char *url, struct url_parts *u)
{
	const char *p = strstr(url, "://"), *rest, *end, *at;

	memset(u, 0, sizeof(*u));
	if (p && has_scheme(url)) {
		u->scheme = menv_xstrndup(url, (size_t)(p - url));
		rest = p + 3;
	} else {
		rest = url;
	}
	if (rest[0] == '/') { /* no authority: file:///path or a bare path */
		u->path = menv_xstrdup(rest);
		return;
	}
	end = rest + strcspn(rest, "/?#");
	at = NULL;
	for (const char *q = rest; q < end; q++)
		if (*q == '@')
			at = q;
	if (at) {
		u->auth = menv_xstrndup(rest, (size_t)(at - rest));
		rest = at + 1;
	}
	u->hostport = end > rest ? menv_xstrndup(rest, (size_t)(end - rest)) : NULL;
	u->path = menv_xstrndup(end, strcspn(end, "?#"));
}

/* urllib3's Url(host, port, path).url without scheme and auth. */
static char *url_remainder(const char *hostport, const char *path)
{
	if (!hostport)
		return menv_xstrdup(path ? path : "");
	if (!path || !*path)
		return menv_xstrdup(hostport);
	return menv_xasprintf("%s%s%s", hostport, path[0] == '/' ? "" : "/", path);
}

/* conda's split_scheme_auth_token: location (no scheme, auth, token), scheme, auth, token. */
static void split_sat(const char *url, char **location, char **scheme, char **auth, char **token)
{
	struct url_parts u;
	char *clean = split_token(url, token);

	parse_url(clean, &u);
	*location = url_remainder(u.hostport, u.path);
	rstrip_slash(*location);
	*scheme = u.scheme, u.scheme = NULL;
	*auth = u.auth, u.auth = NULL;
	url_parts_release(&u);
	free(clean);
}

/* Whether the "/"-separated tokens of `test` start with those of `prefix` (conda's
 * tokenized_startswith, which compares only as many tokens as both have). */
static bool tokenized_startswith(const char *test, const char *prefix)
{
	for (;;) {
		size_t a = strcspn(test, "/"), b = strcspn(prefix, "/");
		if (a != b || strncmp(test, prefix, a))
			return false;
		if (!test[a] || !prefix[b])
			return true;
		test += a + 1;
		prefix += b + 1;
	}
}

/* Replaces the first occurrence of `what` in `s` by nothing and strips slashes. */
static char *remove_first(const char *s, const char *what)
{
	const char *p = *what ? strstr(s, what) : NULL;
	char *r, *out;

	if (!p)
		return strip_slashes(s);
	r = menv_xasprintf("%.*s%s", (int)(p - s), s, p + strlen(what));
	out = strip_slashes(r);
	free(r);
	return out;
}

static struct menv_channel *chan_new(const char *scheme, const char *auth, const char *location,
                                     const char *token, const char *cname, const char *platform,
                                     const char *pkgfn)
{
	struct menv_channel *c = menv_xcalloc(1, sizeof(*c));

	c->scheme = xstrdup_or_null(scheme);
	c->auth = xstrdup_or_null(auth);
	c->location = location ? menv_xstrdup(location) : NULL;
	c->token = xstrdup_or_null(token);
	c->cname = xstrdup_or_null(cname);
	c->platform = xstrdup_or_null(platform);
	c->package_filename = xstrdup_or_null(pkgfn);
	return c;
}

struct menv_channel *menv_channel_dup(const struct menv_channel *c)
{
	struct menv_channel *d = chan_new(c->scheme, c->auth, c->location, c->token, c->cname,
	                                  c->platform, c->package_filename);
	d->name = xstrdup_or_null(c->name);
	d->base_url = xstrdup_or_null(c->base_url);
	d->priority = c->priority;
	for (size_t i = 0; i < c->mirrors.n; i++)
		menv_strvec_push(&d->mirrors, c->mirrors.v[i]);
	return d;
}

void menv_channel_free(struct menv_channel *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->base_url);
	free(c->scheme);
	free(c->auth);
	free(c->location);
	free(c->token);
	free(c->cname);
	free(c->platform);
	free(c->package_filename);
	menv_strvec_clear(&c->mirrors);
	free(c);
}

void menv_channels_free(struct menv_channel **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		menv_channel_free(v[i]);
	free(v);
}

/* ---------------------------------------------------------------------------------------- */
/* Credentials for URLs that lost them                                                       */

static void add_credentials(const char *s, const struct menv_config *cfg, struct menv_strset *seen,
                            struct menv_channel ***out, size_t *n)
{
	struct menv_channel **v = NULL;
	size_t nv = 0;

	if (!s || !*s || menv_channel_resolve(s, cfg, &v, &nv, NULL))
		return;
	for (size_t i = 0; i < nv; i++) {
		struct menv_channel *c = v[i];
		char *key = c->base_url ? menv_channel_subdir_url(c, NULL, true) : NULL;
		if (key && (c->token || c->auth) && menv_strset_add(seen, key)) {
			*out = menv_xrealloc(*out, (*n + 2) * sizeof(**out));
			(*out)[(*n)++] = c;
			v[i] = NULL;
		}
		free(key);
	}
	menv_channels_free(v, nv);
}

void menv_channel_credentials(const struct menv_config *cfg, const struct menv_strvec *a,
                              const struct menv_strvec *b, struct menv_channel ***out, size_t *n)
{
	const struct menv_strvec *lists[] = {&cfg->channels, &cfg->default_channels,
	                                     &cfg->custom_channel_names, a, b};
	struct menv_strset seen = MENV_STRSET_INIT;

	*out = NULL;
	*n = 0;
	for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++)
		for (size_t i = 0; lists[l] && i < lists[l]->n; i++)
			add_credentials(lists[l]->v[i], cfg, &seen, out, n);
	add_credentials(cfg->channel_alias, cfg, &seen, out, n);
	menv_strset_clear(&seen);
}

const struct menv_channel *
menv_channel_credentials_for(const char *url, const struct menv_channel *const *creds, size_t n)
{
	const struct menv_channel *best = NULL;
	size_t bestlen = 0;

	if (!url || !n || menv_text_needs_redaction(url))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct menv_channel *c = creds[i];
		size_t bl = c->base_url ? strlen(c->base_url) : 0;
		if (bl > bestlen && !strncmp(url, c->base_url, bl) && url[bl] == '/' &&
		    !menv_url_path_climbs(url + bl))
			best = c, bestlen = bl;
	}
	return best;
}

/* ---------------------------------------------------------------------------------------- */
/* The configuration as conda's context sees it                                              */

struct ctx {
	const struct menv_config *cfg;
	struct menv_channel *ca;        /* channel_alias */
	struct menv_channel **defaults; /* members of the `defaults` multichannel */
	size_t ndefaults;
	struct menv_channel **custom; /* custom_channels by cname, members override */
	size_t ncustom, acustom;
	struct menv_strvec mig_alias_locs; /* locations of migrated_channel_aliases */
};

/* conda's Channel.make_simple_channel. */
static struct menv_channel *simple_channel(const struct menv_channel *ca, const char *url,
                                           const char *name)
{
	char *loc, *scheme, *auth, *token, *n = NULL;
	struct menv_channel *c;

	split_sat(url, &loc, &scheme, &auth, &token);
	if (name && scheme) {
		n = strip_slashes(name);
		c = chan_new(scheme, auth, loc, token, n, NULL, NULL);
	} else if (scheme) {
		size_t al = ca->location ? strlen(ca->location) : 0;
		if (al && !strncmp(loc, ca->location, al)) {
			n = strip_slashes(loc + al);
			c = chan_new(scheme, auth, ca->location, token, n, NULL, NULL);
		} else {
			struct url_parts u;
			parse_url(loc, &u);
			n = strip_slashes(u.path ? u.path : "");
			c = chan_new(scheme, auth, u.hostport ? u.hostport : "", token, n, NULL,
			             NULL);
			url_parts_release(&u);
		}
	} else {
		n = strip_slashes(name ? name : url);
		c = chan_new(ca->scheme, ca->auth, ca->location, ca->token, n, NULL, NULL);
	}
	free(n);
	free(loc);
	free(scheme);
	free(auth);
	free(token);
	return c;
}

/* Adds a custom channel, replacing one of the same name: `seen` holds the names so far, so
 * that n distinct ones cost O(n) (a replacement, rare, scans). */
static void custom_put(struct ctx *x, struct menv_strset *seen, struct menv_channel *c)
{
	bool fresh = menv_strset_add(seen, c->cname ? c->cname : "");
	for (size_t i = 0; !fresh && i < x->ncustom; i++) {
		if (!strcmp(x->custom[i]->cname ? x->custom[i]->cname : "",
		            c->cname ? c->cname : "")) {
			menv_channel_free(x->custom[i]);
			x->custom[i] = c;
			return;
		}
	}
	if (x->ncustom == x->acustom) {
		x->acustom = x->acustom ? x->acustom * 2 : 16;
		x->custom = menv_xrealloc(x->custom, x->acustom * sizeof(*x->custom));
	}
	x->custom[x->ncustom++] = c;
}

static void ctx_init(struct ctx *x, const struct menv_config *cfg)
{
	char *loc, *scheme, *auth, *token;

	memset(x, 0, sizeof(*x));
	x->cfg = cfg;
	split_sat(cfg->channel_alias, &loc, &scheme, &auth, &token);
	x->ca = chan_new(scheme, auth, loc, token, NULL, NULL, NULL);
	free(loc), free(scheme), free(auth), free(token);
	for (size_t i = 0; i < cfg->migrated_channel_aliases.n; i++) {
		split_sat(cfg->migrated_channel_aliases.v[i], &loc, &scheme, &auth, &token);
		menv_strvec_push_owned(&x->mig_alias_locs, loc);
		free(scheme), free(auth), free(token);
	}
	x->defaults = menv_xcalloc(cfg->default_channels.n + 1, sizeof(*x->defaults));
	for (size_t i = 0; i < cfg->default_channels.n; i++)
		x->defaults[x->ndefaults++] =
		        simple_channel(x->ca, cfg->default_channels.v[i], NULL);
	struct menv_strset seen = MENV_STRSET_INIT;
	for (size_t i = 0; i < cfg->custom_channel_names.n && i < cfg->custom_channel_urls.n; i++)
		custom_put(x, &seen,
		           simple_channel(x->ca, cfg->custom_channel_urls.v[i],
		                          cfg->custom_channel_names.v[i]));
	for (size_t i = 0; i < x->ndefaults; i++)
		custom_put(x, &seen, menv_channel_dup(x->defaults[i]));
	menv_strset_clear(&seen);
}

static void ctx_release(struct ctx *x)
{
	menv_channel_free(x->ca);
	menv_channels_free(x->defaults, x->ndefaults);
	menv_channels_free(x->custom, x->ncustom);
	menv_strvec_clear(&x->mig_alias_locs);
}

static const struct menv_channel *custom_get(const struct ctx *x, const char *name)
{
	for (size_t i = 0; i < x->ncustom; i++)
		if (x->custom[i]->cname && !strcmp(x->custom[i]->cname, name))
			return x->custom[i];
	return NULL;
}

/* custom channels, longest name first (conda sorts by name length, descending) */
struct by_len {
	size_t len, at;
};

static int by_len_cmp(const void *a, const void *b)
{
	const struct by_len *x = a, *y = b;
	if (x->len != y->len)
		return x->len < y->len ? 1 : -1;
	return (x->at > y->at) - (x->at < y->at); /* stable: the configured order on a tie */
}

static size_t *custom_by_length(const struct ctx *x)
{
	size_t *ix = menv_xcalloc(x->ncustom + 1, sizeof(*ix));
	struct by_len *v = menv_xcalloc(x->ncustom + 1, sizeof(*v));

	for (size_t i = 0; i < x->ncustom; i++)
		v[i] = (struct by_len){x->custom[i]->cname ? strlen(x->custom[i]->cname) : 0, i};
	qsort(v, x->ncustom, sizeof(*v), by_len_cmp);
	for (size_t i = 0; i < x->ncustom; i++)
		ix[i] = v[i].at;
	free(v);
	return ix;
}

/* ---------------------------------------------------------------------------------------- */
/* Names and URLs to channels                                                                */

/* conda's _get_channel_for_name. */
static struct menv_channel *channel_for_name(const struct ctx *x, const char *value)
{
	char *platform, *stripped = split_platform(value, &platform);
	char *test = menv_xstrdup(stripped);
	const struct menv_channel *found = NULL;
	struct menv_channel *c;

	for (;;) {
		char *slash;
		if ((found = custom_get(x, test)))
			break;
		slash = strrchr(test, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	if (found) {
		c = menv_channel_dup(found);
		free(c->cname);
		c->cname = xstrdup_or_null(stripped);
		if (platform) {
			free(c->platform);
			c->platform = menv_xstrdup(platform);
		}
	} else {
		c = chan_new(x->ca->scheme, x->ca->auth, x->ca->location, x->ca->token, stripped,
		             platform, NULL);
	}
	free(test);
	free(stripped);
	free(platform);
	return c;
}

/* conda's _read_channel_configuration: fills location, name, scheme, auth, token of `c`
 * (auth/token only where the URL had none). */
static void read_configuration(const struct ctx *x, const char *scheme, const char *hostport,
                               const char *path_in, struct menv_channel *c)
{
	char *path = menv_xstrdup(path_in ? path_in : "");
	char *test_url;
	size_t *order = NULL;

	rstrip_slash(path);
	test_url = url_remainder(hostport, path);
	/* 1. no path: the host is the location, no name */
	if (!*path) {
		c->location = menv_xstrdup(hostport ? hostport : "");
		rstrip_slash(c->location);
		c->scheme = xstrdup_or_null(scheme);
		goto out;
	}
	/* 2. migrated_custom_channels: moved to the custom channel's new location */
	{
		const struct menv_strvec *names = &x->cfg->migrated_custom_names;
		const struct menv_strvec *urls = &x->cfg->migrated_custom_urls;
		size_t best = (size_t)-1;
		for (size_t i = 0; i < names->n && i < urls->n; i++) {
			char *loc, *s, *a, *t, *old;
			split_sat(urls->v[i], &loc, &s, &a, &t);
			old = join2(loc, names->v[i]);
			char *tu = strip_slashes(test_url), *ou = strip_slashes(old);
			if (tokenized_startswith(tu, ou) &&
			    (best == (size_t)-1 || strlen(names->v[i]) > strlen(names->v[best])))
				best = i;
			free(tu), free(ou), free(old), free(loc), free(s), free(a), free(t);
		}
		if (best != (size_t)-1) {
			char *loc, *s, *a, *t, *old, *sub, *cname;
			struct menv_channel *m;
			split_sat(urls->v[best], &loc, &s, &a, &t);
			old = join2(loc, names->v[best]);
			sub = remove_first(test_url, old);
			cname = join2(names->v[best], sub);
			m = channel_for_name(x, cname + (cname[0] == '/'));
			c->location = menv_xstrdup(m->location ? m->location : "");
			c->cname = menv_xstrdup(cname + (cname[0] == '/'));
			c->scheme = xstrdup_or_null(m->scheme);
			if (!c->auth)
				c->auth = xstrdup_or_null(m->auth);
			if (!c->token)
				c->token = xstrdup_or_null(m->token);
			menv_channel_free(m);
			free(loc), free(s), free(a), free(t), free(old), free(sub), free(cname);
			goto out;
		}
	}
	/* 3. migrated_channel_aliases: the name under the current alias */
	for (size_t i = 0; i < x->mig_alias_locs.n; i++) {
		const char *ml = x->mig_alias_locs.v[i];
		if (*ml && !strncmp(test_url, ml, strlen(ml))) {
			c->cname = remove_first(test_url, ml);
			c->location = menv_xstrdup(x->ca->location ? x->ca->location : "");
			c->scheme = xstrdup_or_null(x->ca->scheme);
			if (!c->auth)
				c->auth = xstrdup_or_null(x->ca->auth);
			if (!c->token)
				c->token = xstrdup_or_null(x->ca->token);
			goto out;
		}
	}
	/* 4. custom_channels, longest name first */
	order = custom_by_length(x);
	for (size_t k = 0; k < x->ncustom; k++) {
		const struct menv_channel *cc = x->custom[order[k]];
		char *that = join2(cc->location, cc->cname);
		const char *that_rel = that + (that[0] == '/' && test_url[0] != '/');
		if (tokenized_startswith(test_url, that_rel)) {
			char *sub = remove_first(test_url, that_rel);
			char *cname = join2(cc->cname, sub);
			c->location = menv_xstrdup(cc->location ? cc->location : "");
			c->cname = menv_xstrdup(cname + (cname[0] == '/'));
			c->scheme = xstrdup_or_null(scheme);
			if (!c->auth)
				c->auth = xstrdup_or_null(cc->auth);
			if (!c->token)
				c->token = xstrdup_or_null(cc->token);
			free(sub), free(cname), free(that);
			goto out;
		}
		free(that);
	}
	/* 5. channel_alias */
	if (x->ca->location && *x->ca->location &&
	    tokenized_startswith(test_url, x->ca->location)) {
		char *n = remove_first(test_url, x->ca->location);
		c->location = menv_xstrdup(x->ca->location);
		c->cname = *n ? n : (free(n), NULL);
		c->scheme = xstrdup_or_null(scheme);
		if (!c->auth)
			c->auth = xstrdup_or_null(x->ca->auth);
		if (!c->token)
			c->token = xstrdup_or_null(x->ca->token);
		goto out;
	}
	/* 6. other file:// URLs: the parent directory is the location */
	if (!hostport) {
		char *slash = strrchr(test_url, '/');
		c->location = slash == test_url || !slash
		                      ? menv_xstrdup("/")
		                      : menv_xstrndup(test_url, (size_t)(slash - test_url));
		c->cname = menv_xstrdup(slash ? slash + 1 : test_url);
		c->scheme = menv_xstrdup("file");
		goto out;
	}
	/* 7. host[:port] is the location, the path the name ("/conda" stays in the location,
	 * for Anaconda Enterprise) */
	{
		char *p = strip_slashes(path);
		if (!strncmp(p, "conda/", 6) || !strcmp(p, "conda")) {
			c->location = menv_xasprintf("%s/conda", hostport);
			c->cname = p[5] ? menv_xstrdup(p + 6) : NULL;
		} else {
			c->location = menv_xstrdup(hostport);
			c->cname = *p ? menv_xstrdup(p) : NULL;
		}
		free(p);
		c->scheme = xstrdup_or_null(scheme);
	}
out:
	free(order);
	free(test_url);
	free(path);
}

/* conda's parse_conda_channel_url (Channel.from_url). */
static struct menv_channel *channel_from_url(const struct ctx *x, const char *url)
{
	char *token, *platform, *pkgfn = NULL;
	char *clean = split_token(url, &token);
	char *noplat = split_platform(clean, &platform);
	struct menv_channel *c = menv_xcalloc(1, sizeof(*c));
	struct url_parts u;

	if (is_package_file(noplat)) {
		char *slash = strrchr(noplat, '/');
		if (slash) {
			pkgfn = menv_xstrdup(slash + 1);
			*slash = '\0';
		}
	}
	parse_url(noplat, &u);
	c->auth = u.auth, u.auth = NULL;
	c->token = token, token = NULL;
	read_configuration(x, u.scheme, u.hostport, u.path, c);
	if (!c->scheme)
		c->scheme = menv_xstrdup("https");
	c->platform = platform, platform = NULL;
	c->package_filename = pkgfn;
	url_parts_release(&u);
	free(noplat);
	free(clean);
	return c;
}

/* Lexically normalises an absolute path: removes "//", "/./" and resolves "/../". */
static char *normalize_path(const char *abs)
{
	char *out = menv_xmalloc(strlen(abs) + 2);
	size_t o = 0;
	const char *p = abs;

	while (*p) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - p);
		if (n == 0)
			break;
		if (n == 1 && p[0] == '.') {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

/* The folder `norm` (absolute, lexically normalised) resolves to through links, so that a
 * channel named through a link in a temporary folder is recorded as the stable location it
 * stands for (a lock naming the link could not be re-created once the folder is gone). A
 * package file or a known subdir keeps its own last component (its name says what it is);
 * a path that does not exist stays as conda writes it. Caller frees. */
static char *resolve_links(const char *norm)
{
	char buf[PATH_MAX];
	const char *slash = strrchr(norm, '/');
	struct stat st;

	if (stat(norm, &st) != 0)
		return menv_xstrdup(norm);
	if (S_ISDIR(st.st_mode) && !menv_subdir_known(slash + 1))
		return menv_xstrdup(realpath(norm, buf) ? buf : norm);
	if (slash == norm)
		return menv_xstrdup(norm);
	char *dir = menv_xstrndup(norm, (size_t)(slash - norm));
	char *out = realpath(dir, buf)
	                    ? menv_xasprintf("%s%s%s", buf, strcmp(buf, "/") ? "/" : "", slash + 1)
	                    : menv_xstrdup(norm);
	free(dir);
	return out;
}

static char *path_to_url(const char *s)
{
	char *abs, *norm, *real, *url;

	if (s[0] == '~') {
		const char *h = getenv("HOME");
		abs = menv_xasprintf("%s%s", h ? h : "", s + 1);
	} else if (s[0] == '/') {
		abs = menv_xstrdup(s);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			strcpy(cwd, "/");
		abs = menv_xasprintf("%s/%s", cwd, s);
	}
	norm = normalize_path(abs);
	real = resolve_links(norm);
	url = menv_xasprintf("file://%s", real);
	free(abs);
	free(norm);
	free(real);
	return url;
}

/* ---------------------------------------------------------------------------------------- */
/* Canonical names                                                                           */

static bool is_default_member(const struct ctx *x, const char *cname)
{
	for (size_t i = 0; i < x->ndefaults; i++)
		if (x->defaults[i]->cname && !strcmp(x->defaults[i]->cname, cname))
			return true;
	return false;
}

static char *canonical_name(const struct ctx *x, const struct menv_channel *c)
{
	const char *n = c->cname ? c->cname : "";
	const struct menv_strvec *cn = &x->cfg->custom_channel_names;
	char *j;

	if (*n && is_default_member(x, n))
		return menv_xstrdup("defaults");
	for (size_t i = 0; i < cn->n; i++)
		if (*n && tokenized_startswith(n, cn->v[i]))
			return menv_xstrdup(n);
	/* a label of a member of defaults ("pkgs/main/label/dev") */
	for (size_t i = 0; i < x->ndefaults; i++)
		if (*n && x->defaults[i]->cname && tokenized_startswith(n, x->defaults[i]->cname))
			return menv_xstrdup("defaults");
	if (c->location && x->ca->location && !strcmp(c->location, x->ca->location))
		return menv_xstrdup(n);
	for (size_t i = 0; i < x->mig_alias_locs.n; i++)
		if (c->location && !strcmp(c->location, x->mig_alias_locs.v[i]))
			return menv_xstrdup(n);
	j = join2(c->location, c->cname);
	if (c->scheme) {
		char *r = menv_xasprintf("%s://%s", c->scheme, j);
		free(j);
		return r;
	}
	memmove(j, j + strspn(j, "/"), strlen(j + strspn(j, "/")) + 1);
	return j;
}

static void finish(const struct ctx *x, struct menv_channel *c, const char *multiname)
{
	char *j = join2(c->location, c->cname);

	free(c->name);
	free(c->base_url);
	c->name = multiname ? menv_xstrdup(multiname) : canonical_name(x, c);
	c->base_url = menv_xasprintf("%s://%s", c->scheme ? c->scheme : "https", j);
	rstrip_slash(c->base_url);
	free(j);
	/* mirrored_channels, by canonical name, else by base URL */
	menv_strvec_clear(&c->mirrors);
	const struct menv_strvec *mn = x->cfg ? &x->cfg->mirrored_channel_names : NULL;
	for (int by_url = 0; mn && by_url < 2 && !c->mirrors.n; by_url++)
		for (size_t i = 0; i < mn->n; i++)
			if (!strcmp(mn->v[i], by_url ? c->base_url : c->name))
				menv_strvec_push(&c->mirrors, x->cfg->mirrored_channel_urls.v[i]);
}

static void push(struct menv_channel ***out, size_t *n, struct menv_channel *c)
{
	*out = menv_xrealloc(*out, (*n + 1) * sizeof(**out));
	(*out)[(*n)++] = c;
}

/* The members of a multichannel ("defaults", "local"); false when `name` is none. */
static bool multichannel(const struct ctx *x, const char *name, const char *platform,
                         const char *shown, struct menv_channel ***out, size_t *n)
{
	if (!strcmp(name, "local"))
		return true; /* no local build channel */
	if (strcmp(name, "defaults"))
		return false;
	for (size_t i = 0; i < x->ndefaults; i++) {
		struct menv_channel *c = menv_channel_dup(x->defaults[i]);
		if (platform) {
			free(c->platform);
			c->platform = menv_xstrdup(platform);
		}
		finish(x, c, shown);
		push(out, n, c);
	}
	return true;
}

/* Whether a channel URL's authority, as parse_url splits it (at the first '/', '?' or '#', the
 * userinfo at its last '@'), is a host[:port]: empty (file:///), "[v6]", or host characters
 * with a port of digits. "http://usr:S3c/ret@host/c" splits as the host "usr:S3c", which is
 * a password cut by its raw '/', not a host (urlparse would raise on its port). A value
 * without a scheme has none to check. */
static bool authority_ok(const char *s)
{
	struct url_parts u;
	bool ok = true;

	if (!has_scheme(s))
		return true;
	parse_url(s, &u);
	if (u.hostport) {
		const char *h = u.hostport;
		if (*h == '[') {
			const char *c = strchr(h, ']');
			h = c ? c + 1 : "?";
		} else {
			h += strcspn(h, ":");
			for (const char *q = u.hostport; q < h && ok; q++)
				ok = *q != ' ' && *q != '\\';
		}
		if (ok && *h == ':')
			h += 1 + strspn(h + 1, "0123456789");
		ok = ok && *h == '\0';
	}
	url_parts_release(&u);
	return ok;
}

/* The '@' of a channel URL's path that could end a userinfo holding a raw '/'
 * ("http://tok/en@host/chan": the host "tok" and the path "/en@host/chan" as RFC 3986 and
 * urlparse cut it, or the user "tok/en" of "host"): an '@' in the path of a URL with a host
 * (not file://) followed by host characters up to the next '/'. Such a URL is refused as
 * ambiguous rather than guessed at: redacted either way, one reading leaves a secret in the
 * text. NULL when there is none. */
static const char *ambiguous_at(const char *s)
{
	const char *p = strstr(s, "://");
	if (!p || !has_scheme(s) || !strncmp(s, "file:", 5))
		return NULL;
	const char *auth = p + 3, *end = auth + strcspn(auth, "/?#");
	if (end == auth || *end != '/')
		return NULL;
	const char *path_end = end + strcspn(end, "?#");
	for (const char *q = end; q < path_end; q++) {
		if (*q != '@')
			continue;
		size_t n = strcspn(q + 1, "/?#@");
		size_t h = strspn(q + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		                         "0123456789.-_[]:");
		if (n && h == n)
			return q;
	}
	return NULL;
}

/* Whether s holds "::" (a "channel::package" spec, not a channel) outside the "[v6]" host of
 * a URL's authority: "http://[::1]:8000/chan" is a channel, as urlparse reads it. */
static bool double_colon(const char *s)
{
	const char *p = has_scheme(s) ? strstr(s, "://") : NULL;
	if (!p)
		return strstr(s, "::") != NULL;
	const char *auth = p + 3, *end = auth + strcspn(auth, "/?#");
	const char *at = NULL;
	for (const char *q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	const char *host = at ? at + 1 : auth, *close = NULL;
	if (*host == '[')
		close = memchr(host, ']', (size_t)(end - host));
	for (const char *q = s; *q; q++) {
		if (close && q == host)
			q = close;
		else if (q[0] == ':' && q[1] == ':')
			return true;
	}
	return false;
}

/* conda's Channel.from_value. */
static int resolve(const struct ctx *x, const char *value, struct menv_channel ***out, size_t *n,
                   struct menv_error *err)
{
	struct menv_channel *c = NULL;
	char *s;
	size_t len;

	while (*value == ' ' || *value == '\t')
		value++;
	len = strlen(value);
	while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (len == 0)
		return menv_error_set(err, MENV_EPARSE, "empty channel name");
	s = menv_xstrndup(value, len);
	if (strchr(s, ' ') || double_colon(s) || !authority_ok(s)) {
		char *shown = menv_url_redact(s);
		menv_error_set(
		        err, MENV_EPARSE,
		        has_scheme(s) && !authority_ok(s)
		                ? "invalid channel '%s': its host[:port] is malformed (a '/', "
		                  "'?', '#', '@' or space in a user name or password must be "
		                  "%%-encoded)"
		                : "invalid channel '%s'",
		        shown);
		free(shown);
		free(s);
		return MENV_EPARSE;
	}
	const char *at = ambiguous_at(s);
	if (at) {
		/* shown from after that '@': no part of what may be a userinfo */
		char *cut = menv_xasprintf("%.*s://%s", (int)(strstr(s, "://") - s), s, at + 1);
		char *shown = menv_url_redact(cut);
		menv_error_set(err, MENV_EPARSE,
		               "invalid channel '%s': an '@' in its path is ambiguous (a '/' in a "
		               "user name or password must be %%-encoded as %%2F, an '@' in a path "
		               "as %%40)",
		               shown);
		free(shown);
		free(cut);
		free(s);
		return MENV_EPARSE;
	}
	if (!strcmp(s, "<unknown>") || !strcmp(s, "None:///<unknown>") || !strcmp(s, "None")) {
		multichannel(x, "defaults", NULL, "<unknown>", out, n);
	} else if (has_scheme(s)) {
		c = channel_from_url(x, s);
	} else if (is_path(s)) {
		char *url = path_to_url(s);
		c = channel_from_url(x, url);
		free(url);
	} else if (is_package_file(s)) {
		c = channel_from_url(x, s);
	} else {
		char *platform, *stripped = split_platform(s, &platform);
		if (!multichannel(x, stripped, platform, stripped, out, n))
			c = channel_for_name(x, s);
		free(stripped);
		free(platform);
	}
	if (c) {
		finish(x, c, NULL);
		push(out, n, c);
	}
	free(s);
	return 0;
}

int menv_channel_resolve(const char *s, const struct menv_config *cfg, struct menv_channel ***out,
                         size_t *n, struct menv_error *err)
{
	struct ctx x;
	int rc;

	*out = NULL;
	*n = 0;
	ctx_init(&x, cfg);
	rc = resolve(&x, s, out, n, err);
	ctx_release(&x);
	return rc;
}

int menv_channel_resolve_spec(const char *channel, const char *subdir,
                              const struct menv_config *cfg, struct menv_channel ***out, size_t *n,
                              struct menv_error *err)
{
	struct menv_channel **first = NULL;
	size_t nfirst = 0;
	struct ctx x;
	int rc;

	*out = NULL;
	*n = 0;
	ctx_init(&x, cfg);
	rc = resolve(&x, channel, &first, &nfirst, err);
	if (rc)
		goto out;
	/* a name is kept as its canonical name (MatchSpec stores that): "pkgs/main" is
	 * "defaults"; a URL keeps its own channel */
	if (!has_scheme(channel) && !is_path(channel) && nfirst == 1 &&
	    strcmp(first[0]->name, channel)) {
		char *canon = menv_xstrdup(first[0]->name);
		const char *plat = subdir ? subdir : first[0]->platform;
		char *platform = plat ? menv_xstrdup(plat) : NULL;
		menv_channels_free(first, nfirst);
		first = NULL, nfirst = 0;
		rc = resolve(&x, canon, &first, &nfirst, err);
		for (size_t i = 0; !rc && platform && i < nfirst; i++) {
			free(first[i]->platform);
			first[i]->platform = menv_xstrdup(platform);
		}
		free(canon);
		free(platform);
		if (rc)
			goto out;
	}
	for (size_t i = 0; subdir && i < nfirst; i++) {
		free(first[i]->platform);
		first[i]->platform = menv_xstrdup(subdir);
	}
	*out = first, first = NULL;
	*n = nfirst, nfirst = 0;
out:
	menv_channels_free(first, nfirst);
	ctx_release(&x);
	return rc;
}

int menv_channel_parse(const char *s, const struct menv_config *cfg, struct menv_channel **out,
                       struct menv_error *err)
{
	struct menv_channel **v = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	rc = menv_channel_resolve(s, cfg, &v, &n, err);
	if (rc)
		return rc;
	if (n != 1) {
		menv_channels_free(v, n);
		return menv_error_set(err, MENV_EPARSE,
		                      "channel '%s' stands for %zu channels: "
		                      "expand it first",
		                      s, n);
	}
	*out = v[0];
	free(v);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* URLs                                                                                      */

char *menv_channel_subdir_url(const struct menv_channel *c, const char *subdir,
                              bool with_credentials)
{
	const char *parts[5];
	size_t np = 0;
	char *j, *url;

	parts[np++] = c->location;
	if (with_credentials && c->token) {
		parts[np++] = "t";
		parts[np++] = c->token;
	}
	parts[np++] = c->cname;
	parts[np++] = subdir;
	j = join_url(parts, np);
	if (with_credentials && c->auth)
		url = menv_xasprintf("%s://%s@%s", c->scheme ? c->scheme : "https", c->auth, j);
	else
		url = menv_xasprintf("%s://%s", c->scheme ? c->scheme : "https", j);
	free(j);
	return url;
}

void menv_channel_urls(const struct menv_channel *c, const char *subdir, bool with_credentials,
                       struct menv_strvec *out)
{
	const char *first = c->platform ? c->platform : subdir;

	if (first)
		menv_strvec_push_owned(out, menv_channel_subdir_url(c, first, with_credentials));
	if (!first || strcmp(first, "noarch"))
		menv_strvec_push_owned(out, menv_channel_subdir_url(c, "noarch", with_credentials));
}

void menv_channels_expand(const struct menv_strvec *in, const struct menv_config *cfg,
                          struct menv_strvec *out)
{
	struct menv_strset seen = MENV_STRSET_INIT;
	for (size_t i = 0; i < out->n; i++)
		menv_strset_add(&seen, out->v[i]);
	for (size_t i = 0; i < in->n; i++) {
		const char *c = in->v[i];
		if (!strcmp(c, "nodefaults"))
			continue;
		if (!strcmp(c, "defaults")) {
			for (size_t j = 0; j < cfg->default_channels.n; j++)
				menv_strvec_push_unique(out, &seen, cfg->default_channels.v[j]);
			continue;
		}
		menv_strvec_push_unique(out, &seen, c);
	}
	menv_strset_clear(&seen);
}
