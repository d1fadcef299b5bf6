/*
 * cmd_clean.c - `menv clean`: frees the package cache like conda clean (--tarballs,
 * --packages for extracted packages no environment uses, --index-cache, --locks for
 * interrupted downloads and extractions, --all), under the cache lock.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The extracted package dirs ("<dist>") that environments under the root still use. */
static void used_packages(const struct menv_config *cfg, struct menv_strvec *keep)
{
	struct menv_strvec prefixes = MENV_STRVEC_INIT;
	DIR *d = opendir(cfg->envs_dir);
	struct dirent *de;

	menv_strvec_push(&prefixes, cfg->root_prefix);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			menv_strvec_push_owned(&prefixes,
			                       menv_xasprintf("%s/%s", cfg->envs_dir, de->d_name));
	if (d)
		closedir(d);
	for (size_t i = 0; i < prefixes.n; i++) {
		struct menv_prefix_record *recs = NULL;
		struct menv_error err;
		size_t n = 0;
		if (menv_prefix_records_load(prefixes.v[i], &recs, &n, &err))
			continue;
		for (size_t k = 0; k < n; k++) {
			const char *dir = json_string_value(
			        json_object_get(recs[k].json, "extracted_package_dir"));
			const char *base = dir ? strrchr(dir, '/') : NULL;
			char *dist = base ? menv_xstrdup(base + 1)
			                  : menv_xasprintf("%s-%s-%s", recs[k].name,
			                                   recs[k].version, recs[k].build);
			if (!menv_strvec_contains(keep, dist))
				menv_strvec_push(keep, dist);
			free(dist);
		}
		menv_prefix_records_free(recs, n);
	}
	menv_strvec_clear(&prefixes);
}

struct draw {
	json_t *list; /* --json */
};

static void on_removed(void *ud, const char *path, int64_t bytes)
{
	struct draw *d = ud;
	if (d->list)
		json_array_append_new(
		        d->list, json_pack("{s:s,s:I}", "path", path, "bytes", (json_int_t)bytes));
	else
		printf("  %-70s %8.1f MB\n", path, (double)bytes / 1e6);
}

int menv_cmd_clean(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"all", no_argument, NULL, 'a'},      {"tarballs", no_argument, NULL, 't'},
	        {"packages", no_argument, NULL, 'p'}, {"index-cache", no_argument, NULL, 'i'},
	        {"locks", no_argument, NULL, 'l'},    {"dry-run", no_argument, NULL, 'd'},
	        {"json", no_argument, NULL, 'j'},     {"yes", no_argument, NULL, 'y'},
	        {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
	};
	const char *use = "usage: menv clean [--all] [--tarballs] [--packages] [--index-cache] "
	                  "[--locks] [--dry-run] [--json]\n";
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_strvec keep = MENV_STRVEC_INIT;
	struct menv_clean_stats st;
	struct draw d = {NULL};
	unsigned what = 0;
	bool dry = false, json = false;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "atpildyh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			what |= MENV_CLEAN_TARBALLS | MENV_CLEAN_PACKAGES | MENV_CLEAN_INDEX |
			        MENV_CLEAN_TEMP;
			break;
		case 't': what |= MENV_CLEAN_TARBALLS; break;
		case 'p': what |= MENV_CLEAN_PACKAGES; break;
		case 'i': what |= MENV_CLEAN_INDEX; break;
		case 'l': what |= MENV_CLEAN_TEMP; break;
		case 'd': dry = true; break;
		case 'j': json = true; break;
		case 'y': break;
		case 'h': printf("%s", use); return 0;
		default: fprintf(stderr, "%s", use); return MENV_EXIT_USAGE;
		}
	}
	if (!what || optind != argc) {
		fprintf(stderr, "%s", use);
		return MENV_EXIT_USAGE;
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		return menv_cli_fail(&err);
	if (what & MENV_CLEAN_PACKAGES)
		used_packages(&cfg, &keep);
	if (json)
		d.list = json_array();
	else
		printf("%s %s:\n", dry ? "Would remove from" : "Removing from", cfg.pkgs_dir);
	rc = menv_pkgcache_clean(cfg.pkgs_dir, what, &keep, dry, on_removed, &d, &st, &err);
	if (!rc && json) {
		json_t *j = json_pack("{s:o,s:I,s:b,s:b}", "removed", d.list, "bytes",
		                      (json_int_t)st.bytes, "dry_run", dry, "success", 1);
		char *s = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(j);
		d.list = NULL;
	} else if (!rc) {
		printf("%s %zu entries, %.1f MB\n", dry ? "Would free" : "Freed", st.removed,
		       (double)st.bytes / 1e6);
	}
	json_decref(d.list);
	menv_strvec_clear(&keep);
	menv_config_release(&cfg);
	return rc ? menv_cli_fail(&err) : 0;
}
