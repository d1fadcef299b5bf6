/*
 * pkgmeta.c - the metadata files of extracted packages (info/paths.json,
 * info/repodata_record.json) parsed once per process: a create reads each package's
 * paths.json for the cache's check (every listed file still there, of its size) and again
 * for the link, and its repodata_record.json for the cache's check, the fetch's and the
 * PrefixRecord. Each entry is kept with the file's identity (device, inode, size, mtime and
 * ctime, from one stat) and handed out again only while the file still has it: a file
 * rewritten (an atomic rename makes a new inode) or changed in place is parsed again; menv's
 * own rewrites drop the entry (menv_pkgmeta_forget), since a freed inode number can come
 * back with the same size and a timestamp of the same clock tick.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

struct meta_entry {
	char *path;
	struct stat st;
	json_t *json;
	struct menv_pkgfile_st *files; /* menv_pkgmeta_keep_stats, for this json; or NULL */
	size_t nfiles;
	bool forgotten; /* menv_pkgmeta_forget since the parse */
};

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static struct menv_strmap meta_map = MENV_STRMAP_INIT; /* path -> index in meta_v */
static struct meta_entry *meta_v;
static size_t meta_n, meta_cap;

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

json_t *menv_pkgmeta_load(const char *path, struct menv_error *err)
{
	struct stat st;
	json_t *j = NULL;

	if (stat(path, &st) == 0) {
		pthread_mutex_lock(&meta_lock);
		const size_t *at = menv_strmap_get(&meta_map, path);
		if (at && same_file(&meta_v[*at].st, &st))
			j = json_incref(meta_v[*at].json);
		pthread_mutex_unlock(&meta_lock);
		if (j)
			return j;
	}
	j = menv_json_load_file(path, 0, err);
	if (!j)
		return NULL;
	/* the identity of the file read: a stat after the read, so a file replaced between
	 * the first stat and the read is not kept under the old one's */
	struct stat after;
	if (stat(path, &after) != 0 || !same_file(&st, &after))
		return j;
	pthread_mutex_lock(&meta_lock);
	const size_t *at = menv_strmap_get(&meta_map, path);
	if (at) {
		json_decref(meta_v[*at].json);
		meta_v[*at].json = json_incref(j);
		meta_v[*at].st = st;
		free(meta_v[*at].files);
		meta_v[*at].files = NULL;
		meta_v[*at].nfiles = 0;
		meta_v[*at].forgotten = false;
	} else {
		if (meta_n == meta_cap) {
			meta_cap = meta_cap ? 2 * meta_cap : 256;
			meta_v = menv_xrealloc(meta_v, meta_cap * sizeof(*meta_v));
		}
		meta_v[meta_n] =
		        (struct meta_entry){menv_xstrdup(path), st, json_incref(j), NULL, 0, false};
		menv_strmap_put(&meta_map, path, meta_n++);
	}
	pthread_mutex_unlock(&meta_lock);
	return j;
}

json_t *menv_pkgmeta_kept(const char *path)
{
	json_t *j = NULL;

	pthread_mutex_lock(&meta_lock);
	const size_t *at = menv_strmap_get(&meta_map, path);
	if (at && !meta_v[*at].forgotten)
		j = json_incref(meta_v[*at].json);
	pthread_mutex_unlock(&meta_lock);
	return j;
}

void menv_pkgmeta_forget(const char *path)
{
	pthread_mutex_lock(&meta_lock);
	const size_t *at = menv_strmap_get(&meta_map, path);
	if (at) {
		memset(&meta_v[*at].st, 0, sizeof(meta_v[*at].st)); /* matches no file */
		meta_v[*at].forgotten = true;
		free(meta_v[*at].files);
		meta_v[*at].files = NULL;
		meta_v[*at].nfiles = 0;
	}
	pthread_mutex_unlock(&meta_lock);
}

void menv_pkgmeta_keep_stats(const char *path, json_t *json, struct menv_pkgfile_st *v, size_t n)
{
	pthread_mutex_lock(&meta_lock);
	const size_t *at = menv_strmap_get(&meta_map, path);
	if (at && meta_v[*at].json == json) {
		free(meta_v[*at].files);
		meta_v[*at].files = v;
		meta_v[*at].nfiles = n;
		v = NULL;
	}
	pthread_mutex_unlock(&meta_lock);
	free(v);
}

struct menv_pkgfile_st *menv_pkgmeta_stats(const char *path, json_t *json, size_t *n)
{
	struct menv_pkgfile_st *v = NULL;

	*n = 0;
	pthread_mutex_lock(&meta_lock);
	const size_t *at = menv_strmap_get(&meta_map, path);
	if (at && meta_v[*at].json == json && meta_v[*at].files) {
		*n = meta_v[*at].nfiles;
		v = menv_xmalloc((*n + 1) * sizeof(*v));
		memcpy(v, meta_v[*at].files, *n * sizeof(*v));
	}
	pthread_mutex_unlock(&meta_lock);
	return v;
}

void menv_pkgmeta_clear(void)
{
	pthread_mutex_lock(&meta_lock);
	for (size_t i = 0; i < meta_n; i++) {
		free(meta_v[i].path);
		free(meta_v[i].files);
		json_decref(meta_v[i].json);
	}
	free(meta_v);
	meta_v = NULL;
	meta_n = meta_cap = 0;
	menv_strmap_clear(&meta_map);
	pthread_mutex_unlock(&meta_lock);
}
