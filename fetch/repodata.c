/*
 * repodata.c - channel repodata with conda's cache: `<cache>/<8 hex>.json` beside its state
 * `<8 hex>.info.json` (url, etag, mod, cache_control, size, mtime_ns, refresh_ns, has_zst).
 *
 * Each subdir is served from the cache while fresh (local_repodata_ttl / max-age), else asked
 * for with If-None-Match / If-Modified-Since: a 304 keeps the cached file. repodata.json.zst
 * is preferred and decompressed while it streams; its absence is remembered (has_zst) and
 * re-checked after 14 days, as conda does. New bytes must parse as JSON before they replace a
 * cache entry, which is written JSON first, then state: a state that does not describe the
 * JSON beside it (size, mtime) makes the entry stale, never trusted. All subdirs of one call
 * travel in parallel through the transfer engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zstd.h>

#include "internal.h"

#define HAS_ZST_RECHECK_S (14 * 24 * 3600)

char *menv_repodata_cache_name(const char *subdir_url)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t n = strlen(subdir_url);
	char *key = menv_xasprintf("%s%s", subdir_url, n && subdir_url[n - 1] == '/' ? "" : "/");

	EVP_Digest(key, strlen(key), md, &mdlen, EVP_md5(), NULL);
	free(key);
	return menv_xasprintf("%02x%02x%02x%02x.json", md[0], md[1], md[2], md[3]);
}

void menv_repodata_req_release(struct menv_repodata_req *r)
{
	menv_buf_release(&r->json);
	free(r->url);
	r->url = NULL;
}

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int mkdir_p(const char *path)
{
	char *p = menv_xstrdup(path);
	int rc = 0;

	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			rc = -1;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Streaming zstd                                                                            */

struct zsink {
	struct menv_buf *out;
	size_t start;
	ZSTD_DStream *ds; /* NULL: plain bytes */
	size_t last;      /* last ZSTD_decompressStream result: 0 when a frame ended */
	bool corrupt;
};

static int zsink_write(void *ud, const void *data, size_t len)
{
	struct zsink *z = ud;
	ZSTD_inBuffer in = {data, len, 0};

	if (!z->ds) {
		menv_buf_add(z->out, data, len);
		return 0;
	}
	while (in.pos < in.size) {
		menv_buf_grow(z->out, 128 * 1024);
		ZSTD_outBuffer ob = {z->out->buf + z->out->len, z->out->alloc - z->out->len - 1, 0};
		size_t r = ZSTD_decompressStream(z->ds, &ob, &in);
		if (ZSTD_isError(r)) {
			z->corrupt = true;
			errno = EBADMSG;
			return -1;
		}
		z->out->len += ob.pos;
		z->out->buf[z->out->len] = '\0';
		z->last = r;
	}
	return 0;
}

static int zsink_restart(void *ud)
{
	struct zsink *z = ud;

	z->out->len = z->start;
	z->out->buf[z->start] = '\0';
	z->last = 0;
	z->corrupt = false;
	if (z->ds)
		ZSTD_DCtx_reset(z->ds, ZSTD_reset_session_only);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Cache entries                                                                             */

struct entry {
	char *json_path, *state_path;
	json_t *state; /* the state when it describes the JSON beside it, else NULL */
};

static void entry_release(struct entry *e)
{
	free(e->json_path);
	free(e->state_path);
	json_decref(e->state);
	memset(e, 0, sizeof(*e));
}

static const char *sget(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void entry_load(struct entry *e, const char *cache_dir, const char *cred_url)
{
	char *name = menv_repodata_cache_name(cred_url);
	struct stat st;
	json_t *s;

	e->json_path = menv_xasprintf("%s/%s", cache_dir, name);
	name[strlen(name) - 5] = '\0';
	e->state_path = menv_xasprintf("%s/%s.info.json", cache_dir, name);
	free(name);
	s = json_load_file(e->state_path, 0, NULL);
	if (!json_is_object(s) || stat(e->json_path, &st) < 0 ||
	    json_integer_value(json_object_get(s, "size")) != (json_int_t)st.st_size ||
	    json_integer_value(json_object_get(s, "mtime_ns")) !=
	            (json_int_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec) {
		json_decref(s);
		return;
	}
	e->state = s;
}

/* max-age=N of a Cache-Control value, or 0. */
static long max_age(const char *cc)
{
	const char *p = cc ? strstr(cc, "max-age=") : NULL;
	return p ? atol(p + 8) : 0;
}

static bool entry_fresh(const struct entry *e, long ttl)
{
	int64_t refreshed, age_s;
	long limit;

	if (!e->state || ttl == 0)
		return false;
	refreshed = json_integer_value(json_object_get(e->state, "refresh_ns"));
	age_s = (wall_ns() - refreshed) / 1000000000LL;
	limit = ttl == 1 ? max_age(sget(e->state, "cache_control")) : ttl;
	return age_s >= 0 && age_s < limit;
}

/* Whether the last check found no repodata.json.zst (and it was less than 14 days ago). */
static bool entry_no_zst(const struct entry *e)
{
	json_t *hz = e->state ? json_object_get(e->state, "has_zst") : NULL;
	const char *when = json_string_value(json_object_get(hz, "last_checked"));
	struct tm tm = {0};

	if (!hz || !json_is_false(json_object_get(hz, "value")) || !when)
		return false;
	if (!strptime(when, "%Y-%m-%dT%H:%M:%S", &tm))
		return false;
	return time(NULL) - timegm(&tm) < HAS_ZST_RECHECK_S;
}

static void iso_now(char *out, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Writes the JSON (when `bytes`) then the state. */
static int entry_store(struct entry *e, const char *cache_dir, const char *shown_url,
                       const struct menv_xfer *x, const struct menv_buf *bytes, int has_zst,
                       struct menv_error *err)
{
	json_t *s = json_object();
	struct stat st;
	char when[32];
	char *text = NULL;
	int rc = 0;

	if (mkdir_p(cache_dir) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create the directory '%s'", cache_dir);
		goto out;
	}
	if (bytes) {
		rc = menv_write_file_atomic(e->json_path, bytes->buf, bytes->len, err);
		if (rc)
			goto out;
	}
	if (stat(e->json_path, &st) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot stat '%s'", e->json_path);
		goto out;
	}
	json_object_set_new(s, "url", json_string(shown_url));
	if (x && x->etag)
		json_object_set_new(s, "etag", json_string(x->etag));
	else if (!bytes && e->state && sget(e->state, "etag"))
		json_object_set_new(s, "etag", json_string(sget(e->state, "etag")));
	if (x && x->last_modified)
		json_object_set_new(s, "mod", json_string(x->last_modified));
	else if (!bytes && e->state && sget(e->state, "mod"))
		json_object_set_new(s, "mod", json_string(sget(e->state, "mod")));
	if (x && x->cache_control)
		json_object_set_new(s, "cache_control", json_string(x->cache_control));
	else if (!bytes && e->state && sget(e->state, "cache_control"))
		json_object_set_new(s, "cache_control",
		                    json_string(sget(e->state, "cache_control")));
	json_object_set_new(s, "size", json_integer((json_int_t)st.st_size));
	json_object_set_new(
	        s, "mtime_ns",
	        json_integer((json_int_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec));
	json_object_set_new(s, "refresh_ns", json_integer((json_int_t)wall_ns()));
	iso_now(when, sizeof(when));
	json_object_set_new(s, "has_zst",
	                    json_pack("{s:b, s:s}", "value", has_zst > 0, "last_checked", when));
	text = json_dumps(s, JSON_INDENT(2) | JSON_SORT_KEYS);
	rc = menv_write_file_atomic(e->state_path, text, strlen(text), err);
out:
	free(text);
	json_decref(s);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Requests                                                                                  */

struct work {
	struct menv_repodata_req *r;
	char *cred_base, *shown_base; /* subdir URL with and without credentials */
	struct entry e;
	bool cached; /* uses the cache (not file://, cache_dir set) */
	bool try_zst;
	bool active; /* needs a transfer in this round */
	struct menv_xfer x;
	struct zsink z;
};

static bool is_file_url(const char *u)
{
	return !strncmp(u, "file://", 7);
}

static int read_cached(struct work *w, struct menv_error *err)
{
	return menv_buf_read_file(&w->r->json, w->e.json_path, err);
}

static void start_xfer(struct work *w, bool zst)
{
	char *url =
	        menv_xasprintf("%s/%s", w->cred_base, zst ? "repodata.json.zst" : "repodata.json");
	const char *state_url = w->e.state ? sget(w->e.state, "url") : NULL;

	menv_xfer_release(&w->x);
	menv_xfer_init(&w->x, url);
	free(url);
	if (w->z.ds)
		ZSTD_freeDStream(w->z.ds);
	w->z.out = &w->r->json;
	w->z.start = w->r->json.len;
	w->z.ds = zst ? ZSTD_createDStream() : NULL;
	w->z.last = 0;
	w->z.corrupt = false;
	if (w->z.ds)
		ZSTD_initDStream(w->z.ds);
	w->x.sink = zsink_write;
	w->x.restart = zsink_restart;
	w->x.ud = &w->z;
	/* conditional only when the cached copy came from this very URL */
	if (w->e.state && state_url && !strcmp(state_url, w->x.shown)) {
		w->x.if_none_match = sget(w->e.state, "etag");
		w->x.if_modified_since = sget(w->e.state, "mod");
	}
	w->try_zst = zst;
	w->active = true;
	free(w->r->url);
	w->r->url = menv_xstrdup(w->x.shown);
}

/* After a successful transfer: decompression complete, JSON valid, cache written. */
static int finish_download(struct work *w, const struct menv_fetch_opts *o, struct menv_error *err)
{
	struct menv_repodata_req *r = w->r;
	json_error_t jerr;
	json_t *j;

	if (w->x.status == 304 && w->e.state) {
		menv_buf_reset(&r->json);
		int rc = read_cached(w, err);
		if (rc)
			return rc;
		r->not_modified = true;
		r->zst = w->try_zst;
		return entry_store(&w->e, o->cache_dir, w->x.shown, &w->x, NULL, w->try_zst ? 1 : 0,
		                   err);
	}
	if (w->z.ds && w->z.last != 0)
		return menv_error_set(err, MENV_EPARSE,
		                      "truncated repodata from '%s' (the .zst "
		                      "stream ends inside a frame)",
		                      w->x.shown);
	j = json_loadb(r->json.buf, r->json.len, 0, &jerr);
	if (!j)
		return menv_error_set(err, MENV_EPARSE,
		                      "malformed repodata from '%s' at byte %d "
		                      "(line %d, column %d): %s",
		                      w->x.shown, jerr.position, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return menv_error_set(err, MENV_EPARSE,
		                      "malformed repodata from '%s': not a JSON "
		                      "object",
		                      w->x.shown);
	}
	json_decref(j);
	r->zst = w->try_zst;
	if (!w->cached)
		return 0;
	return entry_store(&w->e, o->cache_dir, w->x.shown, &w->x, &r->json, w->try_zst ? 1 : 0,
	                   err);
}

static void req_fail(struct menv_repodata_req *r, int rc, const struct menv_error *e)
{
	r->rc = rc;
	r->err = *e;
	menv_buf_reset(&r->json);
}

/* Missing subdirs (404). With both subdirs of a channel requested, as conda: a missing
 * platform subdir beside an existing noarch is empty (a noarch-only channel), and so is a
 * missing noarch beside an existing platform subdir; both missing: the channel is not there.
 * A platform subdir requested alone: missing is an error naming the subdir. */
static void explain_missing(struct work *ws, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct menv_repodata_req *r = ws[i].r;
		const char *name;
		int noarch_missing = -1;

		if (!r->missing || !strcmp(r->subdir, "noarch"))
			continue;
		name = r->channel->name ? r->channel->name : ws[i].shown_base;
		for (size_t k = 0; k < n; k++)
			if (ws[k].r->channel == r->channel && !strcmp(ws[k].r->subdir, "noarch"))
				noarch_missing = ws[k].r->missing;
		if (noarch_missing == 1) {
			r->rc = menv_error_set(&r->err, MENV_ENOTFOUND,
			                       "channel '%s' not found: no repodata at '%s' nor in "
			                       "its noarch subdir",
			                       name, r->url);
		} else if (noarch_missing == 0) {
			r->rc = 0;
			r->err.code = 0, r->err.msg[0] = '\0';
			menv_buf_reset(&r->json);
			menv_buf_adds(&r->json, "{}");
		} else {
			r->rc = menv_error_set(&r->err, MENV_ENOTFOUND,
			                       "channel '%s' has no repodata for '%s' (%s)", name,
			                       r->subdir, r->url);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct menv_repodata_req *r = ws[i].r;
		if (r->missing && !strcmp(r->subdir, "noarch")) {
			/* a channel without noarch is fine */
			r->rc = 0;
			r->err.code = 0, r->err.msg[0] = '\0';
			menv_buf_reset(&r->json);
			menv_buf_adds(&r->json, "{}");
		}
	}
}

int menv_fetch_repodata_many(struct menv_repodata_req *reqs, size_t n,
                             const struct menv_fetch_opts *o_in, struct menv_error *err)
{
	struct menv_fetch_opts dflt;
	const struct menv_fetch_opts *o = o_in;
	struct work *ws = menv_xcalloc(n + 1, sizeof(*ws));
	struct menv_xfer **xs = menv_xcalloc(n + 1, sizeof(*xs));
	int rc = 0;

	if (!o) {
		menv_fetch_opts_init(&dflt);
		o = &dflt;
	}
	for (size_t i = 0; i < n; i++) {
		struct work *w = &ws[i];
		struct menv_repodata_req *r = &reqs[i];
		char *plain;

		w->r = r;
		menv_buf_init(&r->json);
		r->rc = 0, r->err.code = 0, r->err.msg[0] = '\0';
		r->from_cache = r->not_modified = r->zst = r->missing = false;
		w->cred_base = menv_fetch_subdir_file_url(r->channel, r->subdir, NULL, true);
		plain = menv_fetch_subdir_file_url(r->channel, r->subdir, NULL, false);
		w->shown_base = menv_url_redact(plain);
		free(plain);
		free(r->url);
		r->url = menv_xasprintf("%s/repodata.json", w->shown_base);
		w->cached = o->cache_dir && !is_file_url(w->cred_base);
		if (w->cached)
			entry_load(&w->e, o->cache_dir, w->cred_base);
		if (w->cached && o->offline) {
			if (!w->e.state) {
				r->rc = menv_error_set(&r->err, MENV_ENOTFOUND,
				                       "offline: no cached "
				                       "repodata for '%s'",
				                       r->url);
				continue;
			}
			r->rc = read_cached(w, &r->err);
			r->from_cache = true;
			continue;
		}
		if (!w->cached && o->offline && !is_file_url(w->cred_base)) {
			r->rc = menv_error_set(&r->err, MENV_ENOTFOUND,
			                       "offline: no cached repodata "
			                       "for '%s'",
			                       r->url);
			continue;
		}
		if (w->cached && entry_fresh(&w->e, o->repodata_ttl)) {
			r->rc = read_cached(w, &r->err);
			r->from_cache = !r->rc;
			if (!r->rc)
				continue;
			menv_buf_reset(&r->json);
			r->rc = 0;
		}
		start_xfer(w, o->use_zst && !is_file_url(w->cred_base) && !entry_no_zst(&w->e));
	}

	/* round 1: .zst or .json; round 2: .json where .zst was missing */
	for (int round = 0; round < 2; round++) {
		size_t nx = 0;
		for (size_t i = 0; i < n; i++)
			if (ws[i].active)
				xs[nx++] = &ws[i].x;
		if (!nx)
			break;
		menv_xfer_run(xs, nx, o, NULL, false, NULL);
		for (size_t i = 0; i < n; i++) {
			struct work *w = &ws[i];
			struct menv_repodata_req *r = w->r;
			if (!w->active)
				continue;
			w->active = false;
			if (w->x.rc == MENV_ENOTFOUND && w->try_zst) {
				menv_buf_reset(&r->json);
				start_xfer(w, false); /* fall back to repodata.json */
				continue;
			}
			if (w->x.rc == MENV_ENOTFOUND) {
				r->missing = true;
				r->rc = MENV_ENOTFOUND;
				r->err = w->x.err;
				menv_buf_reset(&r->json);
				continue;
			}
			if (w->x.rc == MENV_EIO && w->z.corrupt) {
				struct menv_error e;
				menv_error_set(&e, MENV_EPARSE,
				               "corrupt repodata.json.zst from "
				               "'%s'",
				               w->x.shown);
				req_fail(r, MENV_EPARSE, &e);
				continue;
			}
			if (w->x.rc) {
				req_fail(r, w->x.rc, &w->x.err);
				continue;
			}
			struct menv_error e = {0};
			int frc = finish_download(w, o, &e);
			if (frc)
				req_fail(r, frc, &e);
		}
	}
	explain_missing(ws, n);
	for (size_t i = 0; i < n; i++) {
		if (reqs[i].rc && !rc) {
			rc = reqs[i].rc;
			if (err)
				*err = reqs[i].err;
		}
		if (ws[i].z.ds)
			ZSTD_freeDStream(ws[i].z.ds);
		menv_xfer_release(&ws[i].x);
		entry_release(&ws[i].e);
		free(ws[i].cred_base);
		free(ws[i].shown_base);
	}
	free(xs);
	free(ws);
	return rc;
}

int menv_fetch_repodata(const struct menv_channel *ch, const char *subdir, struct menv_buf *out,
                        struct menv_error *err)
{
	struct menv_repodata_req r = {.channel = ch, .subdir = subdir};
	size_t start = out->len;
	int rc;

	rc = menv_fetch_repodata_many(&r, 1, NULL, err);
	if (!rc)
		menv_buf_add(out, r.json.buf, r.json.len);
	menv_buf_grow(out, 0);
	out->buf[out->len] = '\0';
	(void)start;
	menv_repodata_req_release(&r);
	return rc;
}
