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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "envs.h"
#include "fetch.h"

/* The channel name to show for an installed record: its channel URL without the subdir,
 * shortened to the name under channel_alias. Caller frees. */
char *menv_cli_channel_display(const struct menv_config *cfg, const char *channel,
                               const char *subdir)
{
	if (!channel || !*channel)
		return menv_xstrdup("");
	char *c = menv_xstrdup(channel);
	size_t n = strlen(c);
	if (subdir) {
		size_t sl = strlen(subdir);
		if (n > sl + 1 && c[n - sl - 1] == '/' && !strcmp(c + n - sl, subdir))
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

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int menv_cli_request_load(const char *prefix, json_t **out)
{
	char *path = menv_xasprintf("%s/conda-meta/.menv-request", prefix);
	*out = json_load_file(path, 0, NULL);
	free(path);
	if (*out && !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
	}
	return *out ? 0 : MENV_ENOTFOUND;
}

int menv_cli_lock_from_prefix(const struct menv_config *cfg, const char *prefix,
                              struct menv_lockfile **out, struct menv_error *err)
{
	struct menv_prefix_record *recs = NULL;
	struct menv_pip_dist *pips = NULL;
	size_t n = 0, npip = 0;
	struct menv_lockfile *lf = menv_lockfile_new(MENV_LOCK_CONDA_LOCK);
	struct menv_buf ident = MENV_BUF_INIT;
	json_t *req = NULL;
	int rc;

	*out = NULL;
	rc = menv_prefix_records_load(prefix, &recs, &n, err);
	if (rc)
		goto out;
	rc = menv_pip_list(prefix, &pips, &npip, err);
	if (rc)
		goto out;
	menv_strvec_push(&lf->platforms, cfg->subdir);
	if (!menv_cli_request_load(prefix, &req) && jstr(req, "source"))
		menv_strvec_push(&lf->sources, jstr(req, "source"));
	for (size_t i = 0; i < n; i++) {
		const struct menv_prefix_record *r = &recs[i];
		char *ch = menv_cli_channel_display(cfg, r->channel, r->subdir);
		if (*ch && !menv_strvec_contains(&lf->channels, ch))
			menv_strvec_push(&lf->channels, ch);
		free(ch);
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_CONDA;
		p->name = menv_xstrdup(r->name);
		p->version = menv_xstrdup(r->version);
		p->build = menv_xstrdup(r->build);
		p->platform = menv_xstrdup(cfg->subdir);
		p->subdir = menv_xstrdup(r->subdir);
		p->url = menv_xstrdup(r->url && *r->url ? r->url : NULL);
		p->md5 = menv_xstrdup(jstr(r->json, "md5"));
		p->sha256 = menv_xstrdup(jstr(r->json, "sha256"));
		json_t *sz = json_object_get(r->json, "size");
		p->size = json_is_integer(sz) ? json_integer_value(sz) : -1;
		json_t *dep = json_object_get(r->json, "depends");
		p->depends = json_is_array(dep) ? json_incref(dep) : json_array();
		if (!p->url) {
			rc = menv_error_set(err, MENV_EUNSUPPORTED,
			                    "'%s-%s-%s' has no URL in its "
			                    "conda-meta record: it cannot be locked",
			                    r->name, r->version, r->build);
			goto out;
		}
		menv_buf_addf(&ident, "%s %s\n", p->url, p->sha256 ? p->sha256 : "");
	}
	for (size_t i = 0; i < npip; i++) {
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_PIP;
		p->name = menv_xstrdup(pips[i].name);
		p->version = menv_xstrdup(pips[i].version);
		p->platform = menv_xstrdup(cfg->subdir);
		p->url = menv_xstrdup(pips[i].url);
		p->sha256 = menv_xstrdup(pips[i].sha256);
		p->deps_map = json_object();
		if (!p->url && pips[i].local)
			fprintf(stderr,
			        "menv: warning: pip package '%s' %s was installed from a local "
			        "path: "
			        "the lock names it '%s==%s', which only an index that has it can "
			        "install\n",
			        p->name, p->version, p->name, p->version);
		if (!p->url) {
			/* no URL known (installed by hand from an index): pip finds name==version
			 * in the index that the environment's pip section names */
			char *pseudo = menv_xasprintf("%s==%s", p->name, p->version);
			free(p->url);
			p->url = menv_xasprintf("pypi:%s", pseudo);
			free(pseudo);
		}
		menv_buf_addf(&ident, "%s %s\n", p->url, p->sha256 ? p->sha256 : "");
	}
	/* pip options of the environment's pip section travel in the metadata, so that a
	 * re-create from the lock finds the same index */
	json_t *popts = json_object_get(req, "pip_options");
	if (json_is_array(popts) && json_array_size(popts))
		json_object_set(lf->metadata_extra, "pip_options", popts);
	struct menv_hashes h;
	menv_hash_mem(ident.buf, ident.len, &h);
	json_object_set_new(lf->content_hash, cfg->subdir, json_string(h.sha256));
	*out = lf;
	lf = NULL;
out:
	json_decref(req);
	menv_buf_release(&ident);
	menv_lockfile_free(lf);
	menv_prefix_records_free(recs, n);
	menv_pip_dists_free(pips, npip);
	return rc;
}

/* conda's History.get_requested_specs_map: the specs of every revision, later ones replacing
 * earlier ones of the same name, removed ones dropped. */
static int history_specs(const char *prefix, struct menv_strvec *out, struct menv_error *err)
{
	struct menv_revision *revs = NULL;
	size_t n = 0;
	struct menv_strvec names = MENV_STRVEC_INIT, specs = MENV_STRVEC_INIT;
	int rc = menv_history_load(prefix, &revs, &n, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < revs[i].specs.n; k++) {
			const char *s = revs[i].specs.v[k];
			const char *c = strstr(s, "::");
			const char *nm = c ? c + 2 : s;
			char *name = menv_xstrndup(nm, strcspn(nm, " =<>!~[@"));
			size_t at = names.n;
			for (size_t j = 0; j < names.n; j++)
				if (names.v[j] && !strcmp(names.v[j], name))
					at = j;
			if (revs[i].remove_specs) {
				if (at < names.n) {
					free(names.v[at]);
					names.v[at] = NULL;
				}
				free(name);
				continue;
			}
			if (at < names.n) {
				free(specs.v[at]);
				specs.v[at] = menv_xstrdup(s);
				free(name);
			} else {
				menv_strvec_push_owned(&names, name);
				menv_strvec_push(&specs, s);
			}
		}
	}
	for (size_t j = 0; j < names.n; j++)
		if (names.v[j])
			menv_strvec_push(out, specs.v[j]);
	menv_strvec_clear(&names);
	menv_strvec_clear(&specs);
	menv_history_free(revs, n);
	return 0;
}

struct export_opts {
	const char *name, *prefix, *format, *file;
	bool json, no_builds, from_history;
};

/* The environment-format export as an envfile. */
static int environment_of(const struct menv_config *cfg, const char *prefix,
                          const struct export_opts *o, struct menv_envfile *ef,
                          struct menv_error *err)
{
	struct menv_lockfile *lf = NULL;
	json_t *req = NULL;
	int rc;

	const char *slash = strrchr(prefix, '/');
	ef->name = menv_xstrdup(o->name ? o->name : slash ? slash + 1 : prefix);
	ef->prefix = menv_xstrdup(prefix);
	rc = menv_env_state_vars_load(prefix, &ef->var_names, &ef->var_values, err);
	if (rc)
		return rc;
	menv_cli_request_load(prefix, &req);
	if (o->from_history) {
		size_t i;
		json_t *v;
		if (req) {
			/* what the user asked for, as written (channel::name kept, BR-023) */
			json_array_foreach(json_object_get(req, "channels"), i,
			                   v) if (json_is_string(v))
			        menv_strvec_push(&ef->channels, json_string_value(v));
			json_array_foreach(json_object_get(req, "specs"), i,
			                   v) if (json_is_string(v))
			        menv_strvec_push(&ef->deps, json_string_value(v));
			json_array_foreach(json_object_get(req, "pip"), i, v) if (json_is_string(v))
			        menv_strvec_push(&ef->pip, json_string_value(v));
			ef->has_pip_section = json_is_true(json_object_get(req, "has_pip_section"));
		} else {
			rc = history_specs(prefix, &ef->deps, err);
		}
		if (!rc && !ef->channels.n) {
			rc = menv_cli_lock_from_prefix(cfg, prefix, &lf, err);
			for (size_t k = 0; !rc && k < lf->channels.n; k++)
				menv_strvec_push(&ef->channels, lf->channels.v[k]);
		}
		goto out;
	}
	rc = menv_cli_lock_from_prefix(cfg, prefix, &lf, err);
	if (rc)
		goto out;
	for (size_t k = 0; k < lf->channels.n; k++)
		menv_strvec_push(&ef->channels, lf->channels.v[k]);
	if (lf->channels.n)
		menv_strvec_push(&ef->channels, "nodefaults");
	for (size_t k = 0; k < lf->npkgs; k++) {
		const struct menv_lock_package *p = &lf->pkgs[k];
		if (p->manager == MENV_LOCK_PIP) {
			menv_strvec_push_owned(&ef->pip,
			                       menv_xasprintf("%s==%s", p->name, p->version));
			continue;
		}
		char *spec = o->no_builds
		                     ? menv_xasprintf("%s=%s", p->name, p->version)
		                     : menv_xasprintf("%s=%s=%s", p->name, p->version, p->build);
		menv_strvec_push_owned(&ef->deps, spec);
	}
	/* the pip options of the section the environment was made from (index URLs) */
	size_t i;
	json_t *v;
	if (ef->pip.n)
		json_array_foreach(json_object_get(req, "pip_options"), i, v) if (json_is_string(v))
		        menv_strvec_push(&ef->pip, json_string_value(v));
out:
	json_decref(req);
	menv_lockfile_free(lf);
	return rc;
}

static json_t *envfile_json(const struct menv_envfile *ef)
{
	json_t *deps = json_array(), *ch = json_array(), *vars = json_object();
	for (size_t i = 0; i < ef->channels.n; i++)
		json_array_append_new(ch, json_string(ef->channels.v[i]));
	for (size_t i = 0; i < ef->deps.n; i++)
		json_array_append_new(deps, json_string(ef->deps.v[i]));
	if (ef->pip.n || ef->has_pip_section) {
		json_t *pip = json_array();
		for (size_t i = 0; i < ef->pip.n; i++)
			json_array_append_new(pip, json_string(ef->pip.v[i]));
		json_array_append_new(deps, json_pack("{s:o}", "pip", pip));
	}
	for (size_t i = 0; i < ef->var_names.n; i++)
		json_object_set_new(vars, ef->var_names.v[i], json_string(ef->var_values.v[i]));
	json_t *j = json_pack("{s:s, s:o, s:o}", "name", ef->name, "channels", ch, "dependencies",
	                      deps);
	if (json_object_size(vars))
		json_object_set_new(j, "variables", vars);
	else
		json_decref(vars);
	json_object_set_new(j, "prefix", json_string(ef->prefix));
	return j;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: menv export (-n NAME | -p PREFIX) [--format conda-lock|explicit|"
	           "environment]\n"
	           "                   [--no-builds] [--from-history] [--json] [--file FILE]\n");
}

int menv_cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'},
	        {"prefix", required_argument, NULL, 'p'},
	        {"format", required_argument, NULL, 'F'},
	        {"file", required_argument, NULL, 'f'},
	        {"json", no_argument, NULL, 'j'},
	        {"no-builds", no_argument, NULL, 'B'},
	        {"from-history", no_argument, NULL, 'H'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct export_opts o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	struct menv_envfile ef = {0};
	struct menv_buf out = MENV_BUF_INIT;
	char *prefix = NULL;
	int c, rc = 0, code = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:p:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.name = optarg; break;
		case 'p': o.prefix = optarg; break;
		case 'F': o.format = optarg; break;
		case 'f': o.file = optarg; break;
		case 'j': o.json = true; break;
		case 'B': o.no_builds = true; break;
		case 'H': o.from_history = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return MENV_EXIT_USAGE;
		}
	}
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
	prefix = menv_cli_prefix(&cfg, o.name, o.prefix, &err);
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
		rc = environment_of(&cfg, prefix, &o, &ef, &err);
		if (rc)
			goto out;
		if (o.json) {
			json_t *j = envfile_json(&ef);
			char *s = json_dumps(j, JSON_INDENT(2));
			menv_buf_addf(&out, "%s\n", s);
			free(s);
			json_decref(j);
		} else {
			menv_envfile_write(&ef, &out);
		}
	} else {
		rc = menv_cli_lock_from_prefix(&cfg, prefix, &lf, &err);
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
			menv_lockfile_write_conda_lock(lf, &out);
		}
	}
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
