/*
 * rank.c - conda's preferences that upstream libsolv lacks: channel and subdir order, strict
 * channel priority (libsolv's considered map), and variant ranking among builds of one
 * version (conda-forge's libsolv: track_features, build number, dependency versions,
 * timestamp).
 */
#include <stdlib.h>
#include <string.h>

#include <solv/bitmap.h>
#include <solv/conda.h>
#include <solv/evr.h>

#include "internal.h"

struct variant {
	Id p, name, evr;
	long long bn; /* -1 for the builds of a name no spec names: grouped by version */
	long long real_bn;
};

static long long build_number_of(Solvable *sv)
{
	const char *bv = solvable_lookup_str(sv, SOLVABLE_BUILDVERSION);
	return bv ? atoll(bv) : 0;
}

static int cmp_variant(const void *a, const void *b)
{
	const struct variant *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->evr != y->evr)
		return x->evr < y->evr ? -1 : 1;
	if (x->bn != y->bn)
		return x->bn < y->bn ? -1 : 1;
	return x->p < y->p ? -1 : x->p > y->p;
}

/* The best version (evr Id) among the providers of each requirement of p, by dependency
 * name, into `names`/`best` (parallel queues). */
static void best_dep_versions(Pool *pool, Id p, Queue *names, Queue *best)
{
	Solvable *sv = pool_id2solvable(pool, p);
	queue_empty(names);
	queue_empty(best);
	if (!sv->requires)
		return;
	for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++) {
		Id dep = *dp, q, qq, top = 0;
		Id name = ISRELDEP(dep) ? GETRELDEP(pool, dep)->name : dep;
		while (ISRELDEP(name))
			name = GETRELDEP(pool, name)->name;
		FOR_PROVIDES(q, qq, dep)
		{
			Id e = pool_id2solvable(pool, q)->evr;
			if (!top || pool_evrcmp(pool, e, top, EVRCMP_COMPARE) > 0)
				top = e;
		}
		queue_push(names, name);
		queue_push(best, top);
	}
}

/* How many requirements of p can only be met by packages with track_features (conda
 * counts those features against the whole solution; libsolv only looks at candidates). */
static int forced_features(Pool *pool, Id p)
{
	Solvable *sv = pool_id2solvable(pool, p);
	int n = 0;
	if (!sv->requires)
		return 0;
	for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++) {
		Id q, qq;
		bool any = false, all_tracked = true;
		FOR_PROVIDES(q, qq, *dp)
		{
			any = true;
			if (!solvable_lookup_count(pool_id2solvable(pool, q),
			                           SOLVABLE_TRACK_FEATURES))
				all_tracked = false;
		}
		n += any && all_tracked;
	}
	return n;
}

/* a beats b when more of their shared dependencies reach a newer version through a */
static int dep_compare(Pool *pool, Queue *na, Queue *ba, Queue *nb, Queue *bb)
{
	int score = 0;
	for (int i = 0; i < na->count; i++)
		for (int j = 0; j < nb->count; j++) {
			if (na->elements[i] != nb->elements[j])
				continue;
			Id x = ba->elements[i], y = bb->elements[j];
			if (x && y && x != y) {
				int c = pool_evrcmp(pool, x, y, EVRCMP_COMPARE);
				score += c > 0 ? 1 : c < 0 ? -1 : 0;
			} else if (x && !y) {
				score++;
			} else if (!x && y) {
				score--;
			}
		}
	return score;
}

/* The channel of a repo: a repodata file's, or a menv_repodata's. */
static const struct menv_channel *repo_channel(const struct menv_solver *s, Repo *repo)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i]->repo == repo)
			return s->files[i]->ch;
	const struct menv_repodata *rd = repo->appdata;
	return rd ? rd->channel : NULL;
}

/* conda's order between channels and subdirs. libsolv compares a repo's subpriority right
 * after the version, before the build number; the loaders give arch subdirs 1 and noarch 0
 * there, which made an arch build beat a noarch one of a higher build number. conda: the
 * build number first, arch over noarch only on a tie (in the rank below). With channel
 * priority disabled the subpriority is the channel order instead: the first channel wins
 * between builds of one version before the build number does. Runs once per pool. */
void menv_solv_order_repos(struct menv_solver *s)
{
	Pool *pool = s->pool;

	if (s->noarch_repo)
		return;
	s->noarch_repo = menv_xcalloc((size_t)pool->nrepos + 1, sizeof(*s->noarch_repo));
	for (int r = 1; r < pool->nrepos; r++) {
		Repo *repo = pool->repos[r];
		if (!repo || repo == s->virt)
			continue;
		s->noarch_repo[r] = repo->subpriority == 0;
		const struct menv_channel *ch = repo_channel(s, repo);
		repo->subpriority =
		        s->prio == MENV_PRIORITY_DISABLED ? (ch ? ch->priority : -r) : 0;
	}
}

/* Adds the package names a dependency can reach (both sides of and/or/with/if, the name of
 * a conda MatchSpec) to `m`, and the new ones to `todo`. */
static void dep_names(Pool *pool, Id dep, Map *m, Queue *todo)
{
	while (ISRELDEP(dep)) {
		Reldep *rd = GETRELDEP(pool, dep);
		if (rd->flags == REL_AND || rd->flags == REL_OR || rd->flags == REL_WITH ||
		    rd->flags == REL_WITHOUT || rd->flags == REL_COND || rd->flags == REL_UNLESS ||
		    rd->flags == REL_ELSE)
			dep_names(pool, rd->evr, m, todo);
		dep = rd->name;
	}
	if (dep > 1 && dep < pool->ss.nstrings && !MAPTST(m, dep)) {
		MAPSET(m, dep);
		queue_push(todo, dep);
	}
}

static bool add_spec_names(Pool *pool, struct menv_matchspec *const *specs, size_t n, Map *m,
                           Queue *todo)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = specs[i]->name;
		if (!name || strpbrk(name, "*?["))
			return false; /* a glob may name anything */
		Id id = pool_str2id(pool, name, 0);
		if (id)
			dep_names(pool, id, m, todo);
	}
	return true;
}

/* The package names a request can reach (as string Ids in a Map the caller frees): those
 * of its specs and of every installed, virtual or pinned package, then, recursively, the
 * names in `depends` of every record of a reached name. libsolv makes rules from these
 * alone, so nothing else can be a candidate. false (and `m` untouched): every name, for a
 * spec without a plain name. Needs whatprovides. */
static bool reachable_names(struct menv_solver *s, const struct menv_solve_request *req, Map *m)
{
	Pool *pool = s->pool;
	Queue todo;
	bool ok;

	map_init(m, pool->ss.nstrings);
	queue_init(&todo);
	ok = add_spec_names(pool, req->install, req->ninstall, m, &todo) &&
	     add_spec_names(pool, req->update, req->nupdate, m, &todo) &&
	     add_spec_names(pool, req->remove, req->nremove, m, &todo);
	for (Id p = s->virt->start; ok && p < s->virt->end; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo != s->virt)
			continue;
		dep_names(pool, sv->name, m, &todo);
		for (Id *dp = sv->requires ? sv->repo->idarraydata + sv->requires : NULL; dp && *dp;
		     dp++)
			dep_names(pool, *dp, m, &todo);
	}
	while (ok && todo.count) {
		Id name = queue_pop(&todo), p, pp;
		FOR_PROVIDES(p, pp, name)
		{
			Solvable *sv = pool_id2solvable(pool, p);
			if (!sv->requires)
				continue;
			for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++)
				dep_names(pool, *dp, m, &todo);
		}
	}
	queue_free(&todo);
	if (!ok)
		map_free(m);
	return ok;
}

/* Marks the plain names of specs in m. */
static void mark_names(Pool *pool, struct menv_matchspec *const *specs, size_t n, Map *m)
{
	for (size_t i = 0; i < n; i++) {
		Id id = specs[i]->name ? pool_str2id(pool, specs[i]->name, 0) : 0;
		if (id && id < pool->ss.nstrings)
			MAPSET(m, id);
	}
}

/* Among builds of one name, version and build number, prefer the one whose dependencies
 * reach the better versions (conda-forge's libsolv variant order), by rewriting libsolv's
 * build-version key as "build_number.rank.timestamp". Only the names this request can reach
 * are ranked (a few hundred of a large channel's records), each once per pool; a group's rank
 * depends on its own dependencies alone, so the result is the one a whole-pool pass gives. */
void menv_solv_rank_variants(struct menv_solver *s, const struct menv_solve_request *req)
{
	Pool *pool = s->pool;
	struct variant *v;
	size_t n = 0;
	Map reach;
	bool some;

	if (s->ranked)
		return;
	some = reachable_names(s, req, &reach);
	if (!s->ranked_names) {
		s->ranked_names = menv_xcalloc(1, sizeof(*s->ranked_names));
		map_init(s->ranked_names, pool->ss.nstrings);
	} else {
		map_grow(s->ranked_names, pool->ss.nstrings);
	}
	/* conda's Resolve.solve ranks the builds of a spec's name by build number before the
	 * dependencies' versions (eq_b of the specs), but a package no spec names by its
	 * dependencies' versions first (eq_v over all other packages, then eq_b): the names
	 * of the request, the history and the installed packages (each installed one gets a
	 * spec, its target) keep the build number first */
	Map specd;
	map_init(&specd, pool->ss.nstrings);
	mark_names(pool, req->install, req->ninstall, &specd);
	mark_names(pool, req->update, req->nupdate, &specd);
	mark_names(pool, req->history, req->nhistory, &specd);
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo == s->virt && sv->name < pool->ss.nstrings)
			MAPSET(&specd, sv->name);
	}
	v = menv_xcalloc((size_t)pool->nsolvables + 1, sizeof(*v));
	Repodata **rank_data = menv_xcalloc((size_t)pool->nrepos + 1, sizeof(*rank_data));
	for (Id p = 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt || MAPTST(s->ranked_names, sv->name) ||
		    (some && !MAPTST(&reach, sv->name)))
			continue;
		long long bn = build_number_of(sv);
		v[n++] = (struct variant){p, sv->name, sv->evr, MAPTST(&specd, sv->name) ? bn : -1,
		                          bn};
	}
	map_free(&specd);
	for (size_t i = 0; i < n; i++)
		MAPSET(s->ranked_names, v[i].name);
	if (some)
		map_free(&reach);
	else
		s->ranked = true; /* every name is ranked now */
	qsort(v, n, sizeof(*v), cmp_variant);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && v[j].name == v[i].name && v[j].evr == v[i].evr &&
		       v[j].bn == v[i].bn)
			j++;
		size_t k = j - i;
		long *rank = menv_xcalloc(k, sizeof(*rank));
		if (k > 1 && k <= 256) {
			Queue *names = menv_xcalloc(k, sizeof(*names));
			Queue *best = menv_xcalloc(k, sizeof(*best));
			bool differ = false;
			/* each variant's best dependency versions once, then every pair compared */
			for (size_t a = 0; a < k; a++) {
				queue_init(&names[a]);
				queue_init(&best[a]);
				best_dep_versions(pool, v[i + a].p, &names[a], &best[a]);
			}
			for (size_t a = i; a < j; a++) {
				int wins = 0;
				for (size_t b = i; b < j; b++) {
					if (a == b)
						continue;
					wins += dep_compare(pool, &names[a - i], &best[a - i],
					                    &names[b - i], &best[b - i]) > 0;
				}
				/* first: fewer track_features forced on the environment through a
				 * dependency (a cpu mutex); then: better dependency versions */
				int forced = forced_features(pool, v[a].p);
				/* then: an arch build over a noarch one (menv_solv_order_repos) */
				Repo *rp = pool_id2solvable(pool, v[a].p)->repo;
				long arch = s->noarch_repo && !s->noarch_repo[rp->repoid] ? 1 : 0;
				rank[a - i] = ((long)(999 - (forced > 999 ? 999 : forced)) * 2 +
				               arch) * 1000 +
				              (wins > 999 ? 999 : wins);
				differ = differ || rank[a - i] != rank[0];
			}
			for (size_t a = 0; !differ && a < k; a++)
				rank[a] = 0; /* all alike: the timestamp decides */
			for (size_t a = 0; a < k; a++) {
				queue_free(&names[a]);
				queue_free(&best[a]);
			}
			free(names);
			free(best);
		}
		/* every reached record gets its key: build number, rank, then timestamp (a name no
		 * spec names: rank, build number, then timestamp) */
		for (size_t a = i; a < j; a++) {
			Solvable *sv = pool_id2solvable(pool, v[a].p);
			/* one new repodata per repo for all rewritten keys: every extra
			 * repodata makes each attribute lookup of that repo slower */
			Id rid = sv->repo->repoid;
			Repodata *data = rank_data[rid];
			if (!data) {
				data = rank_data[rid] = repo_add_repodata(sv->repo, 0);
				repodata_extend_block(data, sv->repo->start,
				                      sv->repo->end - sv->repo->start);
			}
			unsigned long long ts = solvable_lookup_num(sv, SOLVABLE_BUILDTIME, 0);
			char num[64];
			if (v[a].bn >= 0)
				snprintf(num, sizeof(num), "%lld.%ld.%llu", v[a].bn, rank[a - i],
				         ts);
			else /* features, arch, dependency versions, then build number */
				snprintf(num, sizeof(num), "%ld.%lld.%llu", rank[a - i],
				         v[a].real_bn, ts);
			repodata_set_str(data, v[a].p, SOLVABLE_BUILDVERSION, num);
		}
		free(rank);
		i = j;
	}
	/* the rewritten keys become visible to the policy once internalized */
	for (int r = 1; r < pool->nrepos; r++) {
		Repo *repo = pool->repos[r];
		if (repo && repo != s->virt && rank_data[r])
			repo_internalize(repo);
	}
	free(rank_data);
	free(v);
}

/* Strict channel priority (conda's and micromamba's): a package name is taken only from the
 * highest-priority channel that has it. Names requested with an explicit channel
 * (`chan::pkg`) are exempt, since their spec already picks the channel. Implemented with
 * libsolv's `considered` map, so excluded packages are simply not installable. */
void menv_solv_strict_priority(struct menv_solver *s, const struct menv_solve_request *req)
{
	Pool *pool = s->pool;
	int *best = menv_xcalloc((size_t)pool->ss.nstrings + 1, sizeof(*best));
	bool *seen = menv_xcalloc((size_t)pool->ss.nstrings + 1, sizeof(*seen));
	bool *exempt = menv_xcalloc((size_t)pool->ss.nstrings + 1, sizeof(*exempt));
	struct menv_matchspec *const *lists[2] = {req->install, req->update};
	size_t counts[2] = {req->ninstall, req->nupdate};

	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			const struct menv_matchspec *ms = lists[l][i];
			Id name = ms->name ? pool_str2id(pool, ms->name, 0) : 0;
			if (ms->channel && name && name < pool->ss.nstrings)
				exempt[name] = true;
		}
	for (Id p = 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt)
			continue;
		if (!seen[sv->name] || sv->repo->priority > best[sv->name])
			best[sv->name] = sv->repo->priority;
		seen[sv->name] = true;
	}
	if (!s->considered) {
		s->considered = menv_xcalloc(1, sizeof(*s->considered));
		map_init(s->considered, pool->nsolvables);
	} else {
		map_grow(s->considered, pool->nsolvables);
	}
	map_setall(s->considered);
	for (Id p = 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo && sv->repo != s->virt && !exempt[sv->name] &&
		    sv->repo->priority < best[sv->name])
			MAPCLR(s->considered, p);
	}
	pool->considered = s->considered;
	free(best);
	free(seen);
	free(exempt);
}
