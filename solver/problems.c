/*
 * problems.c - why a solve failed: libsolv's problem rules turned into one line per problem,
 * a tree (requested spec -> candidates -> what they need or conflict with) and its JSON;
 * requested names that exist but match nothing explained as mamba does.
 */
#include <string.h>

#include <solv/conda.h>
#include <solv/evr.h>
#include <solv/problems.h>
#include <solv/solver.h>

#include "internal.h"

/* The facts of one problem, from libsolv's rules: which package needs which dependency
 * (and whether nothing provides it), which packages conflict, which cannot be installed. */
struct facts {
	Queue req;      /* pairs: source, dep (requires whose providers cannot be installed) */
	Queue missing;  /* pairs: source, dep (nothing provides it) */
	Queue conflict; /* triples: source, target, dep (0 when none) */
	Queue notinst;  /* solvables that are not installable */
	Map involved;   /* every solvable a rule names */
};

static void facts_collect(Solver *solv, Id problem, struct facts *f, bool *needs_cuda)
{
	Pool *pool = solv->pool;
	Queue rules;

	queue_init(&f->req);
	queue_init(&f->missing);
	queue_init(&f->conflict);
	queue_init(&f->notinst);
	map_init(&f->involved, pool->nsolvables);
	queue_init(&rules);
	solver_findallproblemrules(solv, problem, &rules);
	for (int j = 0; j < rules.count; j++) {
		Id source, target, dep;
		Id type = solver_ruleinfo(solv, rules.elements[j], &source, &target, &dep);
		/* only package rules carry a dependency in `dep` (a job's is its selection) */
		bool pkg_dep = type == SOLVER_RULE_PKG_REQUIRES ||
		               type == SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP ||
		               type == SOLVER_RULE_PKG_CONSTRAINS ||
		               type == SOLVER_RULE_PKG_CONFLICTS;
		if (pkg_dep && dep && !strncmp(pool_dep2str(pool, dep), "__cuda", 6))
			*needs_cuda = true;
		/* a job rule's source and target are the job's index and flags, not solvables */
		bool job_rule = type >= SOLVER_RULE_JOB && type < SOLVER_RULE_DISTUPGRADE;
		if (!job_rule && source > 0 && source < pool->nsolvables)
			MAPSET(&f->involved, source);
		if (!job_rule && target > 0 && target < pool->nsolvables)
			MAPSET(&f->involved, target);
		switch (type) {
		case SOLVER_RULE_PKG_REQUIRES: queue_push2(&f->req, source, dep); break;
		case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
			queue_push2(&f->missing, source, dep);
			break;
		case SOLVER_RULE_PKG_CONFLICTS:
		case SOLVER_RULE_PKG_SAME_NAME:
		case SOLVER_RULE_PKG_CONSTRAINS:
			queue_push(&f->conflict, source);
			queue_push2(&f->conflict, target, dep);
			break;
		case SOLVER_RULE_PKG_NOT_INSTALLABLE: queue_push(&f->notinst, source); break;
		default: break;
		}
	}
	queue_free(&rules);
}

static void facts_free(struct facts *f)
{
	queue_free(&f->req);
	queue_free(&f->missing);
	queue_free(&f->conflict);
	queue_free(&f->notinst);
	map_free(&f->involved);
}

/* A dependency as the user wrote it: libsolv shows a `1.*` glob as `1.**`. */
static json_t *dep_json(Pool *pool, Id dep)
{
	char *d = menv_xstrdup(pool_dep2str(pool, dep)), *w = d;
	for (char *r = d; *r; r++)
		if (!(r[0] == '*' && r[1] == '*'))
			*w++ = *r;
	*w = '\0';
	json_t *j = json_string(d);
	free(d);
	return j;
}

/* One package of the tree: what it needs (recursively), what it conflicts with. */
static json_t *tree_node(Solver *solv, struct facts *f, Id p, Map *seen, int depth)
{
	Pool *pool = solv->pool;
	json_t *node = json_object();

	json_object_set_new(node, "package", json_string(pool_solvid2str(pool, p)));
	if (MAPTST(seen, p) || depth > 8) {
		json_object_set_new(node, "see_above", json_true());
		return node;
	}
	MAPSET(seen, p);
	json_t *needs = json_array();
	for (int i = 0; i < f->missing.count; i += 2)
		if (f->missing.elements[i] == p)
			json_array_append_new(needs,
			                      json_pack("{s:o,s:b}", "dep",
			                                dep_json(pool, f->missing.elements[i + 1]),
			                                "nothing_provides", 1));
	for (int i = 0; i < f->req.count; i += 2) {
		if (f->req.elements[i] != p)
			continue;
		Id dep = f->req.elements[i + 1], q, qq;
		json_t *cands = json_array();
		FOR_PROVIDES(q, qq, dep)
		{
			if (MAPTST(&f->involved, q) && json_array_size(cands) < 4)
				json_array_append_new(cands,
				                      tree_node(solv, f, q, seen, depth + 1));
		}
		json_array_append_new(needs, json_pack("{s:o,s:o}", "dep", dep_json(pool, dep),
		                                       "candidates", cands));
	}
	if (json_array_size(needs))
		json_object_set(node, "needs", needs);
	json_decref(needs);
	json_t *conf = json_array();
	for (int i = 0; i < f->conflict.count; i += 3) {
		Id a = f->conflict.elements[i], b = f->conflict.elements[i + 1];
		if (a != p && b != p)
			continue;
		Id other = a == p ? b : a;
		if (other > 0)
			json_array_append_new(conf, json_string(pool_solvid2str(pool, other)));
	}
	if (json_array_size(conf))
		json_object_set(node, "conflicts_with", conf);
	json_decref(conf);
	for (int i = 0; i < f->notinst.count; i++)
		if (f->notinst.elements[i] == p)
			json_object_set_new(node, "not_installable", json_true());
	return node;
}

static void tree_render(json_t *node, int depth, struct menv_buf *out)
{
	const char *pkg = json_string_value(json_object_get(node, "package"));
	json_t *needs = json_object_get(node, "needs"),
	       *conf = json_object_get(node, "conflicts_with");
	size_t i, k;
	json_t *n, *c;

	menv_buf_addf(out, "%*s%s%s%s%s\n", depth * 2, "", depth ? "└─ " : "", pkg,
	              json_is_true(json_object_get(node, "see_above")) ? " (see above)" : "",
	              json_is_true(json_object_get(node, "not_installable"))
	                      ? ", which cannot be installed (excluded by channel priority or "
	                        "its platform)"
	                      : "");
	json_array_foreach(conf, i, c) menv_buf_addf(out, "%*s   conflicts with %s\n", depth * 2,
	                                             "", json_string_value(c));
	json_array_foreach(needs, i, n)
	{
		const char *dep = json_string_value(json_object_get(n, "dep"));
		json_t *cands = json_object_get(n, "candidates");
		if (json_is_true(json_object_get(n, "nothing_provides"))) {
			menv_buf_addf(out, "%*s   needs %s, which nothing provides\n", depth * 2,
			              "", dep);
			continue;
		}
		menv_buf_addf(out, "%*s   needs %s%s\n", depth * 2, "", dep,
		              json_array_size(cands) ? ", but:" : ", which cannot be installed");
		json_array_foreach(cands, k, c) tree_render(c, depth + 2, out);
	}
}

/* Does some package of the channels match both `want` (a requested spec) and `dep` (a
 * dependency on the same name)? */
static bool requested_allows(struct menv_solver *s, const struct menv_matchspec *want,
                             const struct menv_matchspec *dep)
{
	Pool *pool = s->pool;
	Id nameid = pool_str2id(pool, want->name, 0), p, pp;
	if (!nameid)
		return false;
	FOR_PROVIDES(p, pp, nameid)
	{
		Solvable *sv = pool_id2solvable(pool, p);
		const struct menv_record *r;
		if (sv->name != nameid || !sv->repo || sv->repo == s->virt ||
		    !(r = menv_solv_record_of(s, p)))
			continue;
		if (menv_matchspec_match_json(want, r->json) &&
		    menv_matchspec_match_json(dep, r->json))
			return true;
	}
	return false;
}

/* The problem of a requested spec that no package matches although the channels have its
 * name (s->unmatched): one line naming the requested specs that rule out the packages there
 * are ("nothing provides requested pytorch>=2.0 for python 3.9* (the channels have pytorch
 * 1.13.1, which needs python >=3.11,<3.12.0a0)"), and a tree: the packages of that name
 * (the newest four) with each dependency that a requested spec excludes. */
static void unmatched_problem(struct menv_solver *s, const struct menv_solve_request *req,
                              const struct menv_matchspec *ms, struct menv_buf *line,
                              struct menv_buf *tree, json_t *js)
{
	Pool *pool = s->pool;
	Id nameid = pool_str2id(pool, ms->name, 0), p, pp;
	Queue have;
	char *full = menv_matchspec_str_full(ms);
	struct menv_buf why = MENV_BUF_INIT, avail = MENV_BUF_INIT;
	struct menv_strvec against = MENV_STRVEC_INIT;
	json_t *nodes = json_array();

	queue_init(&have);
	FOR_PROVIDES(p, pp, nameid)
	{
		Solvable *sv = pool_id2solvable(pool, p);
		if (sv->name == nameid && sv->repo && sv->repo != s->virt &&
		    menv_solv_record_of(s, p))
			queue_push(&have, p);
	}
	/* newest first (insertion sort: a handful of packages) */
	for (int i = 1; i < have.count; i++)
		for (int k = i; k > 0; k--) {
			Solvable *a = pool_id2solvable(pool, have.elements[k - 1]),
			         *b = pool_id2solvable(pool, have.elements[k]);
			if (pool_evrcmp(pool, a->evr, b->evr, EVRCMP_COMPARE) >= 0)
				break;
			Id t = have.elements[k];
			have.elements[k] = have.elements[k - 1];
			have.elements[k - 1] = t;
		}
	menv_buf_addf(tree, "requested %s, which no package of the channels matches; they have:\n",
	              full);
	for (int i = 0; i < have.count && i < 4; i++) {
		const struct menv_record *r = menv_solv_record_of(s, have.elements[i]);
		json_t *deps = json_object_get(r->json, "depends"), *d;
		json_t *node =
		        json_pack("{s:s}", "package", pool_solvid2str(pool, have.elements[i]));
		json_t *excl = json_array();
		size_t k;
		bool said = false;
		menv_buf_addf(tree, "  └─ %s\n", pool_solvid2str(pool, have.elements[i]));
		json_array_foreach(deps, k, d)
		{
			struct menv_matchspec *dm = NULL;
			struct menv_error e = {0};
			if (!json_is_string(d) ||
			    menv_matchspec_parse(json_string_value(d), &dm, &e))
				continue;
			for (size_t j = 0; dm->name && j < req->ninstall; j++) {
				const struct menv_matchspec *w = req->install[j];
				if (w == ms || !w->name || strcmp(w->name, dm->name) ||
				    requested_allows(s, w, dm))
					continue;
				char *ws = menv_matchspec_str_full(w);
				menv_buf_addf(tree, "       needs %s, but %s is requested\n",
				              json_string_value(d), ws);
				json_array_append_new(excl, json_pack("{s:s,s:s}", "dep",
				                                      json_string_value(d),
				                                      "requested", ws));
				if (!said && why.len < 400)
					menv_buf_addf(&why, "%s%s %s, which needs %s",
					              why.len ? "; " : "", r->name, r->version,
					              json_string_value(d));
				said = true;
				bool dup = false;
				for (size_t a = 0; a < against.n; a++)
					dup = dup || !strcmp(against.v[a], ws);
				if (!dup)
					menv_strvec_push(&against, ws);
				free(ws);
			}
			menv_matchspec_free(dm);
		}
		if (!said && avail.len < 400)
			menv_buf_addf(&avail, "%s%s %s", avail.len ? ", " : "", r->name,
			              r->version);
		json_object_set_new(node, "excluded_by", excl);
		json_array_append_new(nodes, node);
	}
	menv_buf_addf(line, "%snothing provides requested %s", line->len ? "; " : "", full);
	for (size_t a = 0; a < against.n; a++)
		menv_buf_addf(line, "%s%s", a ? " and " : " for ", against.v[a]);
	if (why.len || avail.len)
		menv_buf_addf(line, " (the channels have %s%s%s)", why.len ? why.buf : "",
		              why.len && avail.len ? "; " : "", avail.len ? avail.buf : "");
	json_array_append_new(js, json_pack("{s:s,s:[{s:s,s:b,s:o}]}", "problem", line->buf, "tree",
	                                    "requested", full, "nothing_matches", 1, "available",
	                                    nodes));
	menv_strvec_clear(&against);
	menv_buf_release(&why);
	menv_buf_release(&avail);
	queue_free(&have);
	free(full);
}

/* One line per problem in `line` ("a; b"); a tree per problem (requested spec -> the
 * packages that could satisfy it -> what they need and conflict with) in `tree` and `js`. */
void menv_solv_describe_problems(struct menv_solver *s, Solver *solv,
                                 const struct menv_solve_request *req, struct menv_buf *line,
                                 struct menv_buf *tree, json_t *js, bool *needs_cuda)
{
	Pool *pool = solv->pool;
	int np = solver_problem_count(solv);
	for (Id i = 1; i <= np; i++) {
		struct facts f;
		Map seen;
		/* pool_tmp strings: copy before the next libsolv call reuses the space */
		char *ps = menv_xstrdup(solver_problem2str(solv, i));
		const struct menv_matchspec *um = NULL;
		for (size_t k = 0; k < s->nunmatched && !um; k++) {
			char *full = menv_matchspec_str_full(s->unmatched[k]);
			/* libsolv's text for a job on a name nothing provides */
			char *want = menv_xasprintf("package %s does not exist", full);
			if (!strcmp(ps, want))
				um = s->unmatched[k];
			free(want);
			free(full);
		}
		if (um) {
			struct menv_buf one = MENV_BUF_INIT;
			menv_buf_addf(tree, "problem %d: %s\n", i, ps);
			unmatched_problem(s, req, um, &one, tree, js);
			if (!line->buf || !strstr(line->buf, one.buf))
				menv_buf_addf(line, "%s%s", line->len ? "; " : "", one.buf);
			menv_buf_release(&one);
			free(ps);
			continue;
		}
		if (!strstr(line->buf, ps))
			menv_buf_addf(line, "%s%s", line->len ? "; " : "", ps);
		if (strstr(ps, "__cuda"))
			*needs_cuda = true;
		facts_collect(solv, i, &f, needs_cuda);
		map_init(&seen, pool->nsolvables);
		json_t *roots = json_array();
		menv_buf_addf(tree, "problem %d: %s\n", i, ps);
		for (size_t k = 0; k < req->ninstall; k++) {
			const struct menv_matchspec *ms = req->install[k];
			Id name = ms->name ? pool_str2id(pool, ms->name, 0) : 0;
			json_t *cands = json_array();
			for (Id p = 2; name && p < pool->nsolvables; p++)
				if (MAPTST(&f.involved, p) &&
				    pool_id2solvable(pool, p)->name == name &&
				    json_array_size(cands) < 4)
					json_array_append_new(cands,
					                      tree_node(solv, &f, p, &seen, 1));
			if (!json_array_size(cands)) {
				json_decref(cands);
				continue;
			}
			char *spec = menv_matchspec_str_full(ms);
			menv_buf_addf(tree, "requested %s\n", spec);
			size_t c;
			json_t *cn;
			json_array_foreach(cands, c, cn) tree_render(cn, 1, tree);
			json_array_append_new(roots, json_pack("{s:s,s:o}", "requested", spec,
			                                       "candidates", cands));
			free(spec);
		}
		json_array_append_new(js, json_pack("{s:s,s:o}", "problem", ps, "tree", roots));
		map_free(&seen);
		facts_free(&f);
		free(ps);
	}
}

const char *menv_solver_problems(const struct menv_solver *s)
{
	return s->problems ? s->problems : "";
}

json_t *menv_solver_problems_json(const struct menv_solver *s)
{
	return s->problems_json;
}
