/*
 * cmd_clean.c - `menv clean`: frees the package cache like conda clean (--tarballs,
 * --packages for extracted packages no environment uses, --index-cache, --locks for
 * interrupted downloads and extractions, --all), under the cache lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct draw {
	json_t *list; /* --json */
};

static void on_removed(void *ud, const char *path, int64_t bytes)
{
	struct draw *d = ud;
	if (d->list)
		json_array_append_new(
		        d->list, json_pack("{s:s,s:I}", "path", path, "bytes", (json_int_t)bytes));
	else
		printf("  %-70s %8.1f MB\n", path, (double)bytes / 1e6);
}

static void on_event(void *ud, enum menv_env_event ev, const char *msg)
{
	(void)ud;
	fprintf(stderr, "menv: %s%s\n", ev == MENV_ENV_WARNING ? "warning: " : "", msg);
}

int menv_cmd_clean(int argc, char **argv)
{
	const char *use = "usage: menv clean [--all] [--tarballs] [--packages] [--index-cache] "
	                  "[--locks] [--dry-run] [--json]\n";
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_clean_stats st;
	struct draw d = {NULL};
	int rc;

	/* -y and -q are accepted as conda does; clean's output is a list */
	if ((rc = menv_cli_parse(argc, argv, "$bgimdjyqh", use, 0, 0, &a)))
		return MENV_CLI_EXIT(rc);
	unsigned what = a.clean; /* --all: every bit (args.c) */
	bool dry = a.dry_run, json = a.json;
	menv_cli_args_release(&a);
	if (!what) {
		fprintf(stderr, "%s", use);
		return MENV_EXIT_USAGE;
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		return menv_cli_fail(&err);

	if (json)
		d.list = json_array();
	else if (cfg.pkgs_dir_writable) /* else the library warns that nothing is removed */
		printf("%s %s:\n", dry ? "Would remove from" : "Removing from", cfg.pkgs_dir);
	rc = menv_env_clean(&cfg, what, dry, on_removed, on_event, &d, &st, &err);
	if (!rc && json) {
		json_t *j = json_pack("{s:o,s:I,s:b,s:b}", "removed", d.list, "bytes",
		                      (json_int_t)st.bytes, "dry_run", dry, "success", 1);
		menv_cli_put_json(j, false);
		d.list = NULL;
	} else if (!rc) {
		printf("%s %zu entr%s, %.1f MB\n", dry ? "Would free" : "Freed", st.removed,
		       st.removed == 1 ? "y" : "ies", (double)st.bytes / 1e6);
	}
	json_decref(d.list);
	menv_config_release(&cfg);
	return rc ? menv_cli_fail(&err) : 0;
}
