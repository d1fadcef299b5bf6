/*
 * cmd_info.c - `menv index DIR` (a folder of packages made a channel, as conda-index does)
 * and `menv info [--json]`: version, locations, settings files, channels, this
 * machine's virtual packages (CEP-30) and the active environment, as menv_env_info reports
 * and writes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int menv_cmd_info(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	int rc;

	if ((rc = menv_cli_parse(argc, argv, "jh", "usage: menv info [--json]\n", 0, 0, &a)))
		return MENV_CLI_EXIT(rc);
	bool json = a.json;
	menv_cli_args_release(&a);
	if (menv_config_load(&cfg, &err))
		return menv_cli_fail(&err);
	struct menv_buf text = MENV_BUF_INIT;
	json_t *j = menv_env_info(&cfg, json ? NULL : &text);
	menv_config_release(&cfg);
	menv_cli_put_text(menv_buf_detach(&text));
	if (json)
		menv_cli_put_json(j, false);
	else
		json_decref(j);
	return 0;
}

int menv_cmd_index(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_error err = {0};
	struct menv_index_stats st = {0};
	int rc;

	if ((rc = menv_cli_parse(argc, argv, "h", "usage: menv index DIR\n", 1, 1, &a)))
		return MENV_CLI_EXIT(rc);
	rc = menv_index_channel(a.args.v[0], &st, &err);
	if (!rc)
		printf("indexed %zu package%s into %zu repodata.json file%s under %s\n",
		       st.packages, MENV_CLI_S(st.packages), st.subdirs, MENV_CLI_S(st.subdirs),
		       a.args.v[0]);
	menv_cli_args_release(&a);
	return rc ? menv_cli_fail(&err) : 0;
}
