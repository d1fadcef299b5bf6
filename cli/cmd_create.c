/*
 * cmd_create.c - `menv create`: specs or an environment file -> channels -> repodata ->
 * solve -> package cache -> new prefix. Prints the transaction like conda (or conda's JSON
 * shape with --json); --dry-run stops after the solve.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "envs.h"
#include "fetch.h"
#include "solver.h"

struct create_opts {
	const char *name, *prefix, *file, *env;
	struct menv_strvec cli_channels;
	bool override_channels, dry_run, json, quiet, offline;
	int priority; /* 0: from the settings, 1: --strict-channel-priority, 2: --no-channel-priority */
	bool no_smoke; /* --no-smoke-check */
};

static void human_size(int64_t n, char *out, size_t len)
{
	if (n < 0)
		snprintf(out, len, "-");
	else if (n < 1000)
		snprintf(out, len, "%lld B", (long long)n);
	else if (n < 1000 * 1000)
		snprintf(out, len, "%.1f kB", (double)n / 1e3);
	else if (n < 1000LL * 1000 * 1000)
		snprintf(out, len, "%.1f MB", (double)n / 1e6);
	else
		snprintf(out, len, "%.1f GB", (double)n / 1e9);
}

static void print_transaction(const char *prefix, const char *pkgs_dir,
                              const struct menv_record *const *recs, size_t n)
{
	int64_t total = 0;
	size_t cached = 0;
	char sz[32];

	printf("\nTransaction\n\n  Prefix: %s\n\n", prefix);
	if (!n) {
		printf("  Nothing to install: an empty environment\n\n");
		return;
	}
	printf("  Install (%zu package%s):\n\n", n, n == 1 ? "" : "s");
	printf("  %-28s %-16s %-26s %-24s %10s\n", "Package", "Version", "Build", "Channel",
	       "Size");
	for (size_t i = 0; i < n; i++) {
		const struct menv_record *r = recs[i];
		human_size(r->size, sz, sizeof(sz));
		printf("  + %-26s %-16s %-26s %-24s %10s\n", r->name, r->version, r->build,
		       r->channel ? r->channel->name : "", sz);
		if (menv_pkgcache_has(pkgs_dir, r))
			cached++;
		else if (r->size > 0)
			total += r->size;
	}
	human_size(total, sz, sizeof(sz));
	/* as conda: only what is not in the package cache is downloaded */
	if (cached == n)
		printf("\n  Total download: nothing (every package is in %s)\n\n", pkgs_dir);
	else
		printf("\n  Total download: %s%s\n\n", sz,
		       cached ? " (the others are in the package cache)" : "");
}

/* Is the record already extracted in the package cache with the same hash? (conda's FETCH
 * lists only what has to be downloaded) */
static void print_json(const char *prefix, const char *pkgs_dir,
                       const struct menv_record *const *recs, size_t n, bool dry_run, json_t *smoke)
{
	json_t *root = json_object(), *actions = json_object();
	json_t *link = json_array(), *fetch = json_array();
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(link, menv_cli_record_json(recs[i]));
		if (!dry_run || !menv_pkgcache_has(pkgs_dir, recs[i]))
			json_array_append_new(fetch, menv_cli_record_json(recs[i]));
	}
	json_object_set_new(actions, "LINK", link);
	json_object_set_new(actions, "FETCH", fetch);
	json_object_set_new(actions, "PREFIX", json_string(prefix));
	json_object_set_new(root, "actions", actions);
	json_object_set_new(root, "prefix", json_string(prefix));
	json_object_set_new(root, "dry_run", json_boolean(dry_run));
	json_object_set_new(root, "success", json_true());
	if (smoke) /* the smoke check's report (a failed check still created the env) */
		json_object_set(root, "smoke_check", smoke);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("%s\n", s);
	free(s);
	json_decref(root);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: menv create (-n NAME | -p PREFIX) [-c CHANNEL]... [--override-channels]\n"
	        "                   [--strict-channel-priority | --no-channel-priority]\n"
	        "                   [--no-smoke-check]\n"
	        "                   [--dry-run] [--offline] [--json] [-q] [-y] SPEC...\n"
	        "       menv create -f environment.yml [-n NAME | -p PREFIX] [options]\n");
}

int menv_cmd_create(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'},
	        {"prefix", required_argument, NULL, 'p'},
	        {"file", required_argument, NULL, 'f'},
	        {"environment", required_argument, NULL, 'e'}, /* pixi.lock environment */
	        {"channel", required_argument, NULL, 'c'},
	        {"override-channels", no_argument, NULL, 'O'},
	        {"dry-run", no_argument, NULL, 'd'},
	        {"json", no_argument, NULL, 'j'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"offline", no_argument, NULL, 'o'},
	        {"strict-channel-priority", no_argument, NULL, 'S'},
	        {"no-channel-priority", no_argument, NULL, 'N'},
	        {"no-smoke-check", no_argument, NULL, 'K'},
	        {"yes", no_argument, NULL, 'y'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct create_opts o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_envfile *ef = NULL;
	struct menv_strvec specs_str = MENV_STRVEC_INIT;
	struct menv_matchspec **specs = NULL;
	struct menv_cli_channels l = {0};
	struct menv_solver *solver = NULL;
	const struct menv_record **recs = NULL;
	size_t nspecs = 0, nrecs = 0;
	char *prefix = NULL, *cmdline = NULL, *once = NULL; /* once: a copy of a piped -f */
	int c, rc = 0, exit_code = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:p:f:e:c:dqyh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.name = optarg; break;
		case 'p': o.prefix = optarg; break;
		case 'f': o.file = optarg; break;
		case 'e': o.env = optarg; break;
		case 'c': menv_strvec_push(&o.cli_channels, optarg); break;
		case 'O': o.override_channels = true; break;
		case 'd': o.dry_run = true; break;
		case 'j':
			o.json = true;
			o.quiet = true;
			break;
		case 'q': o.quiet = true; break;
		case 'o': o.offline = true; break;
		case 'S': o.priority = 1; break;
		case 'N': o.priority = 2; break;
		case 'K': o.no_smoke = true; break;
		case 'y': break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return MENV_EXIT_USAGE;
		}
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	if (o.offline)
		cfg.offline = true; /* repodata from the cache only */
	if (o.priority)
		cfg.channel_priority =
		        o.priority == 1 ? MENV_PRIORITY_STRICT : MENV_PRIORITY_DISABLED;
	if (o.file) {
		once = menv_cli_file_once(o.file, &err);
		if (err.code) {
			rc = err.code;
			goto out;
		}
		if (once)
			o.file = once;
	}
	if (o.file && menv_cli_is_lockfile(o.file)) {
		/* a lockfile: its records as they are, no repodata, no solve (lockinstall.c) */
		struct menv_cli_lock_opts lo = {
		        .file = o.file,
		        .env = o.env,
		        .name = o.name,
		        .prefix = o.prefix,
		        .dry_run = o.dry_run,
		        .json = o.json,
		        .quiet = o.quiet,
		        .smoke = !o.no_smoke,
		};
		exit_code = menv_cli_create_from_lock(&cfg, &lo);
		goto out;
	}
	if (o.file) {
		rc = menv_envfile_load(o.file, &ef, &err);
		if (rc)
			goto out;
		menv_cli_envfile_warnings(ef);
		menv_cli_drop_reserved_vars(&ef->var_names, &ef->var_values, o.file);
		if (!o.name && !o.prefix) {
			if (ef->name)
				o.name = ef->name;
			else if (ef->prefix)
				o.prefix = ef->prefix;
		}
		for (size_t i = 0; i < ef->deps.n; i++)
			menv_strvec_push(&specs_str, ef->deps.v[i]);
	}
	for (int i = optind; i < argc; i++)
		menv_strvec_push(&specs_str, argv[i]);
	menv_cli_envfile_specs(ef, &o.cli_channels, &specs_str); /* pip: BR-003, chan:: BR-023 */
	if (o.name && !strcmp(o.name, "base")) {
		/* conda's rule: `base` names the root environment, it is never created */
		rc = menv_error_set(&err, MENV_EUSAGE,
		                    "'base' is the root environment's name; "
		                    "choose another name for a new environment");
		goto out;
	}
	prefix = menv_cli_prefix(&cfg, o.name, o.prefix, &err);
	if (!prefix) {
		rc = err.code;
		goto out;
	}
	rc = menv_env_check_prefix(prefix, &err);
	if (rc)
		goto out;
	if (!o.dry_run && menv_cli_prefix_in_use(prefix)) {
		/* checked again when linking; failing early saves the downloads */
		rc = menv_error_set(&err, MENV_EEXIST, "prefix '%s' already exists", prefix);
		goto out;
	}

	/* specs */
	specs = menv_xcalloc(specs_str.n + 1, sizeof(*specs));
	for (size_t i = 0; i < specs_str.n; i++) {
		rc = menv_matchspec_parse(specs_str.v[i], &specs[nspecs], &err);
		if (rc) {
			if (o.file)
				menv_error_prefix(&err, "%s", o.file);
			goto out;
		}
		nspecs++;
	}

	if (nspecs) {
		/* channels in conda's order: -c, the file's, then the configured ones unless
		 * --override-channels or `nodefaults`; `chan::pkg` specs add theirs (BR-005) */
		rc = menv_cli_load_channels(&cfg, &o.cli_channels, ef ? &ef->channels : NULL,
		                            o.override_channels, specs, nspecs, o.quiet, &l, &err);
		if (rc)
			goto out;
		if (!l.nchans) {
			rc = menv_error_set(&err, MENV_EUSAGE,
			                    "no channels: give -c CHANNEL or list channels in the "
			                    "environment file or .condarc");
			goto out;
		}
		solver = menv_solver_new(cfg.subdir, cfg.channel_priority);
		menv_solver_set_add_pip(solver, cfg.add_pip_as_python_dependency); /* menv-solve */
		rc = menv_cli_channels_to_solver(&l, solver, &err);
		if (rc)
			goto out;
		struct menv_matchspec **pins = NULL;
		size_t npins = 0;
		rc = menv_cli_load_pins(&cfg, NULL, &pins, &npins, &err);
		for (size_t i = 0; i < npins; i++) {
			menv_solver_add_pin(solver, pins[i]);
			menv_matchspec_free(pins[i]);
		}
		free(pins);
		if (rc)
			goto out;
		struct menv_virtual virt[8];
		size_t nv = menv_virtual_detect_subdir(cfg.subdir, virt,
		                                       8); /* menv-solve: the target's */
		for (size_t i = 0; i < nv; i++)
			menv_solver_add_virtual(solver, virt[i].name, virt[i].version,
			                        virt[i].build);
		rc = menv_solver_solve(solver, specs, nspecs, &recs, &nrecs, &err);
		if (rc == MENV_EUNSAT && !o.quiet)
			fprintf(stderr, "%s", menv_solver_problems(solver));
		if (rc)
			goto out;
	}

	if (o.json && o.dry_run)
		print_json(prefix, cfg.pkgs_dir, recs, nrecs, true, NULL);
	else if (!o.json)
		print_transaction(prefix, cfg.pkgs_dir, recs, nrecs);
	if (o.dry_run) {
		if (!o.json)
			printf("Dry run: nothing was changed.\n");
		goto out;
	}
	if (nrecs) {
		if (!o.quiet)
			fprintf(stderr, "Fetching packages into %s\n", cfg.pkgs_dir);
		struct menv_fetch_opts fo;
		struct menv_cli_progress prog;
		menv_fetch_opts_from_config(&fo, &cfg);
		fo.cancel = (volatile int *)&menv_cli_cancel;
		menv_cli_progress_init(&prog, &fo, o.quiet || o.json);
		bool lines_off = o.quiet || fo.progress; /* a bar on a terminal, else lines */
		rc = menv_pkgcache_fetch_opts(cfg.pkgs_dir, (struct menv_record *const *)recs,
		                              nrecs, &fo, menv_cli_on_fetch, &lines_off, &err);
		if (rc)
			goto out;
	}
	struct menv_strvec requested = MENV_STRVEC_INIT;
	for (size_t i = 0; i < nspecs; i++)
		menv_strvec_push_owned(&requested, menv_matchspec_str(specs[i]));
	cmdline = menv_cli_cmdline();
	struct menv_install_opts io = {
	        .pkgs_dir = cfg.pkgs_dir,
	        .requested = &requested,
	        .cmdline = cmdline,
	        .cancel = (volatile int *)&menv_cli_cancel,
	        .var_names = ef ? &ef->var_names : NULL,
	        .var_values = ef ? &ef->var_values : NULL,
	        .cb = menv_cli_env_event,
	};
	menv_cli_link_settings(&cfg, &io);
	struct menv_link_stats st;
	rc = menv_env_create(prefix, recs, nrecs, &io, &st, &err);
	menv_strvec_clear(&requested);
	if (!rc) /* in the final prefix: the pip: section; a failure removes it (lockinstall.c) */
		rc = menv_cli_after_create(&cfg, prefix, ef, &o.cli_channels, &specs_str, o.quiet,
		                           &err);
	if (rc)
		goto out;
	menv_cli_envreg_register(prefix); /* ~/.conda/environments.txt, as conda does */
	/* a CUDA environment proves itself: build and test ops/ with its own toolchain */
	json_t *smoke = NULL;
	bool want_smoke = !o.no_smoke && menv_cli_wants_smoke(&cfg, prefix);
	if (!o.json) {
		printf("Created %s: %zu packages, %zu files (%zu hardlinked, %zu copied, %zu "
		       "relocated)\n",
		       prefix, st.packages, st.files, st.hardlinks, st.copies, st.replaced);
		if (st.clobbered)
			printf("warning: %zu files were provided by more than one package; the "
			       "later package's copy was kept\n",
			       st.clobbered);
		fflush(stdout);
	}
	if (want_smoke)
		exit_code = menv_cli_smoke(prefix, o.json, false, false, o.json ? &smoke : NULL);
	if (o.json)
		print_json(prefix, cfg.pkgs_dir, recs, nrecs, false, smoke);
	json_decref(smoke);
out:
	if (rc) {
		if (o.json)
			menv_cli_print_json_error(&err, solver);
		exit_code = menv_cli_fail(&err);
	}
	free(recs);
	menv_solver_free(solver);
	menv_cli_channels_release(&l);
	for (size_t i = 0; i < nspecs; i++)
		menv_matchspec_free(specs[i]);
	free(specs);
	menv_strvec_clear(&specs_str);
	menv_strvec_clear(&o.cli_channels);
	menv_envfile_free(ef);
	menv_config_release(&cfg);
	free(prefix);
	free(cmdline);
	if (once) {
		unlink(once);
		free(once);
	}
	return exit_code;
}
