/*
 * pipfiles.c - what a pip step wrote, found by difference: before the step every path of the
 * prefix (conda-meta/ aside) is listed into `conda-meta/.menv-pip-before` (NUL-separated: any
 * byte but NUL may be in a name); taking the step back removes every path that is not in the
 * list. pip's own uninstall only knows distributions with a RECORD, so a wheel that failed
 * half-way (its package folder written, no dist-info yet) was left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"
#include "txnpriv.h"

static char *before_path(const char *prefix)
{
	return menv_xasprintf("%s/conda-meta/.menv-pip-before", prefix);
}

/* Calls fn for every path under prefix/rel (rel "" is the prefix; conda-meta/ skipped); fn
 * returns true to descend into a directory. */
static void walk(const char *prefix, const char *rel, bool (*fn)(void *, const char *, bool),
                 void *ud)
{
	char *dir = *rel ? menv_xasprintf("%s/%s", prefix, rel) : menv_xstrdup(prefix);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (!*rel && !strcmp(de->d_name, "conda-meta")))
			continue;
		char *sub =
		        *rel ? menv_xasprintf("%s/%s", rel, de->d_name) : menv_xstrdup(de->d_name);
		char *full = menv_xasprintf("%s/%s", prefix, sub);
		struct stat sb;
		bool isdir = lstat(full, &sb) == 0 && S_ISDIR(sb.st_mode);
		if (fn(ud, sub, isdir) && isdir)
			walk(prefix, sub, fn, ud);
		free(full);
		free(sub);
	}
	if (d)
		closedir(d);
	free(dir);
}

static bool list_one(void *ud, const char *rel, bool isdir)
{
	menv_buf_add(ud, rel, strlen(rel) + 1);
	return isdir;
}

int menv_pip_files_before(const char *prefix, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	char *path = before_path(prefix);
	walk(prefix, "", list_one, &b);
	int rc = menv_write_file_atomic(path, b.buf ? b.buf : "", b.len, err);
	menv_buf_release(&b);
	free(path);
	return rc;
}

struct undo {
	const char *prefix;
	json_t *had;
	size_t removed;
};

static bool remove_new(void *ud, const char *rel, bool isdir)
{
	struct undo *u = ud;
	if (json_object_getn(u->had, rel, strlen(rel)))
		return true;
	char *full = menv_xasprintf("%s/%s", u->prefix, rel);
	if (isdir)
		menv_remove_tree(full);
	else
		unlink(full);
	u->removed++;
	free(full);
	return false;
}

int menv_pip_files_undo(const char *prefix, size_t *removed, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	char *path = before_path(prefix);
	struct undo u = {.prefix = prefix, .had = json_object()};
	int rc = menv_buf_read_file(&b, path, err);

	*removed = 0;
	if (rc == MENV_ENOTFOUND) {
		rc = 0; /* no list (an older menv's step): pip's uninstall did what it could */
		goto out;
	}
	if (rc)
		goto out;
	for (size_t i = 0; i < b.len;) {
		size_t n = strnlen(b.buf + i, b.len - i);
		json_object_setn_nocheck(u.had, b.buf + i, n, json_true());
		i += n + 1;
	}
	walk(prefix, "", remove_new, &u);
	*removed = u.removed;
	unlink(path);
out:
	json_decref(u.had);
	menv_buf_release(&b);
	free(path);
	return rc;
}

void menv_pip_files_done(const char *prefix)
{
	char *path = before_path(prefix);
	unlink(path);
	free(path);
}
