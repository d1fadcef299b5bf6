/*
 * cmd_smoke.c - `menv smoke [-n NAME | -p PREFIX] [--json] [--keep] [-v]`: builds and tests
 * the sample CUDA custom-op package (ops/) with the environment's own toolchain (envs/smoke.c)
 * and draws each step's verdict. Exit 0 when no step failed (a missing GPU is a skip, not a
 * failure), 1 when one did; the result goes to conda-meta/menv-smoke-check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv smoke [-n NAME | -p PREFIX] [--json] [--keep] [-v]\n\n"                       \
	"Builds menv's sample CUDA custom operator (ops/) with the environment's nvcc\n"           \
	"and host compiler and runs its tests (host, GPU, python, torch).\n"                       \
	"The sources come from $MENV_OPS_DIR, else " MENV_OPS_DIR ".\n"

int menv_cmd_smoke(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_cli_draw d = {0};
	struct menv_smoke_opts so = {.cb = menv_cli_on_smoke, .ctx = &d, .cancel = MENV_CLI_CANCEL};
	struct menv_smoke_result res;
	bool record_failed = false;
	char *prefix = NULL;
	int rc;

	if ((rc = menv_cli_parse(argc, argv, "npjkvh", USAGE, 0, 0, &a)))
		return MENV_CLI_EXIT(rc);
	d.json = a.json;
	d.verbose = a.verbose;
	so.keep_build = a.keep;
	const char *name = a.name, *path = a.prefix;
	rc = menv_config_load(&cfg, &err);
	if (rc)
		return menv_cli_fail(&err);
	prefix = menv_env_prefix_find(&cfg, name, path, &err);
	if (!prefix) {
		menv_config_release(&cfg);
		return menv_cli_fail(&err);
	}
	menv_cli_on_event(&d, MENV_ENV_SMOKE, prefix); /* "Smoke check of PREFIX ..." */
	rc = menv_env_smoke(prefix, &so, &res, &record_failed, &err);
	if (rc) {
		rc = menv_cli_fail(&err);
	} else {
		if (d.json) {
			json_t *j = menv_smoke_result_json(&res);
			menv_cli_put_json(j, false);
		}
		rc = menv_cli_smoke_verdict(&d, &res, record_failed);
	}
	free(prefix);
	menv_config_release(&cfg);
	return rc;
}
