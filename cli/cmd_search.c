/*
 * cmd_search.c - queries of the channels: `menv search SPEC` (every matching record, newest
 * first, like conda search) and `menv repoquery depends|whoneeds [--tree] SPEC` (like mamba's
 * repoquery; with -n/-p, whoneeds looks at the installed packages of that environment).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "solver.h"

struct query_opts {
	const char *name, *prefix;
	struct menv_strvec channels;
	bool override_channels, json, tree;
};

static int parse(int argc, char **argv, struct query_opts *o, const char *use)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'},
	        {"prefix", required_argument, NULL, 'p'},
	        {"channel", required_argument, NULL, 'c'},
	        {"override-channels", no_argument, NULL, 'O'},
	        {"json", no_argument, NULL, 'j'},
	        {"tree", no_argument, NULL, 't'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:p:c:th", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->name = optarg; break;
		case 'p': o->prefix = optarg; break;
		case 'c': menv_strvec_push(&o->channels, optarg); break;
		case 'O': o->override_channels = true; break;
		case 'j': o->json = true; break;
		case 't': o->tree = true; break;
		case 'h': printf("%s", use); return 1;
		default: fprintf(stderr, "%s", use); return -1;
		}
	}
	return 0;
}

/* Loads the channels and a solver over them (no virtual packages: queries show everything). */
static int open_channels(const struct menv_config *cfg, struct query_opts *o,
                         struct menv_matchspec *ms, struct menv_cli_channels *ch,
                         struct menv_solver **solver, struct menv_error *err)
{
	int rc = menv_cli_load_channels(cfg, &o->channels, NULL, o->override_channels, &ms, 1, true,
	                                ch, err);
	if (rc)
		return rc;
	if (!ch->nchans)
		return menv_error_set(err, MENV_EUSAGE,
		                      "no channels: give -c CHANNEL or list "
		                      "channels in .condarc");
	*solver = menv_solver_new(cfg->subdir, cfg->channel_priority);
	return menv_cli_channels_to_solver(ch, *solver, err);
}

static void print_records(const struct menv_record *const *r, size_t n, bool json)
{
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, menv_cli_record_json(r[i]));
		char *s = json_dumps(arr, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(arr);
		return;
	}
	printf("%-28s %-16s %-28s %s\n", "# Name", "Version", "Build", "Channel");
	for (size_t i = 0; i < n; i++)
		printf("%-28s %-16s %-28s %s\n", r[i]->name, r[i]->version, r[i]->build,
		       r[i]->channel ? r[i]->channel->name : "");
}

int menv_cmd_search(int argc, char **argv)
{
	struct query_opts o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_cli_channels ch = {0};
	struct menv_solver *solver = NULL;
	struct menv_matchspec *ms = NULL;
	const struct menv_record **recs = NULL;
	size_t n = 0;
	int rc, code = 0;

	rc = parse(argc, argv, &o,
	           "usage: menv search [-c CHANNEL]... [--override-channels] "
	           "[--json] SPEC\n");
	if (rc)
		return rc > 0 ? 0 : MENV_EXIT_USAGE;
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: menv search [-c CHANNEL]... [--override-channels] [--json] "
		                "SPEC\n");
		return MENV_EXIT_USAGE;
	}
	rc = menv_config_load(&cfg, &err);
	if (!rc)
		rc = menv_matchspec_parse(argv[optind], &ms, &err);
	if (!rc)
		rc = open_channels(&cfg, &o, ms, &ch, &solver, &err);
	if (!rc)
		rc = menv_solver_search(solver, ms, &recs, &n, &err);
	if (!rc && !n)
		rc = menv_error_set(&err, MENV_ENOTFOUND,
		                    "no package matches '%s' in the current "
		                    "channels",
		                    argv[optind]);
	if (rc)
		code = menv_cli_fail(&err);
	else
		print_records(recs, n, o.json);
	free(recs);
	menv_solver_free(solver);
	menv_cli_channels_release(&ch);
	menv_matchspec_free(ms);
	menv_strvec_clear(&o.channels);
	menv_config_release(&cfg);
	return code;
}

/* depends --tree: each dependency's newest matching record, recursively, each name once. */
static void print_tree(struct menv_solver *s, const struct menv_record *r, int depth,
                       struct menv_strvec *seen)
{
	printf("%*s%s%s %s %s%s\n", depth * 2, "", depth ? "└─ " : "", r->name, r->version,
	       r->build, menv_strvec_contains(seen, r->name) ? " (shown above)" : "");
	if (menv_strvec_contains(seen, r->name))
		return;
	menv_strvec_push(seen, r->name);
	json_t *deps = menv_record_depends(r), *d;
	size_t i;
	json_array_foreach(deps, i, d)
	{
		struct menv_matchspec *ms = NULL;
		struct menv_error err;
		const struct menv_record **m = NULL;
		size_t n = 0;
		if (!json_is_string(d) || menv_matchspec_parse(json_string_value(d), &ms, &err))
			continue;
		if (!menv_solver_search(s, ms, &m, &n, &err) && n)
			print_tree(s, m[0], depth + 1, seen);
		else
			printf("%*s└─ %s (not in the channels)\n", (depth + 1) * 2, "",
			       json_string_value(d));
		free(m);
		menv_matchspec_free(ms);
	}
}

int menv_cmd_repoquery(int argc, char **argv)
{
	const char *use = "usage: menv repoquery depends|whoneeds [-n NAME | -p PREFIX] "
	                  "[-c CHANNEL]... [--override-channels] [--tree] [--json] SPEC\n";
	struct query_opts o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_cli_channels ch = {0};
	struct menv_solver *solver = NULL;
	struct menv_matchspec *ms = NULL;
	const struct menv_record **recs = NULL;
	size_t n = 0;
	int rc, code = 0;

	if (argc < 2 || (strcmp(argv[1], "depends") && strcmp(argv[1], "whoneeds"))) {
		fprintf(stderr, "%s", use);
		return MENV_EXIT_USAGE;
	}
	bool whoneeds = !strcmp(argv[1], "whoneeds");
	rc = parse(argc - 1, argv + 1, &o, use);
	if (rc)
		return rc > 0 ? 0 : MENV_EXIT_USAGE;
	if (optind + 1 != argc - 1) {
		fprintf(stderr, "%s", use);
		return MENV_EXIT_USAGE;
	}
	const char *spec = argv[optind + 1];
	rc = menv_config_load(&cfg, &err);
	if (!rc)
		rc = menv_matchspec_parse(spec, &ms, &err);
	if (rc)
		goto out;
	if (whoneeds && (o.name || o.prefix)) {
		/* installed packages of an environment that depend on the name */
		struct menv_prefix_record *pr = NULL;
		size_t np = 0;
		char *prefix = menv_cli_prefix(&cfg, o.name, o.prefix, &err);
		rc = prefix ? menv_prefix_records_load(prefix, &pr, &np, &err) : err.code;
		json_t *arr = json_array();
		for (size_t i = 0; !rc && i < np; i++) {
			json_t *deps = json_object_get(pr[i].json, "depends"), *d;
			size_t k;
			json_array_foreach(deps, k, d)
			{
				const char *ds = json_string_value(d);
				size_t l = ds ? strcspn(ds, " =<>!~[") : 0;
				if (ds && l == strlen(ms->name) && !strncmp(ds, ms->name, l)) {
					json_array_append_new(
					        arr,
					        json_pack("{s:s,s:s,s:s,s:s}", "name", pr[i].name,
					                  "version", pr[i].version, "build",
					                  pr[i].build, "depends", ds));
					break;
				}
			}
		}
		if (!rc && o.json) {
			char *s = json_dumps(arr, JSON_INDENT(2));
			printf("%s\n", s);
			free(s);
		} else if (!rc) {
			size_t k;
			json_t *e;
			printf("%-28s %-16s %-28s %s\n", "# Name", "Version", "Build",
			       "Depends on");
			json_array_foreach(arr, k, e)
			        printf("%-28s %-16s %-28s %s\n",
			               json_string_value(json_object_get(e, "name")),
			               json_string_value(json_object_get(e, "version")),
			               json_string_value(json_object_get(e, "build")),
			               json_string_value(json_object_get(e, "depends")));
		}
		json_decref(arr);
		menv_prefix_records_free(pr, np);
		free(prefix);
		goto out;
	}
	rc = open_channels(&cfg, &o, ms, &ch, &solver, &err);
	if (rc)
		goto out;
	if (whoneeds) {
		rc = menv_solver_whoneeds(solver, ms->name, &recs, &n, &err);
		if (!rc)
			print_records(recs, n, o.json);
		goto out;
	}
	rc = menv_solver_search(solver, ms, &recs, &n, &err);
	if (!rc && !n)
		rc = menv_error_set(&err, MENV_ENOTFOUND,
		                    "no package matches '%s' in the current "
		                    "channels",
		                    spec);
	if (rc)
		goto out;
	if (o.tree && !o.json) {
		struct menv_strvec seen = MENV_STRVEC_INIT;
		print_tree(solver, recs[0], 0, &seen);
		menv_strvec_clear(&seen);
		goto out;
	}
	/* the dependencies of the newest matching record */
	json_t *deps = menv_record_depends(recs[0]);
	if (o.json) {
		json_t *j = json_pack("{s:o,s:O}", "package", menv_cli_record_json(recs[0]),
		                      "depends", deps);
		char *s = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(j);
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
	menv_solver_free(solver);
	menv_cli_channels_release(&ch);
	menv_matchspec_free(ms);
	menv_strvec_clear(&o.channels);
	menv_config_release(&cfg);
	return code;
}
