/*
 * envreg.c - the registry of environments that conda, mamba and micromamba share:
 * `$HOME/.conda/environments.txt`, one absolute prefix path a line. `menv create` adds the new
 * prefix (so environments made with -p show in `menv env list`, and in conda's), `menv remove
 * --all` takes it out. Changes are read-modify-write under flock(2) on
 * `environments.txt.lock` beside it and land with a rename, so two concurrent creates never
 * lose a line and a reader never sees half a file. Lines menv does not touch are kept as they
 * are (conda's own entries, blank lines, comments).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

char *menv_cli_envreg_path(void)
{
	const char *h = getenv("HOME");
	if (!h || !*h)
		return NULL;
	return menv_xasprintf("%s%s.conda/environments.txt", h, h[strlen(h) - 1] == '/' ? "" : "/");
}

char *menv_cli_envreg_normalize(const char *prefix)
{
	/* os.path.normpath for an absolute path: no "//", ".", trailing "/"; ".." taken
	 * lexically */
	size_t n = strlen(prefix);
	char *out = menv_xmalloc(n + 2);
	size_t len = 0;
	const char *p = prefix;

	out[len++] = '/';
	while (*p) {
		while (*p == '/')
			p++;
		const char *s = p;
		while (*p && *p != '/')
			p++;
		size_t cl = (size_t)(p - s);
		if (!cl || (cl == 1 && s[0] == '.'))
			continue;
		if (cl == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 1 && out[len - 1] != '/')
				len--;
			if (len > 1)
				len--; /* the '/' before the dropped component */
			continue;
		}
		if (len > 1)
			out[len++] = '/';
		memcpy(out + len, s, cl);
		len += cl;
	}
	out[len] = '\0';
	return out;
}

/* A registry line as a prefix: surrounding blanks (and a CR) stripped, normalized; NULL for a
 * line that names no absolute path (blank, comment). Caller frees. */
static char *line_prefix(const char *line, size_t n)
{
	while (n && (line[0] == ' ' || line[0] == '\t')) {
		line++;
		n--;
	}
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	if (!n || line[0] != '/')
		return NULL;
	char *raw = menv_xstrndup(line, n);
	char *norm = menv_cli_envreg_normalize(raw);
	free(raw);
	return norm;
}

int menv_cli_envreg_load(struct menv_strvec *out, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error rerr = {0};
	char *path = menv_cli_envreg_path();
	int rc = 0;

	if (!path)
		goto out;
	rc = menv_buf_read_file(&b, path, &rerr);
	if (rc == MENV_ENOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc) {
		*err = rerr;
		goto out;
	}
	for (const char *l = b.buf; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char *p = line_prefix(l, n);
		if (p && !menv_strvec_contains(out, p))
			menv_strvec_push_owned(out, p);
		else
			free(p);
		l += n + (e ? 1 : 0);
	}
out:
	menv_buf_release(&b);
	free(path);
	return rc;
}

/* Adds (add) or takes out every line naming `prefix`, under the registry's lock. */
static int update(const char *prefix, bool add, struct menv_error *err)
{
	struct menv_buf old = MENV_BUF_INIT, neu = MENV_BUF_INIT;
	struct menv_error rerr = {0};
	char *path = menv_cli_envreg_path(), *lockpath = NULL, *dir = NULL, *target = NULL;
	char *want = NULL;
	bool found = false, changed = false;
	struct stat sb;
	int fd = -1, rc = 0;

	if (!path) {
		rc = menv_error_set(err, MENV_EUSAGE, "HOME is not set");
		goto out;
	}
	if (prefix[0] != '/') {
		rc = menv_error_set(err, MENV_EUSAGE, "prefix '%s' is not an absolute path",
		                    prefix);
		goto out;
	}
	want = menv_cli_envreg_normalize(prefix);
	if (!add && lstat(path, &sb) < 0 && (errno == ENOENT || errno == ENOTDIR))
		goto out; /* no registry: nothing to take out (and no lock file made for it) */
	dir = menv_xstrndup(path, (size_t)(strrchr(path, '/') - path));
	if (add && mkdir(dir, 0755) < 0 && errno != EEXIST) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create '%s'", dir);
		goto out;
	}
	lockpath = menv_xasprintf("%s.lock", path);
	fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot open '%s'", lockpath);
		goto out;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			rc = menv_error_sys(err, MENV_EIO, "cannot lock '%s'", lockpath);
			goto out;
		}
	}
	/* a registry that is a symbolic link (kept in a dotfiles repository): write its target */
	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		char real[PATH_MAX];
		if (realpath(path, real))
			target = menv_xstrdup(real);
	}
	rc = menv_buf_read_file(&old, target ? target : path, &rerr);
	if (rc && rc != MENV_ENOTFOUND) {
		*err = rerr;
		goto out;
	}
	rc = 0;
	for (const char *l = old.buf; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char *p = line_prefix(l, n);
		bool match = p && !strcmp(p, want);
		free(p);
		found |= match;
		if (add || !match) {
			menv_buf_add(&neu, l, n);
			menv_buf_addch(&neu, '\n');
		} else {
			changed = true;
		}
		l += n + (e ? 1 : 0);
	}
	if (add && !found) {
		menv_buf_addf(&neu, "%s\n", want);
		changed = true;
	}
	if (changed)
		rc = menv_write_file_atomic(target ? target : path, neu.buf, neu.len, err);
out:
	if (fd >= 0)
		close(fd); /* releases the lock */
	menv_buf_release(&old);
	menv_buf_release(&neu);
	free(want);
	free(target);
	free(lockpath);
	free(dir);
	free(path);
	return rc;
}

int menv_cli_envreg_add(const char *prefix, struct menv_error *err)
{
	return update(prefix, true, err);
}

int menv_cli_envreg_remove(const char *prefix, struct menv_error *err)
{
	return update(prefix, false, err);
}

static void warn(const char *prefix, bool add)
{
	struct menv_error err = {0};
	if (!update(prefix, add, &err))
		return;
	fprintf(stderr, "menv: warning: '%s' was not %s the environment registry: %s\n", prefix,
	        add ? "added to" : "removed from",
	        err.msg[0] ? err.msg : menv_error_name(err.code));
}

void menv_cli_envreg_register(const char *prefix)
{
	warn(prefix, true);
}

void menv_cli_envreg_unregister(const char *prefix)
{
	warn(prefix, false);
}
