/*
 * cmd_index.c - `menv index DIR`: turns a folder of packages into a channel (conda-index).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int menv_cmd_index(int argc, char **argv)
{
	struct menv_error err = {0};
	struct menv_index_stats st = {0};

	if (argc != 2 || argv[1][0] == '-') {
		bool help = argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
		fprintf(help ? stdout : stderr, "usage: menv index DIR\n");
		return help ? 0 : MENV_EXIT_USAGE;
	}
	if (menv_index_channel(argv[1], &st, &err))
		return menv_cli_fail(&err);
	printf("indexed %zu packages into %zu repodata.json files under %s\n", st.packages,
	       st.subdirs, argv[1]);
	return 0;
}
