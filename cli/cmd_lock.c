/*
 * cmd_lock.c - `menv lock`: an environment file solved for one or more platforms into one
 * conda-lock.yml v1 (CEP-37), or `--check` of an existing lock against its source; the
 * library does both (menv_lock_env in envs/lock.c: virtual packages, content hashes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv lock -f environment.yml [--platform P]... [--virtual-package "                \
	"[P:]NAME=VERSION[=BUILD]]...\n                 [-c CHANNEL]... [--override-channels] "    \
	"[--lockfile FILE] [--check] [-q]\n"

int menv_cmd_lock(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	struct menv_strvec stale = MENV_STRVEC_INIT;
	struct menv_buf out = MENV_BUF_INIT;
	struct menv_cli_draw d;
	struct menv_txn_callbacks cb;
	int rc = 0, code = 0;

	if ((rc = menv_cli_parse(argc, argv, "fQVcOlGqh", USAGE, 0, 0, &a)))
		return MENV_CLI_EXIT(rc);
	const char *file = a.file ? a.file : "environment.yml";
	const char *dest = a.lockfile ? a.lockfile : "conda-lock.yml";
	menv_cli_draw_init(&d, &cb, a.quiet, false, false);
	struct menv_lock_request req = {file,        a.check ? dest : NULL, &a.platforms,
	                                &a.virtuals, &a.channels,           a.override_channels,
	                                &cb};
	rc = menv_lock_env(&req, &lf, &stale, &err);
	if (rc)
		goto out;
	if (a.check) {
		for (size_t i = 0; i < stale.n; i++)
			printf("%s: %s is out of date for %s\n", dest, dest, stale.v[i]);
		if (!stale.n)
			printf("%s is up to date with %s for %zu platform%s\n", dest, file,
			       a.platforms.n, MENV_CLI_S(a.platforms.n));
		code = stale.n ? MENV_EXIT_FAIL : 0;
		goto out;
	}
	rc = menv_lockfile_write_conda_lock(lf, &out, &err);
	if (rc)
		goto out;
	menv_buf_redact(&out); /* no credentials or tokens in the lockfile */
	if (!strcmp(dest, "-"))
		fwrite(out.buf, 1, out.len, stdout);
	else
		rc = menv_write_file_atomic(dest, out.buf, out.len, &err);
	if (!rc && !a.quiet && strcmp(dest, "-"))
		fprintf(stderr, "Wrote %s: %zu package%s for %zu platform%s\n", dest, lf->npkgs,
		        MENV_CLI_S(lf->npkgs), a.platforms.n, MENV_CLI_S(a.platforms.n));
out:
	if (rc)
		code = menv_cli_fail(&err);
	menv_lockfile_free(lf);
	menv_buf_release(&out);
	menv_strvec_clear(&stale);
	menv_cli_args_release(&a);
	return code;
}
