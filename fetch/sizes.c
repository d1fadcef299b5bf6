/*
 * sizes.c - what files weigh before they are downloaded: the plan of a lockfile install
 * shows each package's size and the total download, but conda-lock v1 and explicit locks
 * carry no size, so the transfer engine asks the servers (HEAD) before the plan is drawn. A
 * plain local file (file:///path) is measured here with open and fstat, as curl's file://
 * HEAD would (a regular file's size; nothing when it cannot be opened): a lock of 100,000
 * local entries would otherwise start 100,000 curl transfers for a plan.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The local path of `url` (owned by the caller) when it is a file:// URL that names a path
 * as written: no host, no query or fragment, no "." or ".." segment, every %XX a byte other
 * than NUL. NULL otherwise: curl, which normalises those, decides. */
static char *plain_file_path(const char *url)
{
	if (strncmp(url, "file:///", 8) != 0 || strpbrk(url, "?#"))
		return NULL;
	const char *p = url + 7;
	char *path = menv_xmalloc(strlen(p) + 1), *w = path;
	for (; *p; p++) {
		if (*p != '%') {
			*w++ = *p;
			continue;
		}
		int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			goto curl;
		*w++ = (char)(hi * 16 + lo);
		p += 2;
	}
	*w = '\0';
	for (const char *q = path; (q = strstr(q, "/.")); q++)
		if (!q[2] || q[2] == '/' || (q[2] == '.' && (!q[3] || q[3] == '/')))
			goto curl; /* a "." or ".." segment (also spelt %2E) */
	return path;
curl:
	free(path);
	return NULL;
}

/* 1 when `url` is a plain local file (its size in *size when it is a regular file that
 * opens, as curl's file:// HEAD reports it); 0 when curl must answer. */
static int local_size(const char *url, int64_t *size)
{
	char *path = plain_file_path(url);
	struct stat st;
	int fd, done = 1;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0) {
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			if (st.st_size > 0)
				*size = (int64_t)st.st_size;
		} else {
			done = 0; /* a folder, a device, a FIFO: as curl says */
		}
		close(fd);
	}
	free(path);
	return done;
}

void menv_fetch_sizes(const char *const *urls, int64_t *sizes, size_t n,
                      const struct menv_fetch_opts *o)
{
	struct menv_xfer *xs = menv_xcalloc(n + 1, sizeof(*xs));
	struct menv_xfer **ps = menv_xcalloc(n + 1, sizeof(*ps));
	struct menv_fetch_opts one = *o;
	struct menv_error err = {0};
	size_t *at = menv_xcalloc(n + 1, sizeof(*at)), k = 0; /* xs[i] is urls[at[i]] */

	one.max_retries = 0; /* a size is a nicety: the download retries what fails */
	for (size_t i = 0; i < n; i++) {
		if (o->cancel && *o->cancel)
			break;
		if (local_size(urls[i], &sizes[i]))
			continue;
		menv_xfer_init(&xs[k], urls[i]);
		xs[k].head = true;
		ps[k] = &xs[k];
		at[k++] = i;
	}
	menv_xfer_run(ps, k, &one, NULL, false, &err);
	for (size_t i = 0; i < k; i++) {
		if (xs[i].rc == 0 && xs[i].content_length > 0)
			sizes[at[i]] = xs[i].content_length;
		menv_xfer_release(&xs[i]);
	}
	free(at);
	free(xs);
	free(ps);
}
