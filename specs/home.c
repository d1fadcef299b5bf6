/*
 * home.c - the one check of $HOME. A command that needs the home directory (the default root
 * prefix ~/.menv, ~/.condarc, the shell's rc file, ~/.conda/environments.txt, "~/..." in a
 * setting) takes it from here, and fails with one line when HOME is unset, empty, not an
 * absolute path or not a directory: nothing is ever written to "/" or to the current
 * directory in its place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "specs.h"

int menv_home(const char **out, struct menv_error *err)
{
	const char *h = getenv("HOME");
	struct stat st;

	*out = NULL;
	if (!h)
		return menv_error_set(err, MENV_ENOTFOUND,
		                      "HOME is not set: menv needs your home directory here "
		                      "(set HOME, or MENV_ROOT_PREFIX and MENVRC)");
	if (!*h)
		return menv_error_set(err, MENV_ENOTFOUND,
		                      "HOME is empty: menv needs your home directory here "
		                      "(set HOME, or MENV_ROOT_PREFIX and MENVRC)");
	if (h[0] != '/')
		return menv_error_set(err, MENV_EPARSE,
		                      "HOME '%s' is not an absolute path: menv needs your home "
		                      "directory here",
		                      h);
	if (stat(h, &st) < 0 || !S_ISDIR(st.st_mode))
		return menv_error_set(
		        err, MENV_ENOTFOUND,
		        "HOME '%s' is not a directory: menv needs your home directory "
		        "here",
		        h);
	*out = h;
	return 0;
}
