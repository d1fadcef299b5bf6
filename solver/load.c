/*
 * load.c - repodata.json files into the pool through libsolv's conda reader, and the .solv
 * cache beside each file (keyed by the file's size, mtime and the reader's settings): a
 * record's byte offset is kept so that its JSON is parsed only when a solve needs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <solv/repo_conda.h>
#include <solv/repo_solv.h>
#include <solv/repo_write.h>

#include "jsonscan.h"
#include "internal.h"

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

static void on_scan(void *ud, const struct menv_jsonscan_item *it)
{
	struct scan_ctx *c = ud;
	if (it->kind == MENV_JSONSCAN_INFO) {
		c->info_off = it->off;
		c->has_info = true;
		return;
	}
	if (it->kind == MENV_JSONSCAN_OTHER)
		return;
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 1024;
		c->fns = menv_xrealloc(c->fns, c->alloc * sizeof(*c->fns));
		c->offs = menv_xrealloc(c->offs, c->alloc * sizeof(*c->offs));
	}
	c->fns[c->n] = menv_xstrndup(it->key, it->keylen);
	c->offs[c->n] = it->off;
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
	struct menv_buf *out; /* writing to memory, or NULL */
	int fd;               /* else reading or writing this descriptor */
	volatile int *cancel;
	/* reading JSON from memory (json_fix): where the scan is, whether inside a string, and
	 * a replacement that runs past the bytes given so far */
	bool json, in_str, rep_on;
	size_t scan, rep_at;
};

static int hex4(const char *p, size_t n)
{
	int v = 0;
	if (n < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int c = (unsigned char)p[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/* The bytes [at, at+n) of the JSON doc as libsolv's reader is given them: each `\u0000` and
 * each UTF-16 surrogate escape that is not half of a pair becomes `\ufffd` (as long). Python's
 * json, which conda reads repodata with, takes both, and libsolv's parser failed the whole
 * file on them ("parse error line 1", every other record lost; a lone low surrogate it took,
 * as bytes that are not UTF-8). The record itself is read from the file's own bytes when a
 * solve picks it, and jansson refuses it there, named: skipped with a warning, as menv skips
 * every record it cannot read. */
static void json_fix(struct cstream *c, char *buf, size_t at, size_t n)
{
	static const char rep[6] = {'\\', 'u', 'f', 'f', 'f', 'd'};
	const char *m = c->map;
	size_t end = at + n, i = c->scan > at ? c->scan : at;

	if (c->rep_on) {
		for (size_t k = 0; k < 6; k++)
			if (c->rep_at + k >= at && c->rep_at + k < end)
				buf[c->rep_at + k - at] = rep[k];
		c->rep_on = c->rep_at + 6 > end;
	}
	while (i < end) {
		const char *q = m + i;
		if (!c->in_str) {
			q = memchr(q, '"', end - i);
			if (!q)
				break;
			c->in_str = true;
			i = (size_t)(q - m) + 1;
			continue;
		}
		while (q < m + end && *q != '"' && *q != '\\')
			q++;
		i = (size_t)(q - m);
		if (i >= end)
			break;
		if (*q == '"') {
			c->in_str = false;
			i++;
			continue;
		}
		if (i + 1 >= c->size || m[i + 1] != 'u') {
			i += 2;
			continue;
		}
		int v = hex4(m + i + 2, c->size - i - 2);
		bool bad = v == 0 || (v >= 0xdc00 && v < 0xe000);
		if (v >= 0xd800 && v < 0xdc00) {
			int lo = i + 7 < c->size && m[i + 6] == '\\' && m[i + 7] == 'u'
			                 ? hex4(m + i + 8, c->size - i - 8)
			                 : -1;
			bad = !(lo >= 0xdc00 && lo < 0xe000);
			if (!bad) {
				i += 12;
				continue;
			}
		}
		if (bad) {
			for (size_t k = 0; k < 6; k++)
				if (i + k < end)
					buf[i + k - at] = rep[k];
			c->rep_on = i + 6 > end;
			c->rep_at = i;
		}
		i += 6;
	}
	c->scan = i;
}

bool menv_solv_cancelled(volatile int *cancel)
{
	return cancel && *cancel;
}

static ssize_t cs_read(void *ud, char *buf, size_t n)
{
	struct cstream *c = ud;
	if (menv_solv_cancelled(c->cancel)) {
		errno = EINTR;
		return -1;
	}
	if (!c->map)
		return read(c->fd, buf, n);
	if (n > c->size - c->pos)
		n = c->size - c->pos;
	memcpy(buf, c->map + c->pos, n);
	if (c->json)
		json_fix(c, buf, c->pos, n);
	c->pos += n;
	return (ssize_t)n;
}

static ssize_t cs_write(void *ud, const char *buf, size_t n)
{
	struct cstream *c = ud;
	size_t done = 0;
	if (menv_solv_cancelled(c->cancel)) {
		errno = EINTR;
		return -1;
	}
	if (c->out) {
		menv_buf_add(c->out, buf, n);
		return (ssize_t)n;
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
 * PackageRecord requires all three; an empty build string "" is one, as conda takes it),
 * each with a warning naming the file and its key (into `all`, `*n` counting them). */
static void drop_unnamed(struct filerepo *f, Id from, const char *path, struct menv_buf *all,
                         size_t *n)
{
	Id p;
	Solvable *sv;

	FOR_REPO_SOLVABLES(f->repo, p, sv)
	{
		if (p < from)
			continue;
		const char *flavor = solvable_lookup_str(sv, SOLVABLE_BUILDFLAVOR);
		const char *what = sv->name <= ID_EMPTY  ? "name"
		                   : sv->evr <= ID_EMPTY ? "version"
		                   : !flavor             ? "build"
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

/* Drops the records whose version conda's VersionOrder refuses (`0.8+5prealpha+1`: two '+';
 * `1:2.0`, `1.0~rc1`: characters it does not allow; see menv_version_parse), each with a
 * warning naming the file, its key and the reason (into `all`, `*n` counting them). conda
 * fails the load of the whole file on the first one; menv solves with the rest. Each distinct
 * version string is parsed once. */
static void drop_bad_versions(struct filerepo *f, Id from, const char *path, struct menv_buf *all,
                              size_t *n)
{
	Pool *pool = f->repo->pool;
	Map seen, bad;
	Id p;
	Solvable *sv;

	map_init(&seen, pool->ss.nstrings);
	map_init(&bad, pool->ss.nstrings);
	FOR_REPO_SOLVABLES(f->repo, p, sv)
	{
		if (p < from || sv->evr <= ID_EMPTY || ISRELDEP(sv->evr) ||
		    sv->evr >= pool->ss.nstrings)
			continue;
		if (MAPTST(&seen, sv->evr) && !MAPTST(&bad, sv->evr))
			continue;
		struct menv_version *v = NULL;
		struct menv_error e = {0};
		int rc = menv_version_parse(pool_id2str(pool, sv->evr), &v, &e);
		menv_version_free(v);
		MAPSET(&seen, sv->evr);
		if (!rc)
			continue;
		MAPSET(&bad, sv->evr);
		const char *loc = solvable_lookup_str(sv, SOLVABLE_MEDIAFILE);
		if ((*n)++ < MAX_WARNINGS)
			menv_buf_addf(all,
			              "%s'%s': skipped the record '%s': %s (conda refuses to load "
			              "the whole file)",
			              all->len ? "\n" : "", path, loc ? loc : "?", e.msg);
		repo_free_solvable(f->repo, p, 1);
	}
	map_free(&seen);
	map_free(&bad);
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
static bool drop_bad_depends(struct filerepo *f, Id p, const char *doc, size_t size, size_t off,
                             const char *path, struct menv_buf *all, size_t *n)
{
	struct menv_error e = {0};
	json_t *rec = NULL;
	const char *why = NULL;
	Solvable *sv = pool_id2solvable(f->repo->pool, p);
	const char *loc = solvable_lookup_str(sv, SOLVABLE_MEDIAFILE);

	if (sv->requires || off >= size)
		return false;
	if (menv_json_parse(doc + off, size - off, JSON_DISABLE_EOF_CHECK, loc ? loc : "?", &rec,
	                    &e))
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

/* Whether `t` holds a control character (a newline, ESC). */
static bool has_control(const char *t)
{
	for (; t && *t; t++)
		if ((unsigned char)*t < 0x20 || *t == 0x7f)
			return true;
	return false;
}

/* A record whose depends or constrains hold a control character ("x\u001b[2Jy") is dropped
 * with a warning: its text would reach the terminal raw in a solve's problem tree and in
 * repoquery (conda's MatchSpec refuses it). Only looked at when the file holds a backslash
 * at all (JSON writes control characters as escapes), so a usual repodata costs one memchr.
 * True when it was dropped. */
static bool drop_control_deps(struct filerepo *f, Id p, const char *path, struct menv_buf *all,
                              size_t *n)
{
	Pool *pool = f->repo->pool;
	Solvable *sv = pool_id2solvable(pool, p);
	const Offset offs[2] = {sv->requires, sv->conflicts};
	const char *bad = NULL;
	for (int k = 0; k < 2 && !bad; k++)
		for (Id *d = offs[k] ? f->repo->idarraydata + offs[k] : NULL; d && *d && !bad; d++)
			if (has_control(pool_dep2str(pool, *d)))
				bad = pool_dep2str(pool, *d);
	if (!bad)
		return false;
	const char *loc = solvable_lookup_str(sv, SOLVABLE_MEDIAFILE);
	if ((*n)++ < MAX_WARNINGS) {
		char *shown = menv_utf8_escape(bad);
		menv_buf_addf(all,
		              "%s'%s': skipped the record '%s': its dependency '%s' holds a "
		              "control character",
		              all->len ? "\n" : "", path, loc ? loc : "?", shown);
		free(shown);
	}
	repo_free_solvable(f->repo, p, 1);
	return true;
}

/* Adds the warnings `w` holds, one a line (a repo's SOLVID_META after a .solv load or a
 * build). */
static void add_warning_lines(struct menv_solver *s, const char *w)
{
	while (w && *w) {
		const char *e = strchr(w, '\n');
		size_t len = e ? (size_t)(e - w) : strlen(w);
		/* one line of text: a record's key from the file may hold control characters */
		char *line = menv_xstrndup(w, len);
		menv_strvec_push_owned(&s->warnings, menv_utf8_escape(line));
		free(line);
		w += len + (e ? 1 : 0);
	}
}

/* Adds the warnings a repo's SOLVID_META holds (after a .solv load or a build). */
static void collect_warnings(struct menv_solver *s, Repo *repo)
{
	add_warning_lines(s, repo_lookup_str(repo, SOLVID_META, s->warnkey));
}

/* After libsolv's reader added the solvables from `from` on out of doc[0..size): drops the
 * records conda cannot take (with warnings, into `warn`), names each by its key and sets its
 * byte offset in the file, from `sorted` ("fn\0fileoffset:docoffset" strings sorted by fn,
 * `n` of them), into `data`. */
static void finish_records(struct menv_solver *s, struct filerepo *f, Id from, char **sorted,
                           size_t n, const char *doc, size_t size, Repodata *data, const char *path,
                           struct menv_buf *warn, size_t *nwarn)
{
	Pool *pool = s->pool;
	Id p;
	Solvable *sv;

	drop_unnamed(f, from, path, warn, nwarn);
	drop_bad_versions(f, from, path, warn, nwarn);
	bool escapes = memchr(doc, '\\', size) != NULL;
	FOR_REPO_SOLVABLES(f->repo, p, sv)
	{
		if (p < from)
			continue;
		if (escapes && drop_control_deps(f, p, path, warn, nwarn))
			continue;
		if ((p & 4095) == 0 && menv_solv_cancelled(s->cancel))
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
			hit = bsearch(&k, sorted, n, sizeof(*sorted), cmp_fn);
			if (hit && strcmp(k, loc))
				repodata_set_str(data, p, SOLVABLE_MEDIAFILE, k);
			free(k);
		}
		char *want = (char *)loc;
		if (!hit)
			hit = bsearch(&want, sorted, n, sizeof(*sorted), cmp_fn);
		if (hit) {
			char *end;
			size_t off = strtoull(*hit + strlen(*hit) + 1, &end, 10);
			size_t at = *end == ':' ? strtoull(end + 1, NULL, 10) : off;
			if (drop_bad_depends(f, p, doc, size, at, path, warn, nwarn))
				continue;
			repodata_set_num(data, p, s->offkey, off);
		}
		/* the build-version key ("build_number.rank.timestamp", conda's order after the
		 * version) is written by menv_solv_rank_variants for the names a solve reaches */
	}
	if (*nwarn > MAX_WARNINGS)
		menv_buf_addf(warn, "\n'%s': skipped %zu more records", path,
		              *nwarn - MAX_WARNINGS);
}

/* Runs libsolv's conda reader over the JSON doc[0..len) into f's repo. */
static int read_conda(struct menv_solver *s, struct filerepo *f, const char *doc, size_t len,
                      const char *path, struct menv_error *err)
{
	struct cstream cs = {.map = doc, .size = len, .cancel = s->cancel, .json = true};
	FILE *fp = cs_open(&cs, "r");
	int rc = 0;

	if (!fp)
		return menv_error_sys(err, MENV_EIO, "cannot read '%s'", path);
	if (repo_add_conda(f->repo, fp, 0))
		rc = menv_solv_cancelled(s->cancel) ? interrupted(path, err)
		                                    : menv_error_set(err, MENV_EPARSE, "%s: %s",
		                                                     path, pool_errstr(s->pool));
	fclose(fp);
	if (!rc && menv_solv_cancelled(s->cancel))
		rc = interrupted(path, err);
	return rc;
}

/* f->recs sized to the repo's solvables (new entries NULL). */
static void grow_recs(struct filerepo *f)
{
	size_t n = (size_t)(f->repo->end - f->repo->start);
	if (f->recs && n <= f->nrecs)
		return;
	f->recs = menv_xrealloc(f->recs, (n + 1) * sizeof(*f->recs));
	memset(f->recs + f->nrecs, 0, (n + 1 - f->nrecs) * sizeof(*f->recs));
	f->nrecs = n;
}

/* A pool of its own for libsolv's reader, with menv's keys, and a repo in it for f's records
 * (sf: a copy of f with that repo and no records of its own). */
static void scratch_init(struct menv_solver *scratch, struct filerepo *sf, const struct filerepo *f)
{
	scratch->pool = pool_create();
	pool_setdisttype(scratch->pool, DISTTYPE_CONDA);
	scratch->offkey = pool_str2id(scratch->pool, "menv:offset", 1);
	scratch->cachekey = pool_str2id(scratch->pool, "menv:cachekey", 1);
	scratch->baseurlkey = pool_str2id(scratch->pool, "menv:base_url", 1);
	scratch->warnkey = pool_str2id(scratch->pool, "menv:warnings", 1);
	*sf = *f;
	sf->recs = NULL;
	sf->nrecs = 0;
	sf->repo = repo_create(scratch->pool, f->repo->name);
	sf->repo->appdata = sf;
}

/* Writes repo as .solv bytes into out; 0 or an error naming path. */
static int write_repo(struct menv_solver *s, Repo *repo, const char *path, struct menv_buf *out,
                      struct menv_error *err)
{
	struct cstream cs = {.out = out, .cancel = s->cancel};
	FILE *fp = cs_open(&cs, "w");
	bool ok = fp && repo_write(repo, fp) == 0;
	ok = fp && fclose(fp) == 0 && ok;
	if (menv_solv_cancelled(s->cancel))
		return interrupted(path, err);
	if (!ok)
		return menv_error_set(err, MENV_EIO, "%s: cannot index its records", path);
	return 0;
}

int menv_solv_json_to_solv(struct menv_solver *s, struct filerepo *f, const char *doc, size_t len,
                           char **sorted, size_t n, struct menv_buf *out, struct menv_error *err)
{
	struct menv_solver scratch = {.cancel = s->cancel};
	struct filerepo sf;
	struct menv_buf warn = MENV_BUF_INIT;
	size_t nwarn = 0;

	scratch_init(&scratch, &sf, f);
	int rc = read_conda(&scratch, &sf, doc, len, f->path, err);
	if (!rc) {
		Repodata *data = repo_add_repodata(sf.repo, 0);
		if (sf.repo->end > sf.repo->start)
			repodata_extend_block(data, sf.repo->start, sf.repo->end - sf.repo->start);
		finish_records(&scratch, &sf, sf.repo->start, sorted, n, doc, len, data, f->path,
		               &warn, &nwarn);
		if (warn.len)
			repodata_set_str(data, SOLVID_META, scratch.warnkey, warn.buf);
		repodata_internalize(data);
		rc = menv_solv_cancelled(s->cancel)
		             ? interrupted(f->path, err)
		             : write_repo(&scratch, sf.repo, f->path, out, err);
	}
	menv_buf_release(&warn);
	pool_free(scratch.pool);
	return rc;
}

int menv_solv_add_solv(struct menv_solver *s, struct filerepo *f, const char *bytes, size_t len,
                       struct menv_error *err)
{
	Repo *repo = f->repo;
	int first = repo->nrepodata ? repo->nrepodata : 1;
	struct cstream cs = {.map = bytes, .size = len, .cancel = s->cancel};
	FILE *fp = cs_open(&cs, "r");

	if (!fp)
		return menv_error_sys(err, MENV_EIO, "cannot read '%s'", f->path);
	int bad = repo_add_solv(repo, fp, 0);
	fclose(fp);
	if (bad)
		return menv_solv_cancelled(s->cancel)
		               ? interrupted(f->path, err)
		               : menv_error_set(err, MENV_EIO, "%s: cannot index its records: %s",
		                                f->path, pool_errstr(s->pool));
	/* the warnings of these records only: an earlier read's are in the repodata before */
	for (int i = first; i < repo->nrepodata; i++)
		add_warning_lines(
		        s, repodata_lookup_str(repo_id2repodata(repo, i), SOLVID_META, s->warnkey));
	grow_recs(f);
	if (menv_solv_cancelled(s->cancel))
		return interrupted(f->path, err);
	return 0;
}

static int build_from_json(struct menv_solver *s, struct filerepo *f, const char *path,
                           const char *key, struct menv_error *err)
{
	struct scan_ctx c = {.s = s, .map = f->map, .size = f->size};
	int rc = read_conda(s, f, f->map, f->size, path, err);

	if (rc)
		return rc;
	if (menv_jsonscan_repodata(f->map, f->size, on_scan, &c) < 0) {
		rc = menv_error_set(err, MENV_EPARSE, "%s: not a repodata object", path);
		goto out;
	}
	/* sort (fn, offset) pairs by name to look them up per solvable */
	char **sorted = menv_xcalloc(c.n + 1, sizeof(*sorted));
	for (size_t i = 0; i < c.n; i++)
		sorted[i] = menv_xasprintf("%s%c%zu", c.fns[i], '\0', c.offs[i]);
	qsort(sorted, c.n, sizeof(*sorted), cmp_fn); /* "fn\0offset": strcmp sees only fn */
	if (!f->base)
		f->base = base_url_of(f->ch, f->subdir, c.has_info ? f->map + c.info_off : NULL,
		                      c.has_info ? f->size - c.info_off : 0);
	/* menv's attributes go into a second repodata: lookups prefer the newest one */
	Repodata *data = repo_add_repodata(f->repo, 0);
	repodata_extend_block(data, f->repo->start, f->repo->end - f->repo->start);
	struct menv_buf warn = MENV_BUF_INIT;
	size_t nwarn = 0;
	finish_records(s, f, f->repo->start, sorted, c.n, f->map, f->size, data, path, &warn,
	               &nwarn);
	for (size_t i = 0; i < c.n; i++)
		free(sorted[i]);
	free(sorted);
	/* the warnings stay in the repo's SOLVID_META for .solv loads */
	if (warn.len)
		repodata_set_str(data, SOLVID_META, s->warnkey, warn.buf);
	menv_buf_release(&warn);
	if (menv_solv_cancelled(s->cancel)) {
		rc = interrupted(path, err);
		goto out;
	}
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

/* The JSON of f into f->repo the way a later run reads it from the .solv: libsolv's reader
 * runs in a pool of its own, the repo is written as .solv bytes (kept at f->solv_path when
 * there is one), and those bytes are what f->repo reads. A solve then sees the same pool
 * whether the cache was warm or not: the .solv writer orders each solvable's dependencies
 * by its own string numbering, drops the records the build dropped and numbers strings in
 * its order, and libsolv's choice between two rules that say the same (which of a record's
 * missing dependencies a problem names) follows those orders. */
static int build_solv(struct menv_solver *s, struct filerepo *f, const char *path, const char *key,
                      struct menv_error *err)
{
	struct menv_solver scratch = {.cancel = s->cancel};
	struct filerepo sf;
	struct menv_buf bytes = MENV_BUF_INIT;
	int rc;

	scratch_init(&scratch, &sf, f);
	rc = build_from_json(&scratch, &sf, path, key, err);
	f->base = sf.base;
	if (!rc)
		rc = write_repo(&scratch, sf.repo, path, &bytes, err);
	pool_free(scratch.pool);
	if (!rc && f->solv_path) {
		struct menv_solv_part part = {bytes.buf, bytes.len};
		menv_solv_cache_write(f->solv_path, &part, 1, s->cancel);
	}
	if (!rc) {
		struct cstream cs = {.map = bytes.buf, .size = bytes.len, .cancel = s->cancel};
		FILE *fp = cs_open(&cs, "r");
		if (!fp || repo_add_solv(f->repo, fp, 0))
			rc = menv_solv_cancelled(s->cancel)
			             ? interrupted(path, err)
			             : menv_error_set(err, MENV_EIO,
			                              "%s: cannot index its records: %s", path,
			                              pool_errstr(s->pool));
		if (fp)
			fclose(fp);
	}
	menv_buf_release(&bytes);
	return rc;
}

char *menv_solv_base_url(const struct filerepo *f, const char *info, size_t len)
{
	return base_url_of(f->ch, f->subdir, info, len);
}

/* Loads every record of f: its .solv when the key matches, else libsolv's reader over the
 * JSON, then the .solv written. */
int menv_solv_load_full(struct menv_solver *s, struct filerepo *f, struct menv_error *err)
{
	const char *path = f->path, *solv_path = f->solv_path, *key = f->key;
	bool cached = false;
	int rc;

	const char *bytes;
	size_t len;
	if (solv_path && menv_solv_cache_map(solv_path, &bytes, &len)) {
		struct cstream cs = {.map = bytes, .size = len, .cancel = s->cancel};
		FILE *fp = menv_solv_bytes_plausible(bytes, len) ? cs_open(&cs, "r") : NULL;
		if (fp) {
			if (repo_add_solv(f->repo, fp, 0) == 0) {
				const char *k = repo_lookup_str(f->repo, SOLVID_META, s->cachekey);
				const char *b =
				        repo_lookup_str(f->repo, SOLVID_META, s->baseurlkey);
				cached = k && b && !strcmp(k, key);
				if (cached) {
					free(f->base);
					f->base = menv_xstrdup(b);
				}
			}
			fclose(fp);
			if (!cached)
				repo_empty(f->repo, 1);
		}
		menv_solv_cache_unmap(bytes, len);
		if (menv_solv_cancelled(s->cancel))
			return interrupted(solv_path, err);
	}
	if (!cached) {
		if (!f->size)
			return menv_error_set(err, MENV_EPARSE, "%s: empty file", path);
		rc = build_solv(s, f, path, key, err);
		if (rc)
			return rc;
	}
	collect_warnings(s, f->repo);
	grow_recs(f);
	return 0;
}

/* Files from this size on are loaded sparsely by default (MENV_SOLVER_LOAD=full|sparse
 * decides for every file): below it, a whole load from the .solv takes a few milliseconds. */
#define SPARSE_MIN_BYTES (4u << 20)

int menv_solver_add_repodata_file(struct menv_solver *s, const struct menv_channel *ch,
                                  const char *subdir, const char *path, const char *solv_path,
                                  struct menv_error *err)
{
	Pool *pool = s->pool;
	struct filerepo *f = menv_xcalloc(1, sizeof(*f));
	struct stat st;
	char key[128];
	int fd;

	f->ch = ch;
	f->fd = -1;
	f->subdir = menv_xstrdup(subdir);
	f->path = menv_xstrdup(path);
	f->solv_path = solv_path ? menv_xstrdup(solv_path) : NULL;
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
	f->fd = fd; /* a sparse load reads records with pread, the full one closes it */
	/* conda's and micromamba's key of a local file: size, mtime (ns) and inode */
	snprintf(key, sizeof(key), "menv-solv-4:%lld:%lld.%09ld:%llu", (long long)st.st_size,
	         (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
	f->key = menv_xstrdup(key);

	char *rname = menv_xasprintf("%s/%s", ch ? ch->name : "?", subdir);
	f->repo = repo_create(pool, rname);
	free(rname);
	f->repo->appdata = f;
	if (s->prio != MENV_PRIORITY_DISABLED)
		f->repo->priority = ch ? ch->priority : -s->nrepos;
	f->repo->subpriority = strcmp(subdir, "noarch") ? 1 : 0;
	s->nrepos++;

	const char *mode = getenv("MENV_SOLVER_LOAD");
	bool sparse = mode && !strcmp(mode, "sparse") ? true
	              : mode && !strcmp(mode, "full") ? false
	                                              : f->size >= SPARSE_MIN_BYTES;
	if (sparse && f->size) {
		s->nfilled++; /* SPARSE_MIN_BYTES of records */
		return menv_solv_sparse_open(s, f, err);
	}
	close(f->fd);
	f->fd = -1;
	int rc = menv_solv_load_full(s, f, err);
	s->nfilled += f->repo->nsolvables > 0;
	return rc;
}
