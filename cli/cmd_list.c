/*
 * cmd_list.c - `menv list` (conda list's table or JSON); pip-installed distributions are listed
 * with channel `pypi`, editable ones (pip -e) `dev_0 <develop>` as conda lists them (`menv
 * export` is in cmd_export.c).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

static int list_revisions(const char *prefix, bool json)
{
	struct menv_error err = {0};
	struct menv_revision *revs = NULL;
	size_t n = 0;
	json_t *all = json_array();

	if (menv_history_load(prefix, &revs, &n, &err)) {
		json_decref(all);
		return menv_cli_fail(&err);
	}
	for (size_t i = 0; i < n; i++) {
		struct menv_revision_diff d = {0};
		const struct menv_revision *r = &revs[i];
		menv_revision_diff(r, &d);
		json_array_append_new(all, menv_revision_json(r, i, &d));
		if (!json) {
			printf("%s  (rev %zu)\n", r->date, i);
			for (size_t m = 0; m < d.changed.n; m++)
				printf("     %s\n", d.changed.v[m]);
			for (size_t m = 0; m < d.remove.n + d.install.n; m++) {
				bool rm = m < d.remove.n;
				const char *l = rm ? d.remove.v[m] : d.install.v[m - d.remove.n];
				printf("    %c%s\n", rm ? '-' : '+',
				       strstr(l, "::") ? strstr(l, "::") + 2 : l);
			}
			printf("\n");
		}
		menv_revision_diff_release(&d);
	}
	if (json)
		menv_cli_put_json(json_incref(all), false);
	json_decref(all);
	menv_history_free(revs, n);
	return 0;
}

static int load(struct menv_cli_args *o, struct menv_config *cfg, char **prefix,
                struct menv_prefix_record **recs, size_t *n, struct menv_error *err)
{
	int rc = menv_config_load(cfg, err);
	if (rc)
		return rc;
	*prefix = menv_env_prefix_find(cfg, o->name, o->prefix, err);
	if (!*prefix)
		return err->code;
	rc = menv_cli_recover(*prefix, err);
	if (rc)
		return rc;
	return menv_prefix_records_load(*prefix, recs, n, err);
}

/* One row of the listing: a conda package or a pip distribution (channel "pypi"). */
struct row {
	const char *name, *version, *build, *platform;
	char *channel; /* owned */
	long long build_number;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcasecmp(x->name, y->name);
	return c ? c : strcmp(x->channel, y->channel);
}

int menv_cmd_list(int argc, char **argv)
{
	struct menv_cli_args o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_prefix_record *recs = NULL;
	struct menv_pip_dist *pips = NULL;
	struct row *rows = NULL;
	size_t n = 0, npip = 0, nrows = 0;
	char *prefix = NULL;
	regex_t re;
	bool have_re = false;
	int rc, code = 0;

	const char *use = "usage: menv list [-n NAME | -p PREFIX] [--json] [--full-name] "
	                  "[--show-channel-urls] [REGEX]\n"
	                  "       menv list [-n NAME | -p PREFIX] --explicit [--md5]\n"
	                  "       menv list [-n NAME | -p PREFIX] --revisions [--json]\n";
	if ((rc = menv_cli_parse(argc, argv, "npjBRLUxMh", use, 0, 1, &o)))
		return MENV_CLI_EXIT(rc);
	const char *regex = o.args.n ? o.args.v[0] : NULL;
	if (o.revisions) {
		rc = menv_config_load(&cfg, &err);
		if (!rc) {
			prefix = menv_env_prefix_find(&cfg, o.name, o.prefix, &err);
			rc = prefix ? 0 : err.code;
		}
		code = rc ? menv_cli_fail(&err) : list_revisions(prefix, o.json);
		goto out;
	}
	/* conda list REGEX: the names it finds (case-insensitive); --full-name: the whole name */
	if (regex) {
		char *pat = o.full_name ? menv_xasprintf("^(%s)$", regex) : menv_xstrdup(regex);
		int e = regcomp(&re, pat, REG_EXTENDED | REG_ICASE | REG_NOSUB);
		free(pat);
		if (e) {
			char msg[256];
			regerror(e, &re, msg, sizeof(msg));
			menv_error_set(&err, MENV_EUSAGE, "invalid regular expression '%s': %s",
			               regex, msg);
			code = menv_cli_fail(&err);
			goto out;
		}
		have_re = true;
	}
	rc = load(&o, &cfg, &prefix, &recs, &n, &err);
	if (!rc) {
		struct menv_strvec warn = MENV_STRVEC_INIT;
		rc = menv_pip_list_checked(prefix, &pips, &npip, &warn, &err);
		menv_cli_warnings(&warn); /* unreadable dist-info folders, skipped */
		menv_strvec_clear(&warn);
	}
	if (rc) {
		code = menv_cli_fail(&err);
		goto out;
	}
	if (o.explicit_) { /* conda list --explicit [--md5]: a file `create -f` takes */
		printf("# This file may be used to create an environment using:\n# $ menv create "
		       "-n "
		       "NAME -f THIS_FILE\n# platform: %s\n@EXPLICIT\n",
		       cfg.subdir);
		for (size_t i = 0; i < n; i++) {
			const char *md5 = json_string_value(json_object_get(recs[i].json, "md5"));
			if (recs[i].url && (!have_re || !regexec(&re, recs[i].name, 0, NULL, 0)))
				printf("%s%s%s\n", recs[i].url, o.md5 && md5 ? "#" : "",
				       o.md5 && md5 ? md5 : "");
		}
		goto out;
	}
	rows = menv_xcalloc(n + npip + 1, sizeof(*rows));
	for (size_t i = 0; i < n; i++)
		rows[nrows++] = (struct row){
		        recs[i].name,
		        recs[i].version,
		        recs[i].build,
		        recs[i].subdir ? recs[i].subdir : "",
		        o.channel_urls
		                ? menv_channel_url(&cfg, recs[i].channel, recs[i].subdir)
		                : menv_channel_display(&cfg, recs[i].channel, recs[i].subdir),
		        recs[i].build_number};
	/* conda's rows of pip's distributions: `pypi_0 pypi`, and an editable one (pip -e)
	 * `dev_0 <develop>` */
	for (size_t i = 0; i < npip; i++)
		rows[nrows++] = (struct row){pips[i].name,
		                             pips[i].version,
		                             pips[i].editable ? "dev_0" : "pypi_0",
		                             "pypi",
		                             menv_xstrdup(pips[i].editable ? "<develop>" : "pypi"),
		                             0};
	size_t kept = 0;
	for (size_t i = 0; i < nrows; i++) {
		if (have_re && regexec(&re, rows[i].name, 0, NULL, 0) != 0)
			free(rows[i].channel);
		else
			rows[kept++] = rows[i];
	}
	nrows = kept;
	qsort(rows, nrows, sizeof(*rows), cmp_row); /* by name, as conda list sorts */
	if (o.json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < nrows; i++)
			json_array_append_new(
			        arr, json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "name",
			                       rows[i].name, "version", rows[i].version,
			                       "build_string", rows[i].build, "build_number",
			                       (json_int_t)rows[i].build_number, "channel",
			                       rows[i].channel, "platform", rows[i].platform));
		menv_cli_put_json(arr, false);
		goto out;
	}
	/* columns sized to their content, fitted to the terminal: the channel gives way, then
	 * the build */
	const char **cells = menv_xcalloc(4 * nrows + 1, sizeof(*cells));
	for (size_t i = 0; i < nrows; i++) {
		cells[4 * i] = rows[i].name;
		cells[4 * i + 1] = rows[i].version;
		cells[4 * i + 2] = rows[i].build;
		cells[4 * i + 3] = rows[i].channel;
	}
	printf("# packages in environment at %s:\n#\n", prefix);
	menv_cli_table("# ", (const char *const[]){"Name", "Version", "Build", "Channel"}, cells,
	               nrows, 4, 3, 2);
	free(cells);
out:
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].channel);
	free(rows);
	if (have_re)
		regfree(&re);
	menv_pip_dists_free(pips, npip);
	menv_prefix_records_free(recs, n);
	menv_config_release(&cfg);
	menv_cli_args_release(&o);
	free(prefix);
	return code;
}
