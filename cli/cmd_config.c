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

enum mode { M_NONE, M_SHOW, M_SOURCES, M_DESCRIBE, M_GET };
static const enum menv_config_view views[] = {[M_SHOW] = MENV_CONFIG_SHOW,
                                              [M_SOURCES] = MENV_CONFIG_SOURCES,
                                              [M_DESCRIBE] = MENV_CONFIG_DESCRIBE};
/* the edits, in the order conda applies them */
enum op { O_PREPEND, O_APPEND, O_SET, O_REMOVE, O_REMOVE_KEY, O_N };
static const char *const op_names[] = {"--prepend", "--append",     "--set",
                                       "--remove",  "--remove-key", NULL};

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
	struct menv_strvec keys = MENV_STRVEC_INIT, ops[O_N] = {{0}}, warnings = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	struct menv_buf o = MENV_BUF_INIT;
	struct menv_condarc rc = {0};
	enum mode mode = M_NONE;
	const char *file = NULL;
	bool json = false, env = false, sys = false, edits = false;
	char *path = NULL;
	int r = 0;

	if (menv_cli_probe) {
		menv_cli_probe_words((const char *const[]){"--show", "--show-sources", "--describe",
		                                           "--get", "--add", NULL});
		menv_cli_probe_words(op_names);
		menv_cli_probe_words((const char *const[]){"--file", "--env", "--system", "--json",
		                                           "--help", NULL});
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		enum mode m = !strcmp(a, "--show")           ? M_SHOW
		              : !strcmp(a, "--show-sources") ? M_SOURCES
		              : !strcmp(a, "--describe")     ? M_DESCRIBE
		              : !strcmp(a, "--get")          ? M_GET
		                                             : M_NONE;
		int op = O_N;
		for (int k = 0; k < O_N; k++)
			if (!strcmp(a, op_names[k]))
				op = k;
		if (!strcmp(a, "--add"))
			op = O_PREPEND; /* conda: --add prepends */
		if (m != M_NONE) {
			if (mode != M_NONE)
				return usage_error(
				        "give one of --show, --show-sources, --describe, "
				        "--get");
			mode = m;
			while (m != M_SOURCES && i + 1 < argc && argv[i + 1][0] != '-')
				menv_strvec_push(&keys, argv[++i]);
		} else if (op != O_N) {
			int nv = op == O_REMOVE_KEY ? 1 : 2;
			if (i + nv >= argc)
				return usage_error(op == O_REMOVE_KEY ? "--remove-key takes KEY"
				                                      : "the edit takes KEY VALUE");
			for (int k = 0; k < nv; k++)
				menv_strvec_push(&ops[op], argv[++i]);
			edits = true;
		} else if (!strcmp(a, "--file") || !strcmp(a, "-f")) {
			if (++i >= argc)
				return usage_error("--file takes FILE");
			file = argv[i];
		} else if (!strcmp(a, "--env")) {
			env = true;
		} else if (!strcmp(a, "--system")) {
			sys = true;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(USAGE, stdout);
			return 0;
		} else {
			return usage_error("unknown option or argument");
		}
	}
	if (mode == M_NONE && !edits)
		return usage_error("nothing to do");
	if (mode != M_NONE && mode != M_GET) {
		json_t *j = NULL;
		r = menv_config_view(views[mode], &keys, &j, json ? NULL : &o, &err);
		if (!r && json)
			menv_cli_put_json(j, true);
		else
			json_decref(j);
		goto out;
	}
	/* the file to read and edit */
	const char *active = getenv("CONDA_PREFIX");
	path = file                       ? menv_xstrdup(file)
	       : sys                      ? menv_config_system_rc()
	       : env && active && *active ? menv_xasprintf("%s/.condarc", active)
	                                  : menv_config_user_rc();
	if (!path) { /* the user's file is under HOME, which is unusable */
		const char *h;
		r = menv_home(&h, &err);
		menv_error_prefix(&err, "no .condarc to use (set MENVRC or use --file FILE)");
	} else {
		r = menv_condarc_load(path, &rc, &err);
	}
	json_t *got = json_object();
	if (!r && mode == M_GET) {
		if (!keys.n) {
			const char *k;
			json_t *v;
			json_object_foreach(rc.doc, k, v) menv_strvec_push(&keys, k);
			qsort(keys.v, keys.n, sizeof(*keys.v), by_name);
		}
		for (size_t i = 0; i < keys.n; i++) {
			char *n = menv_xstrndup(keys.v[i], strcspn(keys.v[i], "."));
			if (!menv_config_param(n)) {
				menv_strvec_push_owned(&warnings,
				                       menv_xasprintf("unknown key %s", n));
			} else if (menv_condarc_get(&rc, keys.v[i])) {
				json_t *v = menv_condarc_get(&rc, keys.v[i]);
				json_object_set(got, keys.v[i], v);
				if (!json)
					menv_config_format_get(keys.v[i], v, &o);
			}
			free(n);
		}
	}
	for (int k = 0; !r && k < O_N; k++) {
		size_t nv = k == O_REMOVE_KEY ? 1 : 2;
		for (size_t i = 0; !r && i + nv <= ops[k].n; i += nv) {
			const char *key = ops[k].v[i], *val = nv > 1 ? ops[k].v[i + 1] : NULL;
			if (k == O_PREPEND || k == O_APPEND)
				r = menv_condarc_add(&rc, key, val, k == O_PREPEND, &warnings,
				                     &err);
			else if (k == O_SET)
				r = menv_condarc_set(&rc, key, val, &err);
			else if (k == O_REMOVE)
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
	for (int k = 0; k < O_N; k++)
		menv_strvec_clear(&ops[k]);
	menv_strvec_clear(&keys);
	menv_strvec_clear(&warnings);
	free(path);
	return r ? menv_cli_fail(&err) : 0;
}
