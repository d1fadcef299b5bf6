/*
 * cmd_config.c - `menv config` as conda config: --show [KEY...], --show-sources,
 * --describe [KEY...], --get [KEY...] and the edits --set, --add/--prepend, --append,
 * --remove, --remove-key of one rc file (--file FILE, --env: the active prefix's .condarc,
 * --system: the root prefix's; default $MENVRC or ~/.condarc). The formats and the edits are
 * the library's (specs/condarc.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv config [--file FILE | --env | --system] [--json]\n"                           \
	"         (--show [KEY...] | --show-sources | --describe [KEY...] | --get [KEY...]\n"      \
	"          | --set KEY VALUE | --add KEY VALUE | --prepend KEY VALUE\n"                    \
	"          | --append KEY VALUE | --remove KEY VALUE | --remove-key KEY)...\n"

static int usage_error(const char *msg)
{
	fprintf(stderr, "menv: error: %s\n%s", msg, USAGE);
	return MENV_EXIT_USAGE;
}

int menv_cmd_config(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_strvec warnings = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	struct menv_buf o = MENV_BUF_INIT;
	char *path = NULL;
	int r = 0;

	if ((r = menv_cli_parse(argc, argv, "wDJAYzu@#%^&fjh", USAGE, 0, MENV_CLI_ANY, &a)))
		return MENV_CLI_EXIT(r);
	int mode = a.config_view;
	bool edits = false, json = a.json;
	struct menv_strvec *keys = &a.args, *ops = a.config_ops;
	for (int k = 0; k < MENV_CONFIG_NEDITS; k++)
		edits |= ops[k].n > 0;
	if (keys->n && (!mode || mode == 1 + MENV_CONFIG_SOURCES)) {
		menv_cli_args_release(&a);
		return usage_error("unknown option or argument");
	}
	if (!mode && !edits) {
		menv_cli_args_release(&a);
		return usage_error("nothing to do");
	}
	if (mode && mode != MENV_CLI_CFG_GET) {
		json_t *j = NULL;
		r = menv_config_view(mode - 1, keys, &j, json ? NULL : &o, &err);
		if (!r && json)
			menv_cli_put_json(j, true);
		else
			json_decref(j);
		goto out;
	}
	/* --get and the edits: one rc file */
	json_t *got = json_object();
	path = menv_config_rc_path(a.file, a.system_rc, a.env_rc, &err);
	r = !path ? (err.code ? err.code : MENV_EIO)
	          : menv_config_get_edit(path, mode == MENV_CLI_CFG_GET ? keys : NULL, ops, got,
	                                 json ? NULL : &o, &warnings, &err);
	if (!r && json) {
		menv_cli_put_json(menv_config_get_json(path, got, &warnings), true);
	} else {
		for (size_t i = 0; i < warnings.n; i++)
			fprintf(stderr, "%s%s\n",
			        strncmp(warnings.v[i], "unknown", 7) ? "Warning: " : "",
			        warnings.v[i]);
	}
	json_decref(got);
out:
	fputs(o.buf ? o.buf : "", stdout);
	menv_buf_release(&o);
	menv_cli_args_release(&a);
	menv_strvec_clear(&warnings);
	free(path);
	return r ? menv_cli_fail(&err) : 0;
}
