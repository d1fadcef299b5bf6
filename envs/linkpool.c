/*
 * linkpool.c - the packages of a create linked on a few threads at once (menv_link_parallel),
 * when no two of them write the same path (menv_link_disjoint): the prefix is then the one
 * the serial link in conda's order makes, file for file. The PrefixRecords, the .pyc and any
 * post-link script follow in conda's link order, as before (prefix.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "link.h"

int menv_link_threads(void)
{
	const char *v = getenv("MENV_LINK_THREADS");
	long n;

	if (v && *v) {
		n = strtol(v, NULL, 10);
		return n < 1 ? 1 : n > 64 ? 64 : (int)n;
	}
	/* a test's crash-point sweep (MENV_TEST_CRASH_AFTER=N for N = 1, 2, ...) needs the points
	 * in one order on every run; install.link_threads sweeps the threaded link by setting
	 * MENV_LINK_THREADS itself */
	if (getenv("MENV_TEST_CRASH_AFTER"))
		return 1;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* Records `rel` for package `who` (1-based) in `seen`: false when another package has it and
 * either of them is not a directory there. A directory's value has bit 0 set. */
static bool claim(struct menv_strmap *seen, const char *rel, size_t who, bool dir)
{
	size_t *v = menv_strmap_get(seen, rel);
	size_t mine = who << 1 | (dir ? 1 : 0);

	if (!v) {
		menv_strmap_put(seen, rel, mine);
		return true;
	}
	if ((*v >> 1) == who) {
		*v |= dir ? 1 : 0;
		return true;
	}
	return dir && (*v & 1);
}

/* `rel` and each directory above it, for package `who`. */
static bool claim_path(struct menv_strmap *seen, char *rel, size_t who, bool dir)
{
	if (!claim(seen, rel, who, dir))
		return false;
	for (char *s = strrchr(rel, '/'); s; s = strrchr(rel, '/')) {
		*s = '\0';
		size_t *v = menv_strmap_get(seen, rel);
		if (v && (*v >> 1) == who && (*v & 1))
			return true; /* this package claimed it and its parents already */
		if (!claim(seen, rel, who, true))
			return false;
	}
	return true;
}

bool menv_link_disjoint(struct menv_link_list *const *lists, const bool *noarch_python,
                        const char *site_packages, size_t n)
{
	struct menv_strmap seen = MENV_STRMAP_INIT;
	bool ok = true;

	for (size_t i = 0; ok && i < n; i++) {
		size_t m = menv_link_list_size(lists[i]);
		for (size_t k = 0; ok && k < m; k++) {
			bool dir;
			char *rel = menv_link_list_target(lists[i], k, noarch_python[i],
			                                  site_packages, &dir);
			ok = claim_path(&seen, rel, i + 1, dir);
			free(rel);
		}
		for (const char *const *ep = menv_link_list_entry_points(lists[i]); ok && *ep;
		     ep++) {
			char *rel = menv_xstrdup(*ep);
			ok = claim_path(&seen, rel, i + 1, false);
			free(rel);
		}
	}
	menv_strmap_clear(&seen);
	return ok;
}

struct pool {
	struct menv_link_ctx *ctx;
	json_t *const *files, *const *paths;
	size_t n;
	size_t next; /* the next package to take (atomic) */
	int stop;    /* a package failed: take no more (atomic) */
	int *rcs;    /* per package */
	struct menv_error *errs;
	struct menv_link_stats *st; /* the caller's, summed into under `mu` */
	struct menv_link_caps *caps;
	size_t *order; /* the packages by their number of files, most first */
	pthread_mutex_t mu;
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct menv_link_stats st = {0};
	struct menv_link_caps caps;
	struct menv_link_dirs *dirs = NULL;

	pthread_mutex_lock(&p->mu);
	caps = *p->caps;
	pthread_mutex_unlock(&p->mu);
	for (;;) {
		if (__atomic_load_n(&p->stop, __ATOMIC_SEQ_CST))
			break;
		size_t k = __atomic_fetch_add(&p->next, 1, __ATOMIC_SEQ_CST);
		if (k >= p->n)
			break;
		size_t i = p->order[k];
		struct menv_link_ctx *c = &p->ctx[i];
		if (!dirs)
			dirs = menv_link_dirs_new(c->txn);
		c->st = &st;
		c->caps = &caps;
		c->dirs = dirs;
		p->rcs[i] = menv_link_package(c, p->files[i], p->paths[i], &p->errs[i]);
		c->dirs = NULL;
		if (p->rcs[i])
			__atomic_store_n(&p->stop, 1, __ATOMIC_SEQ_CST);
	}
	menv_link_dirs_free(dirs);
	pthread_mutex_lock(&p->mu);
	p->st->files += st.files;
	p->st->reflinks += st.reflinks;
	p->st->hardlinks += st.hardlinks;
	p->st->softlinks += st.softlinks;
	p->st->copies += st.copies;
	p->st->replaced += st.replaced;
	p->st->clobbered += st.clobbered;
	p->caps->no_reflink |= caps.no_reflink;
	p->caps->no_hardlink |= caps.no_hardlink;
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int most_files_first(const void *a, const void *b, void *arg)
{
	const struct menv_link_ctx *ctx = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	size_t nx = ctx[x].list ? menv_link_list_size(ctx[x].list) : 0;
	size_t ny = ctx[y].list ? menv_link_list_size(ctx[y].list) : 0;
	return nx != ny ? (nx < ny ? 1 : -1) : (x > y) - (x < y);
}

int menv_link_parallel(struct menv_link_ctx *ctx, json_t *const *files, json_t *const *paths,
                       size_t n, int threads, struct menv_link_stats *st,
                       struct menv_link_caps *caps, size_t *failed, struct menv_error *err)
{
	struct pool p = {
	        .ctx = ctx, .files = files, .paths = paths, .n = n, .st = st, .caps = caps};
	pthread_t *tids;
	int started = 0, rc = 0;

	*failed = n;
	if (!n)
		return 0;
	if (threads < 1)
		threads = 1;
	if ((size_t)threads > n)
		threads = (int)n;
	/* the largest packages taken first: in link order a large one taken last (the lock's
	 * order puts pytorch's 14k files near the end) leaves the other threads idle while one
	 * links it. The prefix is the same in any order (disjoint paths). */
	p.order = menv_xcalloc(n, sizeof(*p.order));
	for (size_t i = 0; i < n; i++)
		p.order[i] = i;
	qsort_r(p.order, n, sizeof(*p.order), most_files_first, ctx);
	p.rcs = menv_xcalloc(n, sizeof(*p.rcs));
	p.errs = menv_xcalloc(n, sizeof(*p.errs));
	tids = menv_xcalloc((size_t)threads, sizeof(*tids));
	pthread_mutex_init(&p.mu, NULL);
	/* this thread is one of them: the others are extra */
	for (; started < threads - 1; started++)
		if (pthread_create(&tids[started], NULL, worker, &p) != 0)
			break;
	worker(&p);
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	/* test hook: the file MENV_TEST_LINK_THREADS_LOG gets "<threads>\n" of each parallel
	 * link (a serial link writes nothing) */
	const char *log = getenv("MENV_TEST_LINK_THREADS_LOG");
	FILE *f = log && *log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "%d\n", started + 1);
		fclose(f);
	}
	pthread_mutex_destroy(&p.mu);
	/* the first package (in link order) that failed speaks for the transaction */
	for (size_t i = 0; i < n; i++)
		if (p.rcs[i]) {
			rc = p.rcs[i];
			*failed = i;
			if (err)
				*err = p.errs[i];
			break;
		}
	free(tids);
	free(p.order);
	free(p.rcs);
	free(p.errs);
	return rc;
}
