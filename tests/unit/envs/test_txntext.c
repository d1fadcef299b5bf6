/* What envs/ reports as text for a front end to draw (issue 26: the CLI only draws): a plan's
 * table rows (menv_txn_plan_rows: sections, marks, the old record above the new, "(relink)",
 * "Cached", the download, pip lines redacted), sizes as conda writes them, a commit's closing
 * lines, the lockfile-install line and history's command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envs.h"

static void test_size_text(void **state)
{
	static const struct {
		int64_t n;
		const char *text;
	} cases[] = {{-1, "-"},
	             {0, "0 B"},
	             {999, "999 B"},
	             {1000, "1.0 kB"},
	             {1536, "1.5 kB"},
	             {2300000, "2.3 MB"},
	             {999999999, "1000.0 MB"},
	             {1100000000, "1.1 GB"}};
	char out[32];
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		menv_size_text(cases[i].n, out, sizeof(out));
		assert_string_equal(out, cases[i].text);
	}
	assert_string_equal(menv_change_kind_name(MENV_CHANGE_DOWNGRADE), "Downgrade");
	assert_string_equal(menv_change_kind_name(MENV_CHANGE_REMOVE), "Remove");
}

static void test_plan_rows(void **state)
{
	struct menv_config cfg = {0};
	struct menv_channel ch = {.name = (char *)"conda-forge"};
	struct menv_record a = {
	        .name = "zlib", .version = "1.3", .build = "h0", .size = 2500000, .channel = &ch};
	struct menv_record b = {
	        .name = "six", .version = "1.16", .build = "pyh0", .size = 15000, .channel = &ch};
	json_t *old = json_pack("{s:s,s:s,s:s}", "version", "1.2", "build", "h9", "channel",
	                        "conda-forge");
	json_t *gone = json_pack("{s:s,s:s,s:s}", "version", "0.1", "build", "0", "channel",
	                         "conda-forge");
	struct menv_txn_change ch3[] = {
	        {MENV_CHANGE_UPGRADE, "zlib", &a, false, old},
	        {MENV_CHANGE_REINSTALL, "six", &b, true, NULL},
	        {MENV_CHANGE_REMOVE, "tool", NULL, false, gone},
	};
	struct menv_strvec pip = MENV_STRVEC_INIT;
	menv_strvec_push(&pip, "--index-url http://bob:secret@127.0.0.1:9/simple");
	struct menv_txn_plan p = {.kind = MENV_TXN_INSTALL,
	                          .prefix = "/envs/x",
	                          .cfg = &cfg,
	                          .changes = ch3,
	                          .nchanges = 3,
	                          .pip = &pip};
	struct menv_txn_plan_rows t;
	(void)state;

	menv_config_defaults(&cfg);
	menv_txn_plan_rows(&p, &t);
	assert_int_equal(t.n, 4); /* zlib old and new, six, tool */
	assert_int_equal(t.v[0].mark, '-');
	assert_string_equal(t.v[0].cols[1], "1.2");
	assert_string_equal(t.v[0].cols[4], "");
	assert_int_equal(t.v[1].mark, '+');
	assert_string_equal(t.v[1].cols[3], "conda-forge");
	assert_string_equal(t.v[1].cols[4], "2.5 MB");
	assert_int_equal(t.v[2].mark, 'o');
	assert_string_equal(t.v[2].cols[2], "pyh0 (relink)");
	assert_string_equal(t.v[2].cols[4], "Cached");
	assert_int_equal(t.v[3].kind, MENV_CHANGE_REMOVE);
	assert_string_equal(t.v[3].cols[0], "tool");
	assert_int_equal(t.counts[MENV_CHANGE_UPGRADE], 1);
	assert_int_equal(t.counts[MENV_CHANGE_REMOVE], 1);
	assert_int_equal(t.cached, 1);
	assert_int_equal(t.download, 2500000); /* the cached one is not downloaded */
	assert_int_equal(t.pip.n, 1);
	assert_null(strstr(t.pip.v[0], "secret"));
	assert_non_null(strstr(t.pip.v[0], "127.0.0.1:9/simple"));
	menv_txn_plan_rows_release(&t);
	assert_null(menv_txn_lock_line(&p));

	p.lock_file = "conda-lock.yml";
	p.lock_format = "conda-lock v1";
	p.nlink = 2;
	p.lock_conda = 1;
	char *line = menv_txn_lock_line(&p);
	char *want = menv_xasprintf("Installing from lockfile conda-lock.yml (conda-lock v1, %s) "
	                            "into /envs/x: 2 to link, 0 to unlink, 1 conda + 0 pip "
	                            "package in the lock, no solve",
	                            cfg.subdir);
	assert_string_equal(line, want);
	free(want);
	free(line);
	json_decref(old);
	json_decref(gone);
	menv_strvec_clear(&pip);
	menv_config_release(&cfg);
}

static void test_result_text(void **state)
{
	struct menv_txn_plan p = {.kind = MENV_TXN_CREATE, .prefix = "/envs/x"};
	struct menv_txn_result r = {.stats = {.packages = 3, .files = 1, .hardlinks = 1}};
	(void)state;
	char *s = menv_txn_result_text(&p, &r, "x", true);
	assert_string_equal(s, "Created /envs/x: 3 linked, 1 file (0 reflinked, 1 hardlinked, 0 "
	                       "softlinked, 0 copied, 0 relocated, 0 .pyc)\n\n# To activate this "
	                       "environment, use\n#\n#     $ menv activate x\n#\n# To deactivate "
	                       "an active environment, use\n#\n#     $ menv deactivate\n");
	free(s);
	/* -q: no activation lines, as conda's -q (conda 26.7.1 create -q prints its plan and
	 * leaves out the progress and these lines) */
	s = menv_txn_result_text(&p, &r, "x", false);
	assert_string_equal(s, "Created /envs/x: 3 linked, 1 file (0 reflinked, 1 hardlinked, 0 "
	                       "softlinked, 0 copied, 0 relocated, 0 .pyc)\n");
	free(s);
	p.kind = MENV_TXN_REMOVE;
	p.remove_env = true;
	r.stats.unlinked = 1;
	s = menv_txn_result_text(&p, &r, NULL, true);
	assert_string_equal(s, "Removed /envs/x: 1 package\n");
	free(s);
}

static void test_cmdline(void **state)
{
	char *argv[] = {(char *)"menv", (char *)"install", (char *)"-n", (char *)"a b",
	                (char *)"x>=1", (char *)"it's",    NULL};
	(void)state;
	char *s = menv_history_cmdline(6, argv);
	assert_string_equal(s, "menv install -n 'a b' x>=1 'it's'");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_size_text),
	        cmocka_unit_test(test_plan_rows),
	        cmocka_unit_test(test_result_text),
	        cmocka_unit_test(test_cmdline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
