/*
 * cmd_run.c - `menv run`: executes a command in an activated environment without a shell
 * wrapper. The environment is computed by libmenv (menv_run_environ, which runs activate.d
 * scripts in a shell of their own); then menv execs the command in its own place, so stdin,
 * stdout and stderr are the command's own, signals reach it directly and its exit status is
 * menv's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "envs.h"

extern char **environ;

static void usage(FILE *f)
{
	fprintf(f, "usage: menv run [-n NAME | -p PREFIX] [--cwd DIR] [--env VAR=VALUE]... "
	           "[--clean-env] COMMAND [ARG]...\n"
	           "  without -n/-p the active environment ($CONDA_PREFIX) is used\n");
}

/* Resolves -n / -p / the active environment to an existing prefix. Caller frees. */
char *menv_cli_env_prefix(const struct menv_config *cfg, const char *name, const char *path,
                          struct menv_error *err)
{
	char *out = NULL, *rel = NULL;

	if (name && path) {
		menv_error_set(err, MENV_EUSAGE, "give either -n NAME or -p PREFIX, not both");
		return NULL;
	}
	if (name && (!*name || strchr(name, '/'))) {
		menv_error_set(err, MENV_EUSAGE, "invalid environment name '%s'", name);
		return NULL;
	}
	if (path && !strchr(path, '/'))
		path = rel = menv_xasprintf("./%s", path);
	if (!name && !path) {
		path = getenv("CONDA_PREFIX");
		if (!path || !*path) {
			menv_error_set(err, MENV_EUSAGE,
			               "no environment given: use -n NAME or "
			               "-p PREFIX, or activate one");
			return NULL;
		}
	}
	if (menv_env_locate(cfg->root_prefix, cfg->envs_dir, name ? name : path, &out, err))
		out = NULL;
	free(rel);
	return out;
}

int menv_cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'},
	        {"prefix", required_argument, NULL, 'p'},
	        {"cwd", required_argument, NULL, 'C'},
	        {"env", required_argument, NULL, 'e'},
	        {"clean-env", no_argument, NULL, 'E'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_strvec sets = MENV_STRVEC_INIT, envv = MENV_STRVEC_INIT;
	const char *name = NULL, *path = NULL, *cwd = NULL;
	char *prefix = NULL, *exe = NULL;
	bool clean = false;
	int c, rc = 0, exit_code = 0;

	optind = 1;
	/* '+': options end at the command, so its own options are left alone */
	while ((c = getopt_long(argc, argv, "+n:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'p': path = optarg; break;
		case 'C': cwd = optarg; break;
		case 'e': menv_strvec_push(&sets, optarg); break;
		case 'E': clean = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return MENV_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		rc = menv_error_set(&err, MENV_EUSAGE, "no command given to run");
		goto out;
	}
	for (size_t i = 0; i < sets.n; i++) {
		const char *eq = strchr(sets.v[i], '=');
		char *n = eq ? menv_xstrndup(sets.v[i], (size_t)(eq - sets.v[i])) : NULL;
		bool ok = n && menv_env_var_name_ok(n);
		free(n);
		if (!ok) {
			rc = menv_error_set(&err, MENV_EUSAGE, "--env takes VAR=VALUE, got '%s'",
			                    sets.v[i]);
			goto out;
		}
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	prefix = menv_cli_env_prefix(&cfg, name, path, &err);
	if (!prefix) {
		rc = err.code;
		goto out;
	}
	rc = menv_cli_recover(prefix, &err);
	if (rc)
		goto out;
	exe = menv_cli_self_exe();
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
	/* --env VAR=VALUE: split at the first '=', replacing an existing VAR */
	for (size_t i = 0; i < sets.n; i++) {
		size_t nl = strcspn(sets.v[i], "=") + 1;
		size_t k;
		for (k = 0; k < envv.n; k++)
			if (!strncmp(envv.v[k], sets.v[i], nl))
				break;
		if (k < envv.n) {
			free(envv.v[k]);
			envv.v[k] = menv_xstrdup(sets.v[i]);
		} else {
			menv_strvec_push(&envv, sets.v[i]);
		}
	}
	if (cwd && chdir(cwd) < 0) {
		rc = menv_error_sys(&err, MENV_EIO, "cannot change to directory '%s'", cwd);
		goto out;
	}
	menv_strvec_push_owned(&envv, NULL);
	environ = envv.v;
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
	menv_strvec_clear(&sets);
	free(prefix);
	free(exe);
	menv_config_release(&cfg);
	return exit_code;
}
