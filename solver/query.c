/*
 * query.c - queries on a loaded pool without solving: search (every record matching a spec,
 * newest first) and whoneeds (the records that depend on a name).
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <solv/evr.h>
#include <solv/selection.h>

#include "internal.h"

static void prepare(struct menv_solver *s)
{
	if (s->prepared)
		return;
	pool_addfileprovides(s->pool);
	menv_solv_conda_underscores(s);
	pool_createwhatprovides(s->pool);
	s->prepared = true;
}

struct ranked {
	const struct menv_record *r;
	Id name, evr;
	int prio;
};

static int cmp_ranked(const void *a, const void *b, void *pool)
{
	const struct ranked *x = a, *y = b;
	int c = strcmp(x->r->name, y->r->name);
	if (c)
		return c;
	if (x->evr != y->evr && (c = pool_evrcmp(pool, x->evr, y->evr, EVRCMP_COMPARE)))
		return -c; /* newest first */
	if (x->r->build_number != y->r->build_number)
		return x->r->build_number > y->r->build_number ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	return strcmp(x->r->build, y->r->build);
}

static int finish_query(struct menv_solver *s, struct ranked *v, size_t n,
                        const struct menv_record ***out, size_t *n_out)
{
	if (n)
		qsort_r(v, n, sizeof(*v), cmp_ranked, s->pool);
	*out = menv_xcalloc(n + 1, sizeof(**out));
	for (size_t i = 0; i < n; i++)
		(*out)[i] = v[i].r;
	*n_out = n;
	free(v);
	return 0;
}

static void push_ranked(struct menv_solver *s, struct ranked **v, size_t *n, size_t *alloc, Id p)
{
	const struct menv_record *r = menv_solv_record_of(s, p);
	Solvable *sv = pool_id2solvable(s->pool, p);
	if (!r)
		return;
	if (*n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		*v = menv_xrealloc(*v, *alloc * sizeof(**v));
	}
	(*v)[(*n)++] = (struct ranked){r, sv->name, sv->evr, sv->repo->priority};
}

int menv_solver_search(struct menv_solver *s, const struct menv_matchspec *ms,
                       const struct menv_record ***out, size_t *n_out, struct menv_error *err)
{
	Pool *pool = s->pool;
	struct ranked *v = NULL;
	size_t n = 0, alloc = 0;

	*out = NULL;
	*n_out = 0;
	/* a plain name: only its records (a glob or no name: all of them) */
	int rc = menv_solv_sparse_load_name(s, ms->name && strcmp(ms->name, "*") ? ms->name : NULL,
	                                    err);
	if (rc)
		return rc;
	prepare(s);
	for (Id p = 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt)
			continue;
		if (ms->name && strcmp(ms->name, "*") &&
		    fnmatch(ms->name, pool_id2str(pool, sv->name), 0))
			continue;
		const struct menv_record *r = menv_solv_record_of(s, p);
		if (!r || !menv_solv_extra_keys_match(ms, r) ||
		    !menv_matchspec_match_json(ms, r->json))
			continue;
		push_ranked(s, &v, &n, &alloc, p);
	}
	return finish_query(s, v, n, out, n_out);
}

int menv_solver_whoneeds(struct menv_solver *s, const char *name, const struct menv_record ***out,
                         size_t *n_out, struct menv_error *err)
{
	Pool *pool = s->pool;
	struct ranked *v = NULL;
	size_t n = 0, alloc = 0;

	*out = NULL;
	*n_out = 0;
	int rc = menv_solv_sparse_load_all(s, err);
	if (rc)
		return rc;
	Id want = pool_str2id(pool, name, 0);
	prepare(s);
	for (Id p = 2; want && p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt || !sv->requires)
			continue;
		for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++) {
			Id dn = *dp;
			while (ISRELDEP(dn))
				dn = GETRELDEP(pool, dn)->name;
			if (dn == want) {
				push_ranked(s, &v, &n, &alloc, p);
				break;
			}
		}
	}
	return finish_query(s, v, n, out, n_out);
}
