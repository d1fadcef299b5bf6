/*
 * beneath.c - every write menv makes inside a prefix goes through here: paths are resolved
 * relative to a directory descriptor of the prefix (or of a create's staging directory) and
 * never leave it, whatever links the packages put there.
 *
 * The rule: no component above the last of a path may be a symbolic link, and the last
 * component is never followed (files are created O_EXCL|O_NOFOLLOW, links are removed or
 * renamed as links). A link's *target* may be anything (it is data); nothing is written
 * through it. conda joins paths as strings and so writes through any link a package made
 * (`L -> ../../..` plus `L/M/file` leaves the prefix); menv refuses instead. No package of the
 * corpus or of the toolchain channel writes through a link another package made, and a rule
 * that allowed links "that stay inside" would let `x -> conda-meta` plus `x/y.json` plant
 * records past the check on conda-meta/.
 *
 * Resolution: openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS
 * where the kernel has it (Linux >= 5.6), else (ENOSYS, or a seccomp filter) a walk one
 * component at a time with openat(O_PATH | O_DIRECTORY | O_NOFOLLOW), each relative to the
 * descriptor of the one before (the idea of systemd's chase). When openat2 fails the walk runs
 * too and says which component is in the way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "link.h"

/* -1 unknown yet, 0 walk, 1 openat2 */
static int use_openat2 = -1;
static bool forced_walk;

void menv_beneath_force_walk(bool on)
{
	forced_walk = on;
	use_openat2 = on ? 0 : -1;
}

bool menv_beneath_uses_openat2(void)
{
	return use_openat2 == 1;
}

static bool want_openat2(void)
{
	if (use_openat2 < 0) {
		const char *e = getenv("MENV_TEST_NO_OPENAT2");
		use_openat2 = forced_walk || (e && *e && strcmp(e, "0")) ? 0 : 1;
	}
	return use_openat2 == 1;
}

bool menv_beneath_relpath_ok(const char *rel)
{
	if (!rel || !*rel || rel[0] == '/' || strchr(rel, '\n'))
		return false;
	for (const char *s = rel;;) {
		size_t n = strcspn(s, "/");
		if (n == 0 || n > NAME_MAX || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n;
		if (!*s)
			return true;
		s++;
	}
}

int menv_beneath_root(const char *path, int *fd, struct menv_error *err)
{
	*fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
	return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
	                      "cannot open directory '%s'", path);
}

/* Why `name` in dfd could not be opened as a directory, as an error about `shown` (the path
 * relative to the root up to this component). errno is kept. */
static int diagnose(int dfd, const char *name, const char *shown, int e, struct menv_error *err)
{
	struct stat st;
	int rc;

	if ((e == ENOTDIR || e == ELOOP || e == EXDEV) &&
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		rc = menv_error_set(err, MENV_EUNSAFE,
		                    "'%s' is a symbolic link (menv writes nothing through links "
		                    "in a prefix)",
		                    shown);
	else if (e == ENOTDIR || e == ELOOP)
		rc = menv_error_set(err, MENV_EEXIST, "'%s' exists and is not a directory", shown);
	else if (e == ENOENT)
		rc = menv_error_set(err, MENV_ENOTFOUND, "'%s' does not exist", shown);
	else {
		errno = e;
		rc = menv_error_sys(err, MENV_EIO, "cannot open directory '%s'", shown);
	}
	if (err)
		err->sys_errno = e;
	errno = e;
	return rc;
}

/* The walk: opens rel[0..len) beneath rootfd component by component, never following. */
static int walk(int rootfd, const char *rel, size_t len, int *out, struct menv_error *err)
{
	char name[NAME_MAX + 1];
	char *shown = menv_xstrndup(rel, len);
	int cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (cur < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot open the prefix directory");
		goto out;
	}
	for (size_t i = 0; i < len;) {
		size_t n = strcspn(rel + i, "/");
		if (n > len - i)
			n = len - i;
		memcpy(name, rel + i, n);
		name[n] = '\0';
		int nfd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (nfd >= 0 && (fstat(nfd, &st) < 0 || !S_ISDIR(st.st_mode))) {
			close(nfd); /* O_PATH|O_NOFOLLOW can open a link itself */
			nfd = -1;
			errno = ELOOP;
		}
		if (nfd < 0) {
			shown[i + n] = '\0';
			rc = diagnose(cur, name, shown, errno, err);
			close(cur);
			goto out;
		}
		close(cur);
		cur = nfd;
		i += n;
		if (i < len && rel[i] == '/')
			i++;
	}
	*out = cur;
out:
	free(shown);
	return rc;
}

/* Opens the directory rel[0..len) ("" is the root itself). */
static int open_dir(int rootfd, const char *rel, size_t len, int *out, struct menv_error *err)
{
	*out = -1;
	if (want_openat2()) {
		char *p = len ? menv_xstrndup(rel, len) : menv_xstrdup(".");
		struct open_how how = {
		        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
		};
		long fd = syscall(SYS_openat2, rootfd, p, &how, sizeof(how));
		int e = errno;
		free(p);
		if (fd >= 0) {
			*out = (int)fd;
			return 0;
		}
		if (e == ENOSYS || e == EPERM || e == E2BIG)
			use_openat2 = 0; /* an old kernel, or a filter: walk from now on */
	}
	return walk(rootfd, rel, len, out, err);
}

int menv_beneath_dir_fast(int rootfd, const char *rel, int *out)
{
	*out = -1;
	if (!want_openat2()) {
		errno = ENOSYS;
		return -1;
	}
	struct open_how how = {
	        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
	};
	long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	if (fd < 0) {
		if (errno == ENOSYS || errno == EPERM || errno == E2BIG)
			use_openat2 = 0;
		return -1;
	}
	*out = (int)fd;
	return 0;
}

/* The directory `name` (one component) of dirfd, not followed when it is a link: -1 with
 * errno (ELOOP for a link, ENOTDIR for another file) when it cannot be opened. */
static int open_child(int dirfd, const char *name)
{
	if (want_openat2()) {
		struct open_how how = {
		        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
		};
		long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS && errno != EPERM && errno != E2BIG)
			return -1;
		use_openat2 = 0;
	}
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))) {
		close(fd); /* O_PATH|O_NOFOLLOW can open a link itself */
		errno = ELOOP;
		return -1;
	}
	return fd;
}

int menv_beneath_subdir(int dirfd, const char *name, const char *shown, menv_beneath_mkdir_cb cb,
                        void *ud, int *out, struct menv_error *err)
{
	int rc, fd;

	*out = -1;
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return menv_error_set(err, MENV_EUNSAFE, "path '%s' leaves the prefix", shown);
	fd = open_child(dirfd, name);
	if (fd < 0 && errno == ENOENT) {
		rc = cb ? cb(ud, shown, err) : 0;
		if (rc)
			return rc;
		if (mkdirat(dirfd, name, menv_dir_mode()) < 0 && errno != EEXIST)
			return menv_error_sys(err, MENV_EIO, "cannot create directory '%s'", shown);
		fd = open_child(dirfd, name);
	}
	if (fd < 0)
		return diagnose(dirfd, name, shown, errno, err);
	*out = fd;
	return 0;
}

int menv_beneath_dir(int rootfd, const char *rel, int *out, struct menv_error *err)
{
	*out = -1;
	if (*rel && !menv_beneath_relpath_ok(rel))
		return menv_error_set(err, MENV_EUNSAFE, "path '%s' leaves the prefix", rel);
	return open_dir(rootfd, rel, strlen(rel), out, err);
}

int menv_beneath_parent(int rootfd, const char *rel, int *dirfd, const char **leaf,
                        struct menv_error *err)
{
	*dirfd = -1;
	*leaf = rel;
	if (!menv_beneath_relpath_ok(rel))
		return menv_error_set(err, MENV_EUNSAFE, "path '%s' leaves the prefix", rel);
	const char *slash = strrchr(rel, '/');
	*leaf = slash ? slash + 1 : rel;
	return open_dir(rootfd, rel, slash ? (size_t)(slash - rel) : 0, dirfd, err);
}

int menv_beneath_lstat(int rootfd, const char *rel, struct stat *st, struct menv_error *err)
{
	const char *leaf = NULL;
	int dfd = -1, rc = menv_beneath_parent(rootfd, rel, &dfd, &leaf, err);
	if (rc)
		return rc;
	if (fstatat(dfd, leaf, st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                    "cannot stat '%s'", rel);
	int e = errno;
	close(dfd);
	errno = e;
	return rc;
}

bool menv_beneath_exists(int rootfd, const char *rel)
{
	struct stat st;
	return menv_beneath_lstat(rootfd, rel, &st, NULL) == 0;
}

int menv_beneath_open_at(int dirfd, const char *leaf, const char *shown, int flags, mode_t mode,
                         int *fd, struct menv_error *err)
{
	int rc = 0;
	*fd = openat(dirfd, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	int e = errno;
	if (*fd < 0) {
		if (e == ELOOP)
			rc = menv_error_set(err, MENV_EUNSAFE,
			                    "'%s' is a symbolic link (menv writes nothing through "
			                    "links in a prefix)",
			                    shown);
		else
			rc = menv_error_sys(err, e == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
			                    "cannot open '%s'", shown);
		if (err)
			err->sys_errno = e;
	}
	errno = e;
	return rc;
}

int menv_beneath_open(int rootfd, const char *rel, int flags, mode_t mode, int *fd,
                      struct menv_error *err)
{
	const char *leaf = NULL;
	int dfd = -1, rc = menv_beneath_parent(rootfd, rel, &dfd, &leaf, err);

	*fd = -1;
	if (rc)
		return rc;
	rc = menv_beneath_open_at(dfd, leaf, rel, flags, mode, fd, err);
	int e = errno;
	close(dfd);
	errno = e;
	return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int menv_beneath_write_at(int dirfd, const char *leaf, const char *shown, const void *data,
                          size_t len, mode_t mode, int extra_flags, struct menv_error *err)
{
	int fd, rc = menv_beneath_open_at(dirfd, leaf, shown, O_WRONLY | O_CREAT | extra_flags,
	                                  mode & 07777, &fd, err);
	if (rc)
		return rc;
	if (write_all(fd, data, len) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", shown);
	if (close(fd) < 0 && !rc)
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", shown);
	return rc;
}

int menv_beneath_write(int rootfd, const char *rel, const void *data, size_t len, mode_t mode,
                       int extra_flags, struct menv_error *err)
{
	const char *leaf = NULL;
	int dfd = -1, rc = menv_beneath_parent(rootfd, rel, &dfd, &leaf, err);
	if (rc)
		return rc;
	rc = menv_beneath_write_at(dfd, leaf, rel, data, len, mode, extra_flags, err);
	int e = errno;
	close(dfd);
	errno = e;
	return rc;
}

int menv_beneath_mkdir(int rootfd, const char *rel, mode_t mode, struct menv_error *err)
{
	const char *leaf = NULL;
	int dfd = -1, rc = menv_beneath_parent(rootfd, rel, &dfd, &leaf, err);
	if (rc)
		return rc;
	if (mkdirat(dfd, leaf, mode) < 0)
		rc = menv_error_sys(err, errno == EEXIST ? MENV_EEXIST : MENV_EIO,
		                    "cannot create directory '%s'", rel);
	int e = errno;
	close(dfd);
	errno = e;
	return rc;
}

int menv_beneath_mkdirs(int rootfd, const char *rel, menv_beneath_mkdir_cb cb, void *ud,
                        struct menv_error *err)
{
	char name[NAME_MAX + 1];
	char *shown = NULL;
	int cur = -1, rc = 0;

	if (!menv_beneath_relpath_ok(rel))
		return menv_error_set(err, MENV_EUNSAFE, "path '%s' leaves the prefix", rel);
	shown = menv_xstrdup(rel);
	cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot open the prefix directory");
		goto out;
	}
	for (size_t i = 0; rel[i];) {
		size_t n = strcspn(rel + i, "/");
		memcpy(name, rel + i, n);
		name[n] = '\0';
		shown[i + n] = '\0';
		int nfd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			rc = cb ? cb(ud, shown, err) : 0;
			if (rc)
				goto out;
			if (mkdirat(cur, name, menv_dir_mode()) < 0 && errno != EEXIST) {
				rc = menv_error_sys(err, MENV_EIO, "cannot create directory '%s'",
				                    shown);
				goto out;
			}
			nfd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		struct stat st;
		if (nfd >= 0 && (fstat(nfd, &st) < 0 || !S_ISDIR(st.st_mode))) {
			close(nfd);
			nfd = -1;
			errno = ELOOP;
		}
		if (nfd < 0) {
			rc = diagnose(cur, name, shown, errno, err);
			goto out;
		}
		close(cur);
		cur = nfd;
		shown[i + n] = rel[i + n];
		i += n;
		if (rel[i] == '/')
			i++;
	}
out:
	if (cur >= 0)
		close(cur);
	free(shown);
	return rc;
}

int menv_beneath_symlink(const char *target, int rootfd, const char *rel, struct menv_error *err)
{
	const char *leaf = NULL;
	int dfd = -1, rc = menv_beneath_parent(rootfd, rel, &dfd, &leaf, err);
	if (rc)
		return rc;
	if (symlinkat(target, dfd, leaf) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot create link '%s'", rel);
	int e = errno;
	close(dfd);
	errno = e;
	return rc;
}

int menv_beneath_link(const char *src, int rootfd, const char *rel, struct menv_error *err)
{
	const char *leaf = NULL;
	int dfd = -1, rc = menv_beneath_parent(rootfd, rel, &dfd, &leaf, err);
	if (rc)
		return rc;
	if (linkat(AT_FDCWD, src, dfd, leaf, 0) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot link '%s'", rel);
	int e = errno;
	close(dfd);
	errno = e;
	return rc;
}

int menv_beneath_unlink(int rootfd, const char *rel, int flags, struct menv_error *err)
{
	const char *leaf = NULL;
	int dfd = -1, rc = menv_beneath_parent(rootfd, rel, &dfd, &leaf, err);
	if (rc)
		return rc;
	if (unlinkat(dfd, leaf, flags) < 0)
		rc = menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                    "cannot remove '%s'", rel);
	int e = errno;
	close(dfd);
	errno = e;
	return rc;
}

int menv_beneath_rename(int rootfd, const char *from, const char *to, struct menv_error *err)
{
	const char *lf = NULL, *lt = NULL;
	int df = -1, dt = -1;
	int rc = menv_beneath_parent(rootfd, from, &df, &lf, err);
	if (!rc)
		rc = menv_beneath_parent(rootfd, to, &dt, &lt, err);
	if (!rc && renameat(df, lf, dt, lt) < 0)
		rc = menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                    "cannot move '%s' to '%s'", from, to);
	int e = errno;
	if (df >= 0)
		close(df);
	if (dt >= 0)
		close(dt);
	errno = e;
	return rc;
}

/* Removes `name` in dfd and, when it is a directory, everything in it; never follows. */
static void remove_at(int dfd, const char *name, int depth)
{
	if (unlinkat(dfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM) || depth > 4096)
		return;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		remove_at(fd, de->d_name, depth + 1);
	}
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

void menv_beneath_remove_tree(int rootfd, const char *rel)
{
	const char *leaf = NULL;
	int dfd = -1;
	if (menv_beneath_parent(rootfd, rel, &dfd, &leaf, NULL))
		return;
	remove_at(dfd, leaf, 0);
	close(dfd);
}

bool menv_beneath_dir_empty(int rootfd, const char *rel)
{
	const char *leaf = NULL;
	int dfd = -1, fd = -1;
	bool empty = false;

	if (menv_beneath_parent(rootfd, rel, &dfd, &leaf, NULL))
		return false;
	fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return false;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	struct dirent *de;
	empty = true;
	while (empty && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

void menv_remove_tree(const char *path)
{
	char *p = menv_xstrdup(path);
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	char *slash = strrchr(p, '/');
	int dfd = -1;
	const char *leaf = NULL;

	if (!slash) {
		dfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		leaf = p;
	} else if (slash == p) {
		dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		leaf = p + 1;
	} else {
		*slash = '\0';
		dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		leaf = slash + 1;
	}
	if (dfd >= 0 && *leaf && strcmp(leaf, ".") && strcmp(leaf, ".."))
		remove_at(dfd, leaf, 0);
	if (dfd >= 0)
		close(dfd);
	free(p);
}
