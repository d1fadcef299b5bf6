/*
 * lock.c - environments as lockfiles and environment files, and lockfiles solved from
 * environment files: what `menv export` writes (conda-lock v1, CEP-37; explicit, CEP-23;
 * environment.yml, CEP-24, with conda's --no-builds and --from-history) and what `menv lock`
 * solves per platform. Pip-installed packages are the dist-info folders no conda record
 * owns (BR-021).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activate.h"
#include "prefix.h"
#include "registry.h"
#include "solver.h"
#include "txn.h"
#include "txnpriv.h"

/* The channel name to show for an installed record: its channel URL without the subdir,
 * shortened to the name under channel_alias. Caller frees. */
char *menv_channel_url(const struct menv_config *cfg, const char *channel, const char *subdir)
{
	char *c = menv_channel_display(cfg, channel, subdir);
	if (!*c || strstr(c, "://"))
		return c;
	char *u = menv_xasprintf("%s/%s", cfg->channel_alias, c);
	free(c);
	return u;
}

char *menv_channel_display(const struct menv_config *cfg, const char *channel, const char *subdir)
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

int menv_env_request_load(const char *prefix, json_t **out)
{
	char *path = menv_xasprintf("%s/conda-meta/.menv-request", prefix);
	*out = menv_json_load_file(path, 0, NULL);
	free(path);
	if (*out && !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
	}
	return *out ? 0 : MENV_ENOTFOUND;
}

int menv_env_to_lockfile(const struct menv_config *cfg, const char *prefix,
                         struct menv_strvec *warnings, struct menv_lockfile **out,
                         struct menv_error *err)
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
	rc = menv_pip_list_checked(prefix, &pips, &npip, warnings, err);
	if (rc)
		goto out;
	menv_strvec_push(&lf->platforms, cfg->subdir);
	/* conda-lock's LockMeta.sources: the file the environment was made from, else the
	 * prefix itself (mamba refuses a lock that names no source) */
	if (!menv_env_request_load(prefix, &req) && jstr(req, "source"))
		menv_strvec_push(&lf->sources, jstr(req, "source"));
	else
		menv_strvec_push(&lf->sources, prefix);
	for (size_t i = 0; i < n; i++) {
		const struct menv_prefix_record *r = &recs[i];
		char *ch = menv_channel_display(cfg, r->channel, r->subdir);
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
		if (!p->url && pips[i].local && warnings)
			menv_strvec_push_owned(
			        warnings,
			        menv_xasprintf(
			                "pip package '%s' %s was installed from a local path: "
			                "the lock names it '%s==%s', which only an index that "
			                "has it can install",
			                p->name, p->version, p->name, p->version));
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
	 * re-create from the lock finds the same index: in custom_metadata, conda-lock's one
	 * free-form field (a mapping of strings), one option a line */
	json_t *popts = json_object_get(req, "pip_options");
	struct menv_buf lines = MENV_BUF_INIT;
	bool has_index = false;
	size_t k;
	json_t *o;
	json_array_foreach(popts, k, o) if (json_is_string(o))
	{
		const char *s = json_string_value(o);
		char *clean = menv_pip_option_strip_auth(s);
		menv_buf_addf(&lines, "%s%s", lines.len ? "\n" : "", clean);
		free(clean);
		has_index |= !strncmp(s, "--index-url", 11) || !strncmp(s, "-i ", 3) ||
		             !strncmp(s, "--no-index", 10);
	}
	/* the index the wheels came from (PIP_INDEX_URL, pip.conf) when the pip section names
	 * none: a re-create then asks that index and not pip's default */
	for (size_t i = 0; !has_index && i < npip; i++)
		if (pips[i].index) {
			menv_buf_addf(&lines, "%s--index-url %s", lines.len ? "\n" : "",
			              pips[i].index);
			has_index = true;
		}
	if (lines.len) {
		json_object_set_new(lf->metadata_extra, "custom_metadata",
		                    json_pack("{s:s}", MENV_LOCK_PIP_OPTIONS_KEY, lines.buf));
	}
	menv_buf_release(&lines);
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
int menv_env_history_specs(const char *prefix, struct menv_strvec *out, struct menv_error *err)
{
	struct menv_revision *revs = NULL;
	size_t n = 0;
	struct menv_strvec names = MENV_STRVEC_INIT, specs = MENV_STRVEC_INIT;
	struct menv_strmap at_of = MENV_STRMAP_INIT; /* name -> its entry, SIZE_MAX: removed */
	int rc = menv_history_load(prefix, &revs, &n, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < revs[i].specs.n; k++) {
			const char *s = revs[i].specs.v[k];
			const char *c = strstr(s, "::");
			const char *nm = c ? c + 2 : s;
			char *name = menv_xstrndup(nm, strcspn(nm, " =<>!~[@"));
			size_t *at = menv_strmap_get(&at_of, name);
			if (at && *at == SIZE_MAX)
				at = NULL;
			if (revs[i].remove_specs) {
				if (at) {
					free(names.v[*at]);
					names.v[*at] = NULL;
					*at = SIZE_MAX;
				}
				free(name);
				continue;
			}
			if (at) {
				free(specs.v[*at]);
				specs.v[*at] = menv_xstrdup(s);
				free(name);
			} else {
				menv_strmap_put(&at_of, name, names.n);
				menv_strvec_push_owned(&names, name);
				menv_strvec_push(&specs, s);
			}
		}
	}
	for (size_t j = 0; j < names.n; j++)
		if (names.v[j])
			menv_strvec_push(out, specs.v[j]);
	menv_strmap_clear(&at_of);
	menv_strvec_clear(&names);
	menv_strvec_clear(&specs);
	menv_history_free(revs, n);
	return 0;
}

int menv_env_to_envfile(const struct menv_config *cfg, const char *prefix, const char *name,
                        bool no_builds, bool from_history, struct menv_envfile *ef,
                        struct menv_error *err)
{
	struct menv_lockfile *lf = NULL;
	json_t *req = NULL;
	int rc;

	const char *slash = strrchr(prefix, '/');
	ef->name = menv_xstrdup(name ? name : slash ? slash + 1 : prefix);
	ef->prefix = menv_xstrdup(prefix);
	rc = menv_env_state_vars_load(prefix, &ef->var_names, &ef->var_values, err);
	if (rc)
		return rc;
	menv_env_request_load(prefix, &req);
	if (from_history) {
		size_t i;
		json_t *v;
		if (req) {
			/* what the user asked for, as written (channel::name kept, BR-023) */
			json_array_foreach(json_object_get(req, "channels"), i,
			                   v) if (json_is_string(v))
			        menv_strvec_push(&ef->channels, json_string_value(v));
			/* the create's specs as written (channel::name kept, BR-023) while the
			 * history still asks for their names, then what later commands asked for
			 * (conda's get_requested_specs_map) */
			struct menv_strvec hist = MENV_STRVEC_INIT, names = MENV_STRVEC_INIT;
			struct menv_prefix_record *inst = NULL;
			size_t ninst = 0;
			if (menv_prefix_records_load(prefix, &inst, &ninst, NULL) == 0)
				for (size_t k = 0; k < ninst; k++)
					menv_strvec_push(&names, inst[k].name);
			menv_prefix_records_free(inst, ninst);
			rc = menv_history_requested_specs(prefix, &names, &hist, err);
			menv_strvec_clear(&names);
			/* name -> the last history spec of it still unclaimed; prev[k]: the one
			 * before k of the same name (SIZE_MAX: none) */
			struct menv_strmap last = MENV_STRMAP_INIT;
			size_t *prev = menv_xcalloc(hist.n + 1, sizeof(*prev));
			for (size_t k = 0; k < hist.n; k++) {
				menv_strvec_push_owned(&names, menv_dep_name(hist.v[k]));
				size_t *l = menv_strmap_get(&last, names.v[k]);
				prev[k] = l ? *l : SIZE_MAX;
				menv_strmap_put(&last, names.v[k], k);
			}
			json_array_foreach(json_object_get(req, "specs"), i, v)
			{
				char *n = json_is_string(v) ? menv_dep_name(json_string_value(v))
				                            : NULL;
				size_t *l = n ? menv_strmap_get(&last, n) : NULL;
				size_t at = l && *l != SIZE_MAX ? *l : names.n;
				if (at < names.n || !hist.n)
					menv_strvec_push(&ef->deps, json_string_value(v));
				if (at < names.n) {
					free(names.v[at]);
					names.v[at] = NULL;
					*l = prev[at];
				}
				free(n);
			}
			for (size_t k = 0; k < hist.n; k++)
				if (names.v[k])
					menv_strvec_push(&ef->deps, hist.v[k]);
			menv_strmap_clear(&last);
			free(prev);
			menv_strvec_clear(&hist);
			menv_strvec_clear(&names);
			json_array_foreach(json_object_get(req, "pip"), i, v) if (json_is_string(v))
			        menv_strvec_push(&ef->pip, json_string_value(v));
			ef->has_pip_section = json_is_true(json_object_get(req, "has_pip_section"));
		} else {
			rc = menv_env_history_specs(prefix, &ef->deps, err);
		}
		if (!rc && !ef->channels.n) {
			rc = menv_env_to_lockfile(cfg, prefix, NULL, &lf, err);
			for (size_t k = 0; !rc && k < lf->channels.n; k++)
				menv_strvec_push(&ef->channels, lf->channels.v[k]);
		}
		goto out;
	}
	rc = menv_env_to_lockfile(cfg, prefix, NULL, &lf, err);
	if (rc)
		goto out;
	for (size_t k = 0; k < lf->channels.n; k++)
		menv_strvec_push(&ef->channels, lf->channels.v[k]);
	if (lf->channels.n)
		menv_strvec_push(&ef->channels, "nodefaults");
	/* editable installs (pip -e DIR) are written as `-e DIR`, as pip freeze does: a
	 * name==version of them would send pip to an index */
	struct menv_pip_dist *pips = NULL;
	size_t npip = 0;
	struct menv_strmap editable = MENV_STRMAP_INIT; /* name -> its first editable dist */
	if (menv_pip_list(prefix, &pips, &npip, NULL))
		npip = 0;
	for (size_t d = 0; d < npip; d++)
		if (pips[d].editable)
			menv_strmap_add(&editable, pips[d].name, d);
	for (size_t k = 0; k < lf->npkgs; k++) {
		const struct menv_lock_package *p = &lf->pkgs[k];
		if (p->manager == MENV_LOCK_PIP) {
			const size_t *e = menv_strmap_get(&editable, p->name);
			const char *dev = e ? pips[*e].editable : NULL;
			menv_strvec_push_owned(&ef->pip,
			                       dev ? menv_xasprintf("-e %s", dev)
			                           : menv_xasprintf("%s==%s", p->name, p->version));
			continue;
		}
		char *spec = no_builds ? menv_xasprintf("%s=%s", p->name, p->version)
		                       : menv_xasprintf("%s=%s=%s", p->name, p->version, p->build);
		menv_strvec_push_owned(&ef->deps, spec);
	}
	/* the pip options of the section the environment was made from (index URLs) */
	size_t i;
	json_t *v;
	if (ef->pip.n)
		json_array_foreach(json_object_get(req, "pip_options"), i, v) if (json_is_string(v))
		        menv_strvec_push(&ef->pip, json_string_value(v));
	menv_strmap_clear(&editable);
	menv_pip_dists_free(pips, npip);
out:
	json_decref(req);
	menv_lockfile_free(lf);
	return rc;
}

int menv_lock_solve_platform(const struct menv_config *cfg, const struct menv_envfile *ef,
                             const struct menv_strvec *cli_channels, bool override_channels,
                             const char *platform, const struct menv_strvec *virt,
                             const struct menv_txn_callbacks *cb, struct menv_lockfile *lf,
                             size_t *count, struct menv_error *err)
{
	struct menv_config pc = *cfg; /* shallow: only subdir differs; never released */
	struct menv_strvec specs_str = MENV_STRVEC_INIT;
	struct menv_matchspec **specs = NULL;
	struct menv_channel_set ch = {0};
	struct menv_solver *solver = NULL;
	const struct menv_record **recs = NULL;
	size_t nspecs = 0, nrecs = 0;
	int rc = 0;

	*count = 0;
	pc.subdir = (char *)platform;
	for (size_t i = 0; i < ef->deps.n; i++)
		menv_strvec_push(&specs_str, ef->deps.v[i]);
	menv_envfile_conda_specs(ef, cli_channels, &specs_str);
	specs = menv_xcalloc(specs_str.n + 1, sizeof(*specs));
	for (size_t i = 0; i < specs_str.n; i++) {
		rc = menv_matchspec_parse(specs_str.v[i], &specs[nspecs], err);
		if (rc) {
			menv_error_prefix(err, "%s", ef->path ? ef->path : "the environment file");
			goto out;
		}
		nspecs++;
	}
	rc = menv_channel_set_load(&pc, cli_channels, &ef->channels, override_channels, specs,
	                           nspecs, NULL, cb ? cb->event : NULL, cb ? cb->ud : NULL, &ch,
	                           err);
	if (rc)
		goto out;
	if (nspecs && !ch.nchans) {
		rc = menv_error_set(err, MENV_EUSAGE,
		                    "no channels: give -c CHANNEL or list "
		                    "channels in the environment file or .condarc");
		goto out;
	}
	if (!lf->channels.n)
		for (size_t i = 0; i < ch.nchans; i++)
			if (!menv_strvec_contains(&lf->channels, ch.chans[i]->name))
				menv_strvec_push(&lf->channels, ch.chans[i]->name);
	solver = menv_solver_new(platform, cfg->channel_priority);
	rc = menv_channel_set_to_solver(&ch, solver, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < virt->n; i++) {
		char *v = menv_xstrdup(virt->v[i]);
		char *ver = strchr(v, '=');
		char *build = NULL;
		if (ver) {
			*ver++ = '\0';
			build = strchr(ver, '=');
			if (build)
				*build++ = '\0';
		}
		menv_solver_add_virtual(solver, v, ver ? ver : "0", build ? build : "0");
		free(v);
	}
	rc = menv_solver_solve(solver, specs, nspecs, &recs, &nrecs, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < nrecs; i++) {
		const struct menv_record *r = recs[i];
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_CONDA;
		p->name = menv_xstrdup(r->name);
		p->version = menv_xstrdup(r->version);
		p->build = menv_xstrdup(r->build);
		p->platform = menv_xstrdup(platform);
		p->subdir = menv_xstrdup(r->subdir);
		p->url = menv_xstrdup(r->url);
		p->md5 = menv_xstrdup(r->md5);
		p->sha256 = menv_xstrdup(r->sha256);
		p->size = r->size;
		json_t *d = menv_record_depends(r);
		p->depends = json_is_array(d) ? json_deep_copy(d) : json_array();
	}
	*count = nrecs;
out:
	if (rc)
		menv_error_prefix(err, "platform '%s'", platform);
	free(recs);
	menv_solver_free(solver);
	menv_channel_set_release(&ch);
	for (size_t i = 0; i < nspecs; i++)
		menv_matchspec_free(specs[i]);
	free(specs);
	menv_strvec_clear(&specs_str);
	return rc;
}

/* The default virtual packages of a platform, as "name=version[=build]" strings: this
 * machine's (menv_virtual_detect, CONDA_OVERRIDE_* applied) for its own platform, except
 * __cuda; conda-lock's defaults for the others. */
void menv_lock_default_virtuals(const char *platform, struct menv_strvec *out)
{
	if (!strcmp(platform, menv_platform_subdir())) {
		struct menv_virtual v[16];
		size_t n = menv_virtual_detect(v, 16);
		for (size_t i = 0; i < n; i++)
			if (strcmp(v[i].name, "__cuda"))
				menv_strvec_push_owned(out,
				                       menv_xasprintf("%s=%s=%s", v[i].name,
				                                      v[i].version, v[i].build));
		return;
	}
	if (!strncmp(platform, "linux-", 6)) {
		menv_strvec_push(out, "__unix=0");
		menv_strvec_push(out, "__linux=5.10");
		menv_strvec_push(out, "__glibc=2.17");
	} else if (!strncmp(platform, "osx-", 4)) {
		menv_strvec_push(out, "__unix=0");
		menv_strvec_push(out,
		                 !strcmp(platform, "osx-arm64") ? "__osx=11.0" : "__osx=10.15");
	} else if (!strncmp(platform, "win-", 4)) {
		menv_strvec_push(out, "__win=0");
	}
	if (!strcmp(platform, "linux-64") || !strcmp(platform, "osx-64") ||
	    !strcmp(platform, "win-64"))
		menv_strvec_push(out, "__archspec=1=x86_64");
	else if (!strcmp(platform, "linux-aarch64") || !strcmp(platform, "osx-arm64"))
		menv_strvec_push(out, "__archspec=1=aarch64");
}

/* The virtual packages of `platform`: the defaults, then the declared ones (a declared name
 * replaces a default one; --virtual-package replaces the file's). */
void menv_lock_virtuals(const char *platform, const struct menv_strvec *declared,
                        struct menv_strvec *out)
{
	struct menv_strvec all = MENV_STRVEC_INIT;
	menv_lock_default_virtuals(platform, &all);
	for (size_t i = 0; i < declared->n; i++) {
		const char *v = declared->v[i];
		const char *colon = strchr(v, ':');
		if (colon && strncmp(v, "__", 2)) {
			if (strncmp(v, platform, (size_t)(colon - v)) || platform[colon - v])
				continue;
			v = colon + 1;
		}
		size_t nl = strcspn(v, "=");
		for (size_t k = 0; k < all.n; k++) {
			if (all.v[k] && !strncmp(all.v[k], v, nl) && all.v[k][nl] == '=') {
				free(all.v[k]);
				all.v[k] = NULL;
			}
		}
		menv_strvec_push(&all, v);
	}
	for (size_t k = 0; k < all.n; k++)
		if (all.v[k])
			menv_strvec_push(out, all.v[k]);
	menv_strvec_clear(&all);
}

char *menv_lock_content_hash(const struct menv_buf *src, const char *platform,
                             const struct menv_strvec *channels, const struct menv_strvec *virt)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_hashes h;
	menv_buf_add(&b, src->buf, src->len);
	menv_buf_addf(&b, "\n--menv-lock--\nplatform %s\n", platform);
	for (size_t i = 0; i < channels->n; i++)
		menv_buf_addf(&b, "channel %s\n", channels->v[i]);
	for (size_t i = 0; i < virt->n; i++)
		menv_buf_addf(&b, "virtual %s\n", virt->v[i]);
	menv_hash_mem(b.buf, b.len, &h);
	menv_buf_release(&b);
	return menv_xstrdup(h.sha256);
}

json_t *menv_envfile_json(const struct menv_envfile *ef)
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

static void lock_event(const struct menv_txn_callbacks *cb, enum menv_env_event ev, char *msg)
{
	if (cb->event)
		cb->event(cb->ud, ev, msg);
	free(msg);
}

int menv_lock_env(const struct menv_lock_request *req, struct menv_lockfile **out,
                  struct menv_strvec *stale, struct menv_error *err)
{
	const struct menv_txn_callbacks *cb = req->cb;
	struct menv_strvec *platforms = req->platforms, declared = MENV_STRVEC_INIT;
	struct menv_strvec warnings = MENV_STRVEC_INIT;
	struct menv_config cfg = {0};
	struct menv_envfile *ef = NULL;
	struct menv_lockfile *lf = NULL, *old = NULL;
	struct menv_buf src = MENV_BUF_INIT;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; i < req->virtuals->n; i++)
		if (!menv_virtual_decl_ok(req->virtuals->v[i]))
			return menv_error_set(err, MENV_EUSAGE,
			                      "--virtual-package '%s': expected "
			                      "[PLATFORM:]__NAME=VERSION[=BUILD]",
			                      req->virtuals->v[i]);
	rc = menv_config_load(&cfg, err);
	if (!rc)
		rc = menv_buf_read_stream(&src, req->file, err);
	if (!rc)
		rc = menv_envfile_parse(src.buf, src.len, req->file, &ef, err);
	if (rc)
		goto out;
	menv_envfile_check(ef, &warnings);
	for (size_t i = 0; i < warnings.n; i++)
		lock_event(cb, MENV_ENV_WARNING, menv_xstrdup(warnings.v[i]));
	/* the content hash covers the file's section through the source bytes */
	for (size_t i = 0; i < ef->virtual_packages.n; i++)
		menv_strvec_push(&declared, ef->virtual_packages.v[i]);
	for (size_t i = 0; i < req->virtuals->n; i++)
		menv_strvec_push(&declared, req->virtuals->v[i]);
	if (!platforms->n)
		menv_strvec_push(platforms, cfg.subdir);
	for (size_t i = 0; i < platforms->n; i++)
		if (!menv_subdir_known(platforms->v[i])) {
			rc = menv_error_set(err, MENV_EUSAGE,
			                    "unknown platform '%s' (conda's subdirs: linux-64, "
			                    "linux-aarch64, osx-64, osx-arm64, win-64, ...)",
			                    platforms->v[i]);
			goto out;
		}
	if (req->check) {
		rc = menv_lockfile_load(req->check, &old, err);
		for (size_t i = 0; !rc && i < platforms->n; i++) {
			char *h = menv_lock_content_hash(&src, platforms->v[i], req->channels,
			                                 req->virtuals);
			const char *have = json_string_value(
			        json_object_get(old->content_hash, platforms->v[i]));
			if (!have || strcmp(have, h))
				menv_strvec_push_owned(
				        stale,
				        menv_xasprintf("%s (%s)", platforms->v[i],
				                       have ? "the source, channels or virtual "
				                              "packages changed"
				                            : "the platform is not locked"));
			free(h);
		}
		goto out;
	}
	lf = menv_lockfile_new(MENV_LOCK_CONDA_LOCK);
	menv_strvec_push(&lf->sources, req->file);
	for (size_t i = 0; i < platforms->n && !rc; i++) {
		struct menv_strvec virt = MENV_STRVEC_INIT;
		size_t count = 0;
		menv_lock_virtuals(platforms->v[i], &declared, &virt);
		lock_event(cb, MENV_ENV_STATUS,
		           menv_xasprintf("Solving %s for %s", req->file, platforms->v[i]));
		menv_strvec_push(&lf->platforms, platforms->v[i]);
		rc = menv_lock_solve_platform(&cfg, ef, req->channels, req->override_channels,
		                              platforms->v[i], &virt, cb, lf, &count, err);
		if (!rc) {
			lock_event(cb, MENV_ENV_STATUS,
			           menv_xasprintf("  %s: %zu package%s", platforms->v[i], count,
			                          count == 1 ? "" : "s"));
			char *h = menv_lock_content_hash(&src, platforms->v[i], req->channels,
			                                 req->virtuals);
			json_object_set_new(lf->content_hash, platforms->v[i], json_string(h));
			free(h);
		}
		menv_strvec_clear(&virt);
	}
	if (!rc && ef->pip.n)
		lock_event(cb, MENV_ENV_WARNING,
		           menv_xasprintf("the 'pip:' section (%zu line%s) is not locked by "
		                          "'menv lock'; create the environment and use 'menv "
		                          "export' to lock its pip packages",
		                          ef->pip.n, ef->pip.n == 1 ? "" : "s"));
out:
	if (rc || req->check)
		menv_lockfile_free(lf);
	else
		*out = lf;
	menv_lockfile_free(old);
	menv_envfile_free(ef);
	menv_buf_release(&src);
	menv_strvec_clear(&declared);
	menv_strvec_clear(&warnings);
	menv_config_release(&cfg);
	return rc;
}

static void export_warnings(const struct menv_txn_callbacks *cb, struct menv_strvec *w)
{
	for (size_t i = 0; i < w->n; i++)
		lock_event(cb, MENV_ENV_WARNING, menv_xstrdup(w->v[i]));
	menv_strvec_clear(w);
}

int menv_env_export(const struct menv_export_request *req, struct menv_buf *out,
                    struct menv_error *err)
{
	struct menv_config cfg = {0};
	struct menv_lockfile *lf = NULL;
	struct menv_envfile ef = {0};
	struct menv_strvec warn = MENV_STRVEC_INIT;
	const char *fmt = req->format;
	char *prefix = NULL;
	int rc = 0;

	/* --no-builds / --from-history / a bare --json mean conda env export's format */
	if (!fmt)
		fmt = req->no_builds || req->from_history || req->json ? "environment"
		                                                       : "conda-lock";
	if (strcmp(fmt, "conda-lock") && strcmp(fmt, "explicit") && strcmp(fmt, "environment"))
		return menv_error_set(err, MENV_EUSAGE,
		                      "unknown export format '%s' (conda-lock, explicit or "
		                      "environment)",
		                      fmt);
	if ((req->no_builds || req->from_history) && strcmp(fmt, "environment"))
		return menv_error_set(err, MENV_EUSAGE,
		                      "--no-builds and --from-history apply to --format "
		                      "environment only");
	rc = menv_config_load(&cfg, err);
	if (rc)
		goto out;
	prefix = menv_env_prefix_find(&cfg, req->name, req->prefix, err);
	if (!prefix) {
		rc = err->code;
		goto out;
	}
	if (access(prefix, F_OK) != 0 && !menv_env_replaced_pending(prefix)) {
		rc = menv_error_set(err, MENV_ENOTFOUND, "environment '%s' does not exist", prefix);
		goto out;
	}
	rc = menv_txn_recover(prefix, req->cb, err);
	if (rc)
		goto out;
	json_t *j = NULL;
	if (!strcmp(fmt, "environment")) {
		/* the dist-info folders the export leaves out, named (as the lock formats do) */
		struct menv_pip_dist *pips = NULL;
		size_t npip = 0;
		if (!menv_pip_list_checked(prefix, &pips, &npip, &warn, NULL))
			menv_pip_dists_free(pips, npip);
		export_warnings(req->cb, &warn);
		rc = menv_env_to_envfile(&cfg, prefix, req->name, req->no_builds, req->from_history,
		                         &ef, err);
		if (!rc && req->json)
			j = menv_envfile_json(&ef);
		else if (!rc)
			rc = menv_envfile_write(&ef, out, err);
	} else {
		rc = menv_env_to_lockfile(&cfg, prefix, &warn, &lf, err);
		export_warnings(req->cb, &warn);
		if (!rc && req->json)
			j = menv_lockfile_to_json(lf);
		else if (!rc && !strcmp(fmt, "explicit"))
			menv_lockfile_write_explicit(lf, cfg.subdir, out);
		else if (!rc)
			rc = menv_lockfile_write_conda_lock(lf, out, err);
	}
	if (j) {
		char *s = json_dumps(j, JSON_INDENT(2));
		menv_buf_addf(out, "%s\n", s);
		free(s);
		json_decref(j);
	}
	menv_buf_redact(out); /* every format: no credentials or tokens */
out:
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
	return rc;
}
