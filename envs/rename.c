/*
 * rename.c - `menv rename` (conda/cli/main_rename.py): an environment moves to a new name or
 * path by cloning it and removing the original, as conda does, both through the transaction
 * engine: its conda packages are linked again from the package cache into the new prefix (so
 * every file that holds the prefix path is written for the new one, text and binary
 * placeholders, shebangs, noarch python), the files no package owns (pip's, the user's) are
 * copied with the old prefix replaced in text files, the history, the request and the
 * environment's variables follow, then the original is removed. A rename of the directory
 * alone would leave every placeholder file naming the old path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"
#include "prefix.h"
#include "registry.h"
#include "txn.h"
#include "txnpriv.h"

int menv_env_rename_check(const struct menv_config *cfg, const char *src, const char *dest,
                          const char *active, bool force, struct menv_error *err)
{
	if (menv_env_same_prefix(src, cfg->root_prefix))
		return menv_error_set(err, MENV_EUSAGE, "the 'base' environment cannot be renamed");
	if (active && *active && menv_env_same_prefix(src, active))
		return menv_error_set(err, MENV_EUSAGE,
		                      "'%s' is the active environment: deactivate it before "
		                      "renaming it",
		                      src);
	if (menv_env_same_prefix(src, dest))
		return menv_error_set(err, MENV_EUSAGE, "'%s' is already the environment's path",
		                      dest);
	size_t sl = strlen(src);
	if (!strncmp(dest, src, sl) && dest[sl] == '/')
		return menv_error_set(err, MENV_EUSAGE, "'%s' is inside the environment '%s'", dest,
		                      src);
	size_t dl = strlen(dest);
	while (dl > 1 && dest[dl - 1] == '/')
		dl--;
	if (menv_env_same_prefix(dest, cfg->root_prefix) ||
	    (!strncmp(src, dest, dl) && (src[dl] == '/' || dl == 1)))
		return menv_error_set(err, MENV_EUSAGE, "'%s' holds the environment '%s'", dest,
		                      src);
	if (menv_path_in_use(dest)) {
		const char *base = strrchr(dest, '/');
		struct stat sb;
		char *meta = menv_xasprintf("%s/conda-meta", dest);
		/* --force replaces an environment, never a folder of other files (conda's rm_rf
		 * would take it all) nor what a link points at */
		bool env = lstat(dest, &sb) == 0 && S_ISDIR(sb.st_mode) && lstat(meta, &sb) == 0 &&
		           S_ISDIR(sb.st_mode);
		free(meta);
		if (!env)
			return menv_error_set(
			        err, MENV_EEXIST,
			        "'%s' exists and is not an environment: rename will not "
			        "replace it",
			        dest);
		if (!force)
			return menv_error_set(err, MENV_EEXIST,
			                      "the environment '%s' already exists (use --force to "
			                      "replace it)",
			                      base && base[1] ? base + 1 : dest);
	}
	return menv_env_check_prefix(dest, err);
}

/* Copies the file, link or folder `rel` of `src` to `dest` (which lacks it), with `src`
 * replaced by `dest` in a regular file without NUL bytes and in a link's target. */
static int copy_untracked(const char *src, const char *dest, const char *rel, size_t *count,
                          struct menv_error *err)
{
	char *from = menv_xasprintf("%s/%s", src, rel), *to = menv_xasprintf("%s/%s", dest, rel);
	struct menv_buf b = MENV_BUF_INIT;
	struct stat sb;
	int rc = 0;

	if (lstat(from, &sb) < 0)
		goto out;
	if (S_ISDIR(sb.st_mode)) {
		DIR *d;
		struct dirent *de;
		if (mkdir(to, sb.st_mode & 07777) < 0 && errno != EEXIST) {
			rc = menv_error_sys(err, MENV_EIO, "cannot make '%s'", to);
			goto out;
		}
		d = opendir(from);
		while (!rc && d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char *sub = menv_xasprintf("%s/%s", rel, de->d_name);
			rc = copy_untracked(src, dest, sub, count, err);
			free(sub);
		}
		if (d)
			closedir(d);
		goto out;
	}
	struct stat tsb;
	if (lstat(to, &tsb) == 0)
		goto out; /* linked by a package of the clone */
	if (S_ISLNK(sb.st_mode)) {
		char target[4096];
		ssize_t n = readlink(from, target, sizeof(target) - 1);
		if (n < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot read the link '%s'", from);
			goto out;
		}
		target[n] = '\0';
		size_t sl = strlen(src);
		char *t = !strncmp(target, src, sl) && (target[sl] == '/' || !target[sl])
		                  ? menv_xasprintf("%s%s", dest, target + sl)
		                  : menv_xstrdup(target);
		if (symlink(t, to) < 0)
			rc = menv_error_sys(err, MENV_EIO, "cannot make the link '%s'", to);
		free(t);
		*count += !rc;
		goto out;
	}
	if (!S_ISREG(sb.st_mode))
		goto out; /* sockets, fifos: not files of an environment */
	rc = menv_buf_read_file(&b, from, err);
	if (rc)
		goto out;
	if (!memchr(b.buf, '\0', b.len) && strstr(b.buf, src)) {
		struct menv_buf r = MENV_BUF_INIT;
		size_t sl = strlen(src);
		const char *p = b.buf, *q;
		while ((q = strstr(p, src)) != NULL) {
			menv_buf_add(&r, p, (size_t)(q - p));
			menv_buf_adds(&r, dest);
			p = q + sl;
		}
		menv_buf_adds(&r, p);
		menv_buf_release(&b);
		b = r;
	}
	int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, sb.st_mode & 07777);
	if (fd < 0 || (b.len && write(fd, b.buf, b.len) != (ssize_t)b.len) ||
	    fchmod(fd, sb.st_mode & 07777)) {
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", to);
	}
	if (fd >= 0)
		close(fd);
	*count += !rc;
out:
	menv_buf_release(&b);
	free(from);
	free(to);
	return rc;
}

/* Every top-level entry of `src` but conda-meta/, copied where the clone lacks it. */
static int copy_untracked_all(const char *src, const char *dest, size_t *count,
                              struct menv_error *err)
{
	DIR *d = opendir(src);
	struct dirent *de;
	int rc = 0;
	if (!d)
		return menv_error_sys(err, MENV_EIO, "cannot read '%s'", src);
	while (!rc && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "conda-meta"))
			rc = copy_untracked(src, dest, de->d_name, count, err);
	closedir(d);
	return rc;
}

/* conda-meta/NAME of `src` over the clone's (history, .menv-request, state), when present. */
static int copy_meta(const char *src, const char *dest, const char *name, struct menv_error *err)
{
	char *from = menv_xasprintf("%s/conda-meta/%s", src, name);
	char *to = menv_xasprintf("%s/conda-meta/%s", dest, name);
	struct menv_buf b = MENV_BUF_INIT;
	int rc = 0;
	if (access(from, F_OK) == 0) {
		rc = menv_buf_read_file(&b, from, err);
		if (!rc)
			rc = menv_write_file_atomic(to, b.buf, b.len, err);
	} else {
		unlink(to);
	}
	menv_buf_release(&b);
	free(from);
	free(to);
	return rc;
}

/* One transaction of `kind` on `prefix` (a lock create or a whole-environment remove). */
static int run_txn(const struct menv_rename_opts *o, enum menv_txn_kind kind, const char *prefix,
                   const char *file, size_t *packages, struct menv_error *err)
{
	struct menv_txn *t = NULL;
	struct menv_txn_opts to = {
	        .kind = kind,
	        .cfg = o->cfg,
	        .prefix = prefix,
	        .file = file,
	        .all = true,
	        .cmdline = o->cmdline,
	        .cancel = o->cancel,
	        .quiet_pip = true,
	        .cb = o->cb,
	};
	to.cb.confirm = NULL;
	int rc = menv_txn_new(&to, &t, err);
	if (!rc)
		rc = menv_txn_prepare(t, err);
	if (!rc)
		rc = menv_txn_commit(t, err);
	if (!rc && packages)
		*packages = menv_txn_result(t)->stats.packages;
	menv_txn_free(t);
	return rc;
}

int menv_env_rename(const struct menv_rename_opts *o, const char *src, const char *dest,
                    struct menv_rename_result *res, struct menv_error *err)
{
	struct menv_lockfile *lf = NULL;
	struct menv_buf lock = MENV_BUF_INIT;
	char *tmp = NULL, *aside = NULL;
	int lockfd = -1, rc;

	memset(res, 0, sizeof(*res));
	rc = menv_env_rename_check(o->cfg, src, dest, o->active, o->force, err);
	if (rc || o->dry_run)
		return rc;
	/* the original stays as it is while it is cloned */
	rc = menv_env_lock(src, false, o->cb.event, o->cb.ud, &lockfd, err);
	if (rc)
		return rc;
	rc = menv_env_to_lockfile(o->cfg, src, NULL, &lf, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < lf->npkgs; i++) {
		if (lf->pkgs[i].manager == MENV_LOCK_PIP) {
			/* pip's files are copied as files no package owns */
			free(lf->pkgs[i].url);
			lf->pkgs[i].url = NULL;
		}
	}
	json_object_del(lf->metadata_extra, "custom_metadata");
	rc = menv_lockfile_write_conda_lock(lf, &lock, err);
	if (rc)
		goto out;
	const char *td = getenv("TMPDIR");
	tmp = menv_xasprintf("%s/menv-rename-XXXXXX", td && *td ? td : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0 || write(fd, lock.buf, lock.len) != (ssize_t)lock.len) {
		rc = menv_error_sys(err, MENV_EIO, "cannot write the clone's lock '%s'", tmp);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (menv_path_in_use(dest)) {
		/* --force: the old destination goes aside, back in place if the clone fails */
		aside = menv_xasprintf("%s.menv-replaced-%ld", dest, (long)getpid());
		if (rename(dest, aside) < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot move '%s' aside", dest);
			free(aside);
			aside = NULL;
			goto out;
		}
	}
	rc = run_txn(o, MENV_TXN_CREATE_LOCK, dest, tmp, &res->packages, err);
	if (!rc)
		rc = copy_untracked_all(src, dest, &res->untracked, err);
	if (!rc)
		rc = copy_meta(src, dest, "history", err);
	if (!rc)
		rc = copy_meta(src, dest, ".menv-request", err);
	if (!rc)
		rc = copy_meta(src, dest, "state", err);
	if (rc) {
		menv_error_prefix(err, "while cloning '%s' to '%s'", src, dest);
		if (menv_path_in_use(dest)) {
			struct menv_error ignored = {0};
			menv_remove_tree(dest);
			menv_envreg_remove(dest, &ignored);
		}
		if (aside && rename(aside, dest) == 0) {
			free(aside);
			aside = NULL;
		}
		goto out;
	}
	menv_env_unlock(lockfd);
	lockfd = -1;
	rc = run_txn(o, MENV_TXN_REMOVE, src, NULL, NULL, err);
	if (rc)
		menv_error_prefix(err, "'%s' is cloned to '%s', but removing it failed", src, dest);
	if (aside)
		menv_remove_tree(aside);
out:
	menv_env_unlock(lockfd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(aside);
	menv_buf_release(&lock);
	menv_lockfile_free(lf);
	return rc;
}
