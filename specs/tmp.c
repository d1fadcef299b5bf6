/*
 * tmp.c - menv's temporary files and folders: under $TMPDIR (else /tmp), named
 * `menv-<what>-<pid>-XXXXXX`, and removed also after a kill. A process that makes one first
 * holds a shared flock on `.menv-<pid>.lock` beside them for as long as it lives (the kernel
 * lets go when it dies, however it dies); the next menv that makes a temporary removes the
 * entries of every pid whose lock nobody holds any more, and that lock file. Only entries of
 * this user that match the pattern and whose lock file exists are touched: another user's
 * files, an older menv's (without a pid in the name) and live processes' are left alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "specs.h"

static pthread_mutex_t tmp_mu = PTHREAD_MUTEX_INITIALIZER;
static int owner_fd = -1; /* the flock of this process (never closed) */
static pid_t owner_pid;   /* whose it is (a forked child makes its own) */
static char *owner_path;  /* the lock file's path */

const char *menv_tmp_base(void)
{
	const char *d = getenv("TMPDIR");
	return d && d[0] == '/' ? d : "/tmp";
}

/* "menv-<what>-<pid>-XXXXXX": the pid, or 0 when `name` is not such an entry. */
static long entry_pid(const char *name)
{
	if (strncmp(name, "menv-", 5))
		return 0;
	size_t n = strlen(name);
	if (n < 5 + 1 + 1 + 1 + 1 + 6 || name[n - 7] != '-')
		return 0;
	const char *end = name + n - 7, *p = end;
	while (p > name + 5 && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == end || p[-1] != '-' || p - 1 == name + 5)
		return 0;
	for (const char *w = name + 5; w < p - 1; w++)
		if (!((*w >= 'a' && *w <= 'z') || *w == '_'))
			return 0;
	return strtol(p, NULL, 10);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void remove_tree(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	else
		unlink(path);
}

/* Removes the entries of `pid` and its lock file when no live process holds the lock. */
static void sweep_pid(const char *base, long pid, uid_t uid)
{
	char *lock = menv_xasprintf("%s/.menv-%ld.lock", base, pid);
	struct stat sb;
	/* O_NONBLOCK: a FIFO of that name (anyone's, in a shared /tmp) would hold the open */
	int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) || sb.st_uid != uid || !S_ISREG(sb.st_mode) ||
	    flock(fd, LOCK_EX | LOCK_NB)) {
		if (fd >= 0)
			close(fd);
		free(lock);
		return;
	}
	DIR *d = opendir(base);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (entry_pid(de->d_name) != pid)
			continue;
		char *p = menv_xasprintf("%s/%s", base, de->d_name);
		if (lstat(p, &sb) == 0 && sb.st_uid == uid)
			remove_tree(p);
		free(p);
	}
	if (d)
		closedir(d);
	unlink(lock); /* while holding it: a new holder re-opens (see own_lock) */
	close(fd);
	free(lock);
}

void menv_tmp_sweep(void)
{
	const char *base = menv_tmp_base();
	uid_t uid = getuid();
	struct menv_strset pids = MENV_STRSET_INIT;
	DIR *d = opendir(base);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		long pid = entry_pid(de->d_name);
		if (!pid && !strncmp(de->d_name, ".menv-", 6) && strstr(de->d_name, ".lock"))
			pid = strtol(de->d_name + 6, NULL, 10);
		if (pid <= 0 || pid == (long)getpid())
			continue;
		char key[32];
		snprintf(key, sizeof(key), "%ld", pid);
		menv_strset_add(&pids, key);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < pids.cap; i++)
		if (pids.slots[i])
			sweep_pid(base, strtol(pids.slots[i], NULL, 10), uid);
	menv_strset_clear(&pids);
}

/* At exit: the lock file goes when this process left no entry behind. */
static void release_lock(void)
{
	if (owner_fd < 0 || owner_pid != getpid())
		return;
	const char *base = menv_tmp_base();
	DIR *d = opendir(base);
	struct dirent *de;
	bool left = false;
	while (d && !left && (de = readdir(d)))
		left = entry_pid(de->d_name) == (long)owner_pid;
	if (d)
		closedir(d);
	if (!left)
		unlink(owner_path);
}

/* Takes this process's shared lock (once), after sweeping what dead ones left. */
static int own_lock(struct menv_error *err)
{
	const char *base = menv_tmp_base();
	int rc = 0;
	pthread_mutex_lock(&tmp_mu);
	if (owner_fd >= 0 && owner_pid == getpid())
		goto out;
	bool first = owner_pid == 0;
	owner_pid = getpid();
	free(owner_path);
	owner_path = menv_xasprintf("%s/.menv-%ld.lock", base, (long)owner_pid);
	menv_tmp_sweep();
	for (int tries = 0; tries < 100; tries++) {
		struct stat a, b;
		int fd = open(owner_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot create '%s'", owner_path);
			goto out;
		}
		/* a sweeper may have removed the file between open and flock: then again */
		if (flock(fd, LOCK_SH) == 0 && fstat(fd, &a) == 0 && stat(owner_path, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			owner_fd = fd;
			if (first)
				atexit(release_lock);
			goto out;
		}
		close(fd);
	}
	rc = menv_error_set(err, MENV_EIO, "cannot lock '%s'", owner_path);
out:
	pthread_mutex_unlock(&tmp_mu);
	return rc;
}

int menv_tmp_mkdir(const char *what, char **out, struct menv_error *err)
{
	*out = NULL;
	int rc = own_lock(err);
	if (rc)
		return rc;
	char *p = menv_xasprintf("%s/menv-%s-%ld-XXXXXX", menv_tmp_base(), what, (long)getpid());
	if (!mkdtemp(p)) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create a temporary folder '%s'", p);
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int menv_tmp_mkfile(const char *what, char **out, int *fd, struct menv_error *err)
{
	*out = NULL;
	*fd = -1;
	int rc = own_lock(err);
	if (rc)
		return rc;
	char *p = menv_xasprintf("%s/menv-%s-%ld-XXXXXX", menv_tmp_base(), what, (long)getpid());
	*fd = mkostemp(p, O_CLOEXEC);
	if (*fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create a temporary file '%s'", p);
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}
