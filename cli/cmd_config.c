/*
 * cmd_config.c - `menv config` as conda config: --show [KEY...], --show-sources,
 * --describe [KEY...], --get [KEY...] and the edits --set, --add/--prepend, --append,
 * --remove, --remove-key of one rc file (--file FILE, --env: the active prefix's .condarc,
 * --system: the root prefix's; default $MENVRC or ~/.condarc). The formats and the edits are
 * the library's (specs/condarc.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv config [--file FILE | --env | --system] [--json]\n"                           \
	"         (--show [KEY...] | --show-sources | --describe [KEY...] | --get [KEY...]\n"      \
	"          | --set KEY VALUE | --add KEY VALUE | --prepend KEY VALUE\n"                    \
	"          | --append KEY VALUE | --remove KEY VALUE | --remove-key KEY)...\n"

static const enum menv_config_view views[] = {[MENV_CLI_CFG_SHOW] = MENV_CONFIG_SHOW,
                                              [MENV_CLI_CFG_SOURCES] = MENV_CONFIG_SOURCES,
                                              [MENV_CLI_CFG_DESCRIBE] = MENV_CONFIG_DESCRIBE};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int usage_error(const char *msg)
{
	fprintf(stderr, "menv: error: %s\n%s", msg, USAGE);
	return MENV_EXIT_USAGE;
}

int menv_cmd_config(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_strvec warnings = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	struct menv_buf o = MENV_BUF_INIT;
	struct menv_condarc rc = {0};
	char *path = NULL;
	int r = 0;

	if ((r = menv_cli_parse(argc, argv, "wDJAYzu@#%^&fjh", USAGE, 0, MENV_CLI_ANY, &a)))
		return MENV_CLI_EXIT(r);
	int mode = a.config_view;
	bool edits = false, json = a.json;
	struct menv_strvec *keys = &a.args, *ops = a.config_ops;
	for (int k = 0; k < MENV_CLI_CFG_NOPS; k++)
		edits |= ops[k].n > 0;
	if (keys->n && (!mode || mode == MENV_CLI_CFG_SOURCES)) {
		menv_cli_args_release(&a);
		return usage_error("unknown option or argument");
	}
	if (!mode && !edits) {
		menv_cli_args_release(&a);
		return usage_error("nothing to do");
	}
	if (mode && mode != MENV_CLI_CFG_GET) {
		json_t *j = NULL;
		r = menv_config_view(views[mode], keys, &j, json ? NULL : &o, &err);
		if (!r && json)
			menv_cli_put_json(j, true);
		else
			json_decref(j);
		goto out;
	}
	/* the file to read and edit */
	const char *active = getenv("CONDA_PREFIX");
	path = a.file                          ? menv_xstrdup(a.file)
	       : a.system_rc                   ? menv_config_system_rc()
	       : a.env_rc && active && *active ? menv_xasprintf("%s/.condarc", active)
	                                       : menv_config_user_rc();
	/* an edit holds the file's lock from reading it to replacing it */
	r = edits ? menv_condarc_load_locked(path, &rc, &err) : menv_condarc_load(path, &rc, &err);
	json_t *got = json_object();
	if (!r && mode == MENV_CLI_CFG_GET) {
		if (!keys->n) {
			const char *k;
			json_t *v;
			json_object_foreach(rc.doc, k, v) menv_strvec_push(keys, k);
			qsort(keys->v, keys->n, sizeof(*keys->v), by_name);
		}
		for (size_t i = 0; i < keys->n; i++) {
			char *n = menv_xstrndup(keys->v[i], strcspn(keys->v[i], "."));
			if (!menv_config_param(n)) {
				menv_strvec_push_owned(&warnings,
				                       menv_xasprintf("unknown key %s", n));
			} else if (menv_condarc_get(&rc, keys->v[i])) {
				json_t *v = menv_condarc_get(&rc, keys->v[i]);
				json_object_set(got, keys->v[i], v);
				if (!json)
					menv_config_format_get(keys->v[i], v, &o);
			}
			free(n);
		}
	}
	for (int k = 0; !r && k < MENV_CLI_CFG_NOPS; k++) {
		size_t nv = k == MENV_CLI_CFG_REMOVE_KEY ? 1 : 2;
		for (size_t i = 0; !r && i + nv <= ops[k].n; i += nv) {
			const char *key = ops[k].v[i], *val = nv > 1 ? ops[k].v[i + 1] : NULL;
			if (k == MENV_CLI_CFG_PREPEND || k == MENV_CLI_CFG_APPEND)
				r = menv_condarc_add(&rc, key, val, k == MENV_CLI_CFG_PREPEND,
				                     &warnings, &err);
			else if (k == MENV_CLI_CFG_SET)
				r = menv_condarc_set(&rc, key, val, &err);
			else if (k == MENV_CLI_CFG_REMOVE)
				r = menv_condarc_remove(&rc, key, val, &err);
			else
				r = menv_condarc_remove_key(&rc, key, &err);
		}
	}
	if (!r && edits)
		r = menv_condarc_save(&rc, &err);
	if (!r && json) {
		json_t *w = json_array();
		for (size_t i = 0; i < warnings.n; i++)
			json_array_append_new(w, json_string(warnings.v[i]));
		menv_cli_put_json(json_pack("{s:s, s:b, s:o, s:O}", "rc_path", path, "success", 1,
		                            "warnings", w, "get", got),
		                  true);
	} else {
		for (size_t i = 0; i < warnings.n; i++)
			fprintf(stderr, "%s%s\n",
			        strncmp(warnings.v[i], "unknown", 7) ? "Warning: " : "",
			        warnings.v[i]);
	}
	json_decref(got);
out:
	fputs(o.buf ? o.buf : "", stdout);
	menv_buf_release(&o);
	menv_condarc_release(&rc);
	menv_cli_args_release(&a);
	menv_strvec_clear(&warnings);
	free(path);
	return r ? menv_cli_fail(&err) : 0;
}
