/*
 * cmd_info.c - `menv info`: version, locations, settings files, channels and this machine's
 * virtual packages (CEP-30).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "solver.h"

int menv_cmd_info(int argc, char **argv)
{
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_strvec chans = MENV_STRVEC_INIT;
	struct menv_virtual virt[8];
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	size_t nv;

	if (argc > 1 && !json) {
		bool help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
		fprintf(help ? stdout : stderr, "usage: menv info [--json]\n");
		return help ? 0 : MENV_EXIT_USAGE;
	}
	if (menv_config_load(&cfg, &err))
		return menv_cli_fail(&err);
	struct menv_strvec dflt = MENV_STRVEC_INIT;
	menv_strvec_push(&dflt, "defaults");
	menv_channels_expand(cfg.channels.n ? &cfg.channels : &dflt, &cfg, &chans);
	menv_strvec_clear(&dflt);
	nv = menv_virtual_detect(virt, 8);
	/* the active environment, from the variables activation sets (as conda info) */
	const char *active = getenv("CONDA_PREFIX"), *active_name = getenv("CONDA_DEFAULT_ENV");
	const char *shlvl = getenv("CONDA_SHLVL");
	if (active && !*active)
		active = NULL;
	if (json) {
		json_t *j = json_object(), *jv = json_array(), *jc = json_array(),
		       *jf = json_array();
		for (size_t i = 0; i < nv; i++) {
			char *s = menv_xasprintf("%s=%s=%s", virt[i].name, virt[i].version,
			                         virt[i].build);
			json_array_append_new(jv, json_string(s));
			free(s);
		}
		for (size_t i = 0; i < chans.n; i++)
			json_array_append_new(jc, json_string(chans.v[i]));
		for (size_t i = 0; i < cfg.files.n; i++)
			json_array_append_new(jf, json_string(cfg.files.v[i]));
		json_object_set_new(j, "menv_version", json_string(MENV_VERSION));
		json_object_set_new(j, "root_prefix", json_string(cfg.root_prefix));
		json_object_set_new(j, "pkgs_dirs", json_pack("[s]", cfg.pkgs_dir));
		json_object_set_new(j, "envs_dirs", json_pack("[s]", cfg.envs_dir));
		json_object_set_new(j, "platform", json_string(cfg.subdir));
		json_object_set_new(j, "channels", jc);
		json_object_set_new(j, "config_files", jf);
		json_object_set_new(j, "virtual_pkgs", jv);
		json_object_set_new(j, "active_prefix", active ? json_string(active) : json_null());
		json_object_set_new(j, "active_prefix_name",
		                    active && active_name ? json_string(active_name) : json_null());
		json_object_set_new(j, "shlvl", json_integer(shlvl ? atoi(shlvl) : -1));
		char *s = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(j);
	} else {
		printf("active environment : %s\n",
		       active ? (active_name ? active_name : active) : "None");
		if (active)
			printf("active env location : %s\n", active);
		if (shlvl)
			printf("      shell level : %s\n", shlvl);
		printf("     menv version : %s\n", MENV_VERSION);
		printf("      root prefix : %s\n", cfg.root_prefix);
		printf("    package cache : %s\n", cfg.pkgs_dir);
		printf("envs directories : %s\n", cfg.envs_dir);
		printf("         platform : %s\n", cfg.subdir);
		for (size_t i = 0; i < cfg.files.n; i++)
			printf("%17s : %s\n", i ? "" : "config files", cfg.files.v[i]);
		for (size_t i = 0; i < chans.n; i++)
			printf("%17s : %s\n", i ? "" : "channels", chans.v[i]);
		for (size_t i = 0; i < nv; i++)
			printf("%17s : %s=%s=%s\n", i ? "" : "virtual packages", virt[i].name,
			       virt[i].version, virt[i].build);
	}
	menv_strvec_clear(&chans);
	menv_config_release(&cfg);
	return 0;
}
