/*
 * cmd_list.c - `menv list` (conda list's table or JSON) and `menv export` (conda env export's
 * environment.yml: name, channels, dependencies pinned name=version=build, prefix).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "envs.h"

struct env_opts {
	const char *name, *prefix;
	bool json, no_builds, revisions;
};

static int parse(int argc, char **argv, struct env_opts *o, const char *use)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-builds", no_argument, NULL, 'B' },
		{ "revisions", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
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
		case 'h': printf("%s", use); return 1;
		default: fprintf(stderr, "%s", use); return -1;
		}
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

static int load(struct env_opts *o, struct menv_config *cfg, char **prefix,
		struct menv_prefix_record **recs, size_t *n, struct menv_error *err)
{
	int rc = menv_config_load(cfg, err);
	if (rc)
		return rc;
	*prefix = menv_cli_prefix(cfg, o->name, o->prefix, err);
	if (!*prefix)
		return err->code;
	if (menv_env_needs_recovery(*prefix)) {
		/* a transaction that a crash or Ctrl-C interrupted: finish or undo it first */
		enum menv_recovery what = MENV_RECOVERY_NONE;
		int fd;
		rc = menv_env_lock(*prefix, false, menv_cli_env_event, NULL, &fd, err);
		if (!rc)
			rc = menv_env_recover(*prefix, &what, err);
		menv_env_unlock(fd);
		if (rc)
			return rc;
		if (what != MENV_RECOVERY_NONE)
			fprintf(stderr, "menv: %s an interrupted transaction in '%s'\n",
				what == MENV_RECOVERY_FINISHED ? "finished"
				: what == MENV_RECOVERY_REMOVED ? "removed the unfinished new "
								   "environment of"
								 : "rolled back",
				*prefix);
	}
	return menv_prefix_records_load(*prefix, recs, n, err);
}

int menv_cmd_list(int argc, char **argv)
{
	struct env_opts o = { 0 };
	struct menv_config cfg = { 0 };
	struct menv_error err = { 0 };
	struct menv_prefix_record *recs = NULL;
	size_t n = 0;
	char *prefix = NULL;
	int rc, code = 0;

	rc = parse(argc, argv, &o,
		   "usage: menv list (-n NAME | -p PREFIX) [--json] [--revisions]\n");
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
	rc = load(&o, &cfg, &prefix, &recs, &n, &err);
	if (rc) {
		code = menv_cli_fail(&err);
		goto out;
	}
	if (o.json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			char *ch = channel_display(&cfg, &recs[i]);
			json_array_append_new(
				arr, json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "name", recs[i].name,
					       "version", recs[i].version, "build_string",
					       recs[i].build, "build_number",
					       (json_int_t)recs[i].build_number, "channel", ch,
					       "platform", recs[i].subdir ? recs[i].subdir : ""));
			free(ch);
		}
		char *s = json_dumps(arr, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(arr);
		goto out;
	}
	printf("# packages in environment at %s:\n#\n", prefix);
	printf("# %-23s %-25s %-25s %s\n", "Name", "Version", "Build", "Channel");
	for (size_t i = 0; i < n; i++) {
		char *ch = channel_display(&cfg, &recs[i]);
		printf("%-25s %-25s %-25s %s\n", recs[i].name, recs[i].version, recs[i].build, ch);
		free(ch);
	}
out:
	menv_prefix_records_free(recs, n);
	menv_config_release(&cfg);
	free(prefix);
	return code;
}

/* YAML-safe scalar: quoted when it holds characters YAML would read specially. */
static void yaml_scalar(const char *s)
{
	if (!*s || strpbrk(s, ":#{}[],&*!|>'\"%@`") || s[0] == '-' || s[0] == ' ') {
		putchar('"');
		for (const char *p = s; *p; p++) {
			if (*p == '"' || *p == '\\')
				putchar('\\');
			putchar(*p);
		}
		putchar('"');
	} else {
		fputs(s, stdout);
	}
}

int menv_cmd_export(int argc, char **argv)
{
	struct env_opts o = { 0 };
	struct menv_config cfg = { 0 };
	struct menv_error err = { 0 };
	struct menv_prefix_record *recs = NULL;
	struct menv_strvec chans = MENV_STRVEC_INIT;
	size_t n = 0;
	char *prefix = NULL;
	int rc, code = 0;

	rc = parse(argc, argv, &o,
		   "usage: menv export (-n NAME | -p PREFIX) [--no-builds] [--json]\n");
	if (rc)
		return rc > 0 ? 0 : MENV_EXIT_USAGE;
	rc = load(&o, &cfg, &prefix, &recs, &n, &err);
	if (rc) {
		code = menv_cli_fail(&err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char *ch = channel_display(&cfg, &recs[i]);
		if (*ch && !menv_strvec_contains(&chans, ch))
			menv_strvec_push(&chans, ch);
		free(ch);
	}
	const char *slash = strrchr(prefix, '/');
	const char *name = o.name ? o.name : slash ? slash + 1 : prefix;
	if (o.json) {
		json_t *deps = json_array(), *jch = json_array();
		for (size_t i = 0; i < chans.n; i++)
			json_array_append_new(jch, json_string(chans.v[i]));
		for (size_t i = 0; i < n; i++) {
			char *d = o.no_builds ? menv_xasprintf("%s=%s", recs[i].name, recs[i].version)
					      : menv_xasprintf("%s=%s=%s", recs[i].name,
							       recs[i].version, recs[i].build);
			json_array_append_new(deps, json_string(d));
			free(d);
		}
		json_t *j = json_pack("{s:s, s:o, s:o, s:s}", "name", name, "channels", jch,
				      "dependencies", deps, "prefix", prefix);
		char *s = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(j);
		goto out;
	}
	fputs("name: ", stdout);
	yaml_scalar(name);
	fputs("\nchannels:\n", stdout);
	for (size_t i = 0; i < chans.n; i++) {
		fputs("  - ", stdout);
		yaml_scalar(chans.v[i]);
		putchar('\n');
	}
	if (chans.n)
		fputs("  - nodefaults\n", stdout);
	fputs("dependencies:\n", stdout);
	for (size_t i = 0; i < n; i++) {
		if (o.no_builds)
			printf("  - %s=%s\n", recs[i].name, recs[i].version);
		else
			printf("  - %s=%s=%s\n", recs[i].name, recs[i].version, recs[i].build);
	}
	fputs("prefix: ", stdout);
	yaml_scalar(prefix);
	putchar('\n');
out:
	menv_strvec_clear(&chans);
	menv_prefix_records_free(recs, n);
	menv_config_release(&cfg);
	free(prefix);
	return code;
}
