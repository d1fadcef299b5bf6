/*
 * sizes.c - what files weigh before they are downloaded: the plan of a lockfile install
 * shows each package's size and the total download, but conda-lock v1 and explicit locks
 * carry no size, so the transfer engine asks the servers (HEAD) before the plan is drawn. A
 * plain local file (file:///path) is measured here with open and fstat, as curl's file://
 * HEAD would (a regular file's size; nothing when it cannot be opened): a lock of 100,000
 * local entries would otherwise start 100,000 curl transfers for a plan.
 */
#include <dirent.h>
#include <errno.h>
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

/* The folders of the local files asked about, each listed once: a lock names thousands of
 * files of a few folders, most often not downloaded yet (one readdir, no failed open each). */
struct folder {
	int listed; /* 1: `names` holds its entries; 0: it does not exist; -1: not listable */
	struct menv_strset names;
};
struct folders {
	struct menv_strmap at; /* folder path -> index in v */
	struct folder *v;
	size_t n;
	char *last;      /* the folder asked about last (owned), or NULL: the next file is */
	size_t last_len; /* most often in it too (no copy, no lookup) */
	size_t last_at;
};

static const struct folder *folder_of(struct folders *fs, const char *path, size_t len)
{
	len = len ? len : 1;
	if (fs->last && fs->last_len == len && !memcmp(fs->last, path, len))
		return &fs->v[fs->last_at];
	char *dir = menv_xstrndup(path, len);
	const size_t *at = menv_strmap_get(&fs->at, dir);
	struct folder *f;
	DIR *d;
	struct dirent *e;

	free(fs->last);
	fs->last = dir;
	fs->last_len = len;
	if (at)
		return &fs->v[fs->last_at = *at];
	fs->last_at = fs->n;
	fs->v = menv_xrealloc(fs->v, (fs->n + 1) * sizeof(*fs->v));
	f = &fs->v[fs->n];
	menv_strmap_put(&fs->at, dir, fs->n++);
	memset(f, 0, sizeof(*f));
	d = opendir(dir);
	if (!d) {
		f->listed = errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	} else {
		f->listed = 1;
		while ((e = readdir(d)))
			menv_strset_add(&f->names, e->d_name);
		closedir(d);
	}
	return f;
}

static void folders_release(struct folders *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		menv_strset_clear(&fs->v[i].names);
	free(fs->v);
	free(fs->last);
	menv_strmap_clear(&fs->at);
}

/* 1 when `url` is a plain local file (its size in *size when it is a regular file that
 * opens, as curl's file:// HEAD reports it); 0 when curl must answer. A file that its
 * folder does not list (or whose folder does not exist) cannot open: no size, 1. */
static int local_size(struct folders *fs, const char *url, int64_t *size)
{
	char *path = plain_file_path(url);
	struct stat st;
	int fd, done = 1;

	if (!path)
		return 0;
	const char *base = strrchr(path, '/') + 1; /* the path starts with '/' */
	if (*base) {
		const struct folder *f = folder_of(fs, path, (size_t)(base - 1 - path));
		if (f->listed == 0 || (f->listed == 1 && !menv_strset_has(&f->names, base))) {
			free(path);
			return 1;
		}
	}
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
	struct menv_fetch_opts one = *o;
	struct menv_error err = {0};
	size_t *at = menv_xcalloc(n + 1, sizeof(*at)), k = 0; /* xs[i] is urls[at[i]] */
	struct folders fs = {MENV_STRMAP_INIT, NULL, 0, NULL, 0, 0};

	one.max_retries = 0; /* a size is a nicety: the download retries what fails */
	for (size_t i = 0; i < n; i++) {
		if (o->cancel && *o->cancel)
			break;
		if (!local_size(&fs, urls[i], &sizes[i]))
			at[k++] = i;
	}
	folders_release(&fs);
	/* the transfers of those curl answers only (a local file needs none) */
	struct menv_xfer *xs = menv_xcalloc(k + 1, sizeof(*xs));
	struct menv_xfer **ps = menv_xcalloc(k + 1, sizeof(*ps));
	for (size_t i = 0; i < k; i++) {
		menv_xfer_init(&xs[i], urls[at[i]]);
		xs[i].head = true;
		ps[i] = &xs[i];
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
