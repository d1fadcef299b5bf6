/* MatchSpec parsing (CEP-29) and channel resolution (CEP-26): conda's answers as rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "specs.h"

struct row {
	const char *in;
	const char *channel, *name, *version, *build; /* NULL = unset */
	const char *str;                              /* menv_matchspec_str */
};

/* Expected values are conda's MatchSpec fields (shared/conformance/match_spec.tsv semantics:
 * `numpy=1.7` -> version 1.7.*, `numpy 1.7` -> exact 1.7, `numpy=1.7=py27_0` -> 1.7). */
static const struct row rows[] = {
        {"numpy", NULL, "numpy", NULL, NULL, "numpy"},
        {"numpy=1.7", NULL, "numpy", "1.7*", NULL, "numpy 1.7*"},
        {"numpy 1.7", NULL, "numpy", "1.7", NULL, "numpy 1.7"},
        {"numpy==1.7", NULL, "numpy", "1.7", NULL, "numpy 1.7"},
        {"numpy=1.7=py27_0", NULL, "numpy", "1.7", "py27_0", "numpy 1.7 py27_0"},
        {"numpy 1.7 py27_0", NULL, "numpy", "1.7", "py27_0", "numpy 1.7 py27_0"},
        {"numpy>=1.7,<2", NULL, "numpy", ">=1.7,<2", NULL, "numpy>=1.7,<2"},
        /* BR-001: blanks after an operator or a comma belong to the version */
        {"python > 3.10", NULL, "python", ">3.10", NULL, "python>3.10"},
        {"numpy < 2.0", NULL, "numpy", "<2.0", NULL, "numpy<2.0"},
        {"polars >= 1.0.0", NULL, "polars", ">=1.0.0", NULL, "polars>=1.0.0"},
        {"scipy >=1.10, <1.14", NULL, "scipy", ">=1.10,<1.14", NULL, "scipy>=1.10,<1.14"},
        {"zlib 1.3.*", NULL, "zlib", "1.3.*", NULL, "zlib 1.3.*"},
        {"zlib 1.3.* h0_1", NULL, "zlib", "1.3.*", "h0_1", "zlib 1.3.* h0_1"},
        {"numpy   ", NULL, "numpy", NULL, NULL, "numpy"},
        {"NumPy", NULL, "numpy", NULL, NULL, "numpy"},
        {"numpy  # a comment", NULL, "numpy", NULL, NULL, "numpy"},
        {"numpy=*", NULL, "numpy", NULL, NULL, "numpy"},
        {"conda-forge::numpy", "conda-forge", "numpy", NULL, NULL, "numpy"},
        {"conda-forge/linux-64::numpy>=1", "conda-forge", "numpy", ">=1", NULL, "numpy>=1"},
        {"file:///srv/chan/extra::widget-lib==2.0.3", "file:///srv/chan/extra", "widget-lib",
         "2.0.3", NULL, "widget-lib 2.0.3"},
        {"foo[build=bld]", NULL, "foo", NULL, "bld", "foo * bld"},
        {"foo[version='>=1.0, <2', build=py*]", NULL, "foo", ">=1.0,<2", "py*", "foo>=1.0,<2 py*"},
        {"defaults::numpy=1.8=py27_0 [channel='anaconda',version=\">=1.8,<2|1.9\", build='3']",
         "anaconda", "numpy", ">=1.8,<2|1.9", "3", "numpy>=1.8,<2|1.9 3"},
        {"pytorch=2.1=*cuda*", NULL, "pytorch", "2.1", "*cuda*", "pytorch 2.1 *cuda*"},
};

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		const struct row *r = &rows[i];
		struct menv_matchspec *ms = NULL;
		struct menv_error err = {0};
		int rc = menv_matchspec_parse(r->in, &ms, &err);
		if (rc)
			fail_msg("'%s': %s", r->in, err.msg);
		const char *got[] = {ms->channel, ms->name, ms->version, ms->build};
		const char *want[] = {r->channel, r->name, r->version, r->build};
		for (int k = 0; k < 4; k++) {
			if (!want[k] && got[k])
				fail_msg("'%s' field %d: want unset, got '%s'", r->in, k, got[k]);
			if (want[k] && (!got[k] || strcmp(want[k], got[k])))
				fail_msg("'%s' field %d: want '%s', got '%s'", r->in, k, want[k],
				         got[k] ? got[k] : "(unset)");
		}
		char *s = menv_matchspec_str(ms);
		if (strcmp(s, r->str))
			fail_msg("'%s' str: want '%s', got '%s'", r->in, r->str, s);
		/* the canonical string parses back to the same spec (history round trip) */
		struct menv_matchspec *again = NULL;
		assert_int_equal(menv_matchspec_parse(s, &again, &err), 0);
		char *s2 = menv_matchspec_str(again);
		assert_string_equal(s, s2);
		free(s2);
		free(s);
		menv_matchspec_free(again);
		menv_matchspec_free(ms);
	}
}

static void test_brackets_keys(void **state)
{
	(void)state;
	struct menv_matchspec *ms = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_matchspec_parse("*[md5=0bab699354cbd66959550eb9b9866620]", &ms, &err),
	                 0);
	assert_string_equal(ms->name, "*");
	assert_string_equal(ms->md5, "0bab699354cbd66959550eb9b9866620");
	menv_matchspec_free(ms);
	assert_int_equal(
	        menv_matchspec_parse("foo[subdir=linux-64, build_number='>=3']", &ms, &err), 0);
	assert_string_equal(ms->subdir, "linux-64");
	assert_string_equal(ms->build_number, ">=3");
	menv_matchspec_free(ms);
}

static void test_url_spec(void **state)
{
	(void)state;
	struct menv_matchspec *ms = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_matchspec_parse("https://conda.anaconda.org/conda-forge/linux-64/"
	                                      "zlib-1.2.13-hd590300_5.conda",
	                                      &ms, &err),
	                 0);
	assert_string_equal(ms->name, "zlib");
	assert_string_equal(ms->version, "1.2.13");
	assert_string_equal(ms->build, "hd590300_5");
	assert_string_equal(ms->fn, "zlib-1.2.13-hd590300_5.conda");
	menv_matchspec_free(ms);
}

/* str(MatchSpec(s)) as conda 26.7.1 answers it (python3 -m conda's MatchSpec, classic) */
static void test_conda_str(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
	        {"python=3.9", "python=3.9"},
	        {"python 3.9*", "python=3.9"},
	        {"gxx_linux-64=11", "gxx_linux-64=11"},
	        {"numpy", "numpy"},
	        {"numpy>=1.19", "numpy[version='>=1.19']"},
	        {"numpy >=1.19,<2", "numpy[version='>=1.19,<2']"},
	        {"python==3.9.2", "python==3.9.2"},
	        {"python 3.9.2 h1_0", "python==3.9.2=h1_0"},
	        {"python=3.9=h1", "python==3.9=h1"},
	        {"foo=1.2.*", "foo=1.2"},
	        {"foo 1.2.*", "foo=1.2"},
	        {"foo[build_number=3]", "foo[build_number=3]"},
	        {"c::foo=1", "c::foo=1"},
	        {"foo !=1.0", "foo!=1.0"},
	        {"foo ~=1.2", "foo~=1.2"},
	        {"foo 1.2|1.3", "foo[version='1.2|1.3']"},
	        {"foo *", "foo"},
	        {"foo * h1", "foo[build=h1]"},
	        {"foo=1.0=*py*", "foo==1.0[build=*py*]"},
	        {"foo[md5=abc]", "foo[md5=abc]"},
	        {"foo >=1 *cpu*", "foo[version='>=1',build=*cpu*]"},
	        {"foo[version=\">=1\"]", "foo[version='>=1']"},
	        {"foo 1.2", "foo==1.2"},
	        {"foo==1.2=h1", "foo==1.2=h1"},
	        {"foo 1.2.* *_0", "foo=1.2[build=*_0]"},
	        {"foo[build_number=\">=3\"]", "foo[build_number='>=3']"},
	        {"foo[track_features=mkl]", "foo[track_features=mkl]"},
	        {"file:///x/linux-64::foo=1", "file:///x/linux-64::foo=1"},
	        {"foo[subdir=linux-64]", "foo[subdir=linux-64]"},
	        {"conda-forge/linux-64::foo", "conda-forge/linux-64::foo"},
	        {"foo >1.0", "foo[version='>1.0']"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct menv_matchspec *ms = NULL;
		assert_int_equal(menv_matchspec_parse(cases[i][0], &ms, NULL), 0);
		char *s = menv_matchspec_conda_str(ms);
		if (strcmp(s, cases[i][1]))
			fail_msg("'%s': conda writes '%s', menv '%s'", cases[i][0], cases[i][1], s);
		/* what menv writes into a history reads back as the same spec */
		struct menv_matchspec *again = NULL;
		assert_int_equal(menv_matchspec_parse(s, &again, NULL), 0);
		char *s2 = menv_matchspec_conda_str(again);
		assert_string_equal(s2, s);
		free(s2);
		menv_matchspec_free(again);
		free(s);
		menv_matchspec_free(ms);
	}
}

static void test_errors(void **state)
{
	(void)state;
	const char *bad[] = {"   ",
	                     "foo[build_number=x]",
	                     "foo[build_number='>=x']",
	                     "foo >=",
	                     "foo[build=bld",
	                     "foo[build=]",
	                     "::foo",
	                     " foo",
	                     ">=1.0",
	                     "foo$bar",
	                     "foo 1.0[",
	                     "foo ==",
	                     "foo <"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct menv_matchspec *ms = NULL;
		struct menv_error err = {0};
		int rc = menv_matchspec_parse(bad[i], &ms, &err);
		if (rc != MENV_EPARSE)
			fail_msg("'%s' was accepted", bad[i]);
		assert_null(ms);
		assert_null(strchr(err.msg, '\n'));
	}
}

static void test_channels(void **state)
{
	(void)state;
	struct menv_config cfg;
	struct menv_channel *c = NULL;
	struct menv_error err = {0};

	menv_config_defaults(&cfg);
	assert_int_equal(menv_channel_parse("conda-forge", &cfg, &c, &err), 0);
	assert_string_equal(c->base_url, "https://conda.anaconda.org/conda-forge");
	assert_string_equal(c->name, "conda-forge");
	menv_channel_free(c);
	assert_int_equal(menv_channel_parse("https://conda.anaconda.org/conda-forge/linux-64/",
	                                    &cfg, &c, &err),
	                 0);
	assert_string_equal(c->base_url, "https://conda.anaconda.org/conda-forge");
	assert_string_equal(c->name, "conda-forge");
	menv_channel_free(c);
	assert_int_equal(menv_channel_parse("/srv/chan/./main/", &cfg, &c, &err), 0);
	assert_string_equal(c->base_url, "file:///srv/chan/main");
	assert_string_equal(c->name, "file:///srv/chan/main");
	menv_channel_free(c);
	free(cfg.channel_alias);
	cfg.channel_alias = menv_xstrdup("file:///srv/chan");
	assert_int_equal(menv_channel_parse("extra", &cfg, &c, &err), 0);
	assert_string_equal(c->base_url, "file:///srv/chan/extra");
	assert_string_equal(c->name, "extra");
	menv_channel_free(c);
	assert_int_equal(menv_channel_parse("file:///srv/chan/extra", &cfg, &c, &err), 0);
	assert_string_equal(c->name, "extra");
	menv_channel_free(c);
	assert_int_equal(menv_channel_parse("", &cfg, &c, &err), MENV_EPARSE);

	/* defaults expands, nodefaults is an instruction, not a channel (BR-007) */
	struct menv_strvec in = MENV_STRVEC_INIT, out = MENV_STRVEC_INIT;
	menv_strvec_push(&in, "conda-forge");
	menv_strvec_push(&in, "nodefaults");
	menv_strvec_push(&in, "defaults");
	menv_strvec_push(&in, "conda-forge");
	menv_channels_expand(&in, &cfg, &out);
	assert_int_equal(out.n, 3);
	assert_string_equal(out.v[0], "conda-forge");
	assert_string_equal(out.v[1], "https://repo.anaconda.com/pkgs/main");
	assert_string_equal(out.v[2], "https://repo.anaconda.com/pkgs/r");
	menv_strvec_clear(&in);
	menv_strvec_clear(&out);
	menv_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_rows),     cmocka_unit_test(test_brackets_keys),
	        cmocka_unit_test(test_url_spec), cmocka_unit_test(test_errors),
	        cmocka_unit_test(test_channels), cmocka_unit_test(test_conda_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
