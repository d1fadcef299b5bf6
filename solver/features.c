/*
 * features.c - conda's legacy `features`: a record's "features" ask for a package that
 * tracks them ("track_features", nomkl, mkl, ...). conda's classic Resolve counts them
 * (generate_feature_count, then generate_feature_metric): once a feature is tracked in the
 * solution, the builds of a name that carry it win over those that do not (before the
 * dependencies' versions; for a requested name after its version), and a build whose
 * feature nothing tracks needs its tracker (ms_depends), so it loses. libsolv's conda
 * reader knows no "features": these are DISFAVOR jobs for a second solve.
 */
#include <stdlib.h>
#include <string.h>

#include <solv/evr.h>

#include "internal.h"

/* The record JSON of solvable p: an installed PrefixRecord or a channel's record. */
static json_t *json_of(struct menv_solver *s, Id p)
{
	if ((size_t)p < s->inst_alloc && s->inst_by_id[p])
		return s->inst_by_id[p];
	const struct menv_record *r = menv_solv_record_of(s, p);
	return r ? r->json : NULL;
}

/* Adds the features of v (conda writes "a b", "a,b" or a list) to set (a JSON object). */
static void add_features(json_t *v, json_t *set)
{
	size_t i;
	json_t *e;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e) add_features(e, set);
		return;
	}
	const char *p = json_string_value(v);
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

/* How many features of record j are in `active` (*on) and not (*off). */
static void count_features(json_t *j, json_t *active, int *on, int *off)
{
	json_t *set = json_object();
	const char *f;
	json_t *v;
	*on = *off = 0;
	add_features(j ? json_object_get(j, "features") : NULL, set);
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

int menv_solv_feature_jobs(struct menv_solver *s, Solver *solv, const struct menv_strvec *requested,
                           Queue *job, Map *freed)
{
	Pool *pool = s->pool;
	Queue dq;
	json_t *active = json_object();
	int start = job->count;
	bool hit = false; /* a build of the solution loses */
	Map in;

	queue_init(&dq);
	solver_get_decisionqueue(solv, &dq);
	map_init(&in, pool->nsolvables);
	for (int i = 0; i < dq.count; i++)
		if (dq.elements[i] > 1)
			MAPSET(&in, dq.elements[i]);
	for (int i = 0; i < dq.count; i++) {
		Id p = dq.elements[i];
		json_t *j = p > 1 ? json_of(s, p) : NULL;
		if (j)
			add_features(json_object_get(j, "track_features"), active);
	}
	Map seen;
	map_init(&seen, pool->ss.nstrings);
	for (int i = 0; i < dq.count; i++) {
		Id p = dq.elements[i], q, qq;
		if (p <= 1)
			continue;
		Id name = pool_id2solvable(pool, p)->name;
		if (MAPTST(&seen, name))
			continue;
		MAPSET(&seen, name);
		/* the builds of this name: their features tracked and not */
		int maxon = 0;
		Id topfeat = 0; /* the newest version of a build with the most tracked features */
		bool any = false;
		FOR_PROVIDES(q, qq, name)
		{
			Solvable *sq = pool_id2solvable(pool, q);
			if (sq->name != name)
				continue;
			int on, off;
			count_features(json_of(s, q), active, &on, &off);
			any = any || on || off;
			if (on > maxon || (on == maxon && on &&
			                   (!topfeat || pool_evrcmp(pool, sq->evr, topfeat,
			                                            EVRCMP_COMPARE) > 0))) {
				maxon = on;
				topfeat = sq->evr;
			}
		}
		if (!any)
			continue;
		bool req = listed(requested, pool_id2str(pool, name));
		FOR_PROVIDES(q, qq, name)
		{
			Solvable *sq = pool_id2solvable(pool, q);
			if (sq->name != name)
				continue;
			int on, off;
			count_features(json_of(s, q), active, &on, &off);
			/* a requested name's version comes first: only the builds of versions a
			 * featured build reaches lose to it */
			bool lose = off > 0 ||
			            (on < maxon && (!req || pool_evrcmp(pool, sq->evr, topfeat,
			                                                EVRCMP_COMPARE) <= 0));
			if (!lose)
				continue;
			queue_push2(job, SOLVER_DISFAVOR | SOLVER_SOLVABLE, q);
			hit = hit || MAPTST(&in, q);
			if (MAPTST(&in, q) && (size_t)q < s->inst_alloc && s->inst_by_id[q]) {
				/* an installed build that loses is relinked as a winning one
				 * (conda's feature metric comes before its fewest changes) */
				MAPSET(freed, q);
				queue_push2(job, SOLVER_ERASE | SOLVER_SOLVABLE | SOLVER_WEAK, q);
				queue_push2(job,
				            SOLVER_INSTALL | SOLVER_SOLVABLE_NAME | SOLVER_WEAK,
				            name);
			}
		}
	}
	if (!hit)
		queue_truncate(job, start); /* the solution stands: no second solve */
	map_free(&seen);
	map_free(&in);
	queue_free(&dq);
	json_decref(active);
	return (job->count - start) / 2;
}
