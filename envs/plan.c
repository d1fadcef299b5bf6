/*
 * plan.c - the plan stage's rules, shared by every kind of transaction (txn.c): the order
 * packages are linked in (dependencies first), --prune, the packages of a history revision
 * (conda's conda/history.py), the noarch python packages that follow python to a new minor
 * version (CEP-20), and the conda side of an environment file's specs (CEP-24).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txnpriv.h"

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : "";
}

void menv_owned_recs_release(struct menv_owned_recs *o)
{
	for (size_t i = 0; i < o->n; i++)
		menv_record_release(&o->v[i]);
	free(o->v);
	memset(o, 0, sizeof(*o));
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (json_t *const *)a, y = (uintptr_t) * (json_t *const *)b;
	return x < y ? -1 : x > y;
}

/* A sorted copy of the n pointers of `v`, for in_sorted(). Caller frees. */
static json_t **sorted_copy(json_t *const *v, size_t n)
{
	json_t **c = menv_xcalloc(n + 1, sizeof(*c));
	if (n)
		memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), by_address);
	return c;
}

static bool in_sorted(json_t *const *sorted, size_t n, json_t *rec)
{
	return n && bsearch(&rec, sorted, n, sizeof(*sorted), by_address);
}

char *menv_dep_name_in(const char *dep, char buf[MENV_DEP_NAME_BUF])
{
	const char *s = strstr(dep, "::");
	s = s ? s + 2 : dep;
	while (*s == ' ')
		s++;
	size_t len = strcspn(s, " =<>!~[;");
	if (len >= MENV_DEP_NAME_BUF)
		return menv_xstrndup(s, len);
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

char *menv_dep_name(const char *dep)
{
	char buf[MENV_DEP_NAME_BUF], *n = menv_dep_name_in(dep, buf);
	return n == buf ? menv_xstrdup(buf) : n;
}

void menv_records_toposort(const struct menv_record **recs, size_t n)
{
	const struct menv_record **out = menv_xcalloc(n + 1, sizeof(*out));
	int *state = menv_xcalloc(n + 1, sizeof(*state)); /* 0 new, 1 visiting, 2 done */
	size_t *stack = menv_xcalloc(n + 1, sizeof(*stack));
	size_t *next = menv_xcalloc(n + 1, sizeof(*next));
	size_t *same = menv_xcalloc(n + 1, sizeof(*same)); /* the next record of its name, or n */
	struct menv_strmap first; /* name -> its first record (the records' names, borrowed) */
	size_t nout = 0;

	menv_strmap_borrowing(&first, n);
	for (size_t i = n; i-- > 0;) {
		size_t *at = menv_strmap_get(&first, recs[i]->name);
		same[i] = at ? *at : n;
		menv_strmap_put(&first, recs[i]->name, i);
	}

	/* depth first from each record in turn: a record is emitted once all it depends on is */
	for (size_t root = 0; root < n; root++) {
		size_t sp = 0;
		if (state[root])
			continue;
		stack[sp++] = root;
		state[root] = 1;
		while (sp) {
			size_t cur = stack[sp - 1];
			json_t *deps = menv_record_depends(recs[cur]);
			bool pushed = false;
			while (next[cur] < json_array_size(deps) && !pushed) {
				const char *d =
				        json_string_value(json_array_get(deps, next[cur]++));
				if (!d)
					continue;
				char buf[MENV_DEP_NAME_BUF], *dn = menv_dep_name_in(d, buf);
				/* conda's toposort() drops pip from python's dependencies (python
				 * depends on pip under add_pip_as_python_dependency, pip on python):
				 * python is linked before pip and the noarch packages pip needs */
				const size_t *at = strcmp(dn, "pip") == 0 && strcmp(recs[cur]->name,
				                                                    "python") == 0
				                           ? NULL
				                           : menv_strmap_get(&first, dn);
				for (size_t j = at ? *at : n; j < n; j = same[j]) {
					if (state[j])
						continue;
					state[j] = 1;
					stack[sp++] = j;
					pushed = true;
					break;
				}
				if (dn != buf)
					free(dn);
			}
			if (!pushed) {
				state[cur] = 2;
				out[nout++] = recs[cur];
				sp--;
			}
		}
	}
	if (n)
		memcpy(recs, out, n * sizeof(*recs));
	menv_strmap_clear(&first);
	free(out);
	free(state);
	free(stack);
	free(next);
	free(same);
}

void menv_plan_prune(struct menv_matchspec **specs, size_t nspecs,
                     const struct menv_prefix_record *inst, size_t ninst,
                     const struct menv_record **link, size_t *nlink, json_t ***unlink,
                     size_t *nunlink)
{
	json_t *final = json_object(); /* name -> depends array */
	json_t *need = json_object();
	struct menv_strvec queue = MENV_STRVEC_INIT;
	size_t nu = *nunlink;
	json_t **leaving = sorted_copy(*unlink, nu);

	for (size_t i = 0; i < ninst; i++)
		if (!in_sorted(leaving, nu, inst[i].json))
			json_object_set(final, inst[i].name,
			                json_object_get(inst[i].json, "depends"));
	for (size_t i = 0; i < *nlink; i++)
		json_object_set(final, link[i]->name, menv_record_depends(link[i]));
	for (size_t i = 0; i < nspecs; i++)
		if (specs[i]->name)
			menv_strvec_push(&queue, specs[i]->name);
	for (size_t q = 0; q < queue.n; q++) {
		const char *nm = queue.v[q];
		if (json_object_get(need, nm) || !json_object_get(final, nm))
			continue;
		json_object_set_new(need, nm, json_true());
		size_t k;
		json_t *d;
		json_array_foreach(json_object_get(final, nm), k, d)
		{
			if (json_is_string(d))
				menv_strvec_push_owned(&queue, menv_dep_name(json_string_value(d)));
		}
	}
	*unlink = menv_xrealloc(*unlink, (nu + ninst + 1) * sizeof(**unlink));
	for (size_t i = 0; i < ninst; i++)
		if (!in_sorted(leaving, nu, inst[i].json) && !json_object_get(need, inst[i].name))
			(*unlink)[(*nunlink)++] = inst[i].json;
	size_t w = 0;
	for (size_t i = 0; i < *nlink; i++)
		if (json_object_get(need, link[i]->name))
			link[w++] = link[i];
	*nlink = w;
	free(leaving);
	menv_strvec_clear(&queue);
	json_decref(need);
	json_decref(final);
}

static const char *dist_of_label(const char *label)
{
	const char *cc = strstr(label, "::");
	return cc ? cc + 2 : label;
}

/* conda's revert_actions matches MatchSpec.from_dist_str(label) against its index, so a
 * label "channel[/subdir]::dist" takes a package cache record only of that channel (and
 * subdir), by the record's channel URL. A label without a channel, or one naming
 * "<unknown>" or a channel menv cannot resolve, takes any. */
static bool label_channel_has(const struct menv_config *cfg, const char *label,
                              const struct menv_record *r)
{
	const char *cc = strstr(label, "::");
	if (!cfg || !cc || cc == label || !strncmp(label, "<unknown>", 9))
		return true;
	char *chan = menv_xasprintf("%.*s", (int)(cc - label), label);
	struct menv_channel **want = NULL, *have = NULL;
	size_t n = 0;
	bool ok = true;
	if (menv_channel_resolve_spec(chan, NULL, cfg, &want, &n, NULL) == 0 && n) {
		ok = false;
		if (r->channel_url && menv_channel_parse(r->channel_url, cfg, &have, NULL) == 0)
			for (size_t i = 0; i < n && !ok; i++)
				ok = !strcmp(want[i]->base_url, have->base_url) &&
				     (!want[i]->platform ||
				      (r->subdir && !strcmp(want[i]->platform, r->subdir)));
	}
	menv_channel_free(have);
	menv_channels_free(want, n);
	free(chan);
	return ok;
}

int menv_plan_revision_exists(const char *prefix, size_t rev, struct menv_error *err)
{
	struct menv_revision *revs = NULL;
	size_t nrevs = 0;
	int rc = menv_history_load(prefix, &revs, &nrevs, err);
	if (!rc && rev >= nrevs)
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "revision %zu does not exist (the history "
		                    "has %zu)",
		                    rev, nrevs);
	menv_history_free(revs, nrevs);
	return rc;
}

int menv_plan_revision(const char *prefix, const struct menv_config *cfg, size_t rev,
                       bool use_cache, const struct menv_channel_set *ch,
                       struct menv_solver *solver, const struct menv_prefix_record *inst,
                       size_t ninst, struct menv_owned_recs *owned,
                       const struct menv_record ***link, size_t *nlink, json_t ***unlink,
                       size_t *nunlink, struct menv_error *err)
{
	struct menv_revision *revs = NULL;
	struct menv_strvec target = MENV_STRVEC_INIT;
	struct menv_strset want_set = MENV_STRSET_INIT, have_set = MENV_STRSET_INIT;
	struct menv_strmap chan = MENV_STRMAP_INIT; /* dist -> index in `chrecs`, made once */
	const struct menv_record **chrecs = NULL;
	bool chan_made = false, other = false;
	size_t nrevs = 0;
	int rc = menv_history_load(prefix, &revs, &nrevs, err);

	if (!rc)
		rc = menv_history_state(revs, nrevs, rev, &target, err);
	if (rc)
		goto out;
	*link = menv_xcalloc(target.n + 1, sizeof(**link));
	*unlink = menv_xcalloc(ninst + 1, sizeof(**unlink));
	*nlink = *nunlink = 0;
	owned->v = menv_xcalloc(target.n + 1, sizeof(*owned->v));
	for (size_t k = 0; k < target.n; k++)
		menv_strset_add(&want_set, dist_of_label(target.v[k]));
	for (size_t i = 0; i < ninst; i++) {
		char *d = menv_xasprintf("%s-%s-%s", inst[i].name, inst[i].version, inst[i].build);
		if (!menv_strset_has(&want_set, d))
			(*unlink)[(*nunlink)++] = inst[i].json;
		menv_strset_add(&have_set, d);
		free(d);
	}
	for (size_t k = 0; k < target.n; k++) {
		const char *want = dist_of_label(target.v[k]);
		if (menv_strset_has(&have_set, want))
			continue;
		/* the channels' parsed records by dist, the first of each kept */
		size_t nch = 0;
		for (size_t r = 0; !chan_made && ch && r < ch->nrds; r++) {
			chrecs = menv_xrealloc(chrecs, (nch + ch->rds[r]->n + 1) * sizeof(*chrecs));
			for (size_t j = 0; j < ch->rds[r]->n; j++) {
				char *d = menv_record_dist(&ch->rds[r]->recs[j]);
				chrecs[nch] = &ch->rds[r]->recs[j];
				if (menv_strmap_add(&chan, d, nch))
					nch++;
				free(d);
			}
		}
		chan_made = true;
		const size_t *at = menv_strmap_get(&chan, want);
		const struct menv_record *found = at ? chrecs[*at] : NULL;
		/* the channels' files, through the solver: "name-version-build" split from the
		 * right, as conda's dists are */
		const char *b = strrchr(want, '-'), *v = b;
		while (v && v > want && v[-1] != '-')
			v--;
		if (!found && solver && b && v > want + 1) {
			char *spec =
			        menv_xasprintf("%.*s[version='%.*s',build='%s']",
			                       (int)(v - 1 - want), want, (int)(b - v), v, b + 1);
			struct menv_matchspec *ms = NULL;
			const struct menv_record **m = NULL;
			size_t nm = 0;
			if (menv_matchspec_parse(spec, &ms, NULL) == 0 &&
			    menv_solver_search(solver, ms, &m, &nm, NULL) == 0 && nm)
				found = m[0];
			free(m);
			menv_matchspec_free(ms);
			free(spec);
		}
		if (!found && use_cache) {
			/* the package cache still has it, from the label's channel */
			struct menv_record *c = &owned->v[owned->n];
			if (menv_record_from_cache(&cfg->pkgs_dirs, want, c)) {
				other = !label_channel_has(cfg, target.v[k], c);
				if (!other)
					found = &owned->v[owned->n++];
				else
					menv_record_release(c);
			}
		}
		if (!found) {
			rc = menv_error_set(
			        err, MENV_ENOTFOUND,
			        use_cache ? "'%s' of revision %zu is in neither the channels nor "
			                    "the package cache%s"
			                  : "'%s' of revision %zu is not in the channels%s",
			        target.v[k], rev,
			        other ? " (the cache's copy is of another channel)"
			        : !use_cache
			                ? " (the package cache counts only --offline, as in conda)"
			                : "");
			goto out;
		}
		(*link)[(*nlink)++] = found;
	}
	menv_records_toposort(*link, *nlink);
out:
	menv_strset_clear(&want_set);
	menv_strset_clear(&have_set);
	menv_strmap_clear(&chan);
	free(chrecs);
	menv_strvec_clear(&target);
	menv_history_free(revs, nrevs);
	return rc;
}

/* "3.10.4" -> "3.10" in out (at most outlen bytes). */
static void minor_of(const char *version, char *out, size_t outlen)
{
	const char *dot = strchr(version, '.');
	const char *end = dot ? strchr(dot + 1, '.') : NULL;
	size_t n = end ? (size_t)(end - version) : strlen(version);
	snprintf(out, outlen, "%.*s", (int)n, version);
}

static bool json_noarch_python(json_t *rec)
{
	json_t *v = json_object_get(rec, "noarch");
	return (json_is_string(v) && !strcmp(json_string_value(v), "python")) ||
	       json_is_true(json_object_get(rec, "noarch_python"));
}

/* A record to link again from an installed PrefixRecord (its url, fn, hashes and depends;
 * the install locations dropped). False when the PrefixRecord lacks its url or fn. */
bool menv_record_from_cache(const struct menv_strvec *dirs, const char *dist,
                            struct menv_record *out)
{
	json_t *j = NULL;
	for (size_t i = 0; i < dirs->n && !j; i++) {
		char *p = menv_xasprintf("%s/%s/info/repodata_record.json", dirs->v[i], dist);
		j = menv_json_load_file(p, 0, NULL);
		free(p);
	}
	const char *fn = j ? jstr(j, "fn") : "";
	bool ok = false;
	if (j && *fn) {
		char *base = menv_xstrdup(jstr(j, "url"));
		char *slash = strrchr(base, '/');
		if (slash)
			*slash = '\0';
		ok = menv_record_from_json(out, j, fn, base, NULL, NULL) == 0;
		free(base);
	}
	json_decref(j);
	return ok;
}

bool menv_record_from_installed(json_t *rec, struct menv_record *out)
{
	const char *url = jstr(rec, "url"), *fn = jstr(rec, "fn");
	static const char *const drop[] = {"files",
	                                   "paths_data",
	                                   "link",
	                                   "extracted_package_dir",
	                                   "package_tarball_full_path",
	                                   "requested_spec",
	                                   "requested_specs"};
	if (!*url || !*fn)
		return false;
	json_t *copy = json_deep_copy(rec);
	for (size_t k = 0; k < sizeof(drop) / sizeof(*drop); k++)
		json_object_del(copy, drop[k]);
	char *base = menv_xstrdup(url);
	char *slash = strrchr(base, '/');
	if (slash)
		*slash = '\0';
	bool ok = menv_record_from_json(out, copy, fn, base, NULL, NULL) == 0;
	free(base);
	json_decref(copy);
	return ok;
}

size_t menv_plan_relink_noarch_python(struct menv_solver *solver,
                                      const struct menv_prefix_record *inst, size_t ninst,
                                      const struct menv_record ***link, size_t *nlink,
                                      json_t ***unlink, size_t *nunlink,
                                      struct menv_owned_recs *made)
{
	char was[32] = "", now[32] = "";
	size_t added = 0;

	for (size_t i = 0; i < ninst; i++)
		if (!strcmp(inst[i].name, "python"))
			minor_of(inst[i].version, was, sizeof(was));
	for (size_t i = 0; i < *nlink; i++)
		if (!strcmp((*link)[i]->name, "python"))
			minor_of((*link)[i]->version, now, sizeof(now));
	if (!was[0] || !now[0] || !strcmp(was, now))
		return 0;
	*link = menv_xrealloc(*link, (*nlink + ninst + 1) * sizeof(**link));
	*unlink = menv_xrealloc(*unlink, (*nunlink + ninst + 1) * sizeof(**unlink));
	made->v = menv_xcalloc(ninst + 1, sizeof(*made->v)); /* *link points into it */
	made->n = 0;
	struct menv_strset linked = MENV_STRSET_INIT;
	for (size_t i = 0; i < *nlink; i++)
		menv_strset_add(&linked, (*link)[i]->name);
	size_t nu = *nunlink;
	json_t **leaving = sorted_copy(*unlink, nu);
	for (size_t i = 0; i < ninst; i++) {
		json_t *rec = inst[i].json;
		if (menv_strset_has(&linked, inst[i].name) || in_sorted(leaving, nu, rec) ||
		    !json_noarch_python(rec))
			continue;
		const char *url = jstr(rec, "url");
		const struct menv_record *found = NULL, **cands = NULL;
		struct menv_matchspec *ms = NULL;
		size_t ncands = 0;
		if (solver && menv_matchspec_parse(inst[i].name, &ms, NULL) == 0 &&
		    menv_solver_search(solver, ms, &cands, &ncands, NULL) == 0) {
			for (size_t j = 0; j < ncands; j++) {
				const struct menv_record *c = cands[j];
				if (strcmp(c->version, inst[i].version) ||
				    strcmp(c->build, inst[i].build))
					continue;
				if (!found || (c->url && !strcmp(c->url, url)))
					found = c;
			}
		}
		free(cands);
		menv_matchspec_free(ms);
		if (!found && menv_record_from_installed(rec, &made->v[made->n]))
			found = &made->v[made->n++];
		if (!found)
			continue;
		(*unlink)[(*nunlink)++] = rec;
		(*link)[(*nlink)++] = found;
		menv_strset_add(&linked, inst[i].name);
		added++;
	}
	menv_strset_clear(&linked);
	free(leaving);
	return added;
}

/* The listed channel (a URL or path) whose last path components are `name`, or NULL. */
static const char *listed_channel(const char *name, const struct menv_strvec *a,
                                  const struct menv_strvec *b)
{
	const struct menv_strvec *lists[2] = {a, b};
	size_t nl = strlen(name);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; lists[k] && i < lists[k]->n; i++) {
			const char *c = lists[k]->v[i];
			size_t cl = strlen(c);
			while (cl > 1 && c[cl - 1] == '/')
				cl--;
			if (!strstr(c, "://") && c[0] != '/' && c[0] != '.' && c[0] != '~')
				continue; /* a name: resolved as usual */
			if (cl > nl && !strncmp(c + cl - nl, name, nl) && c[cl - nl - 1] == '/')
				return c;
		}
	}
	return NULL;
}

void menv_envfile_conda_specs(const struct menv_envfile *ef, const struct menv_strvec *cli_channels,
                              struct menv_strvec *specs)
{
	bool has_pip = false;
	for (size_t i = 0; i < specs->n; i++) {
		const char *s = specs->v[i];
		const char *c = strstr(s, "::");
		const char *nm = c ? c + 2 : s;
		while (*nm == ' ')
			nm++;
		size_t nl = strcspn(nm, " =<>!~[");
		if (nl == 3 && !strncmp(nm, "pip", 3))
			has_pip = true; /* a pip spec is there: never widened (BR-022) */
		if (!c || strstr(s, "://") || s[0] == '/' || s[0] == '.')
			continue;
		char *chan = menv_xstrndup(s, (size_t)(c - s));
		const char *slash = strchr(chan, '/');
		const char *url =
		        slash ? NULL
		              : listed_channel(chan, cli_channels, ef ? &ef->channels : NULL);
		if (url) {
			char *n = menv_xasprintf("%s::%s", url, c + 2);
			free(specs->v[i]);
			specs->v[i] = n;
		}
		free(chan);
	}
	if (ef && ef->has_pip_section && !has_pip)
		menv_strvec_push(specs, "pip");
}

/* Splits "channel::name-version-build" into name, version and version-build. */
static void split_dist(const char *label, char **name, char **ver, char **vb)
{
	const char *d = dist_of_label(label);
	const char *b = strrchr(d, '-');
	const char *v = b ? b : d;
	while (v > d && v[-1] != '-')
		v--;
	if (!b || v == d) {
		*name = menv_xstrdup(d);
		*ver = menv_xstrdup("");
		*vb = menv_xstrdup("");
		return;
	}
	*name = menv_xstrndup(d, (size_t)(v - 1 - d));
	*ver = menv_xstrndup(v, (size_t)(b - v));
	*vb = menv_xstrdup(v);
}

/* name -> the index of the first label of `v` naming it */
static void names_of(const struct menv_strvec *v, struct menv_strmap *out)
{
	for (size_t m = 0; m < v->n; m++) {
		char *nm, *ver, *vb;
		split_dist(v->v[m], &nm, &ver, &vb);
		menv_strmap_add(out, nm, m);
		free(nm);
		free(ver);
		free(vb);
	}
}

void menv_revision_diff(const struct menv_revision *r, struct menv_revision_diff *out)
{
	struct menv_strmap added = MENV_STRMAP_INIT, removed = MENV_STRMAP_INIT;
	names_of(&r->added, &added);
	names_of(&r->removed, &removed);
	for (size_t k = 0; k < r->removed.n; k++) {
		char *nm, *ver, *vb;
		split_dist(r->removed.v[k], &nm, &ver, &vb);
		const size_t *at = menv_strmap_get(&added, nm);
		if (at) {
			char *nm2, *ver2, *vb2;
			split_dist(r->added.v[*at], &nm2, &ver2, &vb2);
			struct menv_version *a = NULL, *b = NULL;
			int c = menv_version_parse(ver2, &a, NULL) == 0 &&
			                        menv_version_parse(ver, &b, NULL) == 0
			                ? menv_version_cmp(a, b)
			                : strcmp(ver2, ver);
			menv_version_free(a);
			menv_version_free(b);
			menv_strvec_push_owned(c >= 0 ? &out->upgrade : &out->downgrade,
			                       menv_xasprintf("%s-%s -> %s", nm, vb, vb2));
			menv_strvec_push_owned(&out->changed,
			                       menv_xasprintf("%s  {%s -> %s}", nm, vb, vb2));
			free(nm2);
			free(ver2);
			free(vb2);
		} else {
			menv_strvec_push(&out->remove, r->removed.v[k]);
		}
		free(nm);
		free(ver);
		free(vb);
	}
	for (size_t k = 0; k < r->added.n; k++) {
		char *nm, *ver, *vb;
		split_dist(r->added.v[k], &nm, &ver, &vb);
		if (!menv_strmap_get(&removed, nm))
			menv_strvec_push(&out->install, r->added.v[k]);
		free(nm);
		free(ver);
		free(vb);
	}
	menv_strmap_clear(&added);
	menv_strmap_clear(&removed);
}

void menv_revision_diff_release(struct menv_revision_diff *d)
{
	menv_strvec_clear(&d->install);
	menv_strvec_clear(&d->remove);
	menv_strvec_clear(&d->upgrade);
	menv_strvec_clear(&d->downgrade);
	menv_strvec_clear(&d->changed);
}

json_t *menv_revision_json(const struct menv_revision *r, size_t rev,
                           const struct menv_revision_diff *d)
{
	json_t *o = json_pack("{s:I, s:s}", "rev", (json_int_t)rev, "date", r->date);
	const struct menv_strvec *parts[] = {&d->install, &d->remove, &d->upgrade, &d->downgrade};
	const char *keys[] = {"install", "remove", "upgrade", "downgrade"};
	for (int k = 0; k < 4; k++) {
		json_t *a = json_array();
		for (size_t m = 0; m < parts[k]->n; m++)
			json_array_append_new(a, json_string(parts[k]->v[m]));
		json_object_set_new(o, keys[k], a);
	}
	if (r->cmd)
		json_object_set_new(o, "cmd", json_string(r->cmd));
	return o;
}

int menv_history_revisions(const char *prefix, json_t **out, struct menv_buf *text,
                           struct menv_error *err)
{
	struct menv_revision *revs = NULL;
	size_t n = 0;

	*out = NULL;
	if (menv_history_load(prefix, &revs, &n, err))
		return err->code;
	*out = json_array();
	for (size_t i = 0; i < n; i++) {
		struct menv_revision_diff d = {0};
		const struct menv_revision *r = &revs[i];
		menv_revision_diff(r, &d);
		json_array_append_new(*out, menv_revision_json(r, i, &d));
		if (text) {
			menv_buf_addf(text, "%s  (rev %zu)\n", r->date, i);
			for (size_t m = 0; m < d.changed.n; m++)
				menv_buf_addf(text, "     %s\n", d.changed.v[m]);
			for (size_t m = 0; m < d.remove.n + d.install.n; m++) {
				bool rm = m < d.remove.n;
				const char *l = rm ? d.remove.v[m] : d.install.v[m - d.remove.n];
				menv_buf_addf(text, "    %c%s\n", rm ? '-' : '+',
				              strstr(l, "::") ? strstr(l, "::") + 2 : l);
			}
			menv_buf_adds(text, "\n");
		}
		menv_revision_diff_release(&d);
	}
	menv_history_free(revs, n);
	return 0;
}
