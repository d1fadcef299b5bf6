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
	if (a.json)
		menv_cli_put_json(json_pack("{s:b, s:s, s:s, s:b, s:I, s:I}", "success", 1,
		                            "source", src, "destination", dest, "dry_run",
		                            a.dry_run, "packages", (json_int_t)res.packages,
		                            "untracked", (json_int_t)res.untracked),
		                  false);
	else if (a.dry_run) /* conda's lines */
		printf("Dry run action: clone %s,%s\nDry run action: rm_rf %s\n", src, dest, src);
	else if (!a.quiet)
		printf("Renamed %s to %s: %zu package%s linked, %zu file%s no package owns "
		       "copied\n",
		       src, dest, res.packages, MENV_CLI_S(res.packages), res.untracked,
		       MENV_CLI_S(res.untracked));
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
