/*
 * cmd_env.c - `menv env list` (the root prefix, the named environments under envs_dirs, the
 * prefixes of conda's registry ~/.conda/environments.txt that still are environments, and any
 * active prefix; each once, the active one marked like conda), `menv env config vars
 * list|set|unset` (the `env_vars` of conda-meta/state), and conda env's create, export,
 * update and remove as the commands they are (conda/cli/main_env_*.py): `env create` reads
 * ./environment.yml unless -f names a file, `env export` writes an environment.yml.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define CONFIG_VARS                                                                                \
	"menv env config vars list [-n NAME | -p PREFIX] [--json]\n"                               \
	"       menv env config vars set [-n NAME | -p PREFIX] VAR=VALUE...\n"                     \
	"       menv env config vars unset [-n NAME | -p PREFIX] VAR...\n"
#define CONFIG_VARS_USAGE "usage: " CONFIG_VARS
#define USAGE                                                                                      \
	"usage: menv env list [--json]\n"                                                          \
	"       menv env create [-f environment.yml] [-n NAME | -p PREFIX] [create's options]\n"   \
	"       menv env export [-n NAME | -p PREFIX] [export's options]\n"                        \
	"       menv env update [-n NAME | -p PREFIX] -f environment.yml [--prune]\n"              \
	"       menv env remove [-n NAME | -p PREFIX] [--dry-run] [-y] [--json]\n"                 \
	"       " CONFIG_VARS

static void usage(FILE *f)
{
	fputs(USAGE, f);
}

static int env_list(int argc, char **argv)
{
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_strvec envs = MENV_STRVEC_INIT, seen = MENV_STRVEC_INIT;
	struct menv_cli_args o = {0};
	int rc;

	if ((rc = menv_cli_parse(argc, argv, "jh", "usage: menv env list [--json]\n", 0, 0, &o)))
		return MENV_CLI_EXIT(rc);
	bool json = o.json;
	menv_cli_args_release(&o);
	if (menv_config_load(&cfg, &err))
		return menv_cli_fail(&err);
	if (menv_env_list(&cfg, &envs, &seen, &err))
		fprintf(stderr, "menv: warning: %s\n", err.msg);
	if (json) {
		json_t *j = json_object(), *a = json_array();
		for (size_t i = 0; i < envs.n; i++)
			json_array_append_new(a, json_string(envs.v[i]));
		json_object_set_new(j, "envs", a);
		menv_cli_put_json(j, false);
	} else {
		struct menv_buf text = MENV_BUF_INIT;
		menv_env_list_text(&cfg, &envs, &seen, &text);
		menv_cli_put_text(menv_buf_detach(&text));
	}
	menv_strvec_clear(&envs);
	menv_strvec_clear(&seen);
	menv_config_release(&cfg);
	return 0;
}

static int config_vars(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	const char *sub = argc > 1 ? argv[1] : "";
	char *prefix = NULL;
	int rc = 0, exit_code = 0;

	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		menv_cli_help(stdout, CONFIG_VARS_USAGE, "npjh");
		return 0;
	}
	if ((rc = menv_cli_parse(argc - 1, argv + 1, "npjh", CONFIG_VARS_USAGE, 0, MENV_CLI_ANY,
	                         &a)))
		return MENV_CLI_EXIT(rc);
	const char *name = a.name, *path = a.prefix;
	bool json = a.json;
	int nargs = (int)a.args.n;
	char **args = a.args.v;
	rc = menv_env_config_vars_check(sub, (size_t)nargs, &err);
	if (rc)
		goto out;
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	prefix = menv_cli_prefix(&cfg, name, path, &err);
	if (!prefix) {
		rc = err.code;
		goto out;
	}
	if (!strcmp(sub, "list")) {
		json_t *j = NULL;
		struct menv_buf text = MENV_BUF_INIT;
		rc = menv_env_state_vars_show(prefix, json ? &j : NULL, json ? NULL : &text, &err);
		if (!rc && json)
			menv_cli_put_json(j, false);
		fputs(text.buf ? text.buf : "", stdout);
		menv_buf_release(&text);
	} else {
		struct menv_strvec w = MENV_STRVEC_INIT;
		rc = menv_env_config_vars_edit(prefix, !strcmp(sub, "set"), args, (size_t)nargs,
		                               menv_cli_on_event, NULL, &w, &err);
		menv_cli_warnings(&w);
		if (!rc && !json)
			fprintf(stderr,
			        "reactivate the environment for the change to take effect\n");
	}
out:
	if (rc)
		exit_code = menv_cli_fail(&err);
	free(prefix);
	menv_config_release(&cfg);
	menv_cli_args_release(&a);
	return exit_code;
}

/* `env create` is `create -f environment.yml` (that file unless -f/--file is given) and
 * `env export` is `export --format environment` (unless --format is given), as conda env's. */
static int env_alias(int argc, char **argv)
{
	bool create = !strcmp(argv[0], "create"), given = false;
	const char *opt = create ? "-f" : "--format";
	char **v = menv_xcalloc((size_t)argc + 3, sizeof(*v));
	int n = 0, rc;

	const char *lng = create ? "--file" : "--format";

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], opt, strlen(opt)) || !strncmp(argv[i], lng, strlen(lng)))
			given = true;
	v[n++] = create ? (char *)"env create" : (char *)"env export"; /* their own usage */
	if (!given) {
		v[n++] = (char *)opt;
		v[n++] = create ? (char *)"environment.yml" : (char *)"environment";
	}
	for (int i = 1; i < argc; i++)
		v[n++] = argv[i];
	rc = create ? menv_cmd_create(n, v) : menv_cmd_export(n, v);
	free(v);
	return rc;
}

int menv_cmd_env(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return MENV_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		menv_cli_help(stdout,
		              USAGE "run 'menv env COMMAND --help' for a command's options\n", "h");
		return 0;
	}
	if (!strcmp(argv[1], "list"))
		return env_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "create") || !strcmp(argv[1], "export"))
		return env_alias(argc - 1, argv + 1);
	if (!strcmp(argv[1], "update"))
		return menv_cmd_env_update(argc - 1, argv + 1);
	if (!strcmp(argv[1], "remove"))
		return menv_cmd_env_remove(argc - 1, argv + 1);
	if (!strcmp(argv[1], "config") && argc > 2 &&
	    (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		menv_cli_help(stdout, CONFIG_VARS_USAGE, "npjh");
		return 0;
	}
	if (!strcmp(argv[1], "config") && argc > 2 && !strcmp(argv[2], "vars"))
		return config_vars(argc - 2, argv + 2);
	fprintf(stderr, "menv: error: unknown env command '%s'\n", argv[1]);
	usage(stderr);
	return MENV_EXIT_USAGE;
}
