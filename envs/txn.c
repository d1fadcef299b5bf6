/*
 * txn.c - the transaction engine: every change to an environment, whatever started it
 * (create from specs, an environment file or a lockfile; install, update, remove; env update
 * [--prune]; install -f LOCK; install --revision N), is one struct menv_txn going through
 * the same stages, in this order and in this file (the last in txnsmoke.c):
 *
 *   1. request    menv_txn_new: what to change, where, from what
 *   2. plan       menv_txn_prepare: lock the prefix, recover, read the PrefixRecords, then
 *                 solve (channels, repodata, pins, virtual packages), read the lockfile or
 *                 the history revision; --prune; noarch python relinks
 *   3. fetch      menv_txn_commit: every package downloaded, verified and extracted into
 *                 the package cache before anything in the prefix changes (BR-032)
 *   4. link       one journaled change (envs/prefix.c): a staging directory renamed into
 *                 place, or unlink + link rolled back on any failure, Ctrl-C or crash
 *   5. pip        the `pip:` section or the lock's pip entries, taken back on failure
 *   6. records    conda-meta/.menv-request, the registry ~/.conda/environments.txt
 *   7. smoke      menv_txn_smoke: ops/ built and tested with the environment's toolchain
 *
 * The state the stages share is struct menv_txn (txnpriv.h). Nothing here prints: events go
 * to opts.cb, errors into struct menv_error.
 */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "activate.h"
#include "intent.h"
#include "link.h"
#include "prefix.h"
#include "registry.h"
#include "smoke.h"
#include "txn.h"
#include "txnpriv.h"

static void emit(const struct menv_txn *t, enum menv_env_event ev, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void emit(const struct menv_txn *t, enum menv_env_event ev, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	if (!t->o.cb.event)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	t->o.cb.event(t->o.cb.ud, ev, line);
}

/* ---------------------------------------------------------------------------------------- */
/* 1. The request                                                                            */

int menv_txn_new(const struct menv_txn_opts *o, struct menv_txn **out, struct menv_error *err)
{
	*out = NULL;
	if (!o->cfg || !o->prefix)
		return menv_error_set(err, MENV_EUSAGE,
		                      "a transaction needs settings and a prefix");
	if (menv_txn_is_lock(o->kind) && !o->file)
		return menv_error_set(err, MENV_EUSAGE, "a lockfile transaction needs a lockfile");
	if (o->kind == MENV_TXN_ENV_UPDATE && !o->envfile)
		return menv_error_set(err, MENV_EUSAGE, "env update needs -f FILE");
	struct menv_txn *t = menv_xcalloc(1, sizeof(*t));
	t->o = *o;
	t->lock_fd = -1;
	t->revert_to = -1;
	t->spec_strs = (struct menv_strvec)MENV_STRVEC_INIT;
	t->pip = (struct menv_strvec)MENV_STRVEC_INIT;
	*out = t;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* 2. The plan                                                                               */

/* Under the prefix lock of an existing environment: an interrupted transaction finished or
 * rolled back, and a half-done pip step taken back, each said through cb.event. */
static int recover_locked(const char *prefix, const struct menv_txn_callbacks *cb,
                          struct menv_error *err)
{
	enum menv_recovery what = MENV_RECOVERY_NONE;
	bool undone = false;
	char *said = NULL;
	int rc = 0;

	/* a rename or env remove first: it decides whether the prefix stays at all */
	rc = menv_env_intent_recover(prefix, cb->event, cb->ud, &said, err);
	if (said && cb->event)
		cb->event(cb->ud, MENV_ENV_RECOVERED, said);
	free(said);
	if (rc)
		return rc;
	if (menv_env_needs_recovery(prefix))
		rc = menv_env_recover(prefix, &what, err);
	if (!rc)
		rc = menv_txn_pip_recover(prefix, &undone, err);
	if (rc)
		return rc;
	char line[PATH_MAX + 128];
	if (undone && cb->event) {
		snprintf(line, sizeof(line), "took back an interrupted pip step in '%s'", prefix);
		cb->event(cb->ud, MENV_ENV_RECOVERED, line);
	}
	if (what != MENV_RECOVERY_NONE && cb->event) {
		snprintf(line, sizeof(line), "%s an interrupted transaction in '%s'",
		         what == MENV_RECOVERY_FINISHED ? "finished"
		         : what == MENV_RECOVERY_REMOVED
		                 ? "removed the unfinished new environment of"
		                 : "rolled back",
		         prefix);
		cb->event(cb->ud, MENV_ENV_RECOVERED, line);
	}
	if (what == MENV_RECOVERY_REMOVED)
		return menv_error_set(err, MENV_ENOTFOUND,
		                      "environment '%s' not found: an interrupted create left it "
		                      "incomplete, and it has been removed",
		                      prefix);
	return 0;
}

int menv_txn_recover(const char *prefix, const struct menv_txn_callbacks *cb,
                     struct menv_error *err)
{
	static const struct menv_txn_callbacks none = {0};
	char *pending = menv_xasprintf("%s/conda-meta/.menv-pip-pending", prefix);
	bool pip_pending = access(pending, F_OK) == 0;
	int fd = -1, rc;

	free(pending);
	if (!cb)
		cb = &none;
	if (menv_env_replaced_pending(prefix)) { /* a rename --force killed in its window */
		char *said = NULL;
		rc = menv_env_replaced_recover(prefix, cb->event, cb->ud, &said, err);
		if (said && cb->event)
			cb->event(cb->ud, MENV_ENV_RECOVERED, said);
		free(said);
		if (rc)
			return rc;
	}
	if (!menv_env_needs_recovery(prefix) && !pip_pending && !menv_env_intent_pending(prefix))
		return 0;
	rc = menv_env_lock(prefix, false, cb->event, cb->ud, &fd, err);
	if (!rc)
		rc = recover_locked(prefix, cb, err);
	menv_env_unlock(fd);
	/* an interrupted create that was removed: nothing is left to read; the caller says so
	 * (its "not a conda environment" named no cause) */
	return rc;
}

/* The specs of the request, parsed: the environment file's (its conda side) or the
 * command's. */
static int parse_specs(struct menv_txn *t, struct menv_error *err)
{
	const struct menv_envfile *ef = t->o.envfile;
	for (size_t i = 0; ef && i < ef->deps.n; i++)
		menv_strvec_push(&t->spec_strs, ef->deps.v[i]);
	for (size_t i = 0; t->o.specs && i < t->o.specs->n; i++)
		menv_strvec_push(&t->spec_strs, t->o.specs->v[i]);
	if (t->o.kind == MENV_TXN_CREATE) /* pip: BR-003, chan:: BR-023 */
		menv_envfile_conda_specs(ef, t->o.channels, &t->spec_strs);
	t->specs = menv_xcalloc(t->spec_strs.n + 1, sizeof(*t->specs));
	for (size_t i = 0; i < t->spec_strs.n; i++) {
		int rc = menv_matchspec_parse(t->spec_strs.v[i], &t->specs[t->nspecs], err);
		if (rc) {
			if (ef && ef->path)
				menv_error_prefix(err, "%s", ef->path);
			return rc;
		}
		t->nspecs++;
	}
	return 0;
}

static void emit_skipped(struct menv_txn *t) /* what the loads skipped, each once */
{
	const struct menv_strvec *w = menv_solver_warnings(t->solver);
	for (size_t i = 0; i < w->n; i++)
		emit(t, MENV_ENV_WARNING, "%s", w->v[i]);
	menv_solver_clear_warnings(t->solver);
}

/* A solve's warnings (a sparse load's), then a failed one's problem tree go to cb.event. */
static int solved(struct menv_txn *t, int rc)
{
	emit_skipped(t);
	if (rc == MENV_EUNSAT && t->o.cb.event)
		t->o.cb.event(t->o.cb.ud, MENV_ENV_PROBLEMS, menv_solver_problems(t->solver));
	return rc;
}

/* The channels of the request and a solver over them, with pins (`prefix` for its
 * conda-meta/pinned, or NULL) and this machine's virtual packages. */
static int load_solver(struct menv_txn *t, const char *pins_prefix, struct menv_error *err)
{
	const struct menv_config *cfg = t->o.cfg;
	struct menv_matchspec **pins = NULL;
	size_t npins = 0;
	int rc = menv_channel_set_load(cfg, t->o.channels,
	                               t->o.envfile ? &t->o.envfile->channels : NULL,
	                               t->o.override_channels, t->specs, t->nspecs, t->o.cancel,
	                               t->o.cb.event, t->o.cb.ud, &t->ch, err);
	if (rc)
		return rc;
	if (!t->ch.nchans && (t->nspecs || t->o.all) && t->o.kind != MENV_TXN_REMOVE)
		return menv_error_set(err, MENV_EUSAGE,
		                      "no channels: give -c CHANNEL or list channels in the "
		                      "environment file or .condarc");
	t->solver = menv_solver_new(cfg->subdir, cfg->channel_priority);
	menv_solver_set_add_pip(t->solver, cfg->add_pip_as_python_dependency);
	menv_solver_set_cancel(t->solver, t->o.cancel); /* Ctrl-C while libsolv reads */
	rc = menv_channel_set_to_solver(&t->ch, t->solver, err);
	emit_skipped(t); /* records without name, version or build, or a version conda refuses */
	if (rc)
		return rc;
	rc = menv_pins_load(cfg, pins_prefix, &pins, &npins, err);
	for (size_t i = 0; i < npins; i++) {
		menv_solver_add_pin(t->solver, pins[i]);
		menv_matchspec_free(pins[i]);
	}
	free(pins);
	if (rc)
		return rc;
	struct menv_virtual virt[8];
	size_t nv = menv_virtual_detect_subdir(cfg->subdir, virt, 8); /* the target's */
	for (size_t i = 0; i < nv; i++)
		menv_solver_add_virtual(t->solver, virt[i].name, virt[i].version, virt[i].build);
	return 0;
}

/* The specs conda-meta/history says the user asked for (conda's get_requested_specs_map),
 * parsed into t->hist, for every solve of an existing environment. */
static int load_history(struct menv_txn *t, struct menv_error *err)
{
	struct menv_strvec names = MENV_STRVEC_INIT, strs = MENV_STRVEC_INIT;
	for (size_t i = 0; i < t->ninst; i++)
		menv_strvec_push(&names, t->inst[i].name);
	int rc = menv_history_requested_specs(t->o.prefix, &names, &strs, err);
	t->hist = menv_xcalloc(strs.n + 1, sizeof(*t->hist));
	for (size_t i = 0; !rc && i < strs.n; i++)
		if (menv_matchspec_parse(strs.v[i], &t->hist[t->nhist], NULL) == 0)
			t->nhist++;
	menv_strvec_clear(&names);
	menv_strvec_clear(&strs);
	return rc;
}

/* conda's modifiers: the flags, else .condarc's update_modifier. */
static void modifiers(const struct menv_txn *t, struct menv_solve_request *req)
{
	unsigned m = t->o.modifiers;
	enum menv_update_modifier um = t->o.cfg->update_modifier;
	req->freeze_installed = m & MENV_MOD_FREEZE_INSTALLED;
	req->no_update_deps = m & MENV_MOD_NO_UPDATE_DEPS;
	req->update_deps = m & MENV_MOD_UPDATE_DEPS;
	req->update_specs = m & MENV_MOD_UPDATE_SPECS;
	req->update_all = m & MENV_MOD_UPDATE_ALL;
	req->force_reinstall = m & MENV_MOD_FORCE_REINSTALL;
	req->no_deps = m & MENV_MOD_NO_DEPS;
	req->only_deps = m & MENV_MOD_ONLY_DEPS;
	req->force_remove = m & MENV_MOD_FORCE;
	req->satisfied_skip_solve = m & MENV_MOD_SATISFIED_SKIP;
	if (!(m & (MENV_MOD_FREEZE_INSTALLED | MENV_MOD_NO_UPDATE_DEPS | MENV_MOD_UPDATE_DEPS |
	           MENV_MOD_UPDATE_SPECS | MENV_MOD_UPDATE_ALL))) {
		req->freeze_installed = um == MENV_UPDATE_FREEZE_INSTALLED;
		req->update_deps = um == MENV_UPDATE_DEPS;
		req->update_all = um == MENV_UPDATE_ALL;
		req->satisfied_skip_solve =
		        req->satisfied_skip_solve || um == MENV_UPDATE_SATISFIED_SKIP;
	}
}

/* conda refuses an environment inside another one (but the root's envs/ holds them): the
 * nearest parent with conda-meta/ must be the root prefix, or none. */
static int check_not_nested(const struct menv_txn *t, struct menv_error *err)
{
	char *p = menv_envreg_normalize(t->o.prefix), *slash;
	char *root = menv_envreg_normalize(t->o.cfg->root_prefix);
	int rc = 0;
	while (!rc && (slash = strrchr(p, '/')) != NULL && slash != p) {
		*slash = '\0';
		char *meta = menv_xasprintf("%s/conda-meta", p);
		if (access(meta, F_OK) == 0 && strcmp(p, root))
			rc = menv_error_set(
			        err, MENV_EUSAGE,
			        "'%s' is inside the environment '%s': conda and menv do "
			        "not nest environments",
			        t->o.prefix, p);
		free(meta);
	}
	free(p);
	free(root);
	return rc;
}

/* A create onto an environment that exists (a dry run too: it says what the real one would),
 * with what to run instead: the update of that environment from the same input, or its
 * removal first. */
static int exists_error(const struct menv_txn *t, struct menv_error *err)
{
	const char *p = t->o.prefix;
	if (t->o.file)
		return menv_error_set(err, MENV_EEXIST,
		                      "prefix '%s' already exists: install the lock into it with "
		                      "'menv install -p %s -f %s', or remove it first ('menv env "
		                      "remove -p %s')",
		                      p, p, t->o.file, p);
	if (t->o.envfile && t->o.envfile->path)
		return menv_error_set(err, MENV_EEXIST,
		                      "prefix '%s' already exists: update it with 'menv env update "
		                      "-p %s -f %s', or remove it first ('menv env remove -p %s')",
		                      p, p, t->o.envfile->path, p);
	return menv_error_set(err, MENV_EEXIST,
	                      "prefix '%s' already exists: add packages with 'menv install -p %s "
	                      "SPEC...', or remove it first ('menv env remove -p %s')",
	                      p, p, p);
}

static int plan_create(struct menv_txn *t, struct menv_error *err)
{
	int rc = menv_env_check_prefix(t->o.prefix, err);
	if (!rc)
		rc = check_not_nested(t, err);
	if (rc)
		return rc;
	/* an interrupted removal (or create) of this prefix: finished first, then the create
	 * goes on where the prefix was */
	if (!t->o.dry_run && (menv_env_leaving(t->o.prefix) ||
	                      (!t->o.staged && menv_env_replaced_pending(t->o.prefix)))) {
		rc = menv_txn_recover(t->o.prefix, &t->o.cb, err);
		if (rc == MENV_ENOTFOUND && access(t->o.prefix, F_OK) < 0) {
			*err = (struct menv_error){0};
			rc = 0;
		}
		if (rc)
			return rc;
	}
	if (menv_path_in_use(t->o.prefix)) /* checked again when linking */
		return exists_error(t, err);
	rc = parse_specs(t, err);
	if (rc || !t->nspecs)
		return rc;
	rc = load_solver(t, NULL, err);
	if (rc)
		return rc;
	return solved(t,
	              menv_solver_solve(t->solver, t->specs, t->nspecs, &t->link, &t->nlink, err));
}

/* `s` in ASCII lower case (names compare without case, as conda's do). Caller frees. */
static char *lower(const char *s)
{
	char *l = menv_xstrdup(s);
	for (char *p = l; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return l;
}

/* Does a record's features or track_features value ("a b", "a,b" or a list) name one? */
static bool names_feature(json_t *v)
{
	size_t i;
	json_t *e;
	const char *str = json_string_value(v);
	json_array_foreach(v, i, e) if (names_feature(e)) return true;
	return str && str[strspn(str, " ,")];
}

/* conda remove solves against its channels (.condarc's) with the prefix's records; what
 * they can change there is the legacy feature metric's relinking (features.c: numpy's mkl
 * build relinked as the plain one once mkl's tracker leaves). A prefix none of whose records
 * carries features or track_features is solved over its records only, no repodata read. conda
 * --offline reads a channel with no cached repodata as empty (channels.c, as every command
 * does); channels without records give that same records-only solve, where
 * menv_solver_add_installed keeps each featured build's tracker as conda does (conda's solver
 * never reads the package cache: Solver._prepare's index has use_cache=False;
 * solver.offline_cache), and so does an offline load that fails otherwise.
 * Online, a failed download says so and names --offline. */
static int remove_solver(struct menv_txn *t, struct menv_error *err)
{
	bool featured = false;
	for (size_t i = 0; i < t->ninst && !featured; i++)
		featured = names_feature(json_object_get(t->inst[i].json, "features")) ||
		           names_feature(json_object_get(t->inst[i].json, "track_features"));
	int rc = featured ? load_solver(t, t->o.prefix, err) : 0;
	if (rc && t->o.cfg->offline && rc != MENV_EINTR) {
		menv_solver_free(t->solver);
		t->solver = NULL;
		menv_channel_set_release(&t->ch);
		memset(&t->ch, 0, sizeof(t->ch));
		*err = (struct menv_error){0};
		rc = 0;
	} else if (rc == MENV_ENET) {
		/* conda's CondaHTTPError has no hint here; the user did not ask for the network */
		char why[sizeof(err->msg)];
		memcpy(why, err->msg, sizeof(why));
		rc = menv_error_set(err, rc,
		                    "%.1900s (the prefix's legacy features make remove read the "
		                    "channels; --offline solves over its records)",
		                    why);
	}
	if (!rc && !t->solver)
		t->solver = menv_solver_new(t->o.cfg->subdir, t->o.cfg->channel_priority);
	return rc;
}

/* install, update, remove, env update, --revision: a solve (or the history) against the
 * installed records. */
static int plan_change(struct menv_txn *t, struct menv_error *err)
{
	enum menv_txn_kind k = t->o.kind;
	struct menv_transaction st = {0};
	int rc = parse_specs(t, err);

	if (rc)
		return rc;
	if (k == MENV_TXN_UPDATE || k == MENV_TXN_REMOVE) {
		struct menv_strset names = MENV_STRSET_INIT; /* installed, lower case */
		for (size_t i = 0; i < t->ninst; i++) {
			char *l = lower(t->inst[i].name);
			menv_strset_add(&names, l);
			free(l);
		}
		for (size_t i = 0; !rc && i < t->nspecs; i++) {
			char *l = t->specs[i]->name ? lower(t->specs[i]->name) : NULL;
			if (l && !strchr(l, '*') && !menv_strset_has(&names, l))
				rc = menv_error_set(err, MENV_ENOTFOUND,
				                    "package '%s' is not installed in '%s'",
				                    t->specs[i]->name, t->o.prefix);
			free(l);
		}
		menv_strset_clear(&names);
		if (rc)
			return rc;
	}
	if (k == MENV_TXN_REMOVE && t->o.all) {
		/* the whole environment, but never one that holds others or the package cache
		 * (the root prefix: conda refuses to remove it) */
		if (menv_env_check_not_config_dir(t->o.cfg, t->o.prefix, err))
			return err->code;
		/* conda: "cannot remove current environment" */
		const char *act = getenv("CONDA_PREFIX");
		if (act && *act && menv_env_same_prefix(act, t->o.prefix))
			return menv_error_set(err, MENV_EUSAGE,
			                      "'%s' is the active environment: deactivate it "
			                      "before removing it",
			                      t->o.prefix);
		/* a link to an environment: removing "it" would delete the link and empty what
		 * it points at, which stays registered; the user names the environment itself */
		struct stat lsb;
		if (lstat(t->o.prefix, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
			char real[PATH_MAX];
			if (!realpath(t->o.prefix, real))
				snprintf(real, sizeof(real), "?");
			return menv_error_set(err, MENV_EUSAGE,
			                      "'%s' is a symbolic link to '%s': remove the "
			                      "environment by its own path",
			                      t->o.prefix, real);
		}
		/* unlink everything (pre-unlink scripts), then remove it */
		t->plan.remove_env = true;
		t->unlink = menv_xcalloc(t->ninst + 1, sizeof(*t->unlink));
		for (size_t i = 0; i < t->ninst; i++)
			t->unlink[t->nunlink++] = t->inst[i].json;
		return 0;
	}
	if (k == MENV_TXN_REVISION) {
		/* conda's install_revision: an Index over .condarc's channels and -c's (no
		 * environment file's), with the package cache's records only offline; a revision
		 * the history lacks is refused before any download */
		rc = menv_plan_revision_exists(t->o.prefix, (size_t)t->o.revision, err);
		if (rc || (rc = load_solver(t, NULL, err)) != 0)
			return rc;
		return menv_plan_revision(t->o.prefix, t->o.cfg, (size_t)t->o.revision,
		                          t->o.cfg->offline, &t->ch, t->solver, t->inst, t->ninst,
		                          &t->owned, &t->link, &t->nlink, &t->unlink, &t->nunlink,
		                          err);
	}
	rc = k == MENV_TXN_REMOVE ? remove_solver(t, err) : load_solver(t, t->o.prefix, err);
	if (rc)
		return rc;
	menv_solver_add_installed(t->solver, t->instj, t->ninst);
	rc = load_history(t, err);
	if (rc)
		return rc;
	struct menv_solve_request req = {
	        .history = t->hist,
	        .nhistory = t->nhist,
	        .aggressive = &t->o.cfg->aggressive_update_packages,
	        .aggressive_update = !t->o.cfg->offline,
	};
	modifiers(t, &req);
	switch (k) {
	case MENV_TXN_UPDATE:
		/* the newest allowed by each spec (kept within its constraint) */
		req.update = t->specs;
		req.nupdate = t->nspecs;
		req.update_all = req.update_all || t->o.all;
		break;
	case MENV_TXN_REMOVE:
		req.remove = t->specs;
		req.nremove = t->nspecs;
		break;
	default:
		req.install = t->specs;
		req.ninstall = t->nspecs;
		break;
	}
	rc = solved(t, menv_solver_solve_request(t->solver, &req, &st, err));
	if (rc)
		return rc;
	t->link = st.link; /* the arrays are the plan's now */
	t->nlink = st.nlink;
	t->unlink = st.unlink;
	t->nunlink = st.nunlink;
	if (k == MENV_TXN_ENV_UPDATE && t->o.prune)
		menv_plan_prune(t->specs, t->nspecs, t->inst, t->ninst, t->link, &t->nlink,
		                &t->unlink, &t->nunlink);
	return 0;
}

/* create -f LOCK, install -f LOCK: the lock's records, no solve. */
static int plan_lock(struct menv_txn *t, struct menv_error *err)
{
	const struct menv_config *cfg = t->o.cfg;
	struct menv_pip_dist *pips = NULL;
	size_t npips = 0;
	int rc = menv_lockfile_load(t->o.file, &t->lf, err);

	if (!rc)
		rc = menv_lockfile_select(t->lf, t->o.lock_env, cfg->subdir, &t->sel, &t->nsel,
		                          err);
	if (!rc && menv_txn_is_create(t->o.kind)) {
		rc = menv_env_check_prefix(t->o.prefix, err);
		if (!rc)
			rc = check_not_nested(t, err);
		if (!rc && menv_path_in_use(t->o.prefix))
			rc = exists_error(t, err);
	}
	if (!rc)
		rc = menv_lockrecs_build(cfg, t->o.file, t->sel, t->nsel, &t->lr, err);
	/* one record a name: an environment holds one version of a package */
	struct menv_strmap byname; /* name -> its first record (the records' names, borrowed) */
	menv_strmap_borrowing(&byname, t->lr.n);
	for (size_t i = 0; !rc && i < t->lr.n; i++) {
		if (menv_strmap_add(&byname, t->lr.recs[i].name, i))
			continue;
		size_t k = *menv_strmap_get(&byname, t->lr.recs[i].name);
		rc = menv_error_set(err, MENV_EPARSE,
		                    "%s: '%s' is locked twice (%s-%s and %s-%s) for %s", t->o.file,
		                    t->lr.recs[i].name, t->lr.recs[k].version, t->lr.recs[k].build,
		                    t->lr.recs[i].version, t->lr.recs[i].build, cfg->subdir);
	}
	menv_strmap_clear(&byname);
	if (rc)
		return rc;
	t->plan.solved = false;
	t->plan.lock_file = t->o.file_shown ? t->o.file_shown : t->o.file;
	t->plan.lock_format = menv_lock_format_name(t->lf->format);
	t->plan.lock_conda = t->lr.n;
	/* the pip entries: those the prefix does not hold at that version */
	if (!menv_txn_is_create(t->o.kind) && menv_pip_list(t->o.prefix, &pips, &npips, NULL))
		npips = 0;
	struct menv_strset held = MENV_STRSET_INIT; /* "name\nversion" of each installed dist */
	for (size_t k = 0; k < npips; k++) {
		char *key = menv_xasprintf("%s\n%s", pips[k].name, pips[k].version);
		menv_strset_add(&held, key);
		free(key);
	}
	t->pipsel = menv_xcalloc(t->nsel + 1, sizeof(*t->pipsel));
	for (size_t i = 0; i < t->nsel; i++) {
		if (t->sel[i]->manager != MENV_LOCK_PIP)
			continue;
		t->plan.lock_pip++;
		bool have = false;
		if (t->sel[i]->version) {
			char *norm = menv_pip_normalize(t->sel[i]->name);
			char *key = menv_xasprintf("%s\n%s", norm, t->sel[i]->version);
			have = menv_strset_has(&held, key);
			free(key);
			free(norm);
		}
		if (!have)
			t->pipsel[t->npipsel++] = t->sel[i];
	}
	menv_strset_clear(&held);
	menv_pip_dists_free(pips, npips);
	if (t->npipsel && (rc = menv_lock_pip_python(t->o.prefix, &t->lr, err)))
		return rc;
	struct menv_pip_request pr = {0};
	if (t->npipsel) {
		menv_lock_pip_request(t->lf, t->o.lock_env, t->pipsel, t->npipsel, &pr);
		for (size_t i = 0; i < pr.requirements.n; i++)
			menv_strvec_push(&t->pip, pr.requirements.v[i]);
		menv_strvec_clear(&pr.requirements);
		menv_strvec_clear(&pr.options);
	}
	/* the records in dependency order; in an existing environment only what it does not
	 * hold as name-version-build, unlinking the installed record of each such name (as
	 * micromamba: packages outside the lock stay) */
	const struct menv_record **order = menv_xcalloc(t->lr.n + 1, sizeof(*order));
	for (size_t i = 0; i < t->lr.n; i++)
		order[i] = &t->lr.recs[i];
	menv_records_toposort(order, t->lr.n);
	if (menv_txn_is_create(t->o.kind)) {
		t->link = order;
		t->nlink = t->lr.n;
		return 0;
	}
	t->link = menv_xcalloc(t->lr.n + 1, sizeof(*t->link));
	t->unlink = menv_xcalloc(t->lr.n + 1, sizeof(*t->unlink));
	t->lr.skip = menv_xcalloc(t->lr.n + 1, sizeof(*t->lr.skip));
	struct menv_strmap inst = MENV_STRMAP_INIT; /* name -> its first installed record */
	for (size_t k = 0; k < t->ninst; k++)
		menv_strmap_add(&inst, t->inst[k].name, k);
	for (size_t i = 0; i < t->lr.n; i++) {
		const struct menv_record *r = order[i];
		const size_t *at = menv_strmap_get(&inst, r->name);
		const struct menv_prefix_record *have = at ? &t->inst[*at] : NULL;
		if (have && !strcmp(have->version, r->version) && !strcmp(have->build, r->build)) {
			t->lr.skip[r - t->lr.recs] = true;
			continue;
		}
		t->link[t->nlink++] = r;
		if (have)
			t->unlink[t->nunlink++] = have->json;
	}
	menv_strmap_clear(&inst);
	free(order);
	return 0;
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : "";
}

static int change_cmp(const void *a, const void *b)
{
	const struct menv_txn_change *x = a, *y = b;
	return x->kind != y->kind ? (int)x->kind - (int)y->kind : strcmp(x->name, y->name);
}

/* Sorts c[0..n) by change_cmp, stably (equal changes keep the order given, which qsort does
 * not promise), with `tmp` room for n: a merge sort without a call through a pointer per
 * comparison, the cost of a 100,000-package plan's sort (issue 22). */
static void changes_sort(struct menv_txn_change *c, struct menv_txn_change *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2, i = 0, j = h, k = 0;
	changes_sort(c, tmp, h);
	changes_sort(c + h, tmp, n - h);
	if (change_cmp(&c[h - 1], &c[h]) <= 0)
		return; /* already in order: nothing to merge */
	while (i < h && j < n)
		tmp[k++] = change_cmp(&c[j], &c[i]) < 0 ? c[j++] : c[i++];
	while (i < h)
		tmp[k++] = c[i++];
	memcpy(c, tmp, k * sizeof(*c)); /* c[j..n) is in place */
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (json_t *const *)a, y = (uintptr_t) * (json_t *const *)b;
	return x < y ? -1 : x > y;
}

/* The plan per package: each link paired with the unlink of its name, the rest removals. */
static void classify(struct menv_txn *t)
{
	size_t n = 0;
	struct menv_strmap unlinks = MENV_STRMAP_INIT; /* name -> its first unlink */
	json_t **paired = menv_xcalloc(t->nlink + 1, sizeof(*paired)); /* sorted, for bsearch */
	size_t npaired = 0;
	for (size_t k = 0; k < t->nunlink; k++)
		menv_strmap_add(&unlinks, jstr(t->unlink[k], "name"), k);
	t->changes = menv_xcalloc(t->nlink + t->nunlink + 1, sizeof(*t->changes));
	for (size_t i = 0; i < t->nlink; i++) {
		const struct menv_record *r = t->link[i];
		struct menv_txn_change *c = &t->changes[n++];
		*c = (struct menv_txn_change){MENV_CHANGE_INSTALL, r->name, r, t->cached[i], NULL};
		const size_t *k = menv_strmap_get(&unlinks, r->name);
		if (!k)
			continue;
		c->unlink = paired[npaired++] = t->unlink[*k];
		struct menv_version *a = NULL, *b = NULL;
		const char *ov = jstr(c->unlink, "version");
		int v = menv_version_parse(r->version, &a, NULL) == 0 &&
		                        menv_version_parse(ov, &b, NULL) == 0
		                ? menv_version_cmp(a, b)
		                : strcmp(r->version, ov);
		menv_version_free(a);
		menv_version_free(b);
		bool same =
		        !strcmp(r->build, jstr(c->unlink, "build")) &&
		        !strcmp(r->channel_url ? r->channel_url : "", jstr(c->unlink, "channel"));
		c->kind = v > 0   ? MENV_CHANGE_UPGRADE
		          : v < 0 ? MENV_CHANGE_DOWNGRADE
		          : same  ? MENV_CHANGE_REINSTALL
		                  : MENV_CHANGE_CHANGE;
	}
	qsort(paired, npaired, sizeof(*paired), by_address);
	for (size_t k = 0; k < t->nunlink; k++) {
		if (!bsearch(&t->unlink[k], paired, npaired, sizeof(*paired), by_address))
			t->changes[n++] = (struct menv_txn_change){MENV_CHANGE_REMOVE,
			                                           jstr(t->unlink[k], "name"), NULL,
			                                           false, t->unlink[k]};
	}
	menv_strmap_clear(&unlinks);
	free(paired);
	struct menv_txn_change *tmp = menv_xcalloc(n + 1, sizeof(*tmp));
	changes_sort(t->changes, tmp, n);
	free(tmp);
	t->plan.changes = t->changes;
	t->plan.nchanges = n;
}

/* remove --all deletes the whole folder: only an environment's (conda's test:
 * conda-meta/history; or package records, one whose history was lost) or a half-made one
 * that menv itself left (its journal, its pip or intent marks), never a folder that merely
 * has a conda-meta/ beside the user's files. */
static bool removable_env(const char *prefix)
{
	static const char *const marks[] = {"history", ".menv-pip-pending"};
	for (size_t i = 0; i < sizeof(marks) / sizeof(*marks); i++) {
		char *p = menv_xasprintf("%s/conda-meta/%s", prefix, marks[i]);
		bool yes = access(p, F_OK) == 0;
		free(p);
		if (yes)
			return true;
	}
	if (menv_env_needs_recovery(prefix) || menv_env_intent_pending(prefix))
		return true;
	/* or it holds at least one package record: a regular file of conda-meta/ that reads as
	 * a PrefixRecord (a JSON object with string name, version and build). A name ending in
	 * .json is not enough: `{}`, a folder, a FIFO or a dangling link in conda-meta/ of a home
	 * folder made `env remove -p ~` delete it. */
	char *meta = menv_xasprintf("%s/conda-meta", prefix);
	DIR *d = opendir(meta);
	struct dirent *de;
	bool recs = false;
	while (d && !recs && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l <= 5 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		char *p = menv_xasprintf("%s/%s", meta, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (64 << 20)) {
			json_t *r = json_load_file(p, 0, NULL);
			recs = json_is_object(r) && json_is_string(json_object_get(r, "name")) &&
			       json_is_string(json_object_get(r, "version")) &&
			       json_is_string(json_object_get(r, "build"));
			json_decref(r);
		}
		free(p);
	}
	if (d)
		closedir(d);
	free(meta);
	return recs;
}

int menv_txn_prepare(struct menv_txn *t, struct menv_error *err)
{
	enum menv_txn_kind k = t->o.kind;
	int rc = 0;

	t->plan.solved = true;
	/* a rename --force killed after it set this prefix aside: put back (or finished) first */
	if (!menv_txn_is_create(k) && !t->o.dry_run && menv_env_replaced_pending(t->o.prefix) &&
	    (rc = menv_txn_recover(t->o.prefix, &t->o.cb, err)))
		return rc;
	if (!menv_txn_is_create(k)) {
		/* (the root prefix and the config's folders are refused in plan_change) */
		struct menv_error ign = {0};
		if (k == MENV_TXN_REMOVE && t->o.all && !removable_env(t->o.prefix) &&
		    !menv_env_check_not_config_dir(t->o.cfg, t->o.prefix, &ign))
			return menv_error_set(err, MENV_ENOTFOUND,
			                      "'%s' is not a conda environment (no "
			                      "conda-meta/history): nothing was removed",
			                      t->o.prefix);
		/* hold the prefix lock from reading the installed records until the change is
		 * applied: a plan made from records another process is changing would break the
		 * environment */
		if (!t->o.dry_run) {
			bool recovering = false;
			if (!t->o.locked)
				rc = menv_env_lock(t->o.prefix, t->o.no_wait, t->o.cb.event,
				                   t->o.cb.ud, &t->lock_fd, err);
			if (!rc) {
				recovering = true;
				rc = recover_locked(t->o.prefix, &t->o.cb, err);
			}
			if (rc == MENV_ENOTFOUND && recovering && k == MENV_TXN_REMOVE &&
			    t->o.all && access(t->o.prefix, F_OK) < 0) {
				/* an interrupted removal of this environment, finished here: what was
				 * asked is done (one that another process renamed or removed while
				 * this one waited is not this command's success) */
				*err = (struct menv_error){0};
				t->plan.kind = k;
				t->plan.prefix = t->o.prefix;
				t->plan.pkgs_dir = t->o.cfg->pkgs_dir;
				t->plan.cfg = t->o.cfg;
				t->plan.remove_env = true;
				t->plan.finished_removal = true;
				t->plan.pip = &t->pip;
				t->prepared = true;
				return 0;
			}
			if (rc)
				return rc;
		}
		if (k == MENV_TXN_REMOVE && t->o.all) {
			/* removing the whole environment works whatever its records hold: one that
			 * cannot be read is named, and its files go with the prefix */
			struct menv_strvec skipped = MENV_STRVEC_INIT;
			rc = menv_prefix_records_load_readable(t->o.prefix, &t->inst, &t->ninst,
			                                       &skipped, err);
			for (size_t i = 0; !rc && i < skipped.n; i++)
				emit(t, MENV_ENV_WARNING,
				     "%s: not a readable package record: its package's files are "
				     "removed with the environment",
				     skipped.v[i]);
			menv_strvec_clear(&skipped);
		} else {
			rc = menv_prefix_records_load(t->o.prefix, &t->inst, &t->ninst, err);
		}
		if (rc)
			return rc;
		t->instj = menv_xcalloc(t->ninst + 1, sizeof(*t->instj));
		for (size_t i = 0; i < t->ninst; i++)
			t->instj[i] = t->inst[i].json;
	}
	if (menv_txn_is_lock(k))
		rc = plan_lock(t, err);
	else if (k == MENV_TXN_CREATE)
		rc = plan_create(t, err);
	else
		rc = plan_change(t, err);
	if (rc)
		return rc;
	/* python to another minor version: the noarch python packages that stay follow it */
	if (!menv_txn_is_create(k) && !t->plan.remove_env)
		menv_plan_relink_noarch_python(t->solver, t->inst, t->ninst, &t->link, &t->nlink,
		                               &t->unlink, &t->nunlink, &t->relinked);
	/* the pip step of an environment file */
	const struct menv_envfile *ef = t->o.envfile;
	for (size_t i = 0;
	     ef && (k == MENV_TXN_CREATE || k == MENV_TXN_ENV_UPDATE) && i < ef->pip.n; i++)
		menv_strvec_push(&t->pip, ef->pip.v[i]);
	/* conda's link and unlink order; a lock's: dependencies first, then the lock's order
	 * (plan_lock) */
	if (!menv_txn_is_lock(k) && !menv_txn_is_create(k))
		menv_plan_conda_order(t->inst, t->ninst, t->link, t->nlink, t->unlink, t->nunlink);
	else if (!menv_txn_is_lock(k))
		menv_records_conda_order(t->link, t->nlink);
	t->plan.kind = k;
	t->plan.prefix = t->o.prefix;
	t->plan.pkgs_dir = t->o.cfg->pkgs_dir;
	t->plan.cfg = t->o.cfg;
	t->plan.link = t->link;
	t->plan.nlink = t->nlink;
	t->cached = menv_xcalloc(t->nlink + 1, sizeof(*t->cached));
	t->here = menv_xcalloc(t->nlink + 1, sizeof(*t->here));
	menv_pkgcache_has_each(t->o.cfg->pkgs_dir, &t->o.cfg->pkgs_dirs, t->link, t->nlink,
	                       menv_txn_is_lock(k), t->cached, t->here);
	t->plan.cached = t->cached;
	if (menv_txn_is_lock(k) &&
	    (rc = menv_lockrecs_check_cache(t->o.cfg->pkgs_dir, &t->o.cfg->pkgs_dirs, &t->lr,
	                                    t->link, t->cached, t->nlink, err)))
		return rc;
	if (menv_txn_is_lock(
	            k)) /* a lock without sizes: the servers say what the fetch will download */
		menv_lockrecs_sizes(t->o.cfg, t->o.channels, t->link, t->cached, t->nlink);
	classify(t);
	t->plan.unlink = t->unlink;
	t->plan.nunlink = t->nunlink;
	t->plan.pip = &t->pip;
	t->prepared = true;
	return 0;
}

const struct menv_txn_plan *menv_txn_plan(const struct menv_txn *t)
{
	return &t->plan;
}

json_t *menv_txn_problems_json(const struct menv_txn *t)
{
	return t->solver ? menv_solver_problems_json(t->solver) : NULL;
}

const char *menv_txn_problems(const struct menv_txn *t)
{
	return t->solver ? menv_solver_problems(t->solver) : NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* 3. Fetch and verify                                                                       */

/* A package-cache lock is held by another process: the front end says so once. */
static void waiting(void *ud, const char *msg)
{
	emit(ud, MENV_ENV_CACHE_WAIT, "%s", msg);
}

/* None of pkgs_dirs can be written (conda's NoWritablePkgsDirError): the locks and any new
 * package have nowhere to go. One line naming them. */
static int no_writable_cache(const struct menv_config *cfg, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int rc;

	for (size_t i = 0; i < cfg->pkgs_dirs.n; i++)
		menv_buf_addf(&b, "%s'%s'", i ? ", " : "", cfg->pkgs_dirs.v[i]);
	rc = menv_error_set(err, MENV_EIO,
	                    "no writable package cache: pkgs_dirs %s %s read-only (or cannot be "
	                    "created)",
	                    b.buf, cfg->pkgs_dirs.n == 1 ? "is" : "are");
	menv_buf_release(&b);
	return rc;
}

static int fetch(struct menv_txn *t, struct menv_error *err)
{
	const struct menv_config *cfg = t->o.cfg;
	struct menv_fetch_opts fo;
	struct menv_record **recs = menv_xcalloc(t->nlink + 1, sizeof(*recs));
	struct menv_channel **creds = NULL; /* a lock's URLs get their channel's credentials */
	size_t ncreds = 0;
	int rc;

	menv_fetch_opts_from_config(&fo, cfg);
	menv_channel_credentials(cfg, t->o.channels, t->o.envfile ? &t->o.envfile->channels : NULL,
	                         &creds, &ncreds);
	fo.creds = (const struct menv_channel *const *)creds;
	fo.ncreds = ncreds;
	fo.cancel = t->o.cancel;
	fo.progress = t->o.cb.progress;
	fo.progress_ud = t->o.cb.ud;
	fo.lock_waiting = waiting;
	fo.lock_waiting_ud = t;
	fo.intact = t->here;
	/* every hash a lock gives must be the package's (conda checks only the sha256) */
	fo.all_hashes = menv_txn_is_lock(t->o.kind);
	fo.lock_records = menv_txn_is_lock(t->o.kind);
	for (size_t i = 0; i < t->nlink; i++)
		recs[i] = (struct menv_record *)t->link[i];
	emit(t, MENV_ENV_STATUS, "Fetching packages into %s", cfg->pkgs_dir);
	if (menv_txn_is_lock(t->o.kind))
		menv_lockrecs_snapshot(cfg->pkgs_dir, &cfg->pkgs_dirs, &t->lr);
	rc = menv_pkgcache_fetch_opts(cfg->pkgs_dir, recs, t->nlink, &fo, t->o.cb.fetch, t->o.cb.ud,
	                              err);
	free(recs);
	menv_channels_free(creds, ncreds);
	if (rc && menv_txn_is_lock(t->o.kind))
		menv_lockrecs_fetch_error(&t->lr, err);
	/* records from a lock are completed from the packages' own info/ (the relinked noarch
	 * records made from PrefixRecords are complete already) */
	if (!rc && menv_txn_is_lock(t->o.kind))
		rc = menv_lockrecs_complete(cfg->pkgs_dir, &cfg->pkgs_dirs, &t->lr, err);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* 4. Link and unlink under the journal                                                      */

static int link_unlink(struct menv_txn *t, struct menv_error *err)
{
	struct menv_strvec requested = MENV_STRVEC_INIT;
	const struct menv_envfile *ef = t->o.envfile;
	enum menv_txn_kind k = t->o.kind;
	int rc;

	/* what history records as asked for: the specs, or a lock's exact records */
	if (menv_txn_is_lock(k))
		for (size_t i = 0; i < t->nlink; i++)
			menv_strvec_push_owned(
			        &requested, menv_xasprintf("%s==%s=%s", t->link[i]->name,
			                                   t->link[i]->version, t->link[i]->build));
	else
		for (size_t i = 0; i < t->nspecs; i++)
			menv_strvec_push_owned(&requested, menv_matchspec_str(t->specs[i]));
	struct menv_install_opts io = {
	        .pkgs_dir = t->o.cfg->pkgs_dir,
	        .requested = &requested,
	        .cmdline = t->o.cmdline ? t->o.cmdline : "menv",
	        .remove_specs = k == MENV_TXN_REMOVE,
	        .cancel = t->o.cancel,
	        .no_wait = t->o.no_wait,
	        .locked = t->lock_fd >= 0 || t->o.locked,
	        .cb = t->o.cb.event,
	        .ud = t->o.cb.ud,
	        .var_names = k == MENV_TXN_CREATE && ef ? &ef->var_names : NULL,
	        .var_values = k == MENV_TXN_CREATE && ef ? &ef->var_values : NULL,
	        .staged = t->o.staged,
	        .staged_ud = t->o.staged_ud,
	        /* a create's pip step, request and registry line follow its link: until they
	         * are done a kill removes it (a rename's clone has its own mark) */
	        .steps_follow = menv_txn_is_create(k) && (t->pip.n || !t->o.staged),
	};
	menv_install_opts_link_settings(t->o.cfg, &io);
	if (!menv_txn_is_create(k)) {
		/* the revision a failed pip step puts the environment back to */
		struct menv_revision *revs = NULL;
		size_t nrevs = 0;
		if (menv_history_load(t->o.prefix, &revs, &nrevs, NULL))
			nrevs = 0;
		menv_history_free(revs, nrevs);
		t->revert_to = nrevs && (t->nlink || t->nunlink) ? (long)nrevs - 1 : -1;
	}
	if (menv_txn_is_create(k))
		rc = menv_env_create(t->o.prefix, t->link, t->nlink, &io, &t->res.stats, err);
	else if (t->plan.remove_env)
		rc = menv_env_remove(t->o.prefix, &io, &t->res.stats, err);
	else if (t->nlink || t->nunlink)
		rc = menv_env_apply(t->o.prefix, t->link, t->nlink, t->unlink, t->nunlink, &io,
		                    &t->res.stats, err);
	else
		rc = 0;
	menv_strvec_clear(&requested);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* 5. pip                                                                                    */

/* The folder of the environment file (relative paths of its pip section resolve there),
 * or NULL. Caller frees. */
static char *envfile_dir(const struct menv_envfile *ef)
{
	char buf[PATH_MAX];
	if (!ef || !ef->path)
		return NULL;
	char *dir = menv_xstrdup(realpath(ef->path, buf) ? buf : ef->path);
	char *slash = strrchr(dir, '/');
	if (!slash) {
		free(dir);
		return NULL;
	}
	*slash = '\0';
	return dir;
}

static int pip_step(struct menv_txn *t, struct menv_error *err)
{
	const struct menv_envfile *ef = t->o.envfile;
	struct menv_pip_request pr = {0};
	char *dir = NULL;
	int rc;

	if (!t->pip.n)
		return 0;
	if (menv_txn_is_lock(t->o.kind)) {
		menv_lock_pip_request(t->lf, t->o.lock_env, t->pipsel, t->npipsel, &pr);
		emit(t, MENV_ENV_STATUS, "Installing %zu pip package%s (--no-deps%s)", t->npipsel,
		     t->npipsel == 1 ? "" : "s", pr.require_hashes ? ", --require-hashes" : "");
	} else {
		/* the pip section, as conda runs it: a requirements file beside the env file */
		for (size_t i = 0; i < t->pip.n; i++)
			menv_strvec_push(&pr.requirements, t->pip.v[i]);
		dir = envfile_dir(ef);
		pr.cwd = dir;
		emit(t, MENV_ENV_STATUS,
		     "Installing the 'pip:' section (%zu line%s) with the environment's pip",
		     t->pip.n, t->pip.n == 1 ? "" : "s");
	}
	pr.cancel = t->o.cancel;
	pr.quiet = t->o.quiet_pip;
	t->res.pip_lines = t->pip.n;
	struct menv_pip_dist *before = NULL, *after = NULL;
	size_t nbefore = 0, nafter = 0;
	if (menv_pip_list(t->o.prefix, &before, &nbefore, NULL))
		nbefore = 0;
	if (menv_txn_is_create(t->o.kind)) {
		/* the environment appeared marked `.menv-creating` (steps_follow): a kill inside
		 * the step leaves no environment, the next command removes it */
		menv_crash_point();
		rc = menv_pip_install(t->o.prefix, &pr, err);
		menv_crash_point();
		if (rc) {
			/* a new environment whose pip step failed is not left behind */
			menv_pip_rollback_prefix(t->o.prefix);
			if (menv_txn_is_lock(t->o.kind))
				menv_error_prefix(err, "the new environment was removed");
			else
				menv_error_prefix(err,
				                  "the 'pip:' section of '%s' failed and the new "
				                  "environment was removed",
				                  ef && ef->path ? ef->path
				                                 : "the environment file");
		}
	} else {
		const char *src = menv_txn_is_lock(t->o.kind) ? t->o.file : ef ? ef->path : NULL;
		rc = menv_txn_pip_into_env(t->o.cfg, t->o.prefix, &pr, t->revert_to, err);
		if (rc && src)
			menv_error_prefix(err, "%s", src);
	}
	/* what pip installed: the distributions new or changed since before the step */
	if (!rc && menv_pip_list(t->o.prefix, &after, &nafter, NULL) == 0)
		t->res.pip_installed = menv_pip_dists_new(before, nbefore, after, nafter);
	menv_pip_dists_free(before, nbefore);
	menv_pip_dists_free(after, nafter);
	menv_strvec_clear(&pr.requirements);
	menv_strvec_clear(&pr.options);
	free(dir);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* 6. Records: what a new environment was made from, and the registry                        */

static char *abs_path(const char *p)
{
	char buf[PATH_MAX];
	return menv_xstrdup(realpath(p, buf) ? buf : p);
}

/* conda-meta/.menv-request of a new environment (export --from-history, re-creating its pip
 * part). */
static void write_request(struct menv_txn *t)
{
	const struct menv_envfile *ef = t->o.envfile;
	json_t *req = json_object(), *ch = json_array(), *sp = json_array();

	if (menv_txn_is_lock(t->o.kind)) {
		char *src = abs_path(t->o.file);
		json_object_set_new(req, "source", json_string(src));
		free(src);
		json_object_set_new(req, "lockfile", json_string(t->plan.lock_format));
		for (size_t i = 0; i < t->lf->channels.n; i++)
			json_array_append_new(ch, json_string(t->lf->channels.v[i]));
		json_object_set_new(req, "channels", ch);
		json_object_set_new(req, "specs", sp);
		json_object_set_new(req, "pip_options",
		                    menv_lock_pip_options_json(t->lf, t->o.lock_env));
		menv_env_request_write(t->o.prefix, req);
		json_decref(req);
		return;
	}
	json_t *pip = json_array(), *popts = json_array();
	for (size_t i = 0; t->o.channels && i < t->o.channels->n; i++)
		json_array_append_new(ch, json_string(t->o.channels->v[i]));
	for (size_t i = 0; ef && i < ef->channels.n; i++)
		json_array_append_new(ch, json_string(ef->channels.v[i]));
	for (size_t i = 0; i < t->spec_strs.n; i++)
		json_array_append_new(sp, json_string(t->spec_strs.v[i]));
	for (size_t i = 0; ef && i < ef->pip.n; i++) {
		json_array_append_new(pip, json_string(ef->pip.v[i]));
		/* where packages come from and how pip builds them travel with an export
		 * (without credentials) */
		if (menv_pip_source_option(ef->pip.v[i]) || menv_pip_cli_option(ef->pip.v[i])) {
			char *o = menv_pip_option_strip_auth(ef->pip.v[i]);
			json_array_append_new(popts, json_string(o));
			free(o);
		}
	}
	if (ef && ef->path) {
		char *src = abs_path(ef->path);
		json_object_set_new(req, "source", json_string(src));
		free(src);
	}
	json_object_set_new(req, "channels", ch);
	json_object_set_new(req, "specs", sp);
	json_object_set_new(req, "pip", pip);
	json_object_set_new(req, "pip_options", popts);
	json_object_set_new(req, "has_pip_section", json_boolean(ef && ef->has_pip_section));
	menv_env_request_write(t->o.prefix, req);
	json_decref(req);
}

/* ~/.conda/environments.txt, as conda does: a failure is a warning, never a failed command. */
static void registry(struct menv_txn *t, bool add)
{
	struct menv_error e = {0};
	if (!(add ? menv_envreg_add(t->o.prefix, &e) : menv_envreg_remove(t->o.prefix, &e)))
		return;
	emit(t, MENV_ENV_WARNING, "'%s' was not %s the environment registry: %s", t->o.prefix,
	     add ? "added to" : "removed from", e.msg[0] ? e.msg : menv_error_name(e.code));
}

/* Test hook: sleep `name`'s seconds (envs.h lists the hooks). */
static void test_pause(const char *name)
{
	const char *v = getenv(name);
	if (v && atoi(v) > 0)
		sleep((unsigned)atoi(v));
}

int menv_txn_commit(struct menv_txn *t, struct menv_error *err)
{
	int rc;

	if (!t->prepared)
		return menv_error_set(err, MENV_EUSAGE, "commit of a transaction not prepared");
	if (t->o.dry_run || t->committed || t->plan.finished_removal)
		return 0;
	bool empty =
	        !t->nlink && !t->nunlink && !menv_txn_is_create(t->o.kind) && !t->plan.remove_env;
	if (empty && !t->pip.n)
		return 0;
	if (!empty && t->o.cb.confirm && !t->o.cb.confirm(t->o.cb.ud, &t->plan))
		return menv_error_set(err, MENV_EINTR, "stopped: nothing was changed");
	/* 3. every download, extraction and hash check before the first unlink (BR-032); the
	 * cache's users lock keeps `menv clean` away until the packages are linked */
	int users = -1;
	if (t->nlink && !t->o.cfg->pkgs_dir_writable)
		return no_writable_cache(t->o.cfg, err);
	if (t->nlink) {
		rc = menv_pkgcache_use(t->o.cfg->pkgs_dir, false, t->o.cancel, waiting, t, &users,
		                       err);
		if (!rc)
			rc = fetch(t, err);
		if (rc) {
			menv_pkgcache_unuse(users);
			return rc;
		}
		test_pause("MENV_TEST_PAUSE_BEFORE_LINK");
	}
	/* 4. one journaled change */
	rc = link_unlink(t, err);
	/* a new environment is not listed (so `clean` would not see its packages as used)
	 * until its last step: it keeps the cache's users lock until then */
	bool marked = menv_txn_is_create(t->o.kind) && (t->pip.n || !t->o.staged);
	if (rc || !marked)
		menv_pkgcache_unuse(users);
	/* 5. pip, in the final prefix (its scripts must name it) */
	if (!rc && !t->plan.remove_env)
		rc = pip_step(t, err);
	if (rc) {
		if (marked)
			menv_pkgcache_unuse(users);
		return rc;
	}
	/* 6. records; a new environment is complete (its mark dropped) once they are written */
	if (menv_txn_is_create(t->o.kind))
		write_request(t);
	if (menv_txn_is_create(t->o.kind) || t->plan.remove_env)
		registry(t, !t->plan.remove_env);
	if (marked) {
		menv_crash_point();
		menv_intent_creating(t->o.prefix, false, NULL);
		menv_pkgcache_unuse(users);
	}
	t->committed = true;
	/* a Ctrl-C past the commit point (link_unlink's) let the change finish: said, 130; a
	 * clone staged for rename is a step before rename's own commit point: rename says it */
	return t->o.staged ? 0
	                   : menv_intent_late_cancel(
	                             t->nlink && !t->nunlink   ? "its packages were linked"
	                             : !t->nlink && t->nunlink ? "its packages were unlinked"
	                                                       : "its packages were changed",
	                             menv_txn_is_create(t->o.kind) ? "create"
	                             : t->plan.remove_env          ? "removal"
	                                                           : "change",
	                             t->o.prefix, err);
}

const struct menv_txn_result *menv_txn_result(const struct menv_txn *t)
{
	return &t->res;
}

/* ---------------------------------------------------------------------------------------- */

/* Sanitizer builds free everything at exit too: LeakSanitizer then reports any other leak. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define EXIT_FREES
#endif
#endif
#if defined(MENV_SANITIZED) || defined(__SANITIZE_ADDRESS__)
#define EXIT_FREES
#endif

void menv_txn_exit(struct menv_txn *t)
{
#ifdef EXIT_FREES
	menv_txn_free(t);
#else
	if (!t)
		return;
	menv_env_unlock(t->lock_fd);
	menv_test_gate("MENV_TEST_GATE_TXN_FREE");
#endif
}

void menv_txn_free(struct menv_txn *t)
{
	if (!t)
		return;
	menv_env_unlock(t->lock_fd);
	menv_test_gate("MENV_TEST_GATE_TXN_FREE"); /* a test's Ctrl-C past the last check */
	free(t->link);
	free(t->cached);
	free(t->here);
	free(t->changes);
	free(t->unlink);
	menv_owned_recs_release(&t->owned);
	menv_owned_recs_release(&t->relinked);
	menv_solver_free(t->solver);
	menv_channel_set_release(&t->ch);
	for (size_t i = 0; i < t->nspecs; i++)
		menv_matchspec_free(t->specs[i]);
	free(t->specs);
	for (size_t i = 0; i < t->nhist; i++)
		menv_matchspec_free(t->hist[i]);
	free(t->hist);
	free(t->instj);
	menv_prefix_records_free(t->inst, t->ninst);
	menv_strvec_clear(&t->spec_strs);
	menv_strvec_clear(&t->pip);
	free(t->sel);
	free(t->pipsel);
	menv_lockrecs_release(&t->lr);
	menv_lockfile_free(t->lf);
	free(t);
}

bool menv_path_in_use(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool used = false;

	if (!d)
		return access(path, F_OK) == 0;
	while (!used && (de = readdir(d)))
		used = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return used;
}
