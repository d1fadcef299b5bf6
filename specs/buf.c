/*
 * buf.c - memory helpers, menv_buf (a git-style strbuf), string vectors and whole-file I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "specs.h"

static void oom(size_t n)
{
	fprintf(stderr, "menv: out of memory allocating %zu bytes\n", n);
	abort();
}

void menv_heap_for_large_input(void)
{
#if !defined(MENV_SANITIZED) && !defined(__SANITIZE_ADDRESS__) /* ASan: not glibc's heap */
	const size_t huge = 2u << 20;
	mallopt(M_MMAP_THRESHOLD, 256 << 20); /* big buffers from the heap, kept for reuse */
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	mallopt(M_TOP_PAD, 128 << 20); /* room reserved (not touched) at each growth */
	void *p = malloc(huge);        /* a growth now: the heap's end moves 130 MB on */
	uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1), e = (uintptr_t)sbrk(0);
	if (p && e > a)
		(void)madvise((void *)a, e - a,
		              MADV_HUGEPAGE); /* only a hint: none where refused */
	free(p);
#endif
}

void *menv_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *menv_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *menv_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *menv_xstrdup(const char *s)
{
	return s ? menv_xstrndup(s, strlen(s)) : NULL;
}

char *menv_xstrndup(const char *s, size_t n)
{
	char *p = menv_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *menv_xasprintf(const char *fmt, ...)
{
	struct menv_buf b = MENV_BUF_INIT;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	menv_buf_grow(&b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(b.buf, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b.len = (size_t)n;
	return b.buf;
}

char menv_buf_slop[1];

void menv_buf_init(struct menv_buf *b)
{
	b->buf = menv_buf_slop;
	b->len = b->alloc = 0;
}

void menv_buf_release(struct menv_buf *b)
{
	if (b->alloc)
		free(b->buf);
	menv_buf_init(b);
}

void menv_buf_reset(struct menv_buf *b)
{
	b->len = 0;
	if (b->alloc)
		b->buf[0] = '\0';
}

void menv_buf_grow(struct menv_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->alloc)
		return;
	size_t alloc = b->alloc ? b->alloc : 64;
	while (alloc < need)
		alloc *= 2;
	if (!b->alloc) {
		b->buf = menv_xmalloc(alloc);
		b->buf[0] = '\0';
	} else {
		b->buf = menv_xrealloc(b->buf, alloc);
	}
	b->alloc = alloc;
}

void menv_buf_add(struct menv_buf *b, const void *data, size_t n)
{
	menv_buf_grow(b, n);
	if (n) /* (NULL, 0) is an empty add: memcpy may not be given NULL */
		memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void menv_buf_adds(struct menv_buf *b, const char *s)
{
	menv_buf_add(b, s, strlen(s));
}

void menv_buf_addch(struct menv_buf *b, char c)
{
	menv_buf_add(b, &c, 1);
}

void menv_buf_addf(struct menv_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	menv_buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *menv_buf_detach(struct menv_buf *b)
{
	char *p;
	menv_buf_grow(b, 0);
	p = b->buf;
	menv_buf_init(b);
	return p;
}

/* Whether `st` is /dev/null (CONDARC=/dev/null: "no configuration"). */
static bool is_dev_null(const struct stat *st)
{
	struct stat n;
	return S_ISCHR(st->st_mode) && stat("/dev/null", &n) == 0 && S_ISCHR(n.st_mode) &&
	       n.st_rdev == st->st_rdev;
}

static int read_file(struct menv_buf *out, const char *path, bool regular, struct menv_error *err)
{
	int fd = -1;
	/* a FIFO's open waits for its writer: Ctrl-C there is an interruption, not an error. A
	 * file that must be regular is opened without waiting (O_NONBLOCK) and refused when it is
	 * not one: a FIFO there hung every command that read it (conda-meta/x-1-0.json) */
	int flags = O_RDONLY | O_CLOEXEC | (regular ? O_NONBLOCK : 0);
	while (!menv_cancelled() && (fd = open(path, flags)) < 0 && errno == EINTR)
		;
	if (fd < 0 && (errno == EINTR || menv_cancelled()))
		return menv_error_set(err, MENV_EINTR, "reading '%s' interrupted", path);
	if (fd < 0)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot open '%s'", path);
	if (regular) {
		struct stat st;
		if (fstat(fd, &st) < 0) {
			menv_error_sys(err, MENV_EIO, "cannot read '%s'", path);
			close(fd);
			return MENV_EIO;
		}
		if (!S_ISREG(st.st_mode) && !is_dev_null(&st)) {
			close(fd);
			return menv_error_set(err, MENV_EIO,
			                      "'%s' is not a regular file (%s): not read", path,
			                      S_ISDIR(st.st_mode)    ? "a directory"
			                      : S_ISFIFO(st.st_mode) ? "a FIFO"
			                      : S_ISSOCK(st.st_mode) ? "a socket"
			                                             : "a device");
		}
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	/* a regular file's size known: its bytes, the NUL and the room for the read that says
	 * the end, allocated once (a 20 MB lock grown by doubling was copied 9 times and its
	 * buffer's pages touched twice) */
	struct stat fst;
	if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_size > 0 &&
	    (uint64_t)fst.st_size < SIZE_MAX / 2 &&
	    out->len + (size_t)fst.st_size + 2 > out->alloc) {
		size_t alloc = out->len + (size_t)fst.st_size + 2;
		out->buf = out->alloc ? menv_xrealloc(out->buf, alloc) : menv_xmalloc(alloc);
		if (!out->alloc)
			out->buf[0] = '\0';
		out->alloc = alloc;
	}
	for (;;) {
		if (menv_cancelled()) {
			close(fd);
			return menv_error_set(err, MENV_EINTR, "reading '%s' interrupted", path);
		}
		if (out->alloc - out->len < 2)
			menv_buf_grow(out, 65536);
		size_t room = out->alloc - out->len - 1;
		/* at most 8 MiB a read: the cancel flag is looked at between them */
		ssize_t r = read(fd, out->buf + out->len, room < (8u << 20) ? room : (8u << 20));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			menv_error_sys(err, MENV_EIO, "cannot read '%s'", path);
			close(fd);
			return MENV_EIO;
		}
		if (r == 0)
			break;
		out->len += (size_t)r;
		out->buf[out->len] = '\0';
	}
	close(fd);
	return 0;
}

int menv_buf_read_file(struct menv_buf *out, const char *path, struct menv_error *err)
{
	return read_file(out, path, true, err);
}

int menv_buf_read_stream(struct menv_buf *out, const char *path, struct menv_error *err)
{
	return read_file(out, path, false, err);
}

/* The umask the process started with. Libraries set it to 0 for an instant while they work
 * (libarchive does, from any thread), so what menv creates takes its modes from this copy, never
 * from the kernel's at that moment. */
static mode_t start_umask = 022;

__attribute__((constructor)) static void save_umask(void)
{
	start_umask = umask(0);
	umask(start_umask);
}

mode_t menv_umask(void)
{
	return start_umask;
}

mode_t menv_file_mode(void)
{
	return 0666 & ~start_umask;
}

mode_t menv_dir_mode(void)
{
	return 0777 & ~start_umask;
}

int menv_open_lockfile(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, menv_file_mode());
	/* flock needs no write access: another user's lock file in a shared folder */
	if (fd < 0 && errno == EACCES) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 && errno == ENOENT)
			errno = EACCES; /* none there, and the folder cannot take one */
	}
	return fd;
}

int menv_write_file_atomic(const char *path, const void *data, size_t len, struct menv_error *err)
{
	return menv_write_file_atomic_mode(path, data, len, menv_file_mode(), err);
}

int menv_write_file_atomic_mode(const char *path, const void *data, size_t len, mode_t mode,
                                struct menv_error *err)
{
	char *tmp = NULL;
	const char *p = data;
	struct stat sb;
	int rc = 0, fd = -1;

	/* a device, a pipe or a socket given as the file (`--file /dev/null`) is not replaced */
	if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
		return menv_error_set(err, MENV_EIO, "'%s' is not a regular file: not replaced",
		                      path);
	tmp = menv_xasprintf("%s.tmp-XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create '%s'", tmp);
		goto out;
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", path);
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (!rc && fchmod(fd, mode) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot chmod '%s'", path);
	if (!rc && fsync(fd) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot sync '%s'", path);
	if (close(fd) < 0 && !rc)
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", path);
	if (!rc && rename(tmp, path) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot rename '%s' to '%s'", tmp, path);
	if (rc)
		unlink(tmp);
out:
	free(tmp);
	return rc;
}

void menv_strvec_push(struct menv_strvec *sv, const char *s)
{
	menv_strvec_push_owned(sv, menv_xstrdup(s));
}

void menv_strvec_push_owned(struct menv_strvec *sv, char *s)
{
	if (sv->n == sv->alloc) {
		sv->alloc = sv->alloc ? sv->alloc * 2 : 8;
		sv->v = menv_xrealloc(sv->v, sv->alloc * sizeof(*sv->v));
	}
	sv->v[sv->n++] = s;
}

bool menv_strvec_contains(const struct menv_strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

void menv_strvec_clear(struct menv_strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->alloc = 0;
}
