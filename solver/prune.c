/*
 * prune.c - the channel builds no solution can hold, kept out of a solve's pool. libsolv
 * writes a "same name" conflict rule for every pair of builds of a name it reaches, and
 * unifies (sorts) all its rules: a name of n builds costs n*n/2 rules. conda-forge keeps
 * every build ever made, and most of them need what the channels no longer have or what
 * the request's platform cannot take (setuptools' 842 builds in the python-3.9 subchannel,
 * 730 of them for other pythons: 350,000 of its 480,000 rules, 95% of a dry-run's solve).
 * A build one of whose dependencies nothing (left) provides can never be installed, so it is
 * taken out of the pool's considered map (as conda's Resolve.get_reduced_index drops it)
 * for a first, optimistic solve.
 *
 * That solve's answer is the full pool's whenever it succeeds without anything that looks
 * at builds libsolv has already ruled out: relaxation (problems name them), best-version
 * jobs (libsolv's best rules rank a build it cannot install), installed packages (their
 * update and choice rules) and legacy features (a dead build may carry the most). The
 * caller solves again on the full pool in those cases (menv_solv_prune_undo).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Can solvable p be part of no solution: a dependency has no provider outside `dead`? */
static bool unmet(Pool *pool, Id p, const Map *dead)
{
	Solvable *sv = pool_id2solvable(pool, p);
	if (!sv->requires)
		return false;
	for (Id *rp = sv->repo->idarraydata + sv->requires; *rp; rp++) {
		Id *dp = pool_whatprovides_ptr(pool, *rp);
		if (*dp == SYSTEMSOLVABLE)
			continue;
		bool met = false;
		for (; *dp && !met; dp++)
			met = !MAPTST(dead, *dp);
		if (!met)
			return true;
	}
	return false;
}

int menv_solv_prune(struct menv_solver *s)
{
	Pool *pool = s->pool;
	Map dead;
	int n = 0;
	bool changed = true;

	const char *env = getenv("MENV_SOLVER_PRUNE"); /* tests: "0" solves on the full pool */
	if (s->pruned || (env && !strcmp(env, "0")))
		return 0;
	/* installed packages: their update and choice rules look at every build */
	for (size_t i = 0; i < s->inst_alloc; i++)
		if (s->inst_by_id[i])
			return 0;
	map_init(&dead, pool->nsolvables);
	/* a build dies with the last provider of a dependency: until nothing changes (the
	 * chains are short: python 2.7's setuptools, then what needs only those) */
	while (changed) {
		changed = false;
		for (Id p = 2; p < pool->nsolvables; p++) {
			Solvable *sv = pool_id2solvable(pool, p);
			if (!sv->repo || sv->repo == s->virt || MAPTST(&dead, p) ||
			    !pool_installable(pool, sv))
				continue;
			if (unmet(pool, p, &dead)) {
				MAPSET(&dead, p);
				changed = true;
				n++;
			}
		}
	}
	if (n) {
		s->unpruned = pool->considered;
		s->pruned = menv_xcalloc(1, sizeof(*s->pruned));
		map_init(s->pruned, pool->nsolvables);
		if (s->unpruned)
			map_or(s->pruned, s->unpruned);
		else
			map_setall(s->pruned);
		map_subtract(s->pruned, &dead);
		pool->considered = s->pruned;
		pool_createwhatprovides(pool);
	}
	map_free(&dead);
	return n;
}

void menv_solv_prune_undo(struct menv_solver *s)
{
	if (!s->pruned)
		return;
	s->pool->considered = s->unpruned;
	map_free(s->pruned);
	free(s->pruned);
	s->pruned = NULL;
	s->unpruned = NULL;
	pool_createwhatprovides(s->pool);
}
