/*
 * sparse.c - a large repodata.json read as rattler's SparseRepoData reads it: one pass finds
 * each record's bytes and name (jsonscan.c), grouped by name, and a solve reads only the
 * records of the names its request reaches (its specs, the installed, virtual and pinned
 * packages, then the depends and constrains of every record read, until closed) through
 * libsolv's conda reader, as the whole file would be read. The index is cached beside the
 * .solv (keyed like it), so that a second solve maps it instead of scanning, and so are the
 * records a read took, as .solv bytes (keyed by which records): the same request again reads
 * them as a whole load reads its .solv. A query over everything (search, a glob spec) reads
 * every record (menv_solv_load_full: the .solv).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "jsonscan.h"

#define END       UINT32_MAX
#define CONDA_BIT 0x80000000u /* in srec.keylen: a record of "packages.conda" */

/* A record: its key and value bytes in the JSON, its name group, the next of that group. */
struct srec {
	uint64_t keyoff, off;
	uint32_t keylen, len, group, next;
};
/* A name: its bytes in the index's name blob and its first record. Group 0: records without a readable
 * name, read by every sparse load (libsolv's reader then names them or they are dropped). */
struct sgroup {
	uint64_t nameoff;
	uint32_t namelen, first;
};
struct shead {
	char magic[16];
	char key[128];
	uint64_t nrecs, ngroups, nnames, info_off, info_end, has_info;
};
#define MAGIC "menv-sparse-2"

struct sparse_index {
	struct srec *recs;
	size_t nrecs, rcap;
	struct sgroup *groups;
	size_t ngroups, gcap;
	char *names; /* the names' bytes, one after another (not NUL-terminated) */
	size_t nnames, ncap;
	uint32_t *table; /* open addressing: group + 1, 0 empty */
	size_t tcap;
	uint8_t *state;   /* per record: 0 unread, 1 wanted, 2 read */
	uint8_t *visited; /* per group */
	void *cmap;       /* the mapped cache (recs and groups point into it), or NULL */
	size_t csize;
	struct shead head;
};

void menv_solv_sparse_free(struct sparse_index *x)
{
	if (!x)
		return;
	if (x->cmap) {
		menv_solv_cache_unmap(x->cmap, x->csize);
	} else {
		free(x->recs);
		free(x->groups);
		free(x->names);
	}
	free(x->table);
	free(x->state);
	free(x->visited);
	free(x);
}

static uint32_t hash_bytes(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* The group of name s[0..n), or 0. */
static uint32_t lookup(const struct sparse_index *x, const char *s, size_t n)
{
	if (!x->tcap)
		return 0;
	for (size_t i = hash_bytes(s, n) & (x->tcap - 1);; i = (i + 1) & (x->tcap - 1)) {
		uint32_t g = x->table[i];
		if (!g)
			return 0;
		const struct sgroup *gr = &x->groups[g - 1];
		if (gr->namelen == n && !memcmp(x->names + gr->nameoff, s, n))
			return g - 1;
	}
}

static void table_put(struct sparse_index *x, uint32_t g)
{
	const struct sgroup *gr = &x->groups[g];
	size_t i = hash_bytes(x->names + gr->nameoff, gr->namelen) & (x->tcap - 1);
	while (x->table[i])
		i = (i + 1) & (x->tcap - 1);
	x->table[i] = g + 1;
}

static void table_build(struct sparse_index *x, size_t cap)
{
	free(x->table);
	x->tcap = cap;
	x->table = menv_xcalloc(cap, sizeof(*x->table));
	for (uint32_t g = 1; g < x->ngroups; g++)
		table_put(x, g);
}

struct scan {
	struct sparse_index *x;
	const char *map;
	size_t dropped; /* pages below this were handed back (madvise) */
	bool unindexed; /* a section the index cannot hold: the whole load reads the file */
};

static void on_item(void *ud, const struct menv_jsonscan_item *it)
{
	struct scan *c = ud;
	struct sparse_index *x = c->x;

	if (it->kind == MENV_JSONSCAN_INFO) {
		x->head.info_off = it->off;
		x->head.info_end = it->end;
		x->head.has_info = 1;
		return;
	}
	if (it->kind == MENV_JSONSCAN_OTHER) {
		c->unindexed = true;
		return;
	}
	/* the scan only moves forward: the pages behind it leave this process's RSS (they stay
	 * in the page cache), so a 200 MB file never counts whole */
	if (it->off - c->dropped > (8u << 20)) {
		size_t to = it->off & ~(size_t)4095;
		madvise((char *)c->map + c->dropped, to - c->dropped, MADV_DONTNEED);
		c->dropped = to;
	}
	uint32_t g = 0;
	if (it->name && it->namelen) {
		g = lookup(x, it->name, it->namelen);
		if (!g) {
			/* a copy: looking names up never touches the pages scanned */
			while (x->nnames + it->namelen > x->ncap) {
				x->ncap *= 2;
				x->names = menv_xrealloc(x->names, x->ncap);
			}
			memcpy(x->names + x->nnames, it->name, it->namelen);
			if (x->ngroups == x->gcap) {
				x->gcap *= 2;
				x->groups = menv_xrealloc(x->groups, x->gcap * sizeof(*x->groups));
			}
			g = (uint32_t)x->ngroups++;
			x->groups[g] = (struct sgroup){x->nnames, (uint32_t)it->namelen, END};
			x->nnames += it->namelen;
			if (x->ngroups * 2 > x->tcap)
				table_build(x, x->tcap * 2);
			else
				table_put(x, g);
		}
	}
	if (x->nrecs == x->rcap) {
		x->rcap *= 2;
		x->recs = menv_xrealloc(x->recs, x->rcap * sizeof(*x->recs));
	}
	x->recs[x->nrecs++] = (struct srec){
	        (uint64_t)(it->key - c->map),
	        it->off,
	        (uint32_t)it->keylen | (it->kind == MENV_JSONSCAN_CONDA ? CONDA_BIT : 0),
	        (uint32_t)(it->end - it->off),
	        g,
	        END};
}

/* The index of f's JSON from one scan; 1 when the index cannot hold it (a list of records). */
static int scan_file(struct filerepo *f, struct sparse_index *x, struct menv_error *err)
{
	struct scan c = {x, f->map, 0, false};
	x->rcap = 4096;
	x->recs = menv_xcalloc(x->rcap, sizeof(*x->recs));
	x->gcap = 1024;
	x->groups = menv_xcalloc(x->gcap, sizeof(*x->groups));
	x->ngroups = 1;
	x->groups[0] = (struct sgroup){0, 0, END};
	x->ncap = 64 * 1024;
	x->names = menv_xcalloc(x->ncap, 1);
	table_build(x, 1024);
	if (menv_jsonscan_repodata(f->map, f->size, on_item, &c) < 0)
		return menv_error_set(err, MENV_EPARSE, "%s: not a repodata object", f->path);
	if (c.unindexed)
		return 1;
	if ((uint64_t)x->nrecs >= END || f->size > UINT32_MAX * (uint64_t)1024)
		return menv_error_set(err, MENV_EPARSE, "%s: too many records", f->path);
	/* each group's records in file order */
	for (size_t i = x->nrecs; i-- > 0;) {
		struct sgroup *g = &x->groups[x->recs[i].group];
		x->recs[i].next = g->first;
		g->first = (uint32_t)i;
	}
	x->head.nrecs = x->nrecs;
	x->head.ngroups = x->ngroups;
	x->head.nnames = x->nnames;
	return 0;
}

static char *cache_path(const struct filerepo *f)
{
	return f->solv_path ? menv_xasprintf("%s.names", f->solv_path) : NULL;
}

/* Best effort, as the .solv: whole (a temporary file renamed) or not at all. */
static void write_cache(const struct filerepo *f, const struct sparse_index *x)
{
	char *path = cache_path(f);
	if (!path)
		return;
	struct menv_solv_part parts[] = {{&x->head, sizeof(x->head)},
	                                 {x->recs, x->nrecs * sizeof(*x->recs)},
	                                 {x->groups, x->ngroups * sizeof(*x->groups)},
	                                 {x->names, x->nnames}};
	menv_solv_cache_write(path, parts, 4, NULL);
	free(path);
}

/* The cached index when its key is f's and every offset lies inside the JSON. */
static bool read_cache(const struct filerepo *f, struct sparse_index *x)
{
	char *path = cache_path(f);
	const char *m = NULL;
	size_t size = 0;
	bool mapped = menv_solv_cache_map(path, &m, &size);
	free(path);
	if (!mapped || size < sizeof(struct shead))
		goto no;
	const struct shead *h = (const struct shead *)m;
	/* the checksum says the bytes are the ones written, not that they are sound: every count
	 * and offset is checked without a sum that could wrap (a file whose counts wrapped its
	 * size read past the map, one whose chains looped hung) */
	bool ok = !memcmp(h->magic, MAGIC, sizeof(MAGIC)) && h->key[sizeof(h->key) - 1] == '\0' &&
	          !strcmp(h->key, f->key) && h->nrecs < END && h->ngroups >= 1 &&
	          h->ngroups <= h->nrecs + 1 &&
	          (!h->has_info || (h->info_off <= h->info_end && h->info_end <= f->size));
	/* below 2^38: no wrap */
	uint64_t fixed = ok ? sizeof(*h) + h->nrecs * sizeof(struct srec) +
	                                 h->ngroups * sizeof(struct sgroup)
	                    : 0;
	ok = ok && fixed <= size && h->nnames == size - fixed;
	struct srec *recs = (struct srec *)(h + 1);
	struct sgroup *groups = (struct sgroup *)(recs + (ok ? h->nrecs : 0));
	/* each group's chain holds exactly its records in file order, as scan_file links them
	 * (every record then lies in the chain of the group it names, once): the record of a
	 * group before this one (last, END: none yet) links to it, or the group starts at it */
	uint32_t *last = ok ? menv_xmalloc(h->ngroups * sizeof(*last)) : NULL;
	if (ok)
		memset(last, 0xff, h->ngroups * sizeof(*last));
	for (size_t i = 0; ok && i < h->nrecs; i++) {
		const struct srec *r = &recs[i];
		/* in file order, apart (as the scan found them): each after the one before */
		ok = r->off <= f->size && r->len <= f->size - r->off && r->keyoff <= r->off &&
		     (r->keylen & ~CONDA_BIT) <= r->off - r->keyoff && r->group < h->ngroups &&
		     (i == 0 || r->keyoff >= recs[i - 1].off + recs[i - 1].len) &&
		     (last[r->group] == END ? groups[r->group].first : recs[last[r->group]].next) ==
		             i;
		if (ok)
			last[r->group] = (uint32_t)i;
	}
	for (size_t g = 0; ok && g < h->ngroups; g++)
		ok = groups[g].nameoff <= h->nnames &&
		     groups[g].namelen <= h->nnames - groups[g].nameoff &&
		     (g == 0 ? groups[g].namelen == 0 : groups[g].namelen > 0) &&
		     (last[g] == END ? groups[g].first : recs[last[g]].next) == END;
	free(last);
	if (!ok)
		goto no;
	x->cmap = (void *)m;
	x->csize = size;
	x->head = *h;
	x->recs = recs;
	x->nrecs = h->nrecs;
	x->groups = groups;
	x->ngroups = h->ngroups;
	x->names = (char *)(groups + h->ngroups);
	x->nnames = h->nnames;
	size_t cap = 1024;
	while (cap < x->ngroups * 2)
		cap *= 2;
	table_build(x, cap);
	return true;
no:
	if (mapped)
		menv_solv_cache_unmap(m, size);
	return false;
}

int menv_solv_sparse_open(struct menv_solver *s, struct filerepo *f, struct menv_error *err)
{
	struct sparse_index *x = menv_xcalloc(1, sizeof(*x));
	int rc = 0;

	if (s->cache_off || !read_cache(f, x)) {
		menv_solv_sparse_free(x);
		x = menv_xcalloc(1, sizeof(*x));
		rc = scan_file(f, x, err);
		if (rc) {
			menv_solv_sparse_free(x);
			return rc < 0 ? rc : menv_solv_load_full(s, f, err);
		}
		memcpy(x->head.magic, MAGIC, sizeof(MAGIC));
		snprintf(x->head.key, sizeof(x->head.key), "%s", f->key);
		if (menv_solv_cancelled(s->cancel)) {
			menv_solv_sparse_free(x);
			return menv_error_set(err, MENV_EINTR, "interrupted while loading '%s'",
			                      f->path);
		}
		write_cache(f, x);
	}
	/* a request reaches records all over the file: each read maps its own page only (not
	 * the kernel's fault-around of 64 KiB and more, which made the whole file resident) */
	madvise((void *)f->map, f->size, MADV_RANDOM);
	x->state = menv_xcalloc(x->nrecs + 1, 1);
	x->visited = menv_xcalloc(x->ngroups + 1, 1);
	f->sparse = x;
	free(f->base);
	f->base = menv_solv_base_url(f, x->head.has_info ? f->map + x->head.info_off : NULL,
	                             x->head.has_info ? x->head.info_end - x->head.info_off : 0);
	return 0;
}

/* Appends len bytes of f at off to out (pread: see menv_solv_sparse_record). */
static bool pread_add(const struct filerepo *f, uint64_t off, size_t len, struct menv_buf *out)
{
	size_t at = out->len, got = 0;
	menv_buf_grow(out, len + 1);
	while (got < len) {
		ssize_t r = pread(f->fd, out->buf + at + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	out->len = at + got;
	out->buf[out->len] = '\0';
	return got == len;
}

bool menv_solv_sparse_record(struct filerepo *f, size_t off, struct menv_buf *out)
{
	const struct sparse_index *x = f->sparse;
	size_t lo = 0, hi = x ? x->nrecs : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->recs[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!x || lo >= x->nrecs || x->recs[lo].off != off || f->fd < 0)
		return false;
	return pread_add(f, off, x->recs[lo].len, out);
}

/* ---------------------------------------------------------------------------------------- */
/* The closure of a request's names                                                          */

struct walk {
	struct menv_solver *s;
	uint32_t *todo; /* (file, group) pairs */
	size_t n, cap;
	bool all; /* some name cannot be known: read everything */
};

/* Whether a record of group g, whose bytes could be read (read) and scanned to the name
 * name[0..namelen) (NULL: none readable), is one of its group's name (group 0: of none
 * readable): else the index that filed it there is not its JSON's. */
static bool named_as_group(const struct sparse_index *x, uint32_t g, bool read, const char *name,
                           size_t namelen)
{
	const struct sgroup *gr = &x->groups[g];
	return read && (g ? namelen == gr->namelen && !memcmp(name, x->names + gr->nameoff, namelen)
	                  : !name || !namelen);
}

static void visit(struct walk *w, size_t fi, uint32_t g)
{
	struct sparse_index *x = w->s->files[fi]->sparse;
	if (x->visited[g])
		return;
	x->visited[g] = 1;
	if (w->n + 2 > w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->todo = menv_xrealloc(w->todo, w->cap * sizeof(*w->todo));
	}
	w->todo[w->n++] = (uint32_t)fi;
	w->todo[w->n++] = g;
}

static void reach(void *ud, const char *name)
{
	struct walk *w = ud;
	size_t len = strlen(name);
	for (size_t i = 0; len && i < w->s->nfiles; i++) {
		struct filerepo *f = w->s->files[i];
		uint32_t g = f->sparse ? lookup(f->sparse, name, len) : 0;
		if (g)
			visit(w, i, g);
	}
}

/* A requested name as written and lower-cased (libsolv lower-cases dependency names). */
static void reach_spec(struct walk *w, const char *name)
{
	if (!name || strpbrk(name, "*?[^")) {
		w->all = true;
		return;
	}
	reach(w, name);
	char *low = menv_xstrdup(name);
	for (char *p = low; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p + 'a' - 'A');
	reach(w, low);
	free(low);
}

/* The package names of a libsolv dependency (both sides of and/or/with/if). */
static void reach_dep(struct walk *w, Pool *pool, Id dep)
{
	while (ISRELDEP(dep)) {
		Reldep *rd = GETRELDEP(pool, dep);
		if (rd->flags == REL_AND || rd->flags == REL_OR || rd->flags == REL_WITH ||
		    rd->flags == REL_WITHOUT || rd->flags == REL_COND || rd->flags == REL_UNLESS ||
		    rd->flags == REL_ELSE)
			reach_dep(w, pool, rd->evr);
		dep = rd->name;
	}
	if (dep > 1)
		reach_spec(w, pool_id2str(pool, dep));
}

static void reach_specs(struct walk *w, struct menv_matchspec *const *specs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		reach_spec(w, specs[i]->name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A piece of f read ahead: one pread for a run of wanted records that lie together (a name's
 * records do), instead of one each. */
struct window {
	struct menv_buf b;
	uint64_t start;
};

/* The bytes of wanted record i of x, from `key": ` to the end of its value (NULL when they
 * cannot be read), through w. */
static const char *window_get(struct filerepo *f, const struct sparse_index *x, size_t i,
                              struct window *w)
{
	const struct srec *r = &x->recs[i];
	if (w->b.len && r->keyoff >= w->start && r->off + r->len <= w->start + w->b.len)
		return w->b.buf + (r->keyoff - w->start);
	size_t j = i;
	while (j + 1 < x->nrecs && x->state[j + 1] == 1) {
		const struct srec *a = &x->recs[j], *b = &x->recs[j + 1];
		if (b->keyoff < a->off + a->len || b->keyoff - (a->off + a->len) > 64 ||
		    b->off + b->len - r->keyoff > (1u << 20))
			break;
		j++;
	}
	w->b.len = 0;
	w->start = r->keyoff;
	if (!pread_add(f, r->keyoff, x->recs[j].off + x->recs[j].len - r->keyoff, &w->b))
		return NULL;
	return w->b.buf;
}

/* The records wanted (want[0..nw), indexes of x in file order) as one repodata document,
 * their .solv bytes appended to `out` (menv_solv_json_to_solv). */
static int build_subset(struct menv_solver *s, struct filerepo *f, const uint32_t *want, size_t nw,
                        struct menv_buf *out, struct menv_error *err)
{
	struct sparse_index *x = f->sparse;
	struct menv_buf doc = MENV_BUF_INIT;
	struct window w = {MENV_BUF_INIT, 0};
	char **sorted = menv_xcalloc(nw + 1, sizeof(*sorted));
	size_t n = 0, total = 64;
	int section = -1, rc = 0;
	bool ok = true;

	/* the document's size first: no copy as it grows */
	if (x->head.has_info)
		total += x->head.info_end - x->head.info_off;
	for (size_t k = 0; k < nw; k++)
		total += (size_t)(x->recs[want[k]].off - x->recs[want[k]].keyoff) +
		         x->recs[want[k]].len + 4;
	menv_buf_grow(&doc, total);
	menv_buf_add(&doc, "{", 1);
	if (x->head.has_info) {
		menv_buf_add(&doc, "\"info\":", 7);
		ok = pread_add(f, x->head.info_off, x->head.info_end - x->head.info_off, &doc);
		menv_buf_add(&doc, ",", 1);
	}
	for (size_t k = 0; k < nw && ok; k++) {
		const struct srec *r = &x->recs[want[k]];
		int sec = (r->keylen & CONDA_BIT) ? 1 : 0;
		size_t kl = r->keylen & ~CONDA_BIT;
		if (sec != section) {
			if (section >= 0)
				menv_buf_add(&doc, "},", 2);
			menv_buf_addf(&doc, "\"%s\":{", sec ? "packages.conda" : "packages");
			section = sec;
		} else {
			menv_buf_add(&doc, ",", 1);
		}
		/* `key": value` as the file has it, in one read */
		menv_buf_add(&doc, "\"", 1);
		size_t at = doc.len;
		const char *bytes = window_get(f, x, want[k], &w);
		ok = bytes != NULL;
		if (ok)
			menv_buf_add(&doc, bytes, (size_t)(r->off - r->keyoff) + r->len);
		sorted[n++] = menv_xasprintf("%.*s%c%llu:%llu", (int)kl, doc.buf + at, '\0',
		                             (unsigned long long)r->off,
		                             (unsigned long long)(at + (r->off - r->keyoff)));
	}
	if (section >= 0)
		menv_buf_add(&doc, "}", 1);
	menv_buf_add(&doc, "}", 1);
	if (!ok)
		rc = menv_error_sys(err, MENV_EIO, "cannot read '%s'", f->path);
	if (!rc) {
		qsort(sorted, n, sizeof(*sorted), cmp_str);
		rc = menv_solv_json_to_solv(s, f, doc.buf, doc.len, sorted, n, out, err);
	}
	for (size_t i = 0; i < n; i++)
		free(sorted[i]);
	free(sorted);
	menv_buf_release(&w.b);
	menv_buf_release(&doc);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The records a read took, kept as .solv bytes beside the .solv (<solv>.subN): keyed by the
 * JSON's key and exactly which records (a request's closure), so that the same request on
 * the same file reads them as a whole load reads its .solv, with no JSON parsed. Cold or warm,
 * the solve reads the same .solv bytes (as menv_solv_load_full's build does): its answer and
 * problem text never depend on the cache. Best effort: a file that cannot be written costs
 * only time. SUBSLOTS files at most per JSON (a request's slot is a hash of its records). */
struct subhead {
	char magic[16];
	char key[128];
	uint64_t nwant, solvlen;
};
#define SUBMAGIC "menv-subset-1"
#define SUBSLOTS 8u

static char *subset_path(const struct filerepo *f, const uint32_t *want, size_t nw)
{
	if (!f->solv_path)
		return NULL;
	uint32_t h = hash_bytes((const char *)want, nw * sizeof(*want));
	return menv_xasprintf("%s.sub%u", f->solv_path, h % SUBSLOTS);
}

/* The mapped cache at path when it holds exactly want[0..nw) of f's current JSON: *solv and
 * *len its .solv bytes, *map and *size what to unmap. */
static bool read_subset(const char *path, const struct filerepo *f, const uint32_t *want, size_t nw,
                        const char **solv, size_t *len, void **map, size_t *size)
{
	const char *m;
	size_t sz;
	if (!menv_solv_cache_map(path, &m, &sz))
		return false;
	const struct subhead *h = (const struct subhead *)m;
	bool ok = sz >= sizeof(*h) && !memcmp(h->magic, SUBMAGIC, sizeof(SUBMAGIC)) &&
	          h->key[sizeof(h->key) - 1] == '\0' && !strcmp(h->key, f->key) && h->nwant == nw &&
	          sz >= sizeof(*h) + nw * sizeof(*want) &&
	          h->solvlen == sz - sizeof(*h) - nw * sizeof(*want) &&
	          !memcmp(h + 1, want, nw * sizeof(*want)) &&
	          menv_solv_bytes_plausible((const char *)(h + 1) + nw * sizeof(*want),
	                                    (size_t)h->solvlen);
	if (!ok) {
		menv_solv_cache_unmap(m, sz);
		return false;
	}
	*solv = (const char *)(h + 1) + nw * sizeof(*want);
	*len = (size_t)h->solvlen;
	*map = (void *)m;
	*size = sz;
	return true;
}

/* Best effort, as the .solv: whole (a temporary file renamed) or not at all. */
static void write_subset(const char *path, const struct filerepo *f, const uint32_t *want,
                         size_t nw, const struct menv_buf *solv)
{
	struct subhead h = {.nwant = nw, .solvlen = solv->len};
	memcpy(h.magic, SUBMAGIC, sizeof(SUBMAGIC));
	snprintf(h.key, sizeof(h.key), "%s", f->key);
	struct menv_solv_part parts[] = {
	        {&h, sizeof(h)}, {want, nw * sizeof(*want)}, {solv->buf, solv->len}};
	menv_solv_cache_write(path, parts, 3, NULL);
}

/* Reads the wanted records of f (state 1) into its repo: from their cached .solv bytes when
 * current, else in one pass of libsolv's reader over them (then cached). */
static int read_wanted(struct menv_solver *s, struct filerepo *f, struct menv_error *err)
{
	struct sparse_index *x = f->sparse;
	uint32_t *want = NULL;
	size_t nw = 0, cap = 0;
	int rc = -1;

	for (size_t i = 0; i < x->nrecs; i++) {
		if (x->state[i] != 1)
			continue;
		if (nw == cap) {
			cap = cap ? cap * 2 : 256;
			want = menv_xrealloc(want, cap * sizeof(*want));
		}
		want[nw++] = (uint32_t)i;
	}
	if (!nw)
		return 0;
	char *path = subset_path(f, want, nw);
	const char *solv;
	size_t len, size;
	void *map;
	if (path && !s->cache_off && read_subset(path, f, want, nw, &solv, &len, &map, &size)) {
		bool empty = f->repo->nsolvables == 0;
		rc = menv_solv_add_solv(s, f, solv, len, err);
		menv_solv_cache_unmap(map, size);
		/* no more records than wanted (the build from the JSON may drop some, never
		 * add one); which ones is not checked: a lookup each costs what the load does */
		if (!rc && empty && (size_t)f->repo->nsolvables > nw)
			rc = MENV_EPARSE;
		if (rc && rc != MENV_EINTR && empty) {
			/* bytes libsolv refuses, or records that are not the ones wanted: read the
			 * JSON again (and cache it anew) */
			repo_empty(f->repo, 1);
			if (err)
				*err = (struct menv_error){0};
			rc = -1;
		}
	}
	if (rc < 0) {
		struct menv_buf bytes = MENV_BUF_INIT;
		rc = build_subset(s, f, want, nw, &bytes, err);
		if (rc && rc != MENV_EINTR && x->cmap)
			s->cache_suspect =
			        true; /* the cached index may have named the wrong bytes */
		if (!rc && path && !menv_solv_cancelled(s->cancel))
			write_subset(path, f, want, nw, &bytes);
		if (!rc)
			rc = menv_solv_add_solv(s, f, bytes.buf, bytes.len, err);
		menv_buf_release(&bytes);
	}
	for (size_t k = 0; k < nw; k++)
		x->state[want[k]] = rc ? 0 : 2; /* read, or not (nothing of them added) */
	free(path);
	free(want);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Queries (search, whoneeds, and the searches a solve's messages make) read the records of a
 * name or of every name through the index as a solve's closure does, and fall back the same
 * way: a cached index whose records are not of the names it files them under, or whose
 * offsets name bytes the JSON's reader refuses, counts as none. */

static void no_name(void *ud, const char *name)
{
	(void)ud;
	(void)name;
}

/* Whether each wanted record (state 1) of f's index is of the group that lists it, as its
 * JSON bytes say (the check load_closure makes on each record it reads). */
static bool wanted_named(struct filerepo *f)
{
	const struct sparse_index *x = f->sparse;
	struct menv_buf bytes = MENV_BUF_INIT;
	char buf[512];
	bool ok = true;
	for (size_t r = 0; ok && r < x->nrecs; r++) {
		if (x->state[r] != 1)
			continue;
		const char *name = NULL;
		size_t namelen = 0;
		bytes.len = 0;
		bool read = pread_add(f, x->recs[r].off, x->recs[r].len, &bytes);
		if (read)
			menv_jsonscan_dep_names(bytes.buf, bytes.len, buf, sizeof(buf), no_name,
			                        NULL, &name, &namelen);
		ok = named_as_group(x, x->recs[r].group, read, name, namelen);
	}
	menv_buf_release(&bytes);
	return ok;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* f's index scanned again from its JSON and cached anew (what a cold run reads), the cached
 * one having read back inconsistent: the records read through the old one (state 2, each
 * checked as its group's when read) stay read, found by their offsets; none is wanted. */
static int reopen_cold(struct menv_solver *s, struct filerepo *f, struct menv_error *err)
{
	struct sparse_index *old = f->sparse;
	uint64_t *offs = menv_xcalloc(old->nrecs + 1, sizeof(*offs));
	size_t n = 0;
	for (size_t r = 0; r < old->nrecs; r++)
		if (old->state[r] == 2)
			offs[n++] = old->recs[r].off;
	f->sparse = NULL;
	menv_solv_sparse_free(old);
	bool off = s->cache_off;
	s->cache_off = true;
	int rc = menv_solv_sparse_open(s, f, err);
	s->cache_off = off;
	struct sparse_index *x = f->sparse;
	if (!rc && x && n) {
		qsort(offs, n, sizeof(*offs), cmp_u64);
		for (size_t r = 0; r < x->nrecs; r++)
			if (bsearch(&x->recs[r].off, offs, n, sizeof(*offs), cmp_u64))
				x->state[r] = 2;
	}
	free(offs);
	return rc;
}

/* What a query wants of an index: the records of a name (as written and lower-cased) and
 * the records of no readable name, or (name NULL) every record. */
struct want {
	const char *name, *low;
};

/* Marks the records w wants that are not read yet (state 1): whether there are any. */
static bool mark(struct sparse_index *x, const struct want *w)
{
	bool any = false;
	if (!w->name) {
		for (size_t r = 0; r < x->nrecs; r++)
			if (!x->state[r]) {
				x->state[r] = 1;
				any = true;
			}
		return any;
	}
	uint32_t gs[3] = {0, lookup(x, w->name, strlen(w->name)),
	                  lookup(x, w->low, strlen(w->low))};
	for (int k = 0; k < 3; k++)
		for (uint32_t r = x->groups[gs[k]].first; (k == 0 || gs[k]) && r != END;
		     r = x->recs[r].next)
			if (!x->state[r]) {
				x->state[r] = 1;
				any = true;
			}
	return any;
}

/* Reads the records w wants of f (sparse), from a cached index only when it reads back
 * consistent (its records of the names it files them under, its offsets bytes the JSON's
 * reader takes); else from the index scanned again (reopen_cold): the cold answer. */
static int query_read(struct menv_solver *s, struct filerepo *f, const struct want *w,
                      struct menv_error *err)
{
	if (!mark(f->sparse, w))
		return 0;
	bool cached = f->sparse->cmap && !s->cache_off;
	size_t nwarn = s->warnings.n;
	bool named = !cached || !w->name || wanted_named(f);
	s->cache_suspect = false;
	int rc = named ? read_wanted(s, f, err) : 0;
	if (cached && (!named || (rc && s->cache_suspect)) && rc != MENV_EINTR &&
	    !menv_solv_cancelled(s->cancel)) {
		if (err)
			*err = (struct menv_error){0};
		while (s->warnings.n > nwarn)
			free(s->warnings.v[--s->warnings.n]);
		for (size_t r = 0; r < f->sparse->nrecs; r++)
			if (f->sparse->state[r] == 1)
				f->sparse->state[r] = 0;
		rc = reopen_cold(s, f, err);
		if (!rc && f->sparse && mark(f->sparse, w))
			rc = read_wanted(s, f, err);
	}
	s->cache_suspect = false;
	return rc;
}

int menv_solv_sparse_load_all(struct menv_solver *s, struct menv_error *err)
{
	const struct want all = {NULL, NULL};
	int rc = 0;
	for (size_t i = 0; i < s->nfiles && !rc; i++) {
		struct filerepo *f = s->files[i];
		struct sparse_index *x = f->sparse;
		if (!x)
			continue;
		bool some = false;
		for (size_t k = 0; k < x->nrecs && !some; k++)
			some = x->state[k] != 0;
		if (!some) {
			/* nothing read yet: the whole file, through its .solv */
			f->sparse = NULL;
			menv_solv_sparse_free(x);
			rc = menv_solv_load_full(s, f, err);
			continue;
		}
		rc = query_read(s, f, &all, err);
		x = f->sparse;
		f->sparse = NULL;
		menv_solv_sparse_free(x);
	}
	s->pip_added = false; /* python's records may be new */
	s->prepared = false;  /* and whatprovides stale */
	return rc;
}

int menv_solv_sparse_load_name(struct menv_solver *s, const char *name, struct menv_error *err)
{
	int rc = 0;
	if (!name || strpbrk(name, "*?[^") || !strcmp(name, ""))
		return menv_solv_sparse_load_all(s, err);
	char *low = menv_xstrdup(name);
	for (char *p = low; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p + 'a' - 'A');
	const struct want w = {name, low};
	for (size_t i = 0; i < s->nfiles && !rc; i++)
		if (s->files[i]->sparse)
			rc = query_read(s, s->files[i], &w, err);
	free(low);
	s->pip_added = false;
	s->prepared = false;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The closure of a first load, cached (<first sparse file's solv>.walkN): which groups it
 * visited and which records it wants in every sparse file, keyed by every file's key and the
 * groups the walk starts from (the closure follows from those alone), so that the same request
 * again reads no record to find its names. Only for a solver that has read nothing sparsely
 * yet (an earlier walk's groups would change where this one stops). Best effort, as the .solv. */
#define WALKMAGIC "menv-walk-1\n"

static bool walk_fresh(const struct menv_solver *s)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct sparse_index *x = s->files[i]->sparse;
		if (x &&
		    ((x->nrecs && (x->state[0] || memcmp(x->state, x->state + 1, x->nrecs - 1))) ||
		     (x->ngroups &&
		      (x->visited[0] || memcmp(x->visited, x->visited + 1, x->ngroups - 1)))))
			return false;
	}
	return true;
}

/* The key of a walk from w's groups (w->todo) into key; its file's path, or NULL. */
static char *walk_key(const struct walk *w, struct menv_buf *key)
{
	const char *solv = NULL;
	menv_buf_add(key, WALKMAGIC, strlen(WALKMAGIC));
	for (size_t i = 0; i < w->s->nfiles; i++) {
		const struct filerepo *f = w->s->files[i];
		menv_buf_addf(key, "%zu %d %s\n", i, f->sparse ? 1 : 0, f->key ? f->key : "");
		if (f->sparse && !solv)
			solv = f->solv_path;
	}
	menv_buf_add(key, w->todo, w->n * sizeof(*w->todo));
	if (!solv)
		return NULL;
	return menv_xasprintf("%s.walk%u", solv, hash_bytes(key->buf, key->len) % SUBSLOTS);
}

/* Takes u32 values from m[*at..size): false when they are not there. */
static bool take_u32s(const char *m, size_t size, size_t *at, uint32_t *out, size_t n)
{
	if (n > (size - *at) / sizeof(*out))
		return false;
	memcpy(out, m + *at, n * sizeof(*out));
	*at += n * sizeof(*out);
	return true;
}

/* Sets the visited groups and wanted records the walk cached at path under key when they are
 * what a walk from w's groups (already visited) leaves: those groups among the visited, each
 * group and record listed once, the records wanted exactly those of the visited groups.
 * False (and nothing set but w's groups) otherwise. */
static bool read_walk(const struct walk *w, const char *path, const struct menv_buf *key)
{
	struct menv_solver *s = w->s;
	const char *m;
	size_t size;
	if (!menv_solv_cache_map(path, &m, &size))
		return false;
	if (size <= key->len) {
		menv_solv_cache_unmap(m, size);
		return false;
	}
	size_t at = key->len;
	bool ok = !memcmp(m, key->buf, key->len);
	/* checked whole first: each file's groups then records, a count before each list; the
	 * second pass marks the groups listed 2 (the third sets them back to 1) */
	for (int pass = 0; pass < 3 && ok; pass++) {
		at = key->len;
		for (size_t i = 0; i < s->nfiles && ok; i++) {
			struct sparse_index *x = s->files[i]->sparse;
			size_t nchained = 0, nwant = 0;
			for (int k = 0; x && k < 2 && ok; k++) {
				uint32_t n = 0, v;
				ok = take_u32s(m, size, &at, &n, 1);
				for (uint32_t j = 0; ok && j < n; j++) {
					ok = take_u32s(m, size, &at, &v, 1) &&
					     v < (k ? x->nrecs : x->ngroups);
					if (!ok || !pass)
						continue;
					if (pass == 2) {
						if (!k)
							x->visited[v] = 1;
					} else if (!k) {
						ok = x->visited[v] != 2;
						x->visited[v] = 2;
						for (uint32_t r = x->groups[v].first; r != END;
						     r = x->recs[r].next)
							nchained++;
					} else {
						ok = !x->state[v] &&
						     x->visited[x->recs[v].group] == 2;
						x->state[v] = 1;
						nwant++;
					}
				}
			}
			ok = ok && (pass != 1 || nwant == nchained);
		}
		ok = ok && at == size;
		for (size_t k = 0; ok && pass == 1 && k < w->n; k += 2)
			ok = s->files[w->todo[k]]->sparse->visited[w->todo[k + 1]] == 2;
	}
	menv_solv_cache_unmap(m, size);
	if (!ok) {
		/* as before: nothing wanted, w's groups visited */
		for (size_t i = 0; i < s->nfiles; i++) {
			struct sparse_index *x = s->files[i]->sparse;
			if (x) {
				memset(x->state, 0, x->nrecs);
				memset(x->visited, 0, x->ngroups);
			}
		}
		for (size_t k = 0; k < w->n; k += 2)
			s->files[w->todo[k]]->sparse->visited[w->todo[k + 1]] = 1;
	}
	return ok;
}

/* Best effort: the visited groups and wanted records of every sparse file after a walk. */
static void write_walk(const struct menv_solver *s, const char *path, const struct menv_buf *key)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_add(&b, key->buf, key->len);
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct sparse_index *x = s->files[i]->sparse;
		for (int k = 0; x && k < 2; k++) {
			const uint8_t *on = k ? x->state : x->visited;
			size_t n = k ? x->nrecs : x->ngroups, at = b.len;
			uint32_t cnt = 0;
			menv_buf_add(&b, &cnt, sizeof(cnt));
			for (uint32_t j = 0; j < n; j++)
				if (on[j] == 1) {
					menv_buf_add(&b, &j, sizeof(j));
					cnt++;
				}
			memcpy(b.buf + at, &cnt, sizeof(cnt));
		}
	}
	struct menv_solv_part part = {b.buf, b.len};
	menv_solv_cache_write(path, &part, 1, NULL);
	menv_buf_release(&b);
}

/* menv_solv_sparse_load's closure and read; start_fresh: nothing was read sparsely before
 * (an inconsistent cache then stops it early: MENV_EPARSE with s->cache_suspect). */
static int load_closure(struct menv_solver *s, const struct menv_solve_request *req,
                        bool start_fresh, struct menv_error *err)
{
	Pool *pool = s->pool;
	struct walk w = {.s = s};
	struct menv_buf bytes = MENV_BUF_INIT;
	char buf[512];
	bool any = false;
	int rc = 0;

	for (size_t i = 0; i < s->nfiles; i++)
		any = any || s->files[i]->sparse;
	if (!any)
		return 0;
	bool fresh = start_fresh;
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i]->sparse && s->files[i]->sparse->groups[0].first != END)
			visit(&w, i, 0);
	reach_specs(&w, req->install, req->ninstall);
	reach_specs(&w, req->update, req->nupdate);
	reach_specs(&w, req->remove, req->nremove);
	reach_specs(&w, req->history, req->nhistory);
	for (size_t i = 0; req->aggressive && i < req->aggressive->n; i++)
		reach_spec(&w, req->aggressive->v[i]);
	if (s->add_pip)
		reach_spec(&w, "pip");
	/* installed, virtual and pinned packages: their names, depends and constrains */
	Queue q;
	queue_init(&q);
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo != s->virt)
			continue;
		reach_dep(&w, pool, sv->name);
		for (Id *dp = sv->requires ? sv->repo->idarraydata + sv->requires : NULL; dp && *dp;
		     dp++)
			reach_dep(&w, pool, *dp);
		solvable_lookup_idarray(sv, SOLVABLE_CONSTRAINS, &q);
		for (int k = 0; k < q.count; k++)
			reach_dep(&w, pool, q.elements[k]);
	}
	queue_free(&q);
	struct menv_buf key = MENV_BUF_INIT;
	char *wpath = fresh && !w.all ? walk_key(&w, &key) : NULL;
	fresh = wpath != NULL;
	if (fresh && !s->cache_off && read_walk(&w, wpath, &key)) {
		w.n = 0; /* the cached closure: its groups visited, its records wanted */
		fresh = false;
	}
	while (w.n && !w.all) {
		uint32_t g = w.todo[--w.n];
		struct filerepo *f = s->files[w.todo[--w.n]];
		struct sparse_index *x = f->sparse;
		for (uint32_t r = x->groups[g].first; r != END && !w.all; r = x->recs[r].next) {
			/* a record a search read (2) is read, but its names are not reached yet
			 * (the group is visited once per solver) */
			if (x->state[r] == 1)
				continue;
			if (!x->state[r])
				x->state[r] = 1;
			bytes.len = 0;
			const char *name = NULL;
			size_t namelen = 0;
			bool read = pread_add(f, x->recs[r].off, x->recs[r].len, &bytes);
			if (!read ||
			    !menv_jsonscan_dep_names(bytes.buf, bytes.len, buf, sizeof(buf), reach,
			                             &w, &name, &namelen))
				w.all = true; /* read everything: the whole load says what is wrong */
			/* else the index, cached, is not the JSON's */
			if (x->cmap && !named_as_group(x, g, read, name, namelen)) {
				s->cache_suspect = true;
				w.all = true;
			}
		}
	}
	if (fresh && !w.all && !menv_solv_cancelled(s->cancel))
		write_walk(s, wpath, &key);
	free(wpath);
	menv_buf_release(&key);
	free(w.todo);
	menv_buf_release(&bytes);
	if (s->cache_suspect && start_fresh)
		return MENV_EPARSE; /* menv_solv_sparse_load reads it all again from the JSON */
	if (w.all)
		return menv_solv_sparse_load_all(s, err);
	for (size_t i = 0; i < s->nfiles && !rc; i++)
		if (s->files[i]->sparse)
			rc = read_wanted(s, s->files[i], err);
	s->pip_added = false; /* python's records may be new */
	s->prepared = false;  /* and whatprovides stale */
	return rc;
}

int menv_solv_sparse_load(struct menv_solver *s, const struct menv_solve_request *req,
                          struct menv_error *err)
{
	bool any = false;
	for (size_t i = 0; i < s->nfiles; i++)
		any = any || s->files[i]->sparse;
	bool fresh = any && walk_fresh(s);
	size_t nwarn = s->warnings.n;
	bool *was = menv_xcalloc(s->nfiles + 1, sizeof(*was));
	for (size_t i = 0; i < s->nfiles; i++)
		was[i] = s->files[i]->sparse != NULL;
	s->cache_suspect = false;
	int rc = load_closure(s, req, fresh, err);
	if (fresh && s->cache_suspect && rc != MENV_EINTR && !menv_solv_cancelled(s->cancel)) {
		/* a cache read back inconsistent with the JSON counts as none: what a cold run
		 * does, from the JSON of every file this load read sparsely (caches written anew) */
		if (err)
			*err = (struct menv_error){0};
		while (s->warnings.n > nwarn)
			free(s->warnings.v[--s->warnings.n]);
		s->cache_off = true;
		s->cache_suspect = false;
		rc = 0;
		/* last first: each repo's records were added after the one's before, at the
		 * pool's end, which then shrinks back to where it was */
		for (size_t i = s->nfiles; i-- > 0;)
			if (was[i])
				repo_empty(s->files[i]->repo, 1);
		for (size_t i = 0; i < s->nfiles && !rc; i++) {
			struct filerepo *f = s->files[i];
			if (!was[i])
				continue;
			menv_solv_sparse_free(f->sparse);
			f->sparse = NULL;
			rc = menv_solv_sparse_open(s, f, err);
		}
		if (!rc)
			rc = load_closure(s, req, true, err);
		s->cache_off = false;
	}
	s->cache_suspect = false;
	free(was);
	return rc;
}
