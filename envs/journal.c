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
 * The prefix lock is flock(2) on `conda-meta/.menv.lock` (an existing prefix) or on the same
 * file in the staging directory of a create; the kernel drops it when the process dies.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envs.h"
#include "link.h"

#define TXN_DIR "conda-meta/.menv-txn"

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void menv_remove_tree(const char *path)
{
	nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
}

/* The test hook MENV_TEST_CRASH_AFTER=N: the process kills itself with SIGKILL when it is
 * about to make its N-th change of a transaction (N >= 1), so that tests can interrupt a
 * transaction at any point deterministically. */
static void count_op(struct menv_journal *t)
{
	t->ops++;
	if (t->crash_after > 0 && t->ops == (size_t)t->crash_after)
		kill(getpid(), SIGKILL);
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
	const char *crash = getenv("MENV_TEST_CRASH_AFTER");

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->root = menv_xstrdup(root);
	t->dir = menv_xasprintf("%s/" TXN_DIR, root);
	t->crash_after = crash ? strtol(crash, NULL, 10) : 0;
}

int menv_journal_begin(struct menv_journal *t, char kind, struct menv_error *err)
{
	char *backup = menv_xasprintf("%s/backup", t->dir);
	char *journal = menv_xasprintf("%s/journal", t->dir);
	int rc = 0;

	menv_remove_tree(t->dir);
	if (mkdir(t->dir, 0755) < 0 || mkdir(backup, 0755) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create the transaction journal '%s'",
		                    t->dir);
		goto out;
	}
	t->fd = open(journal, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
	if (t->fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create '%s'", journal);
		goto out;
	}
	rc = log_rec(t, kind, "", err);
out:
	free(backup);
	free(journal);
	return rc;
}

void menv_journal_release(struct menv_journal *t)
{
	if (t->fd >= 0)
		close(t->fd);
	free(t->root);
	free(t->dir);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
}

int menv_journal_created(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	return log_rec(t, 'C', rel, err);
}

int menv_journal_mkdirs(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	char *p = menv_xasprintf("%s/%s", t->root, rel);
	size_t rootlen = strlen(t->root);
	struct stat sb;
	int rc = 0;

	for (char *s = p + rootlen + 1;; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = '\0';
		if (lstat(p, &sb) < 0) {
			rc = log_rec(t, 'D', p + rootlen + 1, err);
			if (rc)
				goto out;
			if (mkdir(p, 0755) < 0 && errno != EEXIST) {
				rc = menv_error_sys(err, MENV_EIO, "cannot create directory '%s'",
				                    p);
				goto out;
			}
		} else if (!S_ISDIR(sb.st_mode) && stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			rc = menv_error_set(err, MENV_EEXIST, "'%s' exists and is not a directory",
			                    p);
			goto out;
		}
		*s = c;
		if (!c)
			break;
	}
out:
	free(p);
	return rc;
}

int menv_journal_mkparents(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	char *d = menv_xstrdup(rel);
	char *slash = strrchr(d, '/');
	int rc = 0;
	if (slash) {
		*slash = '\0';
		rc = menv_journal_mkdirs(t, d, err);
	}
	free(d);
	return rc;
}

int menv_journal_move_aside(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	char *src = menv_xasprintf("%s/%s", t->root, rel);
	char *dst = NULL, *rec = NULL;
	int rc = 0;

	if (t->fd < 0) {
		/* not journaling (a new environment's staging directory): just remove it */
		count_op(t);
		if (unlink(src) < 0 && errno != ENOENT)
			rc = menv_error_sys(err, MENV_EIO, "cannot remove '%s'", src);
		goto out;
	}
	/* each move gets its own backup name: one path may be moved aside twice (the old
	 * package's file, then a new package's file clobbered by a later one) */
	rec = menv_xasprintf("%zu\t%s", ++t->nbackups, rel);
	rc = log_rec(t, 'M', rec, err);
	if (rc)
		goto out;
	dst = menv_xasprintf("%s/backup/%zu", t->dir, t->nbackups);
	if (rename(src, dst) < 0 && errno != ENOENT)
		rc = menv_error_sys(err, MENV_EIO, "cannot move '%s' aside", src);
out:
	free(rec);
	free(src);
	free(dst);
	return rc;
}

int menv_journal_rmdir(struct menv_journal *t, const char *rel, struct menv_error *err)
{
	char *p = menv_xasprintf("%s/%s", t->root, rel);
	int rc = log_rec(t, 'R', rel, err);
	if (!rc)
		rmdir(p); /* not empty (e.g. files of other programs): kept */
	free(p);
	return rc;
}

/* Reads the journal's records into `out` (pointers into `buf`). */
static int read_journal(const char *dir, struct menv_buf *buf, struct menv_strvec *out,
                        struct menv_error *err)
{
	char *path = menv_xasprintf("%s/journal", dir);
	int rc = menv_buf_read_file(buf, path, err);
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

static void undo(const char *root, const char *dir, const struct menv_strvec *recs)
{
	for (size_t k = recs->n; k-- > 0;) {
		const char *r = recs->v[k];
		char op = r[0];
		const char *rel = r + 1;
		if (!*rel)
			continue;
		char *p = menv_xasprintf("%s/%s", root, rel);
		struct stat sb;
		switch (op) {
		case 'C':
			if (lstat(p, &sb) == 0) {
				if (S_ISDIR(sb.st_mode))
					menv_remove_tree(p);
				else
					unlink(p);
			}
			break;
		case 'D':
			/* it did not exist before: whatever is in it is new (e.g. written by a
			 * link script) */
			menv_remove_tree(p);
			break;
		case 'R': mkdir(p, 0755); break;
		case 'M': {
			/* "M<n>\t<path>": <path> was moved to backup/<n> */
			const char *tab = strchr(rel, '\t');
			if (!tab)
				break;
			free(p);
			p = menv_xasprintf("%s/%s", root, tab + 1);
			char *b = menv_xasprintf("%s/backup/%.*s", dir, (int)(tab - rel), rel);
			if (lstat(b, &sb) == 0) {
				if (lstat(p, &sb) == 0) {
					if (S_ISDIR(sb.st_mode))
						rmdir(p);
					else
						unlink(p);
				}
				rename(b, p);
			}
			free(b);
			break;
		}
		default: break;
		}
		free(p);
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
	if (!rc) {
		undo(t->root, t->dir, &recs);
		menv_remove_tree(t->dir);
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
	menv_remove_tree(t->dir);
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
		*what = MENV_RECOVERY_ROLLED_BACK;
		undo(prefix, dir, &recs);
		menv_remove_tree(dir);
	}
out:
	menv_strvec_clear(&recs);
	menv_buf_release(&buf);
	free(dir);
	return rc;
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

int menv_env_lock(const char *prefix, bool no_wait, menv_env_cb cb, void *ud, int *lock_fd,
                  struct menv_error *err)
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
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot open the lock file '%s'", path);
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
	if (cb) {
		char *msg = menv_xasprintf("waiting for another menv process to finish with '%s'",
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
