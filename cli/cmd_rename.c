/*
 * cmd_rename.c - `menv rename [-n NAME | -p PREFIX] [--force] [--dry-run] DEST` as conda
 * rename: DEST is a name (under envs_dirs) or a path (with '/'); the library clones and
 * removes (envs/rename.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv rename [-n NAME | -p PREFIX] [-d|--dry-run] [--force|-y] [-q] [--json] "      \
	"DEST\n"                                                                                   \
	"  DEST: a new name, or a path (with '/'); the base and the active environment cannot "    \
	"be renamed\n"

int menv_cmd_rename(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_cli_draw d = {0};
	struct menv_rename_result res;
	char *src = NULL, *dest = NULL, *cmdline = menv_cli_cmdline();
	int rc = menv_cli_parse(argc, argv, "npdjqyh8", USAGE, 1, 1, &a), code = 0;

	if (rc) {
		free(cmdline);
		return MENV_CLI_EXIT(rc);
	}
	const char *to = a.args.v[0];
	struct menv_rename_opts o = {
	        .cfg = &cfg,
	        .active = getenv("CONDA_PREFIX"),
	        .force = a.yes || (a.modifiers & MENV_MOD_FORCE),
	        .dry_run = a.dry_run,
	        .cmdline = cmdline,
	        .cancel = MENV_CLI_CANCEL,
	};
	rc = menv_config_load(&cfg, &err);
	if (!rc && !(src = menv_env_prefix_find(&cfg, a.name, a.prefix, &err)))
		rc = err.code;
	if (!rc && !(dest = menv_env_prefix_new(&cfg, strchr(to, '/') ? NULL : to,
	                                        strchr(to, '/') ? to : NULL, &err)))
		rc = err.code;
	if (rc)
		goto out;
	menv_cli_draw_init(&d, &o.cb, a.quiet || a.json, a.json, false);
	rc = menv_env_rename(&o, src, dest, &res, &err);
	if (rc)
		goto out;
	struct menv_buf text = MENV_BUF_INIT; /* -q: only a dry run's lines */
	bool draw = !a.json && (a.dry_run || !a.quiet);
	json_t *j = menv_rename_report(src, dest, a.dry_run, &res, draw ? &text : NULL);
	menv_cli_put_text(menv_buf_detach(&text));
	if (a.json)
		menv_cli_put_json(j, false);
	else
		json_decref(j);
out:
	if (rc)
		code = menv_cli_fail(&err);
	free(src);
	free(dest);
	free(cmdline);
	menv_config_release(&cfg);
	menv_cli_args_release(&a);
	return code;
}
