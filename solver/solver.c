/*
 * solver.c - conda solving on libsolv (DISTTYPE_CONDA). Records become solvables with conda's
 * attributes (build string as flavor, build number, track_features, constrains, timestamp);
 * their depends are parsed by libsolv's conda MatchSpec reader. Top-level specs with keys
 * libsolv's reader does not know (channel, subdir, md5, ...) become explicit candidate sets.
 * libsolv's types stay inside this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <solv/conda.h>
#include <solv/evr.h>
#include <solv/pool.h>
#include <solv/bitmap.h>
#include <solv/poolarch.h>
#include <solv/problems.h>
#include <solv/repo.h>
#include <solv/repo_conda.h>
#include <solv/repo_solv.h>
#include <solv/repo_write.h>
#include <solv/repodata.h>
#include <solv/selection.h>
#include <solv/solver.h>
#include <solv/transaction.h>

#include "jsonscan.h"
#include "solver.h"

struct menv_solver {
	Pool *pool;
	char *subdir;
	enum menv_channel_priority prio;
	Repo *virt;
	const struct menv_record **by_id; /* solvable Id -> record (NULL for virtual ones) */
	char *problems;                   /* the last failed solve's problem tree, or NULL */
	json_t *problems_json;            /* the same as JSON, or NULL */
	bool has_cuda;                    /* a __cuda virtual package was added */
	bool add_pip;                     /* conda's add_pip_as_python_dependency */
	bool *noarch_repo;                /* repo Id -> a noarch subdir (order_repos) */
	bool pip_added;                   /* python's pip dependency was added */
	int npins;
	bool ranked;         /* rank_variants ran for every name */
	Map *ranked_names;   /* names (string Ids) whose variants are ranked */
	bool prepared;       /* whatprovides made for queries */
	Map *considered;     /* strict priority: the installable solvables */
	json_t **inst_by_id; /* solvable Id -> installed PrefixRecord (borrowed) */
	size_t inst_alloc;
	size_t by_id_alloc;
	int nrepos;
	struct filerepo **files; /* repos read from repodata.json files */
	size_t nfiles;
	Id offkey;            /* "menv:offset": a record's byte offset in its JSON */
	Id cachekey;          /* "menv:cachekey" on SOLVID_META of a .solv */
	Id baseurlkey;        /* "menv:base_url" on SOLVID_META */
	Id warnkey;           /* "menv:warnings" on SOLVID_META: the load's warnings, one a line */
	volatile int *cancel; /* non-zero stops a load: MENV_EINTR; or NULL */
	struct menv_strvec warnings;  /* what the loads skipped, one line each */
	struct menv_error unreadable; /* why the last record that could not be read was not */
	/* requested specs whose name the channels have but no package of which matches
	 * (`pytorch>=2.0` where there is pytorch 1.13.1): each becomes a job libsolv cannot
	 * satisfy, so the solve fails with a problem explaining it (mamba's "nothing provides
	 * requested"); unmatched_ok: add_spec_job may do so (the request's install specs) */
	const struct menv_matchspec **unmatched;
	size_t nunmatched;
	bool unmatched_ok;
};

/* A channel subdir whose solvables came from libsolv's conda reader (or its .solv cache);
 * its records are parsed from the mapped JSON only when a solve needs them. */
struct filerepo {
	const struct menv_channel *ch;
	char *subdir;
	char *base;      /* URL the package files live under */
	const char *map; /* the repodata.json, mapped read-only */
	size_t size;
	Repo *repo;
	struct menv_record **recs; /* lazily made, indexed by p - repo->start */
};

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

/* ---------------------------------------------------------------------------------------- */
/* repodata.json files through libsolv's conda reader, cached as .solv                      */

struct scan_ctx {
	struct menv_solver *s;
	const char *map;
	size_t size;
	size_t info_off;
	bool has_info;
	/* file name -> offset, for the records libsolv kept */
	char **fns;
	size_t *offs;
	size_t n, alloc;
};

static void on_scan(void *ud, enum menv_jsonscan_kind kind, const char *key, size_t keylen,
                    size_t off)
{
	struct scan_ctx *c = ud;
	if (kind == MENV_JSONSCAN_INFO) {
		c->info_off = off;
		c->has_info = true;
		return;
	}
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 1024;
		c->fns = menv_xrealloc(c->fns, c->alloc * sizeof(*c->fns));
		c->offs = menv_xrealloc(c->offs, c->alloc * sizeof(*c->offs));
	}
	c->fns[c->n] = menv_xstrndup(key, keylen);
	c->offs[c->n] = off;
	c->n++;
}

static int cmp_fn(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The base URL of a repodata file: CEP-15 info.base_url, or <channel>/<subdir>. */
static char *base_url_of(const struct menv_channel *ch, const char *subdir, const char *info,
                         size_t len)
{
	json_t *j = NULL;
	if (info)
		menv_json_parse(info, len, JSON_DISABLE_EOF_CHECK, "info", &j, NULL);
	const char *bu = json_string_value(json_object_get(j, "base_url"));
	char *base;
	if (bu && *bu) {
		base = strstr(bu, "://") || bu[0] == '/'
		               ? menv_xstrdup(bu)
		               : menv_xasprintf("%s/%s/%s", ch ? ch->base_url : "", subdir, bu);
		size_t n = strlen(base);
		while (n > 0 && base[n - 1] == '/')
			base[--n] = '\0';
	} else {
		base = menv_xasprintf("%s/%s", ch ? ch->base_url : "", subdir);
	}
	json_decref(j);
	return base;
}

/* stdio streams for libsolv that give up (EINTR) once *cancel is set: libsolv's reader and
 * writer have no cancel of their own, and a 200 MB repodata keeps them busy for seconds. They
 * look at the flag every 64 KiB. */
struct cstream {
	const char *map; /* reading from memory, or NULL */
	size_t size, pos;
	int fd; /* else reading or writing this descriptor */
	volatile int *cancel;
};

static bool cancelled(volatile int *cancel)
{
	return cancel && *cancel;
}

static ssize_t cs_read(void *ud, char *buf, size_t n)
{
	struct cstream *c = ud;
	if (cancelled(c->cancel)) {
		errno = EINTR;
		return -1;
	}
	if (!c->map)
		return read(c->fd, buf, n);
	if (n > c->size - c->pos)
		n = c->size - c->pos;
	memcpy(buf, c->map + c->pos, n);
	c->pos += n;
	return (ssize_t)n;
}

static ssize_t cs_write(void *ud, const char *buf, size_t n)
{
	struct cstream *c = ud;
	size_t done = 0;
	if (cancelled(c->cancel)) {
		errno = EINTR;
		return -1;
	}
	while (done < n) {
		ssize_t w = write(c->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)w;
	}
	return (ssize_t)n;
}

static FILE *cs_open(struct cstream *c, const char *mode)
{
	cookie_io_functions_t io = {.read = cs_read, .write = cs_write};
	FILE *fp = fopencookie(c, mode, io);
	if (fp) {
		setvbuf(fp, NULL, _IOFBF, 64 * 1024);
		/* one thread uses it: libsolv's getc() per byte then takes no lock */
		__fsetlocking(fp, FSETLOCKING_BYCALLER);
	}
	return fp;
}

static int interrupted(const char *path, struct menv_error *err)
{
	return menv_error_set(err, MENV_EINTR, "interrupted while loading '%s'", path);
}

#define MAX_WARNINGS 20 /* per file; the rest are counted */

/* Drops the records conda cannot name (no name, version or build string: conda's
 * PackageRecord requires all three), each with a warning naming the file and its key (into
 * `all`, `*n` counting them). */
static void drop_unnamed(struct filerepo *f, const char *path, struct menv_buf *all, size_t *n)
{
	Id p;
	Solvable *sv;

	FOR_REPO_SOLVABLES(f->repo, p, sv)
	{
		const char *flavor = solvable_lookup_str(sv, SOLVABLE_BUILDFLAVOR);
		const char *what = sv->name <= ID_EMPTY  ? "name"
		                   : sv->evr <= ID_EMPTY ? "version"
		                   : !flavor || !*flavor ? "build"
		                                         : NULL;
		if (!what)
			continue;
		const char *loc = solvable_lookup_str(sv, SOLVABLE_MEDIAFILE);
		if ((*n)++ < MAX_WARNINGS)
			menv_buf_addf(all,
			              "%s'%s': skipped the record '%s': it has no '%s' (conda "
			              "requires name, version and build)",
			              all->len ? "\n" : "", path, loc ? loc : "?", what);
		repo_free_solvable(f->repo, p, 1);
	}
}

/* Whether a record's "depends" is one conda reads: absent, null, or a list of strings. */
static bool depends_ok(json_t *rec)
{
	json_t *d = json_object_get(rec, "depends"), *e;
	size_t i;

	if (!d || json_is_null(d))
		return true;
	if (!json_is_array(d))
		return false;
	json_array_foreach(d, i, e)
	{
		if (!json_is_string(e))
			return false;
	}
	return true;
}

/* libsolv's reader passes over a "depends" that is not a list of strings, so the record
 * would look like one without dependencies: each record without any (they are few, and this
 * runs only when the JSON is new, not on a .solv load) is read at `off`, and one whose
 * "depends" is something else, or that cannot be read (nested too deep), is dropped with a
 * warning, as a record without a version is. True when it was dropped. */
static bool drop_bad_depends(struct filerepo *f, Id p, size_t off, const char *path,
                             struct menv_buf *all, size_t *n)
{
	struct menv_error e = {0};
	json_t *rec = NULL;
	const char *why = NULL;
	Solvable *sv = pool_id2solvable(f->repo->pool, p);
	const char *loc = solvable_lookup_str(sv, SOLVABLE_MEDIAFILE);

	if (sv->requires || off >= f->size)
		return false;
	if (menv_json_parse(f->map + off, f->size - off, JSON_DISABLE_EOF_CHECK, loc ? loc : "?",
	                    &rec, &e))
		why = e.code == MENV_EINTR ? NULL : "it cannot be read";
	else if (!depends_ok(rec))
		why = "its 'depends' is not a list of strings";
	json_decref(rec);
	if (!why)
		return false;
	if ((*n)++ < MAX_WARNINGS)
		menv_buf_addf(all, "%s'%s': skipped the record '%s': %s%s%s", all->len ? "\n" : "",
		              path, loc ? loc : "?", why, e.code ? ": " : "", e.code ? e.msg : "");
	repo_free_solvable(f->repo, p, 1);
	return true;
}

/* Adds the warnings a repo's SOLVID_META holds (after a .solv load or a build). */
static void collect_warnings(struct menv_solver *s, Repo *repo)
{
	const char *w = repo_lookup_str(repo, SOLVID_META, s->warnkey);
	while (w && *w) {
		const char *e = strchr(w, '\n');
		size_t len = e ? (size_t)(e - w) : strlen(w);
		menv_strvec_push_owned(&s->warnings, menv_xstrndup(w, len));
		w += len + (e ? 1 : 0);
	}
}

static int build_from_json(struct menv_solver *s, struct filerepo *f, const char *path,
                           const char *key, struct menv_error *err)
{
	Pool *pool = s->pool;
	struct scan_ctx c = {.s = s, .map = f->map, .size = f->size};
	struct cstream cs = {.map = f->map, .size = f->size, .cancel = s->cancel};
	FILE *fp = cs_open(&cs, "r");
	int rc = 0;

	if (!fp)
		return menv_error_sys(err, MENV_EIO, "cannot read '%s'", path);
	if (repo_add_conda(f->repo, fp, 0)) {
		rc = cancelled(s->cancel)
		             ? interrupted(path, err)
		             : menv_error_set(err, MENV_EPARSE, "%s: %s", path, pool_errstr(pool));
		fclose(fp);
		return rc;
	}
	fclose(fp);
	if (cancelled(s->cancel))
		return interrupted(path, err);
	if (menv_jsonscan_repodata(f->map, f->size, on_scan, &c) < 0) {
		rc = menv_error_set(err, MENV_EPARSE, "%s: not a repodata object", path);
		goto out;
	}
	/* sort (fn, offset) pairs by name to look them up per solvable */
	size_t *idx = menv_xcalloc(c.n + 1, sizeof(*idx));
	char **sorted = menv_xcalloc(c.n + 1, sizeof(*sorted));
	for (size_t i = 0; i < c.n; i++) {
		char *k = menv_xasprintf("%s%c%zu", c.fns[i], '\0', c.offs[i]);
		sorted[i] = k; /* "fn\0offset": strcmp sees only fn */
		(void)idx;
	}
	qsort(sorted, c.n, sizeof(*sorted), cmp_fn);
	/* menv's attributes go into a second repodata: lookups prefer the newest one */
	Repodata *data = repo_add_repodata(f->repo, 0);
	repodata_extend_block(data, f->repo->start, f->repo->end - f->repo->start);
	struct menv_buf warn = MENV_BUF_INIT;
	size_t nwarn = 0;
	drop_unnamed(f, path, &warn, &nwarn);
	Id p;
	Solvable *sv;
	FOR_REPO_SOLVABLES(f->repo, p, sv)
	{
		if ((p & 4095) == 0 && cancelled(s->cancel))
			break;
		const char *loc = solvable_lookup_str(sv, SOLVABLE_MEDIAFILE);
		if (!loc)
			continue;
		/* conda names a record by its key in "packages"; libsolv's reader prefers the
		 * record's "fn" field, which a copied record may have left unchanged: the key made
		 * of name, version and build is looked for first (and becomes the file name) */
		size_t ll = strlen(loc);
		const char *ext = ll > 8 && !strcmp(loc + ll - 8, ".tar.bz2") ? ".tar.bz2"
		                  : ll > 6 && !strcmp(loc + ll - 6, ".conda") ? ".conda"
		                                                              : NULL;
		const char *flavor = solvable_lookup_str(sv, SOLVABLE_BUILDFLAVOR);
		char **hit = NULL;
		if (ext && flavor) {
			char *k = menv_xasprintf("%s-%s-%s%s", pool_id2str(pool, sv->name),
			                         pool_id2str(pool, sv->evr), flavor, ext);
			hit = bsearch(&k, sorted, c.n, sizeof(*sorted), cmp_fn);
			if (hit && strcmp(k, loc))
				repodata_set_str(data, p, SOLVABLE_MEDIAFILE, k);
			free(k);
		}
		char *want = (char *)loc;
		if (!hit)
			hit = bsearch(&want, sorted, c.n, sizeof(*sorted), cmp_fn);
		if (hit) {
			size_t off = strtoull(*hit + strlen(*hit) + 1, NULL, 10);
			if (drop_bad_depends(f, p, off, path, &warn, &nwarn))
				continue;
			repodata_set_num(data, p, s->offkey, off);
		}
		/* the build-version key ("build_number.rank.timestamp", conda's order after the
		 * version) is written by rank_variants for the names a solve reaches */
	}
	for (size_t i = 0; i < c.n; i++)
		free(sorted[i]);
	free(sorted);
	free(idx);
	/* the warnings stay in the repo's SOLVID_META for .solv loads */
	if (nwarn > MAX_WARNINGS)
		menv_buf_addf(&warn, "\n'%s': skipped %zu more records", path,
		              nwarn - MAX_WARNINGS);
	if (warn.len)
		repodata_set_str(data, SOLVID_META, s->warnkey, warn.buf);
	menv_buf_release(&warn);
	if (cancelled(s->cancel)) {
		rc = interrupted(path, err);
		goto out;
	}
	f->base = base_url_of(f->ch, f->subdir, c.has_info ? f->map + c.info_off : NULL,
	                      c.has_info ? f->size - c.info_off : 0);
	repodata_set_str(data, SOLVID_META, s->cachekey, key);
	repodata_set_str(data, SOLVID_META, s->baseurlkey, f->base);
	repodata_internalize(data);
out:
	for (size_t i = 0; i < c.n; i++)
		free(c.fns[i]);
	free(c.fns);
	free(c.offs);
	return rc;
}

int menv_solver_add_repodata_file(struct menv_solver *s, const struct menv_channel *ch,
                                  const char *subdir, const char *path, const char *solv_path,
                                  struct menv_error *err)
{
	Pool *pool = s->pool;
	struct filerepo *f = menv_xcalloc(1, sizeof(*f));
	struct stat st;
	char key[128];
	int fd, rc = 0;
	bool cached = false;

	f->ch = ch;
	f->subdir = menv_xstrdup(subdir);
	s->files = menv_xrealloc(s->files, (s->nfiles + 1) * sizeof(*s->files));
	s->files[s->nfiles++] = f;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot open '%s'", path);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return menv_error_sys(err, MENV_EIO, "cannot stat '%s'", path);
	}
	f->size = (size_t)st.st_size;
	if (f->size) {
		f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			close(fd);
			return menv_error_sys(err, MENV_EIO, "cannot map '%s'", path);
		}
	}
	close(fd);
	/* conda's and micromamba's key of a local file: size, mtime (ns) and inode */
	snprintf(key, sizeof(key), "menv-solv-2:%lld:%lld.%09ld:%llu", (long long)st.st_size,
	         (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);

	char *rname = menv_xasprintf("%s/%s", ch ? ch->name : "?", subdir);
	f->repo = repo_create(pool, rname);
	free(rname);
	f->repo->appdata = f;
	if (s->prio != MENV_PRIORITY_DISABLED)
		f->repo->priority = ch ? ch->priority : -s->nrepos;
	f->repo->subpriority = strcmp(subdir, "noarch") ? 1 : 0;
	s->nrepos++;

	if (solv_path) {
		struct cstream cs = {.fd = open(solv_path, O_RDONLY | O_CLOEXEC),
		                     .cancel = s->cancel};
		FILE *fp = cs.fd >= 0 ? cs_open(&cs, "r") : NULL;
		if (!fp && cs.fd >= 0)
			close(cs.fd);
		if (fp) {
			if (repo_add_solv(f->repo, fp, 0) == 0) {
				const char *k = repo_lookup_str(f->repo, SOLVID_META, s->cachekey);
				const char *b =
				        repo_lookup_str(f->repo, SOLVID_META, s->baseurlkey);
				cached = k && b && !strcmp(k, key);
				if (cached)
					f->base = menv_xstrdup(b);
			}
			fclose(fp);
			close(cs.fd);
			if (!cached)
				repo_empty(f->repo, 1);
			if (cancelled(s->cancel))
				return interrupted(solv_path, err);
		}
	}
	if (!cached) {
		if (!f->size)
			return menv_error_set(err, MENV_EPARSE, "%s: empty file", path);
		rc = build_from_json(s, f, path, key, err);
		if (rc)
			return rc;
		if (solv_path) {
			/* best effort: a cache we cannot write only costs time; it appears whole
			 * (a temporary file renamed) or not at all (an interrupted write is removed) */
			char *tmp = menv_xasprintf("%s.tmp-%d", solv_path, (int)getpid());
			struct cstream cs = {
			        .fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644),
			        .cancel = s->cancel};
			FILE *fp = cs.fd >= 0 ? cs_open(&cs, "w") : NULL;
			bool ok = fp && repo_write(f->repo, fp) == 0;
			ok = fp && fclose(fp) == 0 && ok;
			ok = cs.fd >= 0 && close(cs.fd) == 0 && ok && !cancelled(s->cancel);
			if (ok)
				rename(tmp, solv_path);
			unlink(tmp);
			free(tmp);
			if (cancelled(s->cancel))
				return interrupted(path, err);
		}
	}
	collect_warnings(s, f->repo);
	f->recs = menv_xcalloc((size_t)(f->repo->end - f->repo->start) + 1, sizeof(*f->recs));
	return 0;
}

/* The record of solvable p: a repodata record added with menv_solver_add_repodata, or the
 * JSON object at its offset in a mapped repodata file, parsed on first use. NULL for
 * installed and virtual solvables. */
static const struct menv_record *record_of(struct menv_solver *s, Id p)
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
	int rc = menv_json_parse(f->map + off, f->size - off, JSON_DISABLE_EOF_CHECK, src, &obj,
	                         &err);
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
static void add_pip_dependency(struct menv_solver *s)
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

void menv_solver_add_installed(struct menv_solver *s, json_t *const *recs, size_t n)
{
	Pool *pool = s->pool;
	Repodata *data = repo_last_repodata(s->virt);

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
	repodata_internalize(data);
}

/* Adds the features of a track_features string ("a,b" or "a b") to set (a JSON object). */
static void feature_set(const char *tf, json_t *set)
{
	for (const char *p = tf; *p;) {
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

/* conda's track_features match: the same set of features, whatever their order and
 * separators (`a,b` = `b a`); the record's value may be a string or a list. */
static bool same_features(const char *want, json_t *have)
{
	json_t *a = json_object(), *b = json_object(), *v;
	size_t i;
	feature_set(want, a);
	if (json_is_string(have))
		feature_set(json_string_value(have), b);
	else
		json_array_foreach(have, i, v) if (json_is_string(v))
		        feature_set(json_string_value(v), b);
	bool eq = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return eq;
}

/* Does record r satisfy the keys of ms that libsolv's conda reader does not evaluate? */
static bool extra_keys_match(const struct menv_matchspec *ms, const struct menv_record *r)
{
	if (!r)
		return false;
	if (ms->channel && (!r->channel || strcmp(ms->channel, r->channel->base_url)))
		return false;
	if (ms->subdir && (!r->subdir || strcmp(ms->subdir, r->subdir)))
		return false;
	if (ms->md5 && (!r->md5 || strcasecmp(ms->md5, r->md5)))
		return false;
	if (ms->sha256 && (!r->sha256 || strcasecmp(ms->sha256, r->sha256)))
		return false;
	if (ms->fn && strcmp(ms->fn, r->fn))
		return false;
	if (ms->build_number && strcmp(ms->build_number, "*") &&
	    !menv_matchspec_build_number_ok(ms->build_number, r->build_number))
		return false;
	if (ms->track_features &&
	    !same_features(ms->track_features, json_object_get(r->json, "track_features")))
		return false;
	return true;
}

/* Does solvable p match the version and build of ms when its name is taken as `name`? */
static bool provides_match(struct menv_solver *s, Id p, const struct menv_matchspec *ms,
                           const char *name)
{
	Pool *pool = s->pool;
	struct menv_matchspec m = *ms;
	Id dep, q, qq;
	char *str;

	m.name = (char *)name;
	str = menv_matchspec_str(&m);
	dep = pool_conda_matchspec(pool, str);
	free(str);
	if (!dep)
		return false;
	FOR_PROVIDES(q, qq, dep)
	{
		if (q == p)
			return true;
	}
	return false;
}

static bool needs_candidates(const struct menv_matchspec *ms)
{
	return ms->channel || ms->subdir || ms->md5 || ms->sha256 || ms->fn || ms->build_number ||
	       ms->track_features || (ms->name && strchr(ms->name, '*'));
}

/* The facts of one problem, from libsolv's rules: which package needs which dependency
 * (and whether nothing provides it), which packages conflict, which cannot be installed. */
struct facts {
	Queue req;      /* pairs: source, dep (requires whose providers cannot be installed) */
	Queue missing;  /* pairs: source, dep (nothing provides it) */
	Queue conflict; /* triples: source, target, dep (0 when none) */
	Queue notinst;  /* solvables that are not installable */
	Map involved;   /* every solvable a rule names */
};

static void facts_collect(Solver *solv, Id problem, struct facts *f, bool *needs_cuda)
{
	Pool *pool = solv->pool;
	Queue rules;

	queue_init(&f->req);
	queue_init(&f->missing);
	queue_init(&f->conflict);
	queue_init(&f->notinst);
	map_init(&f->involved, pool->nsolvables);
	queue_init(&rules);
	solver_findallproblemrules(solv, problem, &rules);
	for (int j = 0; j < rules.count; j++) {
		Id source, target, dep;
		Id type = solver_ruleinfo(solv, rules.elements[j], &source, &target, &dep);
		/* only package rules carry a dependency in `dep` (a job's is its selection) */
		bool pkg_dep = type == SOLVER_RULE_PKG_REQUIRES ||
		               type == SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP ||
		               type == SOLVER_RULE_PKG_CONSTRAINS ||
		               type == SOLVER_RULE_PKG_CONFLICTS;
		if (pkg_dep && dep && !strncmp(pool_dep2str(pool, dep), "__cuda", 6))
			*needs_cuda = true;
		/* a job rule's source and target are the job's index and flags, not solvables */
		bool job_rule = type >= SOLVER_RULE_JOB && type < SOLVER_RULE_DISTUPGRADE;
		if (!job_rule && source > 0 && source < pool->nsolvables)
			MAPSET(&f->involved, source);
		if (!job_rule && target > 0 && target < pool->nsolvables)
			MAPSET(&f->involved, target);
		switch (type) {
		case SOLVER_RULE_PKG_REQUIRES: queue_push2(&f->req, source, dep); break;
		case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
			queue_push2(&f->missing, source, dep);
			break;
		case SOLVER_RULE_PKG_CONFLICTS:
		case SOLVER_RULE_PKG_SAME_NAME:
		case SOLVER_RULE_PKG_CONSTRAINS:
			queue_push(&f->conflict, source);
			queue_push2(&f->conflict, target, dep);
			break;
		case SOLVER_RULE_PKG_NOT_INSTALLABLE: queue_push(&f->notinst, source); break;
		default: break;
		}
	}
	queue_free(&rules);
}

static void facts_free(struct facts *f)
{
	queue_free(&f->req);
	queue_free(&f->missing);
	queue_free(&f->conflict);
	queue_free(&f->notinst);
	map_free(&f->involved);
}

/* A dependency as the user wrote it: libsolv shows a `1.*` glob as `1.**`. */
static json_t *dep_json(Pool *pool, Id dep)
{
	char *d = menv_xstrdup(pool_dep2str(pool, dep)), *w = d;
	for (char *r = d; *r; r++)
		if (!(r[0] == '*' && r[1] == '*'))
			*w++ = *r;
	*w = '\0';
	json_t *j = json_string(d);
	free(d);
	return j;
}

/* One package of the tree: what it needs (recursively), what it conflicts with. */
static json_t *tree_node(Solver *solv, struct facts *f, Id p, Map *seen, int depth)
{
	Pool *pool = solv->pool;
	json_t *node = json_object();

	json_object_set_new(node, "package", json_string(pool_solvid2str(pool, p)));
	if (MAPTST(seen, p) || depth > 8) {
		json_object_set_new(node, "see_above", json_true());
		return node;
	}
	MAPSET(seen, p);
	json_t *needs = json_array();
	for (int i = 0; i < f->missing.count; i += 2)
		if (f->missing.elements[i] == p)
			json_array_append_new(needs,
			                      json_pack("{s:o,s:b}", "dep",
			                                dep_json(pool, f->missing.elements[i + 1]),
			                                "nothing_provides", 1));
	for (int i = 0; i < f->req.count; i += 2) {
		if (f->req.elements[i] != p)
			continue;
		Id dep = f->req.elements[i + 1], q, qq;
		json_t *cands = json_array();
		FOR_PROVIDES(q, qq, dep)
		{
			if (MAPTST(&f->involved, q) && json_array_size(cands) < 4)
				json_array_append_new(cands,
				                      tree_node(solv, f, q, seen, depth + 1));
		}
		json_array_append_new(needs, json_pack("{s:o,s:o}", "dep", dep_json(pool, dep),
		                                       "candidates", cands));
	}
	if (json_array_size(needs))
		json_object_set(node, "needs", needs);
	json_decref(needs);
	json_t *conf = json_array();
	for (int i = 0; i < f->conflict.count; i += 3) {
		Id a = f->conflict.elements[i], b = f->conflict.elements[i + 1];
		if (a != p && b != p)
			continue;
		Id other = a == p ? b : a;
		if (other > 0)
			json_array_append_new(conf, json_string(pool_solvid2str(pool, other)));
	}
	if (json_array_size(conf))
		json_object_set(node, "conflicts_with", conf);
	json_decref(conf);
	for (int i = 0; i < f->notinst.count; i++)
		if (f->notinst.elements[i] == p)
			json_object_set_new(node, "not_installable", json_true());
	return node;
}

static void tree_render(json_t *node, int depth, struct menv_buf *out)
{
	const char *pkg = json_string_value(json_object_get(node, "package"));
	json_t *needs = json_object_get(node, "needs"),
	       *conf = json_object_get(node, "conflicts_with");
	size_t i, k;
	json_t *n, *c;

	menv_buf_addf(out, "%*s%s%s%s%s\n", depth * 2, "", depth ? "└─ " : "", pkg,
	              json_is_true(json_object_get(node, "see_above")) ? " (see above)" : "",
	              json_is_true(json_object_get(node, "not_installable"))
	                      ? ", which cannot be installed (excluded by channel priority or "
	                        "its platform)"
	                      : "");
	json_array_foreach(conf, i, c) menv_buf_addf(out, "%*s   conflicts with %s\n", depth * 2,
	                                             "", json_string_value(c));
	json_array_foreach(needs, i, n)
	{
		const char *dep = json_string_value(json_object_get(n, "dep"));
		json_t *cands = json_object_get(n, "candidates");
		if (json_is_true(json_object_get(n, "nothing_provides"))) {
			menv_buf_addf(out, "%*s   needs %s, which nothing provides\n", depth * 2,
			              "", dep);
			continue;
		}
		menv_buf_addf(out, "%*s   needs %s%s\n", depth * 2, "", dep,
		              json_array_size(cands) ? ", but:" : ", which cannot be installed");
		json_array_foreach(cands, k, c) tree_render(c, depth + 2, out);
	}
}

/* Does some package of the channels match both `want` (a requested spec) and `dep` (a
 * dependency on the same name)? */
static bool requested_allows(struct menv_solver *s, const struct menv_matchspec *want,
                             const struct menv_matchspec *dep)
{
	Pool *pool = s->pool;
	Id nameid = pool_str2id(pool, want->name, 0), p, pp;
	if (!nameid)
		return false;
	FOR_PROVIDES(p, pp, nameid)
	{
		Solvable *sv = pool_id2solvable(pool, p);
		const struct menv_record *r;
		if (sv->name != nameid || !sv->repo || sv->repo == s->virt ||
		    !(r = record_of(s, p)))
			continue;
		if (menv_matchspec_match_json(want, r->json) &&
		    menv_matchspec_match_json(dep, r->json))
			return true;
	}
	return false;
}

/* The problem of a requested spec that no package matches although the channels have its
 * name (s->unmatched): one line naming the requested specs that rule out the packages there
 * are ("nothing provides requested pytorch>=2.0 for python 3.9* (the channels have pytorch
 * 1.13.1, which needs python >=3.11,<3.12.0a0)"), and a tree: the packages of that name
 * (the newest four) with each dependency that a requested spec excludes, under a header
 * that says no version of the name matches and lists the versions there are. */
static void unmatched_problem(struct menv_solver *s, const struct menv_solve_request *req,
                              const struct menv_matchspec *ms, int num, struct menv_buf *line,
                              struct menv_buf *tree, json_t *js)
{
	Pool *pool = s->pool;
	Id nameid = pool_str2id(pool, ms->name, 0), p, pp;
	Queue have;
	char *full = menv_matchspec_str_full(ms);
	struct menv_buf why = MENV_BUF_INIT, avail = MENV_BUF_INIT;
	struct menv_strvec against = MENV_STRVEC_INIT;
	json_t *nodes = json_array();

	queue_init(&have);
	FOR_PROVIDES(p, pp, nameid)
	{
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->name == nameid && sv->repo && sv->repo != s->virt && record_of(s, p))
			queue_push(&have, p);
	}
	/* newest first (insertion sort: a handful of packages) */
	for (int i = 1; i < have.count; i++)
		for (int k = i; k > 0; k--) {
			Solvable *a = pool_id2solvable(pool, have.elements[k - 1]),
			         *b = pool_id2solvable(pool, have.elements[k]);
			if (pool_evrcmp(pool, a->evr, b->evr, EVRCMP_COMPARE) >= 0)
				break;
			Id t = have.elements[k];
			have.elements[k] = have.elements[k - 1];
			have.elements[k - 1] = t;
		}
	/* conda's question first: the name exists, no version matches; then the versions there are
	 * (not libsolv's "package X does not exist", which reads as a missing name) */
	menv_buf_addf(tree, "problem %d: no version of %s matches %s; the channels have ", num,
	              ms->name, full);
	for (int i = 0, shown = 0; i < have.count; i++) {
		Solvable *sv = pool_id2solvable(pool, have.elements[i]);
		if (i && sv->evr == pool_id2solvable(pool, have.elements[i - 1])->evr)
			continue; /* one version once (several builds) */
		if (shown == 8) {
			menv_buf_adds(tree, ", ...");
			break;
		}
		menv_buf_addf(tree, "%s%s", shown++ ? ", " : "",
		              record_of(s, have.elements[i])->version);
	}
	menv_buf_addch(tree, '\n');
	menv_buf_addf(tree, "requested %s, which no package of the channels matches; they have:\n",
	              full);
	for (int i = 0; i < have.count && i < 4; i++) {
		const struct menv_record *r = record_of(s, have.elements[i]);
		json_t *deps = json_object_get(r->json, "depends"), *d;
		json_t *node =
		        json_pack("{s:s}", "package", pool_solvid2str(pool, have.elements[i]));
		json_t *excl = json_array();
		size_t k;
		bool said = false;
		menv_buf_addf(tree, "  └─ %s\n", pool_solvid2str(pool, have.elements[i]));
		json_array_foreach(deps, k, d)
		{
			struct menv_matchspec *dm = NULL;
			struct menv_error e = {0};
			if (!json_is_string(d) ||
			    menv_matchspec_parse(json_string_value(d), &dm, &e))
				continue;
			for (size_t j = 0; dm->name && j < req->ninstall; j++) {
				const struct menv_matchspec *w = req->install[j];
				if (w == ms || !w->name || strcmp(w->name, dm->name) ||
				    requested_allows(s, w, dm))
					continue;
				char *ws = menv_matchspec_str_full(w);
				menv_buf_addf(tree, "       needs %s, but %s is requested\n",
				              json_string_value(d), ws);
				json_array_append_new(excl, json_pack("{s:s,s:s}", "dep",
				                                      json_string_value(d),
				                                      "requested", ws));
				if (!said && why.len < 400)
					menv_buf_addf(&why, "%s%s %s, which needs %s",
					              why.len ? "; " : "", r->name, r->version,
					              json_string_value(d));
				said = true;
				bool dup = false;
				for (size_t a = 0; a < against.n; a++)
					dup = dup || !strcmp(against.v[a], ws);
				if (!dup)
					menv_strvec_push(&against, ws);
				free(ws);
			}
			menv_matchspec_free(dm);
		}
		if (!said && avail.len < 400)
			menv_buf_addf(&avail, "%s%s %s", avail.len ? ", " : "", r->name,
			              r->version);
		json_object_set_new(node, "excluded_by", excl);
		json_array_append_new(nodes, node);
	}
	menv_buf_addf(line, "%snothing provides requested %s", line->len ? "; " : "", full);
	for (size_t a = 0; a < against.n; a++)
		menv_buf_addf(line, "%s%s", a ? " and " : " for ", against.v[a]);
	if (why.len || avail.len)
		menv_buf_addf(line, " (the channels have %s%s%s)", why.len ? why.buf : "",
		              why.len && avail.len ? "; " : "", avail.len ? avail.buf : "");
	json_array_append_new(js, json_pack("{s:s,s:[{s:s,s:b,s:o}]}", "problem", line->buf, "tree",
	                                    "requested", full, "nothing_matches", 1, "available",
	                                    nodes));
	menv_strvec_clear(&against);
	menv_buf_release(&why);
	menv_buf_release(&avail);
	queue_free(&have);
	free(full);
}

/* One line per problem in `line` ("a; b"); a tree per problem (requested spec -> the
 * packages that could satisfy it -> what they need and conflict with) in `tree` and `js`. */
static void describe_problems(struct menv_solver *s, Solver *solv,
                              const struct menv_solve_request *req, struct menv_buf *line,
                              struct menv_buf *tree, json_t *js, bool *needs_cuda)
{
	Pool *pool = solv->pool;
	int np = solver_problem_count(solv);
	for (Id i = 1; i <= np; i++) {
		struct facts f;
		Map seen;
		/* pool_tmp strings: copy before the next libsolv call reuses the space */
		char *ps = menv_xstrdup(solver_problem2str(solv, i));
		const struct menv_matchspec *um = NULL;
		for (size_t k = 0; k < s->nunmatched && !um; k++) {
			char *full = menv_matchspec_str_full(s->unmatched[k]);
			/* libsolv's text for a job on a name nothing provides */
			char *want = menv_xasprintf("package %s does not exist", full);
			if (!strcmp(ps, want))
				um = s->unmatched[k];
			free(want);
			free(full);
		}
		if (um) {
			struct menv_buf one = MENV_BUF_INIT;
			unmatched_problem(s, req, um, i, &one, tree, js);
			if (!line->buf || !strstr(line->buf, one.buf))
				menv_buf_addf(line, "%s%s", line->len ? "; " : "", one.buf);
			menv_buf_release(&one);
			free(ps);
			continue;
		}
		if (!strstr(line->buf, ps))
			menv_buf_addf(line, "%s%s", line->len ? "; " : "", ps);
		if (strstr(ps, "__cuda"))
			*needs_cuda = true;
		facts_collect(solv, i, &f, needs_cuda);
		map_init(&seen, pool->nsolvables);
		json_t *roots = json_array();
		menv_buf_addf(tree, "problem %d: %s\n", i, ps);
		for (size_t k = 0; k < req->ninstall; k++) {
			const struct menv_matchspec *ms = req->install[k];
			Id name = ms->name ? pool_str2id(pool, ms->name, 0) : 0;
			json_t *cands = json_array();
			for (Id p = 2; name && p < pool->nsolvables; p++)
				if (MAPTST(&f.involved, p) &&
				    pool_id2solvable(pool, p)->name == name &&
				    json_array_size(cands) < 4)
					json_array_append_new(cands,
					                      tree_node(solv, &f, p, &seen, 1));
			if (!json_array_size(cands)) {
				json_decref(cands);
				continue;
			}
			char *spec = menv_matchspec_str_full(ms);
			menv_buf_addf(tree, "requested %s\n", spec);
			size_t c;
			json_t *cn;
			json_array_foreach(cands, c, cn) tree_render(cn, 1, tree);
			json_array_append_new(roots, json_pack("{s:s,s:o}", "requested", spec,
			                                       "candidates", cands));
			free(spec);
		}
		json_array_append_new(js, json_pack("{s:s,s:o}", "problem", ps, "tree", roots));
		map_free(&seen);
		facts_free(&f);
		free(ps);
	}
}

const char *menv_solver_problems(const struct menv_solver *s)
{
	return s->problems ? s->problems : "";
}

json_t *menv_solver_problems_json(const struct menv_solver *s)
{
	return s->problems_json;
}

/* ---------------------------------------------------------------------------------------- */
/* Variant prioritisation                                                                    */

struct variant {
	Id p, name, evr;
	long long bn;
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
static void order_repos(struct menv_solver *s)
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

/* Among builds of one name, version and build number, prefer the one whose dependencies
 * reach the better versions (conda-forge's libsolv variant order), by rewriting libsolv's
 * build-version key as "build_number.rank.timestamp". Only the names this request can reach
 * are ranked (a few hundred of a large channel's records), each once per pool; a group's rank
 * depends on its own dependencies alone, so the result is the one a whole-pool pass gives. */
static void rank_variants(struct menv_solver *s, const struct menv_solve_request *req)
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
	v = menv_xcalloc((size_t)pool->nsolvables + 1, sizeof(*v));
	Repodata **rank_data = menv_xcalloc((size_t)pool->nrepos + 1, sizeof(*rank_data));
	for (Id p = 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt || MAPTST(s->ranked_names, sv->name) ||
		    (some && !MAPTST(&reach, sv->name)))
			continue;
		v[n++] = (struct variant){p, sv->name, sv->evr, build_number_of(sv)};
	}
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
				/* then: an arch build over a noarch one (order_repos) */
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
		/* every reached record gets its key: build number, rank, then timestamp */
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
			snprintf(num, sizeof(num), "%lld.%ld.%llu", v[a].bn, rank[a - i], ts);
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
static void strict_priority(struct menv_solver *s, const struct menv_solve_request *req)
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

/* Does a virtual package (name, version, build as added) match the spec's version and build? */
static bool virtual_matches(Pool *pool, Solvable *sv, const struct menv_matchspec *ms)
{
	const char *flavor = solvable_lookup_str(sv, SOLVABLE_BUILDFLAVOR);
	json_t *j = json_pack("{s:s,s:s,s:s,s:i}", "name", pool_id2str(pool, sv->name), "version",
	                      pool_id2str(pool, sv->evr), "build", flavor ? flavor : "0",
	                      "build_number", 0);
	bool ok = j && menv_matchspec_match_json(ms, j);
	json_decref(j);
	return ok;
}

/* Appends the job for one spec (`how` = SOLVER_INSTALL, SOLVER_ERASE or SOLVER_UPDATE). */
static int add_spec_job(struct menv_solver *s, Queue *job, Queue *q, Id how,
                        const struct menv_matchspec *ms, bool must_exist, struct menv_error *err)
{
	Pool *pool = s->pool;
	struct menv_matchspec plain = *ms;
	char *str;
	Id dep, p, pp;
	bool known = false;

	plain.channel = NULL;
	if ((!ms->name || !strcmp(ms->name, "*")) && !ms->vspec && !ms->build && !ms->md5 &&
	    !ms->sha256 && !ms->fn && !ms->url && !ms->build_number && !ms->track_features &&
	    !ms->license && !ms->license_family && !ms->subdir)
		return menv_error_set(err, MENV_EPARSE, "the spec '%s' would match every package",
		                      ms->name ? ms->name : "");
	if (ms->name && strchr(ms->name, '*'))
		plain.name = NULL;
	str = menv_matchspec_str(&plain);
	dep = pool_conda_matchspec(pool, str);
	free(str);
	if (!dep)
		return menv_error_set(err, MENV_EPARSE, "cannot read match spec for '%s'",
		                      ms->name ? ms->name : "*");
	if (ms->name && !strchr(ms->name, '*')) {
		Id nameid = pool_str2id(pool, ms->name, 0);
		if (nameid)
			FOR_PROVIDES(p, pp, nameid) known = true;
		if (!known && must_exist) {
			char *full = menv_matchspec_str_full(ms);
			int rc = menv_error_set(err, MENV_ENOTFOUND,
			                        "package '%s' is not available from the current "
			                        "channels",
			                        full);
			free(full);
			return rc;
		}
		if (!known)
			return menv_error_set(err, MENV_ENOTFOUND, "package '%s' is not installed",
			                      ms->name);
	}
	/* menv's MatchSpec decides which packages a requested version or build means (CEP-29,
	 * conda's answers); libsolv's conda matcher only sees the dependencies inside repodata */
	bool menv_decides = how != SOLVER_ERASE && (ms->vspec || ms->build);
	if (!needs_candidates(ms) && !menv_decides) {
		queue_push2(job, how | SOLVER_SOLVABLE_PROVIDES, dep);
		return 0;
	}
	queue_empty(q);
	if (ms->name && !strchr(ms->name, '*')) {
		Id nameid = pool_str2id(pool, ms->name, 0);
		FOR_PROVIDES(p, pp, nameid)
		{
			Solvable *sv = pool_id2solvable(pool, p);
			if (sv->name != nameid)
				continue;
			if (sv->repo == s->virt) {
				/* an installed package keeps its place when it matches */
				json_t *inst = (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
				if (inst && !ms->channel && menv_matchspec_match_json(ms, inst))
					queue_push(q, p);
				else if (!inst && !ms->channel && virtual_matches(pool, sv, ms))
					queue_push(q, p); /* `__glibc >=2.17` */
				continue;
			}
			const struct menv_record *r = record_of(s, p);
			if (extra_keys_match(ms, r) && menv_matchspec_match_json(ms, r->json))
				queue_push(q, p);
		}
	}
	for (p = 2; !(ms->name && !strchr(ms->name, '*')) && p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt)
			continue;
		const char *nm = pool_id2str(pool, sv->name);
		if (ms->name && fnmatch(ms->name, nm, 0))
			continue;
		if (!extra_keys_match(ms, record_of(s, p)))
			continue;
		if ((plain.version || plain.build) && !provides_match(s, p, &plain, nm))
			continue;
		queue_push(q, p);
	}
	if (!q->count) {
		/* strict channel priority may be what hides it (pool->considered) */
		char *why = NULL;
		Id nameid = ms->name ? pool_str2id(pool, ms->name, 0) : 0;
		for (p = 2; s->considered && nameid && !why && p < pool->nsolvables; p++) {
			Solvable *sv = pool_id2solvable(pool, p);
			if (sv->name != nameid || !sv->repo || sv->repo == s->virt ||
			    MAPTST(s->considered, p))
				continue;
			const struct menv_record *r = record_of(s, p);
			if (r && extra_keys_match(ms, r) && menv_matchspec_match_json(ms, r->json))
				why = menv_xasprintf(
				        " (%s %s of channel '%s' matches, but strict channel "
				        "priority takes '%s' from a higher-priority channel "
				        "only; --no-channel-priority allows it)",
				        r->name, r->version, r->channel ? r->channel->name : "?",
				        ms->name);
		}
		char *full = menv_matchspec_str_full(ms);
		if (!why && known && s->unmatched_ok) {
			/* nothing provides this name: libsolv reports the job as unsatisfiable */
			s->unmatched = menv_xrealloc(s->unmatched,
			                             (s->nunmatched + 1) * sizeof(*s->unmatched));
			s->unmatched[s->nunmatched++] = ms;
			queue_push2(job, how | SOLVER_SOLVABLE_NAME, pool_str2id(pool, full, 1));
			free(full);
			return 0;
		}
		int rc = menv_error_set(err, MENV_ENOTFOUND,
		                        "no package matches '%s' in the current channels%s", full,
		                        why ? why : "");
		free(full);
		free(why);
		return rc;
	}
	queue_push2(job, how | SOLVER_SOLVABLE_ONE_OF, pool_queuetowhatprovides(pool, q));
	return 0;
}

int menv_solver_solve(struct menv_solver *s, struct menv_matchspec *const *specs, size_t n,
                      const struct menv_record ***out, size_t *n_out, struct menv_error *err)
{
	struct menv_solve_request req = {.install = specs, .ninstall = n};
	struct menv_transaction t;
	int rc;

	*out = NULL;
	*n_out = 0;
	rc = menv_solver_solve_request(s, &req, &t, err);
	if (rc)
		return rc;
	*out = t.link;
	*n_out = t.nlink;
	free(t.unlink);
	return 0;
}

void menv_transaction_release(struct menv_transaction *t)
{
	free(t->link);
	free(t->unlink);
	memset(t, 0, sizeof(*t));
}

/* libsolv may replace an installed package by the channel's copy of the very same package
 * (an update job prefers the repo solvable): an unlink and a link of one package (name,
 * version, build, channel and subdir) are no change, as conda sees it, and are dropped. */
static const char *json_str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

static void drop_same_package(struct menv_transaction *t)
{
	size_t nl = 0;
	for (size_t i = 0; i < t->nlink; i++) {
		const struct menv_record *r = t->link[i];
		bool same = false;
		for (size_t k = 0; k < t->nunlink && !same; k++) {
			json_t *u = t->unlink[k];
			const char *ch = json_string_value(json_object_get(u, "channel"));
			same = !strcmp(json_str(u, "name"), r->name) &&
			       !strcmp(json_str(u, "version"), r->version) &&
			       !strcmp(json_str(u, "build"), r->build) && ch && r->channel_url &&
			       !strcmp(ch, r->channel_url);
			if (same) {
				memmove(&t->unlink[k], &t->unlink[k + 1],
				        (t->nunlink - k - 1) * sizeof(*t->unlink));
				t->nunlink--;
			}
		}
		if (!same)
			t->link[nl++] = r;
	}
	t->nlink = nl;
}

/* ---------------------------------------------------------------------------------------- */
/* Changing an existing environment: conda's update modifiers as libsolv jobs                */

static json_t *installed_rec(const struct menv_solver *s, Id p)
{
	return (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
}

static bool has_name(const struct menv_strvec *v, const char *name)
{
	for (size_t i = 0; name && i < v->n; i++)
		if (!strcmp(v->v[i], name))
			return true;
	return false;
}

/* What one solve of a request keeps and frees: the names the request changes, the names it
 * removes, update_deps' dependency names, and the installed solvables that relaxation freed
 * from their lock. */
struct plan {
	struct menv_strvec explicit_names; /* install and update specs */
	struct menv_strvec removed;        /* remove specs */
	struct menv_strvec closure;        /* update_deps: dependencies of explicit_names */
	Map unlocked;                      /* installed solvables no longer locked */
	bool all_unlocked;                 /* every installed solvable only favoured */
	bool no_best; /* the last resort: explicit names need not reach their best version */
	Queue held;   /* job index of each spec the request did not name but holds */
	struct menv_strvec held_text; /* what each of them is, for the problem text */
};

/* conda's business rule: python stays within its installed minor version unless the user asks
 * for python (or the history holds a python spec with a version); freeze_installed keeps the
 * very build. Returns a new spec, or NULL. */
static struct menv_matchspec *
python_pin(struct menv_solver *s, const struct menv_solve_request *req, const struct plan *pl)
{
	Pool *pool = s->pool;
	struct menv_matchspec *ms = NULL;
	bool frozen = req->freeze_installed || req->no_update_deps;

	if (has_name(&pl->explicit_names, "python") || has_name(&pl->removed, "python"))
		return NULL;
	for (size_t i = 0; !req->update_all && i < req->nhistory; i++) {
		const struct menv_matchspec *h = req->history[i];
		if (h->name && !strcmp(h->name, "python") && (h->vspec || h->version) &&
		    !has_name(&pl->closure, "python"))
			return NULL;
	}
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = installed_rec(s, p);
		if (!r || pool_id2solvable(pool, p)->repo != s->virt)
			continue;
		const char *name = json_string_value(json_object_get(r, "name"));
		const char *ver = json_string_value(json_object_get(r, "version"));
		const char *build = json_string_value(json_object_get(r, "build"));
		if (!name || strcmp(name, "python") || !ver)
			continue;
		char *str;
		if (frozen && build) {
			str = menv_xasprintf("python==%s=%s", ver, build);
		} else {
			/* major.minor.* */
			const char *dot = strchr(ver, '.');
			const char *dot2 = dot ? strchr(dot + 1, '.') : NULL;
			size_t n = dot2 ? (size_t)(dot2 - ver) : strlen(ver);
			str = menv_xasprintf("python %.*s.*", (int)n, ver);
		}
		if (menv_matchspec_parse(str, &ms, NULL))
			ms = NULL;
		free(str);
		break;
	}
	return ms;
}

/* The jobs of one attempt. Installed packages the request does not name are locked (conda's
 * update_specs: they stay) unless relaxation freed them, then only favoured. */
static int request_jobs(struct menv_solver *s, const struct menv_solve_request *req,
                        struct plan *pl, Queue *job, Queue *q, struct menv_error *err)
{
	Pool *pool = s->pool;
	bool removing = req->nremove > 0;
	int rc = 0;

	queue_empty(job);
	queue_empty(&pl->held);
	menv_strvec_clear(&pl->held_text);
	/* every requested name no channel has, in one error (not the first only) */
	struct menv_buf missing = MENV_BUF_INIT;
	size_t nmissing = 0;
	for (size_t i = 0; i < req->ninstall; i++) {
		const struct menv_matchspec *ms = req->install[i];
		Id nameid = ms->name && !strchr(ms->name, '*') ? pool_str2id(pool, ms->name, 0) : 1;
		Id p, pp;
		bool known = false;
		if (nameid)
			FOR_PROVIDES(p, pp, nameid) known = true;
		if (!known) {
			char *full = menv_matchspec_str_full(ms);
			menv_buf_addf(&missing, "%s'%s'", nmissing++ ? ", " : "", full);
			free(full);
		}
	}
	if (nmissing > 1) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "packages %s are not available from the current channels",
		                    missing.buf);
		menv_buf_release(&missing);
		return rc;
	}
	menv_buf_release(&missing);
	s->nunmatched = 0;
	for (size_t i = 0; i < req->ninstall && !rc; i++) {
		const struct menv_matchspec *ms = req->install[i];
		s->unmatched_ok = true;
		rc = add_spec_job(s, job, q, SOLVER_INSTALL, ms, true, err);
		s->unmatched_ok = false;
		/* `install X` of an installed X: the newest X the other packages allow */
		for (Id p = s->virt->start; !rc && ms->name && !req->freeze_installed &&
		                            !req->no_update_deps && p < s->virt->end;
		     p++) {
			json_t *r = installed_rec(s, p);
			if (r && !strcmp(json_str(r, "name"), ms->name))
				queue_push2(job,
				            SOLVER_UPDATE | SOLVER_SOLVABLE |
				                    (pl->no_best ? 0 : SOLVER_FORCEBEST),
				            p);
		}
	}
	/* `update numpy<=1.1`: libsolv's update job ignores the constraint, so a constrained
	 * update is an install of the constrained spec (which may move the package either way) */
	for (size_t i = 0; i < req->nupdate && !rc; i++) {
		const struct menv_matchspec *u = req->update[i];
		bool constrained = u->vspec || u->build || u->build_number || u->channel;
		Id best = pl->no_best ? 0 : SOLVER_FORCEBEST;
		rc = add_spec_job(s, job, q, constrained ? SOLVER_INSTALL : SOLVER_UPDATE | best, u,
		                  true, err);
		for (Id p = s->virt->start; !rc && constrained && u->name && p < s->virt->end;
		     p++) {
			json_t *r = installed_rec(s, p);
			if (r && !strcmp(json_str(r, "name"), u->name))
				queue_push2(job, SOLVER_UPDATE | SOLVER_SOLVABLE | best, p);
		}
	}
	/* conda's remove: the package, what needs it, and the dependencies nothing else needs
	 * (libsolv's cleandeps; the names the user asked for stay) */
	for (size_t i = 0; i < req->nremove && !rc; i++)
		rc = add_spec_job(s, job, q, SOLVER_ERASE | SOLVER_CLEANDEPS, req->remove[i], false,
		                  err);
	if (rc)
		return rc;
	if (req->update_all)
		queue_push2(job, SOLVER_UPDATE | SOLVER_SOLVABLE_ALL, 0);
	/* the specs the user asked for before (conda-meta/history) hold, unless this request
	 * names the package; update_all and update_deps keep only the names */
	for (size_t i = 0; i < req->nhistory; i++) {
		const struct menv_matchspec *h = req->history[i];
		if (!h->name || has_name(&pl->explicit_names, h->name) ||
		    has_name(&pl->removed, h->name))
			continue;
		Id nameid = pool_str2id(pool, h->name, 0);
		if (!nameid)
			continue;
		queue_push2(job, SOLVER_USERINSTALLED | SOLVER_SOLVABLE_NAME, nameid);
		if (req->update_all || has_name(&pl->closure, h->name) || removing) {
			if (!removing)
				queue_push2(job, SOLVER_INSTALL | SOLVER_SOLVABLE_NAME, nameid);
			continue;
		}
		struct menv_error herr = {0};
		int at = job->count;
		if (add_spec_job(s, job, q, SOLVER_INSTALL, h, true, &herr)) {
			queue_push2(job, SOLVER_INSTALL | SOLVER_SOLVABLE_NAME, nameid);
		} else {
			char *str = menv_matchspec_str_full(h);
			queue_push(&pl->held, at);
			menv_strvec_push_owned(&pl->held_text,
			                       menv_xasprintf("%s (asked for before, in "
			                                      "conda-meta/history)",
			                                      str));
			free(str);
		}
	}
	for (size_t i = 0; req->aggressive && i < req->aggressive->n; i++) {
		Id nameid = pool_str2id(pool, req->aggressive->v[i], 0);
		if (nameid)
			queue_push2(job, SOLVER_USERINSTALLED | SOLVER_SOLVABLE_NAME, nameid);
	}
	struct menv_matchspec *pin = removing ? NULL : python_pin(s, req, pl);
	if (pin) {
		struct menv_error perr = {0};
		int at = job->count;
		if (!add_spec_job(s, job, q, SOLVER_INSTALL, pin, true, &perr)) {
			char *str = menv_matchspec_str_full(pin);
			queue_push(&pl->held, at);
			menv_strvec_push_owned(
			        &pl->held_text,
			        menv_xasprintf("%s (python keeps its installed minor "
			                       "version unless the request names "
			                       "python)",
			                       str));
			free(str);
		}
		menv_matchspec_free(pin);
	}
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = installed_rec(s, p);
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo != s->virt)
			continue;
		if (!r) {
			/* virtual packages and pins are facts: never removed or replaced */
			queue_push2(job, SOLVER_LOCK | SOLVER_SOLVABLE, p);
			continue;
		}
		const char *name = json_str(r, "name");
		if (has_name(&pl->explicit_names, name) || has_name(&pl->removed, name) || removing)
			continue;
		if (has_name(&pl->closure, name)) {
			queue_push2(job, SOLVER_UPDATE | SOLVER_SOLVABLE, p);
			continue;
		}
		if (req->update_all)
			continue;
		if (pl->all_unlocked || MAPTST(&pl->unlocked, p)) {
			/* freed: it may change, or go when nothing else works */
			queue_push2(job, SOLVER_FAVOR | SOLVER_SOLVABLE, p);
			queue_push2(job, SOLVER_ALLOWUNINSTALL | SOLVER_SOLVABLE, p);
		} else {
			queue_push2(job, SOLVER_LOCK | SOLVER_SOLVABLE, p);
		}
	}
	/* the requested names' installed records may be replaced or, if need be, removed */
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = installed_rec(s, p);
		if (r && has_name(&pl->explicit_names, json_str(r, "name")))
			queue_push2(job, SOLVER_ALLOWUNINSTALL | SOLVER_SOLVABLE, p);
	}
	return 0;
}

/* After a failed attempt: frees the locked installed packages the problems name. Returns how
 * many it freed. */
static int relax(struct menv_solver *s, Solver *solv, struct plan *pl)
{
	Pool *pool = s->pool;
	int freed = 0, np = solver_problem_count(solv);
	Queue rules;

	queue_init(&rules);
	for (Id i = 1; i <= np; i++) {
		queue_empty(&rules);
		solver_findallproblemrules(solv, i, &rules);
		for (int j = 0; j < rules.count; j++) {
			Id source, target, dep;
			Id type = solver_ruleinfo(solv, rules.elements[j], &source, &target, &dep);
			Id p = 0;
			if (type == SOLVER_RULE_JOB && (target & SOLVER_JOBMASK) == SOLVER_LOCK &&
			    (target & SOLVER_SELECTMASK) == SOLVER_SOLVABLE)
				p = dep;
			else if (type != SOLVER_RULE_JOB && source > 0 &&
			         source < pool->nsolvables && installed_rec(s, source))
				p = source;
			if (p > 0 && p < pool->nsolvables && installed_rec(s, p) &&
			    !MAPTST(&pl->unlocked, p)) {
				MAPSET(&pl->unlocked, p);
				freed++;
			}
		}
	}
	queue_free(&rules);
	return freed;
}

/* The specs the environment holds (history, python's minor version) that a problem of the
 * failed solve involves, as "a; b" in out. */
static void held_specs(struct menv_solver *s, Solver *solv, const struct plan *pl,
                       struct menv_buf *out)
{
	Queue rules;
	bool *named = menv_xcalloc((size_t)pl->held.count + 1, sizeof(*named));
	int np = (int)solver_problem_count(solv);

	queue_init(&rules);
	for (Id i = 1; i <= np; i++) {
		queue_empty(&rules);
		solver_findallproblemrules(solv, i, &rules);
		for (int j = 0; j < rules.count; j++) {
			Id source, target, dep;
			if (solver_ruleinfo(solv, rules.elements[j], &source, &target, &dep) !=
			    SOLVER_RULE_JOB)
				continue;
			/* a locked installed package: only --freeze-installed keeps locks to the end */
			json_t *r = (target & SOLVER_JOBMASK) == SOLVER_LOCK &&
			                            (target & SOLVER_SELECTMASK) == SOLVER_SOLVABLE
			                    ? installed_rec(s, dep)
			                    : NULL;
			if (r)
				menv_buf_addf(out, "%sthe installed %s-%s-%s (--freeze-installed)",
				              out->len ? "; " : "", json_str(r, "name"),
				              json_str(r, "version"), json_str(r, "build"));
			for (int k = 0; k < pl->held.count; k++)
				if (pl->held.elements[k] == source && !named[k]) {
					named[k] = true;
					menv_buf_addf(out, "%s%s", out->len ? "; " : "",
					              pl->held_text.v[k]);
				}
		}
	}
	queue_free(&rules);
	free(named);
}

/* Solves with the installed packages locked, then frees those the problems involve, step
 * by step (conda-libmamba-solver's approach), and last only favours them all. On success
 * *out is the solver (free it); on failure the problems of the last attempt are described. */
static int solve_relaxing(struct menv_solver *s, const struct menv_solve_request *req,
                          struct plan *pl, Solver **out, struct menv_error *err)
{
	Pool *pool = s->pool;
	Queue job, q;
	Solver *solv = NULL;
	int rc = 0;
	bool frozen = req->freeze_installed || req->no_update_deps;

	*out = NULL;
	queue_init(&job);
	queue_init(&q);
	for (int round = 0;; round++) {
		/* libsolv's solve has no cancel hook: Ctrl-C is honoured between its rounds */
		if (cancelled(s->cancel)) {
			rc = menv_error_set(err, MENV_EINTR, "solve interrupted");
			break;
		}
		rc = request_jobs(s, req, pl, &job, &q, err);
		if (rc)
			break;
		solv = solver_create(pool);
		/* like conda: installed packages may move either way when the request needs it;
		 * only those the request names or relaxation freed may be removed (all of them
		 * for update_all and a remove, whose dependents go too) */
		solver_set_flag(solv, SOLVER_FLAG_ALLOW_DOWNGRADE, 1);
		solver_set_flag(solv, SOLVER_FLAG_ALLOW_UNINSTALL,
		                req->update_all || req->nremove || pl->all_unlocked);
		if (!solver_solve(solv, &job)) {
			*out = solv;
			break;
		}
		bool again = false;
		if (!frozen && round < 10) {
			if (relax(s, solv, pl))
				again = true;
			else if (!pl->all_unlocked)
				again = pl->all_unlocked = true;
			else if (!pl->no_best)
				again = pl->no_best = true;
		}
		if (again) {
			solver_free(solv);
			solv = NULL;
			continue;
		}
		struct menv_buf line = MENV_BUF_INIT, tree = MENV_BUF_INIT, held = MENV_BUF_INIT;
		bool needs_cuda = false;
		json_decref(s->problems_json);
		s->problems_json = json_array();
		describe_problems(s, solv, req, &line, &tree, s->problems_json, &needs_cuda);
		held_specs(s, solv, pl, &held);
		rc = menv_error_set(
		        err, MENV_EUNSAT, "could not solve for the requested packages: %s%s%s%s",
		        line.buf ? line.buf : "", held.len ? "; the environment holds " : "",
		        held.len ? held.buf : "",
		        needs_cuda && !s->has_cuda
		                ? " (no CUDA driver was found: __cuda is absent; "
		                  "CONDA_OVERRIDE_CUDA=11.8 solves for a GPU machine)"
		                : "");
		menv_buf_release(&held);
		free(s->problems);
		s->problems = menv_buf_detach(&tree);
		menv_buf_release(&line);
		solver_free(solv);
		break;
	}
	queue_free(&q);
	queue_free(&job);
	return rc;
}

/* update_deps: the names the explicit names depend on, directly or not, in the solution. */
static void dependency_closure(struct menv_solver *s, Solver *solv, struct plan *pl)
{
	Pool *pool = s->pool;
	Queue dq;
	Map in;

	queue_init(&dq);
	map_init(&in, pool->nsolvables);
	solver_get_decisionqueue(solv, &dq);
	for (int i = 0; i < dq.count; i++)
		if (dq.elements[i] > 1)
			MAPSET(&in, dq.elements[i]);
	struct menv_strvec todo = MENV_STRVEC_INIT;
	for (size_t i = 0; i < pl->explicit_names.n; i++)
		menv_strvec_push(&todo, pl->explicit_names.v[i]);
	for (size_t t = 0; t < todo.n; t++) {
		Id nameid = pool_str2id(pool, todo.v[t], 0);
		for (Id p = 2; nameid && p < pool->nsolvables; p++) {
			Solvable *sv = pool_id2solvable(pool, p);
			if (!MAPTST(&in, p) || sv->name != nameid || !sv->requires)
				continue;
			for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++) {
				Id q, qq;
				FOR_PROVIDES(q, qq, *dp)
				{
					if (!MAPTST(&in, q))
						continue;
					const char *dn =
					        pool_id2str(pool, pool_id2solvable(pool, q)->name);
					if (!has_name(&todo, dn) && strncmp(dn, "__", 2))
						menv_strvec_push(&todo, dn);
				}
			}
		}
	}
	for (size_t i = 0; i < todo.n; i++)
		if (!has_name(&pl->explicit_names, todo.v[i]))
			menv_strvec_push(&pl->closure, todo.v[i]);
	menv_strvec_clear(&todo);
	map_free(&in);
	queue_free(&dq);
}

/* The channel's record of an installed package, for force_reinstall. */
static const struct menv_record *channel_copy(struct menv_solver *s, json_t *inst)
{
	Pool *pool = s->pool;
	Id nameid = pool_str2id(pool, json_str(inst, "name"), 0);
	for (Id p = 2; nameid && p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->name != nameid || !sv->repo || sv->repo == s->virt)
			continue;
		const struct menv_record *r = record_of(s, p);
		if (r && !strcmp(r->version, json_str(inst, "version")) &&
		    !strcmp(r->build, json_str(inst, "build")))
			return r;
	}
	return NULL;
}

/* The solve's transaction. A package to link whose record cannot be read (nested too deep,
 * say: libsolv's reader took it) fails it with MENV_EPARSE naming the record. */
static int transaction_of(struct menv_solver *s, Solver *solv, struct menv_transaction *out,
                          struct menv_error *err)
{
	int rc = 0;

	Pool *pool = s->pool;
	Transaction *trans = solver_create_transaction(solv);

	transaction_order(trans, 0);
	out->link = menv_xcalloc((size_t)trans->steps.count + 1, sizeof(*out->link));
	out->unlink = menv_xcalloc((size_t)trans->steps.count + 1, sizeof(*out->unlink));
	for (int i = 0; i < trans->steps.count; i++) {
		Id p = trans->steps.elements[i];
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo == s->virt) {
			/* an installed package leaving (erased or replaced) */
			if (installed_rec(s, p) &&
			    transaction_type(trans, p, SOLVER_TRANSACTION_SHOW_ALL) !=
			            SOLVER_TRANSACTION_IGNORE)
				out->unlink[out->nunlink++] = s->inst_by_id[p];
			continue;
		}
		const struct menv_record *r = record_of(s, p);
		if (r)
			out->link[out->nlink++] = r;
		else if (!rc && s->unreadable.code)
			rc = menv_error_set(err, s->unreadable.code, "%s", s->unreadable.msg);
		else if (!rc)
			rc = menv_error_set(err, MENV_EPARSE, "the record of '%s' cannot be read",
			                    pool_solvid2str(pool, p));
	}
	transaction_free(trans);
	return rc;
}

/* no_deps keeps only the explicit names' changes; only_deps drops the explicit names'. */
static void filter_names(struct menv_transaction *t, const struct menv_strvec *names, bool keep)
{
	size_t nl = 0, nu = 0;
	for (size_t i = 0; i < t->nlink; i++)
		if (has_name(names, t->link[i]->name) == keep)
			t->link[nl++] = t->link[i];
	for (size_t i = 0; i < t->nunlink; i++)
		if (has_name(names, json_str(t->unlink[i], "name")) == keep)
			t->unlink[nu++] = t->unlink[i];
	t->nlink = nl;
	t->nunlink = nu;
}

/* The solvables of the solution: installed ones kept and new ones, as a map. */
static void solution_map(Solver *solv, Map *in)
{
	Queue dq;
	queue_init(&dq);
	map_init(in, solv->pool->nsolvables);
	solver_get_decisionqueue(solv, &dq);
	for (int i = 0; i < dq.count; i++)
		if (dq.elements[i] > 1)
			MAPSET(in, dq.elements[i]);
	queue_free(&dq);
}

/* Does a solvable of `in` other than p (and of another name) need p? Only the solvables of
 * the map are visited (its set bits), not the whole pool. */
static bool needed_by(Pool *pool, const Map *in, Id p)
{
	Solvable *ps = pool_id2solvable(pool, p);
	for (int byte = 0; byte < in->size; byte++) {
		if (!in->map[byte])
			continue;
		for (int bit = 0; bit < 8; bit++) {
			Id q = byte * 8 + bit;
			if (!(in->map[byte] & (1 << bit)) || q == p || q < 2 ||
			    q >= pool->nsolvables)
				continue;
			Solvable *sv = pool_id2solvable(pool, q);
			if (sv->name == ps->name || !sv->repo || !sv->requires)
				continue;
			for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++) {
				Id r, rr;
				FOR_PROVIDES(r, rr, *dp)
				{
					if (r == p)
						return true;
				}
			}
		}
	}
	return false;
}

/* conda's only_deps keeps an explicit name that another package of the solution needs
 * (`--only-deps python=2 flask` keeps python): only the youngest ones are left out. */
static void youngest_names(struct menv_solver *s, Solver *solv, const struct menv_strvec *names,
                           struct menv_strvec *out)
{
	Pool *pool = s->pool;
	Map in;
	solution_map(solv, &in);
	for (Id p = 2; p < pool->nsolvables; p++) {
		const char *nm = pool_id2str(pool, pool_id2solvable(pool, p)->name);
		if (MAPTST(&in, p) && has_name(names, nm) && !needed_by(pool, &in, p) &&
		    !has_name(out, nm))
			menv_strvec_push(out, nm);
	}
	map_free(&in);
}

/* conda prunes what a change leaves orphaned: an installed package that something installed
 * needed, that nothing in the solution needs any more, and that nobody asked for. */
static void prune_orphans(struct menv_solver *s, Solver *solv, const struct menv_solve_request *req,
                          const struct plan *pl, struct menv_transaction *out)
{
	Pool *pool = s->pool;
	Map in, before;
	bool changed = true;

	solution_map(solv, &in);
	map_init(&before, pool->nsolvables);
	for (Id p = s->virt->start; p < s->virt->end; p++)
		if (pool_id2solvable(pool, p)->repo == s->virt)
			MAPSET(&before, p); /* installed, virtual packages and pins */
	while (changed) {
		changed = false;
		for (Id p = s->virt->start; p < s->virt->end; p++) {
			json_t *r = installed_rec(s, p);
			if (!r || !MAPTST(&in, p))
				continue;
			const char *name = json_str(r, "name");
			bool asked = has_name(&pl->explicit_names, name) ||
			             (req->aggressive && has_name(req->aggressive, name));
			for (size_t i = 0; !asked && i < req->nhistory; i++)
				asked = req->history[i]->name &&
				        !strcmp(req->history[i]->name, name);
			if (asked || !needed_by(pool, &before, p) || needed_by(pool, &in, p))
				continue;
			MAPCLR(&in, p);
			out->unlink[out->nunlink++] = r;
			changed = true;
		}
	}
	map_free(&before);
	map_free(&in);
}

int menv_solver_solve_request(struct menv_solver *s, const struct menv_solve_request *req,
                              struct menv_transaction *out, struct menv_error *err)
{
	Pool *pool = s->pool;
	Solver *solv = NULL;
	struct plan pl = {0};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pool_addfileprovides(pool);
	add_pip_dependency(s);
	if (s->prio == MENV_PRIORITY_STRICT)
		strict_priority(s, req);
	pool_createwhatprovides(pool);
	order_repos(s);
	rank_variants(s, req);
	map_init(&pl.unlocked, pool->nsolvables);
	queue_init(&pl.held);
	for (size_t i = 0; i < req->ninstall; i++)
		if (req->install[i]->name)
			menv_strvec_push(&pl.explicit_names, req->install[i]->name);
	for (size_t i = 0; i < req->nupdate; i++)
		if (req->update[i]->name)
			menv_strvec_push(&pl.explicit_names, req->update[i]->name);
	for (size_t i = 0; i < req->nremove; i++)
		if (req->remove[i]->name)
			menv_strvec_push(&pl.removed, req->remove[i]->name);

	if (req->force_remove) {
		/* conda remove --force: the named packages only, whatever needs them */
		Queue job, q;
		queue_init(&job);
		queue_init(&q);
		for (size_t i = 0; i < req->nremove && !rc; i++)
			rc = add_spec_job(s, &job, &q, SOLVER_ERASE, req->remove[i], false, err);
		queue_free(&job);
		queue_free(&q);
		if (rc)
			goto out;
		out->unlink = menv_xcalloc(s->inst_alloc + 1, sizeof(*out->unlink));
		for (Id p = s->virt->start; p < s->virt->end; p++) {
			json_t *r = installed_rec(s, p);
			if (r && has_name(&pl.removed, json_str(r, "name")))
				out->unlink[out->nunlink++] = r;
		}
		out->link = menv_xcalloc(1, sizeof(*out->link));
		goto out;
	}
	if (req->satisfied_skip_solve && !req->nupdate && !req->nremove && !req->update_all) {
		/* conda's specs_satisfied_skip_solve: nothing to do when each spec is met */
		bool all = true;
		for (size_t i = 0; all && i < req->ninstall; i++) {
			bool met = false;
			for (Id p = s->virt->start; !met && p < s->virt->end; p++) {
				json_t *r = installed_rec(s, p);
				met = r && menv_matchspec_match_json(req->install[i], r);
			}
			all = met;
		}
		if (all) {
			out->link = menv_xcalloc(1, sizeof(*out->link));
			out->unlink = menv_xcalloc(1, sizeof(*out->unlink));
			goto out;
		}
	}
	rc = solve_relaxing(s, req, &pl, &solv, err);
	if (!rc && req->update_deps && pl.explicit_names.n) {
		/* conda's update_deps: solve again with the request's dependencies free to update */
		dependency_closure(s, solv, &pl);
		solver_free(solv);
		solv = NULL;
		map_empty(&pl.unlocked);
		pl.all_unlocked = false;
		rc = solve_relaxing(s, req, &pl, &solv, err);
	}
	if (rc)
		goto out;
	rc = transaction_of(s, solv, out, err);
	if (rc) {
		menv_transaction_release(out);
		memset(out, 0, sizeof(*out));
		goto out;
	}
	out->unlink = menv_xrealloc(out->unlink,
	                            (out->nunlink + s->inst_alloc + 1) * sizeof(*out->unlink));
	if (!req->no_deps && !req->only_deps && !req->freeze_installed && !req->no_update_deps &&
	    !req->nremove)
		prune_orphans(s, solv, req, &pl, out);
	drop_same_package(out);
	if (req->no_deps) {
		filter_names(out, &pl.explicit_names, true);
	} else if (req->only_deps) {
		struct menv_strvec young = MENV_STRVEC_INIT;
		youngest_names(s, solv, &pl.explicit_names, &young);
		filter_names(out, &young, false);
		menv_strvec_clear(&young);
	}
	if (req->force_reinstall) {
		/* the explicit names that stay get unlinked and linked again */
		size_t cap = out->nlink + s->inst_alloc + 1;
		out->link = menv_xrealloc(out->link, cap * sizeof(*out->link));
		out->unlink = menv_xrealloc(out->unlink, cap * sizeof(*out->unlink));
		for (Id p = s->virt->start; p < s->virt->end; p++) {
			json_t *r = installed_rec(s, p);
			if (!r || !has_name(&pl.explicit_names, json_str(r, "name")))
				continue;
			bool leaving = false;
			for (size_t k = 0; k < out->nunlink; k++)
				leaving = leaving || out->unlink[k] == r;
			const struct menv_record *copy = leaving ? NULL : channel_copy(s, r);
			if (copy) {
				out->unlink[out->nunlink++] = r;
				out->link[out->nlink++] = copy;
			}
		}
	}
out:
	if (solv)
		solver_free(solv);
	map_free(&pl.unlocked);
	queue_free(&pl.held);
	menv_strvec_clear(&pl.held_text);
	menv_strvec_clear(&pl.explicit_names);
	menv_strvec_clear(&pl.removed);
	menv_strvec_clear(&pl.closure);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Queries                                                                                   */

static void prepare(struct menv_solver *s)
{
	if (s->prepared)
		return;
	pool_addfileprovides(s->pool);
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
	const struct menv_record *r = record_of(s, p);
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
	prepare(s);
	for (Id p = 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt)
			continue;
		if (ms->name && strcmp(ms->name, "*") &&
		    fnmatch(ms->name, pool_id2str(pool, sv->name), 0))
			continue;
		const struct menv_record *r = record_of(s, p);
		if (!r || !extra_keys_match(ms, r) || !menv_matchspec_match_json(ms, r->json))
			continue;
		push_ranked(s, &v, &n, &alloc, p);
	}
	(void)err;
	return finish_query(s, v, n, out, n_out);
}

int menv_solver_whoneeds(struct menv_solver *s, const char *name, const struct menv_record ***out,
                         size_t *n_out, struct menv_error *err)
{
	Pool *pool = s->pool;
	Id want = pool_str2id(pool, name, 0);
	struct ranked *v = NULL;
	size_t n = 0, alloc = 0;

	*out = NULL;
	*n_out = 0;
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
	(void)err;
	return finish_query(s, v, n, out, n_out);
}
