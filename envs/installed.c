/*
 * installed.c - where the running menv is, and what an installed menv (`cmake --install`:
 * P/bin/menv) finds relative to its own executable, so the install prefix can move and the
 * source tree can go: the ops/ sources of the smoke check in P/share/menv/ops.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activate.h"
#include "smoke.h"

char *menv_self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return menv_xstrdup("menv");
	buf[n] = '\0';
	return menv_xstrdup(buf);
}

void menv_installed_paths(void)
{
	const char *set = getenv("MENV_OPS_DIR");
	if (set && *set)
		return; /* the user's choice wins */
	char *exe = menv_self_exe();
	char *slash = strrchr(exe, '/');
	if (slash) {
		*slash = '\0';
		char *ops = menv_xasprintf("%s/../share/menv/ops", exe);
		char *cfg = menv_xasprintf("%s/configure", ops);
		char *real = access(cfg, X_OK) == 0 ? realpath(ops, NULL) : NULL;
		if (real)
			setenv("MENV_OPS_DIR", real, 1);
		free(real);
		free(cfg);
		free(ops);
	}
	free(exe);
}
