/*
 * link.c - linking one extracted package into a prefix (CEP-34): the file list of
 * `info/paths.json` (or legacy `info/files` + `info/has_prefix`), hardlink-else-copy, prefix
 * replacement in text and binary files, softlinks, noarch python paths (CEP-20) and entry
 * points. Produces the `files` and `paths_data` of the PrefixRecord.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envs.h"
#include "link.h"

struct path_entry {
	const char *path;        /* relative path in the package */
	const char *path_type;   /* hardlink, softlink, directory */
	const char *placeholder; /* NULL when none */
	bool binary;             /* file_mode binary */
	bool no_link;
	json_t *src;             /* the paths.json entry (borrowed), NULL for legacy */
};

static bool safe_relpath(const char *p)
{
	if (!*p || p[0] == '/')
		return false;
	for (const char *s = p; *s;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return false;
		s += n;
		if (*s == '/')
			s++;
	}
	return true;
}

int menv_mkdirs(const char *path, struct menv_error *err)
{
	char *p = menv_xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			rc = menv_error_sys(err, MENV_EIO, "cannot create directory '%s'", p);
			goto out;
		}
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		rc = menv_error_sys(err, MENV_EIO, "cannot create directory '%s'", p);
out:
	free(p);
	return rc;
}

static int mkparents(const char *path, struct menv_error *err)
{
	char *d = menv_xstrdup(path);
	char *slash = strrchr(d, '/');
	int rc = 0;
	if (slash && slash != d) {
		*slash = '\0';
		rc = menv_mkdirs(d, err);
	}
	free(d);
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

static int write_new_file(const char *dst, const char *data, size_t len, mode_t mode,
			  struct menv_error *err)
{
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777);
	if (fd < 0)
		return menv_error_sys(err, MENV_EIO, "cannot create '%s'", dst);
	if (write_all(fd, data, len) < 0) {
		menv_error_sys(err, MENV_EIO, "cannot write '%s'", dst);
		close(fd);
		return MENV_EIO;
	}
	if (close(fd) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot write '%s'", dst);
	return 0;
}

static int copy_file(const char *src, const char *dst, mode_t mode, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int rc = menv_buf_read_file(&b, src, err);
	if (!rc)
		rc = write_new_file(dst, b.buf, b.len, mode, err);
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

static int collect(const char *root, size_t rootlen, const char *dir, struct menv_buf *out,
		   struct menv_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return menv_error_sys(err, MENV_EIO, "cannot read '%s'", dir);
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = menv_xasprintf("%s/%s", dir, de->d_name);
		struct stat sb;
		if (lstat(p, &sb) < 0)
			rc = menv_error_sys(err, MENV_EIO, "cannot stat '%s'", p);
		else if (S_ISDIR(sb.st_mode)) {
			if (strcmp(p + rootlen + 1, "info"))
				rc = collect(root, rootlen, p, out, err);
		} else {
			menv_buf_adds(out, p + rootlen + 1);
			menv_buf_addch(out, '\n');
		}
		free(p);
	}
	closedir(d);
	return rc;
}

/* A package with neither info/paths.json nor info/files: every file outside info/,
 * one per line, in `out`. */
static int list_package_files(const char *pkgdir, struct menv_buf *out, struct menv_error *err)
{
	return collect(pkgdir, strlen(pkgdir), pkgdir, out, err);
}

/* The prefix-relative target of a package path (noarch python remaps). Caller frees. */
static char *target_path(const char *path, const struct menv_link_ctx *ctx)
{
	if (ctx->noarch_python) {
		if (!strncmp(path, "site-packages/", 14))
			return menv_xasprintf("%s/%s", ctx->site_packages, path + 14);
		if (!strncmp(path, "python-scripts/", 15))
			return menv_xasprintf("bin/%s", path + 15);
	}
	return menv_xstrdup(path);
}

static int link_one(const struct menv_link_ctx *ctx, const struct path_entry *pe,
		    json_t *files, json_t *paths, struct menv_link_stats *st,
		    struct menv_error *err)
{
	char *rel = target_path(pe->path, ctx);
	char *src = menv_xasprintf("%s/%s", ctx->pkgdir, pe->path);
	char *dst = menv_xasprintf("%s/%s", ctx->staging, rel);
	struct stat sst;
	json_t *pd = pe->src ? json_deep_copy(pe->src) : json_object();
	int rc = 0;

	if (!safe_relpath(pe->path)) {
		rc = menv_error_set(err, MENV_EUNSAFE, "path '%s' leaves the prefix", pe->path);
		goto out;
	}
	rc = mkparents(dst, err);
	if (rc)
		goto out;
	if (!strcmp(pe->path_type, "directory")) {
		rc = menv_mkdirs(dst, err);
		goto record;
	}
	if (lstat(src, &sst) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "package file '%s' is missing from the cache",
				    pe->path);
		goto out;
	}
	/* a later package overwrites an earlier one's file (clobbering), as conda does */
	if (unlink(dst) == 0)
		st->clobbered++;
	if (S_ISLNK(sst.st_mode)) {
		char target[4096];
		ssize_t n = readlink(src, target, sizeof(target) - 1);
		if (n < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot read link '%s'", src);
			goto out;
		}
		target[n] = '\0';
		if (symlink(target, dst) < 0)
			rc = menv_error_sys(err, MENV_EIO, "cannot create link '%s'", dst);
		json_object_set_new(pd, "path_type", json_string("softlink"));
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
			rc = write_new_file(dst, outb.buf, outb.len, sst.st_mode, err);
		menv_buf_release(&in);
		menv_buf_release(&outb);
		if (!rc) {
			st->replaced++;
			st->copies++;
		}
		goto record;
	}
	if (!pe->no_link && link(src, dst) == 0) {
		st->hardlinks++;
		goto record;
	}
	rc = copy_file(src, dst, sst.st_mode, err);
	if (!rc)
		st->copies++;
record:
	if (rc)
		goto out;
	st->files++;
	if (strcmp(pe->path_type, "directory"))
		json_array_append_new(files, json_string(rel));
	json_object_set_new(pd, "_path", json_string(rel));
	if (!json_object_get(pd, "path_type"))
		json_object_set_new(pd, "path_type", json_string(pe->path_type));
	json_array_append(paths, pd);
out:
	json_decref(pd);
	free(rel);
	free(src);
	free(dst);
	return rc;
}

/* Entry points of a noarch python package (info/link.json "noarch.entry_points"):
 * "name = module:function" becomes an executable bin/name run by the prefix's python. */
static int write_entry_points(const struct menv_link_ctx *ctx, json_t *linkjson, json_t *files,
			      json_t *paths, struct menv_link_stats *st, struct menv_error *err)
{
	json_t *eps = json_object_get(json_object_get(linkjson, "noarch"), "entry_points");
	size_t i;
	json_t *e;

	if (!json_is_array(eps))
		return 0;
	json_array_foreach(eps, i, e) {
		if (!json_is_string(e))
			continue;
		char name[256], module[512], func[256];
		if (sscanf(json_string_value(e), " %255[^= ] = %511[^: ] : %255[^ \n]", name, module,
			   func) != 3)
			return menv_error_set(err, MENV_EPARSE, "invalid entry point '%s'",
					      json_string_value(e));
		char imp[256];
		snprintf(imp, sizeof(imp), "%.*s", (int)strcspn(func, "."), func);
		char *rel = menv_xasprintf("bin/%s", name);
		char *dst = menv_xasprintf("%s/%s", ctx->staging, rel);
		char *body = menv_xasprintf(
			"#!%s/bin/python\n"
			"# -*- coding: utf-8 -*-\n"
			"import re\n"
			"import sys\n\n"
			"from %s import %s\n\n"
			"if __name__ == '__main__':\n"
			"    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])\n"
			"    sys.exit(%s())\n",
			ctx->prefix, module, imp, func);
		int rc = mkparents(dst, err);
		unlink(dst);
		if (!rc)
			rc = write_new_file(dst, body, strlen(body), 0755, err);
		if (!rc) {
			json_t *pd = json_object();
			json_object_set_new(pd, "_path", json_string(rel));
			json_object_set_new(pd, "path_type", json_string("unix_python_entry_point"));
			json_array_append_new(paths, pd);
			json_array_append_new(files, json_string(rel));
			st->files++;
		}
		free(body);
		free(dst);
		free(rel);
		if (rc)
			return rc;
	}
	return 0;
}

int menv_link_package(const struct menv_link_ctx *ctx, json_t *files, json_t *paths,
		      struct menv_link_stats *st, struct menv_error *err)
{
	char *pj = menv_xasprintf("%s/info/paths.json", ctx->pkgdir);
	char *lj = menv_xasprintf("%s/info/link.json", ctx->pkgdir);
	json_t *root = NULL, *linkjson = NULL;
	struct menv_buf legacy = MENV_BUF_INIT, hp = MENV_BUF_INIT;
	json_error_t jerr;
	int rc = 0;

	if (access(pj, F_OK) == 0) {
		root = json_load_file(pj, 0, &jerr);
		if (!root || !json_is_array(json_object_get(root, "paths"))) {
			rc = menv_error_set(err, MENV_EPARSE, "%s:%d:%d: %s", pj, jerr.line,
					    jerr.column, root ? "no \"paths\" list" : jerr.text);
			goto out;
		}
		size_t i;
		json_t *e;
		json_array_foreach(json_object_get(root, "paths"), i, e) {
			json_t *p = json_object_get(e, "_path");
			json_t *t = json_object_get(e, "path_type");
			json_t *ph = json_object_get(e, "prefix_placeholder");
			json_t *fm = json_object_get(e, "file_mode");
			if (!json_is_string(p)) {
				rc = menv_error_set(err, MENV_EPARSE, "%s: entry %zu has no _path", pj, i);
				goto out;
			}
			struct path_entry pe = {
				.path = json_string_value(p),
				.path_type = json_is_string(t) ? json_string_value(t) : "hardlink",
				.placeholder = json_is_string(ph) ? json_string_value(ph) : NULL,
				.binary = json_is_string(fm) && !strcmp(json_string_value(fm), "binary"),
				.no_link = json_is_true(json_object_get(e, "no_link")),
				.src = e,
			};
			rc = link_one(ctx, &pe, files, paths, st, err);
			if (rc)
				goto out;
		}
	} else {
		/* legacy packages: info/files, info/has_prefix, info/no_link */
		char *ff = menv_xasprintf("%s/info/files", ctx->pkgdir);
		char *hf = menv_xasprintf("%s/info/has_prefix", ctx->pkgdir);
		if (access(ff, F_OK) == 0)
			rc = menv_buf_read_file(&legacy, ff, err);
		else
			rc = list_package_files(ctx->pkgdir, &legacy, err);
		if (!rc && access(hf, F_OK) == 0)
			rc = menv_buf_read_file(&hp, hf, err);
		free(ff);
		free(hf);
		if (rc)
			goto out;
		char *save = NULL;
		for (char *line = strtok_r(legacy.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			size_t n = strlen(line);
			while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
				line[--n] = '\0';
			if (!n)
				continue;
			char ph[1024];
			bool bin = false;
			struct path_entry pe = { .path = line, .path_type = "hardlink" };
			pe.placeholder = has_prefix_lookup(hp.buf, line, &bin, ph, sizeof(ph));
			pe.binary = bin;
			rc = link_one(ctx, &pe, files, paths, st, err);
			if (rc)
				goto out;
		}
	}
	if (ctx->noarch_python && access(lj, F_OK) == 0) {
		linkjson = json_load_file(lj, 0, &jerr);
		if (!linkjson) {
			rc = menv_error_set(err, MENV_EPARSE, "%s:%d:%d: %s", lj, jerr.line,
					    jerr.column, jerr.text);
			goto out;
		}
		rc = write_entry_points(ctx, linkjson, files, paths, st, err);
	}
out:
	json_decref(root);
	json_decref(linkjson);
	menv_buf_release(&legacy);
	menv_buf_release(&hp);
	free(pj);
	free(lj);
	return rc;
}
