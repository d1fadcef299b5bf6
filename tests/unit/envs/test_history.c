/* conda-meta/history's requested specs: a history written as conda's conda/history.py writes
 * it (write_head, write_changes, write_specs; conda<4.5's comma-separated `# install specs:`)
 * reads back as conda's History.get_requested_specs_map() reads it, and the spec lines menv
 * writes are byte for byte conda's (str() of a Python list), so each reads the other's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "envs.h"

static char *make_prefix(const char *history)
{
	char tmpl[] = "/tmp/menv-history-XXXXXX";
	char *dir = mkdtemp(tmpl);
	assert_non_null(dir);
	char *meta = menv_xasprintf("%s/conda-meta", dir);
	assert_int_equal(mkdir(meta, 0755), 0);
	char *path = menv_xasprintf("%s/history", meta);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(history, f);
	fclose(f);
	free(path);
	free(meta);
	return menv_xstrdup(dir);
}

static void drop_prefix(char *dir)
{
	char *cmd = menv_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

/* Six requests as conda writes them; the fifth has no `# cmd:` line (conda's
 * get_user_requests skips it). */
static const char conda_history[] =
        "==> 2019-03-01 10:00:00 <==\n"
        "# cmd: /opt/conda/bin/conda create -n x python>=3.5.1 jupyter >=1.0.0,<2.0\n"
        "+defaults::python-3.6.8-h0371630_0\n"
        "+defaults::jupyter-1.0.0-py36_7\n"
        "# install specs: python>=3.5.1,jupyter >=1.0.0,<2.0\n"
        "==> 2024-01-02 10:00:00 <==\n"
        "# cmd: /opt/conda/bin/conda install python=3.8 numpy\n"
        "# conda version: 4.12.0\n"
        "-defaults/linux-64::python-3.6.8-h0371630_0\n"
        "+defaults/linux-64::numpy-1.21.0-py38_0\n"
        "+defaults/linux-64::python-3.8.10-h12debd9_8\n"
        "# update specs: ['python=3.8', 'numpy']\n"
        "==> 2024-01-03 10:00:00 <==\n"
        "# cmd: /opt/conda/bin/conda install pandas>=1.0\n"
        "# conda version: 4.12.0\n"
        "+defaults/linux-64::pandas-1.3.0-py38_0\n"
        "# update specs: [\"pandas[version='>=1.0']\", 'bar@']\n"
        "==> 2024-01-04 10:00:00 <==\n"
        "# cmd: /opt/conda/bin/conda remove numpy\n"
        "# conda version: 4.12.0\n"
        "-defaults/linux-64::numpy-1.21.0-py38_0\n"
        "# remove specs: ['numpy']\n"
        "==> 2024-01-05 10:00:00 <==\n"
        "+defaults/linux-64::foo-1.0-0\n"
        "# update specs: ['foo']\n"
        "==> 2024-01-06 10:00:00 <==\n"
        "# cmd: /opt/conda/bin/conda install scipy\n"
        "# conda version: 4.12.0\n"
        "+defaults/linux-64::scipy-1.7.0-py38_0\n"
        "# update specs: ['scipy']\n"
        "# neutered specs: ['python']\n";

static void test_reads_conda_history(void **state)
{
	(void)state;
	char *dir = make_prefix(conda_history);
	struct menv_strvec inst = MENV_STRVEC_INIT, got = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	const char *names[] = {"python", "jupyter", "pandas", "scipy", "foo", "bar"};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		menv_strvec_push(&inst, names[i]);

	assert_int_equal(menv_history_requested_specs(dir, &inst, &got, &err), 0);
	/* conda: {'python': MatchSpec('python'), 'jupyter': ..., 'pandas': ..., 'scipy': ...} */
	assert_int_equal(got.n, 4);
	assert_string_equal(got.v[0], "python");
	assert_string_equal(got.v[1], "jupyter >=1.0.0,<2.0");
	assert_string_equal(got.v[2], "pandas[version='>=1.0']");
	assert_string_equal(got.v[3], "scipy");
	menv_strvec_clear(&got);

	/* names that are no longer installed are left out, as conda does */
	menv_strvec_clear(&inst);
	menv_strvec_push(&inst, "scipy");
	assert_int_equal(menv_history_requested_specs(dir, &inst, &got, &err), 0);
	assert_int_equal(got.n, 1);
	assert_string_equal(got.v[0], "scipy");
	menv_strvec_clear(&got);
	menv_strvec_clear(&inst);
	drop_prefix(dir);
}

static void test_no_history(void **state)
{
	(void)state;
	char *dir = make_prefix("");
	struct menv_strvec got = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	assert_int_equal(menv_history_requested_specs(dir, NULL, &got, &err), 0);
	assert_int_equal(got.n, 0);
	drop_prefix(dir);
}

static void test_writes_as_conda(void **state)
{
	(void)state;
	struct menv_strvec specs = MENV_STRVEC_INIT, got = MENV_STRVEC_INIT;
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	menv_strvec_push(&specs, "python=3.8");
	menv_strvec_push(&specs, "pandas[version='>=1.0']");
	menv_strvec_push(&specs, "conda-forge::numpy[version='>=1.2',build=py38*]");

	menv_history_specs_line(&b, "update", &specs);
	/* Python: "# update specs: %s\n" % ['python=3.8', "pandas[version='>=1.0']", ...] */
	assert_string_equal(b.buf, "# update specs: ['python=3.8', \"pandas[version='>=1.0']\", "
	                           "\"conda-forge::numpy[version='>=1.2',build=py38*]\"]\n");

	/* a block as menv's transaction writes it reads back with the same specs */
	struct menv_buf h = MENV_BUF_INIT;
	menv_buf_addf(&h,
	              "==> 2024-01-01 00:00:00 <==\n# cmd: menv install x\n"
	              "# menv version: 0\n+c/linux-64::python-3.8.10-0\n%s",
	              b.buf);
	char *dir = make_prefix(h.buf);
	assert_int_equal(menv_history_requested_specs(dir, NULL, &got, &err), 0);
	assert_int_equal(got.n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(got.v[i], specs.v[i]);
	drop_prefix(dir);
	menv_strvec_clear(&got);
	menv_strvec_clear(&specs);
	menv_buf_release(&b);
	menv_buf_release(&h);
}

/* A revision's diff is its removals, then its additions (conda's History.write_changes writes
 * the `-` lines, then the `+` lines): a reinstall (`conda install --force-reinstall`, a pip
 * step re-recording a package) removes and adds the same dist, which stays installed. */
static void test_state_reinstall(void **state)
{
	static const char hist[] = "==> 2024-01-01 10:00:00 <==\n"
	                           "# cmd: conda create -n x a b\n"
	                           "+defaults/linux-64::a-1.0-0\n"
	                           "+defaults/linux-64::b-1.0-0\n"
	                           "# update specs: ['a', 'b']\n"
	                           "==> 2024-01-02 10:00:00 <==\n"
	                           "# cmd: conda install --force-reinstall a\n"
	                           "-defaults/linux-64::a-1.0-0\n"
	                           "+defaults/linux-64::a-1.0-0\n"
	                           "# update specs: ['a']\n";
	struct menv_revision *revs = NULL;
	struct menv_strvec got = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	size_t n = 0;

	(void)state;
	char *dir = make_prefix(hist);
	assert_int_equal(menv_history_load(dir, &revs, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(menv_history_state(revs, n, 1, &got, &err), 0);
	assert_int_equal(got.n, 2);
	assert_string_equal(got.v[0], "defaults/linux-64::a-1.0-0");
	assert_string_equal(got.v[1], "defaults/linux-64::b-1.0-0");
	menv_strvec_clear(&got);
	menv_history_free(revs, n);
	drop_prefix(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_reads_conda_history),
	        cmocka_unit_test(test_no_history),
	        cmocka_unit_test(test_writes_as_conda),
	        cmocka_unit_test(test_state_reinstall),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
