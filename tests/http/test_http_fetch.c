/*
 * test_http_fetch.c - the fetch module against real servers on 127.0.0.1: nginx (Debian's)
 * serving channels built from the corpus, and the tests' own fault-injecting server.
 *
 * nginx: .zst preferred, ETag / If-None-Match / 304 (seen in nginx's access log), Cache-Control
 * max-age and local_repodata_ttl, --offline, .json fallback remembered, 404 channel vs subdir,
 * nodefaults never requested (BR-007), channel_alias names (BR-005), malformed JSON and
 * truncated .zst leave the cache as it was, tokens and basic auth (URL and .netrc), sharded
 * repodata equal to the full repodata, parallel package downloads and cache reuse, TLS refused
 * by default and accepted with the CA bundle.
 * Fault server: 500 then 200, a connection cut mid-body continued with Range, a stall past the
 * read timeout, a server lying about the length, wrong bytes, Ctrl-C, a full disk (tmpfs, when
 * mounting works), a `.partial` of an interrupted run continued.
 * Skips (77) when nginx is not installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include "skip77.h"

#include <bzlib.h>
#include <zstd.h>

#include "../unit/fetch/testutil.h"
#include "servers.h"

#define FORMAT_REPO MENV_SHARED "/corpus/repodata/conda/conda_format_repo"
#define NPKGS       12

struct pkg {
	char *fn, *path;
	struct menv_hashes h;
};

static struct {
	char *tmp, *www, *ngxdir;
	struct nginx ngx;
	struct faultsrv fs;
	struct pkg pkgs[NPKGS];
	char base[128];   /* http://127.0.0.1:PORT */
	char fsbase[128]; /* fault server */
} F;

/* ---------------------------------------------------------------------------------------- */
/* Fixture                                                                                   */

static void write_zst(const char *path, const char *from)
{
	struct menv_buf in = MENV_BUF_INIT;
	struct menv_error err;
	size_t cap;
	void *out;

	menv_buf_init(&in);
	assert_int_equal(menv_buf_read_file(&in, from, &err), 0);
	cap = ZSTD_compressBound(in.len);
	out = malloc(cap);
	size_t n = ZSTD_compress(out, cap, in.buf, in.len, 3);
	assert_false(ZSTD_isError(n));
	tu_write(path, out, n);
	free(out);
	menv_buf_release(&in);
}

static void write_bz2(const char *path, const char *from)
{
	struct menv_buf in = MENV_BUF_INIT;
	struct menv_error err;
	unsigned int cap;
	char *out;

	menv_buf_init(&in);
	assert_int_equal(menv_buf_read_file(&in, from, &err), 0);
	cap = (unsigned int)(in.len + in.len / 100 + 601);
	out = malloc(cap);
	assert_int_equal(BZ2_bzBuffToBuffCompress(out, &cap, in.buf, (unsigned int)in.len, 9, 0, 0),
	                 BZ_OK);
	tu_write(path, out, cap);
	free(out);
	menv_buf_release(&in);
}

static void make_channels(void)
{
	char *p;

	/* forge: linux-64 + noarch with .zst (corpus zlib channel) */
	p = tu_path("%s/conda/forge/linux-64", F.www), tu_mkdirs(p), free(p);
	p = tu_path("%s/conda/forge/noarch", F.www), tu_mkdirs(p), free(p);
	tu_copy(FORMAT_REPO "/linux-64/repodata.json", p = tu_path("%s/conda/forge/linux-64/"
	                                                           "repodata.json",
	                                                           F.www));
	free(p);
	tu_copy(FORMAT_REPO "/noarch/repodata.json", p = tu_path("%s/conda/forge/noarch/"
	                                                         "repodata.json",
	                                                         F.www));
	free(p);
	p = tu_path("%s/conda/forge/linux-64/repodata.json.zst", F.www);
	write_zst(p, FORMAT_REPO "/linux-64/repodata.json");
	free(p);
	p = tu_path("%s/conda/forge/noarch/repodata.json.zst", F.www);
	write_zst(p, FORMAT_REPO "/noarch/repodata.json");
	free(p);
	/* plain: linux-64 only, no .zst, no noarch */
	p = tu_path("%s/conda/plain/linux-64", F.www), tu_mkdirs(p), free(p);
	tu_copy(FORMAT_REPO "/linux-64/repodata.json", p = tu_path("%s/conda/plain/linux-64/"
	                                                           "repodata.json",
	                                                           F.www));
	free(p);
	/* sharded: the corpus subdir with its CEP-16 index and shards */
	p = tu_path("%s/conda/sharded/linux-64", F.www), tu_mkdirs(p), free(p);
	static const char *const files[] = {
	        "repodata.json",
	        "repodata_shards.msgpack.zst",
	        "2dcdacf7009b4f1c21f452c5079384340257e0e1cbecb8ec484984d1fa85b115.msgpack.zst",
	        "56a0c19b47ba1a2d0f1390eda489b1c49a00d35814571057e6d81e0c93dfd157.msgpack.zst",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char *from = tu_path("%s/linux-64/%s", FORMAT_REPO, files[i]);
		char *to = tu_path("%s/conda/sharded/linux-64/%s", F.www, files[i]);
		tu_copy(from, to);
		free(from);
		free(to);
	}
	/* s3: repodata.json.zst answered 403 (a bucket's missing key), repodata.json served */
	p = tu_path("%s/conda/s3/linux-64", F.www), tu_mkdirs(p), free(p);
	tu_copy(FORMAT_REPO "/linux-64/repodata.json",
	        p = tu_path("%s/conda/s3/linux-64/repodata.json", F.www));
	free(p);
	/* bz2only: linux-64 serves repodata.json.bz2 and nothing else; zstonly: the .zst alone */
	p = tu_path("%s/conda/bz2only/linux-64", F.www), tu_mkdirs(p), free(p);
	p = tu_path("%s/conda/bz2only/linux-64/repodata.json.bz2", F.www);
	write_bz2(p, FORMAT_REPO "/linux-64/repodata.json");
	free(p);
	p = tu_path("%s/conda/zstonly/linux-64", F.www), tu_mkdirs(p), free(p);
	p = tu_path("%s/conda/zstonly/linux-64/repodata.json.zst", F.www);
	write_zst(p, FORMAT_REPO "/linux-64/repodata.json");
	free(p);
	/* broken ones */
	p = tu_path("%s/conda/bad/linux-64", F.www), tu_mkdirs(p), free(p);
	p = tu_path("%s/conda/bad/linux-64/repodata.json", F.www);
	tu_write(p, "{\"info\": {}, \"packages\": {\"a\": }", 33);
	free(p);
	p = tu_path("%s/conda/trunc/linux-64", F.www), tu_mkdirs(p), free(p);
	{
		char *z = tu_path("%s/conda/forge/linux-64/repodata.json.zst", F.www);
		struct menv_buf b = MENV_BUF_INIT;
		struct menv_error err;
		menv_buf_init(&b);
		assert_int_equal(menv_buf_read_file(&b, z, &err), 0);
		p = tu_path("%s/conda/trunc/linux-64/repodata.json.zst", F.www);
		tu_write(p, b.buf, b.len / 2);
		free(p);
		menv_buf_release(&b);
		free(z);
	}
}

static void make_packages(void)
{
	char *dir = tu_path("%s/pkgs", F.www);
	size_t body = 256 * 1024;
	char *content = malloc(body + 1);

	tu_mkdirs(dir);
	for (int i = 0; i < NPKGS; i++) {
		char dist[64], index[256];
		struct menv_error err;
		/* pseudo-random text (xorshift), so that the files keep their size */
		uint64_t x = 88172645463325252ULL + (uint64_t)i;
		for (size_t k = 0; k < body; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			content[k] = (char)(48 + (x % 64));
		}
		content[body] = '\0';
		snprintf(dist, sizeof(dist), "pkg%02d-1.0-h0_0", i);
		snprintf(index, sizeof(index),
		         "{\"name\": \"pkg%02d\", \"version\": \"1.0\", "
		         "\"build\": \"h0_0\", \"build_number\": 0}",
		         i);
		struct tu_entry info[] = {{"info/index.json", TU_FILE, index}};
		struct tu_entry files[] = {{"share/data.txt", TU_FILE, content}};
		F.pkgs[i].fn = tu_path("%s.conda", dist);
		F.pkgs[i].path = tu_path("%s/%s", dir, F.pkgs[i].fn);
		tu_write_conda(F.pkgs[i].path, dist, info, 1, files, 1);
		assert_int_equal(menv_hash_file(F.pkgs[i].path, &F.pkgs[i].h, &err), 0);
	}
	free(content);
	free(dir);
}

static int group_setup(void **state)
{
	char *extra, *htpasswd;

	(void)state;
	if (!ngx_binary()) {
		fprintf(stderr, "nginx is not installed: skipping the HTTP tests\n");
		exit(77);
	}
	F.tmp = tu_mkdtemp();
	F.www = tu_path("%s/www", F.tmp);
	F.ngxdir = tu_path("%s/nginx", F.tmp);
	tu_mkdirs(F.www);
	make_channels();
	make_packages();
	htpasswd = tu_path("%s/htpasswd", F.tmp);
	tu_write(htpasswd, "alice:{PLAIN}s3cret\n", 20);
	extra = tu_path("    location /conda/t/tok-1/ { alias %s/conda/; }\n"
	                "    location /conda/t/ { return 403; }\n"
	                "    location /private/ { auth_basic \"menv\"; auth_basic_user_file %s; "
	                "alias %s/conda/; }\n"
	                "    location ~ ^/conda/s3/.*\\.zst$ { return 403; }\n"
	                "    location /cc/ { add_header Cache-Control \"public, max-age=3600\"; "
	                "alias %s/conda/; }\n",
	                F.www, htpasswd, F.www, F.www);
	if (ngx_start(&F.ngx, F.ngxdir, F.www, extra, NULL, NULL) != 0) {
		fprintf(stderr, "nginx did not start (see %s/error.log)\n", F.ngxdir);
		return -1;
	}
	snprintf(F.base, sizeof(F.base), "http://127.0.0.1:%d", F.ngx.port);
	if (fs_start(&F.fs, F.www) != 0)
		return -1;
	snprintf(F.fsbase, sizeof(F.fsbase), "http://127.0.0.1:%d", F.fs.port);
	free(extra);
	free(htpasswd);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	ngx_stop(&F.ngx);
	fs_stop(&F.fs);
	for (int i = 0; i < NPKGS; i++)
		free(F.pkgs[i].fn), free(F.pkgs[i].path);
	tu_rmtree(F.tmp);
	free(F.tmp);
	free(F.www);
	free(F.ngxdir);
	return 0;
}

static struct menv_fetch_opts fast_opts(const char *cache)
{
	struct menv_fetch_opts o;

	menv_fetch_opts_init(&o);
	o.backoff_factor = 0.05;
	o.connect_timeout = 2;
	o.read_timeout = 1;
	o.cache_dir = cache;
	return o;
}

static struct menv_channel *channel(const char *spec)
{
	struct menv_config cfg;
	struct menv_channel *c = NULL;
	struct menv_error err = {0};

	menv_config_defaults(&cfg);
	free(cfg.channel_alias);
	cfg.channel_alias = tu_path("%s/conda", F.base);
	assert_int_equal(menv_channel_parse(spec, &cfg, &c, &err), 0);
	menv_config_release(&cfg);
	return c;
}

static int fetch_subdir(struct menv_channel *c, const char *subdir, const struct menv_fetch_opts *o,
                        struct menv_repodata_req *r)
{
	struct menv_error err = {0};

	memset(r, 0, sizeof(*r));
	r->channel = c;
	r->subdir = subdir;
	return menv_fetch_repodata_many(r, 1, o, &err);
}

static void assert_same_file_text(const struct menv_buf *b, const char *path)
{
	struct menv_buf want = MENV_BUF_INIT;
	struct menv_error err;

	menv_buf_init(&want);
	assert_int_equal(menv_buf_read_file(&want, path, &err), 0);
	assert_int_equal(b->len, want.len);
	assert_memory_equal(b->buf, want.buf, want.len);
	menv_buf_release(&want);
}

/* ---------------------------------------------------------------------------------------- */
/* Repodata over nginx                                                                       */

static void test_repodata_zst_etag_304(void **state)
{
	char *cache = tu_path("%s/cache-etag", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_channel *c = channel("forge");
	struct menv_repodata_req r;
	char *name, *json_path, *state_path;
	int before;

	(void)state;
	o.repodata_ttl = 0; /* always revalidate */
	before = ngx_count(&F.ngx, "/conda/forge/linux-64/repodata.json.zst 200");
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.zst);
	assert_false(r.from_cache);
	assert_false(r.not_modified);
	assert_same_file_text(&r.json, FORMAT_REPO "/linux-64/repodata.json");
	assert_int_equal(ngx_count(&F.ngx, "/conda/forge/linux-64/repodata.json.zst 200"),
	                 before + 1);
	/* never the plain .json when the .zst is there */
	assert_int_equal(ngx_count(&F.ngx, "/conda/forge/linux-64/repodata.json 200"), 0);
	menv_repodata_req_release(&r);

	/* conda's names: md5 of the subdir URL with a trailing slash */
	char *sub = tu_path("%s/conda/forge/linux-64", F.base);
	name = menv_repodata_cache_name(sub);
	assert_int_equal(strlen(name), 13);
	json_path = tu_path("%s/%s", cache, name);
	name[8] = '\0';
	state_path = tu_path("%s/%s.info.json", cache, name);
	assert_true(tu_exists(json_path));
	json_t *st = json_load_file(state_path, 0, NULL);
	assert_non_null(st);
	assert_non_null(json_string_value(json_object_get(st, "etag")));
	assert_non_null(json_string_value(json_object_get(st, "mod")));
	assert_true(json_is_integer(json_object_get(st, "size")));
	assert_true(json_is_integer(json_object_get(st, "mtime_ns")));
	assert_true(json_is_true(json_object_get(json_object_get(st, "has_zst"), "value")));
	assert_non_null(strstr(json_string_value(json_object_get(st, "url")), ".zst"));
	json_decref(st);

	/* second time: If-None-Match, 304, the cached bytes */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.not_modified);
	assert_same_file_text(&r.json, FORMAT_REPO "/linux-64/repodata.json");
	assert_int_equal(ngx_count(&F.ngx, "/conda/forge/linux-64/repodata.json.zst 304"), 1);
	assert_int_equal(ngx_count(&F.ngx, "repodata.json.zst 304 \"-\" \"\\x22"), 1);
	menv_repodata_req_release(&r);

	/* offline: the cache alone, no request */
	int total = ngx_count(&F.ngx, NULL);
	o.offline = true;
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.from_cache);
	assert_same_file_text(&r.json, FORMAT_REPO "/linux-64/repodata.json");
	assert_int_equal(ngx_count(&F.ngx, NULL), total);
	menv_repodata_req_release(&r);
	/* offline without a cache entry: one clear error naming the URL */
	struct menv_channel *p = channel("plain");
	assert_int_equal(fetch_subdir(p, "linux-64", &o, &r), MENV_ENOTFOUND);
	assert_non_null(strstr(r.err.msg, "offline"));
	assert_non_null(strstr(r.err.msg, "/conda/plain/linux-64/repodata.json"));
	assert_false(r.offline_empty);
	menv_repodata_req_release(&r);
	/* offline_uncached_empty: conda's fetch_latest, an empty repodata ("{}"), no request */
	o.offline_uncached_empty = true;
	assert_int_equal(fetch_subdir(p, "linux-64", &o, &r), 0);
	assert_true(r.offline_empty);
	assert_false(r.from_cache);
	assert_int_equal(r.json.len, 2);
	assert_memory_equal(r.json.buf, "{}", 2);
	menv_repodata_req_release(&r);
	/* a cached subdir is still read from its cache */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.from_cache);
	assert_false(r.offline_empty);
	menv_repodata_req_release(&r);
	o.offline_uncached_empty = false;
	assert_int_equal(ngx_count(&F.ngx, NULL), total);

	menv_channel_free(p);
	menv_channel_free(c);
	free(sub);
	free(name);
	free(json_path);
	free(state_path);
	free(cache);
}

static void test_repodata_max_age_ttl(void **state)
{
	char *cache = tu_path("%s/cache-ttl", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	char *u = tu_path("%s/cc/forge", F.base);
	struct menv_channel *c = channel(u); /* served with Cache-Control: max-age=3600 */
	struct menv_repodata_req r;
	int n;

	(void)state;
	free(u);
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	menv_repodata_req_release(&r);
	n = ngx_count(&F.ngx, "/cc/forge/");
	assert_int_equal(n, 1);
	/* ttl 1 (conda's default): fresh for max-age, no request */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.from_cache);
	menv_repodata_req_release(&r);
	assert_int_equal(ngx_count(&F.ngx, "/cc/forge/"), n);
	/* ttl 0: revalidated (304) */
	o.repodata_ttl = 0;
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.not_modified);
	menv_repodata_req_release(&r);
	assert_int_equal(ngx_count(&F.ngx, "/cc/forge/linux-64/repodata.json.zst 304"), 1);
	/* ttl 2 (seconds): fresh just after the 304, stale (revalidated) 3 s later */
	o.repodata_ttl = 2;
	n = ngx_count(&F.ngx, "/cc/forge/");
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.from_cache);
	menv_repodata_req_release(&r);
	assert_int_equal(ngx_count(&F.ngx, "/cc/forge/"), n);
	sleep(3);
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.not_modified);
	menv_repodata_req_release(&r);
	assert_int_equal(ngx_count(&F.ngx, "/cc/forge/linux-64/repodata.json.zst 304"), 2);
	menv_channel_free(c);
	free(cache);
}

static void test_repodata_json_fallback(void **state)
{
	char *cache = tu_path("%s/cache-plain", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_channel *c = channel("plain");
	struct menv_repodata_req r[2];
	struct menv_error err = {0};

	(void)state;
	o.repodata_ttl = 0;
	memset(r, 0, sizeof(r));
	r[0].channel = c, r[0].subdir = "linux-64";
	r[1].channel = c, r[1].subdir = "noarch";
	assert_int_equal(menv_fetch_repodata_many(r, 2, &o, &err), 0);
	assert_false(r[0].zst);
	assert_same_file_text(&r[0].json, FORMAT_REPO "/linux-64/repodata.json");
	/* no noarch: empty, like conda */
	assert_true(r[1].missing);
	assert_string_equal(r[1].json.buf, "{}");
	assert_int_equal(ngx_count(&F.ngx, "/conda/plain/linux-64/repodata.json.zst 404"), 1);
	assert_int_equal(ngx_count(&F.ngx, "/conda/plain/linux-64/repodata.json 200"), 1);
	menv_repodata_req_release(&r[0]);
	menv_repodata_req_release(&r[1]);
	/* the missing .zst is remembered: straight to .json (a 304 now) */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, r), 0);
	assert_true(r[0].not_modified);
	assert_int_equal(ngx_count(&F.ngx, "/conda/plain/linux-64/repodata.json.zst 404"), 1);
	assert_int_equal(ngx_count(&F.ngx, "/conda/plain/linux-64/repodata.json 304"), 1);
	menv_repodata_req_release(&r[0]);
	menv_channel_free(c);
	free(cache);
}

/* issue 16: a .zst answered 403 falls back to repodata.json (conda: any 4xx but 416) and the
 * missing .zst is remembered, so the next revalidation asks for repodata.json alone */
static void test_repodata_zst_403_falls_back(void **state)
{
	char *cache = tu_path("%s/cache-s3", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_channel *c = channel("s3");
	struct menv_repodata_req r[2];
	struct menv_error err = {0};

	(void)state;
	o.repodata_ttl = 0;
	memset(r, 0, sizeof(r));
	r[0].channel = c, r[0].subdir = "linux-64";
	r[1].channel = c, r[1].subdir = "noarch";
	assert_int_equal(menv_fetch_repodata_many(r, 2, &o, &err), 0);
	assert_int_equal(r[0].rc, 0);
	assert_false(r[0].zst);
	assert_same_file_text(&r[0].json, FORMAT_REPO "/linux-64/repodata.json");
	/* noarch: .zst 403, .json 404, .bz2 404: missing beside linux-64, so empty */
	assert_true(r[1].missing);
	assert_string_equal(r[1].json.buf, "{}");
	assert_int_equal(ngx_count(&F.ngx, "/conda/s3/linux-64/repodata.json.zst 403"), 1);
	assert_int_equal(ngx_count(&F.ngx, "/conda/s3/linux-64/repodata.json 200"), 1);
	assert_int_equal(ngx_count(&F.ngx, "/conda/s3/noarch/repodata.json 404"), 1);
	menv_repodata_req_release(&r[0]);
	menv_repodata_req_release(&r[1]);
	assert_int_equal(fetch_subdir(c, "linux-64", &o, r), 0);
	assert_true(r[0].not_modified);
	assert_int_equal(ngx_count(&F.ngx, "/conda/s3/linux-64/repodata.json.zst 403"), 1);
	assert_int_equal(ngx_count(&F.ngx, "/conda/s3/linux-64/repodata.json 304"), 1);
	menv_repodata_req_release(&r[0]);
	menv_channel_free(c);
	free(cache);
}

/* issue 16: a subdir serving only repodata.json.bz2 (over HTTP and file://), and one serving
 * only repodata.json.zst over file:// (read in place or not), have their packages */
static void test_repodata_bz2_and_file_zst_only(void **state)
{
	char *cache = tu_path("%s/cache-bz2", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_channel *c = channel("bz2only");
	struct menv_repodata_req r;

	(void)state;
	o.repodata_ttl = 0;
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_false(r.zst);
	assert_false(r.missing);
	assert_non_null(strstr(r.url, "/conda/bz2only/linux-64/repodata.json.bz2"));
	assert_same_file_text(&r.json, FORMAT_REPO "/linux-64/repodata.json");
	assert_int_equal(ngx_count(&F.ngx, "/conda/bz2only/linux-64/repodata.json.bz2 200"), 1);
	menv_repodata_req_release(&r);
	/* cached with its validators: a 304 for the .bz2 the second time */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.not_modified);
	assert_same_file_text(&r.json, FORMAT_REPO "/linux-64/repodata.json");
	assert_int_equal(ngx_count(&F.ngx, "/conda/bz2only/linux-64/repodata.json.bz2 304"), 1);
	menv_repodata_req_release(&r);
	menv_channel_free(c);

	static const char *const names[] = {"bz2only", "zstonly"};
	for (int k = 0; k < 2; k++) {
		for (int as_file = 0; as_file < 2; as_file++) {
			char *u = tu_path("file://%s/conda/%s", F.www, names[k]);
			struct menv_fetch_opts fo = fast_opts(NULL);
			fo.repodata_as_file = as_file;
			c = channel(u);
			assert_int_equal(fetch_subdir(c, "linux-64", &fo, &r), 0);
			assert_false(r.missing);
			assert_null(r.path); /* decompressed: in memory, not the file itself */
			assert_same_file_text(&r.json, FORMAT_REPO "/linux-64/repodata.json");
			menv_repodata_req_release(&r);
			menv_channel_free(c);
			free(u);
		}
	}
	/* a truncated .bz2 is refused, naming the URL */
	char *t = tu_path("%s/conda/bz2trunc/linux-64", F.tmp);
	char *full = tu_path("%s/conda/bz2only/linux-64/repodata.json.bz2", F.www);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err;
	tu_mkdirs(t);
	menv_buf_init(&b);
	assert_int_equal(menv_buf_read_file(&b, full, &err), 0);
	char *tf = tu_path("%s/repodata.json.bz2", t);
	tu_write(tf, b.buf, b.len / 2);
	char *u = tu_path("file://%s/conda/bz2trunc", F.tmp);
	struct menv_fetch_opts fo = fast_opts(NULL);
	c = channel(u);
	assert_int_equal(fetch_subdir(c, "linux-64", &fo, &r), MENV_EPARSE);
	assert_non_null(strstr(r.err.msg, "truncated repodata from 'file://"));
	assert_non_null(strstr(r.err.msg, "bz2trunc/linux-64/repodata.json.bz2"));
	menv_repodata_req_release(&r);
	menv_channel_free(c);
	menv_buf_release(&b);
	free(u);
	free(tf);
	free(full);
	free(t);
	free(cache);
}

static void test_repodata_missing_channel_or_subdir(void **state)
{
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_channel *gone = channel("nothing-here"), *plain = channel("forge");
	struct menv_repodata_req r[4];
	struct menv_error err = {0};

	(void)state;
	memset(r, 0, sizeof(r));
	r[0].channel = gone, r[0].subdir = "linux-64";
	r[1].channel = gone, r[1].subdir = "noarch";
	r[2].channel = plain, r[2].subdir = "osx-arm64";
	r[3].channel = plain, r[3].subdir = "noarch";
	assert_int_equal(menv_fetch_repodata_many(r, 4, &o, &err), MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "channel 'nothing-here' not found"));
	assert_non_null(strstr(r[0].err.msg, "channel 'nothing-here' not found"));
	assert_non_null(strstr(r[0].err.msg, "/conda/nothing-here/linux-64/repodata.json"));
	/* a channel without this platform but with noarch: empty, as conda (noarch-only) */
	assert_int_equal(r[2].rc, 0);
	assert_true(r[2].missing);
	assert_string_equal(r[2].json.buf, "{}");
	assert_int_equal(r[3].rc, 0);
	/* the platform subdir asked for alone: an error naming the subdir and the URL */
	menv_repodata_req_release(&r[2]);
	assert_int_equal(fetch_subdir(plain, "osx-arm64", &o, &r[2]), MENV_ENOTFOUND);
	assert_non_null(strstr(r[2].err.msg, "channel 'forge' has no repodata for 'osx-arm64'"));
	assert_non_null(strstr(r[2].err.msg, "/conda/forge/osx-arm64/repodata.json"));
	for (int i = 0; i < 4; i++)
		menv_repodata_req_release(&r[i]);
	menv_channel_free(gone);
	menv_channel_free(plain);

	/* BR-007: `nodefaults` is an instruction; pkgs/main and nodefaults never requested */
	struct menv_config cfg;
	struct menv_strvec in = MENV_STRVEC_INIT, names = MENV_STRVEC_INIT;
	menv_config_defaults(&cfg);
	free(cfg.channel_alias);
	cfg.channel_alias = tu_path("%s/conda", F.base);
	menv_strvec_clear(&cfg.default_channels);
	char *dflt = tu_path("%s/pkgs/main", F.base);
	menv_strvec_push_owned(&cfg.default_channels, dflt);
	menv_strvec_push(&in, "forge");
	menv_strvec_push(&in, "nodefaults");
	menv_channels_expand(&in, &cfg, &names);
	assert_int_equal(names.n, 1);
	struct menv_channel *c = NULL;
	assert_int_equal(menv_channel_parse(names.v[0], &cfg, &c, &err), 0);
	assert_string_equal(c->name, "forge");
	char *want_base = tu_path("%s/conda/forge", F.base);
	assert_string_equal(c->base_url, want_base);
	free(want_base);
	memset(r, 0, sizeof(r));
	r[0].channel = c, r[0].subdir = "linux-64";
	r[1].channel = c, r[1].subdir = "noarch";
	assert_int_equal(menv_fetch_repodata_many(r, 2, &o, &err), 0);
	menv_repodata_req_release(&r[0]);
	menv_repodata_req_release(&r[1]);
	assert_int_equal(ngx_count(&F.ngx, "nodefaults"), 0);
	assert_int_equal(ngx_count(&F.ngx, "/pkgs/main"), 0);
	menv_channel_free(c);

	/* BR-005 short form: `extra::pkg` with channel_alias resolves under the alias */
	assert_int_equal(menv_channel_parse("plain", &cfg, &c, &err), 0);
	char *want = tu_path("%s/conda/plain", F.base);
	assert_string_equal(c->base_url, want);
	assert_string_equal(c->name, "plain");
	free(want);
	menv_channel_free(c);
	menv_strvec_clear(&in);
	menv_strvec_clear(&names);
	menv_config_release(&cfg);
}

static void test_repodata_bad_input_keeps_cache(void **state)
{
	char *cache = tu_path("%s/cache-bad", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_channel *c = channel("forge");
	struct menv_repodata_req r;
	struct menv_buf before = MENV_BUF_INIT, after = MENV_BUF_INIT;
	struct menv_error err;

	(void)state;
	o.repodata_ttl = 0;
	/* a good entry first, then point the same cache entry's channel at broken servers:
	 * the channels differ, so use a channel whose URL serves bad bytes */
	struct menv_channel *bad = channel("bad"), *trunc = channel("trunc");
	assert_int_equal(fetch_subdir(bad, "linux-64", &o, &r), MENV_EPARSE);
	assert_non_null(strstr(r.err.msg, "malformed repodata from '"));
	assert_non_null(strstr(r.err.msg, "/conda/bad/linux-64/repodata.json"));
	assert_non_null(strstr(r.err.msg, "at byte"));
	menv_repodata_req_release(&r);
	assert_int_equal(fetch_subdir(trunc, "linux-64", &o, &r), MENV_EPARSE);
	assert_non_null(strstr(r.err.msg, "/conda/trunc/linux-64/repodata.json.zst"));
	menv_repodata_req_release(&r);
	/* nothing was cached for them */
	char *sub = tu_path("%s/conda/bad/linux-64", F.base);
	char *name = menv_repodata_cache_name(sub), *path = tu_path("%s/%s", cache, name);
	assert_false(tu_exists(path));
	free(path), free(name), free(sub);

	/* a cached entry survives a server that now sends a truncated .zst */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	menv_repodata_req_release(&r);
	sub = tu_path("%s/conda/forge/linux-64", F.base);
	name = menv_repodata_cache_name(sub);
	path = tu_path("%s/%s", cache, name);
	menv_buf_init(&before);
	assert_int_equal(menv_buf_read_file(&before, path, &err), 0);
	char *z = tu_path("%s/conda/forge/linux-64/repodata.json.zst", F.www);
	char *zt = tu_path("%s/conda/trunc/linux-64/repodata.json.zst", F.www);
	char *zk = tu_path("%s/keep.zst", F.tmp);
	assert_int_equal(rename(z, zk), 0);
	tu_copy(zt, z);
	sleep(1); /* a new Last-Modified/ETag */
	utimes(z, NULL);
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), MENV_EPARSE);
	assert_non_null(strstr(r.err.msg, "truncated"));
	menv_repodata_req_release(&r);
	menv_buf_init(&after);
	assert_int_equal(menv_buf_read_file(&after, path, &err), 0);
	assert_int_equal(before.len, after.len);
	assert_memory_equal(before.buf, after.buf, before.len);
	assert_int_equal(rename(zk, z), 0);
	/* and the entry is still used */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_same_file_text(&r.json, FORMAT_REPO "/linux-64/repodata.json");
	menv_repodata_req_release(&r);

	free(z), free(zt), free(zk), free(path), free(name), free(sub);
	menv_buf_release(&before);
	menv_buf_release(&after);
	menv_channel_free(bad);
	menv_channel_free(trunc);
	menv_channel_free(c);
	free(cache);
}

/* A repodata.json.zst bomb as a hostile or broken mirror could serve it: real-looking records
 * (1000 distinct ones, 117 KB, repeated) in 65 zstd frames that inflate to 4 GiB from ~1 MB.
 * Before repodata_max_bytes menv grew its buffer until "out of memory allocating 8589934592
 * bytes" aborted it; now the transfer stops at the cap with one line naming the URL. */
static void write_bomb(const char *path, int64_t *inflated)
{
	struct menv_buf rec = MENV_BUF_INIT, block = MENV_BUF_INIT;
	FILE *f = fopen(path, "wb");
	const char *head = "{\"info\": {\"subdir\": \"linux-64\"}, \"packages\": {";
	const char *tail = "\"z-1-0.tar.bz2\": {\"name\": \"z\", \"version\": \"1\", "
	                   "\"build\": \"0\", \"build_number\": 0, \"depends\": []}}}";
	size_t cap;
	void *out;

	assert_non_null(f);
	menv_buf_init(&rec);
	menv_buf_init(&block);
	for (int i = 0; i < 1000; i++)
		menv_buf_addf(&rec,
		              "\"bomb%d-1.0-h%08x_0.tar.bz2\": {\"build\": \"h%08x_0\", "
		              "\"build_number\": 0, \"depends\": [\"libgcc-ng >=12\"], "
		              "\"md5\": \"%032x\", \"name\": \"bomb%d\", \"size\": %d, "
		              "\"subdir\": \"linux-64\", \"version\": \"1.0\"},",
		              i, (unsigned)i * 2654435761u, (unsigned)i * 2654435761u, (unsigned)i,
		              i, 1000 + i);
	while (block.len < ((size_t)64 << 20) - rec.len)
		menv_buf_add(&block, rec.buf, rec.len);
	*inflated = 0;
	cap = ZSTD_compressBound(block.len);
	out = malloc(cap);
	/* frames: head, 64 x block (64 MiB each), tail */
	size_t n = ZSTD_compress(out, cap, head, strlen(head), 3);
	assert_false(ZSTD_isError(n));
	assert_int_equal(fwrite(out, 1, n, f), n);
	*inflated += (int64_t)strlen(head);
	n = ZSTD_compress(out, cap, block.buf, block.len, 3);
	assert_false(ZSTD_isError(n));
	for (int i = 0; i < 64; i++)
		assert_int_equal(fwrite(out, 1, n, f), n);
	*inflated += 64 * (int64_t)block.len;
	n = ZSTD_compress(out, cap, tail, strlen(tail), 3);
	assert_int_equal(fwrite(out, 1, n, f), n);
	*inflated += (int64_t)strlen(tail);
	assert_int_equal(fclose(f), 0);
	free(out);
	menv_buf_release(&rec);
	menv_buf_release(&block);
}

static void test_repodata_zst_bomb_capped(void **state)
{
	char *cache = tu_path("%s/cache-bomb", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_repodata_req r;
	int64_t inflated;
	struct stat st;

	(void)state;
	char *dir = tu_path("%s/conda/bomb/linux-64", F.www);
	tu_mkdirs(dir);
	char *z = tu_path("%s/repodata.json.zst", dir);
	write_bomb(z, &inflated);
	assert_true(inflated > ((int64_t)4 << 30) - ((int64_t)64 << 20));
	assert_int_equal(stat(z, &st), 0);
	assert_true(st.st_size < 4 << 20); /* a few MB on the wire */

	struct menv_channel *c = channel("bomb");
	o.repodata_max_bytes = 1 << 20;
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), MENV_EUNSUPPORTED);
	char *want = tu_path("repodata from '%s/conda/bomb/linux-64/repodata.json.zst' is larger "
	                     "than repodata_max_bytes (1048576 bytes once decompressed)",
	                     F.base);
	assert_string_equal(r.err.msg, want);
	assert_int_equal(r.json.len, 0);
	free(want);
	menv_repodata_req_release(&r);
	/* nothing was cached */
	char *sub = tu_path("%s/conda/bomb/linux-64", F.base);
	char *name = menv_repodata_cache_name(sub), *path = tu_path("%s/%s", cache, name);
	assert_false(tu_exists(path));
	free(path), free(name), free(sub);

	/* bytes that are no JSON object stop the transfer at once, whatever the cap: a bomb of
	 * zeros is refused at byte 0 */
	char *zeros = tu_path("%s/conda/bomb/noarch", F.www);
	tu_mkdirs(zeros);
	char *zz = tu_path("%s/repodata.json.zst", zeros);
	{
		size_t len = (size_t)256 << 20, cap = ZSTD_compressBound(len);
		char *in = calloc(1, len), *out = malloc(cap);
		size_t n = ZSTD_compress(out, cap, in, len, 3);
		assert_false(ZSTD_isError(n));
		tu_write(zz, out, n);
		free(in);
		free(out);
	}
	o.repodata_max_bytes = 0; /* the default, 2 GiB */
	assert_int_equal(fetch_subdir(c, "noarch", &o, &r), MENV_EPARSE);
	assert_non_null(strstr(r.err.msg, "/conda/bomb/noarch/repodata.json.zst' at byte 0 "
	                                  "(line 1, column 1): not a JSON object"));
	menv_repodata_req_release(&r);
	unlink(z);
	unlink(zz);
	free(zz);
	free(zeros);
	free(z);
	free(dir);
	menv_channel_free(c);
	free(cache);
}

/* o->repodata_as_file over HTTP: the download is checked and written to the cache, the request
 * names the cache file (bytes equal to the server's) and holds no copy; a fresh entry and a
 * 304 name it too, without reading it. */
static void test_repodata_in_place_http(void **state)
{
	char *cache = tu_path("%s/cache-inplace", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_channel *c = channel("forge");
	struct menv_repodata_req r;
	struct menv_buf got = MENV_BUF_INIT;
	struct menv_error err;

	(void)state;
	o.repodata_as_file = true;
	o.repodata_ttl = 0; /* always revalidate: the second load is a 304 */
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	char *sub = tu_path("%s/conda/forge/linux-64", F.base);
	char *name = menv_repodata_cache_name(sub), *path = tu_path("%s/%s", cache, name);
	assert_non_null(r.path);
	assert_string_equal(r.path, path);
	assert_int_equal(r.json.len, 0);
	assert_true(r.zst);
	menv_buf_init(&got);
	assert_int_equal(menv_buf_read_file(&got, r.path, &err), 0);
	assert_same_file_text(&got, FORMAT_REPO "/linux-64/repodata.json");
	menv_repodata_req_release(&r);
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.not_modified);
	assert_string_equal(r.path, path);
	assert_int_equal(r.json.len, 0);
	menv_repodata_req_release(&r);
	o.repodata_ttl = 3600;
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_true(r.from_cache);
	assert_string_equal(r.path, path);
	menv_repodata_req_release(&r);
	menv_buf_release(&got);
	/* the download streamed into a temporary file in the cache, renamed into place */
	char *tmpname = tu_path("%s.tmp-", name);
	assert_int_equal(tu_count_prefixed(cache, tmpname), 0);
	/* a truncated .zst and malformed JSON streamed in place: refused, nothing left behind */
	struct menv_channel *trunc = channel("trunc"), *bad = channel("bad");
	o.repodata_ttl = 0;
	assert_int_equal(fetch_subdir(trunc, "linux-64", &o, &r), MENV_EPARSE);
	assert_null(r.path);
	menv_repodata_req_release(&r);
	assert_int_equal(fetch_subdir(bad, "linux-64", &o, &r), MENV_EPARSE);
	assert_non_null(strstr(r.err.msg, "at byte 31 (line 1, column 32): a value was expected"));
	menv_repodata_req_release(&r);
	/* no entry, state or temporary file for them */
	const char *broken[] = {"trunc", "bad"};
	for (int i = 0; i < 2; i++) {
		char *bsub = tu_path("%s/conda/%s/linux-64", F.base, broken[i]);
		char *bname = menv_repodata_cache_name(bsub);
		bname[8] = '\0'; /* "<8 hex>": the entry, its state, its temporary files */
		assert_int_equal(tu_count_prefixed(cache, bname), 0);
		free(bname);
		free(bsub);
	}
	free(tmpname);
	menv_channel_free(trunc);
	menv_channel_free(bad);
	free(path), free(name), free(sub);
	menv_channel_free(c);
	free(cache);
}

static void test_token_and_basic_auth(void **state)
{
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_config cfg;
	struct menv_channel *c = NULL;
	struct menv_repodata_req r;
	struct menv_error err = {0};
	char *url;

	(void)state;
	menv_config_defaults(&cfg);
	free(cfg.channel_alias);
	cfg.channel_alias = tu_path("%s/conda", F.base);
	/* token: /conda/t/tok-1/ is the alias for that token; name and base URL never show it */
	url = tu_path("%s/conda/t/tok-1/forge", F.base);
	assert_int_equal(menv_channel_parse(url, &cfg, &c, &err), 0);
	free(url);
	assert_string_equal(c->name, "forge");
	assert_null(strstr(c->base_url, "tok-1"));
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_null(strstr(r.url, "tok-1"));
	menv_repodata_req_release(&r);
	assert_int_equal(ngx_count(&F.ngx, "/conda/t/tok-1/forge/linux-64/repodata.json.zst 200"),
	                 1);
	menv_channel_free(c);
	/* a wrong token: the error names the URL without the token */
	url = tu_path("%s/conda/t/wrong-9/forge", F.base);
	assert_int_equal(menv_channel_parse(url, &cfg, &c, &err), 0);
	free(url);
	assert_int_not_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_null(strstr(r.err.msg, "wrong-9"));
	assert_non_null(strstr(r.err.msg, "/conda/t/<TOKEN>/forge/linux-64/"));
	assert_non_null(strstr(r.err.msg, "403"));
	menv_repodata_req_release(&r);
	menv_channel_free(c);

	/* basic auth: refused without credentials, accepted from the URL, and from .netrc */
	url = tu_path("%s/private/forge", F.base);
	assert_int_equal(menv_channel_parse(url, &cfg, &c, &err), 0);
	free(url);
	assert_int_not_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_non_null(strstr(r.err.msg, "401"));
	menv_repodata_req_release(&r);
	menv_channel_free(c);
	url = tu_path("http://alice:s3cret@127.0.0.1:%d/private/forge", F.ngx.port);
	assert_int_equal(menv_channel_parse(url, &cfg, &c, &err), 0);
	free(url);
	assert_string_equal(c->auth, "alice:s3cret");
	assert_null(strstr(c->name, "s3cret"));
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	assert_null(strstr(r.url, "s3cret"));
	menv_repodata_req_release(&r);
	menv_channel_free(c);
	char *netrc = tu_path("%s/netrc", F.tmp);
	const char *text = "machine 127.0.0.1 login alice password s3cret\n";
	tu_write(netrc, text, strlen(text));
	chmod(netrc, 0600);
	setenv("NETRC", netrc, 1);
	url = tu_path("%s/private/forge", F.base);
	assert_int_equal(menv_channel_parse(url, &cfg, &c, &err), 0);
	free(url);
	assert_int_equal(fetch_subdir(c, "linux-64", &o, &r), 0);
	menv_repodata_req_release(&r);
	unsetenv("NETRC");
	menv_channel_free(c);
	free(netrc);
	menv_config_release(&cfg);
}

/* The records of `names` in a repodata document, as one object keyed "<section>/<fn>". */
static json_t *records_of(json_t *doc, const struct menv_strvec *names)
{
	static const char *const sections[] = {"packages", "packages.conda"};
	json_t *out = json_object();

	for (size_t s = 0; s < 2; s++) {
		const char *fn;
		json_t *rec;
		json_object_foreach(json_object_get(doc, sections[s]), fn, rec)
		{
			const char *n = json_string_value(json_object_get(rec, "name"));
			if (!names || menv_strvec_contains(names, n)) {
				char key[512];
				snprintf(key, sizeof(key), "%s/%s", sections[s], fn);
				json_object_set(out, key, rec);
			}
		}
	}
	return out;
}

static void test_sharded_equals_full(void **state)
{
	char *cache = tu_path("%s/cache-shards", F.tmp);
	struct menv_fetch_opts o = fast_opts(cache);
	struct menv_channel *c = channel("sharded"), *p = channel("plain");
	struct menv_strvec roots = MENV_STRVEC_INIT, reached = MENV_STRVEC_INIT;
	struct menv_repodata_req r[2];
	struct menv_error err = {0};
	json_t *sharded, *full, *a, *b;

	(void)state;
	menv_strvec_push(&roots, "zlib");
	memset(r, 0, sizeof(r));
	r[0].channel = c, r[0].subdir = "linux-64";
	r[1].channel = p, r[1].subdir = "linux-64"; /* serves no index: missing */
	assert_int_equal(menv_fetch_repodata_sharded(r, 2, &roots, &o, &err), MENV_ENOTFOUND);
	assert_int_equal(r[0].rc, 0);
	assert_true(r[1].missing);
	sharded = json_loads(r[0].json.buf, 0, NULL);
	assert_non_null(sharded);
	full = json_load_file(FORMAT_REPO "/linux-64/repodata.json", 0, NULL);
	/* zlib depends on libgcc-ng: both are reached, through the index and two shards */
	menv_strvec_push(&reached, "zlib");
	menv_strvec_push(&reached, "libgcc-ng");
	a = records_of(sharded, NULL);
	b = records_of(full, &reached);
	assert_int_equal(json_object_size(a), 3);
	assert_true(json_equal(a, b));
	assert_string_equal(
	        json_string_value(json_object_get(json_object_get(sharded, "info"), "subdir")),
	        "linux-64");
	/* and it parses like the full one */
	struct menv_repodata *rd = NULL;
	assert_int_equal(menv_repodata_parse(r[0].json.buf, r[0].json.len, "sharded", c, "linux-64",
	                                     &rd, &err),
	                 0);
	assert_int_equal(rd->n, 2); /* zlib .conda preferred over its .tar.bz2, libgcc-ng */
	menv_repodata_free(rd);
	assert_int_equal(ngx_count(&F.ngx, "/conda/sharded/linux-64/repodata_shards.msgpack.zst"),
	                 1);
	assert_int_equal(ngx_count(&F.ngx, "/conda/sharded/linux-64/2dcdacf7"), 1);
	assert_int_equal(ngx_count(&F.ngx, "/conda/sharded/linux-64/56a0c19b"), 1);
	/* the full repodata was not needed */
	assert_int_equal(ngx_count(&F.ngx, "/conda/sharded/linux-64/repodata.json"), 0);
	menv_repodata_req_release(&r[0]);
	menv_repodata_req_release(&r[1]);

	/* the subdir without an index (404) is not asked again, unless local_repodata_ttl is 0 */
	assert_int_equal(ngx_count(&F.ngx, "/conda/plain/linux-64/repodata_shards"), 1);
	for (int pass = 0; pass < 2; pass++) {
		memset(r, 0, sizeof(r));
		r[0].channel = p, r[0].subdir = "linux-64";
		o.repodata_ttl = pass ? 0 : 1;
		assert_int_equal(menv_fetch_repodata_sharded(r, 1, &roots, &o, &err),
		                 MENV_ENOTFOUND);
		assert_true(r[0].missing);
		assert_int_equal(ngx_count(&F.ngx, "/conda/plain/linux-64/repodata_shards"),
		                 1 + pass);
		menv_repodata_req_release(&r[0]);
	}
	o.repodata_ttl = 1;

	/* again: shards come from the cache (verified by hash), only the index is asked for */
	memset(r, 0, sizeof(r));
	r[0].channel = c, r[0].subdir = "linux-64";
	assert_int_equal(menv_fetch_repodata_sharded(r, 1, &roots, &o, &err), 0);
	json_t *again = json_loads(r[0].json.buf, 0, NULL);
	assert_true(json_equal(again, sharded));
	assert_int_equal(ngx_count(&F.ngx, "/conda/sharded/linux-64/2dcdacf7"), 1);
	menv_repodata_req_release(&r[0]);
	/* offline: index and shards from the cache */
	o.offline = true;
	memset(r, 0, sizeof(r));
	r[0].channel = c, r[0].subdir = "linux-64";
	assert_int_equal(menv_fetch_repodata_sharded(r, 1, &roots, &o, &err), 0);
	menv_repodata_req_release(&r[0]);
	assert_int_equal(ngx_count(&F.ngx, "/conda/sharded/linux-64/repodata_shards"), 2);

	json_decref(again);
	json_decref(a);
	json_decref(b);
	json_decref(sharded);
	json_decref(full);
	menv_strvec_clear(&roots);
	menv_strvec_clear(&reached);
	menv_channel_free(c);
	menv_channel_free(p);
	free(cache);
}

/* ---------------------------------------------------------------------------------------- */
/* Packages                                                                                  */

static void make_pkg_record(struct menv_record *r, int i, const char *base)
{
	char name[16];

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), "pkg%02d", i);
	r->json = json_pack("{s:s, s:s, s:s, s:i, s:[]}", "name", name, "version", "1.0", "build",
	                    "h0_0", "build_number", 0, "depends");
	r->name = json_string_value(json_object_get(r->json, "name"));
	r->version = "1.0";
	r->build = "h0_0";
	r->fn = F.pkgs[i].fn;
	r->subdir = "linux-64";
	r->sha256 = F.pkgs[i].h.sha256;
	r->size = F.pkgs[i].h.size;
	r->url = tu_path("%s/%s", base, F.pkgs[i].fn);
	r->channel_url = strdup(base);
}

static void free_pkg_record(struct menv_record *r)
{
	json_decref(r->json);
	free(r->url);
	free(r->channel_url);
}

struct counts {
	int cached, downloaded, extracted;
};

static void on_event(void *ud, enum menv_fetch_event ev, const struct menv_record *r)
{
	struct counts *c = ud;
	(void)r;
	c->cached += ev == MENV_FETCH_CACHED;
	c->downloaded += ev == MENV_FETCH_DOWNLOADED;
	c->extracted += ev == MENV_FETCH_EXTRACTED;
}

static int fetch_pkgs(const char *pkgs, const char *base, int first, int n,
                      const struct menv_fetch_opts *o, struct counts *cnt, struct menv_error *err)
{
	struct menv_record recs[NPKGS], *rp[NPKGS];
	int rc;

	for (int i = 0; i < n; i++) {
		make_pkg_record(&recs[i], first + i, base);
		rp[i] = &recs[i];
	}
	memset(cnt, 0, sizeof(*cnt));
	rc = menv_pkgcache_fetch_opts(pkgs, rp, (size_t)n, o, on_event, cnt, err);
	for (int i = 0; i < n; i++)
		free_pkg_record(&recs[i]);
	return rc;
}

static void test_parallel_downloads_and_reuse(void **state)
{
	char *pkgs = tu_path("%s/pkgs-parallel", F.tmp);
	char *base = tu_path("%s/pkgs", F.base);
	struct menv_fetch_opts o = fast_opts(NULL);
	struct counts cnt;
	struct menv_error err = {0};
	int before = ngx_count(&F.ngx, "/pkgs/");

	(void)state;
	o.threads = 6;
	assert_int_equal(fetch_pkgs(pkgs, base, 0, NPKGS, &o, &cnt, &err), 0);
	assert_int_equal(cnt.downloaded, NPKGS);
	assert_int_equal(cnt.extracted, NPKGS);
	assert_int_equal(ngx_count(&F.ngx, "/pkgs/") - before, NPKGS);
	for (int i = 0; i < NPKGS; i++) {
		char *rec = tu_path("%s/pkg%02d-1.0-h0_0/info/repodata_record.json", pkgs, i);
		char *data = tu_path("%s/pkg%02d-1.0-h0_0/share/data.txt", pkgs, i);
		assert_true(tu_exists(rec));
		assert_true(tu_exists(data));
		free(rec), free(data);
	}
	assert_int_equal(tu_count_prefixed(pkgs, "."), 3); /* ".", ".." and .menv.lock */
	/* the cache is reused: no request at all */
	assert_int_equal(fetch_pkgs(pkgs, base, 0, NPKGS, &o, &cnt, &err), 0);
	assert_int_equal(cnt.cached, NPKGS);
	assert_int_equal(ngx_count(&F.ngx, "/pkgs/") - before, NPKGS);
	/* a 404 names the URL and the package; nothing is left behind */
	struct menv_record r, *rp = &r;
	make_pkg_record(&r, 0, base);
	free(r.url);
	r.url = tu_path("%s/pkgs/absent-1.0-h0_0.conda", F.base);
	r.fn = "absent-1.0-h0_0.conda";
	assert_int_equal(menv_pkgcache_fetch_opts(pkgs, &rp, 1, &o, NULL, NULL, &err),
	                 MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/pkgs/absent-1.0-h0_0.conda"));
	assert_int_equal(tu_count_prefixed(pkgs, "absent"), 0);
	free_pkg_record(&r);
	free(pkgs);
	free(base);
}

/* ---------------------------------------------------------------------------------------- */
/* TLS                                                                                       */

static void test_tls(void **state)
{
	char *dir = tu_path("%s/tls", F.tmp);
	char *cert = tu_path("%s/cert.pem", dir), *key = tu_path("%s/key.pem", dir);
	char *cmd;
	struct nginx tls;
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	char url[256];

	(void)state;
	tu_mkdirs(dir);
	cmd = tu_path("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
	              "-addext subjectAltName=IP:127.0.0.1 -keyout '%s' -out '%s' "
	              ">/dev/null 2>&1",
	              key, cert);
	if (system(cmd) != 0) {
		free(cmd);
		menv_skip();
	}
	free(cmd);
	char *ndir = tu_path("%s/nginx", dir);
	assert_int_equal(ngx_start(&tls, ndir, F.www, NULL, cert, key), 0);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/conda/forge/linux-64/repodata.json",
	         tls.port);
	menv_buf_init(&b);
	/* refused by default, with a clear message */
	assert_int_equal(menv_fetch_url_opts(url, &o, &b, &err), MENV_ENET);
	assert_non_null(strstr(err.msg, "TLS certificate not trusted"));
	assert_non_null(strstr(err.msg, url));
	/* accepted with ssl_verify pointing at the CA file */
	o.ca_bundle = cert;
	assert_int_equal(menv_fetch_url_opts(url, &o, &b, &err), 0);
	assert_same_file_text(&b, FORMAT_REPO "/linux-64/repodata.json");
	/* and with ssl_verify: false */
	menv_buf_reset(&b);
	o.ca_bundle = NULL;
	o.ssl_verify = false;
	assert_int_equal(menv_fetch_url_opts(url, &o, &b, &err), 0);
	ngx_stop(&tls);
	menv_buf_release(&b);
	free(ndir), free(cert), free(key), free(dir);
}

/* ---------------------------------------------------------------------------------------- */
/* Faults                                                                                    */

static char *fs_url(const char *behaviour, int i)
{
	return tu_path("%s/%s/pkgs/%s", F.fsbase, behaviour, F.pkgs[i].fn);
}

static int fetch_one_from(const char *pkgs, const char *behaviour, int i,
                          const struct menv_fetch_opts *o, struct menv_error *err)
{
	struct menv_record r, *rp = &r;
	int rc;

	make_pkg_record(&r, i, F.fsbase);
	free(r.url);
	r.url = fs_url(behaviour, i);
	rc = menv_pkgcache_fetch_opts(pkgs, &rp, 1, o, NULL, NULL, err);
	free_pkg_record(&r);
	return rc;
}

static bool extracted(const char *pkgs, int i)
{
	char *p = tu_path("%s/pkg%02d-1.0-h0_0/info/repodata_record.json", pkgs, i);
	bool ok = tu_exists(p);
	free(p);
	return ok;
}

static void assert_nothing_for(const char *pkgs, int i)
{
	char *a = tu_path("%s/%s", pkgs, F.pkgs[i].fn);
	char *b = tu_path("%s/%s.partial", pkgs, F.pkgs[i].fn);
	char *c = tu_path("%s/pkg%02d-1.0-h0_0", pkgs, i);
	char *d = tu_path(".pkg%02d-1.0-h0_0.tmp", i);
	assert_false(tu_exists(a));
	assert_false(tu_exists(b));
	assert_false(tu_exists(c));
	assert_int_equal(tu_count_prefixed(pkgs, d), 0);
	free(a), free(b), free(c), free(d);
}

static void test_retry_500_then_200(void **state)
{
	char *pkgs = tu_path("%s/pkgs-500", F.tmp);
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_error err = {0};

	(void)state;
	assert_int_equal(fetch_one_from(pkgs, "flaky500", 0, &o, &err), 0);
	assert_true(extracted(pkgs, 0));
	assert_int_equal(fs_count(&F.fs, "/flaky500/"), 2);
	/* with no retries allowed: one line naming the URL and the status */
	o.max_retries = 0;
	assert_int_equal(fetch_one_from(pkgs, "flaky500", 1, &o, &err), MENV_ENET);
	assert_non_null(strstr(err.msg, "/flaky500/pkgs/pkg01-1.0-h0_0.conda"));
	assert_non_null(strstr(err.msg, "HTTP 500"));
	assert_null(strchr(err.msg, '\n'));
	assert_nothing_for(pkgs, 1);
	free(pkgs);
}

static void test_cut_then_range_resume(void **state)
{
	char *pkgs = tu_path("%s/pkgs-cut", F.tmp);
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_error err = {0};
	char half[32];

	(void)state;
	assert_int_equal(fetch_one_from(pkgs, "cut", 2, &o, &err), 0);
	assert_true(extracted(pkgs, 2));
	assert_int_equal(fs_count(&F.fs, "/cut/"), 2);
	/* the second request continued after the bytes received */
	snprintf(half, sizeof(half), "%lld-", (long long)(F.pkgs[2].h.size / 2));
	pthread_mutex_lock(&F.fs.lock);
	bool ranged = false;
	for (int i = 0; i < F.fs.nreq; i++)
		if (strstr(F.fs.paths[i], "/cut/") && !strcmp(F.fs.ranges[i], half))
			ranged = true;
	pthread_mutex_unlock(&F.fs.lock);
	assert_true(ranged);
	free(pkgs);
}

static void test_stall_times_out_then_retries(void **state)
{
	char *pkgs = tu_path("%s/pkgs-stall", F.tmp);
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_error err = {0};
	time_t t0 = time(NULL);

	(void)state;
	o.read_timeout = 1;
	assert_int_equal(fetch_one_from(pkgs, "stall", 3, &o, &err), 0);
	assert_true(extracted(pkgs, 3));
	assert_int_equal(fs_count(&F.fs, "/stall/"), 2);
	assert_true(time(NULL) - t0 < 3 + 2); /* did not wait for the stall to end */
	free(pkgs);
}

static void test_liar_and_wrong_bytes(void **state)
{
	char *pkgs = tu_path("%s/pkgs-liar", F.tmp);
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_error err = {0};

	(void)state;
	o.max_retries = 1;
	assert_int_equal(fetch_one_from(pkgs, "liar", 4, &o, &err), MENV_ENET);
	assert_non_null(strstr(err.msg, "/liar/pkgs/pkg04-1.0-h0_0.conda"));
	assert_nothing_for(pkgs, 4);
	assert_int_equal(fetch_one_from(pkgs, "wrong", 5, &o, &err), MENV_ECHECKSUM);
	assert_non_null(strstr(err.msg, "sha256 mismatch for 'pkg05-1.0-h0_0.conda' from '"));
	assert_non_null(strstr(err.msg, "/wrong/pkgs/pkg05-1.0-h0_0.conda"));
	assert_nothing_for(pkgs, 5);
	free(pkgs);
}

struct canceller {
	volatile int *flag;
	int after_ms;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;
	struct timespec ts = {c->after_ms / 1000, (long)(c->after_ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	*c->flag = 1;
	return NULL;
}

static void test_ctrl_c_then_resume(void **state)
{
	char *pkgs = tu_path("%s/pkgs-intr", F.tmp);
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_error err = {0};
	volatile int flag = 0;
	struct canceller cc = {&flag, 400};
	pthread_t t;
	struct stat st;
	time_t t0 = time(NULL);

	(void)state;
	o.cancel = &flag;
	pthread_create(&t, NULL, cancel_later, &cc);
	/* 256 KiB at 20 KiB/s: interrupted after 0.4 s */
	assert_int_equal(fetch_one_from(pkgs, "slow", 6, &o, &err), MENV_EINTR);
	pthread_join(t, NULL);
	assert_true(time(NULL) - t0 < 4);
	assert_non_null(strstr(err.msg, "interrupted"));
	assert_non_null(strstr(err.msg, "/slow/pkgs/pkg06-1.0-h0_0.conda"));
	assert_false(extracted(pkgs, 6));
	char *file = tu_path("%s/%s", pkgs, F.pkgs[6].fn);
	char *partial = tu_path("%s.partial", file);
	assert_false(tu_exists(file));
	/* the bytes so far are kept for the next run, which continues with Range */
	assert_int_equal(stat(partial, &st), 0);
	assert_true(st.st_size > 0 && st.st_size < F.pkgs[6].h.size);
	o.cancel = NULL;
	assert_int_equal(fetch_one_from(pkgs, "ok", 6, &o, &err), 0);
	assert_true(extracted(pkgs, 6));
	assert_false(tu_exists(partial));
	char want[32];
	snprintf(want, sizeof(want), "%lld-", (long long)st.st_size);
	pthread_mutex_lock(&F.fs.lock);
	assert_string_equal(F.fs.ranges[F.fs.nreq - 1], want);
	pthread_mutex_unlock(&F.fs.lock);

	/* a stale .partial that is not the start of the file: fetched whole again */
	char *p7 = tu_path("%s/%s.partial", pkgs, F.pkgs[7].fn);
	tu_write(p7, "garbage!", 8);
	assert_int_equal(fetch_one_from(pkgs, "ok", 7, &o, &err), 0);
	assert_true(extracted(pkgs, 7));
	assert_false(tu_exists(p7));
	free(p7);
	free(file), free(partial), free(pkgs);
}

static void test_disk_full(void **state)
{
	char *mnt = tu_path("%s/small", F.tmp);
	struct menv_fetch_opts o = fast_opts(NULL);
	struct menv_error err = {0};

	(void)state;
	tu_mkdirs(mnt);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0) {
		free(mnt);
		menv_skip(); /* not allowed here */
	}
	char *pkgs = tu_path("%s/pkgs", mnt);
	int rc = fetch_one_from(pkgs, "ok", 8, &o, &err);
	assert_int_equal(rc, MENV_EIO);
	assert_non_null(strstr(err.msg, "No space left on device"));
	assert_non_null(strstr(err.msg, "pkg08-1.0-h0_0.conda"));
	assert_nothing_for(pkgs, 8);
	free(pkgs);
	umount(mnt);
	free(mnt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_repodata_zst_etag_304),
	        cmocka_unit_test(test_repodata_max_age_ttl),
	        cmocka_unit_test(test_repodata_json_fallback),
	        cmocka_unit_test(test_repodata_zst_403_falls_back),
	        cmocka_unit_test(test_repodata_bz2_and_file_zst_only),
	        cmocka_unit_test(test_repodata_missing_channel_or_subdir),
	        cmocka_unit_test(test_repodata_bad_input_keeps_cache),
	        cmocka_unit_test(test_repodata_zst_bomb_capped),
	        cmocka_unit_test(test_repodata_in_place_http),
	        cmocka_unit_test(test_token_and_basic_auth),
	        cmocka_unit_test(test_sharded_equals_full),
	        cmocka_unit_test(test_parallel_downloads_and_reuse),
	        cmocka_unit_test(test_tls),
	        cmocka_unit_test(test_retry_500_then_200),
	        cmocka_unit_test(test_cut_then_range_resume),
	        cmocka_unit_test(test_stall_times_out_then_retries),
	        cmocka_unit_test(test_liar_and_wrong_bytes),
	        cmocka_unit_test(test_ctrl_c_then_resume),
	        cmocka_unit_test(test_disk_full),
	};
	/* loopback servers must not be reached through a proxy from the environment */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	unsetenv("NETRC");
	return menv_test_exit(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
