/*
 * cmd_doctor.c - `menv doctor [-n NAME | -p PREFIX] [--fix] [--json]`: envs/doctor.c's
 * findings, one line each (two for the CUDA toolchain), as menv_doctor_report_json writes
 * them; exit 1 when a fault remains. Stale registry lines of other environments are looked
 * for only when no environment is named (the active one is checked), and are notes with the
 * hint to --fix, not this one's faults.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int menv_cmd_doctor(int argc, char **argv)
{
	const char *use = "usage: menv doctor [-n NAME | -p PREFIX] [--fix] [--json]\n";
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_doctor_report r = {0};
	struct menv_buf text = MENV_BUF_INIT;
	char *prefix = NULL;
	int rc, faults = 0;

	if ((rc = menv_cli_parse(argc, argv, "npjZh", use, 0, 0, &a)))
		return MENV_CLI_EXIT(rc);
	if (!(rc = menv_config_load(&cfg, &err)) &&
	    !(rc = (prefix = menv_cli_prefix(&cfg, a.name, a.prefix, &err)) ? 0 : err.code))
		rc = menv_env_doctor(&cfg, prefix, a.fix, !a.name && !a.prefix, &r, &err);
	if (!rc) {
		json_t *j = menv_doctor_report_json(&r, prefix, &faults, a.json ? NULL : &text);
		fputs(text.buf ? text.buf : "", stdout);
		if (a.json)
			menv_cli_put_json(j, false);
		else
			json_decref(j);
	}
	menv_buf_release(&text);
	menv_doctor_report_release(&r);
	menv_config_release(&cfg);
	menv_cli_args_release(&a);
	free(prefix);
	return rc ? menv_cli_fail(&err) : faults ? MENV_EXIT_FAIL : MENV_EXIT_OK;
}
