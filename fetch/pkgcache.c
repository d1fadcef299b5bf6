/*
 * pkgcache.c - the package cache (conda's pkgs_dirs layout): `<pkgs>/<fn>` package files,
 * extracted `<pkgs>/<dist>/` with `info/repodata_record.json`, and `urls.txt`.
 *
 * Invariant: whatever sits under its final name is complete and verified. Downloads go to
 * `<fn>.partial` (hashed while streaming) and are renamed after the checksum matched;
 * extraction goes to `.<dist>.tmp-XXXXXX` and is renamed to `<dist>` once
 * repodata_record.json (written last) is there. A pool of worker threads pulls records from
 * a shared index; the first failure stops new work. One process at a time: flock on
 * `<pkgs>/.menv.lock`.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* ---------------------------------------------------------------------------------------- */
/* File system helpers                                                                       */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int menv_fetch_rmtree(const char *path, struct menv_error *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0
				       : menv_error_sys(err, MENV_EIO, "cannot remove '%s'", path);
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) < 0 && errno != ENOENT)
			return menv_error_sys(err, MENV_EIO, "cannot remove '%s'", path);
		return 0;
	}
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return menv_error_sys(err, MENV_EIO, "cannot remove '%s'", path);
	return 0;
}

static int mkdir_p(const char *path, struct menv_error *err)
{
	char *p = menv_xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			rc = menv_error_sys(err, MENV_EIO, "cannot create the directory '%s'", p);
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "name-version-build": the file name without its package extension. */
static char *dist_of(const struct menv_record *r)
{
	static const char *const exts[] = { ".conda", ".tar.bz2" };
	const char *fn = r->fn;

	if (!fn)
		return menv_xasprintf("%s-%s-%s", r->name ? r->name : "",
				      r->version ? r->version : "", r->build ? r->build : "");
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t n = strlen(fn), m = strlen(exts[i]);
		if (n > m && !strcmp(fn + n - m, exts[i]))
			return menv_xstrndup(fn, n - m);
	}
	return menv_xstrdup(fn);
}

char *menv_pkgcache_dir(const char *pkgs_dir, const struct menv_record *r)
{
	char *dist = dist_of(r);
	char *dir = menv_xasprintf("%s/%s", pkgs_dir, dist);
	free(dist);
	return dir;
}

/* ---------------------------------------------------------------------------------------- */
/* One record                                                                                */

struct pool {
	const char *pkgs;
	struct menv_record *const *recs;
	size_t *todo;            /* indexes into recs: one per file name */
	size_t n, next;          /* n entries in todo */
	menv_fetch_cb cb;
	void *ud;
	volatile int *cancel;
	pthread_mutex_t lock;    /* next, rc, err */
	pthread_mutex_t cb_lock; /* callbacks and urls.txt: one at a time */
	int rc;
	struct menv_error err;
};

static bool cancelled(const struct pool *p)
{
	return p->cancel && *p->cancel;
}

static void emit(struct pool *p, enum menv_fetch_event ev, const struct menv_record *r)
{
	if (!p->cb)
		return;
	pthread_mutex_lock(&p->cb_lock);
	p->cb(p->ud, ev, r);
	pthread_mutex_unlock(&p->cb_lock);
}

static const char *json_str(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* Whether an extracted `<dist>` holds this record (its repodata_record.json hash agrees). */
static bool extracted_matches(const char *dir, const struct menv_record *r)
{
	char *path = menv_xasprintf("%s/info/repodata_record.json", dir);
	json_t *j = json_load_file(path, 0, NULL);
	const char *have;
	bool ok = false;

	if (!json_is_object(j))
		goto out;
	if (r->sha256) {
		have = json_str(j, "sha256");
		ok = have && !strcasecmp(have, r->sha256);
	} else if (r->md5) {
		have = json_str(j, "md5");
		ok = have && !strcasecmp(have, r->md5);
	} else {
		/* no checksum to compare: trust an entry made from the same URL */
		have = json_str(j, "url");
		ok = !r->url || (have && !strcmp(have, r->url));
	}
out:
	json_decref(j);
	free(path);
	return ok;
}

/* Compares a file's hashes with the record. Returns 0 or MENV_ECHECKSUM naming both. */
static int verify(const struct menv_record *r, const struct menv_hashes *h, struct menv_error *err)
{
	if (r->sha256 && strcasecmp(r->sha256, h->sha256))
		return menv_error_set(err, MENV_ECHECKSUM, "sha256 mismatch for '%s': expected %s, "
				      "got %s", r->fn, r->sha256, h->sha256);
	if (!r->sha256 && r->md5 && strcasecmp(r->md5, h->md5))
		return menv_error_set(err, MENV_ECHECKSUM, "md5 mismatch for '%s': expected %s, "
				      "got %s", r->fn, r->md5, h->md5);
	if (r->size >= 0 && r->size != h->size)
		return menv_error_set(err, MENV_ECHECKSUM, "size mismatch for '%s': expected %lld "
				      "bytes, got %lld", r->fn, (long long)r->size,
				      (long long)h->size);
	return 0;
}

struct partial {
	int fd;
	struct menv_hasher h;
};

static int partial_sink(void *ud, const void *data, size_t len)
{
	struct partial *p = ud;
	const char *s = data;

	menv_hasher_update(&p->h, data, len);
	while (len > 0) {
		ssize_t w = write(p->fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Downloads r->url to `<file>.partial`, verifies it, renames it to `file`. */
static int download(struct pool *pool, const struct menv_record *r, const char *file,
		    struct menv_hashes *h, struct menv_error *err)
{
	char *tmp = menv_xasprintf("%s.partial", file);
	struct partial p;
	int rc;

	p.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (p.fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create '%s'", tmp);
		goto out;
	}
	menv_hasher_init(&p.h);
	rc = menv_fetch_stream(r->url, partial_sink, &p, pool->cancel, err);
	if (rc) {
		menv_hasher_release(&p.h);
		close(p.fd);
		goto out;
	}
	menv_hasher_final(&p.h, h);
	if (close(p.fd) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", tmp);
		goto out;
	}
	rc = verify(r, h, err);
	if (rc)
		goto out;
	if (rename(tmp, file) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot rename '%s' to '%s'", tmp, file);
out:
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

static int append_url(const char *pkgs, const char *url, struct menv_error *err)
{
	char *path = menv_xasprintf("%s/urls.txt", pkgs);
	char *line = menv_xasprintf("%s\n", url);
	size_t len = strlen(line);
	int rc = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, line, len) != (ssize_t)len)
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", path);
	if (fd >= 0)
		close(fd);
	free(line);
	free(path);
	return rc;
}

static void set_str(json_t *obj, const char *key, const char *value)
{
	if (value)
		json_object_set_new(obj, key, json_string(value));
}

/* repodata_record.json: the record's keys plus where the file came from and its hashes. */
static int write_record(const char *dir, const struct menv_record *r, const struct menv_hashes *h,
			struct menv_error *err)
{
	json_t *j = r->json ? json_deep_copy(r->json) : json_object();
	char *info = menv_xasprintf("%s/info", dir);
	char *path = menv_xasprintf("%s/repodata_record.json", info);
	char *text = NULL;
	int rc = 0;

	if (!json_object_get(j, "name"))
		set_str(j, "name", r->name);
	if (!json_object_get(j, "version"))
		set_str(j, "version", r->version);
	if (!json_object_get(j, "build"))
		set_str(j, "build", r->build);
	set_str(j, "fn", r->fn);
	set_str(j, "url", r->url);
	set_str(j, "channel", r->channel_url);
	set_str(j, "subdir", r->subdir);
	set_str(j, "md5", r->md5 ? r->md5 : h->md5);
	set_str(j, "sha256", r->sha256 ? r->sha256 : h->sha256);
	json_object_set_new(j, "size", json_integer(r->size >= 0 ? r->size : h->size));
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text) {
		rc = menv_error_set(err, MENV_EPARSE, "cannot write the record of '%s'", r->fn);
		goto out;
	}
	if (mkdir(info, 0755) < 0 && errno != EEXIST) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create the directory '%s'", info);
		goto out;
	}
	rc = menv_write_file_atomic(path, text, strlen(text), err);
out:
	free(text);
	free(path);
	free(info);
	json_decref(j);
	return rc;
}

/* Extracts `file` into a temporary directory and renames it to `<pkgs>/<dist>`. */
static int extract(const char *pkgs, const char *dist, const char *file,
		   const struct menv_record *r, const struct menv_hashes *h, struct menv_error *err)
{
	char *tmp = menv_xasprintf("%s/.%s.tmp-XXXXXX", pkgs, dist);
	char *dir = menv_xasprintf("%s/%s", pkgs, dist);
	bool made = false;
	int rc;

	if (!mkdtemp(tmp)) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create a directory in '%s'", pkgs);
		goto out;
	}
	made = true;
	if (chmod(tmp, 0755) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot chmod '%s'", tmp);
		goto out;
	}
	rc = menv_archive_extract(file, tmp, err);
	if (!rc)
		rc = write_record(tmp, r, h, err);
	if (!rc)
		rc = menv_fetch_rmtree(dir, err);
	if (rc)
		goto out;
	if (rename(tmp, dir) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot rename '%s' to '%s'", tmp, dir);
		goto out;
	}
	made = false;
out:
	if (made)
		menv_fetch_rmtree(tmp, NULL);
	free(dir);
	free(tmp);
	return rc;
}

/* Whether `<pkgs>/<fn>` is there with the record's checksums; a stale one is removed. */
static int have_verified_file(const char *file, const struct menv_record *r, bool *ok,
			      struct menv_hashes *h, struct menv_error *err)
{
	struct menv_error ignored;
	struct stat st;

	*ok = false;
	if (lstat(file, &st) < 0)
		return 0;
	if (S_ISREG(st.st_mode) && menv_hash_file(file, h, &ignored) == 0 &&
	    verify(r, h, &ignored) == 0) {
		*ok = true;
		return 0;
	}
	return menv_fetch_rmtree(file, err); /* stale or corrupt: fetched again */
}

static int fetch_one(struct pool *pool, const struct menv_record *r, struct menv_error *err)
{
	char *dist = NULL, *dir = NULL, *file = NULL;
	struct menv_hashes h;
	bool have = false;
	int rc = 0;

	if (!r->fn || !r->fn[0] || strchr(r->fn, '/') || r->fn[0] == '.')
		return menv_error_set(err, MENV_EPARSE, "invalid file name '%s' in the record of "
				      "'%s'", r->fn ? r->fn : "", r->name ? r->name : "?");
	dist = dist_of(r);
	dir = menv_xasprintf("%s/%s", pool->pkgs, dist);
	file = menv_xasprintf("%s/%s", pool->pkgs, r->fn);

	if (is_dir(dir) && extracted_matches(dir, r)) {
		emit(pool, MENV_FETCH_CACHED, r);
		goto out;
	}
	rc = have_verified_file(file, r, &have, &h, err);
	if (rc)
		goto out;
	if (!have && !r->url) {
		rc = menv_error_set(err, MENV_ENOTFOUND, "no URL to download '%s' from", r->fn);
		goto out;
	}
	if (!have && cancelled(pool)) {
		rc = menv_error_set(err, MENV_EINTR, "interrupted");
		goto out;
	}
	if (!have) {
		rc = download(pool, r, file, &h, err);
		if (rc)
			goto out;
		pthread_mutex_lock(&pool->cb_lock);
		rc = append_url(pool->pkgs, r->url, err);
		pthread_mutex_unlock(&pool->cb_lock);
		if (rc)
			goto out;
		emit(pool, MENV_FETCH_DOWNLOADED, r);
	}
	if (cancelled(pool)) {
		rc = menv_error_set(err, MENV_EINTR, "interrupted");
		goto out;
	}
	rc = extract(pool->pkgs, dist, file, r, &h, err);
	if (rc)
		goto out;
	emit(pool, MENV_FETCH_EXTRACTED, r);
out:
	free(file);
	free(dir);
	free(dist);
	return rc;
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct menv_error err = { 0, 0, "" };

	for (;;) {
		size_t i;
		int rc;

		pthread_mutex_lock(&p->lock);
		if (p->rc || p->next >= p->n) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		if (cancelled(p)) {
			p->rc = menv_error_set(&p->err, MENV_EINTR, "interrupted");
			pthread_mutex_unlock(&p->lock);
			break;
		}
		i = p->todo[p->next++];
		pthread_mutex_unlock(&p->lock);

		rc = fetch_one(p, p->recs[i], &err);
		if (rc) {
			pthread_mutex_lock(&p->lock);
			if (!p->rc) {
				p->rc = rc;
				p->err = err;
			}
			pthread_mutex_unlock(&p->lock);
			break;
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* The pool                                                                                  */

static int lock_cache(const char *pkgs, volatile int *cancel, int *fd, struct menv_error *err)
{
	char *path = menv_xasprintf("%s/.menv.lock", pkgs);
	int rc = 0;

	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot open the lock '%s'", path);
		goto out;
	}
	while (flock(*fd, LOCK_EX) < 0) {
		if (errno == EINTR && !(cancel && *cancel))
			continue;
		rc = errno == EINTR ? menv_error_set(err, MENV_EINTR, "interrupted while waiting "
						     "for the lock '%s'", path)
				    : menv_error_sys(err, MENV_EIO, "cannot lock '%s'", path);
		close(*fd);
		*fd = -1;
		break;
	}
out:
	free(path);
	return rc;
}

int menv_pkgcache_fetch(const char *pkgs_dir, struct menv_record *const *recs, size_t n,
			int threads, menv_fetch_cb cb, void *ud, volatile int *cancel,
			struct menv_error *err)
{
	struct pool p = { .pkgs = pkgs_dir, .recs = recs, .cb = cb, .ud = ud, .cancel = cancel };
	pthread_t *tids = NULL;
	size_t started = 0, want;
	int lockfd = -1, rc;

	if (n == 0)
		return 0;
	/* a file name listed twice is fetched once (two workers would share `<fn>.partial`) */
	p.todo = menv_xcalloc(n, sizeof(*p.todo));
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t k = 0; k < p.n && !dup; k++)
			dup = recs[i]->fn && recs[p.todo[k]]->fn &&
			      !strcmp(recs[i]->fn, recs[p.todo[k]]->fn);
		if (!dup)
			p.todo[p.n++] = i;
	}
	rc = mkdir_p(pkgs_dir, err);
	if (!rc)
		rc = lock_cache(pkgs_dir, cancel, &lockfd, err);
	if (rc) {
		free(p.todo);
		return rc;
	}
	pthread_mutex_init(&p.lock, NULL);
	pthread_mutex_init(&p.cb_lock, NULL);

	want = threads < 1 ? 1 : (size_t)threads;
	if (want > p.n)
		want = p.n;
	if (want == 1) {
		worker(&p);
	} else {
		tids = menv_xcalloc(want, sizeof(*tids));
		for (; started < want; started++)
			if (pthread_create(&tids[started], NULL, worker, &p) != 0)
				break;
		if (started == 0)
			worker(&p); /* no thread could start: do the work here */
		for (size_t i = 0; i < started; i++)
			pthread_join(tids[i], NULL);
	}
	rc = p.rc;
	if (!rc && p.next < p.n && cancelled(&p))
		rc = menv_error_set(&p.err, MENV_EINTR, "interrupted");
	if (rc && err)
		*err = p.err;
	/* the duplicates: available now, like their first occurrence */
	for (size_t i = 0, k = 0; !rc && i < n; i++) {
		if (k < p.n && p.todo[k] == i)
			k++;
		else
			emit(&p, MENV_FETCH_CACHED, recs[i]);
	}

	free(p.todo);
	free(tids);
	pthread_mutex_destroy(&p.lock);
	pthread_mutex_destroy(&p.cb_lock);
	flock(lockfd, LOCK_UN);
	close(lockfd);
	return rc;
}
