/*
 * txnjson.c - a transaction in conda's --json shape (conda/cli/install.py's
 * print_transaction_summary with --json, conda/exceptions.py for a failure): the plan's
 * actions (FETCH, LINK, UNLINK, PREFIX) from the same struct menv_txn_plan the text table
 * is drawn from, and a failure with its problem tree.
 */
#include <stdlib.h>

#include "txn.h"

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : "";
}

/* An installed PrefixRecord in the same shape (and its `build`, as conda's dump has it). */
static json_t *installed_json(json_t *rec)
{
	json_t *o = json_object(), *bn = json_object_get(rec, "build_number");
	static const char *const same[] = {"name", "version", "build", "channel", "subdir",
	                                   "url",  "fn",      "md5",   "sha256"};
	for (size_t i = 0; i < sizeof(same) / sizeof(*same); i++)
		json_object_set_new(o, same[i], json_string(jstr(rec, same[i])));
	json_object_set_new(o, "build_string", json_string(jstr(rec, "build")));
	json_object_set_new(o, "build_number", json_integer(json_integer_value(bn)));
	json_object_set_new(o, "platform", json_string(jstr(rec, "subdir")));
	json_object_set_new(o, "dist_name",
	                    json_sprintf("%s-%s-%s", jstr(rec, "name"), jstr(rec, "version"),
	                                 jstr(rec, "build")));
	return o;
}

json_t *menv_txn_plan_json(const struct menv_txn_plan *p, bool dry_run, json_t *messages,
                           json_t *smoke)
{
	json_t *root = json_object(), *actions = json_object();
	json_t *jl = json_array(), *jf = json_array();
	bool create = p->kind == MENV_TXN_CREATE || p->kind == MENV_TXN_CREATE_LOCK;

	for (size_t i = 0; i < p->nlink; i++) {
		json_array_append_new(jl, menv_record_json(p->link[i]));
		if (!p->cached[i]) /* conda's FETCH: what the package cache lacks */
			json_array_append_new(jf, menv_record_json(p->link[i]));
	}
	json_object_set_new(actions, "LINK", jl);
	json_object_set_new(actions, "FETCH", jf);
	if (!create) {
		json_t *ju = json_array();
		for (size_t i = 0; i < p->nunlink; i++)
			json_array_append_new(ju, installed_json(p->unlink[i]));
		json_object_set_new(actions, "UNLINK", ju);
	}
	json_object_set_new(actions, "PREFIX", json_string(p->prefix));
	json_object_set_new(root, "actions", actions);
	json_object_set_new(root, "prefix", json_string(p->prefix));
	json_object_set_new(root, "dry_run", json_boolean(dry_run));
	json_object_set_new(root, "success", json_true());
	if (!p->solved)
		json_object_set_new(root, "solved", json_false());
	if (!create && !p->nlink && !p->nunlink && !p->remove_env)
		json_object_set_new(root, "message",
		                    json_string("All requested packages already installed."));
	if (p->finished_removal) {
		/* the records went with the interrupted command's prefix: UNLINK cannot list what
		 * it removed, so say what happened instead of an empty success */
		json_object_set_new(root, "finished_interrupted_removal", json_true());
		char *m =
		        menv_xasprintf("finished the interrupted removal of '%s' (the packages it "
		                       "removed are not known: their records went with it)",
		                       p->prefix);
		json_object_set_new(root, "message", json_string(m));
		free(m);
	}
	if (messages && json_array_size(messages))
		json_object_set(root, "messages", messages);
	if (smoke) /* the smoke check's report (a failed check keeps the environment) */
		json_object_set(root, "smoke_check", smoke);
	return root;
}

json_t *menv_txn_error_json(const struct menv_error *err, const struct menv_txn *t)
{
	json_t *j = json_pack("{s:b, s:s, s:s}", "success", 0, "error", menv_error_name(err->code),
	                      "message", err->msg);
	if (t && err->code == MENV_EUNSAT && menv_txn_problems_json(t)) {
		json_object_set(j, "problems", menv_txn_problems_json(t));
		json_object_set_new(j, "problem_tree", json_string(menv_txn_problems(t)));
	}
	return j;
}
