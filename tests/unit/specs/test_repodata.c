/* repodata.json parsing (CEP-36, CEP-15 base_url) on synthetic rows and real snapshots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "specs.h"

static char chan_name[] = "test", chan_url[] = "file:///srv/test";
static struct menv_channel chan = {.name = chan_name, .base_url = chan_url, .priority = 1};

static const struct menv_record *find(const struct menv_repodata *rd, const char *fn)
{
	for (size_t i = 0; i < rd->n; i++)
		if (!strcmp(rd->recs[i].fn, fn))
			return &rd->recs[i];
	return NULL;
}

static void test_conda_preferred(void **state)
{
	(void)state;
	const char *j = "{\"info\":{\"subdir\":\"linux-64\"},"
	                "\"packages\":{\"a-1-0.tar.bz2\":{\"name\":\"a\",\"version\":\"1\","
	                "\"build\":\"0\",\"build_number\":0,\"depends\":null},"
	                "\"b-2-h1_3.tar.bz2\":{\"name\":\"b\",\"version\":\"2\",\"build\":\"h1_3\","
	                "\"build_number\":3,\"depends\":[\"a >=1\"],\"timestamp\":1600000000}},"
	                "\"packages.conda\":{\"a-1-0.conda\":{\"name\":\"a\",\"version\":\"1\","
	                "\"build\":\"0\",\"build_number\":0,\"depends\":[],\"sha256\":\"ab\","
	                "\"size\":12}}}";
	struct menv_repodata *rd = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_repodata_parse(j, strlen(j), "r.json", &chan, "linux-64", &rd, &err),
	                 0);
	assert_int_equal(rd->n, 2);
	assert_null(find(rd, "a-1-0.tar.bz2"));
	const struct menv_record *a = find(rd, "a-1-0.conda");
	assert_non_null(a);
	assert_string_equal(a->url, "file:///srv/test/linux-64/a-1-0.conda");
	assert_string_equal(a->channel_url, "file:///srv/test/linux-64");
	assert_int_equal(a->size, 12);
	assert_string_equal(a->subdir, "linux-64");
	const struct menv_record *b = find(rd, "b-2-h1_3.tar.bz2");
	assert_non_null(b);
	assert_int_equal(b->build_number, 3);
	assert_int_equal(b->timestamp, 1600000000000LL); /* seconds become milliseconds */
	assert_int_equal(json_array_size(menv_record_depends(b)), 1);
	char *dist = menv_record_dist(b);
	assert_string_equal(dist, "b-2-h1_3");
	free(dist);
	menv_repodata_free(rd);
}

static void test_base_url(void **state)
{
	(void)state;
	const char *j =
	        "{\"info\":{\"subdir\":\"noarch\",\"base_url\":\"https://cdn.example/pkgs/\"},"
	        "\"packages.conda\":{\"x-1-0.conda\":{\"name\":\"x\",\"version\":\"1\","
	        "\"build\":\"0\"}}}";
	struct menv_repodata *rd = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_repodata_parse(j, strlen(j), "r.json", &chan, "noarch", &rd, &err),
	                 0);
	assert_string_equal(rd->recs[0].url, "https://cdn.example/pkgs/x-1-0.conda");
	menv_repodata_free(rd);
}

static void test_errors(void **state)
{
	(void)state;
	struct menv_repodata *rd = NULL;
	struct menv_error err = {0};
	const char *bad = "{\n  \"packages\": {\n    \"a-1-0.tar.bz2\": {\"name\": \"a\",}\n}}";
	assert_int_equal(menv_repodata_parse(bad, strlen(bad), "chan/linux-64/repodata.json", &chan,
	                                     "linux-64", &rd, &err),
	                 MENV_EPARSE);
	assert_non_null(strstr(err.msg, "chan/linux-64/repodata.json:3:"));
	const char *noname =
	        "{\"packages\":{\"a-1-0.tar.bz2\":{\"version\":\"1\",\"build\":\"0\"}}}";
	assert_int_equal(
	        menv_repodata_parse(noname, strlen(noname), "r.json", &chan, "linux-64", &rd, &err),
	        MENV_EPARSE);
	assert_non_null(strstr(err.msg, "a-1-0.tar.bz2"));
}

/* a real conda-forge snapshot: every record parses, and the counts match the file */
static void test_real_snapshot(void **state)
{
	(void)state;
	char *p = menv_xasprintf(
	        "%s/corpus/repodata/rattler/channels/pytorch/linux-64/repodata.json", MENV_SHARED);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_repodata *rd = NULL;
	struct menv_error err = {0};
	json_error_t jerr;

	if (menv_buf_read_file(&b, p, &err))
		fail_msg("%s", err.msg);
	json_t *raw = json_loadb(b.buf, b.len, 0, &jerr);
	assert_non_null(raw);
	size_t nb = json_object_size(json_object_get(raw, "packages"));
	size_t nc = json_object_size(json_object_get(raw, "packages.conda"));
	size_t twins = 0;
	const char *fn;
	json_t *v;
	json_object_foreach(json_object_get(raw, "packages"), fn, v)
	{
		char *alt = menv_xasprintf("%.*s.conda", (int)(strlen(fn) - 8), fn);
		twins += json_object_get(json_object_get(raw, "packages.conda"), alt) != NULL;
		free(alt);
	}
	assert_int_equal(menv_repodata_parse(b.buf, b.len, p, &chan, "linux-64", &rd, &err), 0);
	assert_int_equal(rd->n, nb + nc - twins);
	assert_true(rd->n > 1000);
	for (size_t i = 0; i < rd->n; i++) {
		assert_non_null(rd->recs[i].name);
		assert_non_null(rd->recs[i].url);
	}
	json_decref(raw);
	menv_repodata_free(rd);
	menv_buf_release(&b);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_conda_preferred),
	        cmocka_unit_test(test_base_url),
	        cmocka_unit_test(test_errors),
	        cmocka_unit_test(test_real_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
