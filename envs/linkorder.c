/*
 * linkorder.c - the order packages are linked and unlinked in, as conda 26.7.1 orders them:
 * conda/models/prefix_graph.py PrefixGraph._toposort (allow_cycles, conda's default) over
 * the records' depends, and conda/core/solve.py diff_for_unlink_link_precs (links in the
 * order of the whole final environment, unlinks in the reverse order of the installed one).
 *
 * The order decides which package's file stays where two write one path (the one linked
 * last, conda's clobber) and the order of pre-/post-link and pre-unlink scripts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "txnpriv.h"

struct edge {
	size_t parent, child;
};

struct order {
	const struct menv_order_node *nd;
	size_t n;
	size_t *pc;     /* parents not yet emitted */
	size_t *cstart; /* children of i: child[cstart[i] .. cstart[i + 1]) */
	size_t *child;
	unsigned char *done;
	size_t *out, nout;
	/* the cycle breaker's heap of (parents left, node): entries whose count is stale or
	 * whose node is done are skipped when they come up */
	struct heapent {
		size_t pc, node;
	} * heap;
	size_t nheap, capheap;
	bool heap_on;
	char **keys; /* the dist_str of the nodes that give none, made for the first cycle */
};

static int by_name_then_index(const void *a, const void *b, void *arg)
{
	const struct menv_order_node *nd = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(nd[x].name, nd[y].name);
	return c ? c : (x > y) - (x < y);
}

/* conda's _toposort_pop_key tie: (parents left, dist_str). */
static int key_cmp(const struct order *o, const struct heapent *a, const struct heapent *b)
{
	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	int c = strcmp(o->keys[a->node] ? o->keys[a->node] : o->nd[a->node].key,
	               o->keys[b->node] ? o->keys[b->node] : o->nd[b->node].key);
	return c ? c : (a->node > b->node) - (a->node < b->node);
}

static void heap_push(struct order *o, size_t node)
{
	if (o->nheap == o->capheap) {
		o->capheap = o->capheap ? o->capheap * 2 : 64;
		o->heap = menv_xrealloc(o->heap, o->capheap * sizeof(*o->heap));
	}
	size_t i = o->nheap++;
	o->heap[i] = (struct heapent){o->pc[node], node};
	while (i) {
		size_t up = (i - 1) / 2;
		if (key_cmp(o, &o->heap[i], &o->heap[up]) >= 0)
			break;
		struct heapent t = o->heap[i];
		o->heap[i] = o->heap[up];
		o->heap[up] = t;
		i = up;
	}
}

static struct heapent heap_pop(struct order *o)
{
	struct heapent top = o->heap[0];
	o->heap[0] = o->heap[--o->nheap];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < o->nheap && key_cmp(o, &o->heap[l], &o->heap[m]) < 0)
			m = l;
		if (r < o->nheap && key_cmp(o, &o->heap[r], &o->heap[m]) < 0)
			m = r;
		if (m == i)
			break;
		struct heapent t = o->heap[i];
		o->heap[i] = o->heap[m];
		o->heap[m] = t;
		i = m;
	}
	return top;
}

/* Emits `v`, takes it out of its children's parents; those left with none join `next`. */
static void emit_node(struct order *o, size_t v, size_t *next, size_t *nnext)
{
	o->done[v] = 1;
	o->out[o->nout++] = v;
	for (size_t k = o->cstart[v]; k < o->cstart[v + 1]; k++) {
		size_t c = o->child[k];
		if (o->done[c])
			continue;
		if (--o->pc[c] == 0)
			next[(*nnext)++] = c;
		else if (o->heap_on)
			heap_push(o, c);
	}
}

/* The first node named `name` in the given order, or n. */
static size_t first_named(const struct menv_strmap *first, const char *name, size_t n)
{
	const size_t *at = menv_strmap_get(first, name);
	return at ? *at : n;
}

/* conda's dist_str: "<channel>/<subdir>::<name>-<version>-<build>", the channel as a record
 * holds it (a URL with its subdir; conda's canonical name differs for channel_alias
 * channels, which changes only the tie between two channels' records in a cycle). */
static char *dist_key(const char *channel, const char *name, const char *version, const char *build)
{
	return menv_xasprintf("%s::%s-%s-%s", channel ? channel : "", name, version ? version : "",
	                      build ? build : "");
}

void menv_conda_order(const struct menv_order_node *nd, size_t n, size_t *out)
{
	struct order o = {.nd = nd, .n = n, .out = out};
	struct menv_strmap first; /* name -> its first node (names borrowed) */
	size_t *same = menv_xcalloc(n + 1, sizeof(*same)); /* the next node of its name, or n */
	size_t *stamp = menv_xcalloc(n + 1, sizeof(*stamp));
	struct edge *e = NULL;
	size_t ne = 0, cape = 0;

	menv_strmap_borrowing(&first, n);
	for (size_t i = n; i-- > 0;) {
		size_t *at = menv_strmap_get(&first, nd[i].name);
		same[i] = at ? *at : n;
		menv_strmap_put(&first, nd[i].name, i);
	}
	/* the graph: a node's parents are the nodes its depends name (conda matches the whole
	 * MatchSpec; in one environment's records a dependency's name is its match), no node
	 * its own parent, pip not python's parent (prepare_graph's first special case) */
	size_t mi = first_named(&first, "menuinst", n), py = first_named(&first, "python", n);
	bool py_self = false; /* python among its own parents, as conda's menuinst case sees it */
	for (size_t i = 0; i < n; i++) {
		bool is_py = strcmp(nd[i].name, "python") == 0;
		size_t k;
		json_t *d;
		json_array_foreach(nd[i].depends, k, d)
		{
			const char *s = json_string_value(d);
			if (!s)
				continue;
			char buf[MENV_DEP_NAME_BUF], *dn = menv_dep_name_in(s, buf);
			if (!(is_py && strcmp(dn, "pip") == 0))
				for (size_t j = first_named(&first, dn, n); j < n; j = same[j]) {
					if (j == i)
						py_self |= i == py;
					if (j == i || stamp[j] == i + 1)
						continue;
					stamp[j] = i + 1;
					if (ne == cape) {
						cape = cape ? cape * 2 : 256;
						e = menv_xrealloc(e, cape * sizeof(*e));
					}
					e[ne++] = (struct edge){j, i};
				}
			if (dn != buf)
				free(dn);
		}
	}
	/* the second: menuinst becomes a parent of every node python is a parent of, unless
	 * that node is a parent of menuinst (conda raises without a python; menv orders on).
	 * conda takes self edges out after this: a python that depends on itself is one */
	if (mi < n && py < n) {
		unsigned char *pyp = menv_xcalloc(n + 1, 1), *mip = menv_xcalloc(n + 1, 1),
		              *has = menv_xcalloc(n + 1, 1);
		size_t ne0 = ne;
		pyp[py] = py_self;
		for (size_t k = 0; k < ne0; k++) {
			if (e[k].parent == py)
				pyp[e[k].child] = 1;
			if (e[k].child == mi)
				mip[e[k].parent] = 1;
			if (e[k].parent == mi)
				has[e[k].child] = 1;
		}
		for (size_t i = 0; i < n; i++)
			if (pyp[i] && !mip[i] && !has[i] && i != mi) {
				if (ne == cape) {
					cape = cape ? cape * 2 : 256;
					e = menv_xrealloc(e, cape * sizeof(*e));
				}
				e[ne++] = (struct edge){mi, i};
			}
		free(pyp);
		free(mip);
		free(has);
	}
	o.pc = menv_xcalloc(n + 1, sizeof(*o.pc));
	o.cstart = menv_xcalloc(n + 2, sizeof(*o.cstart));
	o.child = menv_xcalloc(ne + 1, sizeof(*o.child));
	o.done = menv_xcalloc(n + 1, 1);
	for (size_t k = 0; k < ne; k++) {
		o.pc[e[k].child]++;
		o.cstart[e[k].parent + 1]++;
	}
	for (size_t i = 0; i < n; i++)
		o.cstart[i + 1] += o.cstart[i];
	size_t *fill = menv_xcalloc(n + 1, sizeof(*fill));
	memcpy(fill, o.cstart, n * sizeof(*fill));
	for (size_t k = 0; k < ne; k++)
		o.child[fill[e[k].parent]++] = e[k].child;
	free(fill);
	free(e);

	size_t *level = menv_xcalloc(n + 1, sizeof(*level)), nlevel = 0;
	size_t *next = menv_xcalloc(n + 1, sizeof(*next)), nnext = 0;
	/* disconnected nodes first, by name; then Kahn's levels, each by name */
	for (size_t i = 0; i < n; i++)
		if (!o.pc[i] && o.cstart[i] == o.cstart[i + 1])
			level[nlevel++] = i;
	qsort_r(level, nlevel, sizeof(*level), by_name_then_index, (void *)nd);
	for (size_t k = 0; k < nlevel; k++)
		emit_node(&o, level[k], next, &nnext);
	nlevel = 0;
	for (size_t i = 0; i < n; i++)
		if (!o.pc[i] && !o.done[i])
			level[nlevel++] = i;
	while (o.nout < n) {
		if (!nlevel) {
			/* a cycle: the node with the fewest parents left, then the least dist_str */
			if (!o.heap_on) {
				o.heap_on = true;
				o.keys = menv_xcalloc(n + 1, sizeof(*o.keys));
				for (size_t i = 0; i < n; i++)
					if (!nd[i].key)
						o.keys[i] = dist_key(nd[i].channel, nd[i].name,
						                     nd[i].version, nd[i].build);
				for (size_t i = 0; i < n; i++)
					if (!o.done[i])
						heap_push(&o, i);
			}
			for (;;) {
				struct heapent h = heap_pop(&o);
				if (o.done[h.node] || h.pc != o.pc[h.node])
					continue;
				emit_node(&o, h.node, level, &nlevel);
				break;
			}
			continue;
		}
		qsort_r(level, nlevel, sizeof(*level), by_name_then_index, (void *)nd);
		nnext = 0;
		for (size_t k = 0; k < nlevel; k++)
			emit_node(&o, level[k], next, &nnext);
		size_t *t = level;
		level = next;
		next = t;
		nlevel = nnext;
	}
	menv_strmap_clear(&first);
	free(level);
	free(next);
	free(same);
	free(stamp);
	free(o.pc);
	free(o.cstart);
	free(o.child);
	free(o.done);
	free(o.heap);
	for (size_t i = 0; o.keys && i < n; i++)
		free(o.keys[i]);
	free(o.keys);
}

static void node_of_record(struct menv_order_node *nd, const struct menv_record *r)
{
	*nd = (struct menv_order_node){.name = r->name,
	                               .depends = menv_record_depends(r),
	                               .channel = r->channel_url,
	                               .version = r->version,
	                               .build = r->build};
}

static void node_of_installed(struct menv_order_node *nd, json_t *rec)
{
	json_t *v = json_object_get(rec, "name");
	*nd = (struct menv_order_node){
	        .name = json_is_string(v) ? json_string_value(v) : "",
	        .depends = json_object_get(rec, "depends"),
	        .channel = json_string_value(json_object_get(rec, "channel")),
	        .version = json_string_value(json_object_get(rec, "version")),
	        .build = json_string_value(json_object_get(rec, "build"))};
}

void menv_records_conda_order(const struct menv_record **recs, size_t n)
{
	struct menv_order_node *nd = menv_xcalloc(n + 1, sizeof(*nd));
	size_t *pos = menv_xcalloc(n + 1, sizeof(*pos));
	const struct menv_record **copy = menv_xcalloc(n + 1, sizeof(*copy));

	for (size_t i = 0; i < n; i++)
		node_of_record(&nd[i], recs[i]);
	menv_conda_order(nd, n, pos);
	for (size_t i = 0; i < n; i++)
		copy[i] = recs[pos[i]];
	if (n)
		memcpy(recs, copy, n * sizeof(*recs));
	free(nd);
	free(pos);
	free(copy);
}

/* An installed record's address and its place in `inst`. */
struct addr {
	json_t *j;
	size_t i;
};

/* by address; the key of a bsearch is a json_t **, the first member of a struct addr */
static int by_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (json_t *const *)a, y = (uintptr_t) * (json_t *const *)b;
	return x < y ? -1 : x > y;
}

/* rank[i]: the place of installed record i in the conda order of `inst` (all of them). */
static size_t *installed_ranks(const struct menv_prefix_record *inst, size_t ninst)
{
	struct menv_order_node *nd = menv_xcalloc(ninst + 1, sizeof(*nd));
	size_t *pos = menv_xcalloc(ninst + 1, sizeof(*pos));
	size_t *rank = menv_xcalloc(ninst + 1, sizeof(*rank));

	for (size_t i = 0; i < ninst; i++)
		node_of_installed(&nd[i], inst[i].json);
	menv_conda_order(nd, ninst, pos);
	for (size_t i = 0; i < ninst; i++)
		rank[pos[i]] = i;
	free(nd);
	free(pos);
	return rank;
}

struct ranked {
	size_t rank, at;
};

static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

void menv_plan_conda_order(const struct menv_prefix_record *inst, size_t ninst,
                           const struct menv_record **link, size_t nlink, json_t **unlink,
                           size_t nunlink)
{
	/* the installed records by address, to find an unlink's place among them */
	struct addr *byaddr = menv_xcalloc(ninst + 1, sizeof(*byaddr));
	for (size_t i = 0; i < ninst; i++) {
		byaddr[i].j = inst[i].json;
		byaddr[i].i = i;
	}
	qsort(byaddr, ninst, sizeof(*byaddr), by_ptr);
	unsigned char *gone = menv_xcalloc(ninst + 1, 1);
	struct ranked *rk = menv_xcalloc(nunlink + nlink + 1, sizeof(*rk));
	size_t *rank = ninst ? installed_ranks(inst, ninst) : NULL;

	/* unlinks: the installed environment's order reversed (one not installed: last) */
	for (size_t k = 0; k < nunlink; k++) {
		json_t *key = unlink[k];
		struct addr *hit =
		        ninst ? bsearch(&key, byaddr, ninst, sizeof(*byaddr), by_ptr) : NULL;
		if (hit)
			gone[hit->i] = 1;
		rk[k] = (struct ranked){hit ? ninst - 1 - rank[hit->i] : ninst + k, k};
	}
	qsort(rk, nunlink, sizeof(*rk), by_rank);
	json_t **uc = menv_xcalloc(nunlink + 1, sizeof(*uc));
	for (size_t k = 0; k < nunlink; k++)
		uc[k] = unlink[rk[k].at];
	if (nunlink)
		memcpy(unlink, uc, nunlink * sizeof(*unlink));
	free(uc);

	/* links: their places in the order of the final environment (what stays and them) */
	size_t nkept = 0;
	for (size_t i = 0; i < ninst; i++)
		nkept += !gone[i];
	struct menv_order_node *nd = menv_xcalloc(nkept + nlink + 1, sizeof(*nd));
	size_t *pos = menv_xcalloc(nkept + nlink + 1, sizeof(*pos)), m = 0;
	for (size_t i = 0; i < ninst; i++)
		if (!gone[i])
			node_of_installed(&nd[m++], inst[i].json);
	for (size_t k = 0; k < nlink; k++)
		node_of_record(&nd[m++], link[k]);
	menv_conda_order(nd, m, pos);
	size_t *lrank = menv_xcalloc(nlink + 1, sizeof(*lrank));
	for (size_t i = 0; i < m; i++)
		if (pos[i] >= nkept)
			lrank[pos[i] - nkept] = i;
	for (size_t k = 0; k < nlink; k++)
		rk[k] = (struct ranked){lrank[k], k};
	qsort(rk, nlink, sizeof(*rk), by_rank);
	const struct menv_record **lc = menv_xcalloc(nlink + 1, sizeof(*lc));
	for (size_t k = 0; k < nlink; k++)
		lc[k] = link[rk[k].at];
	if (nlink)
		memcpy(link, lc, nlink * sizeof(*link));
	free(lc);
	free(lrank);
	free(nd);
	free(pos);
	free(rank);
	free(rk);
	free(gone);
	free(byaddr);
}
