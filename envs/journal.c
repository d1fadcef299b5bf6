/*
 * journal.c - the transaction journal of a prefix and the prefix lock.
 *
 * Every change to an existing prefix is written ahead into `conda-meta/.menv-txn/journal`
 * before it is made: `C path` (a file or link about to be created), `D path` (a directory
 * about to be created), `M<n>\tpath` (an existing file about to be moved to
 * `.menv-txn/backup/<n>`), `R path` (an empty directory about to be removed), and finally
 * `K` (commit). Records are NUL-terminated; a record cut short by a crash is ignored. Rolling
 * back replays the journal backwards (remove what was created, move back what was moved
 * aside, recreate removed directories); every step checks the disk first, so a rollback that
 * is itself interrupted can be run again. A directory the transaction created is removed with
 * everything in it (files link scripts wrote there are not journaled); files scripts write
 * into directories that existed before are not undone (conda does not either), except
 * `.messages.txt`. A journal that ends in `K` is finished instead (the
 * backup is dropped). A journal that starts with `N` belongs to a new environment that was
 * renamed into place but whose link scripts had not finished: rolling it back removes the
 * whole prefix, as a failed create leaves no prefix.
 *
 * Records are written with one write(2) each: a killed process loses at most the record it
 * was writing, never a record before it. The journal is fsync'd at the commit.
 *
 * Every path is resolved beneath the root's directory descriptor (beneath.c): the journal, its
 * backup and every undo step refuse to pass through a symbolic link, so neither a change nor
 * its rollback can reach outside the prefix.
 *
 * The prefix lock is flock(2) on `conda-meta/.menv.lock` (an existing prefix) or on the same
 * file in the staging directory of a create; the kernel drops it when the process dies.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"
#include "prefix.h"

#define TXN_DIR "conda-meta/.menv-txn"

static void count_op(struct menv_journal *t)
{
	__atomic_add_fetch(&t->ops, 1, __ATOMIC_SEQ_CST);
	menv_crash_point();
}

static int log_rec(struct menv_journal *t, char op, const char *rel, struct menv_error *err)
{
	count_op(t);
	if (t->fd < 0)
		return 0;
	size_t n = strlen(rel);
	char *rec = menv_xmalloc(n + 2);
	rec[0] = op;
	memcpy(rec + 1, rel, n);
	rec[n + 1] = '\0';
	ssize_t w = write(t->fd, rec, n + 2);
	free(rec);
	if (w != (ssize_t)(n + 2))
		return menv_error_sys(err, MENV_EIO, "cannot write the transaction journal in '%s'",
		                      t->root);
	return 0;
}

void menv_journal_init(struct menv_journal *t, const char *root)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->root = menv_xstrdup(root);
	t->dir = menv_xasprintf("%s/" TXN_DIR, root);
	t->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

void menv_journal_moved(struct menv_journal *t, const char *root)
{
	free(t->root);
	free(t->dir);
	t->root = menv_xstrdup(root);
	t->dir = menv_xasprintf("%s/" TXN_DIR, root);
}

static int root_fd(struct menv_journal *t, struct menv_error *err)
{
	if (t->rootfd < 0)
		return menv_error_sys(err, MENV_EIO, "cannot open directory '%s'", t->root);
	return 0;
}

int menv_journal_begin(struct menv_journal *t, char kind, struct menv_error *err)
{
	int rc = root_fd(t, err);

	if (rc)
		return rc;
	menv_beneath_remove_tree(t->rootfd, TXN_DIR);
	rc = menv_beneath_mkdir(t->rootfd, TXN_DIR, menv_dir_mode(), err);
	if (!rc)
		rc = menv_beneath_mkdir(t->rootfd, TXN_DIR "/backup", menv_dir_mode(), err);
	if (!rc)
		rc = menv_beneath_open(t->rootfd, TXN_DIR "/journal",
		                       O_WRONLY | O_CREAT | O_EXCL | O_APPEND, menv_file_mode(),
		                       &t->fd, err);
	if (rc) {
		menv_error_prefix(err, "cannot create the transaction journal in '%s'", t->root);
		return rc;
	}
	return log_rec(t, kind, "", err);
}

void menv_journal_release(struct menv_journal *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->rootfd >= 0)
		close(t->rootfd);
	free(t->root);
	free(t->dir);
	free(t->last_parent);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->rootfd = -1;
}

int menv_journal_created(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	return log_rec(t, 'C', rel, err);
}

int menv_journal_log_mkdir(void *t, const char *rel, struct menv_error *err)
{
	return log_rec(t, 'D', rel, err);
}

int menv_journal_mkdirs(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	int rc = root_fd(t, err);
	if (!rc)
		rc = menv_beneath_mkdirs(t->rootfd, rel, menv_journal_log_mkdir, t, err);
	return rc;
}

/* The parents of the files of one package are mostly the same directory as the file before:
 * it is walked again only when it changes. Skipping the walk weakens nothing: the write that
 * follows resolves the parent again, beneath the root, in one system call. */
int menv_journal_mkparents(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	char *d = menv_xstrdup(rel);
	char *slash = strrchr(d, '/');
	int rc = 0;
	if (slash) {
		*slash = '\0';
		if (t->last_parent && !strcmp(t->last_parent, d))
			goto out;
		free(t->last_parent);
		t->last_parent = NULL;
		rc = menv_journal_mkdirs(t, d, err);
		if (!rc) {
			t->last_parent = d;
			d = NULL;
		}
	}
out:
	free(d);
	return rc;
}

int menv_journal_move_aside(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	char *dst = NULL, *rec = NULL;
	int rc = root_fd(t, err);

	if (rc)
		return rc;
	if (t->fd < 0) {
		/* not journaling (a new environment's staging directory): just remove it */
		count_op(t);
		rc = menv_beneath_unlink(t->rootfd, rel, 0, err);
		if (rc == MENV_ENOTFOUND)
			rc = 0;
		goto out;
	}
	/* each move gets its own backup name: one path may be moved aside twice (the old
	 * package's file, then a new package's file clobbered by a later one) */
	rec = menv_xasprintf("%zu\t%s", ++t->nbackups, rel);
	rc = log_rec(t, 'M', rec, err);
	if (rc)
		goto out;
	dst = menv_xasprintf(TXN_DIR "/backup/%zu", t->nbackups);
	rc = menv_beneath_rename(t->rootfd, rel, dst, err);
	if (rc == MENV_ENOTFOUND && errno == ENOENT)
		rc = 0;
	if (rc)
		menv_error_prefix(err, "cannot move '%s' aside", rel);
out:
	free(rec);
	free(dst);
	return rc;
}

int menv_journal_rmdir(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	int rc = root_fd(t, err);
	free(t->last_parent);
	t->last_parent = NULL;
	if (!rc)
		rc = log_rec(t, 'R', rel, err);
	if (!rc) /* not empty (e.g. files of other programs): kept */
		menv_beneath_unlink(t->rootfd, rel, AT_REMOVEDIR, NULL);
	return rc;
}

/* Reads the journal's records into `out` (pointers into `buf`). */
/* Reads the journal whatever the cancel flag says: it serves a rollback or a recovery, which
 * must run to the end (menv_cancel_block). */
static int read_journal(const char *dir, struct menv_buf *buf, struct menv_strvec *out,
                        struct menv_error *err)
{
	char *path = menv_xasprintf("%s/journal", dir);
	menv_cancel_block(true);
	int rc = menv_buf_read_file(buf, path, err);
	menv_cancel_block(false);
	free(path);
	if (rc)
		return rc;
	for (size_t i = 0; i < buf->len;) {
		const char *rec = buf->buf + i;
		const char *nul = memchr(rec, '\0', buf->len - i);
		if (!nul)
			break; /* cut short by a crash */
		menv_strvec_push(out, rec);
		i = (size_t)(nul - buf->buf) + 1;
	}
	return 0;
}

/* Replays the records backwards beneath rootfd; a step whose path has a link above it (or
 * is gone) is skipped: rolling back never follows a link either. */
static void undo(int rootfd, const struct menv_strvec *recs)
{
	for (size_t k = recs->n; k-- > 0;) {
		const char *r = recs->v[k];
		char op = r[0];
		const char *rel = r + 1;
		struct stat sb;
		if (!*rel)
			continue;
		switch (op) {
		case 'C':
			if (menv_beneath_lstat(rootfd, rel, &sb, NULL) == 0) {
				if (S_ISDIR(sb.st_mode))
					menv_beneath_remove_tree(rootfd, rel);
				else
					menv_beneath_unlink(rootfd, rel, 0, NULL);
			}
			break;
		case 'D':
			/* it did not exist before: whatever is in it is new (e.g. written by a
			 * link script) */
			menv_beneath_remove_tree(rootfd, rel);
			break;
		case 'R': menv_beneath_mkdir(rootfd, rel, menv_dir_mode(), NULL); break;
		case 'M': {
			/* "M<n>\t<path>": <path> was moved to backup/<n> */
			const char *tab = strchr(rel, '\t');
			if (!tab)
				break;
			const char *p = tab + 1;
			char *b = menv_xasprintf(TXN_DIR "/backup/%.*s", (int)(tab - rel), rel);
			if (menv_beneath_lstat(rootfd, b, &sb, NULL) == 0) {
				if (menv_beneath_lstat(rootfd, p, &sb, NULL) == 0)
					menv_beneath_unlink(rootfd, p,
					                    S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0,
					                    NULL);
				menv_beneath_rename(rootfd, b, p, NULL);
			}
			free(b);
			break;
		}
		default: break;
		}
	}
}

int menv_journal_rollback(struct menv_journal *t, struct menv_error *err)
{
	struct menv_buf buf = MENV_BUF_INIT;
	struct menv_strvec recs = MENV_STRVEC_INIT;
	int rc = 0;

	if (t->fd < 0)
		return 0;
	close(t->fd);
	t->fd = -1;
	rc = read_journal(t->dir, &buf, &recs, err);
	free(t->last_parent);
	t->last_parent = NULL;
	if (!rc && t->rootfd >= 0) {
		undo(t->rootfd, &recs);
		menv_beneath_remove_tree(t->rootfd, TXN_DIR);
	}
	menv_strvec_clear(&recs);
	menv_buf_release(&buf);
	return rc;
}

int menv_journal_commit(struct menv_journal *t, struct menv_error *err)
{
	int rc;

	if (t->fd < 0)
		return 0;
	rc = log_rec(t, 'K', "", err);
	if (rc)
		return rc;
	if (fsync(t->fd) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot write the transaction journal in '%s'",
		                      t->root);
	close(t->fd);
	t->fd = -1;
	count_op(t);
	if (t->rootfd >= 0)
		menv_beneath_remove_tree(t->rootfd, TXN_DIR);
	return 0;
}

int menv_env_recover(const char *prefix, enum menv_recovery *what, struct menv_error *err)
{
	char *dir = menv_xasprintf("%s/" TXN_DIR, prefix);
	struct menv_buf buf = MENV_BUF_INIT;
	struct menv_strvec recs = MENV_STRVEC_INIT;
	struct stat sb;
	int rc = 0;

	*what = MENV_RECOVERY_NONE;
	if (lstat(dir, &sb) < 0)
		goto out;
	char *journal = menv_xasprintf("%s/journal", dir);
	bool has_journal = access(journal, F_OK) == 0;
	free(journal);
	if (!has_journal) {
		/* died before the first record: nothing was changed */
		menv_remove_tree(dir);
		goto out;
	}
	rc = read_journal(dir, &buf, &recs, err);
	if (rc)
		goto out;
	bool committed = recs.n && recs.v[recs.n - 1][0] == 'K';
	bool created = recs.n && recs.v[0][0] == 'N';
	if (committed) {
		*what = MENV_RECOVERY_FINISHED;
		menv_remove_tree(dir);
	} else if (created) {
		*what = MENV_RECOVERY_REMOVED;
		menv_remove_tree(prefix);
	} else {
		int rootfd;
		rc = menv_beneath_root(prefix, &rootfd, err);
		if (rc)
			goto out;
		*what = MENV_RECOVERY_ROLLED_BACK;
		undo(rootfd, &recs);
		menv_beneath_remove_tree(rootfd, TXN_DIR);
		close(rootfd);
	}
out:
	menv_strvec_clear(&recs);
	menv_buf_release(&buf);
	free(dir);
	return rc;
}

bool menv_env_half_created(const char *prefix)
{
	char *dir = menv_xasprintf("%s/" TXN_DIR, prefix);
	struct menv_buf buf = MENV_BUF_INIT;
	struct menv_strvec recs = MENV_STRVEC_INIT;
	bool half = false;

	if (access(dir, F_OK) == 0 && read_journal(dir, &buf, &recs, NULL) == 0)
		half = recs.n && recs.v[0][0] == 'N' && recs.v[recs.n - 1][0] != 'K';
	menv_strvec_clear(&recs);
	menv_buf_release(&buf);
	free(dir);
	return half;
}

bool menv_env_needs_recovery(const char *prefix)
{
	char *dir = menv_xasprintf("%s/" TXN_DIR, prefix);
	bool r = access(dir, F_OK) == 0;
	free(dir);
	return r;
}

/* ---------------------------------------------------------------------------------------- */
/* Locks                                                                                     */

/* After the lock is taken: is conda-meta/.menv.lock at `path` still the file `fd` locked? A
 * prefix that another process removed (env remove, rename) or replaced while this one waited
 * has no lock file there, or another one: its lock guards nothing any more. */
static bool lock_still_there(int fd, const char *path)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static int lock_once(const char *prefix, bool no_wait, menv_env_cb cb, void *ud, bool *said,
                     int *lock_fd, struct menv_error *err);

int menv_env_lock(const char *prefix, bool no_wait, menv_env_cb cb, void *ud, int *lock_fd,
                  struct menv_error *err)
{
	char *path = menv_xasprintf("%s/conda-meta/.menv.lock", prefix);
	bool said = false;
	int rc;

	/* re-validated after it is taken: a prefix replaced meanwhile (removed and made again
	 * at the same path) is locked again, a prefix that is gone is an error, never a
	 * success on a prefix that no longer exists */
	for (;;) {
		rc = lock_once(prefix, no_wait, cb, ud, &said, lock_fd, err);
		if (rc || lock_still_there(*lock_fd, path))
			break;
		close(*lock_fd);
		*lock_fd = -1;
		if (access(path, F_OK) < 0) {
			rc = menv_error_set(err, MENV_ENOTFOUND,
			                    "'%s' was removed (or renamed) by another menv process "
			                    "while this one waited for it: nothing was changed",
			                    prefix);
			break;
		}
	}
	free(path);
	return rc;
}

static int lock_once(const char *prefix, bool no_wait, menv_env_cb cb, void *ud, bool *said,
                     int *lock_fd, struct menv_error *err)
{
	char *meta = menv_xasprintf("%s/conda-meta", prefix);
	char *path = menv_xasprintf("%s/.menv.lock", meta);
	int fd = -1, rc = 0;

	*lock_fd = -1;
	if (access(meta, F_OK) < 0) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "'%s' is not a conda environment (no conda-meta/)", prefix);
		goto out;
	}
	int rootfd;
	rc = menv_beneath_root(prefix, &rootfd, err);
	if (rc)
		goto out;
	rc = menv_beneath_open(rootfd, "conda-meta/.menv.lock", O_RDWR | O_CREAT, menv_file_mode(),
	                       &fd, err);
	close(rootfd);
	if (rc) {
		menv_error_prefix(err, "cannot open the lock file '%s'", path);
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		goto out;
	if (errno != EWOULDBLOCK) {
		rc = menv_error_sys(err, MENV_EIO, "cannot lock '%s'", prefix);
		goto out;
	}
	if (no_wait) {
		rc = menv_error_set(err, MENV_ELOCKED, "'%s' is locked by another menv process",
		                    prefix);
		goto out;
	}
	if (cb && !*said) {
		*said = true;
		long pid = menv_flock_holder(fd, true);
		char *msg = pid ? menv_xasprintf("waiting for another menv process (pid %ld) to "
		                                 "finish with '%s'",
		                                 pid, prefix)
		                : menv_xasprintf("waiting for another menv process to finish with "
		                                 "'%s'",
		                                 prefix);
		cb(ud, MENV_ENV_LOCK_WAIT, msg);
		free(msg);
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR) {
			rc = menv_error_set(err, MENV_EINTR,
			                    "interrupted while waiting for the lock "
			                    "on '%s'",
			                    prefix);
			goto out;
		}
		rc = menv_error_sys(err, MENV_EIO, "cannot lock '%s'", prefix);
		goto out;
	}
out:
	if (!rc)
		menv_flock_note_pid(fd);
	if (rc && fd >= 0)
		close(fd);
	else
		*lock_fd = fd;
	free(path);
	free(meta);
	return rc;
}

void menv_env_unlock(int lock_fd)
{
	if (lock_fd >= 0)
		close(lock_fd);
}
