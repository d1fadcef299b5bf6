/*
 * cmd_search.c - queries of the channels: `menv search SPEC` (every matching record, newest
 * first, like conda search) and `menv repoquery depends|whoneeds [--tree] SPEC` (like mamba's
 * repoquery; with -n/-p, whoneeds looks at the installed packages of that environment).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_records(const struct menv_record *const *r, size_t n, bool json)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, menv_record_json(r[i]));
	if (json)
		menv_cli_put_json(json_incref(arr), false);
	else
		menv_cli_packages(arr);
	json_decref(arr);
}

int menv_cmd_search(int argc, char **argv)
{
	struct menv_cli_args o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_query *q = NULL;
	struct menv_matchspec *ms = NULL;
	const struct menv_record **recs = NULL;
	size_t n = 0;
	int rc, code = 0;

	const char *use =
	        "usage: menv search [-c CHANNEL]... [--override-channels] [--offline] [--json] "
	        "SPEC\n";
	if ((rc = menv_cli_parse(argc, argv, "cOojth", use, 1, 1, &o)))
		return MENV_CLI_EXIT(rc);
	rc = menv_config_load(&cfg, &err);
	cfg.offline = cfg.offline || o.offline; /* conda search --offline: cached repodata */
	if (!rc)
		rc = menv_matchspec_parse(o.args.v[0], &ms, &err);
	if (!rc)
		rc = menv_query_open(&cfg, &o.channels, o.override_channels, ms, MENV_CLI_CANCEL,
		                     &q, &err);
	if (!rc)
		rc = menv_query_find(q, ms, o.args.v[0], &recs, &n, &err);
	if (rc)
		code = menv_cli_fail(&err);
	else
		print_records(recs, n, o.json);
	free(recs);
	menv_query_free(q);
	menv_matchspec_free(ms);
	menv_cli_args_release(&o);
	menv_config_release(&cfg);
	return code;
}

int menv_cmd_repoquery(int argc, char **argv)
{
	const char *use = "usage: menv repoquery depends|whoneeds [-n NAME | -p PREFIX] "
	                  "[-c CHANNEL]... [--override-channels] [--offline] [--tree] [--json] "
	                  "SPEC\n"
	                  "  whoneeds: the installed packages of -n/-p, or of the active "
	                  "environment when no -c is given\n";
	struct menv_cli_args o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_query *q = NULL;
	struct menv_matchspec *ms = NULL;
	const struct menv_record **recs = NULL;
	size_t n = 0;
	int rc, code = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		menv_cli_help(stdout, use, "npcOojth");
		return 0;
	}
	if (argc < 2 || (strcmp(argv[1], "depends") && strcmp(argv[1], "whoneeds"))) {
		fprintf(stderr, "%s", use);
		return MENV_EXIT_USAGE;
	}
	bool whoneeds = !strcmp(argv[1], "whoneeds");
	if ((rc = menv_cli_parse(argc - 1, argv + 1, "npcOojth", use, 1, 1, &o)))
		return MENV_CLI_EXIT(rc);
	const char *spec = o.args.v[0];
	rc = menv_config_load(&cfg, &err);
	cfg.offline = cfg.offline || o.offline;
	if (!rc)
		rc = menv_matchspec_parse(spec, &ms, &err);
	if (rc)
		goto out;
	/* whoneeds: the installed packages of -n/-p, else of the active environment unless
	 * channels are named (micromamba's repoquery: the local prefix by default) */
	const char *active = getenv("CONDA_PREFIX");
	if (whoneeds &&
	    (o.name || o.prefix || (active && *active && !o.channels.n && !o.override_channels))) {
		char *prefix = menv_env_prefix_find(&cfg, o.name, o.prefix, &err);
		struct menv_buf text = MENV_BUF_INIT;
		json_t *arr = NULL;
		rc = prefix ? menv_env_whoneeds(prefix, ms->name, &arr, o.json ? NULL : &text, &err)
		            : err.code;
		if (!rc && o.json)
			menv_cli_put_json(json_incref(arr), false);
		menv_cli_put_text(menv_buf_detach(&text));
		json_decref(arr);
		free(prefix);
		goto out;
	}
	rc = menv_query_open(&cfg, &o.channels, o.override_channels, ms, MENV_CLI_CANCEL, &q, &err);
	if (rc)
		goto out;
	if (whoneeds) {
		rc = menv_query_whoneeds(q, ms->name, &recs, &n, &err);
		if (!rc)
			print_records(recs, n, o.json);
		goto out;
	}
	rc = menv_query_find(q, ms, spec, &recs, &n, &err);
	if (rc)
		goto out;
	if (o.tree && !o.json) {
		struct menv_strvec lines = MENV_STRVEC_INIT;
		struct menv_strset seen = MENV_STRSET_INIT;
		menv_query_tree(q, recs[0], 0, &seen, &lines);
		for (size_t i = 0; i < lines.n; i++)
			puts(lines.v[i]);
		menv_strvec_clear(&lines);
		menv_strset_clear(&seen);
		goto out;
	}
	/* the dependencies of the newest matching record */
	json_t *deps = menv_record_depends(recs[0]);
	if (o.json) {
		json_t *j = json_pack("{s:o,s:O}", "package", menv_record_json(recs[0]), "depends",
		                      deps);
		menv_cli_put_json(j, false);
	} else {
		size_t i;
		json_t *d;
		printf("%s %s %s depends on:\n", recs[0]->name, recs[0]->version, recs[0]->build);
		json_array_foreach(deps, i, d) printf("  %s\n", json_string_value(d));
	}
out:
	if (rc)
		code = menv_cli_fail(&err);
	free(recs);
	menv_query_free(q);
	menv_matchspec_free(ms);
	menv_cli_args_release(&o);
	menv_config_release(&cfg);
	return code;
}
