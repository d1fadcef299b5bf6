/*
 * features.c - conda's legacy `features`: a record's "features" ask for a package that
 * tracks them ("track_features", nomkl, mkl, ...). conda's classic Resolve counts them
 * (generate_feature_count, then generate_feature_metric): once a feature is tracked in the
 * solution, the builds of a name that carry it win over those that do not (before the
 * dependencies' versions; for a requested name after its version), and a build whose
 * feature nothing tracks needs its tracker (ms_depends), so it loses. libsolv's conda
 * reader knows no "features": these are DISFAVOR jobs for a second solve.
 *
 * Almost no solution tracks a feature or holds a build with one: that is found from the
 * solution's own records (track_features from libsolv's SOLVABLE_TRACK_FEATURES, "features"
 * from the records a transaction reads anyway), and only then are the other builds of the
 * solution's names read, each once.
 */
#include <stdlib.h>
#include <string.h>

#include <solv/evr.h>

#include "internal.h"

/* Adds the features of one string (conda writes "a b" or "a,b") to set. */
static void add_feature_string(const char *p, json_t *set)
{
	while (p && *p) {
		p += strspn(p, " ,");
		size_t n = strcspn(p, " ,");
		if (n) {
			char *f = menv_xstrndup(p, n);
			json_object_set_new(set, f, json_true());
			free(f);
		}
		p += n;
	}
}

void menv_solv_add_features(json_t *v, json_t *set)
{
	size_t i;
	json_t *e;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e) menv_solv_add_features(e, set);
		return;
	}
	add_feature_string(json_string_value(v), set);
}

/* The installed PrefixRecord of p, or NULL. */
static json_t *installed_json(struct menv_solver *s, Id p)
{
	return (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
}

/* The record JSON of solvable p: an installed PrefixRecord or a channel's record (parsed
 * on first use, then kept by the solver). */
static json_t *json_of(struct menv_solver *s, Id p)
{
	json_t *j = installed_json(s, p);
	if (j)
		return j;
	const struct menv_record *r = menv_solv_record_of(s, p);
	return r ? r->json : NULL;
}

/* The features solvable p tracks, added to set: a channel record's from the pool (libsolv's
 * conda reader and menv_solver_add_repodata split them as conda does), an installed one's
 * from its PrefixRecord (its solvable carries none: libsolv's policy would count them). */
static void add_tracked(struct menv_solver *s, Id p, json_t *set)
{
	json_t *inst = installed_json(s, p);
	if (inst) {
		menv_solv_add_features(json_object_get(inst, "track_features"), set);
		return;
	}
	Queue q;
	queue_init(&q);
	solvable_lookup_idarray(pool_id2solvable(s->pool, p), SOLVABLE_TRACK_FEATURES, &q);
	for (int i = 0; i < q.count; i++)
		add_feature_string(pool_id2str(s->pool, q.elements[i]), set);
	queue_free(&q);
}

/* Does record j (NULL: none) carry a feature? */
static bool has_features(json_t *j)
{
	json_t *set = json_object();
	menv_solv_add_features(j ? json_object_get(j, "features") : NULL, set);
	bool any = json_object_size(set) > 0;
	json_decref(set);
	return any;
}

/* How many features of record j are in `active` (*on) and not (*off). */
static void count_features(json_t *j, json_t *active, int *on, int *off)
{
	json_t *set = json_object();
	const char *f;
	json_t *v;
	*on = *off = 0;
	menv_solv_add_features(j ? json_object_get(j, "features") : NULL, set);
	json_object_foreach(set, f, v)
	{
		if (json_object_get(active, f))
			(*on)++;
		else
			(*off)++;
	}
	json_decref(set);
}

static bool listed(const struct menv_strvec *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], name))
			return true;
	return false;
}

/* The builds of one name: each one's features counted once. */
struct build {
	Id p;
	int on, off;
};

/* Appends the jobs of the builds of `name` (the solution's builds in `in`); true when a build
 * of the solution loses. */
static bool name_jobs(struct menv_solver *s, Id name, json_t *active, bool req, const Map *in,
                      Queue *job, Map *freed)
{
	Pool *pool = s->pool;
	Id q, qq;
	size_t n = 0, alloc = 0;
	struct build *b = NULL;
	int maxon = 0;
	Id topfeat = 0; /* the newest version of a build with the most tracked features */
	bool any = false, hit = false;

	FOR_PROVIDES(q, qq, name)
	{
		Solvable *sq = pool_id2solvable(pool, q);
		if (sq->name != name)
			continue;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			b = menv_xrealloc(b, alloc * sizeof(*b));
		}
		b[n].p = q;
		count_features(json_of(s, q), active, &b[n].on, &b[n].off);
		int on = b[n++].on;
		any = any || on || b[n - 1].off;
		if (on > maxon ||
		    (on == maxon && on &&
		     (!topfeat || pool_evrcmp(pool, sq->evr, topfeat, EVRCMP_COMPARE) > 0))) {
			maxon = on;
			topfeat = sq->evr;
		}
	}
	for (size_t i = 0; any && i < n; i++) {
		q = b[i].p;
		Solvable *sq = pool_id2solvable(pool, q);
		/* a requested name's version comes first: only the builds of versions a featured
		 * build reaches lose to it */
		bool lose = b[i].off > 0 ||
		            (b[i].on < maxon &&
		             (!req || pool_evrcmp(pool, sq->evr, topfeat, EVRCMP_COMPARE) <= 0));
		if (!lose)
			continue;
		queue_push2(job, SOLVER_DISFAVOR | SOLVER_SOLVABLE, q);
		hit = hit || MAPTST(in, q);
		if (MAPTST(in, q) && installed_json(s, q)) {
			/* an installed build that loses is relinked as a winning one (conda's
			 * feature metric comes before its fewest changes) */
			MAPSET(freed, q);
			queue_push2(job, SOLVER_ERASE | SOLVER_SOLVABLE | SOLVER_WEAK, q);
			queue_push2(job, SOLVER_INSTALL | SOLVER_SOLVABLE_NAME | SOLVER_WEAK, name);
		}
	}
	free(b);
	return hit;
}

int menv_solv_feature_jobs(struct menv_solver *s, Solver *solv, const struct menv_strvec *requested,
                           Queue *job, Map *freed)
{
	Pool *pool = s->pool;
	Queue dq;
	json_t *active = json_object();
	int start = job->count;
	bool hit = false; /* a build of the solution loses */
	bool featured = false;
	Map in;

	queue_init(&dq);
	solver_get_decisionqueue(solv, &dq);
	map_init(&in, pool->nsolvables);
	for (int i = 0; i < dq.count; i++)
		if (dq.elements[i] > 1) {
			MAPSET(&in, dq.elements[i]);
			add_tracked(s, dq.elements[i], active);
		}
	/* nothing tracked: only a build of the solution that carries a feature loses (to a
	 * build without); with none, no build of the solution loses */
	for (int i = 0; !json_object_size(active) && !featured && i < dq.count; i++)
		featured = dq.elements[i] > 1 && has_features(json_of(s, dq.elements[i]));
	if (s->pruned && (json_object_size(active) || featured)) {
		/* every build of the solution's names counts, those pruning left out too */
		map_free(&in);
		queue_free(&dq);
		json_decref(active);
		return -1;
	}
	Map seen;
	map_init(&seen, json_object_size(active) || featured ? pool->ss.nstrings : 0);
	for (int i = 0; (json_object_size(active) || featured) && i < dq.count; i++) {
		Id p = dq.elements[i];
		if (p <= 1)
			continue;
		Id name = pool_id2solvable(pool, p)->name;
		if (MAPTST(&seen, name))
			continue;
		MAPSET(&seen, name);
		bool req = listed(requested, pool_id2str(pool, name));
		if (name_jobs(s, name, active, req, &in, job, freed))
			hit = true;
	}
	if (!hit)
		queue_truncate(job, start); /* the solution stands: no second solve */
	map_free(&seen);
	map_free(&in);
	queue_free(&dq);
	json_decref(active);
	return (job->count - start) / 2;
}

/* Does record j carry a feature of `set` in its field `key`? */
static bool carries(json_t *j, const char *key, json_t *set)
{
	json_t *own = json_object();
	menv_solv_add_features(j ? json_object_get(j, key) : NULL, own);
	const char *f;
	json_t *v;
	bool any = false;
	json_object_foreach(own, f, v) any = any || json_object_get(set, f);
	json_decref(own);
	return any;
}

int menv_solv_remove_feature_jobs(struct menv_solver *s, Solver *solv,
                                  const struct menv_strvec *asked, Queue *job, Queue *relink)
{
	Pool *pool = s->pool;
	Queue dq;
	Map in;
	json_t *drop = json_object(), *keep = json_object();
	int start = job->count;

	queue_init(&dq);
	solver_get_decisionqueue(solv, &dq);
	map_init(&in, pool->nsolvables);
	for (int i = 0; i < dq.count; i++)
		if (dq.elements[i] > 1 && installed_json(s, dq.elements[i])) {
			Id p = dq.elements[i];
			MAPSET(&in, p);
			bool req =
			        listed(asked, pool_id2str(pool, pool_id2solvable(pool, p)->name));
			add_tracked(s, p, req ? keep : drop);
		}
	const char *f;
	json_t *v;
	void *tmp;
	json_object_foreach_safe(drop, tmp, f, v) if (json_object_get(keep, f))
	        json_object_del(drop, f);
	for (Id p = 2; json_object_size(drop) && p < pool->nsolvables; p++) {
		json_t *j = installed_json(s, p);
		if (!j)
			continue;
		Id name = pool_id2solvable(pool, p)->name;
		if (!MAPTST(&in, p)) {
			queue_push2(job, SOLVER_ERASE | SOLVER_SOLVABLE, p);
		} else if (carries(j, "track_features", drop)) {
			/* with what only it needed (mkl's mkl-service, scipy, ...) */
			queue_push2(job,
			            SOLVER_ERASE | SOLVER_SOLVABLE | SOLVER_CLEANDEPS | SOLVER_WEAK,
			            p);
		} else if (carries(j, "features", drop)) {
			queue_push2(job, SOLVER_ERASE | SOLVER_SOLVABLE | SOLVER_WEAK, p);
			if (!listed(asked, pool_id2str(pool, name)))
				continue;
			/* asked for: relinked as a build without the dropped features */
			queue_push(relink, name);
			Id q, qq;
			FOR_PROVIDES(q, qq, name)
			if (pool_id2solvable(pool, q)->name == name && !installed_json(s, q) &&
			    carries(json_of(s, q), "features", drop))
				queue_push2(job, SOLVER_LOCK | SOLVER_SOLVABLE, q);
		}
	}
	map_free(&in);
	queue_free(&dq);
	json_decref(drop);
	json_decref(keep);
	return job->count - start;
}
