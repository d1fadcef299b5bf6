/*
 * txnrequest.c - what a change command (create, install, update, remove, env update) was
 * given, checked and made into a transaction's options: a lockfile or an environment file
 * behind -f, the environment it names, the prefix (new for create, existing otherwise), and
 * the usage errors conda gives for a request that cannot be carried out; a -f that is a pipe
 * read once into a temporary copy (menv_file_once), and what kind of file it is.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h"
#include "txn.h"

int menv_txn_request_opts(struct menv_txn_request *rq, const struct menv_config *cfg,
                          struct menv_txn_opts *o, struct menv_envfile **ef, char **prefix,
                          struct menv_strvec *warnings, struct menv_error *err)
{
	enum menv_txn_kind kind = rq->kind;
	bool lock = rq->file && menv_file_is_lockfile(rq->file);
	size_t nspecs = o->specs ? o->specs->n : 0;
	int rc;

	if (o->smoke_force && rq->smoke_off)
		return menv_error_set(err, MENV_EUSAGE,
		                      "--smoke-check and --no-smoke-check contradict each other");
	if (kind == MENV_TXN_INSTALL && rq->file && !lock)
		return menv_error_set(err, MENV_EUSAGE,
		                      "%s: not a lockfile (install -f takes a lockfile; for an "
		                      "environment file use env update -f)",
		                      rq->file);
	if ((lock || rq->revision) && nspecs)
		return menv_error_set(err, MENV_EUSAGE, "%s takes no package specs",
		                      lock ? "install -f LOCKFILE" : "--revision");
	if (rq->file && !lock) {
		rc = menv_envfile_load(rq->file, ef, err);
		if (rc)
			return rc;
		if (rq->given) { /* warnings name the file given, not a pipe's copy */
			free((*ef)->path);
			(*ef)->path = menv_xstrdup(rq->given);
		}
		menv_envfile_check(*ef, warnings);
		if (!rq->name && !rq->path) {
			rq->name = (*ef)->name;
			rq->path = rq->name ? NULL : (*ef)->prefix;
		}
	}
	if (kind == MENV_TXN_ENV_UPDATE && !rq->file)
		return menv_error_set(err, MENV_EUSAGE, "env update needs -f FILE");
	if ((kind == MENV_TXN_INSTALL || kind == MENV_TXN_UPDATE || kind == MENV_TXN_REMOVE) &&
	    !rq->file && !nspecs && !rq->revision && !o->all)
		return menv_error_set(err, MENV_EUSAGE, "no packages given%s",
		                      kind == MENV_TXN_INSTALL ? "" : " (or --all)");
	/* `base`, `root` and names that are not text: menv_env_prefix_new refuses them */
	*prefix = kind == MENV_TXN_CREATE ? menv_env_prefix_new(cfg, rq->name, rq->path, err)
	                                  : menv_env_prefix_find(cfg, rq->name, rq->path, err);
	if (!*prefix)
		return err->code ? err->code : MENV_EUSAGE;
	o->kind = kind;
	o->cfg = cfg;
	o->prefix = *prefix;
	o->envfile = *ef;
	o->file = lock ? rq->file : NULL;
	o->file_shown = lock ? rq->given : NULL;
	o->smoke = !rq->smoke_off;
	if (lock)
		o->kind = kind == MENV_TXN_CREATE ? MENV_TXN_CREATE_LOCK : MENV_TXN_INSTALL_LOCK;
	if (rq->revision)
		o->kind = MENV_TXN_REVISION;
	return 0;
}

int menv_env_config_vars_check(const char *sub, size_t nargs, struct menv_error *err)
{
	bool list = !strcmp(sub, "list"), set = !strcmp(sub, "set");
	if (!list && !set && strcmp(sub, "unset"))
		return menv_error_set(err, MENV_EUSAGE,
		                      "unknown 'env config vars' command '%s' (use list, set or "
		                      "unset)",
		                      sub);
	if (list ? nargs != 0 : nargs == 0)
		return menv_error_set(err, MENV_EUSAGE, "'env config vars %s' takes %s", sub,
		                      list  ? "no arguments"
		                      : set ? "VAR=VALUE arguments"
		                            : "VAR arguments");
	return 0;
}

char *menv_file_once(const char *path, struct menv_error *err)
{
	struct stat sb;
	struct menv_buf b = MENV_BUF_INIT;
	char *tmp = NULL;

	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		return NULL;
	/* a pipe (`-f /dev/stdin`, `-f <(...)`) can be read once: menv reads a file more than
	 * once (to tell a lockfile from an environment file, then to load it) */
	if (menv_buf_read_stream(&b, path, err))
		return NULL;
	int fd = -1;
	if (menv_tmp_mkfile("file", &tmp, &fd, err) ||
	    (b.len && write(fd, b.buf, b.len) != (ssize_t)b.len)) {
		if (fd >= 0)
			menv_error_sys(err, MENV_EIO, "cannot keep a copy of '%s'", path);
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		tmp = NULL;
	} else {
		close(fd);
	}
	menv_buf_release(&b);
	return tmp;
}

bool menv_file_is_lockfile(const char *path)
{
	struct menv_error err = {0};
	enum menv_lock_format f;
	return !menv_lockfile_detect_file(path, &f, &err) && f != MENV_LOCK_NONE;
}

void menv_file_once_drop(char *copy)
{
	if (copy)
		unlink(copy);
	free(copy);
}
