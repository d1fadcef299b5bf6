/*
 * test_repodata_local.c - repodata of file:// channels: the streaming JSON check that replaced
 * jansson's tree (each malformed document is refused at the byte where it goes wrong, each
 * well-formed one accepted byte for byte), the in-place mode (o->repodata_as_file: the file is
 * named, never read) and repodata_max_bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

static char *T; /* a directory per run */

static struct menv_channel *local_channel(const char *name)
{
	struct menv_config cfg;
	struct menv_channel *c = NULL;
	struct menv_error err = {0};
	char *url = tu_path("file://%s/%s", T, name);

	menv_config_defaults(&cfg);
	assert_int_equal(menv_channel_parse(url, &cfg, &c, &err), 0);
	menv_config_release(&cfg);
	free(url);
	return c;
}

/* Writes <T>/<name>/linux-64/repodata.json with `doc` and loads it (noarch absent). */
static int load(const char *name, const char *doc, size_t len, const struct menv_fetch_opts *o,
                struct menv_repodata_req r[2], struct menv_channel **c)
{
	char *dir = tu_path("%s/%s/linux-64", T, name), *p = tu_path("%s/repodata.json", dir);
	struct menv_error err = {0};

	tu_mkdirs(dir);
	tu_write(p, doc, len);
	free(dir);
	free(p);
	*c = local_channel(name);
	memset(r, 0, 2 * sizeof(*r));
	r[0].channel = r[1].channel = *c;
	r[0].subdir = "linux-64";
	r[1].subdir = "noarch";
	return menv_fetch_repodata_many(r, 2, o, &err);
}

static void release(struct menv_repodata_req r[2], struct menv_channel *c)
{
	menv_repodata_req_release(&r[0]);
	menv_repodata_req_release(&r[1]);
	menv_channel_free(c);
}

struct bad {
	const char *doc;
	const char *where; /* "at byte N (line L, column C): why" */
};

static void test_malformed_refused_where_it_breaks(void **state)
{
	static const struct bad cases[] = {
	        {"", "at byte 0 (line 1, column 1): empty document"},
	        {"[]", "at byte 0 (line 1, column 1): not a JSON object"},
	        {"  \"packages\"", "at byte 2 (line 1, column 3): not a JSON object"},
	        {"{\"info\": {}, \"packages\": {\"a\": }",
	         "at byte 31 (line 1, column 32): a value was expected"},
	        {"{\"packages\": {}}}",
	         "at byte 16 (line 1, column 17): data after the JSON object"},
	        {"{\"packages\": {}", "at byte 15 (line 1, column 16): the document ends early"},
	        {"{\n\"a\": 01}", "at byte 8 (line 2, column 7): ',' or '}' was expected"},
	        {"{\"a\": -}", "at byte 7 (line 1, column 8): invalid number"},
	        {"{\"a\": 1.}", "at byte 8 (line 1, column 9): invalid number"},
	        {"{\"a\": 1e}", "at byte 8 (line 1, column 9): invalid number"},
	        {"{\"a\": tru}", "at byte 9 (line 1, column 10): invalid literal"},
	        {"{\"a\": \"x\\q\"}", "at byte 9 (line 1, column 10): invalid escape in a string"},
	        {"{\"a\": \"\\u12g4\"}",
	         "at byte 11 (line 1, column 12): invalid \\u escape in a string"},
	        {"{\"a\": \"\t\"}", "at byte 7 (line 1, column 8): control character in a string"},
	        {"{\"a\": \"\xff\"}", "at byte 7 (line 1, column 8): invalid UTF-8 in a string"},
	        {"{\"a\": \"\xc3(\"}", "at byte 8 (line 1, column 9): invalid UTF-8 in a string"},
	        {"{\"a\" 1}", "at byte 5 (line 1, column 6): ':' was expected"},
	        {"{\"a\": [1 2]}", "at byte 9 (line 1, column 10): ',' or ']' was expected"},
	        {"{1: 2}", "at byte 1 (line 1, column 2): a key was expected"},
	        {"{\"a\": [1,]}", "at byte 9 (line 1, column 10): a value was expected"},
	};
	int failed = 0;
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct menv_fetch_opts o;
		struct menv_repodata_req r[2];
		struct menv_channel *c;
		char name[32];
		menv_fetch_opts_init(&o);
		snprintf(name, sizeof(name), "bad%zu", i);
		assert_int_equal(load(name, cases[i].doc, strlen(cases[i].doc), &o, r, &c),
		                 MENV_EPARSE);
		char *want = tu_path("malformed repodata from '%s/linux-64/repodata.json' %s",
		                     c->base_url, cases[i].where);
		if (strcmp(r[0].err.msg, want))
			print_error("case %zu: got \"%s\", want \"%s\"\n", i, r[0].err.msg, want),
			        failed++;
		free(want);
		release(r, c);
	}
	assert_int_equal(failed, 0);
}

static void test_wellformed_accepted_byte_for_byte(void **state)
{
	static const char *const docs[] = {
	        "{}",
	        " \r\n\t{ }\n",
	        "{\"info\":{\"subdir\":\"linux-64\"},\"packages\":{\"a-1-0.tar.bz2\":{\"name\":"
	        "\"a\","
	        "\"version\":\"1\",\"build\":\"0\",\"build_number\":0,\"depends\":[],"
	        "\"size\":-0.5e+3,\"x\":[true,false,null,{},[],0,1E9,12.25]}}}",
	        ("{\"s\":\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9\\uD83D\\uDE00\","
	         "\"utf8\":\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}"),
	};
	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(*docs); i++) {
		struct menv_fetch_opts o;
		struct menv_repodata_req r[2];
		struct menv_channel *c;
		char name[32];
		menv_fetch_opts_init(&o);
		snprintf(name, sizeof(name), "good%zu", i);
		assert_int_equal(load(name, docs[i], strlen(docs[i]), &o, r, &c), 0);
		assert_int_equal(r[0].json.len, strlen(docs[i]));
		assert_memory_equal(r[0].json.buf, docs[i], strlen(docs[i]));
		assert_null(r[0].path);
		/* the missing noarch of a channel with linux-64 is empty, as conda's */
		assert_string_equal(r[1].json.buf, "{}");
		release(r, c);
	}
}

/* A real conda-forge repodata (2.3 MB, which libcurl hands over in blocks of 16 KiB or so:
 * the check's state crosses their boundaries inside strings, escapes and numbers) is
 * accepted; cut short it is refused, naming the end. */
static void test_real_repodata_accepted(void **state)
{
	struct menv_fetch_opts o;
	struct menv_repodata_req r[2];
	struct menv_channel *c;
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err;
	const char *src =
	        MENV_SHARED "/corpus/repodata/conda-subchannel-demo/linux-64/repodata.json";

	(void)state;
	menv_buf_init(&b);
	assert_int_equal(menv_buf_read_file(&b, src, &err), 0);
	menv_fetch_opts_init(&o);
	assert_int_equal(load("real", b.buf, b.len, &o, r, &c), 0);
	assert_int_equal(r[0].json.len, 2281843);
	release(r, c);
	/* cut anywhere inside: refused, naming the end */
	assert_int_equal(load("realcut", b.buf, 1000000, &o, r, &c), MENV_EPARSE);
	assert_non_null(strstr(r[0].err.msg, "at byte 1000000 "));
	assert_non_null(strstr(r[0].err.msg, "the document ends early"));
	release(r, c);
	menv_buf_release(&b);
}

static void test_in_place_names_the_file(void **state)
{
	struct menv_fetch_opts o;
	struct menv_repodata_req r[2];
	struct menv_channel *c;
	/* not even JSON: in place, the file is not read (the solver's reader checks it) */
	const char *doc = "not json at all";

	(void)state;
	menv_fetch_opts_init(&o);
	o.repodata_as_file = true;
	assert_int_equal(load("inplace", doc, strlen(doc), &o, r, &c), 0);
	char *want = tu_path("%s/inplace/linux-64/repodata.json", T);
	assert_non_null(r[0].path);
	assert_string_equal(r[0].path, want);
	assert_int_equal(r[0].json.len, 0);
	assert_false(r[0].missing);
	/* the missing noarch: no file, the empty repodata conda gives */
	assert_true(r[1].missing);
	assert_null(r[1].path);
	assert_string_equal(r[1].json.buf, "{}");
	free(want);
	release(r, c);

	/* both subdirs missing: the channel is not there, named */
	char *url = tu_path("file://%s/nowhere", T);
	struct menv_config cfg;
	struct menv_error err = {0};
	menv_config_defaults(&cfg);
	assert_int_equal(menv_channel_parse(url, &cfg, &c, &err), 0);
	memset(r, 0, 2 * sizeof(*r));
	r[0].channel = r[1].channel = c;
	r[0].subdir = "linux-64";
	r[1].subdir = "noarch";
	assert_int_equal(menv_fetch_repodata_many(r, 2, &o, &err), MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "not found"));
	release(r, c);
	menv_config_release(&cfg);
	free(url);
}

static void test_max_bytes(void **state)
{
	struct menv_fetch_opts o;
	struct menv_repodata_req r[2];
	struct menv_channel *c;
	const char *doc = "{\"info\": {\"subdir\": \"linux-64\"}, \"packages\": {}}"; /* 48 bytes */

	(void)state;
	menv_fetch_opts_init(&o);
	assert_true(o.repodata_max_bytes == ((int64_t)2 << 30));
	o.repodata_max_bytes = 47;
	assert_int_equal(load("cap", doc, strlen(doc), &o, r, &c), MENV_EUNSUPPORTED);
	assert_non_null(strstr(r[0].err.msg, "repodata_max_bytes"));
	assert_non_null(strstr(r[0].err.msg, "/cap/linux-64/repodata.json"));
	assert_null(strchr(r[0].err.msg, '\n'));
	release(r, c);
	o.repodata_as_file = true; /* in place: refused from its size alone */
	assert_int_equal(load("cap", doc, strlen(doc), &o, r, &c), MENV_EUNSUPPORTED);
	assert_non_null(strstr(r[0].err.msg, "is 48 bytes, more than repodata_max_bytes (47)"));
	release(r, c);
	o.repodata_max_bytes = 48;
	assert_int_equal(load("cap", doc, strlen(doc), &o, r, &c), 0);
	release(r, c);
	o.repodata_as_file = false;
	assert_int_equal(load("cap", doc, strlen(doc), &o, r, &c), 0);
	assert_int_equal(r[0].json.len, 48);
	release(r, c);

	/* the setting: repodata_max_bytes in an rc file, MENV_REPODATA_MAX_BYTES */
	struct menv_config cfg;
	struct menv_error err = {0};
	char *rc = tu_path("%s/condarc", T);
	tu_write(rc, "repodata_max_bytes: 1234\n", 25);
	menv_config_defaults(&cfg);
	assert_true(cfg.repodata_max_bytes == ((int64_t)2 << 30));
	assert_int_equal(menv_config_apply_file(&cfg, rc, &err), 0);
	assert_true(cfg.repodata_max_bytes == 1234);
	menv_fetch_opts_from_config(&o, &cfg);
	assert_true(o.repodata_max_bytes == 1234);
	tu_write(rc, "repodata_max_bytes: lots\n", 25);
	assert_int_equal(menv_config_apply_file(&cfg, rc, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, "repodata_max_bytes must be a positive number of bytes"));
	menv_config_release(&cfg);
	free(rc);
}

static int setup(void **state)
{
	(void)state;
	T = tu_mkdtemp();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmtree(T);
	free(T);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_malformed_refused_where_it_breaks),
	        cmocka_unit_test(test_wellformed_accepted_byte_for_byte),
	        cmocka_unit_test(test_real_repodata_accepted),
	        cmocka_unit_test(test_in_place_names_the_file),
	        cmocka_unit_test(test_max_bytes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
