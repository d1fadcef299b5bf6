/*
 * request.c - a solve request (install, update, remove specs and conda's update modifiers)
 * as libsolv jobs: which solvables a spec matches (including the keys libsolv's reader does
 * not know), locks and favours for what stays, relaxation when the first attempt fails, and
 * libsolv's result as an ordered menv_transaction.
 */
#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#include <solv/bitmap.h>
#include <solv/conda.h>
#include <solv/selection.h>
#include <solv/solver.h>
#include <solv/transaction.h>

#include "internal.h"

/* conda's track_features match: the same set of features, whatever their order and
 * separators (`a,b` = `b a`); the record's value may be a string or a list. */
static bool same_features(const char *want, json_t *have)
{
	json_t *a = json_object(), *b = json_object(), *w = json_string_nocheck(want);
	menv_solv_add_features(w, a);
	menv_solv_add_features(have, b);
	bool eq = json_equal(a, b);
	json_decref(w);
	json_decref(a);
	json_decref(b);
	return eq;
}

/* Does record r satisfy the keys of ms that libsolv's conda reader does not evaluate? */
bool menv_solv_extra_keys_match(const struct menv_matchspec *ms, const struct menv_record *r)
{
	if (!r)
		return false;
	if (ms->channel && (!r->channel || strcmp(ms->channel, r->channel->base_url)))
		return false;
	if (ms->subdir && (!r->subdir || strcmp(ms->subdir, r->subdir)))
		return false;
	if (ms->md5 && (!r->md5 || strcasecmp(ms->md5, r->md5)))
		return false;
	if (ms->sha256 && (!r->sha256 || strcasecmp(ms->sha256, r->sha256)))
		return false;
	if (ms->fn && strcmp(ms->fn, r->fn))
		return false;
	if (ms->build_number && strcmp(ms->build_number, "*") &&
	    !menv_matchspec_build_number_ok(ms->build_number, r->build_number))
		return false;
	if (ms->track_features &&
	    !same_features(ms->track_features, json_object_get(r->json, "track_features")))
		return false;
	return true;
}

/* Does solvable p match the version and build of ms when its name is taken as `name`? */
static bool provides_match(struct menv_solver *s, Id p, const struct menv_matchspec *ms,
                           const char *name)
{
	Pool *pool = s->pool;
	struct menv_matchspec m = *ms;
	Id dep, q, qq;
	char *str;

	m.name = (char *)name;
	str = menv_matchspec_str(&m);
	dep = menv_solv_matchspec(pool, str);
	free(str);
	if (!dep)
		return false;
	FOR_PROVIDES(q, qq, dep)
	{
		if (q == p)
			return true;
	}
	return false;
}

static bool needs_candidates(const struct menv_matchspec *ms)
{
	return ms->channel || ms->subdir || ms->md5 || ms->sha256 || ms->fn || ms->build_number ||
	       ms->track_features || (ms->name && strchr(ms->name, '*'));
}

/* Does a virtual package (name, version, build as added) match the spec's version and build? */
static bool virtual_matches(Pool *pool, Solvable *sv, const struct menv_matchspec *ms)
{
	const char *flavor = solvable_lookup_str(sv, SOLVABLE_BUILDFLAVOR);
	json_t *j = json_pack("{s:s,s:s,s:s,s:i}", "name", pool_id2str(pool, sv->name), "version",
	                      pool_id2str(pool, sv->evr), "build", flavor ? flavor : "0",
	                      "build_number", 0);
	bool ok = j && menv_matchspec_match_json(ms, j);
	json_decref(j);
	return ok;
}

/* Appends the job for one spec (`how` = SOLVER_INSTALL, SOLVER_ERASE or SOLVER_UPDATE). */
static int add_spec_job(struct menv_solver *s, Queue *job, Queue *q, Id how,
                        const struct menv_matchspec *ms, bool must_exist, struct menv_error *err)
{
	Pool *pool = s->pool;
	struct menv_matchspec plain = *ms;
	char *str;
	Id dep, p, pp;
	bool known = false;

	plain.channel = NULL;
	if ((!ms->name || !strcmp(ms->name, "*")) && !ms->vspec && !ms->build && !ms->md5 &&
	    !ms->sha256 && !ms->fn && !ms->url && !ms->build_number && !ms->track_features &&
	    !ms->license && !ms->license_family && !ms->subdir)
		return menv_error_set(err, MENV_EPARSE, "the spec '%s' would match every package",
		                      ms->name ? ms->name : "");
	if (ms->name && strchr(ms->name, '*'))
		plain.name = NULL;
	str = menv_matchspec_str(&plain);
	dep = menv_solv_matchspec(pool, str);
	free(str);
	if (!dep)
		return menv_error_set(err, MENV_EPARSE, "cannot read match spec for '%s'",
		                      ms->name ? ms->name : "*");
	if (ms->name && !strchr(ms->name, '*')) {
		Id nameid = pool_str2id(pool, ms->name, 0);
		if (nameid)
			FOR_PROVIDES(p, pp, nameid) known = true;
		if (!known && must_exist) {
			char *full = menv_matchspec_str_full(ms);
			int rc = menv_error_set(err, MENV_ENOTFOUND,
			                        "package '%s' is not available from the current "
			                        "channels",
			                        full);
			free(full);
			return rc;
		}
		if (!known)
			return menv_error_set(err, MENV_ENOTFOUND, "package '%s' is not installed",
			                      ms->name);
	}
	/* menv's MatchSpec decides which packages a requested version or build means (CEP-29,
	 * conda's answers); libsolv's conda matcher only sees the dependencies inside repodata */
	bool menv_decides = how != SOLVER_ERASE && (ms->vspec || ms->build);
	if (!needs_candidates(ms) && !menv_decides) {
		queue_push2(job, how | SOLVER_SOLVABLE_PROVIDES, dep);
		return 0;
	}
	queue_empty(q);
	if (ms->name && !strchr(ms->name, '*')) {
		Id nameid = pool_str2id(pool, ms->name, 0);
		FOR_PROVIDES(p, pp, nameid)
		{
			Solvable *sv = pool_id2solvable(pool, p);
			if (sv->name != nameid)
				continue;
			if (sv->repo == s->virt) {
				/* an installed package keeps its place when it matches */
				json_t *inst = (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
				if (inst && !ms->channel && menv_matchspec_match_json(ms, inst))
					queue_push(q, p);
				else if (!inst && !ms->channel && virtual_matches(pool, sv, ms))
					queue_push(q, p); /* `__glibc >=2.17` */
				continue;
			}
			const struct menv_record *r = menv_solv_record_of(s, p);
			if (menv_solv_extra_keys_match(ms, r) &&
			    menv_matchspec_match_json(ms, r->json))
				queue_push(q, p);
		}
	}
	for (p = 2; !(ms->name && !strchr(ms->name, '*')) && p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || sv->repo == s->virt)
			continue;
		const char *nm = pool_id2str(pool, sv->name);
		if (ms->name && fnmatch(ms->name, nm, 0))
			continue;
		if (!menv_solv_extra_keys_match(ms, menv_solv_record_of(s, p)))
			continue;
		if ((plain.version || plain.build) && !provides_match(s, p, &plain, nm))
			continue;
		queue_push(q, p);
	}
	if (!q->count) {
		/* strict channel priority may be what hides it (pool->considered) */
		char *why = NULL;
		Id nameid = ms->name ? pool_str2id(pool, ms->name, 0) : 0;
		for (p = 2; s->considered && nameid && !why && p < pool->nsolvables; p++) {
			Solvable *sv = pool_id2solvable(pool, p);
			if (sv->name != nameid || !sv->repo || sv->repo == s->virt ||
			    MAPTST(s->considered, p))
				continue;
			const struct menv_record *r = menv_solv_record_of(s, p);
			if (r && menv_solv_extra_keys_match(ms, r) &&
			    menv_matchspec_match_json(ms, r->json))
				why = menv_xasprintf(
				        " (%s %s of channel '%s' matches, but strict channel "
				        "priority takes '%s' from a higher-priority channel "
				        "only; --no-channel-priority allows it)",
				        r->name, r->version, r->channel ? r->channel->name : "?",
				        ms->name);
		}
		char *full = menv_matchspec_str_full(ms);
		if (!why && known && s->unmatched_ok) {
			/* nothing provides this name: libsolv reports the job as unsatisfiable */
			s->unmatched = menv_xrealloc(s->unmatched,
			                             (s->nunmatched + 1) * sizeof(*s->unmatched));
			s->unmatched[s->nunmatched++] = ms;
			queue_push2(job, how | SOLVER_SOLVABLE_NAME, pool_str2id(pool, full, 1));
			free(full);
			return 0;
		}
		int rc = menv_error_set(err, MENV_ENOTFOUND,
		                        "no package matches '%s' in the current channels%s", full,
		                        why ? why : "");
		free(full);
		free(why);
		return rc;
	}
	queue_push2(job, how | SOLVER_SOLVABLE_ONE_OF, pool_queuetowhatprovides(pool, q));
	return 0;
}

int menv_solver_solve(struct menv_solver *s, struct menv_matchspec *const *specs, size_t n,
                      const struct menv_record ***out, size_t *n_out, struct menv_error *err)
{
	struct menv_solve_request req = {.install = specs, .ninstall = n};
	struct menv_transaction t;
	int rc;

	*out = NULL;
	*n_out = 0;
	rc = menv_solver_solve_request(s, &req, &t, err);
	if (rc)
		return rc;
	*out = t.link;
	*n_out = t.nlink;
	free(t.unlink);
	return 0;
}

void menv_transaction_release(struct menv_transaction *t)
{
	free(t->link);
	free(t->unlink);
	memset(t, 0, sizeof(*t));
}

/* libsolv may replace an installed package by the channel's copy of the very same package
 * (an update job prefers the repo solvable): an unlink and a link of one package (name,
 * version, build, channel and subdir) are no change, as conda sees it, and are dropped. */
static const char *json_str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

static void drop_same_package(struct menv_transaction *t)
{
	size_t nl = 0;
	for (size_t i = 0; i < t->nlink; i++) {
		const struct menv_record *r = t->link[i];
		bool same = false;
		for (size_t k = 0; k < t->nunlink && !same; k++) {
			json_t *u = t->unlink[k];
			const char *ch = json_string_value(json_object_get(u, "channel"));
			same = !strcmp(json_str(u, "name"), r->name) &&
			       !strcmp(json_str(u, "version"), r->version) &&
			       !strcmp(json_str(u, "build"), r->build) && ch && r->channel_url &&
			       !strcmp(ch, r->channel_url);
			if (same) {
				memmove(&t->unlink[k], &t->unlink[k + 1],
				        (t->nunlink - k - 1) * sizeof(*t->unlink));
				t->nunlink--;
			}
		}
		if (!same)
			t->link[nl++] = r;
	}
	t->nlink = nl;
}

/* ---------------------------------------------------------------------------------------- */
/* Changing an existing environment: conda's update modifiers as libsolv jobs                */

static json_t *installed_rec(const struct menv_solver *s, Id p)
{
	return (size_t)p < s->inst_alloc ? s->inst_by_id[p] : NULL;
}

static bool has_name(const struct menv_strvec *v, const char *name)
{
	for (size_t i = 0; name && i < v->n; i++)
		if (!strcmp(v->v[i], name))
			return true;
	return false;
}

/* What one solve of a request keeps and frees: the names the request changes, the names it
 * removes, update_deps' dependency names, and the installed solvables that relaxation freed
 * from their lock. */
struct plan {
	struct menv_strvec explicit_names; /* install and update specs */
	struct menv_strvec removed;        /* remove specs */
	struct menv_strvec closure;        /* update_deps: dependencies of explicit_names */
	Map unlocked;                      /* installed solvables no longer locked */
	bool all_unlocked;                 /* every installed solvable only favoured */
	bool no_best;     /* the last resort: explicit names need not reach their best version */
	Queue held;       /* job index of each spec the request did not name but holds */
	Queue featjobs;   /* conda's legacy feature metric as DISFAVOR jobs (features.c) */
	Map featfree;     /* installed solvables the feature metric relinks: not locked */
	bool remove_feat; /* featjobs: a remove's feature count (they place every installed one) */
	Queue relink;     /* string Ids of the names the remove's feature count relinks */
	struct menv_strvec held_text; /* what each of them is, for the problem text */
};

/* conda's aggressive_update_packages (ca-certificates, certifi, openssl by default): an
 * installed one updates on every change, whatever the history asked for (conda's classic
 * Solver._add_specs; never offline). */
static bool aggressive(const struct menv_solve_request *req, const char *name)
{
	return req->aggressive && req->aggressive_update && has_name(req->aggressive, name);
}

/* conda's classic Solver._add_specs gives a target (keep it unless the request needs it
 * changed) only to the names of the history, aggressive_update_packages, a few names it
 * always keeps (anaconda, conda, conda-build, python.app, console_shortcut,
 * powershell_shortcut) and pip's records. With a history, every other installed package has
 * no spec at all: it floats, and Resolve.solve maximizes its version after the targets'
 * update count (update_flask: werkzeug 0.9 -> 0.12.2 beside flask). Without a history every
 * installed package is targeted. That is update_specs (`update`, `install --update-specs`);
 * a bare `conda install` first solves with update_modifier freeze_installed, which keeps
 * them, as the locks here do. */
static bool floats(const struct menv_solve_request *req, json_t *r)
{
	static const char *const kept[] = {"anaconda",         "conda",
	                                   "conda-build",      "python.app",
	                                   "console_shortcut", "powershell_shortcut"};
	const char *name = json_str(r, "name");
	if (!(req->update_specs || req->nupdate) || !req->nhistory || req->freeze_installed ||
	    req->no_update_deps || !name)
		return false;
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++)
		if (!strcmp(name, kept[i]))
			return false;
	const char *subdir = json_str(r, "subdir");
	if (subdir && !strcmp(subdir, "pypi"))
		return false;
	for (size_t i = 0; i < req->nhistory; i++)
		if (req->history[i]->name && !strcmp(req->history[i]->name, name))
			return false;
	return true;
}

/* conda's business rule: python stays within its installed minor version unless the user asks
 * for python (or the history holds a python spec with a version); freeze_installed keeps the
 * very build. Returns a new spec, or NULL. */
static struct menv_matchspec *
python_pin(struct menv_solver *s, const struct menv_solve_request *req, const struct plan *pl)
{
	Pool *pool = s->pool;
	struct menv_matchspec *ms = NULL;
	bool frozen = req->freeze_installed || req->no_update_deps;

	if (has_name(&pl->explicit_names, "python") || has_name(&pl->removed, "python"))
		return NULL;
	for (size_t i = 0; !req->update_all && i < req->nhistory; i++) {
		const struct menv_matchspec *h = req->history[i];
		if (h->name && !strcmp(h->name, "python") && (h->vspec || h->version) &&
		    !has_name(&pl->closure, "python"))
			return NULL;
	}
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = installed_rec(s, p);
		if (!r || pool_id2solvable(pool, p)->repo != s->virt)
			continue;
		const char *name = json_string_value(json_object_get(r, "name"));
		const char *ver = json_string_value(json_object_get(r, "version"));
		const char *build = json_string_value(json_object_get(r, "build"));
		if (!name || strcmp(name, "python") || !ver)
			continue;
		char *str;
		if (frozen && build) {
			str = menv_xasprintf("python==%s=%s", ver, build);
		} else {
			/* major.minor.* */
			const char *dot = strchr(ver, '.');
			const char *dot2 = dot ? strchr(dot + 1, '.') : NULL;
			size_t n = dot2 ? (size_t)(dot2 - ver) : strlen(ver);
			str = menv_xasprintf("python %.*s.*", (int)n, ver);
		}
		if (menv_matchspec_parse(str, &ms, NULL))
			ms = NULL;
		free(str);
		break;
	}
	return ms;
}

/* The jobs of one attempt. Installed packages the request does not name are locked (conda's
 * update_specs: they stay) unless relaxation freed them, then only favoured. */
static int request_jobs(struct menv_solver *s, const struct menv_solve_request *req,
                        struct plan *pl, Queue *job, Queue *q, struct menv_error *err)
{
	Pool *pool = s->pool;
	bool removing = req->nremove > 0;
	int rc = 0;

	queue_empty(job);
	queue_empty(&pl->held);
	menv_strvec_clear(&pl->held_text);
	/* every requested name no channel has, in one error (not the first only) */
	struct menv_buf missing = MENV_BUF_INIT;
	size_t nmissing = 0;
	for (size_t i = 0; i < req->ninstall; i++) {
		const struct menv_matchspec *ms = req->install[i];
		Id nameid = ms->name && !strchr(ms->name, '*') ? pool_str2id(pool, ms->name, 0) : 1;
		Id p, pp;
		bool known = false;
		if (nameid)
			FOR_PROVIDES(p, pp, nameid) known = true;
		if (!known) {
			char *full = menv_matchspec_str_full(ms);
			menv_buf_addf(&missing, "%s'%s'", nmissing++ ? ", " : "", full);
			free(full);
		}
	}
	if (nmissing > 1) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "packages %s are not available from the current channels",
		                    missing.buf);
		menv_buf_release(&missing);
		return rc;
	}
	menv_buf_release(&missing);
	s->nunmatched = 0;
	for (size_t i = 0; i < req->ninstall && !rc; i++) {
		const struct menv_matchspec *ms = req->install[i];
		s->unmatched_ok = true;
		rc = add_spec_job(s, job, q, SOLVER_INSTALL, ms, true, err);
		s->unmatched_ok = false;
		/* `install X` of an installed X: the newest X the other packages allow */
		for (Id p = s->virt->start; !rc && ms->name && !req->freeze_installed &&
		                            !req->no_update_deps && p < s->virt->end;
		     p++) {
			json_t *r = installed_rec(s, p);
			if (r && !strcmp(json_str(r, "name"), ms->name))
				queue_push2(job,
				            SOLVER_UPDATE | SOLVER_SOLVABLE |
				                    (pl->no_best ? 0 : SOLVER_FORCEBEST),
				            p);
		}
	}
	/* `update numpy<=1.1`: libsolv's update job ignores the constraint, so a constrained
	 * update is an install of the constrained spec (which may move the package either way) */
	for (size_t i = 0; i < req->nupdate && !rc; i++) {
		const struct menv_matchspec *u = req->update[i];
		bool constrained = u->vspec || u->build || u->build_number || u->channel;
		Id best = pl->no_best ? 0 : SOLVER_FORCEBEST;
		rc = add_spec_job(s, job, q, constrained ? SOLVER_INSTALL : SOLVER_UPDATE | best, u,
		                  true, err);
		for (Id p = s->virt->start; !rc && constrained && u->name && p < s->virt->end;
		     p++) {
			json_t *r = installed_rec(s, p);
			if (r && !strcmp(json_str(r, "name"), u->name))
				queue_push2(job, SOLVER_UPDATE | SOLVER_SOLVABLE | best, p);
		}
	}
	/* conda's remove: the package, what needs it, and the dependencies nothing else needs
	 * (libsolv's cleandeps; the names the user asked for stay) */
	for (size_t i = 0; i < req->nremove && !rc; i++)
		rc = add_spec_job(s, job, q, SOLVER_ERASE | SOLVER_CLEANDEPS, req->remove[i], false,
		                  err);
	if (rc)
		return rc;
	if (req->update_all)
		queue_push2(job, SOLVER_UPDATE | SOLVER_SOLVABLE_ALL, 0);
	/* the specs the user asked for before (conda-meta/history) hold, unless this request
	 * names the package; update_all and update_deps keep only the names */
	for (size_t i = 0; i < req->nhistory; i++) {
		const struct menv_matchspec *h = req->history[i];
		if (!h->name || has_name(&pl->explicit_names, h->name) ||
		    has_name(&pl->removed, h->name))
			continue;
		Id nameid = pool_str2id(pool, h->name, 0);
		if (!nameid)
			continue;
		queue_push2(job, SOLVER_USERINSTALLED | SOLVER_SOLVABLE_NAME, nameid);
		bool relinked = false;
		for (int k = 0; removing && pl->remove_feat && k < pl->relink.count; k++)
			relinked = relinked || pl->relink.elements[k] == nameid;
		if (relinked) {
			rc = add_spec_job(s, job, q, SOLVER_INSTALL, h, false, err);
			if (rc)
				return rc;
			continue;
		}
		/* conda strips the history's constraint of an aggressively updated name */
		if (req->update_all || has_name(&pl->closure, h->name) || removing ||
		    aggressive(req, h->name)) {
			if (!removing)
				queue_push2(job, SOLVER_INSTALL | SOLVER_SOLVABLE_NAME, nameid);
			continue;
		}
		struct menv_error herr = {0};
		int at = job->count;
		if (add_spec_job(s, job, q, SOLVER_INSTALL, h, true, &herr)) {
			queue_push2(job, SOLVER_INSTALL | SOLVER_SOLVABLE_NAME, nameid);
		} else {
			char *str = menv_matchspec_str_full(h);
			queue_push(&pl->held, at);
			menv_strvec_push_owned(&pl->held_text,
			                       menv_xasprintf("%s (asked for before, in "
			                                      "conda-meta/history)",
			                                      str));
			free(str);
		}
	}
	for (size_t i = 0; req->aggressive && i < req->aggressive->n; i++) {
		Id nameid = pool_str2id(pool, req->aggressive->v[i], 0);
		if (nameid)
			queue_push2(job, SOLVER_USERINSTALLED | SOLVER_SOLVABLE_NAME, nameid);
	}
	struct menv_matchspec *pin = removing ? NULL : python_pin(s, req, pl);
	if (pin) {
		struct menv_error perr = {0};
		int at = job->count;
		if (!add_spec_job(s, job, q, SOLVER_INSTALL, pin, true, &perr)) {
			char *str = menv_matchspec_str_full(pin);
			queue_push(&pl->held, at);
			menv_strvec_push_owned(
			        &pl->held_text,
			        menv_xasprintf("%s (python keeps its installed minor "
			                       "version unless the request names "
			                       "python)",
			                       str));
			free(str);
		}
		menv_matchspec_free(pin);
	}
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = installed_rec(s, p);
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo != s->virt)
			continue;
		if (!r) {
			/* virtual packages and pins are facts: never removed or replaced */
			queue_push2(job, SOLVER_LOCK | SOLVER_SOLVABLE, p);
			continue;
		}
		const char *name = json_str(r, "name");
		if (has_name(&pl->explicit_names, name) || has_name(&pl->removed, name) || removing)
			continue;
		if (has_name(&pl->closure, name) || aggressive(req, name)) {
			/* conda's aggressive spec is the bare name with no target: Resolve.solve
			 * counts it with the requested specs (specr), whose versions it maximizes
			 * before it minimizes the targets' changes, so it moves a targeted
			 * package (python of the history) rather than stay old. That is
			 * update_specs only: a frozen solve (a bare install's first) pins the
			 * other installed records exactly, so it stays within what they allow */
			bool best = aggressive(req, name) && !pl->no_best &&
			            (req->update_specs || req->nupdate) && !req->freeze_installed &&
			            !req->no_update_deps;
			queue_push2(job,
			            SOLVER_UPDATE | SOLVER_SOLVABLE | (best ? SOLVER_FORCEBEST : 0),
			            p);
			continue;
		}
		if (req->update_all)
			continue;
		if (MAPTST(&pl->featfree, p))
			continue; /* features.c's jobs relink it */
		if (floats(req, r)) {
			/* no target: the newest the targets allow */
			queue_push2(job, SOLVER_UPDATE | SOLVER_SOLVABLE, p);
			continue;
		}
		if (pl->all_unlocked || MAPTST(&pl->unlocked, p)) {
			/* freed: it may change, or go when nothing else works */
			queue_push2(job, SOLVER_FAVOR | SOLVER_SOLVABLE, p);
			queue_push2(job, SOLVER_ALLOWUNINSTALL | SOLVER_SOLVABLE, p);
		} else {
			queue_push2(job, SOLVER_LOCK | SOLVER_SOLVABLE, p);
		}
	}
	/* the requested names' installed records may be replaced or, if need be, removed */
	for (Id p = s->virt->start; p < s->virt->end; p++) {
		json_t *r = installed_rec(s, p);
		if (r && has_name(&pl->explicit_names, json_str(r, "name")))
			queue_push2(job, SOLVER_ALLOWUNINSTALL | SOLVER_SOLVABLE, p);
	}
	/* a remove's first solve over channels: the installed records only, as with none */
	Repo *repo;
	int ri;
	FOR_REPOS(ri, repo)
	if (removing && !pl->remove_feat && repo != s->virt && repo != pool->installed)
		queue_push2(job, SOLVER_LOCK | SOLVER_SOLVABLE_REPO, repo->repoid);
	queue_insertn(job, job->count, pl->featjobs.count, pl->featjobs.elements);
	return 0;
}

/* After a failed attempt: frees the locked installed packages the problems name. Returns how
 * many it freed. */
static int relax(struct menv_solver *s, Solver *solv, struct plan *pl)
{
	Pool *pool = s->pool;
	int freed = 0, np = solver_problem_count(solv);
	Queue rules;

	queue_init(&rules);
	for (Id i = 1; i <= np; i++) {
		queue_empty(&rules);
		solver_findallproblemrules(solv, i, &rules);
		for (int j = 0; j < rules.count; j++) {
			Id source, target, dep;
			Id type = solver_ruleinfo(solv, rules.elements[j], &source, &target, &dep);
			Id p = 0;
			if (type == SOLVER_RULE_JOB && (target & SOLVER_JOBMASK) == SOLVER_LOCK &&
			    (target & SOLVER_SELECTMASK) == SOLVER_SOLVABLE)
				p = dep;
			else if (type != SOLVER_RULE_JOB && source > 0 &&
			         source < pool->nsolvables && installed_rec(s, source))
				p = source;
			if (p > 0 && p < pool->nsolvables && installed_rec(s, p) &&
			    !MAPTST(&pl->unlocked, p)) {
				MAPSET(&pl->unlocked, p);
				freed++;
			}
		}
	}
	queue_free(&rules);
	return freed;
}

/* The specs the environment holds (history, python's minor version) that a problem of the
 * failed solve involves, as "a; b" in out. */
static void held_specs(struct menv_solver *s, Solver *solv, const struct plan *pl,
                       struct menv_buf *out)
{
	Queue rules;
	bool *named = menv_xcalloc((size_t)pl->held.count + 1, sizeof(*named));
	int np = (int)solver_problem_count(solv);

	queue_init(&rules);
	for (Id i = 1; i <= np; i++) {
		queue_empty(&rules);
		solver_findallproblemrules(solv, i, &rules);
		for (int j = 0; j < rules.count; j++) {
			Id source, target, dep;
			if (solver_ruleinfo(solv, rules.elements[j], &source, &target, &dep) !=
			    SOLVER_RULE_JOB)
				continue;
			/* a locked installed package: only --freeze-installed keeps locks to the end */
			json_t *r = (target & SOLVER_JOBMASK) == SOLVER_LOCK &&
			                            (target & SOLVER_SELECTMASK) == SOLVER_SOLVABLE
			                    ? installed_rec(s, dep)
			                    : NULL;
			if (r)
				menv_buf_addf(out, "%sthe installed %s-%s-%s (--freeze-installed)",
				              out->len ? "; " : "", json_str(r, "name"),
				              json_str(r, "version"), json_str(r, "build"));
			for (int k = 0; k < pl->held.count; k++)
				if (pl->held.elements[k] == source && !named[k]) {
					named[k] = true;
					menv_buf_addf(out, "%s%s", out->len ? "; " : "",
					              pl->held_text.v[k]);
				}
		}
	}
	queue_free(&rules);
	free(named);
}

/* What a solve on a pruned pool (prune.c) returns, with no error set, when its answer may not
 * be the full pool's: the request is solved again on the full pool. */
#define NEEDS_FULL 1

/* Does a job ask for the best version (SOLVER_FORCEBEST)? */
static bool has_best_jobs(const Queue *job)
{
	for (int i = 0; i < job->count; i += 2)
		if (job->elements[i] & SOLVER_FORCEBEST)
			return true;
	return false;
}

/* Solves with the installed packages locked, then frees those the problems involve, step
 * by step (conda-libmamba-solver's approach), and last only favours them all. On success
 * *out is the solver (free it); on failure the problems of the last attempt are described.
 * On a pruned pool, NEEDS_FULL when it has best-version jobs or its first attempt fails. */
static int solve_relaxing(struct menv_solver *s, const struct menv_solve_request *req,
                          struct plan *pl, Solver **out, struct menv_error *err)
{
	Pool *pool = s->pool;
	Queue job, q;
	Solver *solv = NULL;
	int rc = 0;
	bool frozen = req->freeze_installed || req->no_update_deps;

	*out = NULL;
	queue_init(&job);
	queue_init(&q);
	for (int round = 0;; round++) {
		/* libsolv's solve has no cancel hook: Ctrl-C is honoured between its rounds */
		if (menv_solv_cancelled(s->cancel)) {
			rc = menv_error_set(err, MENV_EINTR, "solve interrupted");
			break;
		}
		rc = request_jobs(s, req, pl, &job, &q, err);
		if (rc)
			break;
		if (s->pruned && has_best_jobs(&job)) {
			rc = NEEDS_FULL; /* libsolv's best rules rank the builds pruning left out */
			break;
		}
		solv = solver_create(pool);
		/* like conda: installed packages may move either way when the request needs it;
		 * only those the request names or relaxation freed may be removed (all of them
		 * for update_all and a remove, whose dependents go too) */
		solver_set_flag(solv, SOLVER_FLAG_ALLOW_DOWNGRADE, 1);
		solver_set_flag(solv, SOLVER_FLAG_ALLOW_UNINSTALL,
		                req->update_all || req->nremove || pl->all_unlocked);
		if (!solver_solve(solv, &job)) {
			*out = solv;
			break;
		}
		if (s->pruned) {
			/* relaxation and problems name what the full pool holds */
			solver_free(solv);
			solv = NULL;
			rc = NEEDS_FULL;
			break;
		}
		bool again = false;
		/* at most 10 rounds of freeing locks, then the two last resorts all the same */
		if (!frozen) {
			if (round < 10 && !pl->all_unlocked && relax(s, solv, pl))
				again = true;
			else if (!pl->all_unlocked)
				again = pl->all_unlocked = true;
			else if (!pl->no_best)
				again = pl->no_best = true;
		}
		if (again) {
			solver_free(solv);
			solv = NULL;
			continue;
		}
		struct menv_buf line = MENV_BUF_INIT, tree = MENV_BUF_INIT, held = MENV_BUF_INIT;
		bool needs_cuda = false;
		json_decref(s->problems_json);
		s->problems_json = json_array();
		menv_solv_describe_problems(s, solv, req, &line, &tree, s->problems_json,
		                            &needs_cuda);
		held_specs(s, solv, pl, &held);
		menv_solv_conda_display(line.buf);
		menv_solv_conda_display(tree.buf);
		menv_solv_conda_display_json(s->problems_json);
		rc = menv_error_set(
		        err, MENV_EUNSAT, "could not solve for the requested packages: %s%s%s%s",
		        line.buf ? line.buf : "", held.len ? "; the environment holds " : "",
		        held.len ? held.buf : "",
		        needs_cuda && !s->has_cuda
		                ? " (no CUDA driver was found: __cuda is absent; "
		                  "CONDA_OVERRIDE_CUDA=11.8 solves for a GPU machine)"
		                : "");
		menv_buf_release(&held);
		free(s->problems);
		s->problems = menv_buf_detach(&tree);
		menv_buf_release(&line);
		solver_free(solv);
		break;
	}
	queue_free(&q);
	queue_free(&job);
	return rc;
}

/* update_deps: the names the explicit names depend on, directly or not, in the solution. */
static void dependency_closure(struct menv_solver *s, Solver *solv, struct plan *pl)
{
	Pool *pool = s->pool;
	Queue dq;
	Map in;

	queue_init(&dq);
	map_init(&in, pool->nsolvables);
	solver_get_decisionqueue(solv, &dq);
	for (int i = 0; i < dq.count; i++)
		if (dq.elements[i] > 1)
			MAPSET(&in, dq.elements[i]);
	struct menv_strvec todo = MENV_STRVEC_INIT;
	for (size_t i = 0; i < pl->explicit_names.n; i++)
		menv_strvec_push(&todo, pl->explicit_names.v[i]);
	for (size_t t = 0; t < todo.n; t++) {
		Id nameid = pool_str2id(pool, todo.v[t], 0);
		for (Id p = 2; nameid && p < pool->nsolvables; p++) {
			Solvable *sv = pool_id2solvable(pool, p);
			if (!MAPTST(&in, p) || sv->name != nameid || !sv->requires)
				continue;
			for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++) {
				Id q, qq;
				FOR_PROVIDES(q, qq, *dp)
				{
					if (!MAPTST(&in, q))
						continue;
					const char *dn =
					        pool_id2str(pool, pool_id2solvable(pool, q)->name);
					if (!has_name(&todo, dn) && strncmp(dn, "__", 2))
						menv_strvec_push(&todo, dn);
				}
			}
		}
	}
	for (size_t i = 0; i < todo.n; i++)
		if (!has_name(&pl->explicit_names, todo.v[i]))
			menv_strvec_push(&pl->closure, todo.v[i]);
	menv_strvec_clear(&todo);
	map_free(&in);
	queue_free(&dq);
}

/* The channel's record of an installed package, for force_reinstall. */
static const struct menv_record *channel_copy(struct menv_solver *s, json_t *inst)
{
	Pool *pool = s->pool;
	Id nameid = pool_str2id(pool, json_str(inst, "name"), 0);
	for (Id p = 2; nameid && p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->name != nameid || !sv->repo || sv->repo == s->virt)
			continue;
		const struct menv_record *r = menv_solv_record_of(s, p);
		if (r && !strcmp(r->version, json_str(inst, "version")) &&
		    !strcmp(r->build, json_str(inst, "build")))
			return r;
	}
	return NULL;
}

static int by_id(const void *a, const void *b, void *data)
{
	(void)data;
	Id x = *(const Id *)a, y = *(const Id *)b;
	return x < y ? -1 : x > y;
}

/* The solve's transaction. A package to link whose record cannot be read (nested too deep,
 * say: libsolv's reader took it) fails it with MENV_EPARSE naming the record. */
static int transaction_of(struct menv_solver *s, Solver *solv, struct menv_transaction *out,
                          struct menv_error *err)
{
	int rc = 0;

	Pool *pool = s->pool;
	Transaction *trans = solver_create_transaction(solv);

	/* libsolv lists the steps in the order it decided them, and transaction_order breaks its
	 * ties by that order: a pruned solve (prune.c) decides in another order than the full
	 * pool's. In solvable order, the plan is the same for the same answer. */
	solv_sort(trans->steps.elements, (size_t)trans->steps.count, sizeof(Id), by_id, NULL);
	transaction_order(trans, 0);
	out->link = menv_xcalloc((size_t)trans->steps.count + 1, sizeof(*out->link));
	out->unlink = menv_xcalloc((size_t)trans->steps.count + 1, sizeof(*out->unlink));
	for (int i = 0; i < trans->steps.count; i++) {
		Id p = trans->steps.elements[i];
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->repo == s->virt) {
			/* an installed package leaving (erased or replaced) */
			if (installed_rec(s, p) &&
			    transaction_type(trans, p, SOLVER_TRANSACTION_SHOW_ALL) !=
			            SOLVER_TRANSACTION_IGNORE)
				out->unlink[out->nunlink++] = s->inst_by_id[p];
			continue;
		}
		const struct menv_record *r = menv_solv_record_of(s, p);
		if (r)
			out->link[out->nlink++] = r;
		else if (!rc && s->unreadable.code)
			rc = menv_error_set(err, s->unreadable.code, "%s", s->unreadable.msg);
		else if (!rc)
			rc = menv_error_set(err, MENV_EPARSE, "the record of '%s' cannot be read",
			                    pool_solvid2str(pool, p));
	}
	transaction_free(trans);
	return rc;
}

/* no_deps keeps only the explicit names' changes; only_deps drops the explicit names'. */
static void filter_names(struct menv_transaction *t, const struct menv_strvec *names, bool keep)
{
	size_t nl = 0, nu = 0;
	for (size_t i = 0; i < t->nlink; i++)
		if (has_name(names, t->link[i]->name) == keep)
			t->link[nl++] = t->link[i];
	for (size_t i = 0; i < t->nunlink; i++)
		if (has_name(names, json_str(t->unlink[i], "name")) == keep)
			t->unlink[nu++] = t->unlink[i];
	t->nlink = nl;
	t->nunlink = nu;
}

/* The solvables of the solution: installed ones kept and new ones, as a map. */
static void solution_map(Solver *solv, Map *in)
{
	Queue dq;
	queue_init(&dq);
	map_init(in, solv->pool->nsolvables);
	solver_get_decisionqueue(solv, &dq);
	for (int i = 0; i < dq.count; i++)
		if (dq.elements[i] > 1)
			MAPSET(in, dq.elements[i]);
	queue_free(&dq);
}

/* Does a solvable of `in` other than p (and of another name) need p? Only the solvables of
 * the map are visited (its set bits), not the whole pool. */
static bool needed_by(Pool *pool, const Map *in, Id p)
{
	Solvable *ps = pool_id2solvable(pool, p);
	for (int byte = 0; byte < in->size; byte++) {
		if (!in->map[byte])
			continue;
		for (int bit = 0; bit < 8; bit++) {
			Id q = byte * 8 + bit;
			if (!(in->map[byte] & (1 << bit)) || q == p || q < 2 ||
			    q >= pool->nsolvables)
				continue;
			Solvable *sv = pool_id2solvable(pool, q);
			if (sv->name == ps->name || !sv->repo || !sv->requires)
				continue;
			for (Id *dp = sv->repo->idarraydata + sv->requires; *dp; dp++) {
				Id r, rr;
				FOR_PROVIDES(r, rr, *dp)
				{
					if (r == p)
						return true;
				}
			}
		}
	}
	return false;
}

/* conda's only_deps keeps an explicit name that another package of the solution needs
 * (`--only-deps python=2 flask` keeps python): only the youngest ones are left out. */
static void youngest_names(struct menv_solver *s, Solver *solv, const struct menv_strvec *names,
                           struct menv_strvec *out)
{
	Pool *pool = s->pool;
	Map in;
	solution_map(solv, &in);
	for (Id p = 2; p < pool->nsolvables; p++) {
		const char *nm = pool_id2str(pool, pool_id2solvable(pool, p)->name);
		if (MAPTST(&in, p) && has_name(names, nm) && !needed_by(pool, &in, p) &&
		    !has_name(out, nm))
			menv_strvec_push(out, nm);
	}
	map_free(&in);
}

/* conda prunes what a change leaves orphaned: an installed package that something installed
 * needed, that nothing in the solution needs any more, and that nobody asked for. */
static void prune_orphans(struct menv_solver *s, Solver *solv, const struct menv_solve_request *req,
                          const struct plan *pl, struct menv_transaction *out)
{
	Pool *pool = s->pool;
	Map in, before;
	bool changed = true;

	solution_map(solv, &in);
	map_init(&before, pool->nsolvables);
	for (Id p = s->virt->start; p < s->virt->end; p++)
		if (pool_id2solvable(pool, p)->repo == s->virt)
			MAPSET(&before, p); /* installed, virtual packages and pins */
	while (changed) {
		changed = false;
		for (Id p = s->virt->start; p < s->virt->end; p++) {
			json_t *r = installed_rec(s, p);
			if (!r || !MAPTST(&in, p))
				continue;
			const char *name = json_str(r, "name");
			bool asked = has_name(&pl->explicit_names, name) ||
			             (req->aggressive && has_name(req->aggressive, name));
			for (size_t i = 0; !asked && i < req->nhistory; i++)
				asked = req->history[i]->name &&
				        !strcmp(req->history[i]->name, name);
			if (asked || !needed_by(pool, &before, p) || needed_by(pool, &in, p))
				continue;
			MAPCLR(&in, p);
			out->unlink[out->nunlink++] = r;
			changed = true;
		}
		/* a floating installed package (no spec in conda's specs_map) that something
		 * needed and that leaves: its replacement stays only if something needs it (conda's
		 * SAT holds no package that no spec reaches). A copy of the same version and build
		 * is no exception (pyasn1 after cryptography 1.7.1 -> 1.8.1 on index2); an
		 * update_deps closure name has a spec (_post_sat_handling's UPDATE_DEPS specs_map:
		 * the ancestors of the requested names) and stays */
		for (Id q = 2; q < pool->nsolvables; q++) {
			Solvable *qs = pool_id2solvable(pool, q);
			if (!MAPTST(&in, q) || qs->repo == s->virt || !qs->repo)
				continue;
			Id p = s->virt->start;
			while (p < s->virt->end && (!installed_rec(s, p) || MAPTST(&in, p) ||
			                            pool_id2solvable(pool, p)->name != qs->name))
				p++;
			json_t *r = p < s->virt->end ? installed_rec(s, p) : NULL;
			if (!r)
				continue;
			const char *name = json_str(r, "name");
			if (!floats(req, r) || has_name(&pl->explicit_names, name) ||
			    has_name(&pl->closure, name) ||
			    (req->aggressive && has_name(req->aggressive, name)))
				continue;
			const struct menv_record *rec = menv_solv_record_of(s, q);
			if (!rec || !needed_by(pool, &before, p) || needed_by(pool, &in, q))
				continue;
			MAPCLR(&in, q);
			size_t nl = 0;
			for (size_t i = 0; i < out->nlink; i++)
				if (out->link[i] != rec)
					out->link[nl++] = out->link[i];
			out->nlink = nl;
			changed = true;
		}
	}
	map_free(&before);
	map_free(&in);
}

/* Empties what an attempt left in pl (the request's names stay). */
static void plan_reset(struct plan *pl)
{
	map_empty(&pl->unlocked);
	map_empty(&pl->featfree);
	queue_empty(&pl->featjobs);
	queue_empty(&pl->relink);
	pl->remove_feat = false;
	queue_empty(&pl->held);
	menv_strvec_clear(&pl->held_text);
	menv_strvec_clear(&pl->closure);
	pl->all_unlocked = pl->no_best = false;
}

/* Has the pool a channel's records, beside the installed and virtual packages? */
static bool has_channel_repo(const struct menv_solver *s)
{
	Pool *pool = s->pool;
	Repo *r;
	int i;
	FOR_REPOS(i, r)
	if (r != pool->installed && r != s->virt && r->nsolvables)
		return true;
	return false;
}

/* conda's classic Solver makes the reductions menv_solv_reduce_stale replays on a change of
 * installed records with update_modifier UPDATE_SPECS (update, install --update-specs) */
static bool update_specs_road(const struct menv_solver *s, const struct menv_solve_request *req)
{
	if (!(req->update_specs || req->nupdate) || req->freeze_installed || req->no_update_deps ||
	    req->update_all || req->nremove || req->force_remove || !has_channel_repo(s))
		return false;
	for (size_t i = 0; i < s->inst_alloc; i++)
		if (s->inst_by_id[i])
			return true;
	return false;
}

/* The solve proper: relaxing, then update_deps' second solve and the feature metric's. On
 * success *out is the solver (free it); NEEDS_FULL (no error set) where a pruned pool's
 * answer may not be the full pool's. */
static int solve_plan(struct menv_solver *s, const struct menv_solve_request *req, struct plan *pl,
                      Solver **out, struct menv_error *err)
{
	Solver *solv = NULL;
	int rc, nf = 0;

	rc = solve_relaxing(s, req, pl, &solv, err);
	if (!rc && req->update_deps && pl->explicit_names.n) {
		/* conda's update_deps: solve again with the request's dependencies free to update */
		dependency_closure(s, solv, pl);
		solver_free(solv);
		solv = NULL;
		map_empty(&pl->unlocked);
		pl->all_unlocked = false;
		rc = solve_relaxing(s, req, pl, &solv, err);
	}
	if (!rc && !req->nremove)
		nf = menv_solv_feature_jobs(s, solv, &pl->explicit_names, &pl->featjobs,
		                            &pl->featfree);
	if (!rc && req->nremove && has_channel_repo(s)) {
		/* conda's remove over its channels: fewest tracked features first */
		struct menv_strvec asked = MENV_STRVEC_INIT;
		for (size_t i = 0; i < req->nhistory; i++)
			if (req->history[i]->name && !has_name(&pl->removed, req->history[i]->name))
				menv_strvec_push(&asked, req->history[i]->name);
		nf = menv_solv_remove_feature_jobs(s, solv, &asked, &pl->featjobs, &pl->relink);
		menv_strvec_clear(&asked);
		if (nf > 0) {
			Solver *first = solv;
			pl->remove_feat = true;
			rc = solve_relaxing(s, req, pl, &solv, err);
			if (!rc) {
				solver_free(first);
			} else {
				/* no solution drops them: the installed records' answer */
				solv = first;
				rc = 0;
				*err = (struct menv_error){0};
			}
			nf = 0;
		}
	}
	if (nf < 0)
		rc = NEEDS_FULL; /* the builds pruning left out count too */
	if (nf > 0) {
		/* conda's feature metric: solve again with the losing builds disfavoured */
		solver_free(solv);
		solv = NULL;
		map_empty(&pl->unlocked);
		pl->all_unlocked = pl->no_best = false;
		rc = solve_relaxing(s, req, pl, &solv, err);
	}
	if (rc && solv) {
		solver_free(solv);
		solv = NULL;
	}
	*out = solv;
	return rc;
}

int menv_solver_solve_request(struct menv_solver *s, const struct menv_solve_request *req,
                              struct menv_transaction *out, struct menv_error *err)
{
	Pool *pool = s->pool;
	Solver *solv = NULL;
	struct plan pl = {0};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	rc = menv_solv_sparse_load(s, req, err);
	if (rc)
		return rc;
	pool_addfileprovides(pool);
	menv_solv_add_pip_dependency(s);
	if (s->prio == MENV_PRIORITY_STRICT)
		menv_solv_strict_priority(s, req);
	menv_solv_conda_underscores(s);
	pool_createwhatprovides(pool);
	menv_solv_order_repos(s);
	menv_solv_rank_variants(s, req);
	map_init(&pl.unlocked, pool->nsolvables);
	queue_init(&pl.held);
	queue_init(&pl.featjobs);
	map_init(&pl.featfree, pool->nsolvables);
	queue_init(&pl.relink);
	for (size_t i = 0; i < req->ninstall; i++)
		if (req->install[i]->name)
			menv_strvec_push(&pl.explicit_names, req->install[i]->name);
	for (size_t i = 0; i < req->nupdate; i++)
		if (req->update[i]->name)
			menv_strvec_push(&pl.explicit_names, req->update[i]->name);
	for (size_t i = 0; i < req->nremove; i++)
		if (req->remove[i]->name)
			menv_strvec_push(&pl.removed, req->remove[i]->name);

	if (req->force_remove) {
		/* conda remove --force: the named packages only, whatever needs them */
		Queue job, q;
		queue_init(&job);
		queue_init(&q);
		for (size_t i = 0; i < req->nremove && !rc; i++)
			rc = add_spec_job(s, &job, &q, SOLVER_ERASE, req->remove[i], false, err);
		queue_free(&job);
		queue_free(&q);
		if (rc)
			goto out;
		out->unlink = menv_xcalloc(s->inst_alloc + 1, sizeof(*out->unlink));
		for (Id p = s->virt->start; p < s->virt->end; p++) {
			json_t *r = installed_rec(s, p);
			if (r && has_name(&pl.removed, json_str(r, "name")))
				out->unlink[out->nunlink++] = r;
		}
		out->link = menv_xcalloc(1, sizeof(*out->link));
		goto out;
	}
	if (req->satisfied_skip_solve && !req->nupdate && !req->nremove && !req->update_all) {
		/* conda's specs_satisfied_skip_solve: nothing to do when each spec is met */
		bool all = true;
		for (size_t i = 0; all && i < req->ninstall; i++) {
			bool met = false;
			for (Id p = s->virt->start; !met && p < s->virt->end; p++) {
				json_t *r = installed_rec(s, p);
				met = r && menv_matchspec_match_json(req->install[i], r);
			}
			all = met;
		}
		if (all) {
			out->link = menv_xcalloc(1, sizeof(*out->link));
			out->unlink = menv_xcalloc(1, sizeof(*out->unlink));
			goto out;
		}
	}
	if (update_specs_road(s, req))
		menv_solv_reduce_stale(s, req);
	if (!menv_solv_prune(s)) {
		rc = solve_plan(s, req, &pl, &solv, err);
	} else {
		/* first on the pool without the builds no solution holds (prune.c), then, where
		 * that answer may differ, on the full pool */
		struct menv_error perr = {0};
		rc = solve_plan(s, req, &pl, &solv, &perr);
		if (rc == MENV_EINTR) {
			if (err)
				*err = perr;
		} else if (rc) {
			menv_solv_prune_undo(s);
			plan_reset(&pl);
			rc = solve_plan(s, req, &pl, &solv, err);
		}
	}
	if (rc)
		goto out;
	rc = transaction_of(s, solv, out, err);
	if (rc) {
		menv_transaction_release(out);
		memset(out, 0, sizeof(*out));
		goto out;
	}
	out->unlink = menv_xrealloc(out->unlink,
	                            (out->nunlink + s->inst_alloc + 1) * sizeof(*out->unlink));
	if (!req->no_deps && !req->only_deps && !req->freeze_installed && !req->no_update_deps &&
	    !req->nremove)
		prune_orphans(s, solv, req, &pl, out);
	drop_same_package(out);
	if (req->no_deps) {
		filter_names(out, &pl.explicit_names, true);
	} else if (req->only_deps) {
		struct menv_strvec young = MENV_STRVEC_INIT;
		youngest_names(s, solv, &pl.explicit_names, &young);
		filter_names(out, &young, false);
		menv_strvec_clear(&young);
	}
	if (req->force_reinstall) {
		/* the explicit names that stay get unlinked and linked again */
		size_t cap = out->nlink + s->inst_alloc + 1;
		out->link = menv_xrealloc(out->link, cap * sizeof(*out->link));
		out->unlink = menv_xrealloc(out->unlink, cap * sizeof(*out->unlink));
		for (Id p = s->virt->start; p < s->virt->end; p++) {
			json_t *r = installed_rec(s, p);
			if (!r || !has_name(&pl.explicit_names, json_str(r, "name")))
				continue;
			bool leaving = false;
			for (size_t k = 0; k < out->nunlink; k++)
				leaving = leaving || out->unlink[k] == r;
			const struct menv_record *copy = leaving ? NULL : channel_copy(s, r);
			if (copy) {
				out->unlink[out->nunlink++] = r;
				out->link[out->nlink++] = copy;
			}
		}
	}
out:
	if (solv)
		solver_free(solv);
	menv_solv_prune_undo(s);
	menv_solv_reduce_undo(s);
	map_free(&pl.unlocked);
	queue_free(&pl.held);
	queue_free(&pl.featjobs);
	map_free(&pl.featfree);
	queue_free(&pl.relink);
	menv_strvec_clear(&pl.held_text);
	menv_strvec_clear(&pl.explicit_names);
	menv_strvec_clear(&pl.removed);
	menv_strvec_clear(&pl.closure);
	return rc;
}
