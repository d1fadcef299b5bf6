/*
 * pyccache.c - the .pyc of noarch python packages kept in the package cache, so that each is
 * compiled once per package and python, not once per environment (issue 25).
 *
 * With conda's compile command as scripts.c runs it (relative paths from the prefix,
 * PYTHONHASHSEED=0), a .pyc depends only on its source's bytes, the source's prefix-relative
 * path (co_filename, under site-packages), the interpreter (its magic number) and, in its
 * header, the source's mtime and size (PEP 552 timestamp .pyc). The .py of a noarch package
 * is the package cache's file (hardlinked, reflinked or softlinked, or copied with its times
 * kept) unless a prefix placeholder rewrote it, so the .pyc compiled in one prefix is the
 * .pyc of every other one: it is kept beside the package and linked into the next prefix
 * like any file of the package.
 *
 * Layout, inside the extracted package (its lifetime: `menv clean` of the package, or a new
 * extraction, takes them along; conda and micromamba ignore a dot folder there):
 *   <pkgs>/<dist>/.menv-pyc/<magic>-<site>/MANIFEST  "menv-pyc 2 <magic> <site>", then one
 *       line per compiled .py, in the order of the package's file list:
 *       "<c|-> <mtime s> <size> <pyc size> <pyc sha256|-> <prefix path of the .py>" ('-':
 *       python wrote no .pyc for it; it is compiled in the prefix each time), then
 *       "end <sha256 of every byte before this line>"
 *   <pkgs>/<dist>/.menv-pyc/<magic>-<site>/<i>.pyc  the .pyc of the i-th line
 *   <pkgs>/<python dist>/.menv-pyc/magic  the magic number of the python linked from there
 *       (8 hex digits), noted from a .pyc it compiled
 * <magic> is importlib.util.MAGIC_NUMBER in hex, <site> the first 12 hex digits of the
 * sha256 of the site-packages path (lib/python3.13t/site-packages has 3.13's magic).
 *
 * Written only into the writable cache (pkgs_dir), under its lock taken without waiting (a
 * busy lock: nothing is kept this time), each folder built as `.menv-pyc/.tmp-XXXXXX` and
 * renamed into place whole: a killed create leaves a temporary folder (removed by the next
 * writer, under the lock, or `menv clean`), never a half folder under its final name. A
 * folder is used only when its MANIFEST lists exactly the package's .py in order and each
 * .py in the prefix has the mtime and size its .pyc's header holds, and each kept .pyc is a
 * regular file of its MANIFEST size and sha256 with that header. A folder that does not
 * verify (a MANIFEST cut or altered: its end line's sha256; a .pyc cut, altered or made a
 * link) is compiled in the prefix and rebuilt from that compile under the cache lock, never
 * left in place. Everything here is best effort: what cannot be read or written is compiled
 * in the prefix, as without the cache.
 *
 * Nothing here follows a symbolic link below the package folder: every path under it is
 * opened beneath a descriptor of the folder (menv_beneath_*: openat2 RESOLVE_NO_SYMLINKS, or
 * an O_NOFOLLOW walk), so a `.menv-pyc`, a `<magic>-<site>` folder, a MANIFEST, a .pyc or a
 * `magic` that is a link (to a folder of valid-looking .pyc elsewhere, to /etc) is damage:
 * never read as the cache's content, never written through. A link or file where
 * `.menv-pyc` or a `<magic>-<site>` folder belongs is removed (as a link: unlinked, its
 * target untouched) by the next writer, under the cache lock, and the folder rebuilt.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch.h"
#include "link.h"

#define MANIFEST_TAG "menv-pyc 2"

static void hex4(const unsigned char m[4], char out[9])
{
	snprintf(out, 9, "%02x%02x%02x%02x", m[0], m[1], m[2], m[3]);
}

/* A magic number as python's: two bytes of version, then "\r\n". */
static bool magic_ok(const unsigned char m[4])
{
	return m[2] == '\r' && m[3] == '\n';
}

/* An O_PATH descriptor of the package folder `pkgdir` (its own path resolved as the cache's
 * paths are), or -1. */
static int pkg_root(const char *pkgdir)
{
	int fd;
	return menv_beneath_root(pkgdir, &fd, NULL) ? -1 : fd;
}

/* The regular file `rel` beneath `pkgfd` (no link anywhere in it, the last component
 * included) into b, when it is under 1 GiB. */
static bool read_beneath(int pkgfd, const char *rel, struct menv_buf *b)
{
	int fd;
	struct stat st;
	if (menv_beneath_open(pkgfd, rel, O_RDONLY | O_NONBLOCK, 0, &fd, NULL))
		return false;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 30);
	menv_buf_reset(b);
	if (ok) {
		menv_buf_grow(b, (size_t)st.st_size);
		ok = pread(fd, b->buf, (size_t)st.st_size, 0) == (ssize_t)st.st_size;
		b->len = ok ? (size_t)st.st_size : 0;
		b->buf[b->len] = '\0';
	}
	close(fd);
	return ok;
}

bool menv_pyccache_magic(const char *pydir, unsigned char magic[4])
{
	struct menv_buf b = MENV_BUF_INIT;
	unsigned v[4];
	int pkgfd = pkg_root(pydir);
	bool ok = pkgfd >= 0 && read_beneath(pkgfd, ".menv-pyc/magic", &b) && b.len == 9 &&
	          b.buf[8] == '\n' &&
	          sscanf(b.buf, "%2x%2x%2x%2x", &v[0], &v[1], &v[2], &v[3]) == 4;
	if (pkgfd >= 0)
		close(pkgfd);
	menv_buf_release(&b);
	for (int i = 0; ok && i < 4; i++)
		magic[i] = (unsigned char)v[i];
	return ok && magic_ok(magic);
}

/* ".menv-pyc/<magic>-<site hash>", relative to the package folder. Caller frees. */
static char *entry_rel(const unsigned char magic[4], const char *site)
{
	char mh[9], sh[65];
	hex4(magic, mh);
	menv_sha256_hex(site, strlen(site), sh);
	return menv_xasprintf(".menv-pyc/%s-%.12s", mh, sh);
}

static char *manifest_head(const unsigned char magic[4], const char *site)
{
	char mh[9];
	hex4(magic, mh);
	return menv_xasprintf("%s %s %s\n", MANIFEST_TAG, mh, site);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A kept .pyc is linked only when it is a regular file (not a link to elsewhere) of the size
 * its MANIFEST line gives, with the header of a timestamp .pyc of `py` (magic, no flags, its
 * mtime and size): a cut or rewritten one (a full disk, a hand edit) is compiled again in the
 * prefix instead of breaking the import there. */
static bool kept_pyc_ok(int pkgfd, const char *rel, long long pycsize, const char *sha,
                        const unsigned char magic[4], const struct stat *py)
{
	int fd = -1;
	if (menv_beneath_open(pkgfd, rel, O_RDONLY | O_NONBLOCK, 0, &fd, NULL))
		fd = -1;
	struct stat cs;
	struct menv_buf b = MENV_BUF_INIT;
	char got[65];
	bool ok = fd >= 0 && fstat(fd, &cs) == 0 && S_ISREG(cs.st_mode) &&
	          (long long)cs.st_size == pycsize && pycsize >= 16 && pycsize < (1 << 30);
	if (ok) { /* the whole file: its sha256 is the MANIFEST's */
		menv_buf_grow(&b, (size_t)pycsize);
		ok = pread(fd, b.buf, (size_t)pycsize, 0) == (ssize_t)pycsize;
		if (ok)
			menv_sha256_hex(b.buf, (size_t)pycsize, got);
		ok = ok && !strcmp(got, sha);
	}
	const unsigned char *h = (const unsigned char *)b.buf;
	ok = ok && !memcmp(h, magic, 4) &&
	     (!py || (le32(h + 4) == 0 && le32(h + 8) == (uint32_t)py->st_mtim.tv_sec &&
	              le32(h + 12) == (uint32_t)py->st_size));
	menv_buf_release(&b);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The MANIFEST `b` ends with "end <sha256 of the bytes before it>\n" at `at`. */
static bool manifest_end_ok(const struct menv_buf *b, const char *at)
{
	char want[65];
	size_t before = (size_t)(at - b->buf);
	menv_sha256_hex(b->buf, before, want);
	return b->len == before + 4 + 64 + 1 && !memcmp(at, "end ", 4) &&
	       !memcmp(at + 4, want, 64) && at[68] == '\n';
}

/* One MANIFEST line: its state, the .py's mtime and size, the .pyc's size and sha256, and
 * where the path starts (*off); false when it is not one. */
static bool manifest_line(const char *line, char *state, long long v[3], char sha[65], int *off)
{
	*off = 0;
	return sscanf(line, "%c %lld %lld %lld %64s %n", state, &v[0], &v[1], &v[2], sha, off) ==
	               5 &&
	       *off > 0 && (*state == 'c' || *state == '-');
}

bool menv_pyccache_find(const char *pkgdir, const unsigned char magic[4], const char *site,
                        int rootfd, json_t *py, char **src, int64_t *size)
{
	char *erel = entry_rel(magic, site);
	char *mf = menv_xasprintf("%s/MANIFEST", erel);
	char *head = manifest_head(magic, site);
	struct menv_buf b = MENV_BUF_INIT;
	size_t n = json_array_size(py), i = 0;
	int pkgfd = pkg_root(pkgdir);
	bool ok = pkgfd >= 0 && read_beneath(pkgfd, mf, &b) && b.len > strlen(head) &&
	          !memcmp(b.buf, head, strlen(head));
	const char *line = ok ? b.buf + strlen(head) : NULL;

	for (; ok && i < n; i++) {
		const char *want = json_string_value(json_array_get(py, i));
		const char *nl = strchr(line, '\n');
		char state, sha[65];
		long long v[3];
		int off = 0;
		struct stat sb;
		ok = want && nl && manifest_line(line, &state, v, sha, &off) &&
		     (size_t)(nl - line - off) == strlen(want) &&
		     !memcmp(line + off, want, strlen(want));
		/* the .py of this prefix is the one the .pyc was compiled from (its header) */
		ok = ok && fstatat(rootfd, want, &sb, 0) == 0 && S_ISREG(sb.st_mode) &&
		     (long long)sb.st_mtim.tv_sec == v[0] && (long long)sb.st_size == v[1];
		if (ok && state == 'c') {
			char *rel = menv_xasprintf("%s/%zu.pyc", erel, i);
			src[i] = menv_xasprintf("%s/%s", pkgdir, rel);
			size[i] = v[2];
			ok = kept_pyc_ok(pkgfd, rel, v[2], sha, magic, &sb);
			free(rel);
		}
		if (ok)
			line = nl + 1;
	}
	ok = ok && manifest_end_ok(&b, line);
	if (!ok)
		for (size_t k = 0; k < i && k < n; k++) {
			free(src[k]);
			src[k] = NULL;
		}
	if (pkgfd >= 0)
		close(pkgfd);
	menv_buf_release(&b);
	free(head);
	free(mf);
	free(erel);
	return ok;
}

int menv_pyccache_link(int rootfd, const char *src, const char *rel, enum menv_link_mode mode,
                       bool *no_hardlink)
{
	if (mode == MENV_LINK_SOFTLINK)
		return menv_beneath_symlink(src, rootfd, rel, NULL);
	if (mode != MENV_LINK_COPY && !*no_hardlink) {
		if (menv_beneath_link(src, rootfd, rel, NULL) == 0)
			return 0;
		if (errno != EXDEV && errno != EPERM && errno != EMLINK)
			return -1;
		*no_hardlink = true;
	}
	struct menv_buf b = MENV_BUF_INIT;
	struct stat sb;
	/* the file menv_pyccache_find checked, never a link put there since */
	int fd = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int rc = fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size >= (1 << 30)
	                 ? -1
	                 : 0;
	if (!rc) {
		menv_buf_grow(&b, (size_t)sb.st_size);
		rc = pread(fd, b.buf, (size_t)sb.st_size, 0) == (ssize_t)sb.st_size ? 0 : -1;
		b.len = (size_t)sb.st_size;
	}
	if (fd >= 0)
		close(fd);
	if (!rc && menv_beneath_write(rootfd, rel, b.buf, b.len, sb.st_mode & 07777, O_EXCL, NULL))
		rc = -1;
	menv_buf_release(&b);
	return rc;
}

/* The .pyc at rel of the prefix into b when it is a regular file whose header holds a
 * magic number, no flags (a timestamp .pyc) and `py`'s mtime and size; `magic` is set
 * from the first one read (magic[3] == 0 while unknown), later ones must agree. */
static bool read_pyc(int rootfd, const char *rel, const struct stat *py, unsigned char magic[4],
                     struct menv_buf *b, mode_t *mode)
{
	int fd;
	struct stat sb;
	if (menv_beneath_open(rootfd, rel, O_RDONLY, 0, &fd, NULL))
		return false;
	bool ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 16 &&
	          sb.st_size < (1 << 30);
	menv_buf_reset(b);
	if (ok) {
		menv_buf_grow(b, (size_t)sb.st_size);
		ssize_t got = read(fd, b->buf, (size_t)sb.st_size);
		ok = got == sb.st_size;
		if (ok) {
			b->len = (size_t)got;
			b->buf[b->len] = '\0';
		}
	}
	close(fd);
	const unsigned char *h = (const unsigned char *)b->buf;
	ok = ok && b->len >= 16 && magic_ok(h) && le32(h + 4) == 0 &&
	     le32(h + 8) == (uint32_t)py->st_mtim.tv_sec && le32(h + 12) == (uint32_t)py->st_size;
	if (ok && !magic[3])
		memcpy(magic, h, 4);
	ok = ok && !memcmp(magic, h, 4);
	*mode = sb.st_mode & 07777;
	return ok;
}

/* Removes the temporary folders killed writers left in `.menv-pyc` (basefd; under the cache
 * lock no other writer is running). */
static void remove_stale(int basefd)
{
	int fd = dup(basefd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	if (!d && fd >= 0)
		close(fd);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, ".tmp-", 5))
			menv_beneath_remove_tree(basefd, de->d_name);
	if (d)
		closedir(d);
}

/* Whether `dir` is `<pkgs_dir>/<one name>`. */
static bool in_cache(const char *pkgs_dir, const char *dir)
{
	size_t l = strlen(pkgs_dir);
	return dir && !strncmp(dir, pkgs_dir, l) && dir[l] == '/' && dir[l + 1] &&
	       !strchr(dir + l + 1, '/');
}

/* `<pkgdir>/.menv-pyc` (beneath pkgfd) opened as a directory, made when missing; a link or
 * anything else there is damage: unlinked (never followed) and the folder made again. -1
 * when it cannot be had. */
static int base_dir(int pkgfd)
{
	for (int tries = 0; tries < 2; tries++) {
		if (mkdirat(pkgfd, ".menv-pyc", menv_dir_mode()) < 0 && errno != EEXIST)
			return -1;
		int fd =
		        openat(pkgfd, ".menv-pyc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 || (errno != ELOOP && errno != ENOTDIR) ||
		    unlinkat(pkgfd, ".menv-pyc", 0) < 0)
			return fd;
	}
	return -1;
}

/* Whether `<magic>-<site>` is a folder there (no link), whole as written: its MANIFEST's head
 * and end line, and each kept .pyc of the size and sha256 its line gives (whichever prefix it
 * is for). */
static bool folder_ok(int pkgfd, const char *erel, const unsigned char magic[4], const char *site)
{
	char *mf = menv_xasprintf("%s/MANIFEST", erel), *head = manifest_head(magic, site);
	struct menv_buf b = MENV_BUF_INIT;
	bool ok = read_beneath(pkgfd, mf, &b) && b.len > strlen(head) &&
	          !memcmp(b.buf, head, strlen(head));
	const char *line = ok ? b.buf + strlen(head) : NULL;
	for (size_t i = 0; ok && strncmp(line, "end ", 4); i++) {
		const char *nl = strchr(line, '\n');
		char state, sha[65];
		long long v[3];
		int off;
		ok = nl && manifest_line(line, &state, v, sha, &off);
		if (ok && state == 'c') {
			char *p = menv_xasprintf("%s/%zu.pyc", erel, i);
			ok = kept_pyc_ok(pkgfd, p, v[2], sha, magic, NULL);
			free(p);
		}
		line = ok ? nl + 1 : line;
	}
	ok = ok && manifest_end_ok(&b, line);
	menv_buf_release(&b);
	free(head);
	free(mf);
	return ok;
}

/* A new temporary folder `.tmp-<pid>-<n>` in basefd: its descriptor, its name in `name`; -1
 * when none can be made. */
static int make_tmp(int basefd, char name[64])
{
	static unsigned seq;
	for (int tries = 0; tries < 100; tries++) {
		snprintf(name, 64, ".tmp-%ld-%u", (long)getpid(), seq++);
		if (mkdirat(basefd, name, menv_dir_mode()) == 0) {
			int fd = openat(basefd, name,
			                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				menv_beneath_remove_tree(basefd, name);
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	name[0] = '\0';
	return -1;
}

/* Writes `len` bytes as the new file `leaf` of dirfd (never through a link). */
static bool write_new(int dirfd, const char *leaf, const void *data, size_t len, mode_t mode)
{
	int fd = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	bool ok = fd >= 0 && write(fd, data, len) == (ssize_t)len;
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	return ok;
}

/* Keeps one package's .pyc: py the prefix paths of its .py, pyc those of their .pyc. A
 * folder there that does not verify (folder_ok), or a link where it belongs, is replaced. */
static void publish_one(const char *pkgdir, const char *site, int rootfd, json_t *py,
                        char *const *pyc, unsigned char magic[4])
{
	char *erel = entry_rel(magic, site), tmp[64] = "";
	const char *ename = erel + strlen(".menv-pyc/");
	struct menv_buf man = MENV_BUF_INIT, b = MENV_BUF_INIT;
	size_t n = json_array_size(py);
	int pkgfd = pkg_root(pkgdir), basefd = -1, tmpfd = -1;
	struct stat es;
	bool ok = true;

	if (pkgfd < 0 || (basefd = base_dir(pkgfd)) < 0)
		goto out;
	remove_stale(basefd);
	if (fstatat(basefd, ename, &es, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(es.st_mode) && folder_ok(pkgfd, erel, magic, site))
			goto out; /* kept by another create, whole */
		/* damaged: a link or file unlinked, a folder moved aside whole; then rebuilt */
		char old[64];
		snprintf(old, sizeof(old), ".tmp-damaged-%ld", (long)getpid());
		if (!S_ISDIR(es.st_mode) ? unlinkat(basefd, ename, 0) < 0
		                         : renameat(basefd, ename, basefd, old) < 0)
			goto out;
		if (S_ISDIR(es.st_mode))
			menv_beneath_remove_tree(basefd, old);
	}
	if ((tmpfd = make_tmp(basefd, tmp)) < 0)
		goto out;
	char *head = manifest_head(magic, site);
	menv_buf_adds(&man, head);
	free(head);
	for (size_t i = 0; ok && i < n; i++) {
		const char *rel = json_string_value(json_array_get(py, i));
		struct stat ps;
		mode_t mode = 0644;
		ok = rel && fstatat(rootfd, rel, &ps, 0) == 0 && S_ISREG(ps.st_mode);
		if (!ok)
			break;
		struct stat cs;
		bool have = menv_beneath_lstat(rootfd, pyc[i], &cs, NULL) == 0;
		if (have) {
			char leaf[32];
			snprintf(leaf, sizeof(leaf), "%zu.pyc", i);
			ok = read_pyc(rootfd, pyc[i], &ps, magic, &b, &mode) &&
			     write_new(tmpfd, leaf, b.buf, b.len, mode);
		}
		char line[192], sha[65] = "-";
		if (have)
			menv_sha256_hex(b.buf, b.len, sha);
		snprintf(line, sizeof(line), "%c %lld %lld %lld %s ", have ? 'c' : '-',
		         (long long)ps.st_mtim.tv_sec, (long long)ps.st_size,
		         have ? (long long)b.len : 0LL, sha);
		menv_buf_adds(&man, line);
		menv_buf_adds(&man, rel);
		menv_buf_addch(&man, '\n');
	}
	if (ok) {
		char sum[65];
		menv_sha256_hex(man.buf, man.len, sum);
		menv_buf_addf(&man, "end %s\n", sum);
		ok = write_new(tmpfd, "MANIFEST", man.buf, man.len, menv_file_mode());
	}
	/* a kill here leaves the temporary folder, never a half one under its final name */
	menv_crash_point();
	if (ok && renameat(basefd, tmp, basefd, ename) == 0)
		tmp[0] = '\0';
out:
	if (tmp[0])
		menv_beneath_remove_tree(basefd, tmp);
	if (tmpfd >= 0)
		close(tmpfd);
	if (basefd >= 0)
		close(basefd);
	if (pkgfd >= 0)
		close(pkgfd);
	menv_buf_release(&man);
	menv_buf_release(&b);
	free(erel);
}

/* Notes `magic` in `<pydir>/.menv-pyc/magic`, replaced by rename (a link there is replaced,
 * never written through). */
static void note_magic(const char *pydir, const unsigned char magic[4])
{
	int pkgfd = pkg_root(pydir), basefd = pkgfd >= 0 ? base_dir(pkgfd) : -1;
	char mh[9], line[10], tmp[64];
	hex4(magic, mh);
	snprintf(line, sizeof(line), "%s\n", mh);
	snprintf(tmp, sizeof(tmp), ".tmp-magic-%ld", (long)getpid());
	if (basefd >= 0) {
		unlinkat(basefd, tmp, 0);
		if (!write_new(basefd, tmp, line, 9, menv_file_mode()) ||
		    renameat(basefd, tmp, basefd, "magic") < 0)
			unlinkat(basefd, tmp, 0);
		close(basefd);
	}
	if (pkgfd >= 0)
		close(pkgfd);
}

void menv_pyccache_publish(const struct menv_pyc_cache *c, int rootfd, json_t *const *py,
                           char *const *const *pyc, const bool *keep, size_t n)
{
	unsigned char magic[4] = {0}, noted[4];
	struct menv_buf b = MENV_BUF_INIT;
	int lockfd = -1;
	bool any = false;

	/* the python's magic number, from the first .pyc it wrote */
	for (size_t k = 0; k < n && !magic[3]; k++)
		for (size_t i = 0; i < json_array_size(py[k]) && !magic[3]; i++) {
			struct stat ps;
			mode_t mode;
			const char *rel = json_string_value(json_array_get(py[k], i));
			if (rel && fstatat(rootfd, rel, &ps, 0) == 0)
				read_pyc(rootfd, pyc[k][i], &ps, magic, &b, &mode);
		}
	menv_buf_release(&b);
	if (!magic[3] || !c->pkgs_dir)
		return;
	bool note = c->note_magic && in_cache(c->pkgs_dir, c->pydir) &&
	            !(menv_pyccache_magic(c->pydir, noted) && !memcmp(noted, magic, 4));
	for (size_t k = 0; k < n; k++)
		any |= keep[k] && c->pkgs[k].cacheable && in_cache(c->pkgs_dir, c->pkgs[k].pkgdir);
	if ((!any && !note) || menv_pkgcache_trylock(c->pkgs_dir, &lockfd, NULL))
		return;
	for (size_t k = 0; k < n; k++)
		if (keep[k] && c->pkgs[k].cacheable && in_cache(c->pkgs_dir, c->pkgs[k].pkgdir))
			publish_one(c->pkgs[k].pkgdir, c->site, rootfd, py[k], pyc[k], magic);
	if (note)
		note_magic(c->pydir, magic);
	close(lockfd);
}
