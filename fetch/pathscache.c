/*
 * pathscache.c - the compact form of an extracted package's info/paths.json, kept beside it
 * in the package cache (`<pkgdir>/.menv-paths`), and the cache's check of an extracted
 * package that reads it. A warm create of a large environment read every package's
 * paths.json through jansson twice over (the check, the link): one JSON object per file,
 * a dozen allocations each. The compact file holds the same entries in menv's own binary
 * layout, read with one read(2) into one buffer that the entries point into.
 *
 * Layout (this machine's byte order; a cache, never copied between machines):
 *   "MENVPATHS2\n"                                       11 bytes
 *   uint64 dev, ino, size, mtime s, mtime ns, ctime s, ctime ns   of paths.json when read
 *   uint64 n (entries), body length, FNV-1a 64 of the body
 *   uint64 dev, ino, size, mtime s, mtime ns, ctime s, ctime ns   of info/index.json when
 *         its identity below was read (zeros: none kept)
 *   body: the NUL-terminated strings name, version and build of info/index.json (three
 *         empty strings: none kept), then per entry a flags byte (F_*), int64
 *         size_in_bytes when F_SIZE, then the NUL-terminated strings _path and, each when
 *         its flag is set, path_type, sha256, prefix_placeholder, file_mode.
 * The identity of index.json (the package's name, version and build: a lock create checks
 * that the file is the package its entry names, menv_paths_index_ident) is read when the
 * file is written, with index.json's identity beside it: it stands for index.json only
 * while index.json keeps that identity (one stat), else index.json is read again.
 * A file whose identity fields are not those of paths.json now (rewritten, re-extracted),
 * whose length, checksum or body does not add up (truncated, corrupt, a string that is not
 * UTF-8, which paths.json cannot hold), is ignored and
 * written again from paths.json (parsed by jansson, menv_pkgmeta_load). The file is made
 * when menv extracts the package (menv_paths_made) and only made again where one is: a
 * folder another tool extracted (conda's cache, read by menv) is never written into, nor one
 * in a read-only cache (conda's rule: its urls.txt, else the folder, not writable). A
 * paths.json with
 * anything the layout does not hold (a key other than those above, a value of another
 * type, a null) gets no compact file: it is read as JSON every time, as before. Writers
 * write a temporary file and rename it over the old one: two processes writing at once
 * write the same bytes, and a reader sees one whole file or the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAGIC     "MENVPATHS2\n"
#define MAGIC_LEN 11
#define NHDR      17 /* the two identities, n, body length, checksum */

enum {
	F_TYPE = 1,
	F_SHA = 2,
	F_SIZE = 4,
	F_PH = 8,
	F_MODE = 16,
	F_NOLINK = 32,   /* no_link present */
	F_NOLINK_T = 64, /* its value true */
};

struct menv_paths {
	size_t n;
	struct menv_pathent *e;
	char *body; /* the entries' strings */
	struct stat st;
	struct menv_pkgfile_st *kept; /* menv_paths_keep_stats, or NULL */
	int refs;
	uint64_t index_id[7]; /* index.json's identity when ident was read */
	const char *ident[3]; /* its name, version, build (into body); NULL: none kept */
};

static pthread_mutex_t paths_lock = PTHREAD_MUTEX_INITIALIZER;
static struct menv_strmap paths_map = MENV_STRMAP_INIT; /* pkgdir -> index in paths_v */
static struct menv_paths **paths_v;
static size_t paths_n, paths_cap;

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static void identity(const struct stat *st, uint64_t *h)
{
	h[0] = (uint64_t)st->st_dev;
	h[1] = (uint64_t)st->st_ino;
	h[2] = (uint64_t)st->st_size;
	h[3] = (uint64_t)st->st_mtim.tv_sec;
	h[4] = (uint64_t)st->st_mtim.tv_nsec;
	h[5] = (uint64_t)st->st_ctim.tv_sec;
	h[6] = (uint64_t)st->st_ctim.tv_nsec;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	uint64_t x[7], y[7];
	identity(a, x);
	identity(b, y);
	return !memcmp(x, y, sizeof(x));
}

static void paths_free(struct menv_paths *p)
{
	if (!p)
		return;
	free(p->e);
	free(p->body);
	free(p->kept);
	free(p);
}

void menv_paths_unref(struct menv_paths *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&paths_lock);
	bool last = --p->refs == 0;
	pthread_mutex_unlock(&paths_lock);
	if (last)
		paths_free(p);
}

/* The entries of a body (taken over), or NULL when it does not hold exactly n of them;
 * iid: index.json's identity when the body's name, version and build were read. */
static struct menv_paths *decode(char *body, size_t len, uint64_t n, const uint64_t *iid)
{
	struct menv_paths *p = menv_xcalloc(1, sizeof(*p));
	const char *s = body, *end = body + len;

	if (n > len) /* every entry takes two bytes at least */
		goto bad;
	p->e = menv_xcalloc((size_t)n + 1, sizeof(*p->e));
	p->body = body;
	/* index.json's name, version and build: all three, or none kept */
	for (size_t k = 0; k < 3; k++) {
		const char *z = memchr(s, '\0', (size_t)(end - s));
		if (!z || !menv_utf8_valid(s, (size_t)(z - s), NULL))
			goto bad;
		p->ident[k] = s;
		s = z + 1;
	}
	if (!*p->ident[0] || !*p->ident[1] || !*p->ident[2])
		p->ident[0] = p->ident[1] = p->ident[2] = NULL;
	else
		memcpy(p->index_id, iid, sizeof(p->index_id));
	for (; p->n < n; p->n++) {
		struct menv_pathent *e = &p->e[p->n];
		const char **str[] = {&e->path, &e->path_type, &e->sha256, &e->placeholder,
		                      &e->file_mode};
		const unsigned flag[] = {0, F_TYPE, F_SHA, F_PH, F_MODE};
		if (s >= end)
			goto bad;
		unsigned f = (unsigned char)*s++;
		if (f & ~127u)
			goto bad;
		e->size = -1;
		if (f & F_SIZE) {
			if (end - s < 8)
				goto bad;
			memcpy(&e->size, s, 8);
			s += 8;
			if (e->size < 0)
				goto bad;
		}
		e->no_link = f & F_NOLINK ? (f & F_NOLINK_T ? 1 : 0) : -1;
		for (size_t k = 0; k < 5; k++) {
			if (k && !(f & flag[k]))
				continue;
			const char *z = memchr(s, '\0', (size_t)(end - s));
			/* a string paths.json could hold: UTF-8 (jansson refuses the rest), so that
			 * the compact file never links a name the JSON's way refuses */
			if (!z || !menv_utf8_valid(s, (size_t)(z - s), NULL))
				goto bad;
			*str[k] = s;
			s = z + 1;
		}
	}
	if (s != end)
		goto bad;
	p->refs = 1;
	return p;
bad:
	p->body = NULL;
	paths_free(p);
	free(body);
	return NULL;
}

/* The compact file `file` when it is whole and made from the paths.json of identity `st`. */
static struct menv_paths *read_compact(const char *file, const struct stat *st, bool *present)
{
	uint64_t h[NHDR], want[7];
	char magic[MAGIC_LEN];
	struct stat fs;
	/* O_NONBLOCK: a FIFO there (a shared cache is anyone's) held the create in open() */
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	char *body = NULL;

	*present = fd >= 0 || errno != ENOENT;
	if (fd < 0)
		return NULL;
	identity(st, want);
	if (fstat(fd, &fs) < 0 || !S_ISREG(fs.st_mode) ||
	    (uint64_t)fs.st_size < MAGIC_LEN + sizeof(h) ||
	    pread(fd, magic, MAGIC_LEN, 0) != MAGIC_LEN || memcmp(magic, MAGIC, MAGIC_LEN) ||
	    pread(fd, h, sizeof(h), MAGIC_LEN) != (ssize_t)sizeof(h) ||
	    memcmp(h, want, sizeof(want)) || h[8] != (uint64_t)fs.st_size - MAGIC_LEN - sizeof(h) ||
	    h[8] > ((uint64_t)1 << 32))
		goto bad;
	body = menv_xmalloc((size_t)h[8] + 1);
	if (pread(fd, body, (size_t)h[8], MAGIC_LEN + sizeof(h)) != (ssize_t)h[8] ||
	    fnv1a((const unsigned char *)body, (size_t)h[8]) != h[9])
		goto bad;
	close(fd);
	return decode(body, (size_t)h[8], h[7], h + 10);
bad:
	free(body);
	close(fd);
	return NULL;
}

/* paths.json's "paths" in the compact body, or false when the layout cannot hold them. */
static bool encode(json_t *root, struct menv_buf *b, uint64_t *n)
{
	static const char *const keys[] = {"_path", "path_type", "sha256", "prefix_placeholder",
	                                   "file_mode"};
	static const unsigned flag[] = {0, F_TYPE, F_SHA, F_PH, F_MODE};
	json_t *list = json_object_get(root, "paths"), *e;
	size_t i;

	if (!json_is_array(list))
		return false;
	*n = json_array_size(list);
	json_array_foreach(list, i, e)
	{
		const char *key;
		json_t *v;
		unsigned f = 0;
		if (!json_is_object(e) || !json_is_string(json_object_get(e, "_path")))
			return false;
		json_object_foreach(e, key, v)
		{
			size_t k = 0;
			while (k < 5 && strcmp(key, keys[k]))
				k++;
			if (k < 5 && json_is_string(v))
				f |= flag[k];
			else if (!strcmp(key, "size_in_bytes") && json_is_integer(v) &&
			         json_integer_value(v) >= 0)
				f |= F_SIZE;
			else if (!strcmp(key, "no_link") && json_is_boolean(v))
				f |= F_NOLINK | (json_is_true(v) ? F_NOLINK_T : 0);
			else
				return false; /* a key or a value the layout does not hold */
		}
		menv_buf_addch(b, (char)f);
		if (f & F_SIZE) {
			int64_t sz =
			        (int64_t)json_integer_value(json_object_get(e, "size_in_bytes"));
			menv_buf_add(b, &sz, 8);
		}
		for (size_t k = 0; k < 5; k++)
			if (!k || (f & flag[k])) {
				const char *s = json_string_value(json_object_get(e, keys[k]));
				menv_buf_add(b, s, strlen(s) + 1);
			}
	}
	return true;
}

/* Writes the compact file: a temporary file renamed over `file`. Best effort. */
static void write_compact(const char *file, const struct stat *st, const struct menv_buf *body,
                          uint64_t n, const uint64_t *iid)
{
	static unsigned long seq;
	uint64_t h[NHDR];
	char *tmp = menv_xasprintf("%s.tmp-%ld-%lu", file, (long)getpid(),
	                           __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, menv_file_mode());
	bool ok = fd >= 0;

	identity(st, h);
	h[7] = n;
	h[8] = body->len;
	h[9] = fnv1a((const unsigned char *)body->buf, body->len);
	memcpy(h + 10, iid, 7 * sizeof(*h));
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_add(&b, MAGIC, MAGIC_LEN);
	menv_buf_add(&b, h, sizeof(h));
	menv_buf_add(&b, body->buf, body->len);
	for (size_t off = 0; ok && off < b.len;) {
		ssize_t w = write(fd, b.buf + off, b.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		off += ok ? (size_t)w : 0;
	}
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	if (fd >= 0 && (!ok || rename(tmp, file) < 0))
		unlink(tmp);
	menv_buf_release(&b);
	free(tmp);
}

/* The name, version and build that `<pkgdir>/info/index.json` gives, into b as three
 * NUL-terminated strings, and the identity of the file they were read from into iid (7
 * entries); three empty strings and zeros when it has none to keep: no such file, not a JSON
 * object, not three non-empty strings without a NUL, or the file changed while read. */
static void index_ident(const char *pkgdir, struct menv_buf *b, uint64_t *iid)
{
	static const char *const keys[] = {"name", "version", "build"};
	char *ip = menv_xasprintf("%s/info/index.json", pkgdir);
	const char *v[3] = {"", "", ""};
	struct stat st, after;
	json_t *j = NULL;
	bool ok = stat(ip, &st) == 0 && S_ISREG(st.st_mode);

	if (ok) /* json_is_object evaluates its argument twice: loaded first */
		j = menv_json_load_file(ip, 0, NULL);
	ok = ok && json_is_object(j);

	for (size_t k = 0; k < 3 && ok; k++) {
		json_t *s = json_object_get(j, keys[k]);
		v[k] = json_string_value(s);
		ok = v[k] && *v[k] && strlen(v[k]) == json_string_length(s);
	}
	ok = ok && stat(ip, &after) == 0 && same_file(&st, &after);
	memset(iid, 0, 7 * sizeof(*iid));
	if (ok)
		identity(&st, iid);
	for (size_t k = 0; k < 3; k++)
		menv_buf_add(b, ok ? v[k] : "", ok ? strlen(v[k]) + 1 : 1);
	json_decref(j);
	free(ip);
}

/* From paths.json (jansson): the entries, the compact file written beside it (with
 * index.json's identity: only where it is written, a folder menv extracted). */
static struct menv_paths *from_json(const char *pkgdir, const char *pj, const char *file,
                                    const struct stat *st, bool write)
{
	json_t *root = menv_pkgmeta_load(pj, NULL);
	struct menv_buf b = MENV_BUF_INIT;
	struct stat after;
	uint64_t n = 0, iid[7] = {0};
	struct menv_paths *p = NULL;

	if (write)
		index_ident(pkgdir, &b, iid);
	else
		menv_buf_add(&b, "\0\0", 3);
	/* the identity written is that of the file parsed: not kept when it changed meanwhile */
	if (root && encode(root, &b, &n) && stat(pj, &after) == 0 && same_file(st, &after)) {
		if (write)
			write_compact(file, st, &b, n, iid);
		char *body = menv_xmalloc(b.len + 1);
		memcpy(body, b.buf, b.len);
		p = decode(body, b.len, n, iid); /* the reader of the file: the same entries */
	}
	menv_buf_release(&b);
	json_decref(root);
	return p;
}

/* Whether the package cache holding `pkgdir` may be written (conda's is_writable, as
 * specs/config.c's pick of pkgs_dir: its urls.txt writable where there is one, else the
 * folder): a read-only cache is never written, not even a stale compact file in it. */
static bool cache_writable(const char *pkgdir)
{
	const char *slash = strrchr(pkgdir, '/');
	if (!slash || slash == pkgdir)
		return false;
	char *dir = menv_xstrndup(pkgdir, (size_t)(slash - pkgdir));
	char *urls = menv_xasprintf("%s/urls.txt", dir);
	bool ok = access(dir, W_OK | X_OK) == 0 &&
	          (access(urls, F_OK) != 0 || access(urls, W_OK) == 0);
	free(dir);
	free(urls);
	return ok;
}

static struct menv_paths *load(const char *pkgdir, struct menv_paths_entries *out, bool made)
{
	char *pj = menv_xasprintf("%s/info/paths.json", pkgdir);
	char *file = menv_xasprintf("%s/.menv-paths", pkgdir);
	struct menv_paths *p = NULL;
	struct stat st;

	/* the tests' way to compare with the JSON's way */
	if (getenv("MENV_TEST_NO_PATHS_CACHE") || stat(pj, &st) < 0)
		goto out;
	pthread_mutex_lock(&paths_lock);
	const size_t *at = menv_strmap_get(&paths_map, pkgdir);
	if (at && same_file(&paths_v[*at]->st, &st)) {
		p = paths_v[*at];
		p->refs++;
	}
	pthread_mutex_unlock(&paths_lock);
	if (p)
		goto out;
	bool present = false;
	p = read_compact(file, &st, &present);
	if (!p)
		p = from_json(pkgdir, pj, file, &st, made || (present && cache_writable(pkgdir)));
	if (!p)
		goto out;
	p->st = st;
	pthread_mutex_lock(&paths_lock);
	p->refs++; /* the process's own */
	at = menv_strmap_get(&paths_map, pkgdir);
	if (at) {
		struct menv_paths *old = paths_v[*at];
		paths_v[*at] = p;
		if (--old->refs == 0)
			paths_free(old);
	} else {
		if (paths_n == paths_cap) {
			paths_cap = paths_cap ? 2 * paths_cap : 256;
			paths_v = menv_xrealloc(paths_v, paths_cap * sizeof(*paths_v));
		}
		paths_v[paths_n] = p;
		menv_strmap_put(&paths_map, pkgdir, paths_n++);
	}
	pthread_mutex_unlock(&paths_lock);
out:
	if (p) {
		out->n = p->n;
		out->e = p->e;
	}
	free(pj);
	free(file);
	return p;
}

struct menv_paths *menv_paths_load(const char *pkgdir, struct menv_paths_entries *out)
{
	return load(pkgdir, out, false);
}

struct menv_paths *menv_paths_made(const char *pkgdir)
{
	struct menv_paths_entries pe;
	return load(pkgdir, &pe, true);
}

bool menv_paths_index_ident(const char *pkgdir, char *out[3])
{
	struct menv_paths *p = NULL;
	bool ok = false;

	/* the list the cache's check read (no stat of paths.json: what is kept here stands for
	 * index.json, whose identity is checked below), else the compact file */
	pthread_mutex_lock(&paths_lock);
	const size_t *at = menv_strmap_get(&paths_map, pkgdir);
	if (at) {
		p = paths_v[*at];
		p->refs++;
	}
	pthread_mutex_unlock(&paths_lock);
	if (!p) {
		struct menv_paths_entries pe;
		p = menv_paths_load(pkgdir, &pe);
	}
	if (p && p->ident[0]) {
		char *ip = menv_xasprintf("%s/info/index.json", pkgdir);
		struct stat st;
		uint64_t now[7];
		if (stat(ip, &st) == 0) {
			identity(&st, now);
			ok = !memcmp(now, p->index_id, sizeof(now));
		}
		for (size_t k = 0; ok && k < 3; k++)
			out[k] = menv_xstrdup(p->ident[k]);
		free(ip);
	}
	menv_paths_unref(p);
	return ok;
}

void menv_paths_keep_stats(struct menv_paths *p, struct menv_pkgfile_st *v)
{
	pthread_mutex_lock(&paths_lock);
	free(p->kept);
	p->kept = v;
	pthread_mutex_unlock(&paths_lock);
}

struct menv_pkgfile_st *menv_paths_stats(struct menv_paths *p)
{
	struct menv_pkgfile_st *v = NULL;
	pthread_mutex_lock(&paths_lock);
	if (p->kept) {
		v = menv_xmalloc((p->n + 1) * sizeof(*v));
		memcpy(v, p->kept, p->n * sizeof(*v));
	}
	pthread_mutex_unlock(&paths_lock);
	return v;
}

void menv_paths_clear(void)
{
	pthread_mutex_lock(&paths_lock);
	for (size_t i = 0; i < paths_n; i++)
		if (--paths_v[i]->refs == 0)
			paths_free(paths_v[i]);
	free(paths_v);
	paths_v = NULL;
	paths_n = paths_cap = 0;
	menv_strmap_clear(&paths_map);
	pthread_mutex_unlock(&paths_lock);
}

/* One file of the check: a file paths.json calls "hardlink" with a size is a regular file of
 * that size (a symlink there, to /etc/passwd, a folder or a FIFO is damage, not linked as
 * it is); `type` NULL when paths.json gives none. Its lstat into *seen. */
static bool file_intact(int dfd, const char *rel, const char *type, int64_t size,
                        struct menv_pkgfile_st *seen)
{
	struct stat sb;
	bool plain = *rel != '/';
	while (*rel == '/') /* "<dir>//x" as the path was joined before */
		rel++;
	if (fstatat(dfd, rel, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !(size < 0 || (!S_ISREG(sb.st_mode) && !type) ||
	      (S_ISREG(sb.st_mode) && (int64_t)sb.st_size == size)))
		return false;
	*seen = (struct menv_pkgfile_st){plain, sb.st_mode, sb.st_atim, sb.st_mtim};
	return true;
}

bool menv_pkgcache_intact(const char *dir)
{
	struct menv_paths_entries pe;
	struct menv_paths *p = menv_paths_load(dir, &pe);
	char *path = p ? NULL : menv_xasprintf("%s/info/paths.json", dir);
	json_t *j = p ? NULL : menv_pkgmeta_load(path, NULL), *paths = NULL;
	bool ok = true;

	if (!p && !j) { /* packages without paths.json (old formats) are trusted */
		free(path);
		return access(dir, F_OK) == 0;
	}
	/* each file stat'ed relative to the package's folder: no walk from / for each */
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j)
		paths = json_object_get(j, "paths");
	size_t n = p ? pe.n : json_array_size(paths);
	/* what each stat saw, kept for the link (menv_paths_stats, menv_pkgmeta_stats) */
	struct menv_pkgfile_st *seen = menv_xcalloc(n + 1, sizeof(*seen));
	ok = dfd >= 0;
	for (size_t i = 0; ok && i < n; i++) {
		const char *rel, *type;
		int64_t size = -1;
		if (p) {
			rel = pe.e[i].path;
			type = pe.e[i].path_type;
			size = pe.e[i].size;
		} else {
			json_t *e = json_array_get(paths, i);
			json_t *sz = json_object_get(e, "size_in_bytes");
			rel = json_string_value(json_object_get(e, "_path"));
			type = json_string_value(json_object_get(e, "path_type"));
			size = json_is_integer(sz) ? (int64_t)json_integer_value(sz) : -1;
			if (json_is_integer(sz) && size < 0)
				size = INT64_MAX; /* matches no file */
		}
		if (!rel || (type && strcmp(type, "hardlink")))
			continue; /* links and directories: not checked (as conda) */
		ok = file_intact(dfd, rel, type, size, &seen[i]);
	}
	if (dfd >= 0)
		close(dfd);
	if (ok && p)
		menv_paths_keep_stats(p, seen);
	else if (ok)
		menv_pkgmeta_keep_stats(path, j, seen, n);
	else
		free(seen);
	menv_paths_unref(p);
	json_decref(j);
	free(path);
	return ok;
}
