/*
 * repodata.c - channel repodata with conda's cache: `<cache>/<8 hex>.json` beside its state
 * `<8 hex>.info.json` (url, etag, mod, cache_control, size, mtime_ns, refresh_ns, has_zst).
 *
 * Each subdir is served from the cache while fresh (local_repodata_ttl / max-age), else asked
 * for with If-None-Match / If-Modified-Since: a 304 keeps the cached file. repodata.json.zst
 * is preferred and decompressed while it streams (a 4xx but 416 for it means "no .zst", as
 * conda); its absence is remembered (has_zst) and
 * re-checked after 14 days, as conda does; a subdir without repodata.json is read from its .bz2
 * (and over file:// from its .zst). New bytes must be one JSON object before they
 * replace a cache entry, checked by a streaming pass as they arrive (no tree: jansson's tree
 * of a 200 MB repodata cost seconds and a gigabyte) and capped at repodata_max_bytes once
 * decompressed; an entry is written JSON first, then state: a state that does not describe
 * the JSON beside it (size, mtime) makes the entry stale, never trusted. With
 * repodata_as_file the bytes stay in files: a file:// repodata.json is only stat'ed (libsolv's
 * reader checks it), a download streams into the cache. All subdirs of one call travel in
 * parallel through the transfer engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bzlib.h>
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
	free(r->path);
	r->path = NULL;
}

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---------------------------------------------------------------------------------------- */
/* Streaming JSON check                                                                      */

/* Checks that bytes fed in blocks form one JSON object (RFC 8259: structure, strings with
 * their escapes and UTF-8, numbers, literals), keeping only the nesting stack: repodata is
 * validated while it arrives, without a tree (jansson's tree of a 200 MB repodata took ~1 GB
 * and seconds, only to be thrown away). */
#define JC_MAXDEPTH 256

enum jc_state {
	JC_VALUE,        /* a value is expected */
	JC_VALUE_OR_END, /* after '[' */
	JC_KEY_OR_END,   /* after '{' */
	JC_KEY,          /* after ',' in an object */
	JC_COLON,        /* after a key */
	JC_NEXT,         /* after a value inside a container: ',' or its end */
	JC_STR,
	JC_ESC,
	JC_HEX,
	JC_NUM,
	JC_LIT,
	JC_DONE, /* the top-level object ended: only whitespace may follow */
};
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

struct jcheck {
	enum jc_state state;
	bool started; /* the document's first value began */
	bool key;     /* the string being read is a key */
	int hex;      /* \\u digits still expected */
	int utf8;     /* UTF-8 continuation bytes still expected */
	int num;      /* N_*: where in a number */
	const char *lit;
	int depth;
	char stack[JC_MAXDEPTH]; /* '{' or '[' */
	int64_t off;             /* bytes checked so far */
	int64_t line, line_start;
	const char *error; /* the first problem, or NULL */
	int64_t err_off, err_line, err_col;
};

static void jc_init(struct jcheck *j)
{
	memset(j, 0, sizeof(*j));
	j->line = 1;
}

static void jc_after_value(struct jcheck *j)
{
	j->state = j->depth ? JC_NEXT : JC_DONE;
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Feeds `len` bytes; returns false once the bytes are no JSON object (j->error says why). */
static bool jc_feed(struct jcheck *j, const char *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data, *end = p + len;

	while (!j->error && p < end) {
		unsigned char c = *p;
		if (j->state == JC_STR) {
			/* the hot loop: repodata is mostly strings */
			while (p < end) {
				c = *p;
				if (j->utf8) {
					if ((c & 0xC0) != 0x80)
						break;
					j->utf8--, p++;
					continue;
				}
				if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
					break;
				p++;
			}
			if (p == end)
				break;
			if (j->utf8)
				j->error = "invalid UTF-8 in a string";
			else if (c == '"')
				j->key ? (void)(j->state = JC_COLON) : jc_after_value(j);
			else if (c == '\\')
				j->state = JC_ESC;
			else if (c < 0x20)
				j->error = "control character in a string";
			else if (c >= 0xC2 && c <= 0xDF)
				j->utf8 = 1;
			else if (c >= 0xE0 && c <= 0xEF)
				j->utf8 = 2;
			else if (c >= 0xF0 && c <= 0xF4)
				j->utf8 = 3;
			else
				j->error = "invalid UTF-8 in a string";
			if (!j->error)
				p++;
			continue;
		}
		if (is_ws(c) && j->state != JC_ESC && j->state != JC_HEX && j->state != JC_LIT &&
		    j->state != JC_NUM) {
			if (c == '\n')
				j->line++, j->line_start =
				                   j->off +
				                   (int64_t)(p - (const unsigned char *)data) + 1;
			p++;
			continue;
		}
		switch (j->state) {
		case JC_VALUE_OR_END:
			if (c == ']') {
				j->depth--;
				jc_after_value(j);
				break;
			}
			__attribute__((fallthrough)); /* a value after '[' */
		case JC_VALUE:
			if (!j->started) {
				/* the document itself must be an object */
				if (c != '{') {
					j->error = "not a JSON object";
					break;
				}
				j->started = true;
			}
			if (c == '{' || c == '[') {
				if (j->depth == JC_MAXDEPTH) {
					j->error = "nested too deeply";
					break;
				}
				j->stack[j->depth++] = (char)c;
				j->state = c == '{' ? JC_KEY_OR_END : JC_VALUE_OR_END;
			} else if (c == '"') {
				j->state = JC_STR, j->key = false;
			} else if (c == '-' || (c >= '0' && c <= '9')) {
				j->state = JC_NUM;
				j->num = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
			} else if (c == 't' || c == 'f' || c == 'n') {
				j->state = JC_LIT;
				j->lit = c == 't' ? "rue" : c == 'f' ? "alse" : "ull";
			} else {
				j->error = "a value was expected";
			}
			break;
		case JC_KEY_OR_END:
			if (c == '}') {
				j->depth--;
				jc_after_value(j);
				break;
			}
			__attribute__((fallthrough)); /* a key after '{' */
		case JC_KEY:
			if (c == '"')
				j->state = JC_STR, j->key = true;
			else
				j->error = "a key was expected";
			break;
		case JC_COLON:
			if (c == ':')
				j->state = JC_VALUE;
			else
				j->error = "':' was expected";
			break;
		case JC_NEXT: {
			char top = j->stack[j->depth - 1];
			if (c == ',')
				j->state = top == '{' ? JC_KEY : JC_VALUE;
			else if ((c == '}' && top == '{') || (c == ']' && top == '['))
				j->depth--, jc_after_value(j);
			else
				j->error = top == '{' ? "',' or '}' was expected"
				                      : "',' or ']' was expected";
			break;
		}
		case JC_ESC:
			if (c == 'u')
				j->state = JC_HEX, j->hex = 4;
			else if (strchr("\"\\/bfnrt", c) && c)
				j->state = JC_STR;
			else
				j->error = "invalid escape in a string";
			break;
		case JC_HEX:
			if (!((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')))
				j->error = "invalid \\u escape in a string";
			else if (--j->hex == 0)
				j->state = JC_STR;
			break;
		case JC_LIT:
			if (c != (unsigned char)*j->lit)
				j->error = "invalid literal";
			else if (!*++j->lit)
				jc_after_value(j);
			break;
		case JC_NUM: {
			bool digit = c >= '0' && c <= '9';
			int n = j->num;
			if (digit && (n == N_MINUS || n == N_INT))
				j->num = c == '0' && n == N_MINUS ? N_ZERO : N_INT;
			else if (digit && (n == N_DOT || n == N_FRAC))
				j->num = N_FRAC;
			else if (digit && (n == N_E || n == N_ESIGN || n == N_EXP))
				j->num = N_EXP;
			else if (c == '.' && (n == N_ZERO || n == N_INT))
				j->num = N_DOT;
			else if ((c == 'e' || c == 'E') &&
			         (n == N_ZERO || n == N_INT || n == N_FRAC))
				j->num = N_E;
			else if ((c == '+' || c == '-') && n == N_E)
				j->num = N_ESIGN;
			else if (n == N_ZERO || n == N_INT || n == N_FRAC || n == N_EXP) {
				jc_after_value(j); /* the number ended: look at c again */
				continue;
			} else
				j->error = "invalid number";
			break;
		}
		case JC_DONE: j->error = "data after the JSON object"; break;
		case JC_STR: break;
		}
		if (!j->error)
			p++;
	}
	if (j->error && !j->err_line) {
		j->err_off = j->off + (int64_t)(p - (const unsigned char *)data);
		j->err_line = j->line;
		j->err_col = j->err_off - j->line_start + 1;
	}
	j->off += (int64_t)(p - (const unsigned char *)data);
	return !j->error;
}

/* After the last block: MENV_EPARSE naming `shown` and where the bytes went wrong, or 0. */
static int jc_finish(struct jcheck *j, const char *shown, struct menv_error *err)
{
	if (!j->error && j->state != JC_DONE) {
		j->error = j->off ? "the document ends early" : "empty document";
		j->err_off = j->off, j->err_line = j->line, j->err_col = j->off - j->line_start + 1;
	}
	if (!j->error)
		return 0;
	return menv_error_set(
	        err, MENV_EPARSE,
	        "malformed repodata from '%s' at byte %lld (line %lld, column %lld): %s", shown,
	        (long long)j->err_off, (long long)j->err_line, (long long)j->err_col, j->error);
}

/* ---------------------------------------------------------------------------------------- */
/* Streaming zstd                                                                            */

struct zsink {
	struct menv_buf *out;
	size_t start;
	ZSTD_DStream *ds; /* NULL: plain bytes (or bz2) */
	bz_stream *bz;    /* repodata.json.bz2 travelling, else NULL */
	size_t last;      /* last ZSTD_decompressStream result (bz2: 1 until its stream ended) */
	bool corrupt;
	int64_t max;      /* bytes accepted once decompressed */
	bool too_big;     /* stopped at `max` */
	struct jcheck jc; /* the bytes so far are the start of a JSON object */
	int fd;           /* >= 0: the bytes go to this file (tmp), not to `out` */
	char *tmp;        /* that file: <cache entry>.tmp-XXXXXX, renamed into place when good */
	int64_t written;  /* bytes in it */
	int write_errno;  /* a write to it failed */
};

/* Appends decompressed bytes after the check and the cap. */
static int zsink_take(struct zsink *z, const void *data, size_t len)
{
	int64_t held = z->fd >= 0 ? z->written : (int64_t)(z->out->len - z->start);
	if (held + (int64_t)len > z->max) {
		z->too_big = true;
		errno = EFBIG;
		return -1;
	}
	if (!jc_feed(&z->jc, data, len)) {
		errno = EBADMSG; /* no JSON object: stop the transfer now, reported as such */
		return -1;
	}
	if (z->fd < 0) {
		menv_buf_add(z->out, data, len);
		return 0;
	}
	for (size_t done = 0; done < len;) {
		ssize_t n = write(z->fd, (const char *)data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			z->write_errno = n < 0 ? errno : ENOSPC;
			errno = z->write_errno;
			return -1;
		}
		done += (size_t)n;
	}
	z->written += (int64_t)len;
	return 0;
}

/* Ends the file of a streamed download (closed; removed unless `keep`). */
static void zsink_close(struct zsink *z, bool keep)
{
	if (z->fd >= 0)
		close(z->fd);
	z->fd = -1;
	if (z->tmp && !keep)
		unlink(z->tmp);
	free(z->tmp);
	z->tmp = NULL;
}

static int zsink_write(void *ud, const void *data, size_t len)
{
	struct zsink *z = ud;
	ZSTD_inBuffer in = {data, len, 0};
	char block[64 * 1024];

	if (z->bz) {
		z->bz->next_in = (char *)(uintptr_t)data;
		z->bz->avail_in = (unsigned)len;
		while (z->bz->avail_in > 0) {
			if (!z->last) {
				/* bytes after the end of the stream */
				z->corrupt = true;
				errno = EBADMSG;
				return -1;
			}
			z->bz->next_out = block;
			z->bz->avail_out = sizeof(block);
			int r = BZ2_bzDecompress(z->bz);
			if (r != BZ_OK && r != BZ_STREAM_END) {
				z->corrupt = true;
				errno = EBADMSG;
				return -1;
			}
			if (r == BZ_STREAM_END)
				z->last = 0;
			size_t got = sizeof(block) - z->bz->avail_out;
			if (got && zsink_take(z, block, got) < 0)
				return -1;
		}
		return 0;
	}
	if (!z->ds)
		return zsink_take(z, data, len);
	while (in.pos < in.size) {
		ZSTD_outBuffer ob = {block, sizeof(block), 0};
		size_t r = ZSTD_decompressStream(z->ds, &ob, &in);
		if (ZSTD_isError(r)) {
			z->corrupt = true;
			errno = EBADMSG;
			return -1;
		}
		z->last = r;
		if (ob.pos && zsink_take(z, block, ob.pos) < 0)
			return -1;
	}
	/* a frame may still hold output after all input was consumed */
	while (z->last != 0) {
		ZSTD_outBuffer ob = {block, sizeof(block), 0};
		ZSTD_inBuffer none = {NULL, 0, 0};
		size_t r = ZSTD_decompressStream(z->ds, &ob, &none);
		if (ZSTD_isError(r)) {
			z->corrupt = true;
			errno = EBADMSG;
			return -1;
		}
		z->last = r;
		if (!ob.pos)
			break;
		if (zsink_take(z, block, ob.pos) < 0)
			return -1;
	}
	return 0;
}

static int zsink_restart(void *ud)
{
	struct zsink *z = ud;

	z->out->len = z->start;
	if (z->out->buf)
		z->out->buf[z->start] = '\0';
	if (z->fd >= 0 && (ftruncate(z->fd, 0) < 0 || lseek(z->fd, 0, SEEK_SET) < 0))
		return -1;
	z->written = 0;
	z->write_errno = 0;
	z->last = 0;
	z->corrupt = false;
	z->too_big = false;
	jc_init(&z->jc);
	if (z->ds)
		ZSTD_DCtx_reset(z->ds, ZSTD_reset_session_only);
	if (z->bz) {
		BZ2_bzDecompressEnd(z->bz);
		memset(z->bz, 0, sizeof(*z->bz));
		if (BZ2_bzDecompressInit(z->bz, 0, 0) != BZ_OK)
			return -1;
		z->last = 1;
	}
	return 0;
}

/* Ends the decompressors of a sink. */
static void zsink_free_codecs(struct zsink *z)
{
	if (z->ds)
		ZSTD_freeDStream(z->ds);
	z->ds = NULL;
	if (z->bz) {
		BZ2_bzDecompressEnd(z->bz);
		free(z->bz);
	}
	z->bz = NULL;
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
                       const struct menv_xfer *x, const struct menv_buf *bytes, bool replaced,
                       int has_zst, struct menv_error *err)
{
	json_t *s = json_object();
	struct stat st;
	char when[32];
	char *text = NULL;
	int rc = 0;

	rc = menv_fetch_mkdir_p(cache_dir, err);
	if (rc)
		goto out;
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
	else if (!replaced && e->state && sget(e->state, "etag"))
		json_object_set_new(s, "etag", json_string(sget(e->state, "etag")));
	if (x && x->last_modified)
		json_object_set_new(s, "mod", json_string(x->last_modified));
	else if (!replaced && e->state && sget(e->state, "mod"))
		json_object_set_new(s, "mod", json_string(sget(e->state, "mod")));
	if (x && x->cache_control)
		json_object_set_new(s, "cache_control", json_string(x->cache_control));
	else if (!replaced && e->state && sget(e->state, "cache_control"))
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

/* The forms a subdir's repodata travels in, by preference (CEP-36 names). */
enum fmt { FMT_ZST, FMT_JSON, FMT_BZ2, FMT_NONE };
static const char *const fmt_file[] = {"repodata.json.zst", "repodata.json", "repodata.json.bz2"};

struct work {
	struct menv_repodata_req *r;
	const struct menv_fetch_opts *o;
	char *cred_base, *shown_base; /* subdir URL with and without credentials */
	struct entry e;
	bool cached; /* uses the cache (not file://, cache_dir set) */
	bool try_zst;
	enum fmt fmt;               /* the form being fetched */
	bool json_missing;          /* repodata.json itself was not there ... */
	struct menv_error json_err; /* ... with this answer (shown when no form is there) */
	char *json_url;             /* ... at this URL (redacted) */
	bool active;                /* needs a transfer in this round */
	/* an oci:// subdir: the blob of its repodata layer, its digest (hex) and the hash of
	 * the bytes received (checked against the digest before anything is kept) */
	char *oci_blob, *oci_digest, *oci_auth;
	struct menv_hasher dh;
	bool dh_live;
	struct menv_xfer x;
	struct zsink z;
};

static bool is_file_url(const char *u)
{
	return !strncmp(u, "file://", 7);
}

static int64_t max_bytes(const struct menv_fetch_opts *o)
{
	return o->repodata_max_bytes > 0 ? o->repodata_max_bytes : MENV_REPODATA_MAX_BYTES_DEFAULT;
}

/* With o->repodata_as_file: the request names the file that holds its bytes (no read). */
static void give_path(struct work *w, const char *path)
{
	menv_buf_release(&w->r->json);
	menv_buf_init(&w->r->json);
	free(w->r->path);
	w->r->path = menv_xstrdup(path);
}

static int read_cached(struct work *w, struct menv_error *err)
{
	if (w->o->repodata_as_file) {
		give_path(w, w->e.json_path);
		return 0;
	}
	return menv_buf_read_file(&w->r->json, w->e.json_path, err);
}

/* A file:// subdir read in place (o->repodata_as_file): its repodata.json is only stat'ed.
 * Returns 0 (path set), MENV_ENOTFOUND (missing, as a 404), or MENV_EIO. */
static int file_in_place(struct work *w, struct menv_error *err)
{
	char *path = menv_xasprintf("%s/repodata.json", w->cred_base + strlen("file://"));
	struct stat st;
	int rc = 0;

	if (stat(path, &st) < 0)
		rc = menv_error_sys(err,
		                    errno == ENOENT || errno == ENOTDIR ? MENV_ENOTFOUND : MENV_EIO,
		                    "cannot read '%s'", path);
	else if (!S_ISREG(st.st_mode))
		rc = menv_error_set(err, MENV_EIO, "'%s' is not a file", path);
	else if ((int64_t)st.st_size > max_bytes(w->o))
		rc = menv_error_set(err, MENV_EUNSUPPORTED,
		                    "repodata '%s' is %lld bytes, more than repodata_max_bytes "
		                    "(%lld)",
		                    path, (long long)st.st_size, (long long)max_bytes(w->o));
	else
		give_path(w, path);
	free(path);
	return rc;
}

static int oci_sink(void *ud, const void *data, size_t len)
{
	struct work *w = ud;
	menv_hasher_update(&w->dh, data, len);
	return zsink_write(&w->z, data, len);
}

static int oci_restart(void *ud)
{
	struct work *w = ud;
	menv_hasher_release(&w->dh);
	menv_hasher_init(&w->dh);
	return zsink_restart(&w->z);
}

static void start_xfer(struct work *w, enum fmt fmt)
{
	char *url = w->oci_blob ? menv_xstrdup(w->oci_blob)
	                        : menv_xasprintf("%s/%s", w->cred_base, fmt_file[fmt]);
	const char *state_url = w->e.state ? sget(w->e.state, "url") : NULL;
	bool zst = fmt == FMT_ZST;

	menv_xfer_release(&w->x);
	menv_xfer_init(&w->x, url);
	free(url);
	zsink_free_codecs(&w->z);
	zsink_close(&w->z, false);
	w->z.written = 0;
	w->z.write_errno = 0;
	if (w->o->repodata_as_file && w->cached && menv_fetch_mkdir_p(w->o->cache_dir, NULL) == 0) {
		/* kept in its file: the download streams into the cache, never into memory */
		w->z.tmp = menv_xasprintf("%s.tmp-XXXXXX", w->e.json_path);
		w->z.fd = mkostemp(w->z.tmp, O_CLOEXEC);
		if (w->z.fd < 0) {
			free(w->z.tmp);
			w->z.tmp = NULL;
		}
	}
	w->z.out = &w->r->json;
	w->z.start = w->r->json.len;
	w->z.ds = zst ? ZSTD_createDStream() : NULL;
	w->z.last = 0;
	w->z.corrupt = false;
	w->z.too_big = false;
	w->z.max = max_bytes(w->o);
	jc_init(&w->z.jc);
	if (w->z.ds)
		ZSTD_initDStream(w->z.ds);
	if (fmt == FMT_BZ2) {
		w->z.bz = menv_xcalloc(1, sizeof(*w->z.bz));
		if (BZ2_bzDecompressInit(w->z.bz, 0, 0) != BZ_OK) {
			free(w->z.bz);
			w->z.bz = NULL;
		}
		w->z.last = 1;
	}
	w->fmt = fmt;
	w->x.sink = zsink_write;
	w->x.restart = zsink_restart;
	w->x.ud = &w->z;
	if (w->oci_blob) {
		/* every byte hashed on its way in: the blob must match its digest */
		if (w->dh_live)
			menv_hasher_release(&w->dh);
		menv_hasher_init(&w->dh);
		w->dh_live = true;
		w->x.sink = oci_sink;
		w->x.restart = oci_restart;
		w->x.ud = w;
		w->x.authorization = w->oci_auth;
	}
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
	int rc;

	if (w->x.status == 304 && w->e.state) {
		menv_buf_reset(&r->json);
		rc = read_cached(w, err);
		if (rc)
			return rc;
		r->not_modified = true;
		r->zst = w->try_zst;
		zsink_close(&w->z, false);
		/* a cache we cannot write (read-only, full): the next run asks again */
		if (entry_store(&w->e, o->cache_dir, w->x.shown, &w->x, NULL, false,
		                w->try_zst ? 1 : 0, err) &&
		    err)
			*err = (struct menv_error){0};
		return 0;
	}
	if (w->z.ds && w->z.last != 0)
		return menv_error_set(err, MENV_EPARSE,
		                      "truncated repodata from '%s' (the .zst "
		                      "stream ends inside a frame)",
		                      w->x.shown);
	if (w->z.bz && w->z.last != 0)
		return menv_error_set(err, MENV_EPARSE,
		                      "truncated repodata from '%s' (the .bz2 "
		                      "stream ends early)",
		                      w->x.shown);
	if (w->oci_blob) {
		struct menv_hashes h;
		menv_hasher_final(&w->dh, &h);
		w->dh_live = false;
		if (strcmp(h.sha256, w->oci_digest))
			return menv_error_set(
			        err, MENV_ECHECKSUM,
			        "repodata blob '%s' of channel '%s' has sha256 %s, not "
			        "its digest %s: refused",
			        w->x.shown, w->shown_base, h.sha256, w->oci_digest);
		/* blobs are immutable (a year's max-age): freshness comes from the manifest */
		free(w->x.cache_control);
		w->x.cache_control = NULL;
	}
	rc = jc_finish(&w->z.jc, w->x.shown, err);
	if (rc)
		return rc;
	r->zst = w->try_zst;
	if (!w->cached)
		return 0;
	if (w->z.fd >= 0) {
		/* streamed into the cache: the checked file takes the entry's place, then its
		 * state is written (as menv_write_file_atomic would) */
		int fd = w->z.fd;
		w->z.fd = -1;
		if (fsync(fd) < 0 || close(fd) < 0 || rename(w->z.tmp, w->e.json_path) < 0)
			return menv_error_sys(err, MENV_EIO, "cannot write '%s'", w->e.json_path);
		rc = entry_store(&w->e, o->cache_dir, w->x.shown, &w->x, NULL, true,
		                 w->try_zst ? 1 : 0, err);
	} else if (entry_store(&w->e, o->cache_dir, w->x.shown, &w->x, &r->json, true,
	                       w->try_zst ? 1 : 0, err)) {
		/* a cache we cannot write (read-only, full): the bytes in memory are read */
		if (err)
			*err = (struct menv_error){0};
		return 0;
	}
	if (!rc && o->repodata_as_file)
		give_path(w, w->e.json_path);
	return rc;
}

/* The form to try after `f` failed as missing: over HTTP .zst, .json, .bz2; a file:// subdir
 * (no .zst first: reading a local file costs nothing) .json, .zst, .bz2. */
static enum fmt next_fmt(const struct work *w, enum fmt f)
{
	if (is_file_url(w->cred_base))
		return f == FMT_JSON ? FMT_ZST : f == FMT_ZST ? FMT_BZ2 : FMT_NONE;
	return f == FMT_ZST ? FMT_JSON : f == FMT_JSON ? FMT_BZ2 : FMT_NONE;
}

/* Whether the failed transfer of `w` says its form is not there. For the .zst, as conda
 * (conda/gateways/repodata/zstd.py): any 4xx but 416, since a bucket answers 403 for a missing
 * key; for the others a 404/410 (or a missing file). */
static bool form_absent(const struct work *w)
{
	if (w->x.rc == MENV_ENOTFOUND)
		return true;
	return w->fmt == FMT_ZST && w->x.rc == MENV_ENET && w->x.status >= 400 &&
	       w->x.status < 500 && w->x.status != 416;
}

/* Remembers that repodata.json itself is not there (its answer is the one shown when no other
 * form is there either). */
static void note_json_missing(struct work *w, const struct menv_error *e)
{
	w->json_missing = true;
	w->json_err = *e;
	free(w->json_url);
	w->json_url = menv_xasprintf("%s/repodata.json", w->shown_base);
}

static void req_fail(struct menv_repodata_req *r, int rc, const struct menv_error *e)
{
	r->rc = rc;
	r->err = *e;
	menv_buf_reset(&r->json);
	free(r->path);
	r->path = NULL;
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

/* An oci:// subdir: reads the manifest of `<path>/<subdir>/mrepodata.json:latest` (else the
 * "v0" `<path>/<subdir>/repodata.json:latest`), picks its
 * .zst layer (o->use_zst) or its JSON layer, and either serves the cache (the same blob as
 * last time: blobs are named by their digest) or starts the blob's transfer. A missing
 * manifest is a missing subdir. */
static void oci_start(struct work *w, const struct menv_fetch_opts *o)
{
	struct menv_repodata_req *r = w->r;
	static const struct {
		const char *mt;
		enum fmt fmt;
	} pref[] = {
	        {"application/vnd.conda.repodata.v1+json+zst", FMT_ZST},
	        {"application/vnd.conda.repodata.v1+json", FMT_JSON},
	        {"application/vnd.conda.repodata.v1+json+bz2", FMT_BZ2},
	};
	struct menv_oci *s = NULL;
	struct menv_error e = {0};
	json_t *m = NULL;
	char *repo = menv_xasprintf("%s/mrepodata.json", menv_oci_path(w->cred_base));
	int rc;

	rc = menv_oci_new(w->cred_base, o, &s, &e);
	if (!rc)
		rc = menv_oci_manifest(s, repo, "latest", &m, &e);
	if (rc == MENV_ENOTFOUND) {
		/* the "v0" layout of conda-oci-mirror, rattler and mamba */
		struct menv_error e0;
		char *v0 = menv_xasprintf("%s/repodata.json", menv_oci_path(w->cred_base));
		if (menv_oci_manifest(s, v0, "latest", &m, &e0) == 0) {
			free(repo);
			repo = v0;
			rc = 0;
		} else {
			free(v0);
		}
	}
	if (rc == MENV_ENOTFOUND) {
		r->missing = true;
		r->rc = rc;
		r->err = e;
		goto out;
	}
	if (rc) {
		struct menv_error ctx;
		menv_error_set(&ctx, rc, "channel '%s': %s", w->shown_base, e.msg);
		req_fail(r, rc, &ctx);
		goto out;
	}
	for (size_t i = 0; i < sizeof(pref) / sizeof(*pref) && !w->oci_blob; i++) {
		int64_t size;
		if (pref[i].fmt == FMT_ZST && !o->use_zst)
			continue;
		if (menv_oci_layer(s, m, repo, pref[i].mt, &w->oci_blob, &w->oci_digest, &size) ==
		    0)
			w->fmt = pref[i].fmt;
	}
	if (!w->oci_blob) {
		menv_error_set(&e, MENV_EPARSE,
		               "channel '%s': the manifest of '%s:latest' has no repodata layer",
		               w->shown_base, repo);
		req_fail(r, MENV_EPARSE, &e);
		goto out;
	}
	if (menv_oci_auth(s, repo))
		w->oci_auth = menv_xstrdup(menv_oci_auth(s, repo));
	if (w->cached && w->e.state) {
		char *shown = menv_url_redact(w->oci_blob);
		bool same = sget(w->e.state, "url") && !strcmp(sget(w->e.state, "url"), shown);
		free(shown);
		if (same && read_cached(w, &e) == 0) {
			free(r->url);
			r->url = menv_xstrdup(sget(w->e.state, "url"));
			r->not_modified = true;
			r->zst = w->fmt == FMT_ZST;
			goto out;
		}
		menv_buf_reset(&r->json);
	}
	start_xfer(w, w->fmt);
out:
	json_decref(m);
	menv_oci_free(s);
	free(repo);
}

/* One round of requests; `mirror` (may be NULL) gives for each request the index of the
 * channel's mirror to ask (mirrored_channels), ignored for a channel without mirrors. */
static int fetch_many(struct menv_repodata_req *reqs, size_t n, const struct menv_fetch_opts *o_in,
                      const size_t *mirror, struct menv_error *err)
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
		w->o = o;
		w->z.fd = -1;
		menv_buf_init(&r->json);
		r->path = NULL;
		r->rc = 0, r->err.code = 0, r->err.msg[0] = '\0';
		r->from_cache = r->not_modified = r->zst = r->missing = r->offline_empty = false;
		if (r->channel->mirrors.n) {
			const char *m = r->channel->mirrors.v[mirror ? mirror[i] : 0];
			w->cred_base = menv_xasprintf("%s/%s", m, r->subdir);
			plain = menv_xstrdup(w->cred_base);
		} else {
			w->cred_base =
			        menv_fetch_subdir_file_url(r->channel, r->subdir, NULL, true);
			plain = menv_fetch_subdir_file_url(r->channel, r->subdir, NULL, false);
		}
		w->shown_base = menv_url_redact(plain);
		free(plain);
		free(r->url);
		r->url = menv_xasprintf("%s/repodata.json", w->shown_base);
		w->cached = o->cache_dir && !is_file_url(w->cred_base);
		if (w->cached)
			entry_load(&w->e, o->cache_dir, w->cred_base);
		if (o->offline && !is_file_url(w->cred_base) && !(w->cached && w->e.state)) {
			if (o->offline_uncached_empty) {
				/* conda's fetch_latest: "Returning empty repodata" */
				menv_buf_adds(&r->json, "{}");
				r->offline_empty = true;
			} else {
				r->rc = menv_error_set(&r->err, MENV_ENOTFOUND,
				                       "offline: no cached repodata for '%s'",
				                       r->url);
			}
			continue;
		}
		if (w->cached && o->offline) {
			r->rc = read_cached(w, &r->err);
			r->from_cache = true;
			continue;
		}
		if (o->repodata_as_file && is_file_url(w->cred_base)) {
			struct menv_error e = {0};
			r->rc = file_in_place(w, &e);
			if (r->rc == MENV_ENOTFOUND) {
				/* no repodata.json: a .zst or .bz2 alone, read into memory */
				r->rc = 0;
				note_json_missing(w, &e);
				start_xfer(w, FMT_ZST);
			} else if (r->rc) {
				r->err = e;
			}
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
		if (menv_oci_is_url(w->cred_base)) {
			oci_start(w, o);
			continue;
		}
		start_xfer(w, o->use_zst && !is_file_url(w->cred_base) && !entry_no_zst(&w->e)
		                      ? FMT_ZST
		                      : FMT_JSON);
	}

	/* each round tries the next form where the previous one was not there */
	for (int round = 0; round < 3; round++) {
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
			if (w->x.rc && form_absent(w) && !w->oci_blob) {
				enum fmt next = next_fmt(w, w->fmt);
				if (w->fmt == FMT_JSON)
					note_json_missing(w, &w->x.err);
				menv_buf_reset(&r->json);
				if (next != FMT_NONE) {
					start_xfer(w, next);
					continue;
				}
				r->missing = true;
				r->rc = MENV_ENOTFOUND;
				r->err = w->json_missing ? w->json_err : w->x.err;
				free(r->url);
				r->url = menv_xstrdup(w->json_url ? w->json_url : w->x.shown);
				continue;
			}
			if (w->x.rc == MENV_EIO && w->z.write_errno) {
				struct menv_error e;
				errno = w->z.write_errno;
				menv_error_sys(&e, MENV_EIO, "cannot write '%s'", w->z.tmp);
				req_fail(r, MENV_EIO, &e);
				continue;
			}
			if (w->x.rc == MENV_EIO && w->z.jc.error) {
				struct menv_error e;
				req_fail(r, jc_finish(&w->z.jc, w->x.shown, &e), &e);
				continue;
			}
			if (w->x.rc == MENV_EIO && w->z.too_big) {
				struct menv_error e;
				menv_error_set(
				        &e, MENV_EUNSUPPORTED,
				        "repodata from '%s' is larger than repodata_max_bytes "
				        "(%lld bytes once decompressed)",
				        w->x.shown, (long long)w->z.max);
				req_fail(r, MENV_EUNSUPPORTED, &e);
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
		struct menv_repodata_req *r = ws[i].r;
		if (ws[i].oci_blob && r->rc && !strstr(r->err.msg, ws[i].shown_base)) {
			/* a blob's failure names the channel it belongs to */
			struct menv_error e = r->err;
			menv_error_set(&r->err, r->rc, "channel '%s': %s", ws[i].shown_base, e.msg);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (reqs[i].rc && !rc) {
			rc = reqs[i].rc;
			if (err)
				*err = reqs[i].err;
		}
		zsink_free_codecs(&ws[i].z);
		zsink_close(&ws[i].z, false);
		free(ws[i].json_url);
		free(ws[i].oci_blob);
		free(ws[i].oci_digest);
		free(ws[i].oci_auth);
		if (ws[i].dh_live)
			menv_hasher_release(&ws[i].dh);
		menv_xfer_release(&ws[i].x);
		entry_release(&ws[i].e);
		free(ws[i].cred_base);
		free(ws[i].shown_base);
	}
	free(xs);
	free(ws);
	return rc;
}

int menv_fetch_repodata_many(struct menv_repodata_req *reqs, size_t n,
                             const struct menv_fetch_opts *o, struct menv_error *err)
{
	size_t *mirror = menv_xcalloc(n + 1, sizeof(*mirror));
	struct menv_repodata_req *sub = menv_xcalloc(n + 1, sizeof(*sub));
	size_t *at = menv_xcalloc(n + 1, sizeof(*at));
	int rc = fetch_many(reqs, n, o, mirror, err);

	/* mirrored_channels: a subdir that failed is asked of its channel's next mirror */
	for (;;) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			const struct menv_repodata_req *r = &reqs[i];
			if (r->rc && r->rc != MENV_EINTR && mirror[i] + 1 < r->channel->mirrors.n) {
				sub[k] = (struct menv_repodata_req){.channel = r->channel,
				                                    .subdir = r->subdir};
				at[k++] = i;
			}
		}
		if (!k)
			break;
		size_t *next = menv_xcalloc(k + 1, sizeof(*next));
		for (size_t j = 0; j < k; j++)
			next[j] = ++mirror[at[j]];
		fetch_many(sub, k, o, next, NULL);
		for (size_t j = 0; j < k; j++) {
			menv_repodata_req_release(&reqs[at[j]]);
			reqs[at[j]] = sub[j];
		}
		free(next);
	}
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct menv_repodata_req *r = &reqs[i];
		if (r->rc && r->channel->mirrors.n > 1) {
			struct menv_error e = r->err;
			menv_error_set(&r->err, r->rc,
			               "all %zu mirrors of channel '%s' failed; the "
			               "last: %s",
			               r->channel->mirrors.n,
			               r->channel->name ? r->channel->name : r->channel->base_url,
			               e.msg);
		}
		if (r->rc && !rc) {
			rc = r->rc;
			if (err)
				*err = r->err;
		}
	}
	free(mirror);
	free(sub);
	free(at);
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
