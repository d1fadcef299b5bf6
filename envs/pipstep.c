/*
 * pipstep.c - the pip step of a change to an existing environment, and how it is taken back.
 * pip runs after the conda transaction committed; when it fails, what pip added is
 * uninstalled, the conda packages go back to the history revision before the command, and
 * any conda package pip had removed files of is linked again, so the environment is as it
 * was. A marker (conda-meta/.menv-pip-pending) written before pip runs lets the next command
 * take back the step of a killed menv. Also `install --revision N`'s primitive and
 * conda-meta/.menv-request.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "txnpriv.h"

int menv_txn_revert_to_revision(const struct menv_config *cfg, const char *prefix, size_t rev,
                                const char *why, struct menv_error *err)
{
	struct menv_prefix_record *inst = NULL;
	struct menv_owned_recs owned = {0}, relinked = {0};
	struct menv_strvec requested = MENV_STRVEC_INIT;
	const struct menv_record **link = NULL;
	json_t **unlink = NULL;
	size_t ninst = 0, nlink = 0, nunlink = 0;
	int rc = menv_prefix_records_load(prefix, &inst, &ninst, err);

	if (!rc)
		rc = menv_plan_revision(prefix, cfg, rev, true, NULL, NULL, inst, ninst, &owned,
		                        &link, &nlink, &unlink, &nunlink, err);
	if (rc)
		goto out;
	if (menv_plan_relink_noarch_python(NULL, inst, ninst, &link, &nlink, &unlink, &nunlink,
	                                   &relinked))
		menv_records_toposort(link, nlink);
	if (nlink || nunlink) {
		char *cmdline = menv_xasprintf("menv (rollback to revision %zu: %s)", rev, why);
		struct menv_install_opts io = {
		        .pkgs_dir = cfg->pkgs_dir,
		        .requested = &requested,
		        .cmdline = cmdline,
		        .locked = true,
		};
		menv_install_opts_link_settings(cfg, &io);
		rc = menv_env_apply(prefix, link, nlink, unlink, nunlink, &io, NULL, err);
		free(cmdline);
	}
out:
	free(link);
	free(unlink);
	menv_owned_recs_release(&owned);
	menv_owned_recs_release(&relinked);
	menv_prefix_records_free(inst, ninst);
	return rc;
}

/* Adds "; <note>" after err's message (keeps the code). */
static void add_note(struct menv_error *err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void add_note(struct menv_error *err, const char *fmt, ...)
{
	char note[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	size_t len = strlen(err->msg);
	snprintf(err->msg + len, sizeof(err->msg) - len, "; %s", note);
}

/* After a failed pip step: every conda package that lost a file (pip uninstalls a conda
 * package's distribution before it replaces it, and may fail before the replacement is in)
 * is linked again from the package cache (fetched again from its URL when the cache lost it),
 * in one journaled transaction under the caller's prefix lock. `*repaired` counts them.
 * Errors: those of the package cache and menv_env_apply. */
int menv_txn_repair(const struct menv_config *cfg, const char *prefix,
                    const struct menv_strvec *names, size_t *repaired, struct menv_error *err)
{
	struct menv_prefix_record *inst = NULL;
	struct menv_record *recs = NULL;
	const struct menv_record **link = NULL;
	json_t **unlink = NULL;
	size_t ninst = 0, n = 0;
	int rc = menv_prefix_records_load(prefix, &inst, &ninst, err);

	*repaired = 0;
	if (rc)
		return rc;
	recs = menv_xcalloc(ninst + 1, sizeof(*recs));
	link = menv_xcalloc(ninst + 1, sizeof(*link));
	unlink = menv_xcalloc(ninst + 1, sizeof(*unlink));
	for (size_t i = 0; i < ninst; i++) {
		bool lost = false;
		size_t k;
		json_t *f;
		json_array_foreach(json_object_get(inst[i].json, "files"), k, f)
		{
			struct stat sb;
			char *p = menv_xasprintf("%s/%s", prefix, json_string_value(f));
			lost = json_is_string(f) && lstat(p, &sb) != 0;
			free(p);
			if (lost)
				break;
		}
		if (names)
			lost = menv_strvec_contains(names, inst[i].name);
		if (lost && menv_record_from_installed(inst[i].json, &recs[n])) {
			link[n] = &recs[n];
			unlink[n] = inst[i].json;
			n++;
		}
	}
	/* the cache's users lock from the fetch to the link, as every relink holds it */
	int users = -1;
	if (n && cfg->pkgs_dir_writable)
		rc = menv_pkgcache_use(cfg->pkgs_dir, false, NULL, NULL, NULL, &users, err);
	if (n && !rc) {
		struct menv_fetch_opts fo;
		menv_fetch_opts_from_config(&fo, cfg);
		rc = menv_pkgcache_fetch_opts(cfg->pkgs_dir, (struct menv_record *const *)link, n,
		                              &fo, NULL, NULL, err);
	}
	if (n && !rc) {
		struct menv_strvec requested = MENV_STRVEC_INIT;
		struct menv_install_opts io = {
		        .pkgs_dir = cfg->pkgs_dir,
		        .requested = &requested,
		        .cmdline = "menv (repair: files a failed pip step removed)",
		        .locked = true,
		};
		menv_install_opts_link_settings(cfg, &io);
		rc = menv_env_apply(prefix, link, n, unlink, n, &io, NULL, err);
		if (!rc)
			*repaired = n;
	}
	menv_pkgcache_unuse(users);
	for (size_t i = 0; i < n; i++)
		menv_record_release(&recs[i]);
	free(recs);
	free(link);
	free(unlink);
	menv_prefix_records_free(inst, ninst);
	return rc;
}

/* conda-meta/.menv-pip-pending: written before a pip step into an existing environment and
 * removed once it succeeded or was taken back; a menv killed meanwhile leaves it, and the
 * next command takes the step back (menv_txn_pip_recover). JSON: {"revert_to": N or -1,
 * "before": [[name, version], ...]} (the pip distributions before the step). */
static char *pending_path(const char *prefix)
{
	return menv_xasprintf("%s/conda-meta/.menv-pip-pending", prefix);
}

/* Takes back a pip step (menv_txn_pip_into_env's failure path): uninstalls the distributions
 * not in `before`, puts the conda packages back to `revert_to` (when >= 0) and links again
 * the conda packages pip removed files of (`*repaired`). On failure `*stage` says which step
 * failed and `e` why. */
static int pip_undo(const struct menv_config *cfg, const char *prefix, json_t *before,
                    long revert_to, size_t *repaired, const char **stage, struct menv_error *e)
{
	struct menv_pip_dist *after = NULL;
	struct menv_strvec added = MENV_STRVEC_INIT;
	size_t nafter = 0;
	int rc;

	*repaired = 0;
	if (menv_pip_list(prefix, &after, &nafter, NULL) == 0) {
		for (size_t i = 0; i < nafter; i++) {
			bool had = false;
			size_t k;
			json_t *b;
			json_array_foreach(before, k, b)
			{
				const char *bn = json_string_value(json_array_get(b, 0));
				const char *bv = json_string_value(json_array_get(b, 1));
				had = had || (bn && bv && !strcmp(after[i].name, bn) &&
				              !strcmp(after[i].version, bv));
			}
			if (!had)
				menv_strvec_push(&added, after[i].name);
		}
	}
	*stage = "taking back its packages";
	rc = menv_pip_uninstall(prefix, &added, e);
	if (!rc) {
		/* and whatever else it wrote (a wheel that failed half-way has no dist-info) */
		size_t stray = 0;
		*stage = "removing the files it wrote";
		rc = menv_pip_files_undo(prefix, &stray, e);
	}
	if (!rc && revert_to >= 0) {
		*stage = "putting the conda packages back";
		rc = menv_txn_revert_to_revision(cfg, prefix, (size_t)revert_to,
		                                 "the pip step failed", e);
	}
	if (!rc) {
		*stage = "linking again the conda packages pip had removed files of";
		rc = menv_txn_repair(cfg, prefix, NULL, repaired, e);
	}
	menv_pip_dists_free(after, nafter);
	menv_strvec_clear(&added);
	return rc;
}

int menv_txn_pip_into_env(const struct menv_config *cfg, const char *prefix,
                          const struct menv_pip_request *pr, long revert_to, struct menv_error *err)
{
	struct menv_pip_dist *before = NULL;
	struct menv_error e2 = {0};
	json_t *pending = json_object(), *list = json_array();
	char *ppath = pending_path(prefix), *text;
	const char *stage = "";
	size_t nbefore = 0, repaired = 0;
	int rc;

	if (menv_pip_list(prefix, &before, &nbefore, NULL))
		nbefore = 0;
	for (size_t i = 0; i < nbefore; i++)
		json_array_append_new(list, json_pack("[s,s]", before[i].name, before[i].version));
	json_object_set_new(pending, "revert_to", json_integer(revert_to));
	json_object_set_new(pending, "before", list);
	text = json_dumps(pending, JSON_INDENT(1));
	rc = menv_pip_files_before(prefix, err);
	if (!rc)
		rc = menv_write_file_atomic(ppath, text, strlen(text), err);
	free(text);
	if (rc)
		goto out;
	rc = menv_pip_install(prefix, pr, err);
	if (!rc) {
		unlink(ppath);
		menv_pip_files_done(prefix);
		goto out;
	}
	/* take back what pip added before it failed, then the conda part of this command */
	/* Ctrl-C may be what stopped pip: the undo must still read the records and run to its
	 * end, as a journal rollback does */
	menv_cancel_block(true);
	int urc = pip_undo(cfg, prefix, list, revert_to, &repaired, &stage, &e2);
	menv_cancel_block(false);
	if (urc) {
		add_note(err, "%s failed too (%s)", stage, e2.msg);
		goto out; /* the marker stays: the next command tries again */
	}
	unlink(ppath);
	if (revert_to < 0)
		add_note(err, "'%s' is as it was%s", prefix,
		         repaired ? " (conda packages whose files pip removed were linked again)"
		                  : "");
	else
		add_note(err, "'%s' was put back to revision %ld, as it was before%s", prefix,
		         revert_to,
		         repaired ? " (conda packages whose files pip removed were linked again)"
		                  : "");
out:
	menv_pip_dists_free(before, nbefore);
	json_decref(pending);
	free(ppath);
	return rc;
}

int menv_txn_pip_recover(const char *prefix, bool *undone, struct menv_error *err)
{
	struct menv_config cfg = {0};
	struct menv_error e2 = {0};
	char *ppath = pending_path(prefix);
	json_t *pending = NULL;
	const char *stage = "";
	size_t repaired = 0;
	int rc = 0;

	*undone = false;
	if (access(ppath, F_OK) != 0)
		goto out;
	pending = menv_json_load_file(ppath, 0, NULL);
	rc = menv_config_load(&cfg, err);
	if (rc)
		goto out;
	json_t *rt = json_object_get(pending, "revert_to");
	rc = pip_undo(&cfg, prefix, json_object_get(pending, "before"),
	              json_is_integer(rt) ? (long)json_integer_value(rt) : -1, &repaired, &stage,
	              &e2);
	if (rc) {
		rc = menv_error_set(err, rc,
		                    "taking back an interrupted pip step in '%s': %s failed "
		                    "(%s)",
		                    prefix, stage, e2.msg);
		goto out;
	}
	unlink(ppath);
	*undone = true;
out:
	json_decref(pending);
	menv_config_release(&cfg);
	free(ppath);
	return rc;
}

/* conda-meta/.menv-request: what the environment was made from (for --from-history and
 * re-creating its pip part). Best effort. */
void menv_env_request_write(const char *prefix, json_t *req)
{
	char *path = menv_xasprintf("%s/conda-meta/.menv-request", prefix);
	char *text;

	menv_json_redact(req); /* channels and pip options without credentials or tokens */
	text = json_dumps(req, JSON_INDENT(2));
	struct menv_error err = {0};
	menv_write_file_atomic(path, text, strlen(text), &err);
	free(text);
	free(path);
}
