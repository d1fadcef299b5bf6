/*
 * archive.c - conda package archives (CEP-35) read with libarchive: `.tar.bz2` (a tar under
 * whatever filter it really has: some are gzip) and `.conda` (a stored ZIP, Zip64 allowed,
 * holding `info-*.tar.zst` and `pkg-*.tar.zst`, each streamed into a second reader without
 * being unpacked to disk or memory first).
 *
 * Extraction is the security boundary of the package cache: entry names are checked and
 * rewritten to absolute paths under the real path of `dest` before libarchive writes them
 * (no chdir: worker threads extract concurrently). Refused: absolute names, `..`
 * components, devices and FIFOs, writes through an existing symlink, hard links that leave
 * `dest`, symlinks that are absolute or whose target climbs out of `dest` (resolved
 * lexically from the link's directory; `..` is only allowed before the first normal
 * component, so no symlink inside `dest` can make the lexical answer wrong; a symlink with
 * an empty target, which cannot exist, becomes an empty file). libarchive's
 * own SECURE_NODOTDOT and SECURE_SYMLINKS checks run as a second line. Owners are not
 * restored; permission bits (less setuid/setgid/sticky and the umask, as conda's) and mtimes
 * are.
 *
 * A `.tar.bz2` of at least LBZIP2_MIN bytes is decoded by lbzip2 when it is on PATH (Debian's
 * `lbzip2`, which decodes bzip2 blocks on every core; one block is 900 kB, so smaller files
 * gain nothing): it reads the file and writes the tar into a pipe that the same tar reader,
 * with the same checks, reads. Only the bzip2 decoding moves out of the process; its exit
 * status is checked after the tar is read, and its one-line message becomes the error. Without
 * lbzip2, libarchive's own bzip2 decoder reads it as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "internal.h"

#define BLOCK (64 * 1024)
/* the smallest `.tar.bz2` handed to lbzip2: two bzip2 blocks of the largest size (-9) */
#define LBZIP2_MIN (2 * 900 * 1000)

extern char **environ;
/* libarchive's ARCHIVE_ERRNO_MISC (kept in its private header): its own security refusals */
#define ERRNO_MISC (-1)

/* ---------------------------------------------------------------------------------------- */
/* Opening                                                                                   */

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Opens `path` for reading and tells whether it is a `.conda` (by name or ZIP magic). */
static int open_package(const char *path, int *fd, bool *conda, struct menv_error *err)
{
	unsigned char magic[4] = {0};

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot open '%s'", path);
	if (pread(*fd, magic, sizeof(magic), 0) < 0) {
		menv_error_sys(err, MENV_EIO, "cannot read '%s'", path);
		close(*fd);
		*fd = -1;
		return MENV_EIO;
	}
	*conda = has_suffix(path, ".conda") || !memcmp(magic, "PK\3\4", 4);
	return 0;
}

static int read_error(struct archive *a, const char *path, const char *member,
                      struct menv_error *err)
{
	const char *msg = archive_error_string(a);

	if (!msg)
		msg = "unexpected end of data";
	if (member)
		return menv_error_set(err, MENV_EPARSE, "cannot read '%s' (member '%s'): %s", path,
		                      member, msg);
	return menv_error_set(err, MENV_EPARSE, "cannot read '%s': %s", path, msg);
}

/* A reader of the outer file: ZIP for `.conda`, tar under any filter for `.tar.bz2`. */
static int open_outer(struct archive **out, int fd, bool conda, const char *path,
                      struct menv_error *err)
{
	struct archive *a = archive_read_new();

	if (conda) {
		/* the central directory is required: a cut-off file is refused, not half-read */
		archive_read_support_format_zip_seekable(a);
	} else {
		archive_read_support_filter_all(a);
		archive_read_support_format_tar(a);
	}
	if (archive_read_open_fd(a, fd, BLOCK) != ARCHIVE_OK) {
		int rc = read_error(a, path, NULL, err);
		archive_read_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

/* The member of the outer ZIP currently being read, as the inner reader's data source. */
struct inner_src {
	struct archive *outer;
	char buf[BLOCK];
};

static la_ssize_t inner_read(struct archive *a, void *ud, const void **data)
{
	struct inner_src *s = ud;
	la_ssize_t n = archive_read_data(s->outer, s->buf, sizeof(s->buf));

	if (n < 0) {
		const char *msg = archive_error_string(s->outer);
		archive_set_error(a, archive_errno(s->outer), "%s", msg ? msg : "read error");
		return -1;
	}
	*data = s->buf;
	return n;
}

static int open_inner(struct archive **out, struct inner_src *src, const char *path,
                      const char *member, struct menv_error *err)
{
	struct archive *a = archive_read_new();

	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	if (archive_read_open(a, src, NULL, inner_read, NULL) != ARCHIVE_OK) {
		int rc = read_error(a, path, member, err);
		archive_read_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

/* Whether an outer `.conda` member is one of the inner tars: "info" or "pkg", else NULL.
 * The member's file name decides, whatever folder of the ZIP it sits in (some packages put
 * both under "<dist>/", as rattler's ca-certificates-2024.7.4-hbcca054_0.conda test resource;
 * rattler reads them by file name too). The folder never becomes a path on disk: the inner
 * tar's entries do, checked as always. */
static const char *inner_kind(const char *name)
{
	if (name && strrchr(name, '/'))
		name = strrchr(name, '/') + 1;
	if (!name || !has_suffix(name, ".tar.zst"))
		return NULL;
	if (has_prefix(name, "info-"))
		return "info";
	if (has_prefix(name, "pkg-"))
		return "pkg";
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry names                                                                               */

enum { NAME_OK, NAME_ABSOLUTE, NAME_DOTDOT };

/* Normalises an archive path: drops "." and empty components ("./info/x" -> "info/x").
 * Refuses absolute paths and ".." components. The result may be empty (the root itself). */
static int normalise(const char *in, struct menv_buf *out)
{
	const char *p = in;

	menv_buf_reset(out);
	if (in[0] == '/')
		return NAME_ABSOLUTE;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return NAME_DOTDOT;
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (out->len)
				menv_buf_addch(out, '/');
			menv_buf_add(out, p, n);
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return NAME_OK;
}

static const char *entry_pathname(struct archive_entry *e)
{
	const char *p = archive_entry_pathname(e);
	return p ? p : archive_entry_pathname_utf8(e);
}

static const char *entry_symlink(struct archive_entry *e)
{
	const char *p = archive_entry_symlink(e);
	return p ? p : archive_entry_symlink_utf8(e);
}

static const char *entry_hardlink(struct archive_entry *e)
{
	const char *p = archive_entry_hardlink(e);
	return p ? p : archive_entry_hardlink_utf8(e);
}

/* Whether a symlink at `name` (normalised) pointing to `target` leaves the root. */
static bool symlink_escapes(const char *name, const char *target)
{
	long depth = 0;
	bool seen_normal = false;
	const char *p;

	if (!target[0] || target[0] == '/')
		return true;
	for (p = name; *p; p++)
		if (*p == '/')
			depth++;
	p = target;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (seen_normal || --depth < 0)
				return true;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			seen_normal = true;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return false;
}

/* ---------------------------------------------------------------------------------------- */
/* lbzip2                                                                                    */

/* lbzip2 decoding one package: its pid, the read end of its stdout, and a memfd holding its
 * stderr (or -1). */
struct decoder {
	pid_t pid;
	int out, errfd;
};

/* The lbzip2 on PATH, into buf; false when there is none (or MENV_TEST_NO_LBZIP2 is set: the
 * tests compare both decoders). */
static bool find_lbzip2(char *buf, size_t n)
{
	const char *path = getenv("PATH");

	if (getenv("MENV_TEST_NO_LBZIP2"))
		return false;
	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		if (len && (size_t)snprintf(buf, n, "%.*s/lbzip2", (int)len, path) < n &&
		    access(buf, X_OK) == 0)
			return true;
		path += len;
		if (*path == ':')
			path++;
	}
	return false;
}

/* Starts lbzip2 on a `.tar.bz2` (fd, at offset 0) when it is installed and the file is large
 * and really bzip2 ("BZh"). d->pid stays 0 when it is not used. Errors: MENV_EIO. */
static int start_lbzip2(struct decoder *d, int fd, const char *path, struct menv_error *err)
{
	unsigned char magic[3] = {0};
	char bin[PATH_MAX];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def;
	int pfd[2], rc;
	struct stat st;

	d->pid = 0;
	d->out = d->errfd = -1;
	if (fstat(fd, &st) < 0 || st.st_size < LBZIP2_MIN || pread(fd, magic, 3, 0) != 3 ||
	    memcmp(magic, "BZh", 3) || !find_lbzip2(bin, sizeof(bin)))
		return 0;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot read '%s': no pipe for lbzip2", path);
	d->errfd = memfd_create("menv-lbzip2", MFD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	if (d->errfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, d->errfd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* a reader that stops early (the tar's end, or a refused entry) ends it with SIGPIPE,
	 * whatever this process's own disposition is */
	posix_spawnattr_init(&at);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
	char *argv[] = {bin, (char *)"-d", (char *)"-c", NULL};
	rc = posix_spawn(&d->pid, bin, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		if (d->errfd >= 0)
			close(d->errfd);
		d->pid = 0;
		d->errfd = -1;
		errno = rc;
		return menv_error_sys(err, MENV_EIO, "cannot read '%s': cannot run '%s'", path,
		                      bin);
	}
	d->out = pfd[0];
	return 0;
}

/* Waits for lbzip2 (its pipe closed first, so that one still writing ends) and folds its
 * outcome into rc: a failure of lbzip2 is the error when reading found none or only what
 * its failure caused (a cut tar: MENV_EPARSE). SIGPIPE is the reader having stopped; SIGINT
 * or SIGTERM (Ctrl-C reaches the whole process group) is MENV_EINTR. */
static int finish_lbzip2(struct decoder *d, int rc, const char *path, struct menv_error *err)
{
	int status = 0;

	if (!d->pid)
		return rc;
	close(d->out);
	while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc || rc == MENV_EPARSE) {
		char msg[512] = "";
		ssize_t n = d->errfd >= 0 ? pread(d->errfd, msg, sizeof(msg) - 1, 0) : 0;
		char *line = msg, *nl;

		msg[n > 0 ? n : 0] = '\0';
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (!strncmp(line, "lbzip2: ", 8))
			line += 8;
		if (!strncmp(line, "stdin: ", 7))
			line += 7;
		if (WIFEXITED(status) && WEXITSTATUS(status))
			rc = menv_error_set(err, MENV_EPARSE, "cannot read '%s': lbzip2: %s", path,
			                    *line ? line : "bzip2 data error");
		else if (WIFSIGNALED(status) &&
		         (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM))
			rc = menv_error_set(err, MENV_EINTR, "interrupted while reading '%s'",
			                    path);
		else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGPIPE)
			rc = menv_error_set(err, MENV_EPARSE,
			                    "cannot read '%s': lbzip2 was killed by signal %d",
			                    path, WTERMSIG(status));
	}
	if (d->errfd >= 0)
		close(d->errfd);
	d->pid = 0;
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Extraction                                                                                */

struct xctx {
	const char *path;   /* the package file, for messages */
	const char *member; /* the inner tar being read, or NULL */
	char *root;         /* real path of dest */
	struct archive *disk;
	struct menv_buf name, link, full, tmp;
	char *block;
	struct menv_error *err;
};

static int unsafe(struct xctx *x, const char *name, const char *why)
{
	if (x->member)
		return menv_error_set(x->err, MENV_EUNSAFE,
		                      "unsafe entry '%s' in '%s' (member "
		                      "'%s'): %s",
		                      name, x->path, x->member, why);
	return menv_error_set(x->err, MENV_EUNSAFE, "unsafe entry '%s' in '%s': %s", name, x->path,
	                      why);
}

/* Refuses a normalised path whose parent directories (and the path itself when `self`)
 * exist as symlinks under the root: writing there would go through them. */
static int check_no_symlink(struct xctx *x, const char *entry, const char *rel, bool self)
{
	const char *p = rel;
	struct stat st;

	menv_buf_reset(&x->tmp);
	menv_buf_adds(&x->tmp, x->root);
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (!end && !self)
			break;
		menv_buf_addch(&x->tmp, '/');
		menv_buf_add(&x->tmp, p, n);
		if (lstat(x->tmp.buf, &st) < 0)
			return 0; /* does not exist: nothing below it can either */
		if (S_ISLNK(st.st_mode)) {
			char why[PATH_MAX + 64];
			snprintf(why, sizeof(why), "it goes through the symlink '%s'",
			         x->tmp.buf + strlen(x->root) + 1);
			return unsafe(x, entry, why);
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return 0;
}

static int name_error(struct xctx *x, const char *entry, int kind, const char *what)
{
	char why[128];

	snprintf(why, sizeof(why), "%s %s", what,
	         kind == NAME_ABSOLUTE ? "is an absolute path" : "has a '..' component");
	return unsafe(x, entry, why);
}

/* Checks one entry and rewrites its paths under the root. Returns 1 to skip it. */
static int prepare_entry(struct xctx *x, struct archive_entry *e)
{
	const char *entry = entry_pathname(e);
	const char *hardlink = entry_hardlink(e);
	mode_t type = archive_entry_filetype(e);
	mode_t perm = archive_entry_perm(e) & 0777;
	int kind, rc;

	if (!entry)
		return menv_error_set(x->err, MENV_EPARSE, "cannot read '%s': entry without a name",
		                      x->path);
	/* paths.json and conda-meta records are JSON, which holds only UTF-8: a file with any
	 * other name would be on disk but in no record (never removed, never checked) */
	if (!menv_utf8_valid(entry, strlen(entry), NULL))
		return unsafe(x, entry, "the name is not valid UTF-8");
	kind = normalise(entry, &x->name);
	if (kind != NAME_OK)
		return name_error(x, entry, kind, "the name");
	if (!x->name.len)
		return 1; /* "." or "./": the root itself */
	if (!hardlink && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
		return unsafe(x, entry, "device, fifo or socket entries are not allowed");
	rc = check_no_symlink(x, entry, x->name.buf, false);
	if (rc)
		return rc;

	if (hardlink) {
		kind = normalise(hardlink, &x->link);
		if (kind != NAME_OK)
			return name_error(x, entry, kind, "the hard link target");
		if (!x->link.len)
			return unsafe(x, entry, "hard link to the destination itself");
		rc = check_no_symlink(x, entry, x->link.buf, false);
		if (rc)
			return rc;
		menv_buf_reset(&x->full);
		menv_buf_addf(&x->full, "%s/%s", x->root, x->link.buf);
		archive_entry_set_hardlink(e, x->full.buf);
	} else if (type == AE_IFLNK && (!entry_symlink(e) || !entry_symlink(e)[0])) {
		/* A symlink without a target cannot exist. Early `.conda` conversions wrote
		 * some (the `.tar.bz2` beside them holds an empty file there): give the same
		 * empty file, so both formats of a package extract alike. */
		archive_entry_set_symlink(e, NULL);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_size(e, 0);
		perm = 0644;
	} else if (type == AE_IFLNK) {
		const char *target = entry_symlink(e);
		if (symlink_escapes(x->name.buf, target)) {
			char why[PATH_MAX + 64];
			snprintf(why, sizeof(why), "symlink to '%s' leaves the destination",
			         target);
			return unsafe(x, entry, why);
		}
	}

	/* less the umask, as conda's extraction (conda-package-streaming's chmod of `mode & (0o777
	 * - umask)`): a package's 0666 or 0777 file is no file every user may write, in the cache
	 * and in each prefix that hardlinks it */
	perm &= ~menv_umask();
	if (type == AE_IFDIR)
		perm |= 0700;
	archive_entry_set_perm(e, perm);
	menv_buf_reset(&x->full);
	menv_buf_addf(&x->full, "%s/%s", x->root, x->name.buf);
	archive_entry_set_pathname(e, x->full.buf);
	return 0;
}

static int disk_error(struct xctx *x, const char *what)
{
	const char *msg = archive_error_string(x->disk);
	int eno = archive_errno(x->disk);

	if (!msg)
		msg = "unknown error";
	if (eno == ERRNO_MISC)
		return unsafe(x, x->name.buf, msg);
	/* libarchive's "Write failed" names no cause: the errno's text after it */
	const char *why = eno > 0 && !strstr(msg, strerror(eno)) ? strerror(eno) : NULL;
	menv_error_set(x->err, MENV_EIO, "cannot %s '%s' from '%s': %s%s%s", what, x->name.buf,
	               x->path, msg, why ? ": " : "", why ? why : "");
	x->err->sys_errno = eno > 0 ? eno : 0;
	return MENV_EIO;
}

/* Ctrl-C (the cancel flag) stops an extraction between two blocks: a large package is
 * abandoned within a block's decompression (milliseconds), not at its end. */
static int interrupted(struct xctx *x)
{
	return menv_error_set(x->err, MENV_EINTR, "extraction of '%s' interrupted", x->path);
}

static int copy_data(struct xctx *x, struct archive *a)
{
	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(a, &buf, &size, &offset);

		if (menv_cancelled())
			return interrupted(x);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return read_error(a, x->path, x->member, x->err);
		/* a failed write(2) (ENOSPC, EDQUOT, EFBIG) is only ARCHIVE_WARN to libarchive,
		 * which then extends the file to its size at finish_entry: on a file system that
		 * takes the truncate (tmpfs, a quota's last block) a full cache held packages of
		 * the right sizes filled with zeros, under their final names */
		if (archive_write_data_block(x->disk, buf, size, offset) != ARCHIVE_OK)
			return disk_error(x, "write");
	}
}

static int extract_tar(struct xctx *x, struct archive *a)
{
	struct archive_entry *e;
	int r, rc;

	for (;;) {
		if (menv_cancelled())
			return interrupted(x);
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return read_error(a, x->path, x->member, x->err);
		rc = prepare_entry(x, e);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		if (archive_write_header(x->disk, e) < ARCHIVE_WARN)
			return disk_error(x, "extract");
		if (archive_entry_size(e) > 0 && (rc = copy_data(x, a)))
			return rc;
		if (archive_write_finish_entry(x->disk) < ARCHIVE_WARN)
			return disk_error(x, "extract");
	}
}

static int extract_conda(struct xctx *x, struct archive *outer)
{
	struct inner_src *src = menv_xmalloc(sizeof(*src));
	struct archive_entry *e;
	bool seen_info = false;
	int r, rc = 0;

	src->outer = outer;
	for (;;) {
		struct archive *inner = NULL;
		const char *name, *kind;

		r = archive_read_next_header(outer, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			rc = read_error(outer, x->path, NULL, x->err);
			goto out;
		}
		name = entry_pathname(e);
		kind = inner_kind(name);
		if (!kind)
			continue; /* metadata.json and anything unknown */
		seen_info |= !strcmp(kind, "info");
		x->member = name;
		rc = open_inner(&inner, src, x->path, name, x->err);
		if (!rc)
			rc = extract_tar(x, inner);
		archive_read_free(inner);
		x->member = NULL;
		if (rc)
			goto out;
	}
	if (!seen_info)
		rc = menv_error_set(x->err, MENV_EPARSE,
		                    "cannot read '%s': no 'info-*.tar.zst' member", x->path);
out:
	free(src);
	return rc;
}

int menv_archive_extract(const char *archive, const char *dest, struct menv_error *err)
{
	struct menv_error local;
	struct xctx x = {archive,       NULL,          NULL,          NULL, MENV_BUF_INIT,
	                 MENV_BUF_INIT, MENV_BUF_INIT, MENV_BUF_INIT, NULL, err ? err : &local};
	struct archive *in = NULL;
	struct decoder dec = {0, -1, -1};
	bool conda = false;
	int fd = -1, rc;

	x.root = realpath(dest, NULL);
	if (!x.root)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot open the directory '%s'", dest);
	rc = open_package(archive, &fd, &conda, err);
	if (!rc && !conda)
		rc = start_lbzip2(&dec, fd, archive, err);
	if (rc)
		goto out;
	rc = open_outer(&in, dec.pid ? dec.out : fd, conda, archive, err);
	if (rc)
		goto out;
	menv_buf_init(&x.name);
	menv_buf_init(&x.link);
	menv_buf_init(&x.full);
	menv_buf_init(&x.tmp);
	x.disk = archive_write_disk_new();
	archive_write_disk_set_options(x.disk, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
	                                               ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	                                               ARCHIVE_EXTRACT_SECURE_SYMLINKS);
	rc = conda ? extract_conda(&x, in) : extract_tar(&x, in);
	/* close applies the deferred directory permissions and times */
	if (archive_write_close(x.disk) != ARCHIVE_OK && !rc)
		rc = disk_error(&x, "finish");
out:
	if (x.disk)
		archive_write_free(x.disk);
	if (in)
		archive_read_free(in);
	rc = finish_lbzip2(&dec, rc, archive, err);
	if (fd >= 0)
		close(fd);
	menv_buf_release(&x.name);
	menv_buf_release(&x.link);
	menv_buf_release(&x.full);
	menv_buf_release(&x.tmp);
	free(x.root);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading one member                                                                        */

/* Finds `member` (normalised) in a tar reader and appends its bytes to `out`. */
static int tar_find(struct archive *a, const char *path, const char *inner, const char *member,
                    struct menv_buf *out, bool *found, struct menv_error *err)
{
	struct menv_buf name = MENV_BUF_INIT;
	struct archive_entry *e;
	int r, rc = 0;

	*found = false;
	menv_buf_init(&name);
	for (;;) {
		const char *p;

		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			goto out;
		if (r < ARCHIVE_WARN) {
			rc = read_error(a, path, inner, err);
			goto out;
		}
		p = entry_pathname(e);
		if (!p || normalise(p, &name) != NAME_OK || strcmp(name.buf, member))
			continue;
		*found = true;
		if (archive_entry_filetype(e) != AE_IFREG || entry_hardlink(e)) {
			rc = menv_error_set(err, MENV_EPARSE, "'%s' in '%s' is not a regular file",
			                    member, path);
			goto out;
		}
		for (;;) {
			la_ssize_t n;
			menv_buf_grow(out, BLOCK);
			n = archive_read_data(a, out->buf + out->len, BLOCK);
			if (n < 0) {
				rc = read_error(a, path, inner, err);
				goto out;
			}
			if (n == 0)
				break;
			out->len += (size_t)n;
			out->buf[out->len] = '\0';
		}
		goto out;
	}
out:
	menv_buf_release(&name);
	return rc;
}

int menv_archive_read_member(const char *archive, const char *member, struct menv_buf *out,
                             struct menv_error *err)
{
	struct menv_buf want = MENV_BUF_INIT;
	struct inner_src *src = NULL;
	struct archive *in = NULL;
	size_t start = out->len;
	bool conda = false, found = false;
	int fd = -1, rc;

	menv_buf_init(&want);
	menv_buf_grow(out, 0);
	if (normalise(member, &want) != NAME_OK || !want.len) {
		rc = menv_error_set(err, MENV_ENOTFOUND, "'%s' not found in '%s'", member, archive);
		goto out;
	}
	rc = open_package(archive, &fd, &conda, err);
	if (rc)
		goto out;
	rc = open_outer(&in, fd, conda, archive, err);
	if (rc)
		goto out;
	if (!conda) {
		rc = tar_find(in, archive, NULL, want.buf, out, &found, err);
		goto out;
	}
	/* `.conda`: info/ lives in info-*.tar.zst, everything else in pkg-*.tar.zst */
	src = menv_xmalloc(sizeof(*src));
	src->outer = in;
	for (;;) {
		const char *want_kind = has_prefix(want.buf, "info/") ? "info" : "pkg";
		struct archive *inner = NULL;
		struct archive_entry *e;
		const char *name, *kind;
		int r = archive_read_next_header(in, &e);

		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			rc = read_error(in, archive, NULL, err);
			goto out;
		}
		name = entry_pathname(e);
		kind = inner_kind(name);
		if (!kind || strcmp(kind, want_kind))
			continue;
		rc = open_inner(&inner, src, archive, name, err);
		if (!rc)
			rc = tar_find(inner, archive, name, want.buf, out, &found, err);
		archive_read_free(inner);
		if (rc || found)
			goto out;
	}
out:
	if (!rc && !found)
		rc = menv_error_set(err, MENV_ENOTFOUND, "'%s' not found in '%s'", member, archive);
	if (rc) {
		out->len = start;
		out->buf[start] = '\0';
	}
	free(src);
	if (in)
		archive_read_free(in);
	if (fd >= 0)
		close(fd);
	menv_buf_release(&want);
	return rc;
}
