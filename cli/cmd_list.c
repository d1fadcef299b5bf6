/*
 * cmd_list.c - `menv list` (conda list's table or JSON); pip-installed distributions are listed
 * with channel `pypi` (`menv export` is in cmd_export.c).
 */
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

#define MAX_W(w, s) ((int)strlen(s) > (w) ? (int)strlen(s) : (w))
#include "envs.h"

struct env_opts {
	const char *name, *prefix;
	const char *regex; /* conda list REGEX, or NULL */
	bool json, no_builds, revisions, full_name;
};

static int parse(int argc, char **argv, struct env_opts *o, const char *use)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'}, {"prefix", required_argument, NULL, 'p'},
	        {"json", no_argument, NULL, 'j'},       {"no-builds", no_argument, NULL, 'B'},
	        {"revisions", no_argument, NULL, 'R'},  {"full-name", no_argument, NULL, 'F'},
	        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->name = optarg; break;
		case 'p': o->prefix = optarg; break;
		case 'j': o->json = true; break;
		case 'B': o->no_builds = true; break;
		case 'R': o->revisions = true; break;
		case 'F': o->full_name = true; break;
		case 'h': printf("%s", use); return 1;
		default: fprintf(stderr, "%s", use); return -1;
		}
	}
	if (optind < argc)
		o->regex = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "%s", use);
		return -1;
	}
	return 0;
}

/* The channel name to show for an installed record: its channel URL without the subdir,
 * shortened to the name under channel_alias. Caller frees. */
static char *channel_display(const struct menv_config *cfg, const struct menv_prefix_record *r)
{
	if (!r->channel || !*r->channel)
		return menv_xstrdup("");
	char *c = menv_xstrdup(r->channel);
	size_t n = strlen(c);
	if (r->subdir) {
		size_t sl = strlen(r->subdir);
		if (n > sl + 1 && c[n - sl - 1] == '/' && !strcmp(c + n - sl, r->subdir))
			c[n - sl - 1] = '\0';
	}
	size_t al = strlen(cfg->channel_alias);
	if (!strncmp(c, cfg->channel_alias, al) && c[al] == '/') {
		char *s = menv_xstrdup(c + al + 1);
		free(c);
		return s;
	}
	return c;
}

int menv_cli_recover(const char *prefix, struct menv_error *err)
{
	enum menv_recovery what = MENV_RECOVERY_NONE;
	char *pending = menv_xasprintf("%s/conda-meta/.menv-pip-pending", prefix);
	bool pip_pending = access(pending, F_OK) == 0, pip_undone = false;
	int fd = -1, rc;

	free(pending);
	if (!menv_env_needs_recovery(prefix) && !pip_pending)
		return 0;
	/* a transaction that a crash or Ctrl-C interrupted: finish or undo it first; then a pip
	 * step that a killed menv left half done */
	rc = menv_env_lock(prefix, false, menv_cli_env_event, NULL, &fd, err);
	if (!rc)
		rc = menv_env_recover(prefix, &what, err);
	if (!rc && pip_pending)
		rc = menv_cli_pip_recover(prefix, &pip_undone, err);
	menv_env_unlock(fd);
	if (!rc && pip_undone)
		fprintf(stderr, "menv: took back an interrupted pip step in '%s'\n", prefix);
	if (!rc && what != MENV_RECOVERY_NONE)
		fprintf(stderr, "menv: %s an interrupted transaction in '%s'\n",
		        what == MENV_RECOVERY_FINISHED ? "finished"
		        : what == MENV_RECOVERY_REMOVED
		                ? "removed the unfinished new environment of"
		                : "rolled back",
		        prefix);
	return rc;
}

static int load(struct env_opts *o, struct menv_config *cfg, char **prefix,
                struct menv_prefix_record **recs, size_t *n, struct menv_error *err)
{
	int rc = menv_config_load(cfg, err);
	if (rc)
		return rc;
	*prefix = menv_cli_prefix(cfg, o->name, o->prefix, err);
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
	struct env_opts o = {0};
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

	rc = parse(argc, argv, &o,
	           "usage: menv list (-n NAME | -p PREFIX) [--json] [--full-name] [REGEX]\n"
	           "       menv list (-n NAME | -p PREFIX) --revisions [--json]\n");
	if (rc)
		return rc > 0 ? 0 : MENV_EXIT_USAGE;
	if (o.revisions) {
		rc = menv_config_load(&cfg, &err);
		if (!rc) {
			prefix = menv_cli_prefix(&cfg, o.name, o.prefix, &err);
			rc = prefix ? 0 : err.code;
		}
		code = rc ? menv_cli_fail(&err) : menv_cli_list_revisions(prefix, o.json);
		goto out;
	}
	/* conda list REGEX: the names it finds (case-insensitive); --full-name: the whole name */
	if (o.regex) {
		char *pat = o.full_name ? menv_xasprintf("^(%s)$", o.regex) : menv_xstrdup(o.regex);
		int e = regcomp(&re, pat, REG_EXTENDED | REG_ICASE | REG_NOSUB);
		free(pat);
		if (e) {
			char msg[256];
			regerror(e, &re, msg, sizeof(msg));
			menv_error_set(&err, MENV_EUSAGE, "invalid regular expression '%s': %s",
			               o.regex, msg);
			code = menv_cli_fail(&err);
			goto out;
		}
		have_re = true;
	}
	rc = load(&o, &cfg, &prefix, &recs, &n, &err);
	if (!rc)
		rc = menv_pip_list(prefix, &pips, &npip, &err);
	if (rc) {
		code = menv_cli_fail(&err);
		goto out;
	}
	rows = menv_xcalloc(n + npip + 1, sizeof(*rows));
	for (size_t i = 0; i < n; i++)
		rows[nrows++] = (struct row){recs[i].name,
		                             recs[i].version,
		                             recs[i].build,
		                             recs[i].subdir ? recs[i].subdir : "",
		                             channel_display(&cfg, &recs[i]),
		                             recs[i].build_number};
	for (size_t i = 0; i < npip; i++)
		rows[nrows++] = (struct row){pips[i].name, pips[i].version,      "pypi_0",
		                             "pypi",       menv_xstrdup("pypi"), 0};
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
		char *s = json_dumps(arr, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(arr);
		goto out;
	}
	/* columns of 25 characters, wider where a name, version or build needs it */
	int wn = 25, wv = 25, wb = 25;
	for (size_t i = 0; i < nrows; i++) {
		wn = MAX_W(wn, rows[i].name);
		wv = MAX_W(wv, rows[i].version);
		wb = MAX_W(wb, rows[i].build);
	}
	printf("# packages in environment at %s:\n#\n", prefix);
	printf("# %-*s %-*s %-*s %s\n", wn - 2, "Name", wv, "Version", wb, "Build", "Channel");
	for (size_t i = 0; i < nrows; i++)
		printf("%-*s %-*s %-*s %s\n", wn, rows[i].name, wv, rows[i].version, wb,
		       rows[i].build, rows[i].channel);
out:
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].channel);
	free(rows);
	if (have_re)
		regfree(&re);
	menv_pip_dists_free(pips, npip);
	menv_prefix_records_free(recs, n);
	menv_config_release(&cfg);
	free(prefix);
	return code;
}
