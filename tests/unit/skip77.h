/* A cmocka skip() is reported by cmocka as skipped but leaves the exit status 0, so ctest would
 * show the binary as passed. Tests that may skip call menv_skip() instead and main() returns
 * menv_test_exit(cmocka_run_group_tests(...)): the failures count when something failed, else
 * 77 (ctest's SKIP_RETURN_CODE) when anything was skipped, else 0. Include after cmocka.h. */
#ifndef MENV_TESTS_SKIP77_H
#define MENV_TESTS_SKIP77_H

static int menv_tests_skipped;

#define menv_skip()                                                                                \
	do {                                                                                       \
		menv_tests_skipped++;                                                              \
		skip();                                                                            \
	} while (0)

static inline int menv_test_exit(int failed)
{
	if (failed)
		return failed;
	if (menv_tests_skipped) {
		print_message("%d test(s) skipped: exit 77\n", menv_tests_skipped);
		return 77;
	}
	return 0;
}

#endif
