/*
 * test_pkgcache.c - menv_pkgcache_fetch against file:// URLs: download + extract +
 * repodata_record.json + urls.txt, cache hits, checksum failures that leave nothing behind,
 * repair of a corrupt extracted directory, reuse of a verified `<fn>`, several threads,
 * entries left by conda or micromamba (md5-only ones included), cancellation and waiting for a
 * held lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

struct events {
	int n;
	enum menv_fetch_event ev[32];
	const char *fn[32];
};

static void on_event(void *ud, enum menv_fetch_event ev, const struct menv_record *r)
{
	struct events *e = ud;

	if (e->n < 32) {
		e->ev[e->n] = ev;
		e->fn[e->n] = r->fn;
	}
	e->n++;
}

static int count(const struct events *e, enum menv_fetch_event ev)
{
	int n = 0;
	for (int i = 0; i < e->n && i < 32; i++)
		n += e->ev[i] == ev;
	return n;
}

/* A record as the specs module would build it from repodata (by hand here). */
static void make_record(struct menv_record *r, const char *name, const char *version,
                        const char *build, const char *fn, const char *url, const char *sha256,
                        const char *md5, int64_t size)
{
	memset(r, 0, sizeof(*r));
	r->json = json_pack("{s:s, s:s, s:s, s:i, s:[s], s:s}", "name", name, "version", version,
	                    "build", build, "build_number", 3, "depends", "libgcc-ng >=7.3.0",
	                    "license", "zlib");
	r->name = name;
	r->version = version;
	r->build = build;
	r->build_number = 3;
	r->fn = fn;
	r->subdir = "linux-64";
	r->sha256 = sha256;
	r->md5 = md5;
	r->size = size;
	r->url = strdup(url);
	r->channel_url = strdup("file:///corpus/conda_format_repo/linux-64");
}

static void free_record(struct menv_record *r)
{
	json_decref(r->json);
	free(r->url);
	free(r->channel_url);
}

struct fx {
	char *tmp, *pkgs;
	struct menv_record zlib;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->tmp = tu_mkdtemp();
	f->pkgs = tu_path("%s/root/pkgs", f->tmp); /* parents do not exist yet */
	make_record(&f->zlib, "zlib", "1.2.11", "h7b6447c_3", "zlib-1.2.11-h7b6447c_3.conda",
	            "file://" ZLIB_CONDA, ZLIB_CONDA_SHA256, NULL, ZLIB_CONDA_SIZE);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	free_record(&f->zlib);
	tu_rmtree(f->tmp);
	free(f->pkgs);
	free(f->tmp);
	free(f);
	return 0;
}

static int fetch1(struct fx *f, struct menv_record *r, struct events *ev, struct menv_error *err)
{
	struct menv_record *recs[] = {r};

	memset(ev, 0, sizeof(*ev));
	memset(err, 0, sizeof(*err));
	return menv_pkgcache_fetch(f->pkgs, recs, 1, 1, on_event, ev, NULL, err);
}

/* No `.partial` file and no `.<dist>.tmp-*` directory left in the cache. */
static void assert_no_leftovers(const char *pkgs, const char *fn, const char *dist)
{
	char *partial = tu_path("%s/%s.partial", pkgs, fn);
	char *tmpprefix = tu_path(".%s.tmp-", dist);

	assert_false(tu_exists(partial));
	assert_int_equal(tu_count_prefixed(pkgs, tmpprefix), 0);
	free(tmpprefix);
	free(partial);
}

static void test_download_then_hit(void **state)
{
	struct fx *f = *state;
	struct events ev;
	struct menv_error err;
	char *dir = menv_pkgcache_dir(f->pkgs, &f->zlib);
	char *want_dir = tu_path("%s/zlib-1.2.11-h7b6447c_3", f->pkgs);
	char *rr = tu_path("%s/info/repodata_record.json", dir);
	char *file = tu_path("%s/zlib-1.2.11-h7b6447c_3.conda", f->pkgs);
	char *lib = tu_path("%s/lib/libz.so.1.2.11", dir);
	char *urls = tu_path("%s/urls.txt", f->pkgs);
	char *lock = tu_path("%s/.menv.lock", f->pkgs);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_hashes h;
	json_t *j;

	assert_string_equal(dir, want_dir);
	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	assert_int_equal(ev.n, 2);
	assert_int_equal(ev.ev[0], MENV_FETCH_DOWNLOADED);
	assert_int_equal(ev.ev[1], MENV_FETCH_EXTRACTED);
	assert_string_equal(ev.fn[0], "zlib-1.2.11-h7b6447c_3.conda");

	assert_int_equal(menv_hash_file(file, &h, NULL), 0);
	assert_string_equal(h.sha256, ZLIB_CONDA_SHA256);
	assert_int_equal(menv_hash_file(lib, &h, NULL), 0);
	assert_string_equal(h.sha256,
	                    "79aa69435cd17d98c25fbe1ac03aa6681b6edee04a5fb04c141ab1effcaa3c3f");
	assert_true(tu_exists(lock));
	assert_no_leftovers(f->pkgs, f->zlib.fn, "zlib-1.2.11-h7b6447c_3");

	j = json_load_file(rr, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "zlib");
	assert_string_equal(json_string_value(json_object_get(j, "version")), "1.2.11");
	assert_string_equal(json_string_value(json_object_get(j, "build")), "h7b6447c_3");
	assert_string_equal(json_string_value(json_object_get(j, "fn")),
	                    "zlib-1.2.11-h7b6447c_3.conda");
	assert_string_equal(json_string_value(json_object_get(j, "url")), "file://" ZLIB_CONDA);
	assert_string_equal(json_string_value(json_object_get(j, "channel")),
	                    "file:///corpus/conda_format_repo/linux-64");
	assert_string_equal(json_string_value(json_object_get(j, "subdir")), "linux-64");
	assert_string_equal(json_string_value(json_object_get(j, "sha256")), ZLIB_CONDA_SHA256);
	/* md5 was not in the record: computed from the file */
	assert_string_equal(json_string_value(json_object_get(j, "md5")), ZLIB_CONDA_MD5);
	assert_int_equal(json_integer_value(json_object_get(j, "size")), ZLIB_CONDA_SIZE);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "depends"), 0)),
	                    "libgcc-ng >=7.3.0");
	assert_string_equal(json_string_value(json_object_get(j, "license")), "zlib");
	json_decref(j);

	menv_buf_init(&b);
	assert_int_equal(menv_buf_read_file(&b, urls, NULL), 0);
	assert_string_equal(b.buf, "file://" ZLIB_CONDA "\n");

	/* second run: a cache hit, nothing downloaded, urls.txt unchanged */
	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	assert_int_equal(ev.n, 1);
	assert_int_equal(ev.ev[0], MENV_FETCH_CACHED);
	menv_buf_reset(&b);
	assert_int_equal(menv_buf_read_file(&b, urls, NULL), 0);
	assert_string_equal(b.buf, "file://" ZLIB_CONDA "\n");

	menv_buf_release(&b);
	free(lock);
	free(urls);
	free(lib);
	free(file);
	free(rr);
	free(want_dir);
	free(dir);
}

static void test_checksum_mismatch_leaves_nothing(void **state)
{
	struct fx *f = *state;
	struct menv_record r;
	struct events ev;
	struct menv_error err;
#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"
	static const char bad[] = ZEROS;
	char *file = tu_path("%s/symlink-test-1.0.0-0.conda", f->pkgs);
	char *dir = tu_path("%s/symlink-test-1.0.0-0", f->pkgs);

	make_record(&r, "symlink-test", "1.0.0", "0", "symlink-test-1.0.0-0.conda",
	            "file://" SYMLINK_CONDA, bad, NULL, -1);
	assert_int_equal(fetch1(f, &r, &ev, &err), MENV_ECHECKSUM);
	assert_int_equal(err.code, MENV_ECHECKSUM);
	assert_string_equal(err.msg,
	                    "sha256 mismatch for 'symlink-test-1.0.0-0.conda' from "
	                    "'file://" SYMLINK_CONDA "': expected " ZEROS ", got " SYMLINK_SHA256);
	assert_int_equal(ev.n, 0);
	assert_false(tu_exists(file));
	assert_false(tu_exists(dir));
	assert_no_leftovers(f->pkgs, r.fn, "symlink-test-1.0.0-0");
	free_record(&r);

	/* md5 only, wrong */
	make_record(&r, "symlink-test", "1.0.0", "0", "symlink-test-1.0.0-0.conda",
	            "file://" SYMLINK_CONDA, NULL, "0123456789abcdef0123456789abcdef", -1);
	assert_int_equal(fetch1(f, &r, &ev, &err), MENV_ECHECKSUM);
	assert_non_null(strstr(
	        err.msg,
	        "md5 mismatch for 'symlink-test-1.0.0-0.conda' from 'file://" SYMLINK_CONDA "': "
	        "expected 0123456789abcdef0123456789abcdef, got "));
	assert_false(tu_exists(file));
	assert_no_leftovers(f->pkgs, r.fn, "symlink-test-1.0.0-0");
	free_record(&r);

	/* right sha256, wrong size */
	make_record(&r, "symlink-test", "1.0.0", "0", "symlink-test-1.0.0-0.conda",
	            "file://" SYMLINK_CONDA, SYMLINK_SHA256, NULL, 601);
	assert_int_equal(fetch1(f, &r, &ev, &err), MENV_ECHECKSUM);
	assert_non_null(strstr(err.msg, "size mismatch for 'symlink-test-1.0.0-0.conda'"));
	assert_false(tu_exists(file));
	assert_false(tu_exists(dir));
	free_record(&r);

	free(dir);
	free(file);
}

static void test_corrupt_extracted_dir_is_redone(void **state)
{
	struct fx *f = *state;
	struct events ev;
	struct menv_error err;
	char *dir = menv_pkgcache_dir(f->pkgs, &f->zlib);
	char *rr = tu_path("%s/info/repodata_record.json", dir);
	char *lib = tu_path("%s/lib/libz.so.1.2.11", dir);
	char *junk = tu_path("%s/junk-from-before", dir);
	static const char stale[] = "{\"name\": \"zlib\", \"sha256\": \"deadbeef\"}";
	json_t *j;

	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	tu_write(rr, stale, strlen(stale));
	assert_int_equal(unlink(lib), 0);
	tu_write(junk, "x", 1);

	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	/* the verified <fn> is reused: extracted again, not downloaded */
	assert_int_equal(ev.n, 1);
	assert_int_equal(ev.ev[0], MENV_FETCH_EXTRACTED);
	assert_true(tu_exists(lib));
	assert_false(tu_exists(junk)); /* the stale directory was replaced, not merged */
	j = json_load_file(rr, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "sha256")), ZLIB_CONDA_SHA256);
	json_decref(j);
	assert_no_leftovers(f->pkgs, f->zlib.fn, "zlib-1.2.11-h7b6447c_3");

	free(junk);
	free(lib);
	free(rr);
	free(dir);
}

static void test_existing_file_reused_or_replaced(void **state)
{
	struct fx *f = *state;
	struct events ev;
	struct menv_error err;
	struct menv_record r;
	char *dir = menv_pkgcache_dir(f->pkgs, &f->zlib);
	char *file = tu_path("%s/%s", f->pkgs, f->zlib.fn);
	struct menv_hashes h;

	/* a verified <fn> with no extracted dir: extracted without touching the URL */
	tu_mkdirs(f->pkgs);
	tu_copy(ZLIB_CONDA, file);
	make_record(&r, "zlib", "1.2.11", "h7b6447c_3", "zlib-1.2.11-h7b6447c_3.conda",
	            "file:///nonexistent/zlib-1.2.11-h7b6447c_3.conda", ZLIB_CONDA_SHA256, NULL,
	            ZLIB_CONDA_SIZE);
	assert_int_equal(fetch1(f, &r, &ev, &err), 0);
	assert_int_equal(ev.n, 1);
	assert_int_equal(ev.ev[0], MENV_FETCH_EXTRACTED);
	char *rr = tu_path("%s/info/repodata_record.json", dir);
	assert_true(tu_exists(rr));
	free(rr);
	free_record(&r);

	/* a corrupt <fn> (cut short) is downloaded again */
	tu_rmtree(dir);
	assert_int_equal(truncate(file, 1000), 0);
	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	assert_int_equal(ev.n, 2);
	assert_int_equal(ev.ev[0], MENV_FETCH_DOWNLOADED);
	assert_int_equal(ev.ev[1], MENV_FETCH_EXTRACTED);
	assert_int_equal(menv_hash_file(file, &h, NULL), 0);
	assert_string_equal(h.sha256, ZLIB_CONDA_SHA256);

	/* a missing URL is MENV_ENOTFOUND naming it */
	make_record(&r, "gone", "1.0", "0", "gone-1.0-0.conda",
	            "file:///nonexistent/gone-1.0-0.conda", NULL, NULL, -1);
	assert_int_equal(fetch1(f, &r, &ev, &err), MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "file:///nonexistent/gone-1.0-0.conda"));
	assert_no_leftovers(f->pkgs, r.fn, "gone-1.0-0");
	free_record(&r);
	free(file);
	free(dir);
}

/* An extracted `<dist>` whose repodata_record.json is `json` (a directory left by conda). */
static void write_entry(const char *pkgs, const char *dist, const char *json)
{
	char *info = tu_path("%s/%s/info", pkgs, dist);
	char *rr = tu_path("%s/repodata_record.json", info);

	tu_mkdirs(info);
	tu_write(rr, json, strlen(json));
	free(rr);
	free(info);
}

static void test_conda_entries(void **state)
{
	struct fx *f = *state;
	struct events ev;
	struct menv_error err;
	struct menv_record r;
	const char *dist = "zlib-1.2.11-h7b6447c_3";
	char *rr = tu_path("%s/%s/info/repodata_record.json", f->pkgs, dist);
	json_t *j;
	/* entry -> hit? for a record with sha256, md5 and size */
	static const struct {
		const char *json;
		bool hit;
	} cases[] = {
	        {"{\"sha256\": \"" ZLIB_CONDA_SHA256 "\"}", true},             /* modern conda */
	        {"{\"md5\": \"" ZLIB_CONDA_MD5 "\", \"size\": 105917}", true}, /* older conda */
	        {"{\"md5\": \"" ZLIB_CONDA_MD5 "\"}", true},                   /* conda 4.4 */
	        {"{\"sha256\": \"\", \"md5\": \"" ZLIB_CONDA_MD5 "\"}", true}, /* "" unknown */
	        {"{\"sha256\": "
	         "\"F33AFFF2144E1D6C4CF2E3E184937DB8BF825B4537DF74662AEA5EE207B6A31B\"}",
	         true},
	        {"{\"sha256\": \"" ZLIB_CONDA_SHA256 "\", \"md5\": \"" ZLIB_TARBZ2_MD5 "\"}",
	         false},
	        {"{\"sha256\": \"" ZLIB_TARBZ2_SHA256 "\", \"md5\": \"" ZLIB_CONDA_MD5 "\"}",
	         false},
	        {"{\"md5\": \"" ZLIB_CONDA_MD5 "\", \"size\": 105918}", false},
	        {"{\"sha256\": \"" ZLIB_CONDA_SHA256 "\", \"size\": 1}", false},
	        {"{\"url\": \"file://" ZLIB_CONDA "\", \"size\": 105917}", false}, /* no hash */
	        {"{\"md5\": 7}", false},
	        {"[]", false},
	        {"{\"sha256\": ", false},
	};

	make_record(&r, "zlib", "1.2.11", "h7b6447c_3", "zlib-1.2.11-h7b6447c_3.conda",
	            "file:///nonexistent/zlib-1.2.11-h7b6447c_3.conda", ZLIB_CONDA_SHA256,
	            ZLIB_CONDA_MD5, ZLIB_CONDA_SIZE);
	assert_false(menv_pkgcache_has(f->pkgs, &r)); /* no entry */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_entry(f->pkgs, dist, cases[i].json);
		if (menv_pkgcache_has(f->pkgs, &r) != cases[i].hit)
			fail_msg("entry %s: expected %s", cases[i].json,
			         cases[i].hit ? "hit" : "miss");
	}

	/* an older conda's entry is used as it is (the URL does not exist) and gains the sha256
	 * it lacked, every other key kept */
	write_entry(f->pkgs, dist,
	            "{\"md5\": \"" ZLIB_CONDA_MD5 "\", \"channel\": \"https://repo.anaconda.com/"
	            "pkgs/main/linux-64\", \"name\": \"zlib\", \"depends\": [\"libgcc-ng\"]}");
	assert_int_equal(fetch1(f, &r, &ev, &err), 0);
	assert_int_equal(ev.n, 1);
	assert_int_equal(ev.ev[0], MENV_FETCH_CACHED);
	j = json_load_file(rr, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "sha256")), ZLIB_CONDA_SHA256);
	assert_string_equal(json_string_value(json_object_get(j, "md5")), ZLIB_CONDA_MD5);
	assert_int_equal(json_integer_value(json_object_get(j, "size")), ZLIB_CONDA_SIZE);
	assert_string_equal(json_string_value(json_object_get(j, "channel")),
	                    "https://repo.anaconda.com/pkgs/main/linux-64");
	assert_int_equal(json_array_size(json_object_get(j, "depends")), 1);
	json_decref(j);
	assert_true(menv_pkgcache_has(f->pkgs, &r));

	/* a disagreeing entry is not used: fetched again (here: the URL is missing) */
	write_entry(f->pkgs, dist, "{\"md5\": \"" ZLIB_TARBZ2_MD5 "\"}");
	assert_int_equal(fetch1(f, &r, &ev, &err), MENV_ENOTFOUND);
	assert_int_equal(count(&ev, MENV_FETCH_CACHED), 0);
	free_record(&r);

	/* a record without hashes: an entry made from the same URL */
	make_record(&r, "zlib", "1.2.11", "h7b6447c_3", "zlib-1.2.11-h7b6447c_3.conda",
	            "file://" ZLIB_CONDA, NULL, NULL, -1);
	write_entry(f->pkgs, dist, "{\"url\": \"file://" ZLIB_CONDA "\"}");
	assert_true(menv_pkgcache_has(f->pkgs, &r));
	write_entry(f->pkgs, dist, "{\"url\": \"file:///elsewhere/zlib-1.2.11-h7b6447c_3.conda\"}");
	assert_false(menv_pkgcache_has(f->pkgs, &r));
	free_record(&r);
	free(rr);
}

static void test_threads(void **state)
{
	struct fx *f = *state;
	struct menv_record r[4];
	struct menv_record *recs[6];
	struct events ev = {0};
	struct menv_error err = {0};
	const char *dists[] = {"nano-2.4.1-0", "symlink-test-1.0.0-0", "zip64-test-1.0.0-0",
	                       "flask-0.11.1-py_0", "zlib-1.2.11-h7b6447c_3"};

	make_record(&r[0], "nano", "2.4.1", "0", "nano-2.4.1-0.tar.bz2", "file://" NANO_TARBZ2,
	            NANO_SHA256, NULL, -1);
	make_record(&r[1], "symlink-test", "1.0.0", "0", "symlink-test-1.0.0-0.conda",
	            "file://" SYMLINK_CONDA, SYMLINK_SHA256, NULL, 600);
	make_record(&r[2], "zip64-test", "1.0.0", "0", "zip64-test-1.0.0-0.conda",
	            "file://" ZIP64_CONDA, NULL, NULL, 576); /* no hash: size only */
	make_record(&r[3], "flask", "0.11.1", "py_0", "flask-0.11.1-py_0.tar.bz2",
	            "file://" FLASK_TARBZ2, NULL, FLASK_MD5, -1);
	for (int i = 0; i < 4; i++)
		recs[i] = &r[i];
	recs[4] = &f->zlib;
	recs[5] = &f->zlib; /* listed twice: fetched once, the second reported as cached */
	assert_int_equal(menv_pkgcache_fetch(f->pkgs, recs, 6, 3, on_event, &ev, NULL, &err), 0);
	assert_int_equal(count(&ev, MENV_FETCH_DOWNLOADED), 5);
	assert_int_equal(count(&ev, MENV_FETCH_EXTRACTED), 5);
	assert_int_equal(count(&ev, MENV_FETCH_CACHED), 1);
	assert_int_equal(ev.n, 11);
	for (int i = 0; i < 5; i++) {
		char *p = tu_path("%s/%s/info/repodata_record.json", f->pkgs, dists[i]);
		assert_true(tu_exists(p));
		free(p);
	}
	/* all hits now, with 8 threads for 5 records */
	memset(&ev, 0, sizeof(ev));
	assert_int_equal(menv_pkgcache_fetch(f->pkgs, recs, 5, 8, on_event, &ev, NULL, &err), 0);
	assert_int_equal(count(&ev, MENV_FETCH_CACHED), 5);
	assert_int_equal(ev.n, 5);
	for (int i = 0; i < 4; i++)
		free_record(&r[i]);
}

static void test_cancel(void **state)
{
	struct fx *f = *state;
	struct menv_record *recs[] = {&f->zlib};
	struct events ev = {0};
	struct menv_error err = {0};
	volatile int cancel = 1;
	char *dir = menv_pkgcache_dir(f->pkgs, &f->zlib);

	assert_int_equal(menv_pkgcache_fetch(f->pkgs, recs, 1, 2, on_event, &ev, &cancel, &err),
	                 MENV_EINTR);
	assert_int_equal(err.code, MENV_EINTR);
	assert_int_equal(ev.n, 0);
	assert_false(tu_exists(dir));
	free(dir);
}

struct holder {
	const char *lock;
	int ready;
	pthread_mutex_t m;
	pthread_cond_t c;
};

static void *hold_lock(void *arg)
{
	struct holder *h = arg;
	int fd = open(h->lock, O_RDWR | O_CREAT, 0644);
	struct timespec ts = {0, 300 * 1000 * 1000};

	flock(fd, LOCK_EX);
	pthread_mutex_lock(&h->m);
	h->ready = 1;
	pthread_cond_signal(&h->c);
	pthread_mutex_unlock(&h->m);
	nanosleep(&ts, NULL);
	flock(fd, LOCK_UN);
	close(fd);
	return NULL;
}

static void test_waits_for_lock(void **state)
{
	struct fx *f = *state;
	struct holder h = {NULL, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
	char *lock = tu_path("%s/.menv.lock", f->pkgs);
	struct events ev;
	struct menv_error err;
	struct timespec t0, t1;
	pthread_t tid;
	double waited;

	tu_mkdirs(f->pkgs);
	h.lock = lock;
	assert_int_equal(pthread_create(&tid, NULL, hold_lock, &h), 0);
	pthread_mutex_lock(&h.m);
	while (!h.ready)
		pthread_cond_wait(&h.c, &h.m);
	pthread_mutex_unlock(&h.m);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(tid, NULL);
	waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(waited >= 0.2);
	assert_int_equal(ev.n, 2);
	free(lock);
}

/* An extracted package's metadata is parsed once per process (menv_pkgmeta_load: the cache's
 * check and the link share paths.json) and again once the file changes: a damaged
 * repodata_record.json or a deleted file is still found after a check that passed. */
static void test_metadata_parsed_once(void **state)
{
	struct fx *f = *state;
	struct events ev;
	struct menv_error err;
	char *dir = menv_pkgcache_dir(f->pkgs, &f->zlib);
	char *rr = tu_path("%s/info/repodata_record.json", dir);
	char *pj = tu_path("%s/info/paths.json", dir);
	char *lib = tu_path("%s/lib/libz.so.1.2.11", dir);
	static const char stale[] = "{\"name\": \"zlib\", \"sha256\": \"deadbeef\"}";

	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	json_t *a = menv_pkgmeta_load(pj, NULL), *b = menv_pkgmeta_load(pj, NULL);
	assert_non_null(a);
	assert_ptr_equal(a, b); /* one parse */
	json_decref(b);
	assert_true(menv_pkgcache_has(f->pkgs, &f->zlib));
	/* a record changed after the check that passed: seen */
	json_t *good = json_load_file(rr, 0, NULL);
	tu_write(rr, stale, strlen(stale));
	assert_false(menv_pkgcache_has(f->pkgs, &f->zlib));
	assert_int_equal(json_dump_file(good, rr, JSON_INDENT(2) | JSON_SORT_KEYS), 0);
	json_decref(good);
	assert_true(menv_pkgcache_has(f->pkgs, &f->zlib));
	/* a listed file deleted: seen with paths.json's parse shared */
	assert_int_equal(unlink(lib), 0);
	assert_false(menv_pkgcache_has(f->pkgs, &f->zlib));
	/* extracted again: a new folder, a new parse */
	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	assert_int_equal(ev.ev[0], MENV_FETCH_EXTRACTED);
	b = menv_pkgmeta_load(pj, NULL);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_true(json_equal(a, b));
	assert_true(menv_pkgcache_has(f->pkgs, &f->zlib));
	json_decref(a);
	json_decref(b);
	free(lib);
	free(pj);
	free(rr);
	free(dir);
}

/* The compact entries `pe` are paths.json's ("paths" of `j`), key for key. */
static void assert_entries_equal(const struct menv_paths_entries *pe, json_t *j)
{
	json_t *paths = json_object_get(j, "paths"), *e;
	size_t i;
	assert_int_equal(pe->n, json_array_size(paths));
	json_array_foreach(paths, i, e)
	{
		const struct menv_pathent *c = &pe->e[i];
		const char *s[][2] = {{"_path", c->path},
		                      {"path_type", c->path_type},
		                      {"sha256", c->sha256},
		                      {"prefix_placeholder", c->placeholder},
		                      {"file_mode", c->file_mode}};
		for (size_t k = 0; k < 5; k++) {
			const char *want = json_string_value(json_object_get(e, s[k][0]));
			if (!want)
				assert_null(s[k][1]);
			else
				assert_string_equal(s[k][1], want);
		}
		json_t *sz = json_object_get(e, "size_in_bytes"),
		       *nl = json_object_get(e, "no_link");
		assert_int_equal(c->size, sz ? json_integer_value(sz) : -1);
		assert_int_equal(c->no_link, nl ? json_is_true(nl) : -1);
	}
}

/* The cache's check keeps each hardlink file's lstat beside the paths.json parse it read, for
 * the link (one stat a file): the values are the file's, a softlink entry has none, another
 * parse or a forgotten file gets none. */
static void test_check_keeps_stats(void **state)
{
	struct fx *f = *state;
	struct events ev;
	struct menv_error err;
	char *dir = menv_pkgcache_dir(f->pkgs, &f->zlib);
	char *pj = tu_path("%s/info/paths.json", dir);
	size_t n = 0, i, hard = 0, soft = 0;
	json_t *e;

	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	menv_pkgmeta_forget(pj);
	setenv("MENV_TEST_NO_PATHS_CACHE", "1", 1); /* the JSON's way: no compact form */
	assert_true(menv_pkgcache_has(f->pkgs, &f->zlib));
	unsetenv("MENV_TEST_NO_PATHS_CACHE");
	json_t *j = menv_pkgmeta_load(pj, NULL);
	assert_non_null(j);
	struct menv_pkgfile_st *v = menv_pkgmeta_stats(pj, j, &n);
	assert_non_null(v);
	assert_int_equal(n, json_array_size(json_object_get(j, "paths")));
	json_array_foreach(json_object_get(j, "paths"), i, e)
	{
		const char *rel = json_string_value(json_object_get(e, "_path"));
		const char *type = json_string_value(json_object_get(e, "path_type"));
		char *p = tu_path("%s/%s", dir, rel);
		struct stat sb;
		assert_int_equal(lstat(p, &sb), 0);
		if (!strcmp(type, "hardlink")) {
			assert_true(v[i].have);
			assert_int_equal(v[i].mode, sb.st_mode);
			assert_int_equal(v[i].mtim.tv_sec, sb.st_mtim.tv_sec);
			assert_int_equal(v[i].mtim.tv_nsec, sb.st_mtim.tv_nsec);
			hard++;
		} else {
			assert_false(v[i].have);
			soft++;
		}
		free(p);
	}
	assert_true(hard > 0 && soft > 0); /* zlib ships libz.so.1.2.11 and links to it */
	free(v);
	/* another parse of the same file: not this one's stats */
	json_t *other = json_deep_copy(j);
	assert_null(menv_pkgmeta_stats(pj, other, &n));
	assert_int_equal(n, 0);
	json_decref(other);
	/* forgotten (menv rewrote the file): none */
	menv_pkgmeta_forget(pj);
	assert_null(menv_pkgmeta_stats(pj, j, &n));
	/* the compact form: the same entries, the check's stats kept beside it */
	menv_paths_clear();
	assert_true(menv_pkgcache_has(f->pkgs, &f->zlib));
	struct menv_paths_entries pe;
	struct menv_paths *p = menv_paths_load(dir, &pe);
	assert_non_null(p);
	assert_entries_equal(&pe, j);
	struct menv_pkgfile_st *w = menv_paths_stats(p);
	assert_non_null(w);
	for (i = 0; i < pe.n; i++)
		assert_int_equal(w[i].have, !strcmp(pe.e[i].path_type, "hardlink"));
	free(w);
	menv_paths_unref(p);
	json_decref(j);
	free(pj);
	free(dir);
}

/* The compact form of paths.json (fetch/pathscache.c, `<pkgdir>/.menv-paths`): written once,
 * read back with the same entries as paths.json's; a corrupt, truncated, emptied or stale
 * file (paths.json rewritten since) is found, ignored and written again, with the same
 * entries; a paths.json with a key the layout does not hold gets none (read as JSON). */
static void test_paths_compact(void **state)
{
	struct fx *f = *state;
	struct events ev;
	struct menv_error err;
	char *dir = menv_pkgcache_dir(f->pkgs, &f->zlib);
	char *pj = tu_path("%s/info/paths.json", dir);
	char *cf = tu_path("%s/.menv-paths", dir);
	struct menv_paths_entries pe;
	struct menv_buf good = MENV_BUF_INIT, now = MENV_BUF_INIT;

	assert_int_equal(fetch1(f, &f->zlib, &ev, &err), 0);
	menv_paths_clear();
	json_t *j = json_load_file(pj, 0, NULL);
	assert_non_null(j);
	struct menv_paths *p = menv_paths_load(dir, &pe);
	assert_non_null(p);
	assert_entries_equal(&pe, j);
	menv_paths_unref(p);
	assert_int_equal(menv_buf_read_file(&good, cf, NULL), 0);
	assert_memory_equal(good.buf, "MENVPATHS2\n", 11);
	/* read from the file (no parse kept): the same entries */
	menv_paths_clear();
	menv_pkgmeta_clear();
	p = menv_paths_load(dir, &pe);
	assert_non_null(p);
	assert_entries_equal(&pe, j);
	menv_paths_unref(p);
	/* damaged: a byte of the body flipped, cut short, cut to its header, empty, garbage */
	for (int k = 0; k < 5; k++) {
		struct menv_buf bad = MENV_BUF_INIT;
		menv_buf_add(&bad, good.buf, good.len);
		if (k == 0)
			bad.buf[bad.len - 3] ^= 0x20;
		else if (k == 1)
			bad.len -= 7;
		else if (k == 2)
			bad.len = 11 + 80;
		else if (k == 3)
			bad.len = 0;
		else
			memset(bad.buf + 11, 'x', bad.len - 11);
		tu_write(cf, bad.buf ? bad.buf : "", bad.len);
		menv_buf_release(&bad);
		menv_paths_clear();
		p = menv_paths_load(dir, &pe);
		assert_non_null(p);
		assert_entries_equal(&pe, j);
		menv_paths_unref(p);
		menv_buf_release(&now);
		assert_int_equal(menv_buf_read_file(&now, cf, NULL), 0);
		assert_int_equal(now.len, good.len); /* written again */
		assert_memory_equal(now.buf, good.buf, good.len);
	}
	/* stale: paths.json rewritten (new inode, same bytes) since the file was made */
	char *text = json_dumps(j, 0);
	tu_write(pj, text, strlen(text));
	menv_paths_clear();
	p = menv_paths_load(dir, &pe);
	assert_non_null(p);
	assert_entries_equal(&pe, j);
	menv_paths_unref(p);
	menv_buf_release(&now);
	assert_int_equal(menv_buf_read_file(&now, cf, NULL), 0);
	assert_int_equal(now.len, good.len);
	assert_memory_not_equal(now.buf, good.buf, 11 + 8 * 7); /* paths.json's identity */
	assert_memory_equal(now.buf + 11 + 8 * 7, good.buf + 11 + 8 * 7, good.len - 11 - 8 * 7);
	/* a key the layout does not hold: no compact form, paths.json read as JSON */
	json_object_set_new(json_array_get(json_object_get(j, "paths"), 0), "inode_paths",
	                    json_array());
	free(text);
	text = json_dumps(j, 0);
	tu_write(pj, text, strlen(text));
	unlink(cf);
	menv_paths_clear();
	assert_null(menv_paths_load(dir, &pe));
	assert_int_equal(access(cf, F_OK), -1);
	assert_true(menv_pkgcache_has(f->pkgs, &f->zlib));
	free(text);
	menv_buf_release(&good);
	menv_buf_release(&now);
	json_decref(j);
	free(cf);
	free(pj);
	free(dir);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	        T(test_download_then_hit),
	        T(test_checksum_mismatch_leaves_nothing),
	        T(test_corrupt_extracted_dir_is_redone),
	        T(test_existing_file_reused_or_replaced),
	        T(test_conda_entries),
	        T(test_threads),
	        T(test_cancel),
	        T(test_waits_for_lock),
	        T(test_metadata_parsed_once),
	        T(test_check_keeps_stats),
	        T(test_paths_compact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
