/*
 * pool.c - the solver object and what goes into its libsolv pool directly: records of a
 * menv_repodata, the installed prefix, virtual packages, pins, conda's pip-after-python rule;
 * and the record of a solvable (menv_solv_record_of), parsed lazily from a mapped repodata.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <solv/conda.h>
#include <solv/repo_conda.h>

#include "internal.h"

struct menv_solver *menv_solver_new(const char *subdir, enum menv_channel_priority prio)
{
	struct menv_solver *s = menv_xcalloc(1, sizeof(*s));

	s->pool = pool_create();
	pool_setdisttype(s->pool, DISTTYPE_CONDA);
	s->subdir = menv_xstrdup(subdir);
	s->prio = prio;
	s->virt = repo_create(s->pool, "@virtual");
	s->offkey = pool_str2id(s->pool, "menv:offset", 1);
	s->cachekey = pool_str2id(s->pool, "menv:cachekey", 1);
	s->baseurlkey = pool_str2id(s->pool, "menv:base_url", 1);
	s->warnkey = pool_str2id(s->pool, "menv:warnings", 1);
	pool_set_installed(s->pool, s->virt);
	return s;
}

void menv_solver_free(struct menv_solver *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		struct filerepo *f = s->files[i];
		size_t n = f->repo ? (size_t)(f->repo->end - f->repo->start) : 0;
		for (size_t k = 0; f->recs && k < n; k++) {
			if (f->recs[k])
				menv_record_release(f->recs[k]);
			free(f->recs[k]);
		}
		free(f->recs);
		menv_solv_sparse_free(f->sparse);
		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f->solv_path);
		free(f->key);
		if (f->map)
			munmap((void *)f->map, f->size);
		free(f->subdir);
		free(f->base);
		free(f);
	}
	free(s->files);
	if (s->ranked_names) {
		map_free(s->ranked_names);
		free(s->ranked_names);
	}
	if (s->pruned) {
		s->pool->considered = NULL;
		map_free(s->pruned);
		free(s->pruned);
	}
	if (s->considered) {
		s->pool->considered = NULL;
		map_free(s->considered);
		free(s->considered);
	}
	pool_free(s->pool);
	free(s->by_id);
	free(s->unmatched);
	free(s->subdir);
	free(s->problems);
	json_decref(s->problems_json);
	free(s->inst_by_id);
	free(s->noarch_repo);
	menv_strvec_clear(&s->warnings);
	free(s);
}

void menv_solver_set_cancel(struct menv_solver *s, volatile int *cancel)
{
	s->cancel = cancel;
}

const struct menv_strvec *menv_solver_warnings(const struct menv_solver *s)
{
	return &s->warnings;
}

void menv_solver_clear_warnings(struct menv_solver *s)
{
	menv_strvec_clear(&s->warnings);
}

static void remember(struct menv_solver *s, Id p, const struct menv_record *r)
{
	if ((size_t)p >= s->by_id_alloc) {
		size_t n = s->by_id_alloc ? s->by_id_alloc : 1024;
		while (n <= (size_t)p)
			n *= 2;
		s->by_id = menv_xrealloc(s->by_id, n * sizeof(*s->by_id));
		memset(s->by_id + s->by_id_alloc, 0, (n - s->by_id_alloc) * sizeof(*s->by_id));
		s->by_id_alloc = n;
	}
	s->by_id[p] = r;
}

static void add_track_features(Repodata *data, Id h, Pool *pool, const char *tf)
{
	const char *p = tf;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *e = p;
		while (*e && *e != ' ' && *e != ',')
			e++;
		if (e > p)
			repodata_add_idarray(data, h, SOLVABLE_TRACK_FEATURES,
			                     pool_strn2id(pool, p, (unsigned int)(e - p), 1));
		p = e;
	}
}

void menv_solver_add_repodata(struct menv_solver *s, const struct menv_repodata *rd)
{
	Pool *pool = s->pool;
	Repo *repo;
	Repodata *data;
	char *rname = menv_xasprintf("%s/%s", rd->channel ? rd->channel->name : "?", rd->subdir);

	repo = repo_create(pool, rname);
	free(rname);
	repo->appdata = (void *)rd;
	if (s->prio != MENV_PRIORITY_DISABLED)
		repo->priority = rd->channel ? rd->channel->priority : -s->nrepos;
	repo->subpriority = strcmp(rd->subdir, "noarch") ? 1 : 0;
	s->nrepos++;
	s->nfilled += rd->n > 0;
	data = repo_add_repodata(repo, 0);
	for (size_t i = 0; i < rd->n; i++) {
		const struct menv_record *r = &rd->recs[i];
		Id p = repo_add_solvable(repo);
		Solvable *sv = pool_id2solvable(pool, p);
		json_t *arr, *v;
		size_t k;
		char num[48];

		sv->name = pool_str2id(pool, r->name, 1);
		sv->evr = pool_str2id(pool, r->version, 1);
		sv->provides = repo_addid_dep(repo, sv->provides,
		                              pool_rel2id(pool, sv->name, sv->evr, REL_EQ, 1), 0);
		repodata_add_poolstr_array(data, p, SOLVABLE_BUILDFLAVOR, r->build);
		/* libsolv's conda policy compares this after the version: the build number, then
		 * (conda's last tie-breaker) the newer timestamp, as one dotted number */
		snprintf(num, sizeof(num), "%lld.0.%lld", (long long)r->build_number,
		         (long long)(r->timestamp > 0 ? r->timestamp / 1000 : 0));
		repodata_set_str(data, p, SOLVABLE_BUILDVERSION, num);
		if (r->timestamp > 0)
			repodata_set_num(data, p, SOLVABLE_BUILDTIME,
			                 (unsigned long long)(r->timestamp / 1000));
		arr = menv_record_depends(r);
		json_array_foreach(arr, k, v)
		{
			if (!json_is_string(v))
				continue;
			Id dep = pool_conda_matchspec(pool, json_string_value(v));
			if (dep)
			sv->requires = repo_addid_dep(repo, sv->requires, dep, 0);
		}
		arr = menv_record_constrains(r);
		if (arr) {
			json_array_foreach(arr, k, v)
			{
				if (!json_is_string(v))
					continue;
				Id dep = pool_conda_matchspec(pool, json_string_value(v));
				if (dep)
					repodata_add_idarray(data, p, SOLVABLE_CONSTRAINS, dep);
			}
		}
		v = json_object_get(r->json, "track_features");
		if (json_is_string(v))
			add_track_features(data, p, pool, json_string_value(v));
		else if (json_is_array(v)) {
			json_t *f;
			json_array_foreach(v, k, f) if (json_is_string(f))
			        add_track_features(data, p, pool, json_string_value(f));
		}
		remember(s, p, r);
	}
	repo_internalize(repo);
}

/* The record of solvable p: a repodata record added with menv_solver_add_repodata, or the
 * JSON object at its offset in a mapped repodata file, parsed on first use. NULL for
 * installed and virtual solvables. */
const struct menv_record *menv_solv_record_of(struct menv_solver *s, Id p)
{
	if ((size_t)p < s->by_id_alloc && s->by_id[p])
		return s->by_id[p];
	Solvable *sv = pool_id2solvable(s->pool, p);
	if (!sv->repo || !sv->repo->appdata || sv->repo == s->virt)
		return NULL;
	struct filerepo *f = NULL;
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i]->repo == sv->repo)
			f = s->files[i];
	if (!f)
		return NULL;
	size_t k = (size_t)(p - f->repo->start);
	if (f->recs[k])
		return f->recs[k];
	unsigned long long off = solvable_lookup_num(sv, s->offkey, (unsigned long long)-1);
	if (off == (unsigned long long)-1 || off >= f->size)
		return NULL;
	const char *loc = solvable_lookup_str(sv, SOLVABLE_MEDIAFILE);
	json_t *obj = NULL;
	struct menv_record *r = menv_xcalloc(1, sizeof(*r));
	struct menv_error err = {0};
	char *src = menv_xasprintf("%s/%s/repodata.json record '%s'",
	                           f->ch && f->ch->name ? f->ch->name : "?", f->subdir,
	                           loc ? loc : "?");
	/* the depth limit of every JSON menv reads: a record nested deeper is not taken */
	struct menv_buf bytes = MENV_BUF_INIT;
	bool own = menv_solv_sparse_record(f, off, &bytes);
	int rc = menv_json_parse(own ? bytes.buf : f->map + off, own ? bytes.len : f->size - off,
	                         JSON_DISABLE_EOF_CHECK, src, &obj, &err);
	menv_buf_release(&bytes);
	if (!rc && (!loc || menv_record_from_json(r, obj, loc, f->base, f->ch, &err)))
		rc = loc ? err.code : menv_error_set(&err, MENV_EPARSE, "%s: no file name", src);
	free(src);
	if (rc) {
		s->unreadable = err;
		json_decref(obj);
		free(r);
		return NULL;
	}
	json_decref(obj); /* the record holds its own reference */
	if (!r->subdir) {
		json_object_set_new(r->json, "subdir", json_string(f->subdir));
		r->subdir = json_string_value(json_object_get(r->json, "subdir"));
	}
	f->recs[k] = r;
	return r;
}

void menv_solver_set_add_pip(struct menv_solver *s, bool on)
{
	s->add_pip = on;
}

/* conda's add_pip_as_python_dependency: python 2.x and 3.x records of the channels need pip.
 * Only where the channels have pip at all: conda's unconditional rule would make python
 * uninstallable from a channel without it. Runs once, before whatprovides is made. */
void menv_solv_add_pip_dependency(struct menv_solver *s)
{
	Pool *pool = s->pool;
	Id python = pool_str2id(pool, "python", 0), pip = pool_str2id(pool, "pip", 0);
	bool have_pip = false;

	if (!s->add_pip || s->pip_added || !python || !pip)
		return;
	s->pip_added = true;
	for (Id p = 2; p < pool->nsolvables && !have_pip; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		have_pip = sv->repo && sv->repo != s->virt && sv->name == pip;
	}
	for (Id p = 2; have_pip && p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		const char *v = pool_id2str(pool, sv->evr);
		if (sv->repo && sv->repo != s->virt && sv->name == python &&
		    (!strncmp(v, "2.", 2) || !strncmp(v, "3.", 2)))
		sv->requires = repo_addid_dep(sv->repo, sv->requires, pip, 0);
	}
}

void menv_solver_add_virtual(struct menv_solver *s, const char *name, const char *version,
                             const char *build)
{
	Pool *pool = s->pool;
	Repodata *data = repo_last_repodata(s->virt);
	Id p = repo_add_solvable(s->virt);
	Solvable *sv = pool_id2solvable(pool, p);

	if (!data)
		data = repo_add_repodata(s->virt, 0);
	if (!strcmp(name, "__cuda"))
		s->has_cuda = true;
	sv->name = pool_str2id(pool, name, 1);
	sv->evr = pool_str2id(pool, version, 1);
	sv->provides = repo_addid_dep(s->virt, sv->provides,
	                              pool_rel2id(pool, sv->name, sv->evr, REL_EQ, 1), 0);
	repodata_add_poolstr_array(data, p, SOLVABLE_BUILDFLAVOR, build);
	repodata_set_str(data, p, SOLVABLE_BUILDVERSION, "0");
	repodata_internalize(data);
}

void menv_solver_add_pin(struct menv_solver *s, const struct menv_matchspec *pin)
{
	Pool *pool = s->pool;
	Repodata *data = repo_last_repodata(s->virt);
	char *str = menv_matchspec_str(pin);
	char name[64];
	Id p, dep;

	dep = pool_conda_matchspec(pool, str);
	free(str);
	if (!dep)
		return;
	if (!data)
		data = repo_add_repodata(s->virt, 0);
	/* an installed solvable that constrains the pinned name: the pin holds when the name is
	 * installed and forces nothing when it is not (conda's pinned_packages) */
	snprintf(name, sizeof(name), "__menv_pin_%d", s->npins++);
	p = repo_add_solvable(s->virt);
	Solvable *sv = pool_id2solvable(pool, p);
	sv->name = pool_str2id(pool, name, 1);
	sv->evr = pool_str2id(pool, "0", 1);
	sv->provides = repo_addid_dep(s->virt, sv->provides,
	                              pool_rel2id(pool, sv->name, sv->evr, REL_EQ, 1), 0);
	repodata_add_idarray(data, p, SOLVABLE_CONSTRAINS, dep);
	repodata_internalize(data);
}

static void add_deps(Pool *pool, Repo *repo, Repodata *data, Id p, json_t *arr, bool constrains)
{
	size_t k;
	json_t *v;
	Solvable *sv = pool_id2solvable(pool, p);
	if (!json_is_array(arr))
		return;
	json_array_foreach(arr, k, v)
	{
		if (!json_is_string(v))
			continue;
		Id dep = pool_conda_matchspec(pool, json_string_value(v));
		if (!dep)
			continue;
		if (constrains)
			repodata_add_idarray(data, p, SOLVABLE_CONSTRAINS, dep);
		else
		sv->requires = repo_addid_dep(repo, sv->requires, dep, 0);
	}
}

/* conda's ms_depends: a record's legacy "features" each ask for a record that tracks the
 * feature (MatchSpec(track_features=F)); conda's name for such a provider is "F@", which no
 * package name can be. Adds "F@" to the provides (track_features) or requires (features)
 * of p for each feature of record r's `key`; requires only of features in `tracked`. */
static void add_feature_deps(Pool *pool, Repo *repo, Id p, json_t *r, const char *key,
                             json_t *tracked)
{
	json_t *own = json_object();
	const char *f;
	json_t *v;
	Solvable *sv = pool_id2solvable(pool, p);
	bool provides = !strcmp(key, "track_features");

	menv_solv_add_features(json_object_get(r, key), own);
	json_object_foreach(own, f, v)
	{
		if (!provides && !json_object_get(tracked, f))
			continue;
		char *at = menv_xasprintf("%s@", f);
		Id dep = pool_str2id(pool, at, 1);
		free(at);
		if (provides)
			sv->provides = repo_addid_dep(repo, sv->provides, dep, 0);
		else
		sv->requires = repo_addid_dep(repo, sv->requires, dep, 0);
	}
	json_decref(own);
}

void menv_solver_add_installed(struct menv_solver *s, json_t *const *recs, size_t n)
{
	Pool *pool = s->pool;
	Repodata *data = repo_last_repodata(s->virt);
	/* no channel record (a records-only solve: remove of a prefix without features, remove
	 * --offline over channels read as empty, conda's offline index of the prefix's records):
	 * the installed records are every candidate, so conda's feature dependency is a plain
	 * requirement (a build with features keeps its tracker: nothing could relink it). With
	 * channel records, features.c's metric does that work; a feature no installed record
	 * tracks asks for nothing (the prefix lacks it already). */
	json_t *tracked = s->nfilled ? NULL : json_object();

	for (size_t i = 0; tracked && i < n; i++)
		menv_solv_add_features(json_object_get(recs[i], "track_features"), tracked);

	if (!data)
		data = repo_add_repodata(s->virt, 0);
	for (size_t i = 0; i < n; i++) {
		json_t *r = recs[i];
		const char *name = json_string_value(json_object_get(r, "name"));
		const char *ver = json_string_value(json_object_get(r, "version"));
		const char *build = json_string_value(json_object_get(r, "build"));
		json_t *bn = json_object_get(r, "build_number");
		char num[48];
		if (!name || !ver || !build)
			continue;
		Id p = repo_add_solvable(s->virt);
		Solvable *sv = pool_id2solvable(pool, p);
		sv->name = pool_str2id(pool, name, 1);
		sv->evr = pool_str2id(pool, ver, 1);
		sv->provides = repo_addid_dep(s->virt, sv->provides,
		                              pool_rel2id(pool, sv->name, sv->evr, REL_EQ, 1), 0);
		repodata_add_poolstr_array(data, p, SOLVABLE_BUILDFLAVOR, build);
		snprintf(num, sizeof(num), "%lld.0.0",
		         (long long)(json_is_integer(bn) ? json_integer_value(bn) : 0));
		repodata_set_str(data, p, SOLVABLE_BUILDVERSION, num);
		add_deps(pool, s->virt, data, p, json_object_get(r, "depends"), false);
		add_deps(pool, s->virt, data, p, json_object_get(r, "constrains"), true);
		if (tracked) {
			add_feature_deps(pool, s->virt, p, r, "track_features", tracked);
			add_feature_deps(pool, s->virt, p, r, "features", tracked);
		}
		if ((size_t)p >= s->inst_alloc) {
			size_t m = s->inst_alloc ? s->inst_alloc : 256;
			while (m <= (size_t)p)
				m *= 2;
			s->inst_by_id = menv_xrealloc(s->inst_by_id, m * sizeof(*s->inst_by_id));
			memset(s->inst_by_id + s->inst_alloc, 0,
			       (m - s->inst_alloc) * sizeof(json_t *));
			s->inst_alloc = m;
		}
		s->inst_by_id[p] = r;
	}
	json_decref(tracked);
	repodata_internalize(data);
}
