/*
 * filelock.c - the lock every read-modify-write of a shared settings file takes (`.condarc`
 * edited by `menv config`, a shell's rc file edited by `menv shell init`): flock(2) on the
 * folder that holds the file's real path (links followed, as the write follows them).
 *
 * The file itself cannot carry the lock: it is replaced by a rename (menv_write_file_atomic),
 * so a second writer waiting on the old inode would then read and replace the new one with
 * its stale copy. A lock file beside it (`.condarc.lock`) would litter the home folder. The
 * folder stays the same inode across the rename and every menv process locks the same one, so
 * writers take turns and none loses another's change. The kernel drops the lock when the
 * process dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "specs.h"

int menv_file_lock(const char *path, int *lock_fd, struct menv_error *err)
{
	char *real = realpath(path, NULL);
	const char *p = real ? real : path;
	const char *slash = strrchr(p, '/');
	char *dir =
	        slash ? menv_xstrndup(p, slash == p ? 1 : (size_t)(slash - p)) : menv_xstrdup(".");
	int fd, rc = 0;

	*lock_fd = -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                    "cannot lock '%s': cannot open its folder '%s'", path, dir);
		goto out;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		rc = menv_error_sys(err, MENV_EIO, "cannot lock '%s'", path);
		close(fd);
		goto out;
	}
	*lock_fd = fd;
out:
	free(dir);
	free(real);
	return rc;
}

void menv_file_unlock(int lock_fd)
{
	if (lock_fd >= 0)
		close(lock_fd);
}
