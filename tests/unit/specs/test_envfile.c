/* environment.yml reading (CEP-24) and the real-world cases BR-001..BR-004 of
 * shared/cases/realworld.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "specs.h"

static struct menv_envfile *parse_ok(const char *yaml)
{
	struct menv_envfile *ef = NULL;
	struct menv_error err = {0};
	int rc = menv_envfile_parse(yaml, strlen(yaml), "environment.yml", &ef, &err);
	if (rc)
		fail_msg("unexpected error: %s", err.msg);
	return ef;
}

static void test_full(void **state)
{
	(void)state;
	struct menv_envfile *ef = parse_ok("name: ops\n"
	                                   "channels:\n  - ./channel\n  - nodefaults\n"
	                                   "dependencies:\n  - python=3.9\n  - cudatoolkit 11.8.*\n"
	                                   "variables:\n  DATA_ROOT: /srv/data dir/cache\n"
	                                   "  EMPTY_ONE: \"\"\n  NUM: 3\n"
	                                   "unknown_key: [1, 2]\n");
	assert_string_equal(ef->name, "ops");
	assert_int_equal(ef->channels.n, 2);
	assert_string_equal(ef->channels.v[0], "./channel");
	assert_string_equal(ef->channels.v[1], "nodefaults");
	assert_int_equal(ef->deps.n, 2);
	assert_string_equal(ef->deps.v[1], "cudatoolkit 11.8.*");
	assert_int_equal(ef->var_names.n, 3);
	assert_string_equal(ef->var_values.v[0], "/srv/data dir/cache");
	assert_string_equal(ef->var_values.v[1], "");
	assert_string_equal(ef->var_values.v[2], "3");
	assert_false(ef->has_pip_section);
	menv_envfile_free(ef);
}

/* BR-001: spaced specs keep their constraint when parsed */
static void test_br001_spaced(void **state)
{
	(void)state;
	struct menv_envfile *ef = parse_ok("name: spaced\nchannels: [conda-forge]\n"
	                                   "dependencies:\n  - python > 3.10\n  - numpy < 2.0\n"
	                                   "  - polars >= 1.0.0\n  - scipy >=1.10, <1.14\n"
	                                   "  - zlib 1.3.*\n");
	const char *want[] = {"python>3.10", "numpy<2.0", "polars>=1.0.0", "scipy>=1.10,<1.14",
	                      "zlib 1.3.*"};
	assert_int_equal(ef->deps.n, 5);
	for (size_t i = 0; i < 5; i++) {
		struct menv_matchspec *ms = NULL;
		struct menv_error err = {0};
		assert_int_equal(menv_matchspec_parse(ef->deps.v[i], &ms, &err), 0);
		char *s = menv_matchspec_str(ms);
		assert_string_equal(s, want[i]);
		free(s);
		menv_matchspec_free(ms);
	}
	menv_envfile_free(ef);
}

/* BR-002: dependencies missing, null or [] all mean "no items" */
static void test_br002_empty(void **state)
{
	(void)state;
	const char *files[] = {
	        "name: blank\nchannels: [c1]\ndependencies:\n",
	        "name: blank\nchannels: [c1]\ndependencies: []\n",
	        "name: blank\nchannels: [c1]\n",
	        "name: blank\nchannels: [c1]\ndependencies: ~\n",
	};
	for (size_t i = 0; i < 4; i++) {
		struct menv_envfile *ef = parse_ok(files[i]);
		assert_string_equal(ef->name, "blank");
		assert_int_equal(ef->deps.n, 0);
		assert_int_equal(ef->channels.n, 1);
		menv_envfile_free(ef);
	}
}

/* BR-003: only a pip: mapping; BR-004: plain pip next to pip:, and an empty pip: */
static void test_br003_br004_pip(void **state)
{
	(void)state;
	struct menv_envfile *ef = parse_ok("name: pip-only\nchannels: [conda-forge]\n"
	                                   "dependencies:\n  - pip:\n      - requests==2.31.0\n");
	assert_int_equal(ef->deps.n, 0);
	assert_true(ef->has_pip_section);
	assert_int_equal(ef->pip.n, 1);
	assert_string_equal(ef->pip.v[0], "requests==2.31.0");
	menv_envfile_free(ef);

	ef = parse_ok("name: both-pip\nchannels: [conda-forge]\ndependencies:\n"
	              "  - python=3.11\n  # the conda-side pip\n  - pip\n  - pip:\n      - tqdm\n");
	assert_int_equal(ef->deps.n, 2);
	assert_string_equal(ef->deps.v[0], "python=3.11");
	assert_string_equal(ef->deps.v[1], "pip");
	assert_int_equal(ef->pip.n, 1);
	assert_string_equal(ef->pip.v[0], "tqdm");
	menv_envfile_free(ef);

	ef = parse_ok("name: both-pip\nchannels: [conda-forge]\ndependencies:\n"
	              "  - python=3.11\n  - pip\n  - pip:\n");
	assert_int_equal(ef->deps.n, 2);
	assert_true(ef->has_pip_section);
	assert_int_equal(ef->pip.n, 0);
	menv_envfile_free(ef);
}

static void expect_error(const char *yaml, const char *where)
{
	struct menv_envfile *ef = NULL;
	struct menv_error err = {0};
	int rc = menv_envfile_parse(yaml, strlen(yaml), "env.yml", &ef, &err);
	assert_int_equal(rc, MENV_EPARSE);
	assert_null(ef);
	if (!strstr(err.msg, where))
		fail_msg("message '%s' does not name '%s'", err.msg, where);
	assert_null(strchr(err.msg, '\n'));
}

static void test_errors_have_line_and_column(void **state)
{
	(void)state;
	/* a tab indent is invalid YAML: the scanner stops on line 3 */
	expect_error("name: x\ndependencies:\n\t- zlib\n", "env.yml:3:");
	/* unclosed flow sequence */
	expect_error("name: x\nchannels: [a, b\ndependencies: []\n", "env.yml:");
	/* wrong types name the node's position */
	expect_error("name: x\ndependencies: zlib: 1\n", "env.yml:2:");
	expect_error("name: x\ndependencies:\n  - [a, b]\n", "env.yml:3:5");
	expect_error("name: x\ndependencies:\n  - conda:\n      - a\n", "env.yml:3:");
	expect_error("- a\n- b\n", "env.yml:1:1");
	expect_error("", "env.yml");
	/* a key twice, and a second document: both would silently drop what the user wrote */
	expect_error("name: a\nchannels: [c]\nname: b\n", "env.yml:3:1: 'name' is given twice");
	expect_error("name: a\n---\nname: b\n",
	             "env.yml:2:1: a second YAML document (---) in one environment file");
	/* a second document that is garbage, after `---` or an end marker, is not ignored */
	expect_error("name: a\n---\n: [x\n", "env.yml:2:1: a second YAML document (---)");
	expect_error("name: a\n...\n]\n", "env.yml:3:1: did not find expected <document start>");
}

/* menv's virtual-packages: list (the syntax of menv lock --virtual-package) */
/* Issue 22: what conda 26.7 does with a section that is null. `dependencies: ~` (or no value):
 * no dependencies, with conda's FutureWarning ("Invalid type for 'dependencies', expected a
 * list"), which menv gives as a note naming FILE:LINE:COL; `pip: ~` is a pip section without
 * requirements, as `pip: []` (conda drops it and adds `pip` to the conda side, saying
 * nothing more) */
static void test_null_sections(void **state)
{
	(void)state;
	struct menv_envfile *ef = parse_ok("name: x\ndependencies: ~\n");
	assert_int_equal(ef->deps.n, 0);
	assert_int_equal(ef->notes.n, 1);
	assert_string_equal(ef->notes.v[0],
	                    "environment.yml:2:15: 'dependencies' has no value: read as no "
	                    "dependencies (conda warns that it will refuse this; give a list, [] "
	                    "for none)");
	menv_envfile_free(ef);
	ef = parse_ok("name: x\ndependencies: []\n");
	assert_int_equal(ef->notes.n, 0);
	menv_envfile_free(ef);
	const char *pip[] = {"name: x\ndependencies:\n  - python\n  - pip: ~\n",
	                     "name: x\ndependencies:\n  - python\n  - pip: []\n"};
	for (size_t i = 0; i < 2; i++) {
		ef = parse_ok(pip[i]);
		assert_true(ef->has_pip_section);
		assert_int_equal(ef->pip.n, 0);
		assert_int_equal(ef->deps.n, 1);
		assert_int_equal(ef->notes.n, 0);
		menv_envfile_free(ef);
	}
}

/* YAML merge keys, as conda's reader (ruamel.yaml) reads them: inside a mapping the merged
 * keys are the mapping's, after its own (conda 26.7 stores variables C, A, B), its own and
 * an earlier source's winning; at the top level conda drops them (an environment without the
 * merged dependencies), so menv refuses them there with FILE:LINE:COL; a merge of a scalar
 * is refused (ruamel: "expected a mapping or list of mappings for merging") */
static void test_merge_keys(void **state)
{
	(void)state;
	struct menv_envfile *ef = parse_ok("common: &c {A: '1', C: '9'}\nname: own\n"
	                                   "variables:\n  <<: [*c, {A: '7', B: '2'}]\n"
	                                   "  C: '3'\n"
	                                   "dependencies:\n  - python\n");
	assert_int_equal(ef->var_names.n, 3);
	const char *names[] = {"C", "A", "B"}, *values[] = {"3", "1", "2"};
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(ef->var_names.v[i], names[i]);
		assert_string_equal(ef->var_values.v[i], values[i]);
	}
	/* `common` is a key conda does not know: listed, as conda warns about it */
	assert_int_equal(ef->unknown.n, 1);
	assert_string_equal(ef->unknown.v[0], "1:common");
	menv_envfile_free(ef);
	expect_error("common: &c\n  dependencies: [python]\nname: x\n<<: *c\n",
	             "env.yml:4:1: a merge key ('<<'): conda's environment file reader drops what "
	             "is merged at its top level; write the keys out");
	expect_error("name: x\nvariables:\n  <<: 3\n",
	             "env.yml:3:7: a merge key ('<<') takes a mapping or a list of mappings");
	expect_error("name: x\nvariables:\n  <<: [{A: '1'}, [B]]\n",
	             "env.yml:3:18: a merge key ('<<') takes a mapping or a list of mappings");
}

static void test_virtual_packages(void **state)
{
	(void)state;
	struct menv_envfile *ef = parse_ok("name: g\ndependencies: [gpu]\nvirtual-packages:\n"
	                                   "  - __cuda=11.8\n  - osx-64:__osx=11.0=0\n");
	assert_int_equal(ef->virtual_packages.n, 2);
	assert_string_equal(ef->virtual_packages.v[0], "__cuda=11.8");
	assert_string_equal(ef->virtual_packages.v[1], "osx-64:__osx=11.0=0");
	menv_envfile_free(ef);
	expect_error("dependencies: []\nvirtual-packages:\n  - cuda=11.8\n", "env.yml:3:5");
	expect_error("dependencies: []\nvirtual-packages:\n  - __cuda\n", "env.yml:3:5");
	expect_error("dependencies: []\nvirtual-packages:\n  - __cuda=\n", "env.yml:3:5");
	expect_error("dependencies: []\nvirtual-packages: __cuda=11.8\n", "env.yml:2:");
	assert_true(menv_virtual_decl_ok("linux-64:__glibc=2.17"));
	assert_false(menv_virtual_decl_ok("__=1"));
	assert_false(menv_virtual_decl_ok("__cuda==11.8"));
}

static void test_missing_file(void **state)
{
	(void)state;
	struct menv_envfile *ef = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_envfile_load("/nonexistent/environment.yml", &ef, &err),
	                 MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent/environment.yml"));
}

/* the corpus's real environment files all parse */
static void test_corpus_envfiles(void **state)
{
	(void)state;
	const char *files[] = {
	        "envfiles/conda-lock/test-env-nodefaults/environment.yml",
	        "envfiles/conda-lock/test-pip-full-url/environment.yml",
	        "envfiles/conda-lock/test-channel-inversion/environment.yaml",
	        "envfiles/conda/add-pip.yml",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char *p = menv_xasprintf("%s/corpus/%s", MENV_SHARED, files[i]);
		struct menv_envfile *ef = NULL;
		struct menv_error err = {0};
		if (menv_envfile_load(p, &ef, &err))
			fail_msg("%s", err.msg);
		assert_true(ef->deps.n + ef->pip.n > 0);
		menv_envfile_free(ef);
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_full),
	        cmocka_unit_test(test_br001_spaced),
	        cmocka_unit_test(test_br002_empty),
	        cmocka_unit_test(test_br003_br004_pip),
	        cmocka_unit_test(test_errors_have_line_and_column),
	        cmocka_unit_test(test_virtual_packages),
	        cmocka_unit_test(test_missing_file),
	        cmocka_unit_test(test_corpus_envfiles),
	        cmocka_unit_test(test_null_sections),
	        cmocka_unit_test(test_merge_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
