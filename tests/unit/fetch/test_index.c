/*
 * test_index.c - menv_index_channel on temporary channels: records from info/index.json plus
 * the file's md5/sha256/size, .tar.bz2 under "packages" and .conda under "packages.conda",
 * noarch always written, subdir filled from the folder, invalid packages named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static int setup(void **state)
{
	*state = tu_mkdtemp();
	return 0;
}

static int teardown(void **state)
{
	tu_rmtree(*state);
	free(*state);
	return 0;
}

static json_t *load_repodata(const char *chan, const char *subdir)
{
	char *p = tu_path("%s/%s/repodata.json", chan, subdir);
	json_t *j = json_load_file(p, 0, NULL);

	assert_non_null(j);
	free(p);
	return j;
}

static void test_index_channel(void **state)
{
	const char *chan = *state;
	char *l64 = tu_path("%s/linux-64", chan), *noarch = tu_path("%s/noarch", chan);
	char *osx = tu_path("%s/osx-64", chan), *other = tu_path("%s/not-a-subdir", chan);
	char *p;
	struct menv_index_stats st = {99, 99};
	struct menv_error err = {0};
	json_t *j, *rec, *pk, *pc;
	static const struct tu_entry info[] = {{"info/index.json", TU_FILE,
	                                        "{\"name\": \"nosub\", \"version\": \"1.0\", "
	                                        "\"build\": \"0\", \"build_number\": 0, "
	                                        "\"depends\": []}"}};
	static const struct tu_entry pkg[] = {{"share/nosub.txt", TU_FILE, "x"}};

	tu_mkdirs(l64);
	tu_mkdirs(noarch);
	tu_mkdirs(osx);   /* a known subdir without packages: indexed, empty */
	tu_mkdirs(other); /* unknown and empty: ignored */
	p = tu_path("%s/zlib-1.2.11-h7b6447c_3.conda", l64);
	tu_copy(ZLIB_CONDA, p);
	free(p);
	p = tu_path("%s/zlib-1.2.11-h7b6447c_3.tar.bz2", l64);
	tu_copy(ZLIB_TARBZ2, p);
	free(p);
	p = tu_path("%s/flask-0.11.1-py_0.tar.bz2", noarch);
	tu_copy(FLASK_TARBZ2, p);
	free(p);
	p = tu_path("%s/nosub-1.0-0.conda", noarch);
	tu_write_conda(p, "nosub-1.0-0", info, 1, pkg, 1);
	free(p);
	p = tu_path("%s/README.txt", l64); /* not a package name: ignored */
	tu_write(p, "hi", 2);
	free(p);

	assert_int_equal(menv_index_channel(chan, &st, &err), 0);
	assert_int_equal(st.packages, 4);
	assert_int_equal(st.subdirs, 3);

	j = load_repodata(chan, "linux-64");
	assert_string_equal(
	        json_string_value(json_object_get(json_object_get(j, "info"), "subdir")),
	        "linux-64");
	assert_int_equal(json_integer_value(json_object_get(j, "repodata_version")), 1);
	assert_true(json_is_array(json_object_get(j, "removed")));
	assert_int_equal(json_array_size(json_object_get(j, "removed")), 0);
	pk = json_object_get(j, "packages");
	pc = json_object_get(j, "packages.conda");
	assert_int_equal(json_object_size(pk), 1);
	assert_int_equal(json_object_size(pc), 1);
	rec = json_object_get(pk, "zlib-1.2.11-h7b6447c_3.tar.bz2");
	assert_non_null(rec);
	assert_string_equal(json_string_value(json_object_get(rec, "name")), "zlib");
	assert_string_equal(json_string_value(json_object_get(rec, "version")), "1.2.11");
	assert_string_equal(json_string_value(json_object_get(rec, "build")), "h7b6447c_3");
	assert_int_equal(json_integer_value(json_object_get(rec, "build_number")), 3);
	assert_int_equal(json_integer_value(json_object_get(rec, "timestamp")), 1542814864621);
	assert_string_equal(json_string_value(json_object_get(rec, "sha256")), ZLIB_TARBZ2_SHA256);
	assert_string_equal(json_string_value(json_object_get(rec, "md5")), ZLIB_TARBZ2_MD5);
	assert_int_equal(json_integer_value(json_object_get(rec, "size")), ZLIB_TARBZ2_SIZE);
	assert_string_equal(json_string_value(json_object_get(rec, "subdir")), "linux-64");
	assert_string_equal(json_string_value(json_array_get(json_object_get(rec, "depends"), 0)),
	                    "libgcc-ng >=7.3.0");
	rec = json_object_get(pc, "zlib-1.2.11-h7b6447c_3.conda");
	assert_non_null(rec);
	assert_string_equal(json_string_value(json_object_get(rec, "sha256")), ZLIB_CONDA_SHA256);
	assert_string_equal(json_string_value(json_object_get(rec, "md5")), ZLIB_CONDA_MD5);
	assert_int_equal(json_integer_value(json_object_get(rec, "size")), ZLIB_CONDA_SIZE);
	json_decref(j);

	j = load_repodata(chan, "noarch");
	rec = json_object_get(json_object_get(j, "packages"), "flask-0.11.1-py_0.tar.bz2");
	assert_string_equal(json_string_value(json_object_get(rec, "name")), "flask");
	assert_string_equal(json_string_value(json_object_get(rec, "noarch")), "python");
	assert_string_equal(json_string_value(json_object_get(rec, "sha256")), FLASK_SHA256);
	assert_string_equal(json_string_value(json_object_get(rec, "subdir")), "noarch");
	rec = json_object_get(json_object_get(j, "packages.conda"), "nosub-1.0-0.conda");
	assert_string_equal(json_string_value(json_object_get(rec, "name")), "nosub");
	/* index.json without subdir: the folder's name */
	assert_string_equal(json_string_value(json_object_get(rec, "subdir")), "noarch");
	json_decref(j);

	j = load_repodata(chan, "osx-64");
	assert_int_equal(json_object_size(json_object_get(j, "packages")), 0);
	assert_int_equal(json_object_size(json_object_get(j, "packages.conda")), 0);
	json_decref(j);
	p = tu_path("%s/repodata.json", other);
	assert_false(tu_exists(p));
	free(p);

	free(other);
	free(osx);
	free(noarch);
	free(l64);
}

static void test_index_creates_noarch(void **state)
{
	const char *chan = *state;
	char *sub = tu_path("%s/linux-aarch64", chan);
	char *p = tu_path("%s/noarch/repodata.json", chan);
	struct menv_index_stats st;
	struct menv_error err = {0};
	json_t *j;

	tu_mkdirs(sub);
	assert_int_equal(menv_index_channel(chan, &st, &err), 0);
	assert_int_equal(st.subdirs, 2);
	assert_int_equal(st.packages, 0);
	assert_true(tu_exists(p));
	j = load_repodata(chan, "noarch");
	assert_string_equal(
	        json_string_value(json_object_get(json_object_get(j, "info"), "subdir")), "noarch");
	assert_int_equal(json_object_size(json_object_get(j, "packages")), 0);
	json_decref(j);
	free(p);
	free(sub);
}

static void test_index_invalid_package(void **state)
{
	const char *chan = *state;
	char *sub = tu_path("%s/linux-64", chan);
	char *junk = tu_path("%s/junk-1.0-0.tar.bz2", sub);
	char *noinfo = tu_path("%s/noinfo-1.0-0.tar.bz2", sub);
	struct menv_index_stats st;
	struct menv_error err = {0};
	static const struct tu_entry e[] = {{"lib/x", TU_FILE, "x"}};

	tu_mkdirs(sub);
	tu_write(junk, "not an archive", 14);
	assert_int_equal(menv_index_channel(chan, &st, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, junk));
	unlink(junk);

	tu_write_tar(noinfo, "bzip2", e, 1);
	assert_int_equal(menv_index_channel(chan, &st, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, noinfo));
	assert_non_null(strstr(err.msg, "info/index.json"));

	assert_int_equal(menv_index_channel("/nonexistent/channel", &st, &err), MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'/nonexistent/channel'"));
	free(noinfo);
	free(junk);
	free(sub);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	        T(test_index_channel),
	        T(test_index_creates_noarch),
	        T(test_index_invalid_package),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
