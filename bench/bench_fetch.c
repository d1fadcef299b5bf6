/*
 * bench_fetch.c - a benchmark of fetch/ against nginx on 127.0.0.1 (not a test):
 *   1. N package downloads with 1 connection vs `download_threads`, unthrottled and with
 *      nginx's limit_rate per connection (what a WAN link looks like): the transfers alone
 *      (the engine, into memory) and the whole package cache (download, verify, extract);
 *   2. repodata of a real 2.2 MB subdir (corpus conda-subchannel-demo linux-64): cold (.zst
 *      download, decompression, JSON check, cache write), warm (fresh cache, no request),
 *      revalidated (304);
 *   3. the corpus' sharded sample: sharded (index + shards of `zlib`) vs full repodata.
 * Usage: bench_fetch [N_PACKAGES [KIB_EACH [THREADS]]]  (defaults 24, 1024, 8). Prints a table.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "servers.h"
#include "testutil.h"

#define DEMO        MENV_SHARED "/corpus/repodata/conda-subchannel-demo/linux-64"
#define FORMAT_REPO MENV_SHARED "/corpus/repodata/conda/conda_format_repo/linux-64"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct pkg {
	char *fn;
	struct menv_hashes h;
};

static void row(const char *what, const char *detail, double secs, double mb)
{
	if (mb > 0)
		printf("| %-34s | %-30s | %8.3f s | %8.1f MB/s |\n", what, detail, secs, mb / secs);
	else
		printf("| %-34s | %-30s | %8.3f s | %13s |\n", what, detail, secs, "");
}

static int mem_sink(void *ud, const void *data, size_t len)
{
	(void)data;
	*(size_t *)ud += len;
	return 0;
}

/* The transfers alone: N URLs through the engine into counters. */
static double download_only(const char *base, struct pkg *p, int n, int threads, int *failed)
{
	struct menv_xfer *x = calloc((size_t)n, sizeof(*x));
	struct menv_xfer **xs = calloc((size_t)n, sizeof(*xs));
	size_t *got = calloc((size_t)n, sizeof(*got));
	struct menv_fetch_opts o;
	struct menv_error err = {0};
	double t0;

	menv_fetch_opts_init(&o);
	o.threads = threads;
	for (int i = 0; i < n; i++) {
		char *url = tu_path("%s/%s", base, p[i].fn);
		menv_xfer_init(&x[i], url);
		free(url);
		x[i].sink = mem_sink;
		x[i].ud = &got[i];
		xs[i] = &x[i];
	}
	t0 = now();
	*failed = menv_xfer_run(xs, (size_t)n, &o, NULL, true, &err);
	t0 = now() - t0;
	for (int i = 0; i < n; i++)
		menv_xfer_release(&x[i]);
	free(x);
	free(xs);
	free(got);
	return t0;
}

static double fetch_all(const char *pkgs, const char *base, struct pkg *p, int n, int threads,
                        int *failed)
{
	struct menv_record *recs = calloc((size_t)n, sizeof(*recs));
	struct menv_record **rp = calloc((size_t)n, sizeof(*rp));
	struct menv_fetch_opts o;
	struct menv_error err = {0};
	double t0;

	menv_fetch_opts_init(&o);
	o.threads = threads;
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "b%03d", i);
		recs[i].json = json_pack("{s:s, s:s, s:s, s:i}", "name", name, "version", "1.0",
		                         "build", "h0_0", "build_number", 0);
		recs[i].name = json_string_value(json_object_get(recs[i].json, "name"));
		recs[i].version = "1.0";
		recs[i].build = "h0_0";
		recs[i].fn = p[i].fn;
		recs[i].sha256 = p[i].h.sha256;
		recs[i].size = p[i].h.size;
		recs[i].url = tu_path("%s/%s", base, p[i].fn);
		rp[i] = &recs[i];
	}
	tu_rmtree(pkgs);
	t0 = now();
	*failed = menv_pkgcache_fetch_opts(pkgs, rp, (size_t)n, &o, NULL, NULL, &err);
	t0 = now() - t0;
	if (*failed)
		fprintf(stderr, "bench: %s\n", err.msg);
	for (int i = 0; i < n; i++) {
		json_decref(recs[i].json);
		free(recs[i].url);
	}
	free(recs);
	free(rp);
	return t0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 24;
	int kib = argc > 2 ? atoi(argv[2]) : 1024;
	int threads = argc > 3 ? atoi(argv[3]) : 8;
	char *tmp, *www, *pdir, *extra;
	struct nginx ngx;
	struct pkg *p;
	double mb = 0, t;
	int failed;
	char base[128];

	if (!ngx_binary()) {
		fprintf(stderr, "bench_fetch: nginx is not installed\n");
		return 77;
	}
	setenv("no_proxy", "127.0.0.1", 1);
	tmp = tu_mkdtemp();
	www = tu_path("%s/www", tmp);
	pdir = tu_path("%s/pkgs", www);
	tu_mkdirs(pdir);
	p = calloc((size_t)n, sizeof(*p));
	char *content = malloc((size_t)kib * 1024 + 1);
	for (int i = 0; i < n; i++) {
		uint64_t x = 0x9E3779B97F4A7C15ULL + (uint64_t)i;
		char dist[32], index[160];
		struct menv_error err;
		for (size_t k = 0; k < (size_t)kib * 1024; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			content[k] = (char)(33 + (x % 90));
		}
		content[(size_t)kib * 1024] = '\0';
		snprintf(dist, sizeof(dist), "b%03d-1.0-h0_0", i);
		snprintf(index, sizeof(index),
		         "{\"name\": \"b%03d\", \"version\": \"1.0\", "
		         "\"build\": \"h0_0\", \"build_number\": 0}",
		         i);
		struct tu_entry info[] = {{"info/index.json", TU_FILE, index}};
		struct tu_entry files[] = {{"share/blob.txt", TU_FILE, content}};
		p[i].fn = tu_path("%s.conda", dist);
		char *path = tu_path("%s/%s", pdir, p[i].fn);
		tu_write_conda(path, dist, info, 1, files, 1);
		menv_hash_file(path, &p[i].h, &err);
		mb += (double)p[i].h.size / 1e6;
		free(path);
	}
	free(content);
	/* repodata and the sharded sample */
	char *d = tu_path("%s/demo/linux-64", www);
	tu_mkdirs(d);
	char *f1 = tu_path("%s/repodata.json.zst", d);
	tu_copy(DEMO "/repodata.json.zst", f1);
	free(f1), free(d);
	d = tu_path("%s/sharded/linux-64", www);
	tu_mkdirs(d);
	static const char *const sh[] = {
	        "repodata.json",
	        "repodata_shards.msgpack.zst",
	        "2dcdacf7009b4f1c21f452c5079384340257e0e1cbecb8ec484984d1fa85b115.msgpack.zst",
	        "56a0c19b47ba1a2d0f1390eda489b1c49a00d35814571057e6d81e0c93dfd157.msgpack.zst",
	};
	for (size_t i = 0; i < 4; i++) {
		char *from = tu_path("%s/%s", FORMAT_REPO, sh[i]), *to = tu_path("%s/%s", d, sh[i]);
		tu_copy(from, to);
		free(from), free(to);
	}
	free(d);
	extra = tu_path("    location /slow/ { alias %s/; limit_rate 2m; }\n"
	                "    location /demo/ { add_header Cache-Control \"max-age=600\"; }\n",
	                www);
	char *ndir = tu_path("%s/nginx", tmp);
	if (ngx_start(&ngx, ndir, www, extra, NULL, NULL) != 0) {
		fprintf(stderr, "bench_fetch: nginx did not start\n");
		return 1;
	}
	char *pk = tu_path("%s/cache-pkgs", tmp);

	printf("\n| %-34s | %-30s | %10s | %13s |\n", "case", "detail", "time", "throughput");
	printf("|%s|%s|%s|%s|\n", "------------------------------------",
	       "--------------------------------", "------------", "---------------");
	char detail[64];
	for (int throttled = 0; throttled < 2; throttled++) {
		snprintf(base, sizeof(base), "http://127.0.0.1:%d/%s", ngx.port,
		         throttled ? "slow/pkgs" : "pkgs");
		int th[2] = {1, threads};
		for (int k = 0; k < 2; k++) {
			t = download_only(base, p, n, th[k], &failed);
			snprintf(detail, sizeof(detail), "%d x %.1f MB, %d conn%s", n, mb / n,
			         th[k], th[k] > 1 ? "s" : "");
			row(throttled ? "downloads, limit_rate 2 MB/s/conn" : "downloads, loopback",
			    detail, t, failed ? 0 : mb);
		}
		for (int k = 0; k < 2; k++) {
			t = fetch_all(pk, base, p, n, th[k], &failed);
			snprintf(detail, sizeof(detail), "%d x %.1f MB, %d conn%s", n, mb / n,
			         th[k], th[k] > 1 ? "s" : "");
			row(throttled ? "pkg cache, limit_rate 2 MB/s/conn"
			              : "pkg cache (+verify+extract)",
			    detail, t, failed ? 0 : mb);
		}
	}
	/* repodata: cold, warm, 304 */
	{
		char *cache = tu_path("%s/cache-rd", tmp);
		struct menv_channel ch = {0};
		struct menv_repodata_req r;
		struct menv_fetch_opts o;
		struct menv_error err;
		snprintf(base, sizeof(base), "http://127.0.0.1:%d/demo", ngx.port);
		ch.name = (char *)"demo";
		ch.base_url = base;
		menv_fetch_opts_init(&o);
		o.cache_dir = cache;
		const char *labels[3] = {"cold (.zst, decompress, check)",
		                         "warm (fresh, no request)", "revalidate (304)"};
		for (int k = 0; k < 3; k++) {
			memset(&r, 0, sizeof(r));
			r.channel = &ch;
			r.subdir = "linux-64";
			o.repodata_ttl = k == 2 ? 0 : 1;
			t = now();
			failed = menv_fetch_repodata_many(&r, 1, &o, &err);
			t = now() - t;
			snprintf(detail, sizeof(detail), "%.1f MB JSON", (double)r.json.len / 1e6);
			row(labels[k], detail, t, 0);
			menv_repodata_req_release(&r);
		}
		/* parse cost of the same JSON, for scale */
		struct menv_buf b = MENV_BUF_INIT;
		struct menv_repodata *rd = NULL;
		menv_buf_init(&b);
		menv_buf_read_file(&b, DEMO "/repodata.json", &err);
		t = now();
		menv_repodata_parse(b.buf, b.len, "demo", &ch, "linux-64", &rd, &err);
		t = now() - t;
		snprintf(detail, sizeof(detail), "%zu records", rd ? rd->n : 0);
		row("repodata parse (for scale)", detail, t, 0);
		menv_repodata_free(rd);
		menv_buf_release(&b);
		free(cache);
	}
	/* sharded vs full, corpus sample */
	{
		struct menv_channel ch = {0};
		struct menv_repodata_req r;
		struct menv_fetch_opts o;
		struct menv_error err;
		struct menv_strvec roots = MENV_STRVEC_INIT;
		char *cache = tu_path("%s/cache-sh", tmp);
		snprintf(base, sizeof(base), "http://127.0.0.1:%d/sharded", ngx.port);
		ch.name = (char *)"sharded";
		ch.base_url = base;
		menv_fetch_opts_init(&o);
		o.cache_dir = cache;
		menv_strvec_push(&roots, "zlib");
		for (int k = 0; k < 2; k++) {
			memset(&r, 0, sizeof(r));
			r.channel = &ch;
			r.subdir = "linux-64";
			t = now();
			failed = menv_fetch_repodata_sharded(&r, 1, &roots, &o, &err);
			t = now() - t;
			snprintf(detail, sizeof(detail), "zlib -> 2 names, %s",
			         k ? "shards cached" : "cold");
			row("sharded repodata (CEP-16)", detail, t, 0);
			menv_repodata_req_release(&r);
		}
		memset(&r, 0, sizeof(r));
		r.channel = &ch;
		r.subdir = "linux-64";
		o.cache_dir = NULL;
		t = now();
		failed = menv_fetch_repodata_many(&r, 1, &o, &err);
		t = now() - t;
		snprintf(detail, sizeof(detail), "%zu bytes", r.json.len);
		row("full repodata (same sample)", detail, t, 0);
		menv_repodata_req_release(&r);
		menv_strvec_clear(&roots);
		free(cache);
	}
	printf("\n");
	ngx_stop(&ngx);
	tu_rmtree(tmp);
	for (int i = 0; i < n; i++)
		free(p[i].fn);
	free(p);
	free(pk), free(ndir), free(extra), free(pdir), free(www), free(tmp);
	return 0;
}
