/*
 * pkgcache.c - the package cache (conda's pkgs_dirs layout): `<pkgs>/<fn>` package files,
 * extracted `<pkgs>/<dist>/` with `info/repodata_record.json`, and `urls.txt`.
 *
 * Invariant: whatever sits under its final name is complete and verified. Downloads go to
 * `<fn>.partial` (hashed while streaming) and are renamed after the checksum matched; a
 * `.partial` left by an interrupted run is continued with a Range request. Extraction goes to
 * `.<dist>.tmp-XXXXXX` and is renamed to `<dist>` once repodata_record.json (written last) is
 * there. The calling thread runs all downloads through the transfer engine (one curl multi
 * handle); verified files are queued to a pool of extraction threads as they arrive. The
 * first failure stops everything. One process at a time: flock on `<pkgs>/.menv.lock`.
 * Extracted entries left by conda or micromamba (same layout) are used when their
 * repodata_record.json agrees with the record (entry_matches).
 */
#include <dirent.h>
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

int menv_fetch_mkdir_p(const char *path, struct menv_error *err)
{
	char *p = menv_xstrdup(path);
	int rc = 0;

	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, menv_dir_mode()) < 0 && errno != EEXIST) {
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
	static const char *const exts[] = {".conda", ".tar.bz2"};
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

struct task {
	const struct menv_record *r;
	struct menv_hashes h;
	const char *from; /* the read-only cache holding the package file, or NULL: `<pkgs>` */
};

struct pool {
	const char *pkgs;
	menv_fetch_cb cb;
	void *ud;
	volatile int *cancel;
	const struct menv_fetch_opts *o; /* transfer options (oci:// mirrors resolved with them) */
	pthread_mutex_t lock;            /* queue, closed, rc, err */
	pthread_cond_t cond;
	pthread_mutex_t cb_lock; /* callbacks and urls.txt: one at a time */
	struct task *q;          /* extraction queue */
	size_t qn, qhead, qalloc;
	bool closed;       /* no more tasks will come */
	volatile int stop; /* a failure happened: stop everything */
	int rc;
	struct menv_error err;
};

static bool cancelled(const struct pool *p)
{
	return (p->cancel && *p->cancel) || p->stop;
}

static void emit(struct pool *p, enum menv_fetch_event ev, const struct menv_record *r)
{
	if (!p->cb)
		return;
	pthread_mutex_lock(&p->cb_lock);
	p->cb(p->ud, ev, r);
	pthread_mutex_unlock(&p->cb_lock);
}

/* Records the first failure and stops the rest. */
static void fail(struct pool *p, int rc, const struct menv_error *err)
{
	pthread_mutex_lock(&p->lock);
	if (!p->rc) {
		p->rc = rc;
		p->err = *err;
	}
	p->stop = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static void enqueue(struct pool *p, const struct menv_record *r, const struct menv_hashes *h,
                    const char *from)
{
	pthread_mutex_lock(&p->lock);
	if (p->qn == p->qalloc) {
		p->qalloc = p->qalloc ? p->qalloc * 2 : 16;
		p->q = menv_xrealloc(p->q, p->qalloc * sizeof(*p->q));
	}
	p->q[p->qn].r = r;
	p->q[p->qn].h = *h;
	p->q[p->qn].from = from;
	p->qn++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static const char *json_str(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static void set_str(json_t *obj, const char *key, const char *value)
{
	if (value)
		json_object_set_new(obj, key, json_string(value));
}

/* A non-empty string under `key`, or NULL (micromamba writes "" for an unknown hash). */
static const char *json_hash(json_t *obj, const char *key)
{
	const char *s = json_str(obj, key);
	return s && *s ? s : NULL;
}

/*
 * Whether an extracted `<dist>` holds this record, judged by its info/repodata_record.json the
 * way conda and micromamba judge their own cache entries (the file may have been written by
 * either): each of sha256, md5 and size that both the record and the entry carry must agree,
 * and at least one hash must be carried by both. So an entry of an older conda (md5 and size,
 * no sha256) counts by its md5, a modern one by its sha256. An entry with a disagreeing hash
 * or size, or one that cannot be checked (the record's hashes are not in it), is a miss: the
 * package is fetched and extracted again. A record without any hash trusts an entry made from
 * the same URL. `*complete` is set on a hit whose entry lacks a hash or size the record has.
 * With `all` (a lockfile's record, every hash of which must be the package's) an entry that
 * lacks a hash the record has cannot vouch for it: a miss (the file is verified again).
 */
static bool entry_matches(json_t *j, const struct menv_record *r, bool all, bool *complete)
{
	const char *sha256 = json_hash(j, "sha256"), *md5 = json_hash(j, "md5");
	json_t *size = json_object_get(j, "size");
	bool checked = false;

	*complete = false;
	if (all && ((r->sha256 && !sha256) || (r->md5 && !md5)))
		return false;
	if (r->sha256 && sha256) {
		if (strcasecmp(sha256, r->sha256))
			return false;
		checked = true;
	}
	if (r->md5 && md5) {
		if (strcasecmp(md5, r->md5))
			return false;
		checked = true;
	}
	if (r->size >= 0 && json_is_integer(size) && json_integer_value(size) != r->size)
		return false;
	if (!checked) {
		if (r->sha256 || r->md5)
			return false;
		/* no checksum to compare: trust an entry made from the same URL (the cache keeps
		 * it redacted, write_record) */
		const char *url = json_str(j, "url");
		char *want = r->url ? menv_url_redact(r->url) : NULL;
		bool same = !want || (url && !strcmp(url, want));
		free(want);
		return same;
	}
	*complete = (r->sha256 && !sha256) || (r->md5 && !md5) ||
	            (r->size >= 0 && !json_is_integer(size));
	return true;
}

/* Whether an extracted `<dist>` holds this record (entry_matches). A hit that lacks a hash or
 * the size the record has gets them added to its repodata_record.json (keeping every other
 * key), so that the conda-meta record made from it carries them; that is best effort, as
 * another tool's cache may be read-only. */
static bool extracted_matches(const char *dir, const struct menv_record *r, bool all)
{
	char *path = menv_xasprintf("%s/info/repodata_record.json", dir);
	json_t *j = menv_pkgmeta_load(path, NULL), *shared;
	bool ok = false, complete = false;
	char *text = NULL;

	if (!json_is_object(j))
		goto out;
	ok = entry_matches(j, r, all, &complete);
	if (!ok || !complete)
		goto out;
	shared = j; /* read-only: completed in a copy */
	j = json_copy(shared);
	json_decref(shared);
	if (r->sha256 && !json_hash(j, "sha256"))
		set_str(j, "sha256", r->sha256);
	if (r->md5 && !json_hash(j, "md5"))
		set_str(j, "md5", r->md5);
	if (r->size >= 0 && !json_is_integer(json_object_get(j, "size")))
		json_object_set_new(j, "size", json_integer(r->size));
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (text) {
		menv_write_file_atomic(path, text, strlen(text), NULL);
		menv_pkgmeta_forget(path);
	}
out:
	free(text);
	json_decref(j);
	free(path);
	return ok;
}

/* menv_pkgcache_has, every hash of r checked where `all` (entry_matches). */
static bool has_entry(const char *pkgs_dir, const struct menv_record *r, bool all)
{
	char *dir = menv_pkgcache_dir(pkgs_dir, r);
	char *path = menv_xasprintf("%s/info/repodata_record.json", dir);
	json_t *j = menv_pkgmeta_load(path, NULL);
	bool complete, ok = json_is_object(j) && entry_matches(j, r, all, &complete) &&
	                    menv_pkgcache_intact(dir);

	json_decref(j);
	free(path);
	free(dir);
	return ok;
}

bool menv_pkgcache_has(const char *pkgs_dir, const struct menv_record *r)
{
	return has_entry(pkgs_dir, r, false);
}

/* Compares a file's hashes with the record: its sha256 (md5 where it has no sha256, and its
 * md5 too where `all`: a lockfile's entry, every hash of which must be the file's), then its
 * size. Returns 0 or MENV_ECHECKSUM naming both. `h` holds an md5 where one is compared. */
static int verify_from(const struct menv_record *r, const struct menv_hashes *h, const char *from,
                       bool all, struct menv_error *err)
{
	char src[1024] = "";
	bool sha_ok = !r->sha256 || !strcasecmp(r->sha256, h->sha256);

	if (from)
		snprintf(src, sizeof(src), " from '%s'", from);
	if (!sha_ok)
		return menv_error_set(
		        err, MENV_ECHECKSUM,
		        "sha256 mismatch for '%s'%s: expected "
		        "%s, got %s%s",
		        r->fn, src, r->sha256, h->sha256,
		        all && r->md5 && !strcasecmp(r->md5, h->md5) ? " (its md5 matches)" : "");
	if ((!r->sha256 || all) && r->md5 && strcasecmp(r->md5, h->md5))
		return menv_error_set(err, MENV_ECHECKSUM,
		                      "md5 mismatch for '%s'%s: expected %s, "
		                      "got %s%s",
		                      r->fn, src, r->md5, h->md5,
		                      r->sha256 ? " (its sha256 matches)" : "");
	if (r->size >= 0 && r->size != h->size)
		return menv_error_set(err, MENV_ECHECKSUM,
		                      "size mismatch for '%s'%s: expected "
		                      "%lld bytes, got %lld",
		                      r->fn, src, (long long)r->size, (long long)h->size);
	return 0;
}

static int verify(const struct menv_record *r, const struct menv_hashes *h, bool all,
                  struct menv_error *err)
{
	return verify_from(r, h, NULL, all, err);
}

static int append_url(const char *pkgs, const char *url, struct menv_error *err)
{
	char *path = menv_xasprintf("%s/urls.txt", pkgs);
	char *safe = menv_url_redact(url); /* no credentials or tokens in the cache */
	char *line = menv_xasprintf("%s\n", safe);
	size_t len = strlen(line);
	int rc = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, menv_file_mode());

	if (fd < 0 || write(fd, line, len) != (ssize_t)len)
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", path);
	if (fd >= 0)
		close(fd);
	free(line);
	free(safe);
	free(path);
	return rc;
}

/* repodata_record.json: the record's keys plus where the file came from (redacted: a lock's
 * URL may hold the user's credentials or token, which never go to disk) and its hashes. */
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
	menv_json_set_url(j, "url", r->url);
	menv_json_set_url(j, "channel", r->channel_url);
	set_str(j, "subdir", r->subdir);
	set_str(j, "md5", r->md5 ? r->md5 : h->md5);
	set_str(j, "sha256", r->sha256 ? r->sha256 : h->sha256);
	json_object_set_new(j, "size", json_integer(r->size >= 0 ? r->size : h->size));
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text) {
		rc = menv_error_set(err, MENV_EPARSE, "cannot write the record of '%s'", r->fn);
		goto out;
	}
	if (mkdir(info, menv_dir_mode()) < 0 && errno != EEXIST) {
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

/* Whether the package extracted in `dir` is the record's name, version and build (its
 * info/index.json says so). */
static bool is_record_package(const char *dir, const struct menv_record *r)
{
	char *path = menv_xasprintf("%s/info/index.json", dir);
	json_t *j = menv_json_load_file(path, 0, NULL);
	bool same = json_is_object(j) && json_str(j, "name") && json_str(j, "version") &&
	            json_str(j, "build") && r->name && r->version && r->build &&
	            !strcmp(json_str(j, "name"), r->name) &&
	            !strcmp(json_str(j, "version"), r->version) &&
	            !strcmp(json_str(j, "build"), r->build);
	json_decref(j);
	free(path);
	return same;
}

/* Extracts `file` into a temporary directory and renames it to `<pkgs>/<dist>`; a lock's
 * record (`lock_record`) is written there only when the package is the one it names. */
static int extract(const char *pkgs, const char *dist, const char *file,
                   const struct menv_record *r, const struct menv_hashes *h, bool lock_record,
                   struct menv_error *err)
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
	/* mkdtemp's 0700 opened to the umask's modes; a setgid bit the folder took from a shared
	 * cache's folder is kept (its group then goes on to what is extracted inside) */
	struct stat tst;
	if (stat(tmp, &tst) < 0 || chmod(tmp, menv_dir_mode() | (tst.st_mode & S_ISGID)) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot chmod '%s'", tmp);
		goto out;
	}
	rc = menv_archive_extract(file, tmp, err);
	if (!rc && (!lock_record || is_record_package(tmp, r)))
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
	/* a new folder: what was parsed of the one it replaced is forgotten */
	for (int i = 0; i < 2; i++) {
		char *p = menv_xasprintf("%s/info/%s", dir,
		                         i ? "repodata_record.json" : "paths.json");
		menv_pkgmeta_forget(p);
		free(p);
	}
	menv_paths_unref(menv_paths_made(dir)); /* its compact paths.json, for the link */
out:
	if (made)
		menv_fetch_rmtree(tmp, NULL);
	free(dir);
	free(tmp);
	return rc;
}

/* Whether `<pkgs>/<fn>` is there with the record's checksums (each of them where `all`). A
 * regular file that differs stays until a verified download is renamed over it (a failed
 * one leaves the cache as it was); anything else there is removed. With `all`, a file that
 * one of the record's two hashes names and the other does not is the package, and the record
 * (a lockfile's entry) is wrong: MENV_ECHECKSUM, the file kept. */
static int have_verified_file(const char *file, const struct menv_record *r, bool all, bool *ok,
                              struct menv_hashes *h, struct menv_error *err)
{
	struct menv_error ignored, v = {0};
	struct stat st;
	int rc = 0;

	*ok = false;
	if (lstat(file, &st) < 0)
		return 0;
	if (!S_ISREG(st.st_mode))
		return menv_fetch_rmtree(file, err); /* fetched again */
	if ((rc = menv_hash_file(file, h, &ignored)) == MENV_EINTR)
		return menv_error_set(err, MENV_EINTR, "%s", ignored.msg); /* the file stays */
	if (rc == 0 && verify(r, h, all, &v) == 0) {
		*ok = true;
		return 0;
	}
	if (rc == 0 && all && r->sha256 && r->md5 &&
	    !strcasecmp(r->sha256, h->sha256) != !strcasecmp(r->md5, h->md5)) {
		*err = v; /* verify's message, naming the record's wrong hash */
		return v.code;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Extraction workers                                                                        */

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		struct task t;
		struct menv_error err = {0, 0, ""};
		char *dist, *file;
		int rc;

		pthread_mutex_lock(&p->lock);
		while (p->qhead == p->qn && !p->closed && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->stop || p->qhead == p->qn) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		t = p->q[p->qhead++];
		pthread_mutex_unlock(&p->lock);

		if (p->cancel && *p->cancel) {
			menv_error_set(&err, MENV_EINTR, "interrupted");
			fail(p, MENV_EINTR, &err);
			break;
		}
		dist = dist_of(t.r);
		file = menv_xasprintf("%s/%s", t.from ? t.from : p->pkgs, t.r->fn);
		rc = extract(p->pkgs, dist, file, t.r, &t.h, p->o && p->o->lock_records, &err);
		free(file);
		free(dist);
		if (rc) {
			menv_error_prefix(&err, "while extracting '%s'", t.r->fn);
			fail(p, rc, &err);
			break;
		}
		emit(p, MENV_FETCH_EXTRACTED, t.r);
	}
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Downloads                                                                                 */

struct dl {
	struct pool *pool;
	const struct menv_record *r;
	char *file, *tmp;
	int fd;
	struct menv_hasher h;
	bool hashing;
	bool full_retry; /* already started over once after a failed resume */
	bool finished;
	char *auth;       /* an oci:// package: the Authorization header of its blob */
	char *oci_sha256; /* ... and its layer's digest, checked as the record's sha256 is */
	size_t mirror;    /* the mirror of the record's channel being tried (mirrored_channels) */
	struct menv_xfer x;
};

static int partial_sink(void *ud, const void *data, size_t len)
{
	struct dl *d = ud;
	const char *s = data;

	menv_hasher_update(&d->h, data, len);
	while (len > 0) {
		ssize_t w = write(d->fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

static int partial_restart(void *ud)
{
	struct dl *d = ud;

	if (ftruncate(d->fd, 0) < 0 || lseek(d->fd, 0, SEEK_SET) < 0)
		return -1;
	if (d->hashing)
		menv_hasher_release(&d->h);
	menv_hasher_init_md5(&d->h, !d->r->sha256 || !d->r->md5 || d->pool->o->all_hashes);
	d->hashing = true;
	return 0;
}

/* Opens `<fn>.partial`, keeping the bytes of an earlier run when they can be continued (the
 * record's size or hash is known, and they are fewer than its size); hashes them. */
static int open_partial(struct dl *d, int64_t *offset, struct menv_error *err)
{
	const struct menv_record *r = d->r;
	struct stat st;
	char buf[65536];
	int64_t have = 0;
	ssize_t got;

	*offset = 0;
	d->fd = open(d->tmp, O_RDWR | O_CREAT | O_CLOEXEC, menv_file_mode());
	if (d->fd < 0)
		return menv_error_sys(err, MENV_EIO, "cannot create '%s'", d->tmp);
	/* md5 too only where the record lacks one of the two (0.4 s of CPU for the 180 MB of
	 * the toolchain environment) */
	menv_hasher_init_md5(&d->h, !r->sha256 || !r->md5 || d->pool->o->all_hashes);
	d->hashing = true;
	if (fstat(d->fd, &st) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot stat '%s'", d->tmp);
	if (st.st_size > 0 && (r->sha256 || r->md5 || r->size > 0) &&
	    (r->size < 0 || st.st_size < r->size)) {
		while ((got = read(d->fd, buf, sizeof(buf))) > 0) {
			if (menv_cancelled()) {
				d->x.rc = MENV_EINTR; /* kept for the next run (dl_release) */
				return menv_error_set(err, MENV_EINTR, "interrupted");
			}
			menv_hasher_update(&d->h, buf, (size_t)got);
			have += got;
		}
		if (got < 0)
			return menv_error_sys(err, MENV_EIO, "cannot read '%s'", d->tmp);
		*offset = have;
		return 0;
	}
	if (partial_restart(d) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot truncate '%s'", d->tmp);
	return 0;
}

char *menv_pkgcache_url(const struct menv_record *r, const struct menv_fetch_opts *o)
{
	const struct menv_channel *c = r->channel;
	char *prefix, *url;
	size_t bl, pl;

	if (!c || !(c->token || c->auth)) {
		/* a lock's URL: its channel's credentials are where the user put them */
		const struct menv_channel *k =
		        o ? menv_channel_credentials_for(r->url, o->creds, o->ncreds) : NULL;
		c = k ? k : c;
	}
	if (!c || !(c->token || c->auth) || !c->base_url || !c->location)
		return menv_xstrdup(r->url);
	bl = strlen(c->base_url);
	/* a tail that leaves the channel once normalized ("/../other") goes without them */
	if (strncmp(r->url, c->base_url, bl) || (r->url[bl] != '/' && r->url[bl]) ||
	    menv_url_path_climbs(r->url + bl))
		return menv_xstrdup(r->url);
	prefix = menv_channel_subdir_url(c, NULL, true);
	pl = strlen(prefix);
	while (pl > 0 && prefix[pl - 1] == '/')
		prefix[--pl] = '\0';
	url = menv_xasprintf("%s%s", prefix, r->url + bl);
	free(prefix);
	return url;
}

/* The URL of `r` at mirror `k` of its channel (mamba 2's mirrored_channels: the record's URL
 * with the channel's base replaced by the mirror), or NULL past the last one. A channel
 * without mirrors has one place, the record's own URL. */
static char *mirror_url(const struct menv_record *r, size_t k, const struct menv_fetch_opts *o)
{
	const struct menv_channel *c = r->channel;
	size_t bl;

	if (!c || !c->mirrors.n || !c->base_url)
		return k == 0 ? menv_pkgcache_url(r, o) : NULL;
	bl = strlen(c->base_url);
	if (strncmp(r->url, c->base_url, bl) || r->url[bl] != '/')
		return k == 0 ? menv_pkgcache_url(r, o) : NULL;
	if (k >= c->mirrors.n)
		return NULL;
	return menv_xasprintf("%s%s", c->mirrors.v[k], r->url + bl);
}

/* Points the transfer of `d` at d->mirror, or the next mirror while one cannot be used (an
 * oci:// one whose manifest cannot be read). An oci:// package is its layer's blob, checked
 * against the layer's digest (and the record's sha256). Returns 0 or the last mirror's error. */
static int dl_target(struct dl *d, const struct menv_fetch_opts *o, struct menv_error *e)
{
	const struct menv_record *r = d->r;
	int rc = 0;

	for (;; d->mirror++) {
		char *url = mirror_url(r, d->mirror, o);
		char *blob = NULL;

		if (!url)
			return rc ? rc
			          : menv_error_set(e, MENV_ENOTFOUND, "no URL for '%s'", r->fn);
		free(d->auth), d->auth = NULL;
		free(d->oci_sha256), d->oci_sha256 = NULL;
		rc = 0;
		if (menv_oci_is_url(url)) {
			rc = menv_oci_package_blob(url, r->name, r->version, r->build, o, &blob,
			                           &d->auth, &d->oci_sha256, e);
			if (!rc && r->sha256 && strcasecmp(r->sha256, d->oci_sha256))
				rc = menv_error_set(e, MENV_ECHECKSUM,
				                    "sha256 mismatch for '%s': the registry's "
				                    "digest is %s, its record says %s",
				                    r->fn, d->oci_sha256, r->sha256);
		}
		if (rc) {
			free(url);
			continue;
		}
		free(d->x.url);
		free(d->x.shown);
		d->x.url = blob ? blob : menv_xstrdup(url);
		d->x.shown = menv_url_redact(url);
		d->x.authorization = d->auth;
		free(url);
		return 0;
	}
}

/* The transfer ended: verify, rename, queue the extraction. Returns 1 to start over. */
static int dl_done(void *ud, struct menv_xfer *x)
{
	struct dl *d = ud;
	struct pool *p = d->pool;
	struct menv_error err = {0};
	struct menv_hashes h;
	int rc = x->rc;

	if (rc) {
		err = x->err;
		goto next_mirror;
	}
	menv_hasher_final(&d->h, &h);
	d->hashing = false;
	if (close(d->fd) < 0) {
		d->fd = -1;
		rc = menv_error_sys(&err, MENV_EIO, "cannot write '%s'", d->tmp);
		goto out;
	}
	d->fd = -1;
	rc = verify_from(d->r, &h, x->shown, d->pool->o->all_hashes, &err);
	if (!rc && d->oci_sha256 && strcmp(d->oci_sha256, h.sha256))
		rc = menv_error_set(&err, MENV_ECHECKSUM,
		                    "sha256 mismatch for '%s' from '%s': its oci digest is %s, got "
		                    "%s",
		                    d->r->fn, x->shown, d->oci_sha256, h.sha256);
	if (rc && x->resumed_at > 0 && !d->full_retry) {
		/* the kept bytes were not the start of this file: fetch it whole */
		d->full_retry = true;
		d->fd = open(d->tmp, O_RDWR | O_TRUNC | O_CLOEXEC);
		if (d->fd >= 0)
			return 1;
		rc = menv_error_sys(&err, MENV_EIO, "cannot open '%s'", d->tmp);
	}
	if (rc)
		goto next_mirror;
	if (rename(d->tmp, d->file) < 0) {
		rc = menv_error_sys(&err, MENV_EIO, "cannot rename '%s' to '%s'", d->tmp, d->file);
		goto out;
	}
	pthread_mutex_lock(&p->cb_lock);
	rc = append_url(p->pkgs, d->r->url, &err);
	pthread_mutex_unlock(&p->cb_lock);
	if (rc)
		goto out;
	d->finished = true;
	emit(p, MENV_FETCH_DOWNLOADED, d->r);
	enqueue(p, d->r, &h, NULL);
	return 0;
next_mirror:
	/* mirrored_channels: the next mirror, from byte 0 */
	if (rc != MENV_EINTR && d->r->channel && d->mirror + 1 < d->r->channel->mirrors.n) {
		struct menv_error e2 = {0};
		d->mirror++;
		if (d->fd < 0)
			d->fd = open(d->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
			             menv_file_mode());
		if (d->fd >= 0 && dl_target(d, p->o, &e2) == 0) {
			d->full_retry = false;
			return 1;
		}
	}
out:
	x->rc = rc;
	x->err = err;
	if (rc != MENV_EINTR)
		fail(p, rc, &err);
	return 0;
}

/* Closes a download; its `.partial` stays only when a later run can continue it. */
static void dl_release(struct dl *d)
{
	if (d->fd >= 0)
		close(d->fd);
	if (d->hashing)
		menv_hasher_release(&d->h);
	if (!d->finished && d->tmp) {
		/* interrupted (Ctrl-C): the next run continues it; any other failure leaves
		 * nothing behind */
		bool keep = d->x.rc == MENV_EINTR && d->pool->cancel && *d->pool->cancel &&
		            (d->r->sha256 || d->r->md5 || d->r->size > 0);
		if (!keep)
			unlink(d->tmp);
	}
	menv_xfer_release(&d->x);
	free(d->file);
	free(d->tmp);
	free(d->auth);
	free(d->oci_sha256);
}

/* ---------------------------------------------------------------------------------------- */
/* Read-only caches                                                                          */

/* Whether an entry of `dirs` other than `pkgs` holds the record extracted and intact: those
 * before `pkgs` in the list (`before`), or those after it. Nothing is written there. */
static bool read_only_has(const struct menv_strvec *dirs, const char *pkgs,
                          const struct menv_record *r, bool before, bool all)
{
	bool seen = false;

	for (size_t i = 0; dirs && i < dirs->n; i++) {
		if (!strcmp(dirs->v[i], pkgs)) {
			seen = true;
			if (before)
				return false;
			continue;
		}
		if ((before || seen) && has_entry(dirs->v[i], r, all))
			return true;
	}
	return false;
}

/* The first entry of `dirs` other than `pkgs` holding the record's package file with its
 * checksums (each of them where `all`; hashes into *h), or NULL. Borrowed from `dirs`. A
 * stale file stays there. */
static const char *read_only_file(const struct menv_strvec *dirs, const char *pkgs,
                                  const struct menv_record *r, bool all, struct menv_hashes *h)
{
	struct menv_error ignored;

	for (size_t i = 0; dirs && i < dirs->n; i++) {
		if (!strcmp(dirs->v[i], pkgs))
			continue;
		char *file = menv_xasprintf("%s/%s", dirs->v[i], r->fn);
		struct stat st;
		bool ok = stat(file, &st) == 0 && S_ISREG(st.st_mode) &&
		          menv_hash_file(file, h, &ignored) == 0 &&
		          verify(r, h, all, &ignored) == 0;
		free(file);
		if (ok)
			return dirs->v[i];
	}
	return NULL;
}

char *menv_pkgcache_locate(const char *pkgs_dir, const struct menv_strvec *dirs,
                           const struct menv_record *r)
{
	for (size_t i = 0; dirs && i < dirs->n; i++) {
		/* the cache written: checked only when a later entry could hold it instead (the
		 * common single cache costs nothing) */
		if (!strcmp(dirs->v[i], pkgs_dir) &&
		    (i + 1 == dirs->n || menv_pkgcache_has(pkgs_dir, r)))
			break;
		if (strcmp(dirs->v[i], pkgs_dir) && menv_pkgcache_has(dirs->v[i], r))
			return menv_pkgcache_dir(dirs->v[i], r);
	}
	return menv_pkgcache_dir(pkgs_dir, r);
}

/* The names in folder `dir` into `names`: 1 when listed, 0 when it does not exist or is not
 * a folder (nothing can be found under it), -1 when it cannot be listed (look each up). */
static int list_names(const char *dir, struct menv_strset *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	while ((e = readdir(d)))
		menv_strset_add(names, e->d_name);
	closedir(d);
	return 1;
}

/* The records of one cache folder to check (menv_pkgcache_has), taken by a few threads. */
struct has_pool {
	const char *dir;
	const struct menv_record *const *recs;
	const size_t *todo; /* indices into recs */
	size_t n, next;     /* next: the next to take (atomic) */
	bool *has, all;
};

static void *has_worker(void *arg)
{
	struct has_pool *p = arg;
	for (;;) {
		size_t k = __atomic_fetch_add(&p->next, 1, __ATOMIC_SEQ_CST);
		if (k >= p->n)
			return NULL;
		p->has[p->todo[k]] = has_entry(p->dir, p->recs[p->todo[k]], p->all);
	}
}

/* Checks the pool's records on up to 4 threads (one for a few records): a large plan's
 * check is a stat of every file it will link and a parse of each paths.json, most of a
 * warm create's time on one core. Each record is written by the one thread that took it. */
static void has_parallel(struct has_pool *p)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t threads = cpus < 1 ? 1 : cpus > 4 ? 4 : (size_t)cpus;
	pthread_t tids[4];
	size_t started = 0;

	if (p->n < 16)
		threads = 1;
	for (; started + 1 < threads; started++)
		if (pthread_create(&tids[started], NULL, has_worker, p) != 0)
			break;
	menv_test_gate("MENV_TEST_GATE_CACHE_CHECK"); /* a test's Ctrl-C while threads check */
	has_worker(p);
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
}

void menv_pkgcache_has_each(const char *pkgs_dir, const struct menv_strvec *dirs,
                            const struct menv_record *const *recs, size_t n, bool all, bool *has,
                            bool *here)
{
	size_t *todo = menv_xcalloc(n + 1, sizeof(*todo));
	size_t ndirs = dirs ? dirs->n : 0;
	char **dists = menv_xcalloc(n + 1, sizeof(*dists));

	for (size_t i = 0; i < n; i++) {
		has[i] = false;
		if (here)
			here[i] = false;
		dists[i] = dist_of(recs[i]);
	}
	/* the entries of dirs in order, then pkgs_dir: each folder once */
	for (size_t k = 0; k <= ndirs; k++) {
		const char *dir = k < ndirs ? dirs->v[k] : pkgs_dir;
		bool again = false;
		for (size_t q = 0; q < k && !again; q++)
			again = !strcmp(dirs->v[q], dir);
		if (again)
			continue;
		struct menv_strset names = MENV_STRSET_INIT;
		int listed = list_names(dir, &names);
		struct has_pool p = {
		        .dir = dir, .recs = recs, .todo = todo, .has = has, .all = all};
		for (size_t i = 0; listed && i < n; i++)
			if (!has[i] && (listed < 0 || !dists[i][0] || strchr(dists[i], '/') ||
			                menv_strset_has(&names, dists[i])))
				todo[p.n++] = i;
		has_parallel(&p);
		for (size_t q = 0; here && q < p.n; q++)
			if (has[todo[q]] && !strcmp(dir, pkgs_dir))
				here[todo[q]] = true;
		menv_strset_clear(&names);
	}
	for (size_t i = 0; i < n; i++)
		free(dists[i]);
	free(dists);
	free(todo);
}

/* ---------------------------------------------------------------------------------------- */
/* The pool                                                                                  */

/* `.<dist>.tmp-XXXXXX` folders of extractions that a killed process left: under the cache
 * lock no other process is extracting, so they are removed. */
static void remove_stale_extractions(const char *pkgs)
{
	DIR *d = opendir(pkgs);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		const char *t = strstr(de->d_name, ".tmp-");
		if (de->d_name[0] != '.' || !t || strlen(t) != 11)
			continue;
		char *p = menv_xasprintf("%s/%s", pkgs, de->d_name);
		menv_fetch_rmtree(p, NULL);
		free(p);
	}
	if (d)
		closedir(d);
}

long menv_flock_holder(int fd, bool pid_in_file)
{
	struct stat sb;
	long pid = 0;
	char line[256];

	if (fstat(fd, &sb) < 0)
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 4242 00:2e:1234567 0 EOF"; "1: -> FLOCK ..." is a waiter */
	FILE *f = fopen("/proc/locks", "re");
	while (f && !pid && fgets(line, sizeof(line), f)) {
		char kind[16], mode[16], rw[16];
		unsigned maj, mnr;
		unsigned long ino;
		long p;
		const char *c = strchr(line, ':');
		if (!c || strstr(line, "->"))
			continue;
		if (sscanf(c + 1, "%15s %15s %15s %ld %x:%x:%lu", kind, mode, rw, &p, &maj, &mnr,
		           &ino) == 7 &&
		    !strcmp(kind, "FLOCK") && ino == (unsigned long)sb.st_ino && p != getpid())
			pid = p;
	}
	if (f)
		fclose(f);
	if (!pid && pid_in_file) {
		char buf[32] = {0};
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n > 0)
			pid = strtol(buf, NULL, 10);
	}
	return pid > 0 ? pid : 0;
}

void menv_flock_note_pid(int fd)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) < 0)
		return; /* best effort: the pid only names the holder to those who wait */
}

/* flock(`op`) on `<dir>/<name>` (made when missing) into `*fd`, waiting for it (`waiting`,
 * when not NULL, is told once before that: `what` then "held by pid N" when the holder is
 * known, else the lock's path),
 * Ctrl-C (`*cancel`) ending the wait. An exclusive holder writes its pid into the file;
 * `excl_only`: every holder of this lock takes it exclusively (so the pid in the file is the
 * holder's). */
static int flock_file(const char *dir, const char *name, int op, bool excl_only,
                      volatile int *cancel, void (*waiting)(void *ud, const char *msg), void *ud,
                      const char *what, int *fd, struct menv_error *err)
{
	char *path = menv_xasprintf("%s/%s", dir, name);
	int rc = 0;

	*fd = menv_open_lockfile(path);
	if (*fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot open the lock '%s'", path);
		goto out;
	}
	if (flock(*fd, op | LOCK_NB) == 0)
		goto locked;
	if (waiting) {
		long pid = menv_flock_holder(*fd, excl_only || op == LOCK_SH);
		char *msg = pid ? menv_xasprintf("%s held by pid %ld", what, pid)
		                : menv_xasprintf("%s '%s'", what, path);
		waiting(ud, msg);
		free(msg);
	}
	while (flock(*fd, op) < 0) {
		if (errno == EINTR && !(cancel && *cancel))
			continue;
		rc = errno == EINTR
		             ? menv_error_set(err, MENV_EINTR,
		                              "interrupted while waiting for the lock '%s'", path)
		             : menv_error_sys(err, MENV_EIO, "cannot lock '%s'", path);
		close(*fd);
		*fd = -1;
		goto out;
	}
locked:
	if (op == LOCK_EX)
		menv_flock_note_pid(*fd);
out:
	free(path);
	return rc;
}

int menv_pkgcache_lock(const char *pkgs, volatile int *cancel,
                       void (*waiting)(void *ud, const char *msg), void *ud, int *fd,
                       struct menv_error *err)
{
	return flock_file(pkgs, ".menv.lock", LOCK_EX, true, cancel, waiting, ud,
	                  "waiting for the package cache lock", fd, err);
}

int menv_pkgcache_use(const char *pkgs_dir, bool exclusive, volatile int *cancel,
                      void (*waiting)(void *ud, const char *msg), void *ud, int *fd,
                      struct menv_error *err)
{
	*fd = -1;
	if (menv_fetch_mkdir_p(pkgs_dir, err))
		return err->code;
	return flock_file(pkgs_dir, ".menv-users.lock", exclusive ? LOCK_EX : LOCK_SH, false,
	                  cancel, waiting, ud,
	                  exclusive ? "waiting for the environments that use the package cache "
	                              "(a create or install is linking from it): its users lock"
	                            : "waiting for menv clean to finish with the package cache: "
	                              "its users lock",
	                  fd, err);
}

void menv_pkgcache_unuse(int fd)
{
	if (fd >= 0)
		close(fd);
}

int menv_pkgcache_trylock(const char *pkgs_dir, int *fd, struct menv_error *err)
{
	char *path = menv_xasprintf("%s/.menv.lock", pkgs_dir);
	int rc = 0;

	*fd = menv_open_lockfile(path);
	if (*fd < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot open the lock '%s'", path);
	else if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		rc = menv_error_set(err, MENV_ELOCKED, "the package cache lock '%s' is busy", path);
		close(*fd);
		*fd = -1;
	} else
		menv_flock_note_pid(*fd);
	free(path);
	return rc;
}

int menv_pkgcache_fetch_opts(const char *pkgs_dir, struct menv_record *const *recs, size_t n,
                             const struct menv_fetch_opts *o_in, menv_fetch_cb cb, void *ud,
                             struct menv_error *err)
{
	struct menv_fetch_opts dflt;
	const struct menv_fetch_opts *o = o_in;
	struct pool p = {.pkgs = pkgs_dir, .cb = cb, .ud = ud};
	pthread_t *tids = NULL;
	struct dl *dls = NULL;
	struct menv_xfer **xs = NULL;
	size_t *todo = NULL, ntodo = 0, ndl = 0, started = 0, want;
	int lockfd = -1, rc;

	if (!o) {
		menv_fetch_opts_init(&dflt);
		o = &dflt;
	}
	p.o = o;
	p.cancel = o->cancel;
	if (n == 0)
		return 0;
	/* a file name listed twice is fetched once (two transfers would share `<fn>.partial`) */
	todo = menv_xcalloc(n, sizeof(*todo));
	struct menv_strset fns = MENV_STRSET_INIT;
	for (size_t i = 0; i < n; i++)
		if (!recs[i]->fn || menv_strset_add(&fns, recs[i]->fn))
			todo[ntodo++] = i;
	menv_strset_clear(&fns);
	rc = menv_fetch_mkdir_p(pkgs_dir, err);
	if (!rc)
		rc = menv_pkgcache_lock(pkgs_dir, o->cancel, o->lock_waiting, o->lock_waiting_ud,
		                        &lockfd, err);
	if (rc) {
		free(todo);
		return rc;
	}
	remove_stale_extractions(pkgs_dir);
	pthread_mutex_init(&p.lock, NULL);
	pthread_mutex_init(&p.cb_lock, NULL);
	pthread_cond_init(&p.cond, NULL);

	want = o->threads < 1 ? 1 : (size_t)o->threads;
	if (want > ntodo)
		want = ntodo;
	tids = menv_xcalloc(want + 1, sizeof(*tids));
	for (; started < want; started++)
		if (pthread_create(&tids[started], NULL, worker, &p) != 0)
			break;

	/* what the cache has; downloads for the rest */
	dls = menv_xcalloc(ntodo, sizeof(*dls));
	xs = menv_xcalloc(ntodo, sizeof(*xs));
	for (size_t k = 0; k < ntodo && !cancelled(&p); k++) {
		const struct menv_record *r = recs[todo[k]];
		struct menv_error e = {0};
		struct menv_hashes h;
		char *dist, *dir, *file, *url;
		const char *ro = NULL;
		bool have = false;
		int64_t offset = 0;
		struct dl *d;

		if (!r->fn || !r->fn[0] || strchr(r->fn, '/') || r->fn[0] == '.') {
			menv_error_set(&e, MENV_EPARSE,
			               "invalid file name '%s' in the record of "
			               "'%s'",
			               r->fn ? r->fn : "", r->name ? r->name : "?");
			fail(&p, MENV_EPARSE, &e);
			break;
		}
		dist = dist_of(r);
		dir = menv_xasprintf("%s/%s", pkgs_dir, dist);
		file = menv_xasprintf("%s/%s", pkgs_dir, r->fn);
		free(dist);
		if (read_only_has(o->pkgs_dirs, pkgs_dir, r, true, o->all_hashes) ||
		    (is_dir(dir) && extracted_matches(dir, r, o->all_hashes) &&
		     ((o->intact && o->intact[todo[k]]) || menv_pkgcache_intact(dir))) ||
		    read_only_has(o->pkgs_dirs, pkgs_dir, r, false, o->all_hashes)) {
			emit(&p, MENV_FETCH_CACHED, r);
			free(dir);
			free(file);
			continue;
		}
		free(dir);
		rc = have_verified_file(file, r, o->all_hashes, &have, &h, &e);
		if (!rc && !have && !r->url)
			rc = menv_error_set(&e, MENV_ENOTFOUND, "no URL to download '%s' from",
			                    r->fn);
		if (rc) {
			fail(&p, rc, &e);
			free(file);
			break;
		}
		if (!have && (ro = read_only_file(o->pkgs_dirs, pkgs_dir, r, o->all_hashes, &h)))
			have = true;
		if (have) {
			enqueue(&p, r, &h, ro);
			free(file);
			continue;
		}
		d = &dls[ndl++];
		d->pool = &p;
		d->r = r;
		d->fd = -1;
		d->file = file;
		d->tmp = menv_xasprintf("%s.partial", file);
		url = menv_pkgcache_url(r, o);
		menv_xfer_init(&d->x, url);
		free(url);
		rc = dl_target(d, o, &e);
		if (rc) {
			fail(&p, rc, &e);
			break;
		}
		rc = open_partial(d, &offset, &e);
		if (rc) {
			fail(&p, rc, &e);
			break;
		}
		d->x.sink = partial_sink;
		d->x.restart = partial_restart;
		d->x.done = dl_done;
		d->x.ud = d;
		d->x.offset = offset;
		d->x.expected = r->size > 0 ? r->size : 0;
		xs[ndl - 1] = &d->x;
	}
	if (!cancelled(&p) && ndl) {
		struct menv_error e = {0};
		int xrc = menv_xfer_run(xs, ndl, o, &p.stop, true, &e);
		if (xrc && !p.rc)
			fail(&p, xrc, &e);
	}
	pthread_mutex_lock(&p.lock);
	p.closed = true;
	pthread_cond_broadcast(&p.cond);
	pthread_mutex_unlock(&p.lock);
	if (started == 0 && !p.stop)
		worker(&p); /* no thread could start: extract here */
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	rc = p.rc;
	if (!rc && o->cancel && *o->cancel)
		rc = menv_error_set(&p.err, MENV_EINTR, "interrupted");
	if (rc && err)
		*err = p.err;
	for (size_t i = 0; i < ndl; i++)
		dl_release(&dls[i]);
	/* the duplicates: available now, like their first occurrence */
	for (size_t i = 0, k = 0; !rc && i < n; i++) {
		if (k < ntodo && todo[k] == i)
			k++;
		else
			emit(&p, MENV_FETCH_CACHED, recs[i]);
	}

	free(dls);
	free(xs);
	free(todo);
	free(tids);
	free(p.q);
	pthread_mutex_destroy(&p.lock);
	pthread_mutex_destroy(&p.cb_lock);
	pthread_cond_destroy(&p.cond);
	flock(lockfd, LOCK_UN);
	close(lockfd);
	return rc;
}

int menv_pkgcache_fetch(const char *pkgs_dir, struct menv_record *const *recs, size_t n,
                        int threads, menv_fetch_cb cb, void *ud, volatile int *cancel,
                        struct menv_error *err)
{
	struct menv_fetch_opts o;

	menv_fetch_opts_init(&o);
	o.threads = threads < 1 ? 1 : threads;
	o.cancel = cancel;
	return menv_pkgcache_fetch_opts(pkgs_dir, recs, n, &o, cb, ud, err);
}
