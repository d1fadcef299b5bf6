/*
 * reduce.c - conda's classic Resolve.get_reduced_index (conda 26.7.1, conda/resolve.py),
 * replayed beside libsolv for the one thing of it that changes conda's answer and that
 * libsolv cannot see: Resolve.valid2's memo.
 *
 * valid2's is_valid_spec is @memoizemethod on the MatchSpec object it is given, and
 * Resolve.ms_depends keeps one MatchSpec object per (record, dependency) for the Solver's
 * whole life: the validity of a record's dependency is fixed by the first reduced index that
 * evaluates it, even when a later reduction (other specs, another python) would find it
 * otherwise. conda's Solver (conda/core/solve.py) reduces the index several times in one
 * change: _add_specs' explicit pool ([specs_to_add]), its conflict check (the installed
 * records' specs and specs_to_add), UPDATE_SPECS' get_conflicting_specs (specs_map before the
 * python rule and the requested specs: the history's own python) and _run_sat's (the final
 * specs, reused by Resolve.solve). Records the final reduction would hold fresh but does not
 * hold with the memo of the ones before are out of conda's SAT, so they are taken out of
 * libsolv's considered map for the solve (menv_solv_reduce_stale).
 *
 * Implemented: get_reduced_index (filter_group's two "double elimination" passes, the
 * explicit spec package pool, strict channel priority, valid2 and the _broader expansion),
 * exactness_and_number_of_deps, ms_depends (depends in MatchSpec.merge's order, then
 * constrains as optional specs) and Resolve.__init__'s group order (version_key, newest
 * first). Python's sets (dep_specs, seen_specs) are walked in dependency order here; conda
 * walks them in hash order (its answers on the traced steps are the same under
 * PYTHONHASHSEED 0-3). Not modelled: pinned specs in specs_map, _run_sat's neutering of
 * conflicting targets (a reduction per round), track_features_specs, a bare install's frozen
 * first attempt (menv takes no memo there), MatchSpec.merge of two depends of one name (two
 * slots here, one object in conda) and a constrains entry replacing a depends of its name.
 * Conda's index is the channels' records and the virtual packages; the installed records
 * are the channels' own here.
 */
#include <stdlib.h>
#include <string.h>

#include <solv/bitmap.h>
#include <solv/evr.h>

#include "internal.h"

enum { FO_NONE = -1, FO_KEPT = 0, FO_OUT = 1 }; /* filter_out: absent, False, a reason */
enum { MEMO_UNSET = 0, MEMO_TRUE = 1, MEMO_FALSE = 2 };

/* what one dependency Id is, as conda's MatchSpec: found once per replay */
struct depinfo {
	Id dep;
	Id name;    /* string Id of its name */
	int strict; /* MatchSpec.strictness, 0 until asked */
	bool feature;
	char *str;  /* str(MatchSpec), MatchSpec.merge's sort key, NULL until asked */
	int mstart; /* find_matches: its providers of conda's index, in group order */
	int mcount;
};

/* Resolve.ms_depends of one record: one MatchSpec object (here: slot) per dependency */
struct msdeps {
	int n;
	Id *dep;
	unsigned char *opt;
	unsigned char *memo; /* is_valid_spec's @memoizemethod, one per MatchSpec object */
};

/* a spec of an explicit list (get_reduced_index's explicit_specs) */
struct rspec {
	Id dep;
	Id name;
	int strict;
	long long bn; /* _package_has_updates' build_number, -1: any */
	int exact;    /* exactness_and_number_of_deps */
	char *str;    /* dist_str */
	Queue matches;
};

struct reducer {
	struct menv_solver *s;
	Pool *pool;
	Map index;            /* conda's index: channel records and virtual packages */
	int *rank;            /* [p]: place in its name's group */
	Id *gsolv;            /* every index solvable, by name (group order once sorted) */
	int *gstart, *gcount; /* [name string Id] */
	Map gsorted;          /* names whose group is in group order (sorted when first asked) */
	Id ngnames;
	struct msdeps **deps; /* [p], made when first asked */
	struct depinfo *tab;  /* open addressing on dep Id */
	size_t tabsize, tabused;
	Queue mq;         /* find_matches' results, tab's mstart/mcount */
	signed char *fo;  /* filter_out of the reduction under way */
	Map snames;       /* filter_group's snames */
	Map cp_applied;   /* strict priority applied to a name */
	Map expool;       /* explicit_spec_package_pool: solvables */
	Map expool_names; /* names with a non-empty explicit pool */
	bool strict;      /* strict channel priority */
	size_t nspace;    /* dep index space: nstrings + nrels */
};

static size_t dep_slot(const struct reducer *R, Id dep)
{
	return ISRELDEP(dep) ? (size_t)R->pool->ss.nstrings + (size_t)GETRELID(dep) : (size_t)dep;
}

/* MatchSpec.strictness of a parsed spec */
static int strictness(const struct menv_matchspec *ms)
{
	bool ver = ms->version && strcmp(ms->version, "*");
	bool other = ms->channel || ms->subdir || ms->build_number || ms->md5 || ms->sha256 ||
	             ms->fn || ms->url || ms->track_features || ms->license || ms->license_family;
	if (other || !ms->name || strchr(ms->name, '*') || ms->build)
		return 3;
	return ver ? 2 : 1;
}

static Id dep_name(Pool *pool, Id dep)
{
	while (ISRELDEP(dep))
		dep = GETRELDEP(pool, dep)->name;
	return dep;
}

/* a record's version_key parts, looked up once per group sort */
struct gkey {
	Id p, evr;
	int prio;
	bool noarch;
	long long bn;
	unsigned long long ts;
	const char *build;
};

/* version_key, newest first: channel priority, version, build number, arch over noarch,
 * timestamp, build string (Resolve.__init__ sorts each group by it, reversed) */
static int group_cmp(const void *a, const void *b, void *data)
{
	struct reducer *R = data;
	const struct gkey *x = a, *y = b;
	bool disabled = R->s->prio == MENV_PRIORITY_DISABLED;
	if (!disabled && x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	int c = x->evr == y->evr ? 0 : pool_evrcmp(R->pool, x->evr, y->evr, EVRCMP_COMPARE);
	if (c)
		return -c;
	if (disabled && x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->bn != y->bn)
		return x->bn > y->bn ? -1 : 1;
	if (x->noarch != y->noarch)
		return x->noarch ? 1 : -1;
	if (x->ts != y->ts)
		return x->ts > y->ts ? -1 : 1;
	c = strcmp(x->build, y->build);
	if (c)
		return -c;
	return x->p < y->p ? -1 : x->p > y->p;
}

/* Resolve.groups[name]: its records in group order (sorted when first asked, ranked) */
static const Id *group_of(struct reducer *R, Id name, int *n)
{
	*n = name > 0 && name < R->ngnames ? R->gcount[name] : 0;
	if (!*n)
		return NULL;
	Id *g = R->gsolv + R->gstart[name];
	if (!MAPTST(&R->gsorted, name)) {
		struct gkey *k = menv_xcalloc((size_t)*n, sizeof(*k));
		for (int i = 0; i < *n; i++) {
			Solvable *sv = pool_id2solvable(R->pool, g[i]);
			const char *bv = solvable_lookup_str(sv, SOLVABLE_BUILDVERSION);
			const char *fl = solvable_lookup_str(sv, SOLVABLE_BUILDFLAVOR);
			k[i] = (struct gkey){
			        .p = g[i],
			        .evr = sv->evr,
			        .prio = sv->repo->priority,
			        .noarch = R->s->noarch_repo && sv->repo != R->s->virt &&
			                  R->s->noarch_repo[sv->repo->repoid],
			        .bn = bv ? atoll(bv) : 0,
			        .ts = solvable_lookup_num(sv, SOLVABLE_BUILDTIME, 0),
			        .build = fl ? fl : "",
			};
		}
		solv_sort(k, (size_t)*n, sizeof(*k), group_cmp, R);
		for (int i = 0; i < *n; i++)
			g[i] = k[i].p;
		free(k);
		for (int i = 0; i < *n; i++)
			R->rank[g[i]] = i;
		MAPSET(&R->gsorted, name);
	}
	return g;
}

static int by_rank(const void *a, const void *b, void *data)
{
	const struct reducer *R = data;
	int x = R->rank[*(const Id *)a], y = R->rank[*(const Id *)b];
	return x < y ? -1 : x > y;
}

/* The slot of `dep` in the table: its entry, or the free slot it would take; NULL before
 * the table exists */
static struct depinfo *dep_find(struct reducer *R, Id dep)
{
	if (!R->tabsize)
		return NULL;
	size_t h = (size_t)dep * 2654435761u & (R->tabsize - 1);
	while (R->tab[h].dep && R->tab[h].dep != dep)
		h = (h + 1) & (R->tabsize - 1);
	return &R->tab[h];
}

/* The dependency's entry: its name, strictness, str and find_matches. Only a dependency
 * seen for the first time grows the table (and moves every entry): an entry found stays
 * where it is. */
static struct depinfo *dep_info(struct reducer *R, Id dep)
{
	Pool *pool = R->pool;
	struct depinfo *d = dep_find(R, dep);
	if (d && d->dep)
		return d;
	if (R->tabused * 2 >= R->tabsize) {
		size_t n = R->tabsize ? R->tabsize * 2 : 1024;
		struct depinfo *t = menv_xcalloc(n, sizeof(*t));
		for (size_t i = 0; i < R->tabsize; i++) {
			if (!R->tab[i].dep)
				continue;
			size_t h = (size_t)R->tab[i].dep * 2654435761u & (n - 1);
			while (t[h].dep)
				h = (h + 1) & (n - 1);
			t[h] = R->tab[i];
		}
		free(R->tab);
		R->tab = t;
		R->tabsize = n;
	}
	d = dep_find(R, dep);
	R->tabused++;
	d->dep = dep;
	d->name = dep_name(pool, dep);
	const char *nm = pool_id2str(pool, d->name);
	size_t nl = strlen(nm);
	d->feature = nl && nm[nl - 1] == '@';
	Id p, pp;
	d->mstart = R->mq.count;
	FOR_PROVIDES(p, pp, dep)
	{
		if (!MAPTST(&R->index, p))
			continue;
		int n;
		group_of(R, pool_id2solvable(pool, p)->name, &n);
		queue_push(&R->mq, p);
	}
	d->mcount = R->mq.count - d->mstart;
	if (d->mcount > 1)
		solv_sort(R->mq.elements + d->mstart, (size_t)d->mcount, sizeof(Id), by_rank, R);
	return d;
}

/* The dependency as conda's MatchSpec, parsed when first asked: its str */
static const char *dep_str(struct reducer *R, struct depinfo *d)
{
	if (d->str)
		return d->str;
	struct menv_matchspec *ms = NULL;
	if (!d->feature && !menv_matchspec_parse(pool_dep2str(R->pool, d->dep), &ms, NULL)) {
		d->str = menv_matchspec_conda_str(ms);
		d->strict = strictness(ms);
		menv_matchspec_free(ms);
	}
	if (!d->str)
		d->str = menv_xstrdup(pool_id2str(R->pool, d->name));
	return d->str;
}

/* Its strictness: "name", "name version" and "name version build" (repodata's form) by
 * their words, anything else parsed */
static int dep_strict(struct reducer *R, struct depinfo *d)
{
	if (d->strict)
		return d->strict;
	const char *str = pool_dep2str(R->pool, d->dep);
	int words = 0;
	bool plain = !d->feature && !strpbrk(str, "[=,") && !strchr(str, '*');
	for (const char *c = str; plain && *c;) {
		while (*c == ' ')
			c++;
		if (!*c)
			break;
		if (words == 1 && strchr("<>!~", *c) && (c[1] == ' ' || !c[1]))
			plain = false; /* "python >= 3" */
		words++;
		while (*c && *c != ' ')
			c++;
	}
	if (d->feature)
		d->strict = 1;
	else if (plain && words >= 1 && words <= 3)
		d->strict = words;
	else
		dep_str(R, d);
	if (!d->strict)
		d->strict = 3;
	return d->strict;
}

/* MatchSpec.merge's order: by str (the name decides unless one name starts the other) */
static int by_str(const void *a, const void *b, void *data)
{
	struct reducer *R = data;
	struct depinfo *x = dep_info(R, *(const Id *)a);
	Id xn = x->name;
	struct depinfo *y = dep_info(R, *(const Id *)b);
	x = dep_info(R, *(const Id *)a); /* the table may have grown */
	const char *nx = pool_id2str(R->pool, xn), *ny = pool_id2str(R->pool, y->name);
	size_t lx = strlen(nx), ly = strlen(ny);
	if (strncmp(nx, ny, lx < ly ? lx : ly))
		return strcmp(nx, ny);
	const char *sx = dep_str(R, x);
	return strcmp(sx, dep_str(R, dep_info(R, *(const Id *)b)));
}

/* Resolve.ms_depends: PackageRecord.combined_depends (MatchSpec.merge sorts the depends by
 * str; the constrains of other names follow as optional specs) */
static struct msdeps *ms_depends(struct reducer *R, Id p)
{
	if (R->deps[p])
		return R->deps[p];
	Solvable *sv = pool_id2solvable(R->pool, p);
	Queue req, con;
	queue_init(&req);
	queue_init(&con);
	for (Id *dp = sv->requires ? sv->repo->idarraydata + sv->requires : NULL; dp && *dp; dp++)
		if (*dp != SOLVABLE_PREREQMARKER)
			queue_push(&req, *dp);
	solvable_lookup_idarray(sv, SOLVABLE_CONSTRAINS, &con);
	for (int i = 0; i < req.count; i++)
		dep_info(R, req.elements[i]);
	solv_sort(req.elements, (size_t)req.count, sizeof(Id), by_str, R);
	struct msdeps *m = menv_xcalloc(1, sizeof(*m));
	size_t cap = (size_t)req.count + (size_t)con.count + 1;
	m->dep = menv_xcalloc(cap, sizeof(*m->dep));
	m->opt = menv_xcalloc(cap, 1);
	m->memo = menv_xcalloc(cap, 1);
	for (int i = 0; i < req.count; i++)
		m->dep[m->n++] = req.elements[i];
	for (int i = 0; i < con.count; i++) {
		Id nm = dep_info(R, con.elements[i])->name;
		bool named = false;
		for (int k = 0; k < req.count && !named; k++)
			named = dep_info(R, req.elements[k])->name == nm;
		if (named)
			continue;
		m->opt[m->n] = 1;
		m->dep[m->n++] = con.elements[i];
	}
	queue_free(&req);
	queue_free(&con);
	R->deps[p] = m;
	return m;
}

static bool is_valid_spec(struct reducer *R, struct msdeps *m, int k);

/* valid2's is_valid_prec: filter_out decides; a record first reached is provisionally
 * valid (a dependency cycle reads True) while its dependencies are asked, in order */
static bool is_valid_prec(struct reducer *R, Id p)
{
	if (R->fo[p] == FO_NONE) {
		R->fo[p] = FO_KEPT;
		struct msdeps *m = ms_depends(R, p);
		bool ok = true;
		for (int k = 0; k < m->n && ok; k++)
			ok = is_valid_spec(R, m, k);
		R->fo[p] = ok ? FO_KEPT : FO_OUT;
	}
	return R->fo[p] == FO_KEPT;
}

/* valid2's is_valid_spec, memoized on the MatchSpec object (one per record and dependency):
 * its first value stays for every later reduction of the replay */
static bool is_valid_spec(struct reducer *R, struct msdeps *m, int k)
{
	if (m->memo[k])
		return m->memo[k] == MEMO_TRUE;
	bool v = m->opt[k];
	if (!v) {
		struct depinfo *d = dep_info(R, m->dep[k]);
		int start = d->mstart, n = d->mcount;
		for (int i = 0; i < n && !v; i++)
			v = is_valid_prec(R, R->mq.elements[start + i]);
	}
	m->memo[k] = v ? MEMO_TRUE : MEMO_FALSE;
	return v;
}

/* Resolve._get_strict_channel: does p come from the highest-priority channel of its name? */
static bool strict_channel_ok(struct reducer *R, Id p)
{
	Pool *pool = R->pool;
	Solvable *sv = pool_id2solvable(pool, p);
	int n;
	const Id *g = group_of(R, sv->name, &n);
	if (!n)
		return true;
	Solvable *top = pool_id2solvable(pool, g[0]);
	return top->repo->priority == sv->repo->priority;
}

static bool spec_matches(struct reducer *R, Id dep, long long bn, Id p)
{
	struct depinfo *d = dep_info(R, dep);
	bool in = false;
	if (d->feature) {
		for (int i = 0; i < d->mcount && !in; i++)
			in = R->mq.elements[d->mstart + i] == p;
	} else if (pool_id2solvable(R->pool, p)->name == d->name) {
		/* one name's records, in group order: by rank */
		int lo = 0, hi = d->mcount, want = R->rank[p];
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			int r = R->rank[R->mq.elements[d->mstart + mid]];
			if (r < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		in = lo < d->mcount && R->mq.elements[d->mstart + lo] == p;
	}
	if (in && bn >= 0) {
		const char *b =
		        solvable_lookup_str(pool_id2solvable(R->pool, p), SOLVABLE_BUILDVERSION);
		in = (b ? atoll(b) : 0) == bn;
	}
	return in;
}

/* get_reduced_index's filter_group: 1 reduced, 0 not, -1 a conflict (None) */
static int filter_group(struct reducer *R, const Id *specs, int nspecs, long long bn)
{
	Pool *pool = R->pool;
	Id name = dep_info(R, specs[0])->name;
	int gn;
	const Id *group = group_of(R, name, &gn);

	if (gn && R->strict && !MAPTST(&R->cp_applied, name)) {
		for (int i = 0; i < gn; i++)
			if (!strict_channel_ok(R, group[i]))
				R->fo[group[i]] = FO_OUT;
		MAPSET(&R->cp_applied, name);
	}
	int nold = 0, nnew = 0;
	for (int i = 0; i < gn; i++) {
		Id p = group[i];
		if (R->fo[p] == FO_NONE)
			R->fo[p] = FO_KEPT;
		if (R->fo[p] != FO_KEPT)
			continue;
		nold++;
		bool any = false;
		for (int k = 0; k < nspecs && !any; k++)
			any = spec_matches(R, specs[k], bn, p);
		if (!any || (MAPTST(&R->expool_names, name) && !MAPTST(&R->expool, p))) {
			R->fo[p] = FO_OUT;
			continue;
		}
		struct msdeps *m = ms_depends(R, p);
		bool unsat = false;
		for (int k = 0; k < m->n && !unsat; k++) {
			if (m->opt[k])
				continue;
			struct depinfo *d = dep_info(R, m->dep[k]);
			bool some = false;
			for (int j = 0; j < d->mcount && !some; j++)
				some = R->fo[R->mq.elements[d->mstart + j]] != FO_OUT;
			unsat = !some;
		}
		if (unsat) {
			R->fo[p] = FO_OUT;
			continue;
		}
		nnew++;
	}
	int reduced = nnew < nold;
	if (nnew == 0)
		return -1;
	if (!reduced && MAPTST(&R->snames, name))
		return reduced;
	MAPSET(&R->snames, name);
	/* the dependencies of every build left, grouped by name in order of first sight */
	Queue names, deps;
	queue_init(&names);
	queue_init(&deps);
	for (int i = 0; i < gn; i++) {
		Id p = group[i];
		if (R->fo[p] == FO_OUT)
			continue;
		struct msdeps *m = ms_depends(R, p);
		for (int k = 0; k < m->n; k++) {
			struct depinfo *d = dep_info(R, m->dep[k]);
			if (m->opt[k] || d->feature)
				continue;
			queue_push2(&deps, d->name, m->dep[k]);
			int j = 0;
			while (j < names.count && names.elements[j] != d->name)
				j++;
			if (j == names.count)
				queue_push(&names, d->name);
		}
	}
	Queue set;
	queue_init(&set);
	for (int j = 0; j < names.count && reduced != -1; j++) {
		int len = 0;
		queue_empty(&set);
		for (int i = 0; i < deps.count; i += 2) {
			if (deps.elements[i] != names.elements[j])
				continue;
			len++;
			int k = 0;
			while (k < set.count && set.elements[k] != deps.elements[i + 1])
				k++;
			if (k == set.count)
				queue_push(&set, deps.elements[i + 1]);
		}
		if (len < nnew)
			continue;
		int res = filter_group(R, set.elements, set.count, -1);
		if (res == 1)
			reduced = 1;
		else if (res == -1)
			reduced = -1;
	}
	(void)pool;
	queue_free(&set);
	queue_free(&names);
	queue_free(&deps);
	return reduced;
}

/* specs_by_name of one explicit package: a name's specs, the first one's strictness */
struct byname {
	Id name;
	int front;
	Queue deps;
};

static struct byname *byname_get(struct byname **v, int *n, Id name)
{
	for (int i = 0; i < *n; i++)
		if ((*v)[i].name == name)
			return &(*v)[i];
	*v = menv_xrealloc(*v, (size_t)(*n + 1) * sizeof(**v));
	struct byname *b = &(*v)[(*n)++];
	b->name = name;
	b->front = 0;
	queue_init(&b->deps);
	return b;
}

static void byname_free(struct byname *v, int n)
{
	for (int i = 0; i < n; i++)
		queue_free(&v[i].deps);
	free(v);
}

static bool queue_has(const Queue *q, Id x)
{
	for (int i = 0; i < q->count; i++)
		if (q->elements[i] == x)
			return true;
	return false;
}

/* exactness_and_number_of_deps, then dist_str, both reversed */
static int explicit_cmp(const void *a, const void *b, void *data)
{
	(void)data;
	const struct rspec *x = a, *y = b;
	if (x->exact != y->exact)
		return x->exact > y->exact ? -1 : 1;
	return -strcmp(x->str, y->str);
}

/* Resolve.get_reduced_index(explicit_specs): the records of the reduced index into `out` */
static void reduced_index(struct reducer *R, struct rspec *ex, int nex, Map *out)
{
	Pool *pool = R->pool;
	for (int i = 0; i < pool->nsolvables; i++)
		R->fo[i] = FO_NONE;
	R->nspace = (size_t)pool->ss.nstrings + (size_t)pool->nrels;
	map_empty(&R->cp_applied);
	map_empty(&R->expool);
	map_empty(&R->expool_names);
	for (int i = 0; i < nex; i++) {
		struct rspec *e = &ex[i];
		queue_empty(&e->matches);
		struct depinfo *d = dep_info(R, e->dep);
		for (int k = 0; k < d->mcount; k++) {
			Id p = R->mq.elements[d->mstart + k];
			if (spec_matches(R, e->dep, e->bn, p))
				queue_push(&e->matches, p);
		}
		e->exact = e->strict;
		if (e->strict == 3 && e->matches.count) {
			Solvable *sv = pool_id2solvable(pool, e->matches.elements[0]);
			Queue q;
			queue_init(&q);
			solvable_lookup_deparray(sv, SOLVABLE_REQUIRES, &q, -1);
			for (int k = 0; k < q.count; k++)
				if (!dep_info(R, q.elements[k])->feature)
					e->exact += dep_strict(R, dep_info(R, q.elements[k]));
			queue_free(&q);
		}
		for (int k = 0; k < e->matches.count; k++) {
			MAPSET(&R->expool, e->matches.elements[k]);
			MAPSET(&R->expool_names, e->name);
		}
	}
	solv_sort(ex, (size_t)nex, sizeof(*ex), explicit_cmp, NULL);
	/* the pruning passes ("double elimination") */
	Queue sl;
	queue_init(&sl);
	for (int pass = 0; pass < 2; pass++) {
		map_empty(&R->snames);
		queue_empty(&sl);
		for (int i = 0; i < nex; i++)
			queue_push(&sl, i);
		while (sl.count) {
			int i = queue_shift(&sl);
			if (filter_group(R, &ex[i].dep, 1, ex[i].bn) == 1)
				queue_push(&sl, i);
		}
	}
	queue_free(&sl);
	/* every valid record of the dependency graph */
	map_empty(out);
	Map seen, queued;
	map_init(&seen, (int)R->nspace);
	map_init(&queued, (int)R->nspace);
	Queue add, todo;
	queue_init(&add);
	queue_init(&todo);
	for (int i = 0; i < nex; i++) {
		struct rspec *e = &ex[i];
		queue_empty(&add);
		for (int k = 0; k < e->matches.count; k++) {
			Id p = e->matches.elements[k];
			if (!MAPTST(out, p) && is_valid_prec(R, p))
				queue_push(&add, p);
		}
		if (R->strict && add.count) {
			int n = 0;
			for (int k = 0; k < add.count; k++)
				if (strict_channel_ok(R, add.elements[k]))
					add.elements[n++] = add.elements[k];
			queue_truncate(&add, n);
		}
		for (int k = 0; k < add.count; k++)
			MAPSET(out, add.elements[k]);
		for (int k = 0; k < add.count; k++) {
			Id pkg = add.elements[k];
			struct byname *sbn = NULL;
			int nsbn = 0;
			for (int j = 0; j < nex; j++) {
				struct byname *b = byname_get(&sbn, &nsbn, ex[j].name);
				if (!b->deps.count)
					b->front = ex[j].strict;
				queue_push(&b->deps, ex[j].dep);
			}
			map_empty(&seen);
			map_empty(&queued);
			queue_empty(&todo);
			struct msdeps *m = ms_depends(R, pkg);
			for (int j = 0; j < m->n; j++) {
				Id dep = m->dep[j];
				if (MAPTST(&queued, dep_slot(R, dep)))
					continue;
				MAPSET(&queued, dep_slot(R, dep));
				queue_push(&todo, dep);
				struct depinfo *d = dep_info(R, dep);
				struct byname *b = byname_get(&sbn, &nsbn, d->name);
				if (!queue_has(&b->deps, dep) &&
				    (!b->deps.count || dep_strict(R, d) >= b->front)) {
					queue_unshift(&b->deps, dep);
					b->front = dep_strict(R, d);
				}
			}
			while (todo.count) {
				Id ms = queue_shift(&todo);
				MAPSET(&seen, dep_slot(R, ms));
				struct depinfo *d = dep_info(R, ms);
				int start = d->mstart,
				    count = d->mcount; /* d moves as the table grows */
				for (int j = 0; j < count; j++) {
					Id dp = R->mq.elements[start + j];
					if (MAPTST(out, dp) || !is_valid_prec(R, dp))
						continue;
					if (R->strict && !strict_channel_ok(R, dp))
						continue;
					MAPSET(out, dp);
					struct msdeps *dm = ms_depends(R, dp);
					for (int q = 0; q < dm->n; q++) {
						Id nd = dm->dep[q];
						size_t slot = dep_slot(R, nd);
						if (MAPTST(&seen, slot))
							continue;
						struct depinfo *ni = dep_info(R, nd);
						struct byname *b =
						        byname_get(&sbn, &nsbn, ni->name);
						/* Resolve._broader */
						bool broader = b->deps.count &&
						               dep_strict(R, ni) < b->front;
						if (!ni->feature && !broader) {
							if (!MAPTST(&queued, slot)) {
								MAPSET(&queued, slot);
								queue_push(&todo, nd);
							}
						} else {
							MAPSET(&seen, slot);
						}
					}
				}
			}
			byname_free(sbn, nsbn);
		}
	}
	queue_free(&add);
	queue_free(&todo);
	map_free(&seen);
	map_free(&queued);
}

/* ---------------------------------------------------------------------------------------- */
/* The reductions conda's Solver makes for a change on the UPDATE_SPECS road                 */

struct rlist {
	struct rspec *v;
	int n;
};

static void rlist_free(struct rlist *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].str);
		queue_free(&l->v[i].matches);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Adds a spec (a set's add: the same dependency and build number once) */
static void rlist_add(struct reducer *R, struct rlist *l, const struct menv_matchspec *ms,
                      long long bn, const char *str)
{
	if (!ms->name || strchr(ms->name, '*'))
		return;
	struct menv_matchspec plain = *ms;
	plain.channel = NULL;
	plain.subdir = NULL;
	char *dstr = menv_matchspec_str(&plain);
	Id dep = menv_solv_matchspec(R->pool, dstr);
	free(dstr);
	if (!dep)
		return;
	for (int i = 0; i < l->n; i++)
		if (l->v[i].dep == dep && l->v[i].bn == bn)
			return;
	l->v = menv_xrealloc(l->v, (size_t)(l->n + 1) * sizeof(*l->v));
	struct rspec *e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->dep = dep;
	e->name = pool_str2id(R->pool, ms->name, 1);
	e->strict = bn >= 0 ? 3 : strictness(ms);
	e->bn = bn;
	e->str = str ? menv_xstrdup(str) : menv_matchspec_conda_str(ms);
	queue_init(&e->matches);
}

/* solve.py's specs_map: one spec a name (the last one set wins) */
struct smap {
	char **name;
	struct menv_matchspec **ms;
	int n;
};

static void smap_set(struct smap *m, const char *name, const char *spec,
                     const struct menv_matchspec *copy)
{
	struct menv_matchspec *ms = NULL;
	char *s = copy ? menv_matchspec_str_full(copy) : NULL;
	if (menv_matchspec_parse(s ? s : spec, &ms, NULL)) {
		free(s);
		return;
	}
	free(s);
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->name[i], name)) {
			menv_matchspec_free(m->ms[i]);
			m->ms[i] = ms;
			return;
		}
	m->name = menv_xrealloc(m->name, (size_t)(m->n + 1) * sizeof(*m->name));
	m->ms = menv_xrealloc(m->ms, (size_t)(m->n + 1) * sizeof(*m->ms));
	m->name[m->n] = menv_xstrdup(name);
	m->ms[m->n++] = ms;
}

static const struct menv_matchspec *smap_get(const struct smap *m, const char *name)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->name[i], name))
			return m->ms[i];
	return NULL;
}

static void smap_free(struct smap *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->name[i]);
		menv_matchspec_free(m->ms[i]);
	}
	free(m->name);
	free(m->ms);
	memset(m, 0, sizeof(*m));
}

static const char *jstr(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

static bool has_str(const struct menv_strvec *v, const char *name)
{
	for (size_t i = 0; v && i < v->n; i++)
		if (!strcmp(v->v[i], name))
			return true;
	return false;
}

static json_t *installed_named(struct menv_solver *s, const char *name)
{
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
		if (r && !strcmp(jstr(r, "name"), name))
			return r;
	}
	return NULL;
}

static bool in_list(struct menv_matchspec *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (v[i]->name && !strcmp(v[i]->name, name))
			return true;
	return false;
}

/* Solver._package_has_updates: an installed name with a newer build in the channels asks for
 * that version and build number (the group's first, newest) */
static void add_with_updates(struct reducer *R, struct rlist *l, const struct menv_matchspec *ms)
{
	Pool *pool = R->pool;
	json_t *inst = installed_named(R->s, ms->name);
	Id name = pool_str2id(pool, ms->name, 0);
	int gn;
	const Id *g = group_of(R, name, &gn);
	if (inst && gn) {
		struct menv_version *iv = NULL;
		long long ibn = json_integer_value(json_object_get(inst, "build_number"));
		if (!menv_version_parse(jstr(inst, "version"), &iv, NULL)) {
			for (int i = 0; i < gn; i++) {
				Solvable *sv = pool_id2solvable(pool, g[i]);
				if (sv->repo == R->s->virt)
					continue;
				const char *ver = pool_id2str(pool, sv->evr);
				const char *b = solvable_lookup_str(sv, SOLVABLE_BUILDVERSION);
				long long bn = b ? atoll(b) : 0;
				struct menv_version *v = NULL;
				if (menv_version_parse(ver, &v, NULL))
					continue;
				int c = menv_version_cmp(v, iv);
				menv_version_free(v);
				if (c > 0 || (c == 0 && bn > ibn)) {
					char *spec = menv_xasprintf("%s ==%s", ms->name, ver);
					struct menv_matchspec *u = NULL;
					if (!menv_matchspec_parse(spec, &u, NULL)) {
						char *str =
						        menv_xasprintf("%s==%s[build_number=%lld]",
						                       ms->name, ver, bn);
						rlist_add(R, l, u, bn, str);
						free(str);
						menv_matchspec_free(u);
					}
					free(spec);
					menv_version_free(iv);
					return;
				}
			}
			menv_version_free(iv);
		}
	}
	rlist_add(R, l, ms, -1, NULL);
}

static void add_smap(struct reducer *R, struct rlist *l, const struct smap *m)
{
	for (int i = 0; i < m->n; i++)
		rlist_add(R, l, m->ms[i], -1, NULL);
}

static void add_to_add(struct reducer *R, struct rlist *l, const struct menv_solve_request *req)
{
	for (size_t i = 0; i < req->ninstall; i++)
		rlist_add(R, l, req->install[i], -1, NULL);
	for (size_t i = 0; i < req->nupdate; i++)
		rlist_add(R, l, req->update[i], -1, NULL);
}

static void reducer_init(struct reducer *R, struct menv_solver *s)
{
	Pool *pool = s->pool;
	memset(R, 0, sizeof(*R));
	R->s = s;
	R->pool = pool;
	R->strict = s->prio == MENV_PRIORITY_STRICT;
	map_init(&R->index, pool->nsolvables);
	Queue all;
	queue_init(&all);
	for (Id p = 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo)
			continue;
		if (sv->repo == s->virt) {
			/* virtual packages (the installed records are the channels' own) */
			if (((size_t)p < s->inst_alloc && s->inst_by_id[p]) ||
			    strncmp(pool_id2str(pool, sv->name), "__", 2))
				continue;
		} else if (!pool_installable(pool, sv)) {
			continue;
		}
		MAPSET(&R->index, p);
		queue_push(&all, p);
	}
	/* the groups by name, each sorted when first asked (group_of) */
	R->ngnames = pool->ss.nstrings;
	R->gstart = menv_xcalloc((size_t)R->ngnames + 1, sizeof(int));
	R->gcount = menv_xcalloc((size_t)R->ngnames + 1, sizeof(int));
	R->rank = menv_xcalloc((size_t)pool->nsolvables + 1, sizeof(int));
	R->gsolv = menv_xcalloc((size_t)all.count + 1, sizeof(Id));
	map_init(&R->gsorted, pool->ss.nstrings);
	for (int i = 0; i < all.count; i++)
		R->gcount[pool_id2solvable(pool, all.elements[i])->name]++;
	for (Id nm = 1, at = 0; nm < R->ngnames; nm++) {
		R->gstart[nm] = at;
		at += R->gcount[nm];
	}
	int *fill = menv_xcalloc((size_t)R->ngnames + 1, sizeof(int));
	for (int i = 0; i < all.count; i++) {
		Id nm = pool_id2solvable(pool, all.elements[i])->name;
		R->gsolv[R->gstart[nm] + fill[nm]++] = all.elements[i];
	}
	free(fill);
	queue_free(&all);
	R->deps = menv_xcalloc((size_t)pool->nsolvables + 1, sizeof(*R->deps));
	R->fo = menv_xcalloc((size_t)pool->nsolvables + 1, 1);
	queue_init(&R->mq);
	map_init(&R->snames, pool->ss.nstrings);
	map_init(&R->cp_applied, pool->ss.nstrings);
	map_init(&R->expool, pool->nsolvables);
	map_init(&R->expool_names, pool->ss.nstrings);
}

static void reducer_free(struct reducer *R)
{
	for (Id p = 0; p < R->pool->nsolvables; p++) {
		struct msdeps *m = R->deps[p];
		if (!m)
			continue;
		free(m->dep);
		free(m->opt);
		free(m->memo);
		free(m);
	}
	for (size_t i = 0; i < R->tabsize; i++)
		free(R->tab[i].str);
	free(R->tab);
	free(R->deps);
	free(R->fo);
	free(R->rank);
	free(R->gsolv);
	free(R->gstart);
	free(R->gcount);
	queue_free(&R->mq);
	map_free(&R->index);
	map_free(&R->gsorted);
	map_free(&R->snames);
	map_free(&R->cp_applied);
	map_free(&R->expool);
	map_free(&R->expool_names);
}

/* Forgets every is_valid_spec value (a fresh Resolve's MatchSpec objects) */
static void memo_clear(struct reducer *R)
{
	for (Id p = 0; p < R->pool->nsolvables; p++)
		if (R->deps[p])
			memset(R->deps[p]->memo, 0, (size_t)R->deps[p]->n);
}

int menv_solv_reduce_stale(struct menv_solver *s, const struct menv_solve_request *req)
{
	static const char *const kept[] = {"anaconda",         "conda",
	                                   "conda-build",      "python.app",
	                                   "console_shortcut", "powershell_shortcut"};
	Pool *pool = s->pool;
	struct reducer R;
	struct rlist l = {0};
	struct smap m = {0};
	Map stale, fresh;
	int n = 0;

	const char *env = getenv("MENV_SOLVER_VALID2_MEMO"); /* tests: "0" replays nothing */
	if (s->reduced || (env && !strcmp(env, "0")))
		return 0;
	reducer_init(&R, s);
	map_init(&stale, pool->nsolvables);
	map_init(&fresh, pool->nsolvables);

	/* _add_specs: explicit_pool = _get_package_pool(specs_to_add) */
	add_to_add(&R, &l, req);
	reduced_index(&R, l.v, l.n, &stale);
	rlist_free(&l);
	/* _add_specs: get_conflicting_specs(installed_specs, specs_to_add) */
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
		if (!r)
			continue;
		char *spec = menv_xasprintf("%s ==%s %s", jstr(r, "name"), jstr(r, "version"),
		                            jstr(r, "build"));
		struct menv_matchspec *ms = NULL;
		if (!menv_matchspec_parse(spec, &ms, NULL)) {
			/* PackageRecord.to_match_spec: channel and subdir too (strictness 3) */
			char *str = menv_xasprintf("%s/%s::%s==%s=%s", jstr(r, "channel"),
			                           jstr(r, "subdir"), jstr(r, "name"),
			                           jstr(r, "version"), jstr(r, "build"));
			rlist_add(&R, &l, ms, -1, str);
			l.v[l.n - 1].strict = 3;
			free(str);
			menv_matchspec_free(ms);
		}
		free(spec);
	}
	add_to_add(&R, &l, req);
	reduced_index(&R, l.v, l.n, &stale);
	rlist_free(&l);

	/* _collect_all_metadata's specs_map: the history, the names conda always keeps, the
	 * virtual packages, the installed aggressive_update_packages (and, without a history,
	 * every installed name); _add_specs strips the aggressive ones */
	for (size_t i = 0; i < req->nhistory; i++)
		if (req->history[i]->name)
			smap_set(&m, req->history[i]->name, NULL, req->history[i]);
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++)
		if (!smap_get(&m, kept[i]) && installed_named(s, kept[i]))
			smap_set(&m, kept[i], kept[i], NULL);
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		const char *nm = pool_id2str(pool, sv->name);
		if (sv->repo == s->virt && MAPTST(&R.index, p) && !smap_get(&m, nm))
			smap_set(&m, nm, nm, NULL);
	}
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
		const char *nm = r ? jstr(r, "name") : "";
		if (r && (!req->nhistory || has_str(req->aggressive, nm) ||
		          !strcmp(jstr(r, "subdir"), "pypi")))
			smap_set(&m, nm, nm, NULL);
	}
	/* UPDATE_SPECS: get_conflicting_specs(specs_map, specs_to_add less the history's names,
	 * each through _package_has_updates) */
	add_smap(&R, &l, &m);
	for (size_t i = 0; i < req->ninstall; i++)
		if (req->install[i]->name &&
		    !in_list(req->history, req->nhistory, req->install[i]->name))
			add_with_updates(&R, &l, req->install[i]);
	for (size_t i = 0; i < req->nupdate; i++)
		if (req->update[i]->name &&
		    !in_list(req->history, req->nhistory, req->update[i]->name))
			add_with_updates(&R, &l, req->update[i]);
	reduced_index(&R, l.v, l.n, &stale);
	rlist_free(&l);

	/* _run_sat: the final specs (python within its minor version unless requested, the
	 * aggressive ones bare unless offline, the requested specs over their names) */
	json_t *py = installed_named(s, "python");
	if (py && !in_list(req->install, req->ninstall, "python") &&
	    !in_list(req->update, req->nupdate, "python")) {
		const struct menv_matchspec *ps = smap_get(&m, "python");
		if (!ps || !ps->version) {
			const char *ver = jstr(py, "version");
			const char *dot = strchr(ver, '.');
			const char *dot2 = dot ? strchr(dot + 1, '.') : NULL;
			int len = dot2 ? (int)(dot2 - ver) : (int)strlen(ver);
			char *spec = menv_xasprintf("python %.*s.*", len, ver);
			smap_set(&m, "python", spec, NULL);
			free(spec);
		}
	}
	for (size_t i = 0; req->aggressive_update && req->aggressive && i < req->aggressive->n; i++)
		if (smap_get(&m, req->aggressive->v[i]))
			smap_set(&m, req->aggressive->v[i], req->aggressive->v[i], NULL);
	for (size_t i = 0; i < req->ninstall; i++)
		if (req->install[i]->name)
			smap_set(&m, req->install[i]->name, NULL, req->install[i]);
	for (size_t i = 0; i < req->nupdate; i++)
		if (req->update[i]->name)
			smap_set(&m, req->update[i]->name, NULL, req->update[i]);
	add_smap(&R, &l, &m);
	add_to_add(&R, &l, req);
	reduced_index(&R, l.v, l.n, &stale);
	memo_clear(&R);
	reduced_index(&R, l.v, l.n, &fresh);
	rlist_free(&l);
	smap_free(&m);

	/* what a fresh final reduction holds and the replayed one lacks is out of conda's SAT */
	map_subtract(&fresh, &stale);
	for (Id p = 2; p < pool->nsolvables; p++)
		if (MAPTST(&fresh, p) && pool_id2solvable(pool, p)->repo != s->virt)
			n++;
	if (n) {
		s->unreduced = pool->considered;
		s->reduced = menv_xcalloc(1, sizeof(*s->reduced));
		map_init(s->reduced, pool->nsolvables);
		if (s->unreduced)
			map_or(s->reduced, s->unreduced);
		else
			map_setall(s->reduced);
		map_subtract(s->reduced, &fresh);
		pool->considered = s->reduced;
		pool_createwhatprovides(pool);
	}
	map_free(&stale);
	map_free(&fresh);
	reducer_free(&R);
	return n;
}

void menv_solv_reduce_undo(struct menv_solver *s)
{
	if (!s->reduced)
		return;
	s->pool->considered = s->unreduced;
	map_free(s->reduced);
	free(s->reduced);
	s->reduced = NULL;
	s->unreduced = NULL;
	pool_createwhatprovides(s->pool);
}
