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
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "intent.h"
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

/* What the clone's staging hook needs: where the copies come from and go to, and the
 * hardlinked files copied so far ("dev:ino" -> the copy's path), so a pair of links to one
 * file stays one file. */
struct clone {
	const char *src, *dest, *token;
	const char *to_root; /* the staging directory the copies are written into */
	size_t untracked;
	json_t *inodes;
};

/* Copies the file, link or folder `rel` of `src` into `to_root` (which lacks it), with `src`
 * replaced by `dest` (the final prefix) in a regular file without NUL bytes and in a link's
 * target. A file with several links in `src` is copied once and linked again. */
static int copy_untracked(struct clone *c, const char *rel, struct menv_error *err)
{
	const char *src = c->src, *dest = c->dest;
	char *from = menv_xasprintf("%s/%s", src, rel),
	     *to = menv_xasprintf("%s/%s", c->to_root, rel);
	struct menv_buf b = MENV_BUF_INIT;
	char *ino = NULL;
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
			rc = copy_untracked(c, sub, err);
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
		c->untracked += !rc;
		goto out;
	}
	if (!S_ISREG(sb.st_mode))
		goto out; /* sockets, fifos: not files of an environment */
	if (sb.st_nlink > 1) {
		ino = menv_xasprintf("%ju:%ju", (uintmax_t)sb.st_dev, (uintmax_t)sb.st_ino);
		const char *first = json_string_value(json_object_get(c->inodes, ino));
		if (first) {
			if (link(first, to) < 0)
				rc = menv_error_sys(err, MENV_EIO, "cannot link '%s' to '%s'", to,
				                    first);
			c->untracked += !rc;
			goto out;
		}
	}
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
	if (!rc && ino)
		json_object_set_new(c->inodes, ino, json_string(to));
	c->untracked += !rc;
out:
	menv_buf_release(&b);
	free(ino);
	free(from);
	free(to);
	return rc;
}

/* conda-meta/NAME of `src` into `to_root`'s (history, .menv-request, state), when present. */
static int copy_meta(const char *src, const char *to_root, const char *name, struct menv_error *err)
{
	char *from = menv_xasprintf("%s/conda-meta/%s", src, name);
	char *to = menv_xasprintf("%s/conda-meta/%s", to_root, name);
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

/* The create's staging hook: every top-level entry of `src` but conda-meta/ copied where the
 * clone lacks it, history and variables, and the clone's mark, all before the clone appears
 * at its path. */
static int staged(void *ud, const char *staging, struct menv_error *err)
{
	struct clone *c = ud;
	DIR *d = opendir(c->src);
	struct dirent *de;
	int rc = 0;

	c->to_root = staging;
	if (!d)
		return menv_error_sys(err, MENV_EIO, "cannot read '%s'", c->src);
	while (!rc && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "conda-meta"))
			rc = copy_untracked(c, de->d_name, err);
	closedir(d);
	if (!rc)
		rc = copy_meta(c->src, staging, "history", err);
	if (!rc)
		rc = copy_meta(c->src, staging, "state", err);
	if (!rc)
		rc = menv_intent_clone_mark(staging, c->src, c->token, err);
	return rc;
}

/* The clone: a create of `dest` from the conda-lock `file`, with the staging hook. */
static int clone_txn(const struct menv_rename_opts *o, const char *dest, const char *file,
                     struct clone *c, size_t *packages, struct menv_error *err)
{
	struct menv_txn *t = NULL;
	struct menv_txn_opts to = {
	        .kind = MENV_TXN_CREATE_LOCK,
	        .cfg = o->cfg,
	        .prefix = dest,
	        .file = file,
	        .all = true,
	        .cmdline = o->cmdline,
	        .cancel = o->cancel,
	        .quiet_pip = true,
	        .cb = o->cb,
	        .staged = staged,
	        .staged_ud = c,
	};
	to.cb.confirm = NULL;
	int rc = menv_txn_new(&to, &t, err);
	if (!rc)
		rc = menv_txn_prepare(t, err);
	if (!rc)
		rc = menv_txn_commit(t, err);
	if (!rc)
		*packages = menv_txn_result(t)->stats.packages;
	menv_txn_free(t);
	return rc;
}

/* The original locked, any interrupted rename or removal of it settled first. */
static int lock_source(const struct menv_rename_opts *o, const char *src, int *lockfd,
                       struct menv_error *err)
{
	enum menv_recovery what = MENV_RECOVERY_NONE;
	char *said = NULL;
	int rc = menv_env_lock(src, false, o->cb.event, o->cb.ud, lockfd, err);
	if (!rc)
		rc = menv_env_intent_recover(src, o->cb.event, o->cb.ud, &said, err);
	if (said && o->cb.event)
		o->cb.event(o->cb.ud, MENV_ENV_RECOVERED, said);
	free(said);
	if (!rc && menv_env_needs_recovery(src))
		rc = menv_env_recover(src, &what, err);
	return rc;
}

int menv_env_rename(const struct menv_rename_opts *o, const char *src, const char *dest,
                    struct menv_rename_result *res, struct menv_error *err)
{
	struct menv_lockfile *lf = NULL;
	struct menv_buf lock = MENV_BUF_INIT;
	struct clone c = {.src = src, .dest = dest, .inodes = json_object()};
	char *tmp = NULL, *aside = NULL, *token = NULL, *said = NULL;
	int lockfd = -1, rc;

	memset(res, 0, sizeof(*res));
	/* a rename --force killed after it set `dest` (or `src`) aside: settled first, so that
	 * the check sees what stands */
	for (int i = 0; i < 2 && !o->dry_run; i++) {
		const char *p = i ? src : dest;
		if (!menv_env_replaced_pending(p))
			continue;
		rc = menv_env_replaced_recover(p, o->cb.event, o->cb.ud, &said, err);
		if (said && o->cb.event)
			o->cb.event(o->cb.ud, MENV_ENV_RECOVERED, said);
		free(said);
		said = NULL;
		if (rc)
			goto out;
	}
	rc = menv_env_rename_check(o->cfg, src, dest, o->active, o->force, err);
	if (rc || o->dry_run)
		goto out;
	/* the original is locked from reading it until it is removed: a command waiting for it
	 * meanwhile finds it gone (menv_env_lock re-validates), never changes a copy that is
	 * about to be removed */
	rc = lock_source(o, src, &lockfd, err);
	if (rc)
		goto out;
	menv_test_gate("MENV_TEST_GATE_RENAME");
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
	int fd = -1;
	rc = menv_tmp_mkfile("rename", &tmp, &fd, err);
	if (!rc && write(fd, lock.buf, lock.len) != (ssize_t)lock.len)
		rc = menv_error_sys(err, MENV_EIO, "cannot write the clone's lock '%s'", tmp);
	if (rc) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	/* the intent first: from here a kill is rolled back (clone removed, an old destination
	 * moved back) until the original is marked as removed, then finished */
	token = menv_xasprintf("%ld-%ld", (long)getpid(), (long)time(NULL));
	menv_intent_rename_running(token);
	if (menv_path_in_use(dest)) {
		char *pc = menv_xstrdup(dest), *bc = menv_xstrdup(dest);
		aside = menv_xasprintf("%s/.%s.menv-replaced-%s", dirname(pc), basename(bc), token);
		free(pc);
		free(bc);
	}
	menv_crash_point();
	rc = menv_intent_rename_begin(src, dest, aside, token, err);
	if (rc)
		goto out;
	/* the old destination names the rename before it is set aside: a command naming it
	 * then finds the rename through the aside folder */
	if (aside)
		rc = menv_intent_replaced_mark(dest, src, token, err);
	if (rc)
		goto undo;
	menv_crash_point();
	if (aside && rename(dest, aside) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot move '%s' aside", dest);
		goto undo;
	}
	menv_crash_point();
	c.token = token;
	rc = clone_txn(o, dest, tmp, &c, &res->packages, err);
	res->untracked = c.untracked;
	menv_crash_point();
	if (!rc)
		rc = copy_meta(src, dest, ".menv-request", err);
	menv_crash_point();
	if (rc) {
		menv_error_prefix(err, "while cloning '%s' to '%s'", src, dest);
		goto undo;
	}
	/* the commit point */
	rc = menv_intent_removing(src, err);
	if (rc)
		goto undo;
	menv_crash_point();
	/* past the commit point the removal of the source (and of an old destination set
	 * aside) runs to its end: Ctrl-C then must not leave half of it */
	menv_cancel_block(true);
	rc = menv_env_intent_recover(src, NULL, NULL, &said, err);
	menv_cancel_block(false);
	if (rc == MENV_ENOTFOUND) { /* the source is gone, as wanted */
		rc = 0;
		*err = (struct menv_error){0};
	}
	if (rc)
		menv_error_prefix(err, "'%s' is cloned to '%s', but removing it failed", src, dest);
	else /* a Ctrl-C past the commit point: the rename was finished, and says so */
		rc = menv_intent_late_cancel("it was cloned", "rename", src, err);
	goto out;
undo : {
	struct menv_error ignored = {0};
	free(said);
	said = NULL;
	/* the undo (an old destination moved back) runs to its end, Ctrl-C or not */
	menv_cancel_block(true);
	menv_env_intent_recover(src, NULL, NULL, &said, &ignored);
	menv_cancel_block(false);
}
out:
	menv_intent_rename_running(NULL);
	menv_env_unlock(lockfd);
	if (tmp)
		unlink(tmp);
	json_decref(c.inodes);
	free(said);
	free(token);
	free(tmp);
	free(aside);
	menv_buf_release(&lock);
	menv_lockfile_free(lf);
	return rc;
}

json_t *menv_rename_report(const char *src, const char *dest, bool dry_run,
                           const struct menv_rename_result *res, struct menv_buf *text)
{
	if (text && dry_run) /* conda's lines */
		menv_buf_addf(text, "Dry run action: clone %s,%s\nDry run action: rm_rf %s\n", src,
		              dest, src);
	else if (text)
		menv_buf_addf(text,
		              "Renamed %s to %s: %zu package%s linked, %zu file%s no package owns "
		              "copied\n",
		              src, dest, res->packages, res->packages == 1 ? "" : "s",
		              res->untracked, res->untracked == 1 ? "" : "s");
	return json_pack("{s:b, s:s, s:s, s:b, s:I, s:I}", "success", 1, "source", src,
	                 "destination", dest, "dry_run", dry_run, "packages",
	                 (json_int_t)res->packages, "untracked", (json_int_t)res->untracked);
}
