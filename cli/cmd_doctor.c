/*
 * cmd_doctor.c - `menv doctor [-n NAME | -p PREFIX] [--fix] [--json]`: envs/doctor.c's
 * findings, one line each (two for the CUDA toolchain); exit 1 when a fault remains. Stale
 * registry lines of other environments are looked for only when no environment is named
 * (the active one is checked), and are notes with the hint to --fix, not this one's faults.
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
	char *prefix = NULL;
	int rc, faults = 0;
	static const char *const kinds[] = {
	        "corrupt-record", "missing-file",         "changed-file",
	        "link-out",       "stale-registry",       "toolchain",
	        "cuda-home",      "stale-registry-other", "host-compiler"};
	size_t others = 0;

	if ((rc = menv_cli_parse(argc, argv, "npjZh", use, 0, 0, &a)))
		return MENV_CLI_EXIT(rc);
	if (!(rc = menv_config_load(&cfg, &err)) &&
	    !(rc = (prefix = menv_env_prefix_find(&cfg, a.name, a.prefix, &err)) ? 0 : err.code))
		rc = menv_env_doctor(&cfg, prefix, a.fix, !a.name && !a.prefix, &r, &err);
	json_t *j = json_array();
	for (size_t i = 0; !rc && i < r.n; i++) {
		const struct menv_doctor_finding *f = &r.findings[i];
		bool note = f->kind == MENV_DOCTOR_TOOLCHAIN || f->kind == MENV_DOCTOR_STALE_OTHER;
		faults += !note && !f->fixed;
		others += f->kind == MENV_DOCTOR_STALE_OTHER && !f->fixed;
		json_array_append_new(j, json_pack("{s:s,s:s,s:s,s:s,s:b}", "kind", kinds[f->kind],
		                                   "package", f->package, "path", f->path, "text",
		                                   f->text, "fixed", f->fixed));
		if (!a.json)
			printf("%s%s%s\n",
			       f->kind == MENV_DOCTOR_TOOLCHAIN     ? ""
			       : f->kind == MENV_DOCTOR_STALE_OTHER ? "note: "
			                                            : "problem: ",
			       f->text, f->fixed ? " (fixed)" : "");
	}
	/* other environments' stale lines are no problem of this one: a note, and the cure */
	if (!rc && !a.json && others)
		printf("note: %zu registry line%s of other environments name%s what is gone; "
		       "`menv doctor --fix` takes %s out of ~/.conda/environments.txt\n",
		       others, others == 1 ? "" : "s", others == 1 ? "s" : "",
		       others == 1 ? "it" : "them");
	if (!rc && !a.json)
		printf("%s: %zu package record%s, %zu file%s checked, %d problem%s left\n", prefix,
		       r.packages, r.packages == 1 ? "" : "s", r.files, MENV_CLI_S(r.files), faults,
		       faults == 1 ? "" : "s");
	if (!rc && a.json)
		menv_cli_put_json(json_pack("{s:s,s:o,s:i}", "prefix", prefix, "findings",
		                            json_incref(j), "problems", faults),
		                  false);
	json_decref(j);
	menv_doctor_report_release(&r);
	menv_config_release(&cfg);
	free(prefix);
	return rc ? menv_cli_fail(&err) : faults ? MENV_EXIT_FAIL : MENV_EXIT_OK;
}
