/*
 * cmd_export.c - `menv export`: an environment as a lockfile or an environment file.
 *   --format conda-lock (default)  conda-lock.yml v1 (CEP-37): URLs, md5 + sha256, depends,
 *                                  pip packages as `manager: pip`
 *   --format explicit              @EXPLICIT with `#sha256:` (CEP-23), `# pip name @ URL`
 *   --format environment           conda env export's environment.yml (name=version=build,
 *                                  `- pip:` with name==version); --no-builds; --from-history
 *                                  (the specs, channels and pip section the user asked for)
 *   --json                         the environment as JSON (conda env export --json) or, with
 *                                  --format conda-lock/explicit, the lockfile model
 * Pip-installed packages are the dist-info folders no conda record owns (BR-021).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv export [-n NAME | -p PREFIX] [--format conda-lock|explicit|environment]\n"    \
	"                   [--no-builds] [--from-history] [--json] [--file FILE]\n"

int menv_cmd_export(int argc, char **argv)
{
	struct menv_cli_args o = {0};
	struct menv_error err = {0};
	struct menv_buf out = MENV_BUF_INIT;
	struct menv_txn_callbacks cb = {.event = menv_cli_on_event};
	int rc = 0;

	/* `env export` (cmd_env.c calls it so) shows its own usage */
	const char *usage = !strcmp(argv[0], "env export")
	                            ? "usage: menv env export [-n NAME | -p PREFIX] [--format "
	                              "environment|conda-lock|explicit]\n"
	                              "                       [--no-builds] [--from-history] "
	                              "[--json] [--file FILE]\n"
	                            : USAGE;
	if ((rc = menv_cli_parse(argc, argv, "npFfjBHh", usage, 0, 0, &o)))
		return MENV_CLI_EXIT(rc);
	struct menv_export_request req = {o.name,         o.prefix, o.format, o.no_builds,
	                                  o.from_history, o.json,   &cb};
	rc = menv_env_export(&req, &out, &err);
	if (!rc && o.file)
		rc = menv_write_file_atomic(o.file, out.buf, out.len, &err);
	else if (!rc)
		fwrite(out.buf, 1, out.len, stdout);
	menv_buf_release(&out);
	menv_cli_args_release(&o);
	return rc ? menv_cli_fail(&err) : 0;
}
