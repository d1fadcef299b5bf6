/*
 * cmd_run.c - `menv run`: executes a command in an activated environment without a shell
 * wrapper. The environment is computed by libmenv (menv_run_environ, which runs activate.d
 * scripts in a shell of their own); then menv execs the command in its own place, so stdin,
 * stdout and stderr are the command's own, signals reach it directly and its exit status is
 * menv's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

#define USAGE                                                                                      \
	"usage: menv run [-n NAME | -p PREFIX] [--cwd DIR] [--env VAR=VALUE]... [--clean-env] "    \
	"COMMAND [ARG]...\n  without -n/-p the active environment ($CONDA_PREFIX) is used\n"

int menv_cmd_run(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_strvec envv = MENV_STRVEC_INIT;
	char *prefix = NULL, *exe = NULL;
	int rc = 0, exit_code = 0;

	/* '+': options end at the command, so its own options are left alone */
	if ((rc = menv_cli_parse(argc, argv, "+npCXEh", USAGE, 0, MENV_CLI_ANY, &a)))
		return MENV_CLI_EXIT(rc);
	const char *name = a.name, *path = a.prefix, *cwd = a.cwd;
	struct menv_strvec *sets = &a.sets;
	bool clean = a.clean_env;
	if (!a.args.n) {
		rc = menv_error_set(&err, MENV_EUSAGE, "no command given to run");
		goto out;
	}
	rc = menv_env_vars_assignments(sets->v, sets->n, NULL, NULL, &err);
	if (rc)
		goto out;
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	prefix = menv_env_prefix_find(&cfg, name, path, &err);
	if (!prefix) {
		rc = err.code;
		goto out;
	}
	rc = menv_cli_recover(prefix, &err);
	if (rc)
		goto out;
	exe = menv_self_exe();
	struct menv_activation act = {
	        .shell = MENV_SHELL_POSIX,
	        .exe = exe,
	        .root_prefix = cfg.root_prefix,
	        .stack = true,
	        .environ = environ,
	};
	rc = menv_run_environ(&act, prefix, clean, &envv, &err);
	if (rc)
		goto out;
	menv_environ_assign(&envv, sets->v, sets->n); /* --env VAR=VALUE */
	if (cwd && chdir(cwd) < 0) {
		rc = menv_error_sys(&err, MENV_EIO, "cannot change to directory '%s'", cwd);
		goto out;
	}
	menv_strvec_push_owned(&envv, NULL);
	environ = envv.v;
	fflush(NULL);
	execvp(argv[optind], argv + optind);
	int e = errno;
	fprintf(stderr, "menv: error: cannot run '%s': %s\n", argv[optind], strerror(e));
	exit_code = e == ENOENT ? 127 : 126;
	goto done;
out:
	if (rc)
		exit_code = menv_cli_fail(&err);
	menv_strvec_clear(&envv); /* not after a failed exec: it is the environment then */
done:
	menv_cli_args_release(&a);
	free(prefix);
	free(exe);
	menv_config_release(&cfg);
	return exit_code;
}
