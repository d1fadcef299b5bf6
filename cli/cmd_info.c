/*
 * cmd_info.c - `menv index DIR` (a folder of packages made a channel, as conda-index does)
 * and `menv info [--json]`: version, locations, settings files, channels, this
 * machine's virtual packages (CEP-30) and the active environment, as menv_env_info reports
 * them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void lines(const char *label, json_t *a)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) printf("%17s : %s\n", i ? "" : label, json_string_value(v));
}

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
	json_t *j = menv_env_info(&cfg);
	menv_config_release(&cfg);
	if (json) {
		menv_cli_put_json(j, false);
		return 0;
	}
	const char *active = json_string_value(json_object_get(j, "active_prefix"));
	const char *name = json_string_value(json_object_get(j, "active_prefix_name"));
	json_int_t shlvl = json_integer_value(json_object_get(j, "shlvl"));
	printf("active environment : %s\n", active ? (name ? name : active) : "None");
	if (active)
		printf("active env location : %s\n", active);
	if (shlvl >= 0)
		printf("      shell level : %lld\n", (long long)shlvl);
	printf("     menv version : %s\n", MENV_VERSION);
	printf("      root prefix : %s\n", json_string_value(json_object_get(j, "root_prefix")));
	lines("package cache", json_object_get(j, "pkgs_dirs"));
	lines("envs directories", json_object_get(j, "envs_dirs"));
	printf("         platform : %s\n", json_string_value(json_object_get(j, "platform")));
	lines("config files", json_object_get(j, "config_files"));
	lines("channels", json_object_get(j, "channels"));
	lines("virtual packages", json_object_get(j, "virtual_pkgs"));
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
		printf("indexed %zu packages into %zu repodata.json files under %s\n", st.packages,
		       st.subdirs, a.args.v[0]);
	menv_cli_args_release(&a);
	return rc ? menv_cli_fail(&err) : 0;
}
