/*
 * config.c - menv settings from conda's .condarc files (same keys, same search path, plus
 * $MENVRC) and environment variables (MENV_<KEY>, CONDA_<KEY>). Only the keys menv uses are
 * read; others are ignored so an existing .condarc works unchanged. Every key goes through
 * one setter (set_scalar, set_list, set_map) whichever source it comes from.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "internal.h"
#include "specs.h"

#define DEFAULT_ALIAS "https://conda.anaconda.org"

/* HOME (menv_home), or "~" when it is unusable: paths built from it then keep their "~" and
 * menv_config_load refuses them (check_home) instead of using "/" or the current directory. */
static char *home_dir(void)
{
	const char *h;
	return menv_xstrdup(menv_home(&h, NULL) == 0 ? h : "~");
}

/* A leading "~" made HOME and "~USER" that user's home directory (its passwd entry), as
 * Python's os.path.expanduser. A "~USER" with no such user is kept as written, and
 * check_home refuses it: expanduser leaves it too, and conda's abspath() then makes it
 * <cwd>/~USER/..., a folder named "~USER" in whatever directory the command runs from; menv
 * never makes anything there on its behalf. Caller frees. */
static char *expand_user(const char *p)
{
	if (p[0] == '~' && (p[1] == '/' || !p[1])) {
		char *h = home_dir();
		char *r = menv_xasprintf("%s%s", h, p + 1);
		free(h);
		return r;
	}
	if (p[0] == '~') {
		size_t n = strcspn(p + 1, "/");
		char *user = menv_xstrndup(p + 1, n), buf[4096];
		struct passwd pw, *found = NULL;
		char *r = NULL;
		if (getpwnam_r(user, &pw, buf, sizeof(buf), &found) == 0 && found &&
		    found->pw_dir && found->pw_dir[0] == '/')
			r = menv_xasprintf("%s%s", found->pw_dir, p + 1 + n);
		free(user);
		if (r)
			return r;
	}
	return menv_xstrdup(p);
}

/* "scheme://host[:port]" of a URL (credentials dropped). Caller frees. */
static char *url_origin(const char *url)
{
	const char *p = strstr(url, "://");
	const char *host, *end, *at;

	if (!p)
		return menv_xstrdup(url);
	host = p + 3;
	end = host + strcspn(host, "/");
	at = NULL; /* the LAST '@' ends the userinfo: a password may hold '@' */
	for (const char *q = host; q < end; q++)
		if (*q == '@')
			at = q;
	if (at)
		host = at + 1;
	return menv_xasprintf("%.*s://%.*s", (int)(p - url), url, (int)(end - host), host);
}

/* A pkgs_dirs/envs_dirs entry as conda's context expands it, os.path.abspath(expanduser(
 * expandvars(p))): $VAR and ${VAR} replaced where VAR is set (kept as written where not), a
 * leading "~" made HOME (kept when HOME is unusable: check_home refuses it), "." and ".."
 * resolved lexically (a relative path, which check_path refuses wherever a value comes in,
 * taken from the current directory). `vars_only`: $VAR and ~ alone. Caller frees. */
static char *expand_dir_as(const char *p, bool vars_only)
{
	struct menv_buf b = MENV_BUF_INIT, out = MENV_BUF_INIT;
	char *user;

	for (const char *q = p; *q;) {
		bool brace = q[0] == '$' && q[1] == '{';
		const char *n = q + (brace ? 2 : 1);
		size_t len = strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                       "0123456789_");
		if (q[0] != '$' || !len || (brace && n[len] != '}')) {
			menv_buf_addch(&b, *q++);
			continue;
		}
		char *name = menv_xstrndup(n, len);
		const char *v = getenv(name);
		free(name);
		size_t whole = (size_t)(n - q) + len + (brace ? 1 : 0);
		if (v)
			menv_buf_adds(&b, v);
		else
			menv_buf_add(&b, q, whole);
		q += whole;
	}
	user = expand_user(b.buf ? b.buf : "");
	menv_buf_release(&b);
	if (vars_only)
		return user;
	char cwd[4096];
	if (!*user || user[0] == '~' || (user[0] != '/' && !getcwd(cwd, sizeof(cwd))))
		return user;
	/* os.path.normpath of user (cwd/user): no "", "." segments, ".." takes one out */
	char *joined = user[0] == '/' ? menv_xstrdup(user) : menv_xasprintf("%s/%s", cwd, user);
	char *save = NULL;
	size_t *starts = menv_xcalloc(strlen(joined) + 1, sizeof(*starts)), depth = 0;
	free(user);
	for (char *seg = strtok_r(joined, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..")) {
			if (depth) {
				out.len = starts[--depth];
				out.buf[out.len] = '\0';
			}
			continue;
		}
		starts[depth++] = out.len;
		menv_buf_addch(&out, '/');
		menv_buf_adds(&out, seg);
	}
	if (!out.len)
		menv_buf_addch(&out, '/');
	free(starts);
	free(joined);
	return menv_buf_detach(&out);
}

static char *expand_dir(const char *p)
{
	return expand_dir_as(p, false);
}

static void strip_slash(char *s)
{
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
}

/* A list of folders (pkgs_dirs or envs_dirs) becomes `dirs` (each expanded, no trailing
 * slash, repeats dropped; taken over, emptied), every entry kept in order (conda looks a
 * package or a name up in each); [<root>/SUB] when none is left. `*first` becomes its first
 * entry until menv_config_load picks the first writable one. */
static void set_dirs(struct menv_config *cfg, struct menv_strvec *list, char **first,
                     const char *sub, struct menv_strvec *dirs)
{
	menv_strvec_clear(list);
	for (size_t i = 0; i < dirs->n; i++) {
		char *d = expand_dir(dirs->v[i]);
		strip_slash(d);
		if (*d && !menv_strvec_contains(list, d))
			menv_strvec_push(list, d);
		free(d);
	}
	menv_strvec_clear(dirs);
	if (!list->n)
		menv_strvec_push_owned(list, menv_xasprintf("%s/%s", cfg->root_prefix, sub));
	free(*first);
	*first = menv_xstrdup(list->v[0]);
}

static void set_pkgs_dirs(struct menv_config *cfg, struct menv_strvec *dirs)
{
	set_dirs(cfg, &cfg->pkgs_dirs, &cfg->pkgs_dir, "pkgs", dirs);
	cfg->pkgs_dir_writable = true;
}

static void set_envs_dirs(struct menv_config *cfg, struct menv_strvec *dirs)
{
	set_dirs(cfg, &cfg->envs_dirs, &cfg->envs_dir, "envs", dirs);
}

static void set_root(struct menv_config *cfg, const char *root)
{
	struct menv_strvec none = MENV_STRVEC_INIT, none2 = MENV_STRVEC_INIT;

	free(cfg->root_prefix);
	cfg->root_prefix = expand_user(root);
	strip_slash(cfg->root_prefix);
	set_envs_dirs(cfg, &none2);
	set_pkgs_dirs(cfg, &none);
}

/* Moves the root prefix; pkgs_dirs and envs_dirs set explicitly (not [<root>/pkgs],
 * [<root>/envs]) are kept. */
static void change_root(struct menv_config *cfg, const char *root)
{
	char *def = menv_xasprintf("%s/pkgs", cfg->root_prefix);
	char *edef = menv_xasprintf("%s/envs", cfg->root_prefix);
	bool dflt = cfg->pkgs_dirs.n == 1 && !strcmp(def, cfg->pkgs_dirs.v[0]);
	bool edflt = cfg->envs_dirs.n == 1 && !strcmp(edef, cfg->envs_dirs.v[0]);
	struct menv_strvec keep = cfg->pkgs_dirs, ekeep = cfg->envs_dirs;

	memset(&cfg->pkgs_dirs, 0, sizeof(cfg->pkgs_dirs));
	memset(&cfg->envs_dirs, 0, sizeof(cfg->envs_dirs));
	set_root(cfg, root);
	if (!dflt)
		set_pkgs_dirs(cfg, &keep);
	if (!edflt)
		set_envs_dirs(cfg, &ekeep);
	menv_strvec_clear(&keep);
	menv_strvec_clear(&ekeep);
	free(edef);
	free(def);
}

/* Whether menv can write into the package cache `dir` (conda's PackageCacheData
 * is_writable): its urls.txt writable where there is one, else the directory itself, or, not
 * made yet, the nearest path above it that exists, which must be a writable directory. access(2) answers for a read-only
 * mount (EROFS) and for modes, with the real uid (root passes any mode). */
static bool cache_writable(const char *dir)
{
	char *urls = menv_xasprintf("%s/urls.txt", dir);
	char *p = menv_xstrdup(dir);
	bool ok;

	if (access(urls, F_OK) == 0) {
		ok = access(urls, W_OK) == 0 && access(dir, W_OK | X_OK) == 0;
		goto out;
	}
	for (;;) {
		struct stat st;
		if (stat(p, &st) == 0) {
			ok = S_ISDIR(st.st_mode) && access(p, W_OK | X_OK) == 0;
			break;
		}
		char *slash = strrchr(p, '/');
		if (!slash || slash == p) {
			ok = access("/", W_OK | X_OK) == 0;
			break;
		}
		*slash = '\0';
	}
out:
	free(p);
	free(urls);
	return ok;
}

/* pkgs_dir: the first writable entry of pkgs_dirs (conda's first_writable), or, none being
 * writable, the first entry with pkgs_dir_writable false. */
static void pick_pkgs_dir(struct menv_config *cfg)
{
	for (size_t i = 0; i < cfg->pkgs_dirs.n; i++) {
		if (cache_writable(cfg->pkgs_dirs.v[i])) {
			free(cfg->pkgs_dir);
			cfg->pkgs_dir = menv_xstrdup(cfg->pkgs_dirs.v[i]);
			cfg->pkgs_dir_writable = true;
			return;
		}
	}
	free(cfg->pkgs_dir);
	cfg->pkgs_dir = menv_xstrdup(cfg->pkgs_dirs.v[0]);
	cfg->pkgs_dir_writable = false;
}

/* envs_dir: the first entry of envs_dirs that exists as a writable directory or could be
 * made (its nearest existing parent a writable directory), as conda's
 * first_writable_envs_dir (which makes it and writes a test file: here nothing is made
 * until a create needs it); none such, the first entry (the create then fails there). */
static void pick_envs_dir(struct menv_config *cfg)
{
	for (size_t i = 0; i < cfg->envs_dirs.n; i++) {
		if (cache_writable(cfg->envs_dirs.v[i])) {
			free(cfg->envs_dir);
			cfg->envs_dir = menv_xstrdup(cfg->envs_dirs.v[i]);
			return;
		}
	}
	free(cfg->envs_dir);
	cfg->envs_dir = menv_xstrdup(cfg->envs_dirs.v[0]);
}

void menv_config_defaults(struct menv_config *cfg)
{
	char *h = home_dir();
	char *root = menv_xasprintf("%s/.menv", h);
	const char *sub = getenv("CONDA_SUBDIR");

	memset(cfg, 0, sizeof(*cfg));
	set_root(cfg, root);
	cfg->channel_alias = menv_xstrdup(DEFAULT_ALIAS);
	menv_strvec_push(&cfg->default_channels, "https://repo.anaconda.com/pkgs/main");
	menv_strvec_push(&cfg->default_channels, "https://repo.anaconda.com/pkgs/r");
	cfg->channel_priority = MENV_PRIORITY_STRICT; /* micromamba's default (conda: flexible) */
	cfg->download_threads = 5;
	cfg->smoke_check = true;
	cfg->subdir = menv_xstrdup(sub && *sub ? sub : menv_platform_subdir());
	/* conda's DEFAULT_CUSTOM_CHANNELS: pkgs/pro lives where the default channels live */
	char *origin = url_origin(cfg->default_channels.v[0]);
	menv_strvec_push(&cfg->custom_channel_names, "pkgs/pro");
	menv_strvec_push_owned(&cfg->custom_channel_urls, origin);
	cfg->remote_max_retries = 3;
	cfg->remote_backoff_factor = 1.0;
	cfg->remote_connect_timeout_secs = 9.15;
	cfg->remote_read_timeout_secs = 60.0;
	cfg->local_repodata_ttl = 1;
	cfg->ssl_verify = true;
	cfg->repodata_use_zst = true;
	cfg->repodata_use_shards = true;
	cfg->add_pip_as_python_dependency = true; /* conda's default */
	cfg->changeps1 = true;
	cfg->update_modifier = MENV_UPDATE_SPECS;
	/* conda's default aggressive_update_packages */
	menv_strvec_push(&cfg->aggressive_update_packages, "ca-certificates");
	menv_strvec_push(&cfg->aggressive_update_packages, "certifi");
	menv_strvec_push(&cfg->aggressive_update_packages, "openssl");
	cfg->repodata_max_bytes = MENV_REPODATA_MAX_BYTES_DEFAULT;
	free(root);
	free(h);
}

void menv_config_release(struct menv_config *cfg)
{
	free(cfg->root_prefix);
	free(cfg->pkgs_dir);
	menv_strvec_clear(&cfg->pkgs_dirs);
	menv_strvec_clear(&cfg->envs_dirs);
	free(cfg->envs_dir);
	free(cfg->channel_alias);
	free(cfg->subdir);
	menv_strvec_clear(&cfg->channels);
	menv_strvec_clear(&cfg->default_channels);
	menv_strvec_clear(&cfg->pinned_packages);
	menv_strvec_clear(&cfg->aggressive_update_packages);
	menv_strvec_clear(&cfg->files);
	menv_strvec_clear(&cfg->custom_channel_names);
	menv_strvec_clear(&cfg->custom_channel_urls);
	menv_strvec_clear(&cfg->migrated_custom_names);
	menv_strvec_clear(&cfg->migrated_custom_urls);
	menv_strvec_clear(&cfg->mirrored_channel_names);
	menv_strvec_clear(&cfg->mirrored_channel_urls);
	menv_strvec_clear(&cfg->migrated_channel_aliases);
	free(cfg->ssl_ca_bundle);
	free(cfg->client_ssl_cert);
	free(cfg->client_ssl_cert_key);
	free(cfg->proxy_http);
	free(cfg->proxy_https);
	memset(cfg, 0, sizeof(*cfg));
}

/* Where a value came from, for messages: "FILE:LINE:COL" or "$VAR". */
struct where {
	const char *path; /* file name, or NULL for an environment variable */
	const char *var;  /* variable name when path is NULL */
	size_t line, col; /* 1-based */
};

static int bad(struct menv_error *err, const struct where *w, const char *fmt, const char *key)
        __attribute__((format(printf, 3, 0)));

static int bad(struct menv_error *err, const struct where *w, const char *fmt, const char *key)
{
	char what[256];

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(what, sizeof(what), fmt, key);
#pragma GCC diagnostic pop
	if (w->path)
		return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s", w->path, w->line, w->col,
		                      what);
	return menv_error_set(err, MENV_EPARSE, "$%s: %s", w->var ? w->var : "?", what);
}

static bool is_path_list(const char *key)
{
	return !strcmp(key, "pkgs_dirs") || !strcmp(key, "envs_dirs") || !strcmp(key, "envs_path");
}

/* A path-typed value (a pkgs_dirs or envs_dirs entry, root_prefix, ssl_verify's CA bundle,
 * client_ssl_cert, client_ssl_cert_key) as menv_config_load will use it: $VAR and ~ expanded,
 * then refused when it is empty (list entries), is not UTF-8, names a "~USER" with no such
 * user, or is relative (conda's abspath would take it from whatever directory the command runs in: a
 * folder of packages or environments made there, a CA bundle found or not by where one stands).
 * A "~" kept because HOME is unusable is check_home's to refuse. */
static int check_path(const char *key, const char *val, const struct where *w,
                      struct menv_error *err)
{
	char *x = expand_dir_as(val, true);
	const char *entry = is_path_list(key) ? " entry" : "";
	char what[512];
	int rc = 0;
	size_t badat = 0;

	if (!*val)
		snprintf(what, sizeof(what), "%s%s '' is empty (give a full path)", key, entry);
	else if (!menv_utf8_valid(val, strlen(val), &badat))
		/* .condarc is UTF-8 text: the value could not be written there or shown (it was
		 * written as `pkgs_dirs: []`, and shown as that, dropping the entry) */
		snprintf(what, sizeof(what), "%s%s is not UTF-8 text (byte %zu)", key, entry,
		         badat + 1);
	else if (x[0] == '~' && x[1] && x[1] != '/')
		snprintf(what, sizeof(what),
		         "%s%s '%s': there is no user '%.*s' (~USER is that user's home; give "
		         "the full path)",
		         key, entry, val, (int)strcspn(x + 1, "/"), x + 1);
	else if (x[0] != '/' && x[0] != '~')
		snprintf(what, sizeof(what),
		         "%s%s '%s' is a relative path (give the full path: it would depend on "
		         "the directory menv runs in)",
		         key, entry, val);
	else
		what[0] = '\0';
	free(x);
	if (what[0])
		rc = bad(err, w, "%s", what);
	return rc;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1", "True", "TRUE", "Yes"};
	static const char *const no[] = {"false", "no", "off", "0", "False", "FALSE", "No", ""};

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		if (!strcmp(v, yes[i]))
			return *out = true, 0;
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if (!strcmp(v, no[i]))
			return *out = false, 0;
	return -1;
}

static int parse_double(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return errno || end == v || *end || !isfinite(*out) || *out < 0 ? -1 : 0;
}

static int parse_long(const char *v, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(v, &end, 10);
	return errno || end == v || *end ? -1 : 0;
}

/* A map entry is appended; map_dedupe, once the file is read, keeps each key once. */
static void map_set(struct menv_strvec *names, struct menv_strvec *vals, const char *k,
                    const char *v)
{
	menv_strvec_push(names, k);
	menv_strvec_push(vals, v);
}

struct map_ix {
	const char *name;
	size_t at;
};

static int map_ix_cmp(const void *a, const void *b)
{
	const struct map_ix *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Each key once, where it came first, with the value it came with last (a dict's update, as
 * conda merges the maps of its rc files): O(n log n) for n entries. */
static void map_dedupe(struct menv_strvec *names, struct menv_strvec *vals)
{
	size_t n = names->n < vals->n ? names->n : vals->n, out = 0;
	struct map_ix *ix = menv_xcalloc(n + 1, sizeof(*ix));
	size_t *last = menv_xcalloc(n + 1, sizeof(*last)); /* first position -> last one */
	bool *first = menv_xcalloc(n + 1, sizeof(*first));

	for (size_t i = 0; i < n; i++)
		ix[i] = (struct map_ix){names->v[i], i};
	qsort(ix, n, sizeof(*ix), map_ix_cmp);
	for (size_t i = 0; i < n;) {
		size_t k = i;
		while (k + 1 < n && !strcmp(ix[k + 1].name, ix[i].name))
			k++;
		first[ix[i].at] = true;
		last[ix[i].at] = ix[k].at;
		i = k + 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!first[i])
			continue;
		char *v = vals->v[last[i]];
		vals->v[last[i]] = NULL;
		free(vals->v[out]);
		vals->v[out] = v;
		if (out != i) {
			free(names->v[out]);
			names->v[out] = names->v[i];
			names->v[i] = NULL;
		}
		out++;
	}
	for (size_t i = out; i < names->n; i++)
		free(names->v[i]);
	for (size_t i = out; i < vals->n; i++)
		free(vals->v[i]);
	names->n = vals->n = out;
	free(ix);
	free(last);
	free(first);
}

/* The scalar keys menv reads (set_scalar), for rc files and CONDA_/MENV_ variables. */
static const char *const scalar_keys[] = {
        "channel_alias",
        "root_prefix",
        "channel_priority",
        "download_threads",
        "fetch_threads",
        "remote_max_retries",
        "remote_backoff_factor",
        "remote_connect_timeout_secs",
        "remote_read_timeout_secs",
        "local_repodata_ttl",
        "offline",
        "ssl_verify",
        "client_ssl_cert",
        "client_ssl_cert_key",
        "repodata_use_zst",
        "repodata_use_shards",
        "repodata_max_bytes",
        "always_copy",
        "always_softlink",
        "allow_softlinks",
        "smoke_check",
        "update_modifier",
        "add_pip_as_python_dependency",
        "changeps1",
};

/* One scalar key. Returns 0, 1 when the key is not a scalar key, or MENV_EPARSE. */
static int set_scalar(struct menv_config *cfg, const char *key, const char *val,
                      const struct where *w, struct menv_error *err)
{
	double d;
	long l;
	bool b;

	if (!strcmp(key, "channel_alias")) {
		if (*val) {
			free(cfg->channel_alias);
			cfg->channel_alias = menv_xstrdup(val);
			strip_slash(cfg->channel_alias);
		}
	} else if (!strcmp(key, "root_prefix")) {
		if (*val && check_path(key, val, w, err))
			return err->code;
		if (*val)
			change_root(cfg, val);
	} else if (!strcmp(key, "channel_priority")) {
		if (!strcmp(val, "strict"))
			cfg->channel_priority = MENV_PRIORITY_STRICT;
		else if (!strcmp(val, "flexible"))
			cfg->channel_priority = MENV_PRIORITY_FLEXIBLE;
		else if (!strcmp(val, "disabled"))
			cfg->channel_priority = MENV_PRIORITY_DISABLED;
		else
			return bad(err, w, "%s must be strict, flexible or disabled", key);
	} else if (!strcmp(key, "download_threads") || !strcmp(key, "fetch_threads")) {
		if (parse_long(val, &l) || l < 1 || l > 64)
			return bad(err, w, "%s must be 1 to 64", key);
		cfg->download_threads = (int)l;
	} else if (!strcmp(key, "remote_max_retries")) {
		if (parse_long(val, &l) || l < 0 || l > 100)
			return bad(err, w, "%s must be 0 to 100", key);
		cfg->remote_max_retries = (int)l;
	} else if (!strcmp(key, "repodata_max_bytes")) {
		if (parse_long(val, &l) || l < 1)
			return bad(err, w, "%s must be a positive number of bytes", key);
		cfg->repodata_max_bytes = (int64_t)l;
	} else if (!strcmp(key, "remote_backoff_factor")) {
		if (parse_double(val, &d) || d > 3600)
			return bad(err, w, "%s must be a number of seconds", key);
		cfg->remote_backoff_factor = d;
	} else if (!strcmp(key, "remote_connect_timeout_secs")) {
		if (parse_double(val, &d) || d <= 0)
			return bad(err, w, "%s must be a positive number of seconds", key);
		cfg->remote_connect_timeout_secs = d;
	} else if (!strcmp(key, "remote_read_timeout_secs")) {
		if (parse_double(val, &d) || d <= 0)
			return bad(err, w, "%s must be a positive number of seconds", key);
		cfg->remote_read_timeout_secs = d;
	} else if (!strcmp(key, "local_repodata_ttl")) {
		if (!parse_bool(val, &b) && strcmp(val, "0") && strcmp(val, "1"))
			cfg->local_repodata_ttl = b ? 1 : 0;
		else if (!parse_long(val, &l) && l >= 0)
			cfg->local_repodata_ttl = l;
		else
			return bad(err, w, "%s must be true, false or a number of seconds", key);
	} else if (!strcmp(key, "offline") || !strcmp(key, "repodata_use_zst") ||
	           !strcmp(key, "repodata_use_shards") || !strcmp(key, "use_sharded_repodata")) {
		if (parse_bool(val, &b))
			return bad(err, w, "%s must be true or false", key);
		if (!strcmp(key, "offline"))
			cfg->offline = b;
		else if (!strcmp(key, "repodata_use_zst"))
			cfg->repodata_use_zst = b;
		else
			cfg->repodata_use_shards = b;
	} else if (!strcmp(key, "always_copy") || !strcmp(key, "always_softlink") ||
	           !strcmp(key, "allow_softlinks") || !strcmp(key, "smoke_check") ||
	           !strcmp(key, "changeps1")) {
		if (parse_bool(val, &b))
			return bad(err, w, "%s must be true or false", key);
		if (!strcmp(key, "smoke_check"))
			cfg->smoke_check = b;
		else if (!strcmp(key, "changeps1"))
			cfg->changeps1 = b;
		else if (!strcmp(key, "always_copy"))
			cfg->always_copy = b;
		else if (!strcmp(key, "always_softlink"))
			cfg->always_softlink = b;
		else
			cfg->allow_softlinks = b;
	} else if (!strcmp(key, "update_modifier")) {
		/* conda's UpdateModifier values */
		if (!strcmp(val, "update_specs"))
			cfg->update_modifier = MENV_UPDATE_SPECS;
		else if (!strcmp(val, "freeze_installed"))
			cfg->update_modifier = MENV_UPDATE_FREEZE_INSTALLED;
		else if (!strcmp(val, "update_deps"))
			cfg->update_modifier = MENV_UPDATE_DEPS;
		else if (!strcmp(val, "update_all"))
			cfg->update_modifier = MENV_UPDATE_ALL;
		else if (!strcmp(val, "specs_satisfied_skip_solve"))
			cfg->update_modifier = MENV_UPDATE_SATISFIED_SKIP;
		else
			return bad(err, w,
			           "%s must be update_specs, freeze_installed, update_deps, "
			           "update_all or specs_satisfied_skip_solve",
			           key);
	} else if (!strcmp(key, "add_pip_as_python_dependency")) {
		if (parse_bool(val, &b))
			return bad(err, w, "%s must be true or false", key);
		cfg->add_pip_as_python_dependency = b;
	} else if (!strcmp(key, "ssl_verify")) {
		/* conda's PrimitiveParameter(element_type=(str, bool)): its typify boolifies the
		 * value, quoted or not (auxlib's boolify(return_string=True)): a decimal number
		 * ("1.0", 5, -1, 0.0, inf) is a bool, zero false and any other true, as conda
		 * 26.7.1 reads it; then true, false, "truststore", or else the path of a CA
		 * bundle (`ssl_verify: 5` was read as a file "5", then refused; "1.0" too) */
		char *end;
		double num = strtod(val, &end);
		bool number = *val && !*end && !strpbrk(val, "xX") && parse_bool(val, &b);
		/* no text is no value, as YAML's null (null_value): conda's boolify reads both as
		 * false; a variable emptied to unset it must not turn certificate checks off */
		if (!*val)
			return bad(
			        err, w,
			        "%s has no value (empty): conda reads it as false, no certificate "
			        "checks; write true, false or a CA bundle's path, or remove it for "
			        "the default (true)",
			        key);
		if (!number && strcmp(val, "truststore") && parse_bool(val, &b) &&
		    check_path(key, val, w, err))
			return err->code;
		free(cfg->ssl_ca_bundle);
		cfg->ssl_ca_bundle = NULL;
		if (number) {
			b = num != 0; /* NaN too: boolify's bool(complex("nan")) */
		} else if (!strcmp(val, "truststore")) {
			b = true;
		} else if (parse_bool(val, &b)) {
			cfg->ssl_ca_bundle =
			        expand_dir_as(val, true); /* a CA bundle file or folder */
			b = true;
		}
		cfg->ssl_verify = b;
	} else if (!strcmp(key, "client_ssl_cert") || !strcmp(key, "client_ssl_cert_key")) {
		char **dst = !strcmp(key, "client_ssl_cert") ? &cfg->client_ssl_cert
		                                             : &cfg->client_ssl_cert_key;
		if (!strcasecmp(val, "none")) /* conda's (str, NoneType): "none" is None */
			val = "";
		if (*val && check_path(key, val, w, err))
			return err->code;
		free(*dst);
		*dst = *val ? expand_dir_as(val, true) : NULL;
	} else {
		return 1;
	}
	return 0;
}

/* One list key. Returns 0, 1 when the key is not a list key. */
static int set_list(struct menv_config *cfg, const char *key, struct menv_strvec *items)
{
	if (!strcmp(key, "channels")) {
		menv_strvec_clear(&cfg->channels);
		cfg->channels = *items;
	} else if (!strcmp(key, "pinned_packages")) {
		menv_strvec_clear(&cfg->pinned_packages);
		cfg->pinned_packages = *items;
	} else if (!strcmp(key, "aggressive_update_packages")) {
		menv_strvec_clear(&cfg->aggressive_update_packages);
		cfg->aggressive_update_packages = *items;
	} else if (!strcmp(key, "default_channels")) {
		menv_strvec_clear(&cfg->default_channels);
		cfg->default_channels = *items;
	} else if (!strcmp(key, "migrated_channel_aliases")) {
		menv_strvec_clear(&cfg->migrated_channel_aliases);
		cfg->migrated_channel_aliases = *items;
	} else if (!strcmp(key, "pkgs_dirs")) {
		if (items->n)
			set_pkgs_dirs(cfg, items);
		menv_strvec_clear(items);
	} else if (!strcmp(key, "envs_dirs")) {
		if (items->n)
			set_envs_dirs(cfg, items);
		menv_strvec_clear(items);
	} else {
		return 1;
	}
	memset(items, 0, sizeof(*items));
	return 0;
}

/* One map entry. Returns 0, 1 when the key is not a map key. */
static int set_map(struct menv_config *cfg, const char *key, const char *k, const char *v)
{
	if (!strcmp(key, "custom_channels"))
		map_set(&cfg->custom_channel_names, &cfg->custom_channel_urls, k, v);
	else if (!strcmp(key, "migrated_custom_channels"))
		map_set(&cfg->migrated_custom_names, &cfg->migrated_custom_urls, k, v);
	else if (!strcmp(key, "proxy_servers")) {
		char **dst = !strcmp(k, "http")    ? &cfg->proxy_http
		             : !strcmp(k, "https") ? &cfg->proxy_https
		                                   : NULL;
		if (dst) {
			free(*dst);
			*dst = v && *v ? menv_xstrdup(v) : NULL;
		}
	} else
		return 1;
	return 0;
}

static struct where node_where(const char *path, const yaml_node_t *n)
{
	struct where w = {path, NULL, n->start_mark.line + 1, n->start_mark.column + 1};
	return w;
}

static int node_error(struct menv_error *err, const char *path, yaml_node_t *n, const char *what)
{
	return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s", path, n->start_mark.line + 1,
	                      n->start_mark.column + 1, what);
}

/* A list of strings for `key` (conda's SequenceParameter of str): a plain number, bool or
 * null item is refused with FILE:LINE:COL naming the key (conda: "invalid element"). */
static int scalar_list(yaml_document_t *doc, yaml_node_t *n, const char *path, const char *key,
                       struct menv_strvec *out, struct menv_error *err)
{
	if (menv_config_node_null(n))
		return 0; /* conda's SequenceParameter.load of None: an empty list */
	if (n->type != YAML_SEQUENCE_NODE)
		return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s must be a list of strings",
		                      path, n->start_mark.line + 1, n->start_mark.column + 1, key);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(doc, *it);
		int rc = menv_config_check_item(path, key, v ? v : n, err);
		if (rc)
			return rc;
		menv_strvec_push(out, (const char *)v->data.scalar.value);
	}
	return 0;
}

static bool is_list_key(const char *key)
{
	return !strcmp(key, "channels") || !strcmp(key, "default_channels") ||
	       !strcmp(key, "migrated_channel_aliases") || !strcmp(key, "pkgs_dirs") ||
	       !strcmp(key, "envs_dirs") || !strcmp(key, "pinned_packages") ||
	       !strcmp(key, "aggressive_update_packages");
}

/* `mirrored_channels: {name: [url, ...]}`: each named channel's list replaces an earlier one. */
static int mirrored_channels(struct menv_config *cfg, yaml_document_t *doc, const char *path,
                             yaml_node_t *v, struct menv_error *err)
{
	if (v->type != YAML_MAPPING_NODE)
		return node_error(err, path, v, "expected a mapping of channel names to lists");
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *mk = yaml_document_get_node(doc, p->key);
		yaml_node_t *mv = yaml_document_get_node(doc, p->value);
		struct menv_strvec urls = MENV_STRVEC_INIT;
		struct menv_strvec *names = &cfg->mirrored_channel_names;
		struct menv_strvec *vals = &cfg->mirrored_channel_urls;
		const char *name;
		size_t k = 0;
		int rc;

		if (!mk || !mv || mk->type != YAML_SCALAR_NODE)
			return node_error(err, path, mv ? mv : v, "expected a channel name");
		if (mv->type == YAML_SCALAR_NODE && !menv_config_node_null(mv))
			return node_error(err, path, mv, "expected a list of mirror URLs");
		rc = scalar_list(doc, mv, path, "mirrored_channels", &urls, err);
		if (rc) {
			menv_strvec_clear(&urls);
			return rc;
		}
		name = (const char *)mk->data.scalar.value;
		for (size_t i = 0; i < names->n; i++) {
			if (!strcmp(names->v[i], name)) {
				free(names->v[i]);
				free(vals->v[i]);
				continue;
			}
			names->v[k] = names->v[i];
			vals->v[k++] = vals->v[i];
		}
		names->n = vals->n = k;
		for (size_t i = 0; i < urls.n; i++) {
			char *u = urls.v[i];
			size_t n = strlen(u);
			while (n > 0 && u[n - 1] == '/')
				u[--n] = '\0';
			menv_strvec_push(names, name);
			menv_strvec_push(vals, u);
		}
		menv_strvec_clear(&urls);
	}
	return 0;
}

static bool is_map_key(const char *key)
{
	return !strcmp(key, "custom_channels") || !strcmp(key, "migrated_custom_channels") ||
	       !strcmp(key, "proxy_servers");
}

/* A bool setting menv reads (set_scalar's). */
static bool is_bool_key(const char *key)
{
	const struct menv_param *p = menv_config_param(key);
	return (p && p->kind == MENV_PARAM_PRIMITIVE && !strcmp(p->type, "bool")) ||
	       !strcmp(key, "changeps1") || !strcmp(key, "use_sharded_repodata");
}

/* What a YAML null (a plain ~, null, Null, NULL, or no value at all) is for `key` (`canon`
 * its name without alias). A null is no text: never a path ("~" alone is not HOME: `~/x`,
 * a string, is), a name or a URL. conda 26.7.1 gives it no value of its own
 * (conda/common/configuration.py: SequenceParameter, MapParameter and ObjectParameter's
 * get_all_matches drop a match whose raw value is None; a PrimitiveParameter's None goes
 * through conda/auxlib/type_coercion.py's typify with the parameter's element type), and
 * menv reads it the same way:
 * - a list or a map (channels, pkgs_dirs, envs_dirs, custom_channels, proxy_servers,
 *   mirrored_channels, ...): this file does not set it; the default or another file's value
 *   stays;
 * - client_ssl_cert, client_ssl_cert_key ((str, NoneType): typify gives None): none, the
 *   default;
 * - a bool (typify's boolify(None)): false;
 * - any other key menv reads is refused with FILE:LINE:COL. conda refuses it too (int() or
 *   float() of None for a number; local_repodata_ttl's None is no bool or int;
 *   channel_alias 'None' has no scheme; channel_priority and update_modifier: 'None' is no
 *   choice), or makes the text "None" of it (root_prefix: a relative folder "None" wherever
 *   the command runs, which menv refuses as any relative path). ssl_verify, which conda's
 *   boolify reads as false (certificate checks off), is refused rather than turned off by a
 *   '~'.
 * Unknown keys pass. Returns 0 or MENV_EPARSE. */
static int null_value(struct menv_config *cfg, const char *key, const char *canon,
                      const struct where *w, const yaml_node_t *v, struct menv_error *err)
{
	bool scalar = false;
	for (size_t i = 0; i < sizeof(scalar_keys) / sizeof(*scalar_keys) && !scalar; i++)
		scalar = !strcmp(canon, scalar_keys[i]);
	if (is_list_key(canon) || is_map_key(canon) || !strcmp(canon, "mirrored_channels") ||
	    (!scalar && !is_bool_key(canon)))
		return 0;
	if (is_bool_key(canon))
		return set_scalar(cfg, canon, "false", w, err) < 0 ? err->code : 0;
	if (!strcmp(canon, "client_ssl_cert") || !strcmp(canon, "client_ssl_cert_key"))
		return set_scalar(cfg, canon, "", w, err) < 0 ? err->code : 0;
	const char *text = (const char *)v->data.scalar.value;
	const char *give = "give a value", *dflt = "";
	char is[64], what[512];
	if (!*text)
		snprintf(is, sizeof(is), "has no value (YAML's null)");
	else
		snprintf(is, sizeof(is), "is null ('%.8s' is YAML's null%s)", text,
		         !strcmp(text, "~") ? ", not the home folder" : "");
	if (!strcmp(canon, "ssl_verify")) {
		give = "conda reads it as false, no certificate checks; write true, false or a CA "
		       "bundle's path";
		dflt = " (true)";
	} else if (!strcmp(canon, "root_prefix")) {
		give = "give the full path";
	}
	snprintf(what, sizeof(what), "%s %s: %s, or remove the line for the default%s", key, is,
	         give, dflt);
	return bad(err, w, "%s", what);
}

static int apply_pair(struct menv_config *cfg, yaml_document_t *doc, const char *path,
                      yaml_node_t *k, yaml_node_t *v, struct menv_error *err)
{
	const char *key = (const char *)k->data.scalar.value;
	struct where w = node_where(path, v);
	int rc = 0;

	/* conda's alias of envs_dirs (its ParameterLoader's aliases); errors name the key as
	 * written */
	const char *canon = !strcmp(key, "envs_path") ? "envs_dirs" : key;
	if (menv_config_node_null(v))
		return null_value(cfg, key, canon, &w, v, err);
	if (is_list_key(canon)) {
		struct menv_strvec items = MENV_STRVEC_INIT;
		rc = scalar_list(doc, v, path, key, &items, err);
		if (!rc && is_path_list(key)) /* each entry where it stands */
			for (size_t i = 0; i < items.n && !rc; i++) {
				yaml_node_t *it = yaml_document_get_node(
				        doc, v->data.sequence.items.start[i]);
				struct where iw = node_where(path, it);
				rc = check_path(key, items.v[i], &iw, err);
			}
		if (!rc)
			set_list(cfg, canon, &items);
		menv_strvec_clear(&items);
		return rc;
	}
	if (!strcmp(key, "mirrored_channels"))
		return mirrored_channels(cfg, doc, path, v, err);
	if (is_map_key(key)) {
		if (v->type != YAML_MAPPING_NODE)
			return node_error(err, path, v, "expected a mapping");
		for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
		     p < v->data.mapping.pairs.top; p++) {
			yaml_node_t *mk = yaml_document_get_node(doc, p->key);
			yaml_node_t *mv = yaml_document_get_node(doc, p->value);
			if (!mk || !mv || mk->type != YAML_SCALAR_NODE)
				return node_error(err, path, mv ? mv : v,
				                  "expected a mapping of strings");
			/* `proxy_servers: {http: 42}` or `{http: [a]}`: no URL */
			rc = menv_config_check_map_value(
			        path, key, (const char *)mk->data.scalar.value, mv, err);
			if (rc)
				return rc;
			set_map(cfg, key, (const char *)mk->data.scalar.value,
			        menv_config_node_null(mv) ? NULL
			                                  : (const char *)mv->data.scalar.value);
		}
		return 0;
	}
	if (v->type != YAML_SCALAR_NODE) {
		/* a structured value for a scalar key menv reads is an error; unknown keys pass */

		for (size_t i = 0; i < sizeof(scalar_keys) / sizeof(*scalar_keys); i++)
			if (!strcmp(key, scalar_keys[i]))
				return bad(err, &w, "%s must be a single value", key);
		return 0;
	}
	rc = menv_config_check_type(path, key, v, err); /* channel_alias: 42 is no host */
	if (!rc)
		rc = set_scalar(cfg, key, (const char *)v->data.scalar.value, &w, err);
	return rc > 0 ? 0 : rc;
}

int menv_config_apply_file(struct menv_config *cfg, const char *path, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int rc = menv_buf_read_file(&b, path, err);
	if (!rc)
		rc = menv_config_apply_text(cfg, path, b.buf, b.len, err);
	menv_buf_release(&b);
	return rc;
}

int menv_config_apply_text(struct menv_config *cfg, const char *path, const char *text, size_t len,
                           struct menv_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	int rc;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	rc = menv_yaml_load_refusing(&parser, &doc, path, false, MENV_CONDARC_MERGE, err);
	if (rc) {
		yaml_parser_delete(&parser);
		return rc;
	}
	root = yaml_document_get_root_node(&doc);
	if ((rc = menv_yaml_single(&parser, path, "settings file", err)))
		goto out;
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0))
		goto out; /* empty file */
	if (root->type != YAML_MAPPING_NODE) {
		rc = node_error(err, path, root, "expected a mapping of settings");
		goto out;
	}
	const char *envs_key = NULL; /* envs_dirs or envs_path, whichever came first */
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !rc; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);

		if (!k || !v || k->type != YAML_SCALAR_NODE)
			continue;
		const char *key = (const char *)k->data.scalar.value;
		if (!strcmp(key, "envs_dirs") || !strcmp(key, "envs_path")) {
			/* conda's MultipleKeysError: one file gives one of the two names */
			if (envs_key && strcmp(envs_key, key)) {
				rc = node_error(
				        err, path, k,
				        "envs_dirs and envs_path are one setting (envs_path "
				        "is conda's other name for it): give only one");
				break;
			}
			envs_key = key;
		}
		rc = apply_pair(cfg, &doc, path, k, v, err);
	}
	if (!rc)
		menv_strvec_push(&cfg->files, path);
	map_dedupe(&cfg->custom_channel_names, &cfg->custom_channel_urls);
	map_dedupe(&cfg->migrated_custom_names, &cfg->migrated_custom_urls);
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

char *menv_config_system_rc(void)
{
	const char *r = getenv("MENV_ROOT_PREFIX");
	if (r && *r)
		return menv_xasprintf("%s/.condarc", r);
	char *h = home_dir();
	char *p = menv_xasprintf("%s/.menv/.condarc", h);
	free(h);
	return p;
}

int menv_config_check_value(const char *key, const char *val, struct menv_error *err)
{
	struct menv_config cfg;
	struct where w = {NULL, key, 0, 0};
	menv_config_defaults(&cfg);
	int rc = is_path_list(key) ? check_path(key, val, &w, err)
	                           : set_scalar(&cfg, key, val, &w, err);
	menv_config_release(&cfg);
	if (rc < 0) {
		const char *sp = strchr(err->msg, ' ');
		char *why = menv_xstrdup(sp ? sp + 1 : err->msg);
		menv_error_set(err, MENV_EUSAGE, "invalid value '%s': %s", val, why);
		free(why);
	}
	return rc;
}

/* MENV_<KEY> wins over CONDA_<KEY>; returns the value and the variable's name. */
static const char *env_value(const char *key, char *name, size_t len)
{
	const char *v;
	size_t n;

	n = (size_t)snprintf(name, len, "MENV_");
	for (const char *k = key; *k && n + 1 < len; k++)
		name[n++] = (char)toupper((unsigned char)*k);
	name[n] = '\0';
	if ((v = getenv(name)))
		return v;
	memmove(name + 6, name + 5, n - 4);
	memcpy(name, "CONDA_", 6);
	return getenv(name);
}

static void split_on(const char *s, char sep, struct menv_strvec *out)
{
	char set[2] = {sep, '\0'};
	while (*s) {
		size_t n = strcspn(s, set);
		char *item = menv_xstrndup(s, n);
		char *b = item, *e;
		while (*b == ' ')
			b++;
		e = b + strlen(b);
		while (e > b && e[-1] == ' ')
			*--e = '\0';
		if (*b)
			menv_strvec_push(out, b);
		free(item);
		s += n;
		if (*s == sep)
			s++;
	}
}

static void split_commas(const char *s, struct menv_strvec *out)
{
	split_on(s, ',', out);
}

/* envs_dirs from $MENV_ENVS_DIRS / $CONDA_ENVS_DIRS or its alias $MENV_ENVS_PATH /
 * $CONDA_ENVS_PATH (conda's `envs_path`), split at ':' as conda splits it (os.pathsep, its
 * string_delimiter), blanks around each entry dropped. Both names set is conda's
 * MultipleKeysError, refused; an empty value is no setting, an empty entry in a longer one
 * (`:/a`, `/a::/b`: the current directory in a PATH-like list) refused as any relative entry,
 * naming the variable. */
static int env_envs_dirs(struct menv_config *cfg, struct menv_error *err)
{
	char dname[64], pname[64];
	const char *d = env_value("envs_dirs", dname, sizeof(dname));
	const char *p = env_value("envs_path", pname, sizeof(pname));
	const char *v = d ? d : p, *var = d ? dname : pname;
	struct menv_strvec items = MENV_STRVEC_INIT;
	struct where w = {NULL, var, 0, 0};
	int rc = 0;

	if (d && p)
		return menv_error_set(err, MENV_EPARSE,
		                      "$%s and $%s are one setting (envs_path is conda's other "
		                      "name for envs_dirs): set only one",
		                      dname, pname);
	if (!v || !*v)
		return 0;
	for (const char *s = v;; s++) {
		size_t n = strcspn(s, ":");
		char *item = menv_xstrndup(s, n), *b = item, *e;
		while (*b == ' ')
			b++;
		e = b + strlen(b);
		while (e > b && e[-1] == ' ')
			*--e = '\0';
		if (!rc)
			rc = check_path("envs_dirs", b, &w, err);
		menv_strvec_push(&items, b);
		free(item);
		s += n;
		if (!*s)
			break;
	}
	if (!rc)
		set_list(cfg, "envs_dirs", &items);
	menv_strvec_clear(&items);
	return rc;
}

/* Environment variables override the rc files, like conda's CONDA_<KEY>. */
static int apply_env(struct menv_config *cfg, struct menv_error *err)
{

	static const char *const lists[] = {
	        "channels",        "default_channels",           "migrated_channel_aliases",
	        "pinned_packages", "aggressive_update_packages",
	};
	char name[64];
	const char *v;
	int rc;

	for (size_t i = 0; i < sizeof(scalar_keys) / sizeof(*scalar_keys); i++) {
		if (!strcmp(scalar_keys[i], "root_prefix")) /* MENV_ROOT_PREFIX, below */
			continue;
		if (!(v = env_value(scalar_keys[i], name, sizeof(name))))
			continue;
		struct where w = {NULL, name, 0, 0};
		rc = set_scalar(cfg, scalar_keys[i], v, &w, err);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < sizeof(lists) / sizeof(*lists); i++) {
		struct menv_strvec items = MENV_STRVEC_INIT;
		if (!(v = env_value(lists[i], name, sizeof(name))))
			continue;
		/* conda splits CONDA_PINNED_PACKAGES and CONDA_AGGRESSIVE_UPDATE_PACKAGES at '&'
		 * (their string_delimiter), the other lists at ',' */
		if (!strcmp(lists[i], "pinned_packages") ||
		    !strcmp(lists[i], "aggressive_update_packages"))
			split_on(v, '&', &items);
		else
			split_commas(v, &items);
		struct where w = {NULL, name, 0, 0};
		for (size_t k = 0; k < items.n && is_path_list(lists[i]); k++)
			if ((rc = check_path(lists[i], items.v[k], &w, err))) {
				menv_strvec_clear(&items);
				return rc;
			}
		set_list(cfg, lists[i], &items);
		menv_strvec_clear(&items);
	}
	return env_envs_dirs(cfg, err);
}

/* A place still starting with "~" was to be under HOME, which is unusable: refused; one
 * starting with "~USER" names no user (expand_user): refused, never made in the cwd. */
static int check_home(const struct menv_config *cfg, struct menv_error *err)
{
	const char *h, *bad = NULL, *key = "root_prefix";

	if (cfg->root_prefix && cfg->root_prefix[0] == '~')
		bad = cfg->root_prefix;
	for (size_t i = 0; !bad && i < cfg->envs_dirs.n; i++) {
		if (cfg->envs_dirs.v[i][0] == '~') {
			bad = cfg->envs_dirs.v[i];
			key = "envs_dirs";
		}
	}
	for (size_t i = 0; !bad && i < cfg->pkgs_dirs.n; i++) {
		if (cfg->pkgs_dirs.v[i][0] == '~') {
			bad = cfg->pkgs_dirs.v[i];
			key = "pkgs_dirs";
		}
	}
	if (bad && bad[1] && bad[1] != '/')
		return menv_error_set(
		        err, MENV_EPARSE,
		        "%s entry '%s': there is no user '%.*s' (~USER is that user's "
		        "home; give the full path)",
		        key, bad, (int)strcspn(bad + 1, "/"), bad + 1);
	if (!bad || menv_home(&h, err) == 0)
		return 0;
	return menv_error_prefix(err, "'%s' is under HOME", bad);
}

int menv_config_load(struct menv_config *cfg, struct menv_error *err)
{
	char *h = home_dir();
	const char *env;
	char *paths[10];
	size_t np = 0;
	int rc = 0;

	menv_config_defaults(cfg);
	paths[np++] = menv_xstrdup("/etc/conda/.condarc");
	paths[np++] = menv_xstrdup("/etc/conda/condarc");
	/* the root prefix's own file (conda's $CONDA_ROOT/.condarc; `menv config --system`) */
	paths[np++] = menv_config_system_rc();
	if (strcmp(h, "~")) { /* no home directory: no files in it */
		paths[np++] = menv_xasprintf("%s/.config/conda/.condarc", h);
		paths[np++] = menv_xasprintf("%s/.condarc", h);
	}
	/* the active environment's own settings (conda's search path; `menv config --env`) */
	if ((env = getenv("CONDA_PREFIX")) && *env) {
		paths[np++] = menv_xasprintf("%s/.condarc", env);
		paths[np++] = menv_xasprintf("%s/condarc", env);
	}
	if ((env = getenv("CONDARC")) && *env)
		paths[np++] = menv_xstrdup(env);
	if ((env = getenv("MENVRC")) && *env)
		paths[np++] = menv_xstrdup(env);
	for (size_t i = 0; i < np && !rc; i++)
		if (access(paths[i], R_OK) == 0)
			rc = menv_config_apply_file(cfg, paths[i], err);
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(h);
	if (!rc)
		rc = apply_env(cfg, err);
	if (rc)
		goto out;
	struct where root_w = {NULL, "MENV_ROOT_PREFIX", 0, 0};
	if ((env = getenv("MENV_ROOT_PREFIX")) && *env &&
	    (rc = check_path("root_prefix", env, &root_w, err)))
		goto out;
	if (env && *env)
		change_root(cfg, env);
	if ((env = getenv("CONDA_PKGS_DIRS")) && *env) {
		struct menv_strvec dirs = MENV_STRVEC_INIT;
		struct where w = {NULL, "CONDA_PKGS_DIRS", 0, 0};
		split_commas(env, &dirs);
		for (size_t k = 0; k < dirs.n && !rc; k++)
			rc = check_path("pkgs_dirs", dirs.v[k], &w, err);
		if (rc) {
			menv_strvec_clear(&dirs);
			goto out;
		}
		set_pkgs_dirs(cfg, &dirs);
	}
	rc = check_home(cfg, err);
	if (!rc) {
		pick_pkgs_dir(cfg);
		pick_envs_dir(cfg);
	}
out:
	if (rc) /* nothing for a caller to release after a failure (menv_config_release is idempotent) */
		menv_config_release(cfg);
	return rc;
}
