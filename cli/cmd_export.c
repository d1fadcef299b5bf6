/*
 * cmd_export.c - `menv export`: an environment as a lockfile or an environment file.
 *   --format conda-lock (default)  conda-lock.yml v1 (CEP-37): URLs, md5 + sha256, depends,
 *                                  pip packages as `manager: pip`
 *   --format explicit              @EXPLICIT with `#sha256:` (CEP-23), `# pip name @ URL`
 *   --format environment           conda env export's environment.yml (name=version=build,
 *                                  `- pip:` with name==version); --no-builds; --from-history
 *                                  (the specs, channels and pip section the user asked for)
 *   --json                         the environment as JSON (conda env export --json) or, with
 *                                  --format conda-lock/explicit, the lockfile model
 * Pip-installed packages are the dist-info folders no conda record owns (BR-021).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv export [-n NAME | -p PREFIX] [--format conda-lock|explicit|environment]\n"    \
	"                   [--no-builds] [--from-history] [--json] [--file FILE]\n"

int menv_cmd_export(int argc, char **argv)
{
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	struct menv_envfile ef = {0};
	struct menv_buf out = MENV_BUF_INIT;
	char *prefix = NULL;
	int rc = 0, code = 0;

	struct menv_cli_args o = {0};
	/* `env export` (cmd_env.c calls it so) shows its own usage */
	const char *usage = !strcmp(argv[0], "env export")
	                            ? "usage: menv env export [-n NAME | -p PREFIX] [--format "
	                              "environment|conda-lock|explicit]\n"
	                              "                       [--no-builds] [--from-history] "
	                              "[--json] [--file FILE]\n"
	                            : USAGE;
	if ((rc = menv_cli_parse(argc, argv, "npFfjBHh", usage, 0, 0, &o)))
		return MENV_CLI_EXIT(rc);
	/* --no-builds / --from-history / a bare --json mean conda env export's format */
	if (!o.format)
		o.format = o.no_builds || o.from_history || o.json ? "environment" : "conda-lock";
	if (strcmp(o.format, "conda-lock") && strcmp(o.format, "explicit") &&
	    strcmp(o.format, "environment")) {
		rc = menv_error_set(&err, MENV_EUSAGE,
		                    "unknown export format '%s' (conda-lock, "
		                    "explicit or environment)",
		                    o.format);
		goto out;
	}
	if ((o.no_builds || o.from_history) && strcmp(o.format, "environment")) {
		rc = menv_error_set(&err, MENV_EUSAGE,
		                    "--no-builds and --from-history apply to "
		                    "--format environment only");
		goto out;
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	prefix = menv_env_prefix_find(&cfg, o.name, o.prefix, &err);
	if (!prefix) {
		rc = err.code;
		goto out;
	}
	if (access(prefix, F_OK) != 0) {
		rc = menv_error_set(&err, MENV_ENOTFOUND, "environment '%s' does not exist",
		                    prefix);
		goto out;
	}
	rc = menv_cli_recover(prefix, &err);
	if (rc)
		goto out;
	if (!strcmp(o.format, "environment")) {
		/* the dist-info folders the export leaves out, named (as the lock formats do) */
		struct menv_strvec warn = MENV_STRVEC_INIT;
		struct menv_pip_dist *pips = NULL;
		size_t npip = 0;
		if (!menv_pip_list_checked(prefix, &pips, &npip, &warn, NULL))
			menv_pip_dists_free(pips, npip);
		menv_cli_warnings(&warn);
		rc = menv_env_to_envfile(&cfg, prefix, o.name, o.no_builds, o.from_history, &ef,
		                         &err);
		if (rc)
			goto out;
		if (o.json) {
			json_t *j = menv_envfile_json(&ef);
			char *s = json_dumps(j, JSON_INDENT(2));
			menv_buf_addf(&out, "%s\n", s);
			free(s);
			json_decref(j);
		} else {
			rc = menv_envfile_write(&ef, &out, &err);
			if (rc)
				goto out;
		}
	} else {
		struct menv_strvec warnings = MENV_STRVEC_INIT;
		rc = menv_env_to_lockfile(&cfg, prefix, &warnings, &lf, &err);
		for (size_t i = 0; i < warnings.n; i++)
			fprintf(stderr, "menv: warning: %s\n", warnings.v[i]);
		menv_strvec_clear(&warnings);
		if (rc)
			goto out;
		if (o.json) {
			json_t *j = menv_lockfile_to_json(lf);
			char *s = json_dumps(j, JSON_INDENT(2));
			menv_buf_addf(&out, "%s\n", s);
			free(s);
			json_decref(j);
		} else if (!strcmp(o.format, "explicit")) {
			menv_lockfile_write_explicit(lf, cfg.subdir, &out);
		} else {
			rc = menv_lockfile_write_conda_lock(lf, &out, &err);
			if (rc)
				goto out;
		}
	}
	menv_buf_redact(&out); /* every format: no credentials or tokens */
	if (o.file)
		rc = menv_write_file_atomic(o.file, out.buf, out.len, &err);
	else
		fwrite(out.buf, 1, out.len, stdout);
out:
	if (rc)
		code = menv_cli_fail(&err);
	menv_buf_release(&out);
	menv_lockfile_free(lf);
	free(ef.name);
	free(ef.prefix);
	menv_strvec_clear(&ef.channels);
	menv_strvec_clear(&ef.deps);
	menv_strvec_clear(&ef.pip);
	menv_strvec_clear(&ef.var_names);
	menv_strvec_clear(&ef.var_values);
	menv_config_release(&cfg);
	free(prefix);
	return code;
}
