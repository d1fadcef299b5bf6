/*
 * pkgclean.c - `menv clean`'s side of the package cache (menv_pkgcache_clean): which entries
 * of a pkgs_dirs folder are package files, extracted packages, index caches or what an
 * interrupted run left, and their removal under the cache lock, each whole or gone.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Bytes a file or a tree takes on disk (links are not followed). */
static int64_t disk_bytes(const char *path)
{
	struct stat sb;
	int64_t total;
	DIR *d;
	struct dirent *de;

	if (lstat(path, &sb) < 0)
		return 0;
	total = (int64_t)sb.st_blocks * 512;
	if (!S_ISDIR(sb.st_mode) || !(d = opendir(path)))
		return total;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = menv_xasprintf("%s/%s", path, de->d_name);
		total += disk_bytes(p);
		free(p);
	}
	closedir(d);
	return total;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* What menv leaves behind when interrupted: `<fn>.partial` downloads, `.<dist>.tmp-XXXXXX`
 * extractions and `<file>.tmp-XXXXXX` atomic writes; no other name (a pkgs_dirs entry set to a
 * home folder or an environment holds the user's dot files). */
static bool is_temp(const char *n, const struct stat *sb)
{
	const char *t = strstr(n, ".tmp-");
	return (S_ISREG(sb->st_mode) && has_suffix(n, ".partial")) || (t && strlen(t) == 11);
}

/* An extracted package: a folder with info/index.json (conda's PackageCacheData reads no
 * other); an environment's bin/, lib/ or conda-meta/ is none. */
static bool is_extracted(const char *dir)
{
	char *p = menv_xasprintf("%s/info/index.json", dir);
	struct stat sb;
	bool yes = lstat(p, &sb) == 0 && S_ISREG(sb.st_mode);
	free(p);
	return yes;
}

/* The `.menv-pyc/.tmp-XXXXXX` folders a killed create left in the kept package `dir` (the .pyc
 * of noarch python packages, envs/pyccache.c), into `out`. */
static void stale_pyc(const char *dir, struct menv_strvec *out)
{
	char *base = menv_xasprintf("%s/.menv-pyc", dir);
	DIR *d = opendir(base);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, ".tmp-", 5) && strlen(de->d_name) == 11)
			menv_strvec_push_owned(out, menv_xasprintf("%s/%s", base, de->d_name));
	if (d)
		closedir(d);
	free(base);
}

/* Removes `path` so that a kill at any moment leaves it whole or gone: a folder is renamed
 * to the temporary name `.<name>.tmp-XXXXXX` beside it first (what the next fetch or clean
 * removes, as a killed extraction's), then removed. */
static int remove_whole(const char *path, struct menv_error *err)
{
	struct stat sb;
	const char *slash = strrchr(path, '/');
	const char *t = strstr(slash + 1, ".tmp-");
	if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode) || (t && strlen(t) == 11))
		return menv_fetch_rmtree(path, err);
	char *aside =
	        menv_xasprintf("%.*s/.%.200s.tmp-XXXXXX", (int)(slash - path), path, slash + 1);
	int rc = 0;
	if (!mkdtemp(aside) || rename(path, aside) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot remove '%s'", path);
		rmdir(aside);
	} else {
		menv_crash_point();
		rc = menv_fetch_rmtree(aside, err);
	}
	free(aside);
	return rc;
}

int menv_pkgcache_clean(const char *pkgs_dir, unsigned what, const struct menv_strvec *keep,
                        bool dry_run, menv_clean_cb cb, void *ud, struct menv_clean_stats *st,
                        struct menv_error *err)
{
	struct menv_strvec victims = MENV_STRVEC_INIT;
	struct menv_strset kept = MENV_STRSET_INIT; /* keep, hashed: one lookup an entry */
	struct dirent *de;
	int lockfd = -1, rc = 0;
	DIR *d;

	memset(st, 0, sizeof(*st));
	if (access(pkgs_dir, F_OK) < 0)
		return 0; /* nothing cached yet */
	rc = menv_pkgcache_lock(pkgs_dir, NULL, NULL, NULL, &lockfd, err);
	if (rc)
		return rc;
	for (size_t i = 0; keep && i < keep->n; i++)
		menv_strset_add(&kept, keep->v[i]);
	d = opendir(pkgs_dir);
	if (!d) {
		rc = menv_error_sys(err, MENV_EIO, "cannot read '%s'", pkgs_dir);
		goto out;
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char *path;
		struct stat sb;
		if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, ".menv.lock") ||
		    !strcmp(n, ".menv-users.lock"))
			continue;
		path = menv_xasprintf("%s/%s", pkgs_dir, n);
		if (lstat(path, &sb) < 0) {
			free(path);
			continue;
		}
		bool take = false;
		if (S_ISDIR(sb.st_mode) && !strcmp(n, "cache"))
			take = false; /* handled below (INDEX) */
		else if (S_ISREG(sb.st_mode) &&
		         (has_suffix(n, ".conda") || has_suffix(n, ".tar.bz2")))
			take = what & MENV_CLEAN_TARBALLS;
		else if (is_temp(n, &sb))
			take = what & MENV_CLEAN_TEMP; /* interrupted downloads and extractions */
		else if (S_ISDIR(sb.st_mode))
			take = (what & MENV_CLEAN_PACKAGES) && !menv_strset_has(&kept, n) &&
			       is_extracted(path);
		if (take)
			menv_strvec_push_owned(&victims, path);
		else if (S_ISDIR(sb.st_mode) && (what & MENV_CLEAN_TEMP) && is_extracted(path))
			stale_pyc(path, &victims);
		if (!take)
			free(path);
	}
	closedir(d);
	if (what & MENV_CLEAN_INDEX) {
		char *cache = menv_xasprintf("%s/cache", pkgs_dir);
		DIR *c = opendir(cache);
		while (c && (de = readdir(c)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				menv_strvec_push_owned(&victims,
				                       menv_xasprintf("%s/%s", cache, de->d_name));
		if (c)
			closedir(c);
		free(cache);
	}
	for (size_t i = 0; i < victims.n && !rc; i++) {
		int64_t bytes = disk_bytes(victims.v[i]);
		if (!dry_run) {
			rc = remove_whole(victims.v[i], err);
			if (rc)
				break;
			menv_crash_point();
		}
		st->removed++;
		st->bytes += bytes;
		if (cb)
			cb(ud, victims.v[i], bytes);
	}
out:
	menv_strvec_clear(&victims);
	menv_strset_clear(&kept);
	if (lockfd >= 0)
		close(lockfd);
	return rc;
}
