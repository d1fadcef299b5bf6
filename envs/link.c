/*
 * link.c - linking one extracted package into a prefix (CEP-34): the file list of
 * `info/paths.json` (or legacy `info/files` + `info/has_prefix`), the link method (reflink,
 * hardlink, softlink or copy), prefix replacement in text and binary files, softlinks,
 * noarch python paths (CEP-20) and entry points. Every file is journaled before it is
 * created, and a path that exists already is moved aside (and reported as a clobber).
 * Produces the `files` and `paths_data` of the PrefixRecord.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "link.h"
#include "prefix.h"

#define MAX_SHEBANG 127

struct path_entry {
	const char *path;        /* relative path in the package */
	const char *path_type;   /* hardlink, softlink, directory */
	const char *placeholder; /* NULL when none */
	bool binary;             /* file_mode binary */
	bool no_link;
	json_t *src; /* the paths.json entry (borrowed), NULL for legacy and compact */
	const struct menv_pathent *ce; /* the compact entry (borrowed), or NULL */
	/* the package file's lstat, kept by menv_link_list_links (have_st) so that linking
	 * does not stat it again */
	bool have_st;
	mode_t mode;
	struct timespec atim, mtim;
};

/* The file list of one extracted package, read once (menv_link_list_load). */
struct menv_link_list {
	json_t *root;             /* info/paths.json, or NULL for a legacy or compact one */
	struct menv_paths *paths; /* its compact form (menv_paths_load), or NULL */
	struct menv_buf legacy;   /* info/files, cut into lines */
	char **phs;               /* the legacy entries' placeholders (owned) */
	struct path_entry *e;     /* entries, in the package's order */
	size_t n;
	json_t *meta; /* info/link.json or package_metadata.json, or NULL */
	char **eps;   /* "bin/<name>" of its python entry points, NULL-terminated */
};

void menv_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;
	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
}

/* A path a package may not own: conda-meta/ (the environment's records, history, pinned,
 * the journal and the lock) and top-level `.menv*` names (menv's own files). */
static bool reserved_path(const char *rel)
{
	size_t n = strcspn(rel, "/");
	return (n == 10 && !strncmp(rel, "conda-meta", 10)) || !strncmp(rel, ".menv", 5);
}

/* Checks a package path and its prefix-relative target. */
static int check_path(const char *dist, const char *path, const char *rel, struct menv_error *err)
{
	if (!menv_beneath_relpath_ok(path) || !menv_beneath_relpath_ok(rel))
		return menv_error_set(err, MENV_EUNSAFE, "'%s': path '%s' leaves the prefix", dist,
		                      path);
	if (reserved_path(rel))
		return menv_error_set(err, MENV_EUNSAFE,
		                      "'%s': path '%s' is reserved for menv's own files in the "
		                      "prefix (conda-meta/, .menv*): a package may not ship it",
		                      dist, rel);
	return 0;
}

int menv_mkdirs(const char *path, struct menv_error *err)
{
	char *p = menv_xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, menv_dir_mode()) < 0 && errno != EEXIST) {
			rc = menv_error_sys(err, MENV_EIO, "cannot create directory '%s'", p);
			goto out;
		}
		*s = '/';
	}
	if (mkdir(p, menv_dir_mode()) < 0 && errno != EEXIST)
		rc = menv_error_sys(err, MENV_EIO, "cannot create directory '%s'", p);
out:
	free(p);
	return rc;
}

/* Where a new file goes: the directory descriptor (menv_link_dirs), its name there, and its
 * path relative to the prefix (for the journal and messages). */
struct dest {
	int dfd;
	const char *leaf, *rel;
};

static int write_new_file(const struct dest *d, const char *data, size_t len, mode_t mode,
                          struct menv_error *err)
{
	return menv_beneath_write_at(d->dfd, d->leaf, d->rel, data, len, mode, O_EXCL, err);
}

/* FICLONE of the package file `path` (relative to srcfd): 0, or -1 with errno (the
 * destination is removed again). */
static int reflink(int srcfd, const char *path, const struct dest *d, mode_t mode)
{
	int fd, s = openat(srcfd, path, O_RDONLY | O_CLOEXEC);
	if (s < 0)
		return -1;
	if (menv_beneath_open_at(d->dfd, d->leaf, d->rel, O_WRONLY | O_CREAT | O_EXCL, mode & 07777,
	                         &fd, NULL)) {
		int e = errno;
		close(s);
		errno = e;
		return -1;
	}
	int r = ioctl(fd, FICLONE, s);
	int e = errno;
	close(s);
	if (close(fd) < 0 && r == 0) {
		r = -1;
		e = errno;
	}
	if (r < 0) {
		unlinkat(d->dfd, d->leaf, 0);
		errno = e;
	}
	return r;
}

static int copy_file(const char *src, const struct dest *d, mode_t mode, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int rc = menv_buf_read_file(&b, src, err);
	if (!rc)
		rc = write_new_file(d, b.buf, b.len, mode, err);
	menv_buf_release(&b);
	return rc;
}

/* has_prefix lines: `placeholder mode path`, or just `path` (text, default placeholder). */
static const char *has_prefix_lookup(const char *has_prefix, const char *path, bool *binary,
                                     char *ph, size_t phlen)
{
	const char *line = has_prefix;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096];
		if (n < sizeof(buf)) {
			memcpy(buf, line, n);
			buf[n] = '\0';
			char a[1024], m[32], p[3000];
			int k = sscanf(buf, "%1023s %31s %2999[^\n]", a, m, p);
			if (k == 3 && !strcmp(p, path)) {
				*binary = !strcmp(m, "binary");
				snprintf(ph, phlen, "%s", a);
				return ph;
			}
			if (k == 1 && !strcmp(a, path)) {
				*binary = false;
				snprintf(ph, phlen, "%s", MENV_PLACEHOLDER);
				return ph;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* The prefix-relative target of a package path (noarch python remaps). Caller frees. */
static char *target_path(const char *path, bool noarch_python, const char *site_packages)
{
	if (noarch_python) {
		if (!strncmp(path, "site-packages/", 14))
			return menv_xasprintf("%s/%s", site_packages, path + 14);
		if (!strncmp(path, "python-scripts/", 15))
			return menv_xasprintf("bin/%s", path + 15);
	}
	return menv_xstrdup(path);
}

static void report_clobber(struct menv_link_ctx *ctx, const char *rel)
{
	json_t *o = ctx->owners ? json_object_get(ctx->owners, rel) : NULL;
	char *msg;

	ctx->st->clobbered++;
	if (!ctx->opts->cb)
		return;
	if (json_is_string(o))
		msg = menv_xasprintf(
		        "ClobberWarning: This transaction has incompatible packages due "
		        "to a shared path.\n  packages: %s, %s\n  path: '%s'",
		        json_string_value(o), ctx->dist, rel);
	else
		msg = menv_xasprintf("ClobberWarning: The package '%s' overwrites the path '%s', "
		                     "which already exists in the target prefix and belongs to no "
		                     "package (it may have been created by another program)",
		                     ctx->dist, rel);
	ctx->opts->cb(ctx->opts->ud, MENV_ENV_CLOBBER, msg);
	free(msg);
}

/* The prefix's directories one package writes into: prefix-relative path -> an O_PATH
 * descriptor, each opened once beneath the root (one openat2 call, no link followed) or made
 * there a component at a time, journaled before it is made (menv_beneath_subdir, as
 * menv_journal_mkdirs does), so that a file costs the calls that make it and no walk from the
 * root. They live while one package is linked (menv_link_package): nothing but menv writes
 * into the prefix then (a pre-link script, which could put a link where a directory was, runs
 * between packages), and menv neither removes a directory nor puts anything where one is
 * (prepare refuses), so each stays the directory beneath the root it was when opened. */
struct menv_link_dirs {
	struct menv_journal *txn;
	struct menv_strmap map; /* directory -> descriptor */
	char *last;             /* the directory looked up last, and its descriptor */
	size_t last_len;
	int last_fd;
	bool new_root; /* txn->root was empty and nothing is journaled (menv_link_ctx) */
};

static void dirs_release(struct menv_link_dirs *d)
{
	for (size_t i = 0; i < d->map.cap; i++)
		if (d->map.slots[i].key)
			close((int)d->map.slots[i].val);
	menv_strmap_clear(&d->map);
	free(d->last);
}

/* The descriptor of the directory dir[0..len) ("" the root), made where missing; it belongs
 * to d. */
static int dir_open(struct menv_link_dirs *d, const char *dir, size_t len, int *out,
                    struct menv_error *err)
{
	int fd = -1, parent = -1, rc = 0;
	char *key;
	size_t *v;

	if (!len) {
		*out = d->txn->rootfd;
		return d->txn->rootfd < 0
		               ? menv_error_sys(err, MENV_EIO, "cannot open directory '%s'",
		                                d->txn->root)
		               : 0;
	}
	key = menv_xstrndup(dir, len);
	v = menv_strmap_get(&d->map, key);
	if (v) {
		*out = (int)*v;
		free(key);
		return 0;
	}
	/* a map kept across packages holds at most 256 descriptors */
	if (d->map.n >= 256) {
		dirs_release(d);
		d->map = (struct menv_strmap)MENV_STRMAP_INIT;
		d->last = NULL;
	}
	/* a new root (a create's staging directory, nothing journaled): the directory is made
	 * in its parent, found in the map, at once (mkdirat and one open, no failed lookup);
	 * else one call when it exists (the common case), else its parent first, then it */
	if (d->new_root) {
		const char *slash = strrchr(key, '/');
		const char *leaf = slash ? slash + 1 : key;
		bool ok = menv_beneath_relpath_ok(leaf); /* else menv_beneath_subdir says why */
		rc = dir_open(d, key, slash ? (size_t)(slash - key) : 0, &parent, err);
		if (!rc && ok)
			rc = menv_journal_log_mkdir(d->txn, key, err);
		if (!rc && ok && mkdirat(parent, leaf, menv_dir_mode()) < 0 && errno != EEXIST)
			rc = menv_error_sys(err, MENV_EIO, "cannot create directory '%s'", key);
		if (!rc)
			rc = menv_beneath_subdir(parent, leaf, key, NULL, NULL, &fd, err);
	} else if (menv_beneath_dir_fast(d->txn->rootfd, key, &fd) < 0) {
		const char *slash = strrchr(key, '/');
		rc = dir_open(d, key, slash ? (size_t)(slash - key) : 0, &parent, err);
		if (!rc)
			rc = menv_beneath_subdir(parent, slash ? slash + 1 : key, key,
			                         menv_journal_log_mkdir, d->txn, &fd, err);
	}
	if (!rc) {
		menv_strmap_put(&d->map, key, (size_t)fd);
		*out = fd;
	}
	free(key);
	return rc;
}

/* The directory of the prefix path rel (made where missing) and rel's last component. */
static int dest_of(struct menv_link_ctx *ctx, const char *rel, struct dest *out,
                   struct menv_error *err)
{
	struct menv_link_dirs *d = ctx->dirs;
	const char *slash = strrchr(rel, '/');
	size_t len = slash ? (size_t)(slash - rel) : 0;
	int rc = 0;

	out->rel = rel;
	out->leaf = slash ? slash + 1 : rel;
	if (d->last && d->last_len == len && !memcmp(d->last, rel, len)) {
		out->dfd = d->last_fd;
		return 0;
	}
	rc = dir_open(d, rel, len, &out->dfd, err);
	if (!rc) {
		free(d->last);
		d->last = menv_xstrndup(rel, len);
		d->last_len = len;
		d->last_fd = out->dfd;
	}
	return rc;
}

/* Makes room for a new file at rel: creates its parents, moves an existing file aside
 * (a clobber), and journals the creation; *d is where it goes. */
static int prepare(struct menv_link_ctx *ctx, const char *rel, struct dest *d,
                   struct menv_error *err)
{
	struct stat sb;
	int rc = dest_of(ctx, rel, d, err);

	if (rc) {
		menv_error_prefix(err, "cannot write '%s'", rel);
		return rc;
	}
	if (fstatat(d->dfd, d->leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(sb.st_mode))
			return menv_error_set(err, MENV_EEXIST,
			                      "cannot link '%s': a directory of that "
			                      "name exists in the prefix",
			                      rel);
		report_clobber(ctx, rel);
		rc = menv_journal_move_aside(ctx->txn, rel, err);
		if (rc)
			return rc;
	} else if (errno != ENOENT) {
		return menv_error_sys(err, MENV_EIO, "cannot stat '%s'", rel);
	}
	return menv_journal_created(ctx->txn, rel, err);
}

static int place_copy(struct menv_link_ctx *ctx, const char *src, const char *path,
                      const struct dest *d, mode_t mode, struct menv_error *err)
{
	if (!ctx->caps->no_reflink) {
		if (reflink(ctx->srcfd, path, d, mode) == 0) {
			ctx->st->reflinks++;
			return 0;
		}
		if (errno == EOPNOTSUPP || errno == EXDEV || errno == EINVAL || errno == ENOTTY ||
		    errno == ENOSYS)
			ctx->caps->no_reflink = true;
	}
	int rc = copy_file(src, d, mode, err);
	if (!rc)
		ctx->st->copies++;
	return rc;
}

/* Whether conda compiles the package path of a noarch python package: CompileMultiPycAction's
 * `^site-packages[/\\][^\t\n\r\f\v]+\.py$` (python-scripts/ and other .py files are not). */
static bool compiled_source(const char *path)
{
	size_t n = strlen(path);
	return n > 17 && !strncmp(path, "site-packages/", 14) && !strcmp(path + n - 3, ".py") &&
	       !strpbrk(path + 14, "\t\n\r\f\v");
}

/* The modification and access times of `sst` on the new file rel (shutil.copystat, which
 * conda's copy calls): a .pyc compiled from a copy holds the same mtime as one compiled from
 * a hard link. */
static int keep_times(const struct dest *d, const struct stat *sst, struct menv_error *err)
{
	const struct timespec ts[2] = {sst->st_atim, sst->st_mtim};
	if (utimensat(d->dfd, d->leaf, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot set the times of '%s'", d->rel);
	return 0;
}

/* chmod of the new file (the umask left out of what open(2) gave it). */
static int set_mode(const struct dest *d, mode_t mode, struct menv_error *err)
{
	int fd, rc = menv_beneath_open_at(d->dfd, d->leaf, d->rel, O_RDONLY, 0, &fd, err);
	if (rc)
		return rc;
	if (fchmod(fd, mode) < 0)
		rc = menv_error_sys(err, MENV_EIO, "cannot set the mode of '%s'", d->rel);
	close(fd);
	return rc;
}

static int make_symlink(const char *target, const struct dest *d, struct menv_error *err)
{
	if (symlinkat(target, d->dfd, d->leaf) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot create link '%s'", d->rel);
	return 0;
}

/* The paths_data entry of a compact entry `c` into the empty object pd, as the JSON way
 * (a copy of the paths.json entry, completed) makes it, its keys in the order of conda's
 * PathDataV1 that the PrefixRecord writes (prefix.c's conda_path_data keeps it as it is):
 * `path_type` what was linked, `sha_in` the sha256 of a rewritten file or NULL, `relj` the
 * string `files` got (shared as `_path` where it is the package's path: fewer allocations on
 * each of a large environment's files; the text written is the same). */
static void compact_path_data(json_t *pd, const struct menv_pathent *c, const char *path_type,
                              const char *sha_in, json_t *relj)
{
	if (relj && !strcmp(json_string_value(relj), c->path))
		json_object_set_nocheck(pd, "_path", relj);
	else
		json_object_set_new_nocheck(pd, "_path", json_string(c->path));
	if (c->placeholder)
		json_object_set_new_nocheck(pd, "prefix_placeholder", json_string(c->placeholder));
	if (c->file_mode)
		json_object_set_new_nocheck(pd, "file_mode", json_string(c->file_mode));
	if (c->no_link >= 0)
		json_object_set_new_nocheck(pd, "no_link", json_boolean(c->no_link));
	json_object_set_new_nocheck(pd, "path_type", json_string(path_type));
	json_t *sha = c->sha256 ? json_string(c->sha256) : NULL;
	if (sha)
		json_object_set_nocheck(pd, "sha256", sha);
	if (c->size >= 0)
		json_object_set_new_nocheck(pd, "size_in_bytes", json_integer((json_int_t)c->size));
	/* a file linked as it is: sha256_in_prefix is the package's sha256 (one string, shared) */
	if (!sha_in && sha && !strcmp(path_type, "hardlink"))
		json_object_set_nocheck(pd, "sha256_in_prefix", sha);
	else if (sha_in)
		json_object_set_new_nocheck(pd, "sha256_in_prefix", json_string(sha_in));
	json_decref(sha);
}

static int link_one(struct menv_link_ctx *ctx, const struct path_entry *pe, json_t *files,
                    json_t *paths, struct menv_error *err)
{
	const struct menv_install_opts *o = ctx->opts;
	struct menv_link_stats *st = ctx->st;
	char *rel = target_path(pe->path, ctx->noarch_python, ctx->site_packages);
	char *src = menv_xasprintf("%s/%s", ctx->pkgdir, pe->path);
	struct dest d = {-1, NULL, rel};
	struct stat sst;
	/* a shallow copy: the entry's values are shared, never changed in place */
	json_t *pd = pe->src ? json_copy(pe->src) : json_object();
	const char *path_type = pe->path_type, *sha_in = NULL;
	json_t *relj = NULL; /* the `files` entry */
	char hex[65];
	bool fresh = false; /* a new inode with the package file's bytes: its times too */
	int rc = check_path(ctx->dist, pe->path, rel, err);

	if (rc)
		goto out;
	if (!strcmp(pe->path_type, "directory")) {
		int dfd;
		rc = dir_open(ctx->dirs, rel, strlen(rel), &dfd, err);
		if (rc == MENV_EUNSAFE || rc == MENV_EEXIST)
			menv_error_prefix(err, "cannot create directory '%s'", rel);
		goto record;
	}
	if (pe->have_st) {
		memset(&sst, 0, sizeof(sst));
		sst.st_mode = pe->mode;
		sst.st_atim = pe->atim;
		sst.st_mtim = pe->mtim;
	} else if (fstatat(ctx->srcfd, pe->path, &sst, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "package file '%s' is missing from the cache",
		                    pe->path);
		goto out;
	}
	/* a hard link into a new root: made without looking first (no stat of what cannot be
	 * there); EEXIST, a path two packages ship, takes the way below (a clobber) */
	if (ctx->dirs->new_root && !pe->placeholder && !pe->no_link && !S_ISLNK(sst.st_mode) &&
	    o->link_mode == MENV_LINK_AUTO && ctx->caps->no_reflink && !ctx->caps->no_hardlink) {
		rc = dest_of(ctx, rel, &d, err);
		if (rc) {
			menv_error_prefix(err, "cannot write '%s'", rel);
			goto out;
		}
		rc = menv_journal_created(ctx->txn, rel, err);
		if (rc)
			goto out;
		if (linkat(ctx->srcfd, pe->path, d.dfd, d.leaf, 0) == 0) {
			st->hardlinks++;
			if (!ctx->link_type)
				ctx->link_type = 1;
			goto record;
		}
		/* anything else: the way below tries again and says why */
	}
	rc = prepare(ctx, rel, &d, err);
	if (rc)
		goto out;
	if (S_ISLNK(sst.st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(ctx->srcfd, pe->path, target, sizeof(target) - 1);
		if (n < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot read link '%s'", src);
			goto out;
		}
		target[n] = '\0';
		rc = make_symlink(target, &d, err);
		path_type = "softlink";
		goto record;
	}
	if (pe->placeholder) {
		struct menv_buf in = MENV_BUF_INIT, outb = MENV_BUF_INIT;
		rc = menv_buf_read_file(&in, src, err);
		if (!rc)
			rc = menv_prefix_replace(in.buf, in.len, pe->placeholder, ctx->prefix,
			                         pe->binary, &outb, err);
		if (rc == MENV_EUNSUPPORTED)
			menv_error_prefix(err, "cannot relocate '%s'", pe->path);
		if (!rc)
			rc = write_new_file(&d, outb.buf, outb.len, sst.st_mode, err);
		if (!rc) {
			st->replaced++;
			st->copies++;
			/* conda rewrites the file only when the replacement changed it; its
			 * record keeps the package's size_in_bytes and the package's link type */
			fresh = outb.len == in.len && !memcmp(outb.buf, in.buf, in.len);
			if (!fresh) {
				menv_sha256_hex(outb.buf, outb.len, hex);
				sha_in = hex;
			}
		}
		menv_buf_release(&in);
		menv_buf_release(&outb);
		goto record;
	}
	if (pe->no_link || o->link_mode == MENV_LINK_COPY) {
		rc = place_copy(ctx, src, pe->path, &d, sst.st_mode, err);
		ctx->link_type = 3;
		fresh = true;
		goto record;
	}
	if (o->link_mode == MENV_LINK_SOFTLINK) {
		rc = make_symlink(src, &d, err);
		if (rc)
			goto out;
		st->softlinks++;
		ctx->link_type = 2;
		path_type = "softlink";
		goto record;
	}
	/* AUTO: reflink, else hardlink, else softlink (allow_softlinks), else copy */
	if (!ctx->caps->no_reflink) {
		if (reflink(ctx->srcfd, pe->path, &d, sst.st_mode) == 0) {
			st->reflinks++;
			if (ctx->link_type != 3)
				ctx->link_type = 1;
			fresh = true;
			goto record;
		}
		if (errno == EOPNOTSUPP || errno == EXDEV || errno == EINVAL || errno == ENOTTY ||
		    errno == ENOSYS)
			ctx->caps->no_reflink = true;
	}
	if (!ctx->caps->no_hardlink) {
		if (linkat(ctx->srcfd, pe->path, d.dfd, d.leaf, 0) == 0) {
			st->hardlinks++;
			if (!ctx->link_type)
				ctx->link_type = 1;
			goto record;
		}
		if (errno == EXDEV || errno == EPERM || errno == EMLINK)
			ctx->caps->no_hardlink = true;
	}
	if (o->allow_softlinks && make_symlink(src, &d, NULL) == 0) {
		st->softlinks++;
		ctx->link_type = 2;
		path_type = "softlink";
		goto record;
	}
	rc = copy_file(src, &d, sst.st_mode, err);
	if (!rc)
		st->copies++;
	ctx->link_type = 3;
	fresh = true;
record:
	if (!rc && fresh)
		rc = keep_times(&d, &sst, err);
	if (rc)
		goto out;
	st->files++;
	if (strcmp(pe->path_type, "directory")) {
		relj = json_string(rel);
		json_array_append(files, relj);
		if (ctx->owners)
			json_object_set_new(ctx->owners, rel, json_string(ctx->dist));
		if (ctx->noarch_python && ctx->py && compiled_source(pe->path))
			json_array_append_new(ctx->py, json_string(rel));
	}
	/* conda's PathDataV1 of a linked file: the package's path (noarch python's
	 * `site-packages/...`; `files` has the prefix's), sha256_in_prefix on every hardlink */
	if (pe->ce) {
		compact_path_data(pd, pe->ce, path_type, sha_in, relj);
		json_array_append(paths, pd);
		goto out;
	}
	if (path_type != pe->path_type)
		json_object_set_new(pd, "path_type", json_string(path_type));
	if (sha_in)
		json_object_set_new(pd, "sha256_in_prefix", json_string(sha_in));
	json_object_set_new(pd, "_path", json_string(pe->path));
	if (!json_object_get(pd, "path_type"))
		json_object_set_new(pd, "path_type", json_string(pe->path_type));
	json_t *sha = json_object_get(pd, "sha256");
	const char *pt = json_string_value(json_object_get(pd, "path_type"));
	if (pt && !strcmp(pt, "hardlink") && json_is_string(sha) &&
	    !json_object_get(pd, "sha256_in_prefix"))
		json_object_set(pd, "sha256_in_prefix", sha);
	json_array_append(paths, pd);
out:
	json_decref(relj);
	json_decref(pd);
	free(rel);
	free(src);
	return rc;
}

/* The length of `s` in characters as Python sees the decoded path (UTF-8, each byte of an
 * invalid sequence one character: surrogateescape). */
static size_t path_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (*p) {
		size_t l = 1;
		unsigned char c = *p, lo = 0x80, hi = 0xbf;
		if (c >= 0xc2 && c <= 0xdf)
			l = 2;
		else if (c >= 0xe0 && c <= 0xef) {
			l = 3;
			lo = c == 0xe0 ? 0xa0 : 0x80;
			hi = c == 0xed ? 0x9f : 0xbf;
		} else if (c >= 0xf0 && c <= 0xf4) {
			l = 4;
			lo = c == 0xf0 ? 0x90 : 0x80;
			hi = c == 0xf4 ? 0x8f : 0xbf;
		}
		for (size_t i = 1; i < l; i++)
			if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf)) {
				l = 1; /* not a whole character: this byte alone */
				break;
			}
		p += l;
		n++;
	}
	return n;
}

char *menv_python_shebang(const char *prefix, const char *pyver)
{
	char *line = menv_xasprintf("#!%s/bin/python%s\n", prefix, pyver);
	/* conda: len(shebang) > MAX_SHEBANG_LENGTH or " " in executable (len of the decoded
	 * string: characters, not bytes) */
	if (path_chars(line) <= MAX_SHEBANG && !strpbrk(prefix, " \t\n"))
		return line;
	free(line);
	/* sh runs `exec "<python>" "$0" "$@"`; for Python the first two lines are a string
	 * (distlib's launcher trick, as conda writes it) */
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, "#!/bin/sh\n'''exec' \"");
	for (const char *s = prefix; *s; s++) {
		if (strchr("\"$`\\", *s))
			menv_buf_addch(&b, '\\');
		menv_buf_addch(&b, *s);
	}
	menv_buf_adds(&b, "/bin/python");
	menv_buf_adds(&b, pyver);
	menv_buf_adds(&b, "\" \"$0\" \"$@\" #'''\n");
	return menv_buf_detach(&b);
}

char *menv_python_entry_point(const char *prefix, const char *pyver, const char *module,
                              const char *func)
{
	char *shebang = menv_python_shebang(prefix, pyver);
	char *body = menv_xasprintf(
	        "%s"
	        "# -*- coding: utf-8 -*-\n"
	        "import re\n"
	        "import sys\n\n"
	        "from %s import %.*s\n\n"
	        "if __name__ == '__main__':\n"
	        "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])\n"
	        "    sys.exit(%s())\n",
	        shebang, module, (int)strcspn(func, "."), func, func);
	free(shebang);
	return body;
}

/* Entry points of a noarch python package (its package metadata's "noarch.entry_points"):
 * "name = module:function" becomes an executable bin/name run by the prefix's python
 * (conda's CreatePythonEntryPointAction), listed in ctx->ep_files and ctx->ep_paths. */
static int write_entry_points(struct menv_link_ctx *ctx, json_t *meta, struct menv_error *err)
{
	json_t *eps = json_object_get(json_object_get(meta, "noarch"), "entry_points");
	size_t i;
	json_t *e;

	if (!json_is_array(eps))
		return 0;
	json_array_foreach(eps, i, e)
	{
		if (!json_is_string(e))
			continue;
		char name[256], module[512], func[256];
		if (sscanf(json_string_value(e), " %255[^= ] = %511[^: ] : %255[^ \n]", name,
		           module, func) != 3 ||
		    strchr(name, '/'))
			return menv_error_set(err, MENV_EPARSE, "invalid entry point '%s'",
			                      json_string_value(e));
		char *rel = menv_xasprintf("bin/%s", name);
		char *body = menv_python_entry_point(ctx->prefix, ctx->pyver, module, func);
		struct dest d;
		int rc = check_path(ctx->dist, rel, rel, err);
		if (!rc)
			rc = prepare(ctx, rel, &d, err);
		/* conda's make_executable: the file's mode (0666 less the umask) plus
		 * u+x,g+x,o+x */
		mode_t mode = (0666 & ~menv_start_umask()) | 0111;
		if (!rc)
			rc = write_new_file(&d, body, strlen(body), mode, err);
		if (!rc)
			rc = set_mode(&d, mode, err);
		if (!rc) {
			/* conda writes no sha256_in_prefix for an entry point */
			json_t *pd = json_object();
			json_object_set_new(pd, "_path", json_string(rel));
			json_object_set_new(pd, "path_type",
			                    json_string("unix_python_entry_point"));
			json_object_set_new(pd, "size_in_bytes",
			                    json_integer((json_int_t)strlen(body)));
			json_array_append_new(ctx->ep_paths, pd);
			json_array_append_new(ctx->ep_files, json_string(rel));
			if (ctx->owners)
				json_object_set_new(ctx->owners, rel, json_string(ctx->dist));
			ctx->st->files++;
		}
		free(body);
		free(rel);
		if (rc)
			return rc;
	}
	return 0;
}

/* Calls fn for each entry of the package's file list. */
typedef int (*entry_fn)(void *ud, struct path_entry *pe, struct menv_error *err);

static int for_each_entry(struct menv_link_list *l, entry_fn fn, void *ud, struct menv_error *err)
{
	for (size_t i = 0; i < l->n; i++) {
		int rc = fn(ud, &l->e[i], err);
		if (rc)
			return rc;
	}
	return 0;
}

static void list_push(struct menv_link_list *l, size_t *cap, const struct path_entry *pe)
{
	if (l->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		l->e = menv_xrealloc(l->e, *cap * sizeof(*l->e));
	}
	l->e[l->n++] = *pe;
}

void menv_link_list_free(struct menv_link_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; l->phs && i < l->n; i++)
		free(l->phs[i]);
	for (size_t i = 0; l->eps && l->eps[i]; i++)
		free(l->eps[i]);
	free(l->eps);
	free(l->phs);
	free(l->e);
	json_decref(l->root);
	menv_paths_unref(l->paths);
	json_decref(l->meta);
	menv_buf_release(&l->legacy);
	free(l);
}

/* paths.json's entries into l. */
static int load_paths_json(struct menv_link_list *l, const char *pj, struct menv_error *err)
{
	size_t i, cap = 0;
	json_t *e, *list;

	/* parsed once per process: the cache's check read it already (read-only here) */
	l->root = menv_pkgmeta_load(pj, err);
	if (!l->root)
		return err->code;
	list = json_object_get(l->root, "paths");
	if (!json_is_array(list))
		return menv_error_set(err, MENV_EPARSE, "%s:1:1: no \"paths\" list", pj);
	json_array_foreach(list, i, e)
	{
		json_t *p = json_object_get(e, "_path");
		json_t *t = json_object_get(e, "path_type");
		json_t *ph = json_object_get(e, "prefix_placeholder");
		json_t *fm = json_object_get(e, "file_mode");
		if (!json_is_string(p))
			return menv_error_set(err, MENV_EPARSE, "%s: entry %zu has no _path", pj,
			                      i);
		struct path_entry pe = {
		        .path = json_string_value(p),
		        .path_type = json_is_string(t) ? json_string_value(t) : "hardlink",
		        .placeholder = json_is_string(ph) && *json_string_value(ph)
		                               ? json_string_value(ph)
		                               : NULL,
		        .binary = json_is_string(fm) && !strcmp(json_string_value(fm), "binary"),
		        .no_link = json_is_true(json_object_get(e, "no_link")),
		        .src = e,
		};
		list_push(l, &cap, &pe);
	}
	return 0;
}

/* The compact form of paths.json's entries into l (as load_paths_json reads them). */
static void load_compact(struct menv_link_list *l, const struct menv_paths_entries *ce)
{
	l->e = menv_xcalloc(ce->n + 1, sizeof(*l->e));
	for (size_t i = 0; i < ce->n; i++) {
		const struct menv_pathent *c = &ce->e[i];
		l->e[i] = (struct path_entry){
		        .path = c->path,
		        .path_type = c->path_type ? c->path_type : "hardlink",
		        .placeholder = c->placeholder && *c->placeholder ? c->placeholder : NULL,
		        .binary = c->file_mode && !strcmp(c->file_mode, "binary"),
		        .no_link = c->no_link == 1,
		        .ce = c,
		};
	}
	l->n = ce->n;
}

/* The legacy file list (info/files + has_prefix) into l. A package with neither paths.json
 * nor info/files has no files to link: conda's read_paths_json reads the missing info/files
 * as empty (gateways/disk/read.py yield_lines), links nothing and records `files: []`. */
static int load_legacy(struct menv_link_list *l, const char *pkgdir, struct menv_error *err)
{
	struct menv_buf hp = MENV_BUF_INIT;
	char *ff = menv_xasprintf("%s/info/files", pkgdir);
	char *hf = menv_xasprintf("%s/info/has_prefix", pkgdir);
	char *info = menv_xasprintf("%s/info", pkgdir);
	size_t cap = 0, pcap = 0;
	int rc = 0;

	if (access(info, F_OK) < 0)
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "'%s' is not an extracted package (no info/)", pkgdir);
	else if (access(ff, F_OK) == 0)
		rc = menv_buf_read_file(&l->legacy, ff, err);
	if (!rc && access(hf, F_OK) == 0)
		rc = menv_buf_read_file(&hp, hf, err);
	free(ff);
	free(hf);
	free(info);
	char *save = NULL;
	for (char *line = rc || !l->legacy.buf ? NULL : strtok_r(l->legacy.buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
			line[--n] = '\0';
		if (!n)
			continue;
		char ph[1024];
		bool bin = false;
		struct path_entry pe = {.path = line, .path_type = "hardlink"};
		const char *found = has_prefix_lookup(hp.buf, line, &bin, ph, sizeof(ph));
		if (l->n == pcap) {
			pcap = pcap ? 2 * pcap : 64;
			l->phs = menv_xrealloc(l->phs, pcap * sizeof(*l->phs));
		}
		l->phs[l->n] = found ? menv_xstrdup(found) : NULL;
		pe.placeholder = l->phs[l->n];
		pe.binary = bin;
		list_push(l, &cap, &pe);
	}
	menv_buf_release(&hp);
	return rc;
}

/* The package metadata (info/link.json, else info/package_metadata.json, conda-build 2's
 * name) of a noarch python package, and the entry points it names. */
static int load_meta(struct menv_link_list *l, const char *pkgdir, struct menv_error *err)
{
	for (int i = 0; !l->meta && i < 2; i++) {
		char *f = menv_xasprintf("%s/info/%s", pkgdir,
		                         i ? "package_metadata.json" : "link.json");
		int rc = 0;
		if (access(f, F_OK) == 0) {
			l->meta = menv_json_load_file(f, 0, err);
			if (!l->meta)
				rc = err->code;
		}
		free(f);
		if (rc)
			return rc;
	}
	json_t *eps = json_object_get(json_object_get(l->meta, "noarch"), "entry_points");
	size_t i, k = 0;
	json_t *e;
	l->eps = menv_xcalloc(json_array_size(eps) + 1, sizeof(*l->eps));
	json_array_foreach(eps, i, e)
	{
		char name[256];
		if (json_is_string(e) && sscanf(json_string_value(e), " %255[^= ]", name) == 1)
			l->eps[k++] = menv_xasprintf("bin/%s", name);
	}
	return 0;
}

int menv_link_list_load(const char *pkgdir, bool noarch_python, struct menv_link_list **out,
                        struct menv_error *err)
{
	struct menv_link_list *l = menv_xcalloc(1, sizeof(*l));
	char *pj = menv_xasprintf("%s/info/paths.json", pkgdir);
	struct menv_paths_entries ce;
	int rc = 0;

	/* the compact form kept beside paths.json (pathscache.c), else paths.json itself */
	l->paths = menv_paths_load(pkgdir, &ce);
	if (l->paths)
		load_compact(l, &ce);
	else if (access(pj, F_OK) == 0)
		rc = load_paths_json(l, pj, err);
	else
		rc = load_legacy(l, pkgdir, err);
	if (!rc && noarch_python)
		rc = load_meta(l, pkgdir, err);
	free(pj);
	if (rc) {
		menv_link_list_free(l);
		l = NULL;
	}
	*out = l;
	return rc;
}

size_t menv_link_list_size(const struct menv_link_list *l)
{
	return l->n;
}

char *menv_link_list_target(const struct menv_link_list *l, size_t i, bool noarch_python,
                            const char *site_packages, bool *is_dir)
{
	*is_dir = !strcmp(l->e[i].path_type, "directory");
	return target_path(l->e[i].path, noarch_python, site_packages);
}

const char *const *menv_link_list_entry_points(const struct menv_link_list *l)
{
	static const char *const none[] = {NULL};
	return l->eps ? (const char *const *)l->eps : none;
}

struct link_ud {
	struct menv_link_ctx *ctx;
	json_t *files, *paths;
};

static int link_entry(void *ud, struct path_entry *pe, struct menv_error *err)
{
	struct link_ud *l = ud;
	if (l->ctx->opts->cancel && *l->ctx->opts->cancel)
		return menv_error_set(err, MENV_EINTR, "interrupted");
	return link_one(l->ctx, pe, l->files, l->paths, err);
}

struct menv_link_dirs *menv_link_dirs_new(struct menv_journal *txn)
{
	struct menv_link_dirs *d = menv_xcalloc(1, sizeof(*d));
	d->txn = txn;
	d->map = (struct menv_strmap)MENV_STRMAP_INIT;
	return d;
}

void menv_link_dirs_free(struct menv_link_dirs *d)
{
	if (!d)
		return;
	dirs_release(d);
	free(d);
}

int menv_link_package(struct menv_link_ctx *ctx, json_t *files, json_t *paths,
                      struct menv_error *err)
{
	json_t *py = ctx->py;
	struct link_ud ud = {ctx, files, paths};
	struct menv_link_list *own = NULL, *list = ctx->list;
	struct menv_link_dirs *dirs = ctx->dirs;
	int rc = 0;

	ctx->link_type = 0;
	if (!list) {
		rc = menv_link_list_load(ctx->pkgdir, ctx->noarch_python, &own, err);
		if (rc)
			return rc;
		list = own;
	}
	/* conda's package_metadata: info/link.json, else info/package_metadata.json (conda-build
	 * 2's name); its noarch.type "python" is what makes conda compile the .py files and
	 * write the entry points (the site-packages remapping follows the record's noarch) */
	json_t *meta = ctx->noarch_python ? list->meta : NULL;
	json_t *type = json_object_get(json_object_get(meta, "noarch"), "type");
	bool meta_python = json_is_string(type) && !strcmp(json_string_value(type), "python");
	if (!meta_python)
		ctx->py = NULL; /* nothing to compile */
	/* a pre-link script ran since the last package: directories are walked again */
	free(ctx->txn->last_parent);
	ctx->txn->last_parent = NULL;
	if (!dirs)
		ctx->dirs = menv_link_dirs_new(ctx->txn);
	ctx->dirs->new_root = ctx->new_root;
	ctx->srcfd = open(ctx->pkgdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx->srcfd < 0)
		rc = menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                    "cannot open the package '%s'", ctx->pkgdir);
	if (!rc)
		rc = for_each_entry(list, link_entry, &ud, err);
	ctx->py = py;
	if (!rc && meta_python)
		rc = write_entry_points(ctx, meta, err);
	if (!ctx->link_type)
		ctx->link_type = 1;
	menv_link_list_free(own);
	if (!dirs) {
		menv_link_dirs_free(ctx->dirs);
		ctx->dirs = NULL;
	} else {
		/* the next package's files are elsewhere: the last directory is looked up again */
		free(dirs->last);
		dirs->last = NULL;
	}
	if (ctx->srcfd >= 0)
		close(ctx->srcfd);
	ctx->srcfd = -1;
	return rc;
}

struct check_ud {
	const char *dist, *prefix, *site_packages;
	bool noarch_python;
	json_t *links; /* prefix path -> dist of a link in the transaction, or NULL */
	int srcfd;     /* menv_link_list_links: the package's directory, or -1 until needed */
	const char *pkgdir;
	struct menv_pkgfile_st *kept; /* the cache check's stats (menv_pkgmeta_stats) */
	size_t nkept, at;             /* at: the entry's index */
};

static int list_link(void *ud, struct path_entry *pe, struct menv_error *err)
{
	struct check_ud *c = ud;
	struct stat st;
	size_t k = c->at++;
	bool got = false;
	(void)err;
	if (!menv_beneath_relpath_ok(pe->path))
		return 0;
	if (k < c->nkept && c->kept[k].have) {
		memset(&st, 0, sizeof(st));
		st.st_mode = c->kept[k].mode;
		st.st_atim = c->kept[k].atim;
		st.st_mtim = c->kept[k].mtim;
		got = true;
	} else {
		if (c->srcfd < 0)
			c->srcfd = open(c->pkgdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		got = fstatat(c->srcfd, pe->path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	}
	if (got) {
		pe->have_st = true;
		pe->mode = st.st_mode;
		pe->atim = st.st_atim;
		pe->mtim = st.st_mtim;
		if (S_ISLNK(st.st_mode)) {
			char *rel = target_path(pe->path, c->noarch_python, c->site_packages);
			json_object_set_new(c->links, rel, json_string(c->dist));
			free(rel);
		}
	}
	return 0;
}

int menv_link_list_links(struct menv_link_list *l, const char *pkgdir, const char *dist,
                         bool noarch_python, const char *site_packages, json_t *links,
                         struct menv_error *err)
{
	/* each file stat'ed relative to the package's directory: no walk from / for each; the
	 * stats the cache's check took of this parse of paths.json are taken as they are */
	struct check_ud c = {.dist = dist,
	                     .prefix = "",
	                     .site_packages = site_packages,
	                     .noarch_python = noarch_python && site_packages,
	                     .links = links,
	                     .srcfd = -1,
	                     .pkgdir = pkgdir};
	if (l->paths) {
		c.kept = menv_paths_stats(l->paths);
		c.nkept = c.kept ? l->n : 0;
	} else if (l->root) {
		char *pj = menv_xasprintf("%s/info/paths.json", pkgdir);
		c.kept = menv_pkgmeta_stats(pj, l->root, &c.nkept);
		free(pj);
	}
	int rc = for_each_entry(l, list_link, &c, err);
	if (c.srcfd >= 0)
		close(c.srcfd);
	free(c.kept);
	return rc;
}

/* A link of the transaction that `rel` would be written through, or NULL. */
static const char *link_above(json_t *links, const char *rel, char *buf, size_t size)
{
	if (!links)
		return NULL;
	for (const char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
		size_t n = (size_t)(s - rel);
		if (n >= size)
			break;
		memcpy(buf, rel, n);
		buf[n] = '\0';
		if (json_object_get(links, buf))
			return buf;
	}
	return NULL;
}

static int check_entry(void *ud, struct path_entry *pe, struct menv_error *err)
{
	struct check_ud *c = ud;
	size_t pl, nl = strlen(c->prefix);
	char *rel = target_path(pe->path, c->noarch_python, c->site_packages);
	char above[4096];
	int rc = check_path(c->dist, pe->path, rel, err);
	const char *l = rc ? NULL : link_above(c->links, rel, above, sizeof(above));

	if (l)
		rc = menv_error_set(err, MENV_EUNSAFE,
		                    "'%s': cannot write '%s': '%s' is a symbolic link of '%s' "
		                    "(menv writes nothing through links in a prefix)",
		                    c->dist, rel, l,
		                    json_string_value(json_object_get(c->links, l)));
	free(rel);
	if (rc || !pe->placeholder || !pe->binary)
		return rc;
	pl = strlen(pe->placeholder);
	if (nl > pl)
		return menv_error_set(
		        err, MENV_EUNSUPPORTED,
		        "cannot install '%s' into '%s': the prefix is %zu bytes, "
		        "longer than the %zu-byte placeholder of the binary file '%s'",
		        c->dist, c->prefix, nl, pl, pe->path);
	return 0;
}

int menv_link_check(struct menv_link_list *l, const char *dist, const char *prefix,
                    bool noarch_python, const char *site_packages, json_t *links,
                    struct menv_error *err)
{
	struct check_ud c = {.dist = dist,
	                     .prefix = prefix,
	                     .site_packages = site_packages,
	                     .noarch_python = noarch_python && site_packages,
	                     .links = links,
	                     .srcfd = -1};
	return for_each_entry(l, check_entry, &c, err);
}
