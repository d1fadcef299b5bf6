/*
 * intent.c - the commands made of several steps (rename: a clone, then the removal of the
 * original; env remove: the unlink of every package, then the removal of the prefix) write
 * what they intend before the first step, so that a kill between any two steps leaves the old
 * state or the new one, and the next command that touches either environment says which.
 *
 *   <src>/conda-meta/.menv-rename    "DEST\nASIDE\nTOKEN\n": src is being renamed to DEST;
 *                                    an old DEST was moved to ASIDE (empty line: none)
 *   <dest>/conda-meta/.menv-clone    "SRC\nTOKEN\n": this environment is the clone of that
 *                                    rename (written in the staging directory, so it appears
 *                                    with the clone)
 *   <dest>/conda-meta/.menv-replaced "SRC\nTOKEN\n": written before `rename --force` sets the
 *                                    old DEST aside (`.NAME.menv-replaced-TOKEN`): a command
 *                                    naming DEST while only the aside stands finds the rename
 *   <prefix>/conda-meta/.menv-removing  the commit point: prefix is being removed
 *   <prefix>/conda-meta/.menv-creating  a new environment whose last steps run (pip, its
 *                                    request, its registry line): a kill removes it, as a
 *                                    failed create leaves no prefix
 *   <prefix>/conda-meta/.menv-doctor    "DIST\n"...: doctor --fix sets these records aside
 *                                    and links the packages again
 *
 * Recovery, under the prefix's lock: `.menv-removing` rolls forward (an old destination that
 * was set aside is removed, the clone's mark dropped, the prefix moved away whole and
 * removed, its registry line dropped); a `.menv-rename` without it rolls back (the clone,
 * recognised by its token, removed whole; the old destination moved back); a `.menv-clone`
 * sends the recovery to its source (locked in turn), then the mark goes. Every step checks
 * the disk first, so an interrupted recovery can run again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intent.h"
#include "link.h"
#include "prefix.h"
#include "registry.h"

static char *meta_path(const char *prefix, const char *name)
{
	return menv_xasprintf("%s/conda-meta/%s", prefix, name);
}

static bool has(const char *prefix, const char *name)
{
	char *p = meta_path(prefix, name);
	bool r = access(p, F_OK) == 0;
	free(p);
	return r;
}

/* The lines of conda-meta/NAME (want of them, a missing one is ""), or false. */
static bool read_lines(const char *prefix, const char *name, char **out, size_t want)
{
	struct menv_buf b = MENV_BUF_INIT;
	char *p = meta_path(prefix, name);
	bool ok = menv_buf_read_file(&b, p, NULL) == 0;
	free(p);
	const char *s = b.buf ? b.buf : "";
	for (size_t i = 0; i < want; i++) {
		size_t n = strcspn(s, "\n");
		out[i] = ok ? menv_xstrndup(s, n) : NULL;
		s += n + (s[n] == '\n');
	}
	menv_buf_release(&b);
	return ok;
}

static void drop_meta(const char *prefix, const char *name)
{
	char *p = meta_path(prefix, name);
	unlink(p);
	free(p);
}

static int write_meta(const char *prefix, const char *name, const char *text,
                      struct menv_error *err)
{
	char *p = meta_path(prefix, name);
	int rc = menv_write_file_atomic(p, text, strlen(text), err);
	free(p);
	return rc;
}

int menv_intent_rename_begin(const char *src, const char *dest, const char *aside,
                             const char *token, struct menv_error *err)
{
	char *text = menv_xasprintf("%s\n%s\n%s\n", dest, aside ? aside : "", token);
	int rc = write_meta(src, ".menv-rename", text, err);
	free(text);
	return rc;
}

int menv_intent_replaced_mark(const char *dest, const char *src, const char *token,
                              struct menv_error *err)
{
	char *text = menv_xasprintf("%s\n%s\n", src, token);
	int rc = write_meta(dest, ".menv-replaced", text, err);
	free(text);
	return rc;
}

int menv_intent_clone_mark(const char *staging, const char *src, const char *token,
                           struct menv_error *err)
{
	char *text = menv_xasprintf("%s\n%s\n", src, token);
	int rc = write_meta(staging, ".menv-clone", text, err);
	free(text);
	return rc;
}

int menv_intent_doctor_begin(const char *prefix, const struct menv_strvec *dists,
                             struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	for (size_t i = 0; i < dists->n; i++)
		menv_buf_addf(&b, "%s\n", dists->v[i]);
	int rc = write_meta(prefix, ".menv-doctor", b.buf ? b.buf : "", err);
	menv_buf_release(&b);
	return rc;
}

/* doctor --fix: the relink's journal settled first (rolled back unless committed), then each
 * record set aside comes back where the relink wrote none. */
static int recover_doctor(const char *prefix, char **said, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	enum menv_recovery what = MENV_RECOVERY_NONE;
	char *p = meta_path(prefix, ".menv-doctor");
	bool done = true; /* every record was written anew, beside the one set aside */
	int rc = 0;

	if (menv_env_needs_recovery(prefix))
		rc = menv_env_recover(prefix, &what, err);
	if (!rc)
		rc = menv_buf_read_file(&b, p, err);
	for (const char *s = b.buf; !rc && s && *s;) {
		size_t n = strcspn(s, "\n");
		char *rec = menv_xasprintf("%s/conda-meta/%.*s.json", prefix, (int)n, s);
		char *aside = menv_xasprintf("%s.corrupt", rec);
		struct stat sb;
		bool has_rec = lstat(rec, &sb) == 0, has_aside = lstat(aside, &sb) == 0;
		done &= has_rec && has_aside;
		if (!has_rec && has_aside && rename(aside, rec) < 0)
			rc = menv_error_sys(err, MENV_EIO, "cannot put '%s' back", rec);
		free(rec);
		free(aside);
		s += n + (s[n] == '\n');
	}
	if (!rc) {
		unlink(p);
		*said = done ? menv_xasprintf("finished the interrupted doctor --fix of '%s'",
		                              prefix)
		             : menv_xasprintf("rolled back the interrupted doctor --fix of '%s'",
		                              prefix);
	}
	menv_buf_release(&b);
	free(p);
	return rc;
}

int menv_intent_creating(const char *prefix, bool on, struct menv_error *err)
{
	if (on)
		return write_meta(prefix, ".menv-creating", "", err);
	drop_meta(prefix, ".menv-creating");
	return 0;
}

int menv_intent_removing(const char *prefix, struct menv_error *err)
{
	return write_meta(prefix, ".menv-removing", "", err);
}

int menv_intent_remove_whole(const char *path, struct menv_error *err)
{
	char *pc = menv_xstrdup(path), *bc = menv_xstrdup(path);
	char *trash = menv_xasprintf("%s/.%.200s.menv-tmp-XXXXXX", dirname(pc), basename(bc));
	int rc = 0;

	if (!mkdtemp(trash)) {
		rc = menv_error_sys(err, MENV_EIO, "cannot remove '%s'", path);
		goto out;
	}
	if (rename(path, trash) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot remove '%s'", path);
		rmdir(trash);
		goto out;
	}
	menv_crash_point();
	menv_remove_tree(trash);
out:
	free(trash);
	free(pc);
	free(bc);
	return rc;
}

bool menv_env_intent_pending(const char *prefix)
{
	return has(prefix, ".menv-rename") || has(prefix, ".menv-removing") ||
	       has(prefix, ".menv-clone") || has(prefix, ".menv-doctor") ||
	       has(prefix, ".menv-creating");
}

bool menv_env_leaving(const char *prefix)
{
	return has(prefix, ".menv-removing") || has(prefix, ".menv-clone") ||
	       has(prefix, ".menv-creating");
}

/* Is `dest` the clone marked `token`? */
static bool is_clone(const char *dest, const char *token)
{
	char *l[2];
	bool r = read_lines(dest, ".menv-clone", l, 2) && !strcmp(l[1], token);
	free(l[0]);
	free(l[1]);
	return r;
}

/* What killed steps left beside `path` (a staging directory, a prefix moved away). */
static void clean_beside(const char *path)
{
	char *pc = menv_xstrdup(path);
	menv_env_remove_stale(dirname(pc));
	free(pc);
}

/* The source side: `src` holds .menv-rename and/or .menv-removing. */
static int recover_source(const char *src, char **said, struct menv_error *err)
{
	char *l[3] = {0};
	bool renaming = read_lines(src, ".menv-rename", l, 3);
	bool has_creating = has(src, ".menv-creating");
	const char *dest = l[0], *aside = l[1], *token = l[2];
	struct menv_error ignored = {0};
	int rc = 0;

	if (has(src, ".menv-removing") || has(src, ".menv-creating")) {
		/* committed: forward */
		if (renaming && *aside)
			menv_remove_tree(aside);
		if (renaming && is_clone(dest, token))
			drop_meta(dest, ".menv-clone");
		/* the registry line first: a kill after it leaves an unlisted prefix that the
		 * next command still finishes */
		menv_envreg_remove(src, &ignored);
		rc = menv_intent_remove_whole(src, err);
		if (rc)
			goto out;
		clean_beside(src);
		*said = renaming ? menv_xasprintf("finished the interrupted rename of '%s' to '%s'",
		                                  src, dest)
		        : has_creating
		                ? menv_xasprintf("removed the unfinished new environment of an "
		                                 "interrupted create in '%s'",
		                                 src)
		                : menv_xasprintf("finished the interrupted removal of '%s'", src);
		/* the prefix is gone: a command that wanted it says so (never "error: ok") */
		rc = renaming ? menv_error_set(err, MENV_ENOTFOUND,
		                               "environment '%s' not found: it was renamed to '%s'",
		                               src, dest)
		     : has_creating
		             ? menv_error_set(err, MENV_ENOTFOUND,
		                              "environment '%s' not found: an interrupted create "
		                              "left it incomplete, and it has been removed",
		                              src)
		             : menv_error_set(err, MENV_ENOTFOUND,
		                              "environment '%s' not found: its interrupted removal "
		                              "was finished",
		                              src);
		goto out;
	}
	if (!renaming)
		goto out;
	/* not committed: back */
	struct stat sb;
	if (lstat(dest, &sb) == 0 && is_clone(dest, token)) {
		rc = menv_intent_remove_whole(dest, err);
		if (rc)
			goto out;
		if (!*aside)
			menv_envreg_remove(dest, &ignored);
	}
	if (*aside && lstat(aside, &sb) == 0 && lstat(dest, &sb) < 0 && rename(aside, dest) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot move '%s' back to '%s'", aside, dest);
		goto out;
	}
	/* the old destination's mark: a stale one in a standing prefix means nothing */
	bool kept = *aside && lstat(aside, &sb) == 0;
	if (*aside && !kept)
		drop_meta(dest, ".menv-replaced");
	drop_meta(src, ".menv-rename");
	clean_beside(dest);
	*said = kept ? menv_xasprintf("rolled back the interrupted rename of '%s' to '%s'; "
	                              "another '%s' stands there now, the old one is kept as "
	                              "'%s'",
	                              src, dest, dest, aside)
	             : menv_xasprintf("rolled back the interrupted rename of '%s' to '%s'", src,
	                              dest);
out:
	for (size_t i = 0; i < 3; i++)
		free(l[i]);
	return rc;
}

int menv_env_intent_recover(const char *prefix, menv_env_cb cb, void *ud, char **said,
                            struct menv_error *err)
{
	char *l[2] = {0};
	int rc = 0;

	*said = NULL;
	if (has(prefix, ".menv-rename") || has(prefix, ".menv-removing") ||
	    has(prefix, ".menv-creating"))
		return recover_source(prefix, said, err);
	if (has(prefix, ".menv-doctor"))
		return recover_doctor(prefix, said, err);
	if (!read_lines(prefix, ".menv-clone", l, 2))
		return 0;
	/* the clone of a rename: its source decides (a rename holds the source's lock until
	 * it has finished, so this waits for a live one) */
	int fd = -1;
	struct menv_error e = {0};
	if (!menv_env_lock(l[0], false, cb, ud, &fd, &e)) {
		if (has(l[0], ".menv-rename") || has(l[0], ".menv-removing"))
			rc = recover_source(l[0], said, &e);
		menv_env_unlock(fd);
		if (rc == MENV_ENOTFOUND) /* the source went: the clone stays */
			rc = 0;
		if (rc) {
			*err = e;
			goto out;
		}
	}
	if (access(prefix, F_OK) < 0)
		rc = menv_error_set(
		        err, MENV_ENOTFOUND,
		        "'%s' was an interrupted rename's unfinished clone and has been "
		        "removed",
		        prefix);
	else
		drop_meta(prefix, ".menv-clone");
out:
	free(l[0]);
	free(l[1]);
	return rc;
}

/* The token of the rename --force this process runs (NULL: none): its own aside folder is
 * no interrupted one while it makes its clone. */
static char *running_token;

void menv_intent_rename_running(const char *token)
{
	free(running_token);
	running_token = token ? menv_xstrdup(token) : NULL;
}

/* The aside folder an interrupted `rename --force` left for the missing `prefix`, or NULL
 * (caller frees): exactly `.NAME.menv-replaced-TOKEN`, TOKEN its marker's (another name's
 * aside folder, or a folder its marker does not name, is none). */
static char *replaced_aside(const char *prefix)
{
	struct stat sb;
	if (prefix[0] != '/' || lstat(prefix, &sb) == 0)
		return NULL;
	char *pc = menv_xstrdup(prefix), *bc = menv_xstrdup(prefix), *found = NULL;
	const char *dir = dirname(pc), *base = basename(bc);
	char *head = menv_xasprintf(".%s.menv-replaced-", base);
	size_t hn = strlen(head);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && !found && (de = readdir(d))) {
		if (strncmp(de->d_name, head, hn))
			continue;
		char *a = menv_xasprintf("%s/%s", dir, de->d_name), *l[2] = {0};
		struct menv_error e = {0};
		/* the source a prefix menv made (a forged one, control characters in it, is none) */
		if (read_lines(a, ".menv-replaced", l, 2) && !strcmp(l[1], de->d_name + hn) &&
		    l[0][0] == '/' && !menv_env_check_prefix(l[0], &e) && lstat(a, &sb) == 0 &&
		    S_ISDIR(sb.st_mode))
			found = a;
		else
			free(a);
		free(l[0]);
		free(l[1]);
	}
	if (d)
		closedir(d);
	free(head);
	free(pc);
	free(bc);
	return found;
}

bool menv_env_replaced_pending(const char *prefix)
{
	char *a = replaced_aside(prefix);
	free(a);
	return a != NULL;
}

int menv_env_replaced_recover(const char *prefix, menv_env_cb cb, void *ud, char **said,
                              struct menv_error *err)
{
	char *aside = replaced_aside(prefix), *l[2] = {0}, *r[3] = {0};
	struct menv_error e = {0};
	struct stat sb;
	int fd = -1, rc = 0;

	*said = NULL;
	/* (this process's own rename, making its clone, is no interrupted one) */
	if (!aside || !read_lines(aside, ".menv-replaced", l, 2) ||
	    (running_token && !strcmp(running_token, l[1])))
		goto out;
	/* the source decides, as for a clone (a live rename holds its lock to its end) */
	if (!menv_env_lock(l[0], false, cb, ud, &fd, &e)) {
		if (read_lines(l[0], ".menv-rename", r, 3) && !strcmp(r[2], l[1]))
			rc = recover_source(l[0], said, &e);
		menv_env_unlock(fd);
		if (rc == MENV_ENOTFOUND) /* finished: the source went, the clone stands */
			rc = 0;
		if (rc) {
			*err = e;
			goto out;
		}
	}
	/* a source that no longer knows of the rename (removed by hand): the old one goes back */
	if (lstat(aside, &sb) == 0 && lstat(prefix, &sb) < 0) {
		if (rename(aside, prefix) < 0) {
			int saved = errno;
			if (lstat(aside, &sb) < 0) /* another command settled it meanwhile */
				goto out;
			errno = saved;
			rc = menv_error_sys(err, MENV_EIO, "cannot move '%s' back to '%s'", aside,
			                    prefix);
			goto out;
		}
		drop_meta(prefix, ".menv-replaced");
		free(*said);
		*said = menv_xasprintf("moved '%s' back to '%s': an interrupted rename of '%s' "
		                       "had set it aside",
		                       aside, prefix, l[0]);
	}
out:
	for (size_t i = 0; i < 3; i++)
		free(r[i]);
	free(l[0]);
	free(l[1]);
	free(aside);
	return rc;
}

int menv_intent_late_cancel(const char *done, const char *action, const char *prefix,
                            struct menv_error *err)
{
	if (!menv_cancelled())
		return 0;
	return menv_error_set(err, MENV_EINTR, "interrupted after %s; the %s of '%s' was finished",
	                      done, action, prefix);
}
