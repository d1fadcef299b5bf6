/*
 * shards.c - sharded repodata (CEP-16). A subdir serving `repodata_shards.msgpack.zst` has an
 * index {info: {base_url, shards_base_url, subdir}, shards: {name: sha256 (bin)}}; the shard
 * of a name is `<shards_base_url><sha256 hex>.msgpack.zst`, a zstd msgpack document
 * {packages: {...}, packages.conda: {...}}. Only the names reachable from the request's roots
 * through `depends` are fetched, round by round, all subdirs of a round in parallel.
 * The index (small) is fetched each time and kept for offline use; shards are immutable and
 * cached by hash after their sha256 matched. A subdir that answered 404 for its index is
 * not asked again for 14 days (a `<8 hex>.shards.absent` marker in the cache, as conda's
 * has_zst), unless local_repodata_ttl is 0. The result is a repodata.json document per subdir.
 * Also the small msgpack decoder the format needs (no library in Debian's set we use).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zstd.h>

#include "internal.h"

/* ---------------------------------------------------------------------------------------- */
/* msgpack -> JSON                                                                           */

struct mp {
	const unsigned char *p;
	size_t len, pos;
	const char *src;
	struct menv_error *err;
	int depth;
};

static int mp_fail(struct mp *m, const char *what)
{
	return menv_error_set(m->err, MENV_EPARSE, "%s: invalid msgpack at byte %zu: %s", m->src,
	                      m->pos, what);
}

static int mp_need(struct mp *m, size_t n)
{
	return m->len - m->pos < n ? mp_fail(m, "truncated") : 0;
}

static uint64_t mp_be(struct mp *m, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | m->p[m->pos + i];
	m->pos += n;
	return v;
}

static int mp_value(struct mp *m, json_t **out);

static int mp_str(struct mp *m, size_t n, bool bin, json_t **out)
{
	static const char hex[] = "0123456789abcdef";

	if (mp_need(m, n))
		return MENV_EPARSE;
	if (bin) {
		char *h = menv_xmalloc(n * 2 + 1);
		for (size_t i = 0; i < n; i++) {
			h[2 * i] = hex[m->p[m->pos + i] >> 4];
			h[2 * i + 1] = hex[m->p[m->pos + i] & 15];
		}
		h[2 * n] = '\0';
		*out = json_string(h);
		free(h);
	} else {
		*out = json_stringn((const char *)m->p + m->pos, n);
	}
	m->pos += n;
	return *out ? 0 : mp_fail(m, "a string that is not UTF-8");
}

static int mp_array(struct mp *m, size_t n, json_t **out)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *v;
		int rc = mp_value(m, &v);
		if (rc) {
			json_decref(a);
			return rc;
		}
		json_array_append_new(a, v);
	}
	*out = a;
	return 0;
}

static int mp_map(struct mp *m, size_t n, json_t **out)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++) {
		json_t *k, *v;
		int rc = mp_value(m, &k);
		if (!rc && !json_is_string(k)) {
			json_decref(k);
			rc = mp_fail(m, "a map key that is not a string");
		}
		if (!rc) {
			rc = mp_value(m, &v);
			if (!rc)
				json_object_set_new(o, json_string_value(k), v);
			json_decref(k);
		}
		if (rc) {
			json_decref(o);
			return rc;
		}
	}
	*out = o;
	return 0;
}

static int mp_value(struct mp *m, json_t **out)
{
	unsigned char b;
	int rc;

	if (mp_need(m, 1))
		return MENV_EPARSE;
	if (++m->depth > 64)
		return mp_fail(m, "nested too deeply");
	b = m->p[m->pos++];
	if (b <= 0x7f) {
		*out = json_integer(b);
	} else if (b >= 0xe0) {
		*out = json_integer((int8_t)b);
	} else if ((b & 0xf0) == 0x80) {
		rc = mp_map(m, b & 0x0f, out);
		goto done;
	} else if ((b & 0xf0) == 0x90) {
		rc = mp_array(m, b & 0x0f, out);
		goto done;
	} else if ((b & 0xe0) == 0xa0) {
		rc = mp_str(m, b & 0x1f, false, out);
		goto done;
	} else {
		size_t w;
		switch (b) {
		case 0xc0: *out = json_null(); break;
		case 0xc2: *out = json_false(); break;
		case 0xc3: *out = json_true(); break;
		case 0xc4:
		case 0xc5:
		case 0xc6:
		case 0xd9:
		case 0xda:
		case 0xdb:
			w = (b == 0xc4 || b == 0xd9) ? 1 : (b == 0xc5 || b == 0xda) ? 2 : 4;
			if (mp_need(m, w))
				return MENV_EPARSE;
			rc = mp_str(m, (size_t)mp_be(m, w), b <= 0xc6, out);
			goto done;
		case 0xca:
		case 0xcb: {
			w = b == 0xca ? 4 : 8;
			if (mp_need(m, w))
				return MENV_EPARSE;
			uint64_t v = mp_be(m, w);
			double d;
			if (w == 4) {
				uint32_t v32 = (uint32_t)v;
				float f;
				memcpy(&f, &v32, 4);
				d = f;
			} else {
				memcpy(&d, &v, 8);
			}
			*out = json_real(d);
			break;
		}
		case 0xcc:
		case 0xcd:
		case 0xce:
		case 0xcf:
			w = (size_t)1 << (b - 0xcc);
			if (mp_need(m, w))
				return MENV_EPARSE;
			*out = json_integer((json_int_t)mp_be(m, w));
			break;
		case 0xd0:
		case 0xd1:
		case 0xd2:
		case 0xd3: {
			w = (size_t)1 << (b - 0xd0);
			if (mp_need(m, w))
				return MENV_EPARSE;
			uint64_t v = mp_be(m, w);
			int64_t s = w == 1   ? (int8_t)v
			            : w == 2 ? (int16_t)v
			            : w == 4 ? (int32_t)v
			                     : (int64_t)v;
			*out = json_integer((json_int_t)s);
			break;
		}
		case 0xdc:
		case 0xdd:
			w = b == 0xdc ? 2 : 4;
			if (mp_need(m, w))
				return MENV_EPARSE;
			rc = mp_array(m, (size_t)mp_be(m, w), out);
			goto done;
		case 0xde:
		case 0xdf:
			w = b == 0xde ? 2 : 4;
			if (mp_need(m, w))
				return MENV_EPARSE;
			rc = mp_map(m, (size_t)mp_be(m, w), out);
			goto done;
		default: m->pos--; return mp_fail(m, "an unsupported type");
		}
	}
	m->depth--;
	return 0;
done:
	m->depth--;
	return rc;
}

int menv_msgpack_to_json(const void *data, size_t len, const char *src, json_t **out,
                         struct menv_error *err)
{
	struct mp m = {data, len, 0, src, err, 0};
	int rc;

	*out = NULL;
	rc = mp_value(&m, out);
	if (!rc && m.pos != len) {
		json_decref(*out);
		*out = NULL;
		rc = mp_fail(&m, "trailing bytes");
	}
	return rc;
}

/* Decompresses a whole zstd buffer (all frames), at most `max` bytes. Errors: MENV_EPARSE
 * naming src, MENV_EUNSUPPORTED beyond max (repodata_max_bytes). */
static int unzstd(const struct menv_buf *in, const char *src, int64_t max, struct menv_buf *out,
                  struct menv_error *err)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	ZSTD_inBuffer ib = {in->buf, in->len, 0};
	size_t last = 1;
	int rc = 0;

	ZSTD_initDStream(ds);
	while (ib.pos < ib.size) {
		menv_buf_grow(out, 64 * 1024);
		ZSTD_outBuffer ob = {out->buf + out->len, out->alloc - out->len - 1, 0};
		last = ZSTD_decompressStream(ds, &ob, &ib);
		if (ZSTD_isError(last)) {
			rc = menv_error_set(err, MENV_EPARSE, "corrupt zstd data in '%s': %s", src,
			                    ZSTD_getErrorName(last));
			goto out;
		}
		out->len += ob.pos;
		out->buf[out->len] = '\0';
		if ((int64_t)out->len > max) {
			rc = menv_error_set(
			        err, MENV_EUNSUPPORTED,
			        "'%s' is larger than repodata_max_bytes (%lld bytes once "
			        "decompressed)",
			        src, (long long)max);
			goto out;
		}
	}
	if (last != 0)
		rc = menv_error_set(err, MENV_EPARSE, "truncated zstd data in '%s'", src);
out:
	ZSTD_freeDStream(ds);
	return rc;
}

static int msgpack_zst_to_json(const struct menv_buf *raw, const char *src, int64_t max,
                               json_t **out, struct menv_error *err)
{
	struct menv_buf plain = MENV_BUF_INIT;
	int rc;

	menv_buf_init(&plain);
	rc = unzstd(raw, src, max, &plain, err);
	if (!rc)
		rc = menv_msgpack_to_json(plain.buf, plain.len, src, out, err);
	menv_buf_release(&plain);
	return rc;
}

static int64_t shard_max(const struct menv_fetch_opts *o)
{
	return o->repodata_max_bytes > 0 ? o->repodata_max_bytes : MENV_REPODATA_MAX_BYTES_DEFAULT;
}

/* ---------------------------------------------------------------------------------------- */
/* Sharded fetch                                                                             */

struct subdir {
	struct menv_repodata_req *r;
	char *cred_base, *shown_base;
	char *shards_base;        /* credentialed URL prefix of the shards */
	json_t *index;            /* the decoded index, or NULL */
	json_t *packages, *conda; /* the collected records */
	struct menv_strset done;  /* names fetched (or absent) here */
};

struct shard_job {
	struct subdir *sd;
	char *name, *hex;
	struct menv_buf raw;
	struct menv_xfer x;
	bool from_cache;
};

static int raw_sink(void *ud, const void *data, size_t len)
{
	menv_buf_add(ud, data, len);
	return 0;
}

static int raw_restart(void *ud)
{
	menv_buf_reset(ud);
	return 0;
}

/* The package name of a dependency spec ("libgcc-ng >=7.3" -> "libgcc-ng"). Caller frees. */
static char *dep_name(const char *spec)
{
	const char *p = spec, *colon;
	size_t n;

	while (*p == ' ')
		p++;
	colon = strstr(p, "::");
	if (colon)
		p = colon + 2;
	n = strcspn(p, " =<>!~[;");
	return n ? menv_xstrndup(p, n) : NULL;
}

static void merge_records(json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;

	json_object_foreach(src, k, v) json_object_set(dst, k, v);
}

static void add_deps(json_t *records, struct menv_strvec *want, struct menv_strset *want_set)
{
	const char *k;
	json_t *rec;

	json_object_foreach(records, k, rec)
	{
		json_t *deps = json_object_get(rec, "depends");
		size_t i;
		json_t *d;
		json_array_foreach(deps, i, d)
		{
			char *n = json_is_string(d) ? dep_name(json_string_value(d)) : NULL;
			if (n && strncmp(n, "__", 2))
				menv_strvec_push_unique(want, want_set, n);
			free(n);
		}
	}
}

static char *shard_cache_path(const struct menv_fetch_opts *o, const char *hex)
{
	return o->cache_dir ? menv_xasprintf("%s/shards/%s.msgpack.zst", o->cache_dir, hex) : NULL;
}

static int verify_shard(struct shard_job *j, struct menv_error *err)
{
	struct menv_hashes h;

	menv_hash_mem(j->raw.buf, j->raw.len, &h);
	if (strcmp(h.sha256, j->hex))
		return menv_error_set(err, MENV_ECHECKSUM,
		                      "sha256 mismatch for the shard of '%s' "
		                      "from '%s': expected %s, got %s",
		                      j->name, j->x.shown, j->hex, h.sha256);
	return 0;
}

#define SHARDS_ABSENT_RECHECK_S (14 * 24 * 3600)

/* Did this subdir answer 404 for its shard index less than 14 days ago? */
static bool shards_known_absent(const char *marker, const struct menv_fetch_opts *o)
{
	struct stat st;
	if (!marker || o->repodata_ttl == 0 || stat(marker, &st))
		return false;
	time_t age = time(NULL) - st.st_mtime;
	return age >= 0 && age < SHARDS_ABSENT_RECHECK_S;
}

/* Fetches the index of every subdir; the copy kept in the cache serves offline runs and
 * servers that fail. */
static int load_indexes(struct subdir *sds, size_t n, const struct menv_fetch_opts *o)
{
	for (size_t i = 0; i < n; i++) {
		struct subdir *sd = &sds[i];
		struct menv_buf raw = MENV_BUF_INIT;
		char *url = menv_xasprintf("%s/repodata_shards.msgpack.zst", sd->cred_base);
		char *shown = menv_xasprintf("%s/repodata_shards.msgpack.zst", sd->shown_base);
		struct menv_error e = {0};
		char *cache = NULL, *absent = NULL;
		int rc;

		menv_buf_init(&raw);
		if (o->cache_dir) {
			char *name = menv_repodata_cache_name(url);
			name[8] = '\0';
			cache = menv_xasprintf("%s/%s.shards.msgpack.zst", o->cache_dir, name);
			absent = menv_xasprintf("%s/%s.shards.absent", o->cache_dir, name);
			free(name);
		}
		if (shards_known_absent(absent, o)) {
			rc = menv_error_set(&e, MENV_ENOTFOUND, "'%s' serves no shard index",
			                    shown);
		} else if (cache && o->offline) {
			rc = menv_buf_read_file(&raw, cache, &e);
			if (rc)
				rc = menv_error_set(&e, MENV_ENOTFOUND,
				                    "offline: no cached shard "
				                    "index for '%s'",
				                    shown);
		} else {
			rc = menv_fetch_url_opts(url, o, &raw, &e);
			if (cache && (!rc || rc == MENV_ENOTFOUND))
				mkdir(o->cache_dir, menv_dir_mode());
			if (!rc && cache) {
				menv_write_file_atomic(cache, raw.buf, raw.len, NULL);
				unlink(absent);
			} else if (rc == MENV_ENOTFOUND && absent) {
				/* remembered: the next runs do not ask again (best effort) */
				menv_write_file_atomic(absent, "", 0, NULL);
			} else if (rc && rc != MENV_ENOTFOUND && cache && !o->offline) {
				/* the server failed: a cached index is better than nothing */
				struct menv_error ignored;
				menv_buf_reset(&raw);
				if (menv_buf_read_file(&raw, cache, &ignored) == 0)
					rc = 0;
			}
		}
		if (!rc)
			rc = msgpack_zst_to_json(&raw, shown, shard_max(o), &sd->index, &e);
		if (!rc && !json_is_object(json_object_get(sd->index, "shards")))
			rc = menv_error_set(&e, MENV_EPARSE, "%s: no 'shards' map", shown);
		if (rc == MENV_ENOTFOUND)
			sd->r->missing = true;
		if (rc) {
			sd->r->rc = rc;
			sd->r->err = e;
		} else {
			json_t *info = json_object_get(sd->index, "info");
			const char *sb =
			        json_string_value(json_object_get(info, "shards_base_url"));
			if (sb && strstr(sb, "://"))
				sd->shards_base = menv_xstrdup(sb);
			else
				sd->shards_base =
				        menv_xasprintf("%s/%s", sd->cred_base, sb ? sb : "");
		}
		free(cache);
		free(absent);
		free(url);
		free(shown);
		menv_buf_release(&raw);
	}
	return 0;
}

int menv_fetch_repodata_sharded(struct menv_repodata_req *reqs, size_t n,
                                const struct menv_strvec *roots, const struct menv_fetch_opts *o_in,
                                struct menv_error *err)
{
	struct menv_fetch_opts dflt;
	const struct menv_fetch_opts *o = o_in;
	struct subdir *sds = menv_xcalloc(n + 1, sizeof(*sds));
	struct menv_strvec want = MENV_STRVEC_INIT;
	struct menv_strset want_set = MENV_STRSET_INIT;
	size_t scanned = 0;
	int rc = 0;

	if (!o) {
		menv_fetch_opts_init(&dflt);
		o = &dflt;
	}
	for (size_t i = 0; i < n; i++) {
		char *plain;
		sds[i].r = &reqs[i];
		menv_buf_init(&reqs[i].json);
		reqs[i].rc = 0, reqs[i].err.code = 0, reqs[i].err.msg[0] = '\0';
		reqs[i].missing = reqs[i].from_cache = reqs[i].not_modified = false;
		reqs[i].zst = true;
		sds[i].cred_base =
		        menv_fetch_subdir_file_url(reqs[i].channel, reqs[i].subdir, NULL, true);
		plain = menv_fetch_subdir_file_url(reqs[i].channel, reqs[i].subdir, NULL, false);
		sds[i].shown_base = menv_url_redact(plain);
		free(plain);
		free(reqs[i].url);
		reqs[i].url = menv_xasprintf("%s/repodata_shards.msgpack.zst", sds[i].shown_base);
		sds[i].packages = json_object();
		sds[i].conda = json_object();
	}
	load_indexes(sds, n, o);
	for (size_t i = 0; roots && i < roots->n; i++)
		menv_strvec_push_unique(&want, &want_set, roots->v[i]);

	/* rounds: every wanted name not yet fetched, from every subdir that has its shard */
	while (scanned < want.n && !rc) {
		size_t round_end = want.n, nj = 0;
		struct shard_job *jobs;
		struct menv_xfer **xs;

		for (size_t k = scanned; k < round_end; k++)
			if (!strcmp(want.v[k], "python"))
				menv_strvec_push_unique(&want, &want_set, "pip");
		round_end = want.n;
		jobs = menv_xcalloc((round_end - scanned) * n + 1, sizeof(*jobs));
		xs = menv_xcalloc((round_end - scanned) * n + 1, sizeof(*xs));
		for (size_t k = scanned; k < round_end; k++) {
			for (size_t i = 0; i < n; i++) {
				struct subdir *sd = &sds[i];
				json_t *h;
				if (sd->r->rc || !sd->index ||
				    !menv_strset_add(&sd->done, want.v[k]))
					continue;
				h = json_object_get(json_object_get(sd->index, "shards"),
				                    want.v[k]);
				if (!json_is_string(h))
					continue; /* not in this subdir */
				struct shard_job *j = &jobs[nj++];
				j->sd = sd;
				j->name = want.v[k];
				j->hex = menv_xstrdup(json_string_value(h));
				menv_buf_init(&j->raw);
				char *path = shard_cache_path(o, j->hex);
				struct menv_error ignored;
				if (path && menv_buf_read_file(&j->raw, path, &ignored) == 0 &&
				    verify_shard(j, &ignored) == 0)
					j->from_cache = true;
				else
					menv_buf_reset(&j->raw);
				free(path);
			}
		}
		size_t nx = 0;
		for (size_t k = 0; k < nj; k++) {
			struct shard_job *j = &jobs[k];
			char *url;
			if (j->from_cache)
				continue;
			url = menv_xasprintf("%s%s.msgpack.zst", j->sd->shards_base, j->hex);
			menv_xfer_init(&j->x, url);
			free(url);
			j->x.sink = raw_sink;
			j->x.restart = raw_restart;
			j->x.ud = &j->raw;
			xs[nx++] = &j->x;
		}
		if (nx && o->offline) {
			for (size_t k = 0; k < nj; k++)
				if (!jobs[k].from_cache && !jobs[k].sd->r->rc)
					jobs[k].sd->r->rc = menv_error_set(
					        &jobs[k].sd->r->err, MENV_ENOTFOUND,
					        "offline: the shard of '%s' is not cached",
					        jobs[k].name);
		} else if (nx) {
			menv_xfer_run(xs, nx, o, NULL, true, NULL);
		}
		for (size_t k = 0; k < nj; k++) {
			struct shard_job *j = &jobs[k];
			struct menv_error e = {0};
			json_t *doc = NULL;
			int jrc = 0;

			if (j->sd->r->rc)
				goto next;
			if (!j->from_cache) {
				jrc = j->x.rc;
				if (jrc)
					e = j->x.err;
				if (!jrc)
					jrc = verify_shard(j, &e);
				if (!jrc && o->cache_dir) {
					char *dir = menv_xasprintf("%s/shards", o->cache_dir);
					char *path = shard_cache_path(o, j->hex);
					mkdir(o->cache_dir, menv_dir_mode());
					mkdir(dir, menv_dir_mode());
					menv_write_file_atomic(path, j->raw.buf, j->raw.len, NULL);
					free(dir);
					free(path);
				}
			}
			if (!jrc) {
				char *src = j->from_cache ? menv_xasprintf("shard of '%s'", j->name)
				                          : menv_xstrdup(j->x.shown);
				jrc = msgpack_zst_to_json(&j->raw, src, shard_max(o), &doc, &e);
				free(src);
			}
			if (jrc) {
				j->sd->r->rc = jrc;
				j->sd->r->err = e;
				goto next;
			}
			merge_records(j->sd->packages, json_object_get(doc, "packages"));
			merge_records(j->sd->conda, json_object_get(doc, "packages.conda"));
			add_deps(json_object_get(doc, "packages"), &want, &want_set);
			add_deps(json_object_get(doc, "packages.conda"), &want, &want_set);
			json_decref(doc);
		next:
			if (!j->from_cache)
				menv_xfer_release(&j->x);
			menv_buf_release(&j->raw);
			free(j->hex);
		}
		free(jobs);
		free(xs);
		scanned = round_end;
		if (o->cancel && *o->cancel)
			rc = menv_error_set(err, MENV_EINTR, "interrupted");
	}

	for (size_t i = 0; i < n; i++) {
		struct subdir *sd = &sds[i];
		if (!sd->r->rc && sd->index) {
			json_t *info = json_object_get(sd->index, "info");
			json_t *out = json_object(), *oi = json_object();
			const char *bu = json_string_value(json_object_get(info, "base_url"));
			const char *sub = json_string_value(json_object_get(info, "subdir"));
			char *text;
			json_object_set_new(oi, "subdir", json_string(sub ? sub : sd->r->subdir));
			if (bu && *bu)
				json_object_set_new(oi, "base_url", json_string(bu));
			json_object_set_new(out, "info", oi);
			json_object_set(out, "packages", sd->packages);
			json_object_set(out, "packages.conda", sd->conda);
			json_object_set_new(out, "repodata_version",
			                    json_integer(bu && *bu ? 2 : 1));
			text = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
			menv_buf_adds(&sd->r->json, text);
			free(text);
			json_decref(out);
		}
		if (!rc && sd->r->rc) {
			rc = sd->r->rc;
			if (err)
				*err = sd->r->err;
		}
		json_decref(sd->index);
		json_decref(sd->packages);
		json_decref(sd->conda);
		menv_strset_clear(&sd->done);
		free(sd->cred_base);
		free(sd->shown_base);
		free(sd->shards_base);
	}
	menv_strvec_clear(&want);
	menv_strset_clear(&want_set);
	free(sds);
	return rc;
}
