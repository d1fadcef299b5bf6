/*
 * installed.c - an installed menv (`cmake --install`: P/bin/menv) finds what it was installed
 * with relative to its own executable, so the install prefix can move and the source tree can
 * go: the ops/ sources of the smoke check in P/share/menv/ops.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void menv_cli_installed_paths(void)
{
	const char *set = getenv("MENV_OPS_DIR");
	if (set && *set)
		return; /* the user's choice wins */
	char *exe = menv_cli_self_exe();
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
