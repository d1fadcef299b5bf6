/*
 * cmd_list.c - `menv list` (conda list's table or JSON); pip-installed distributions are listed
 * with channel `pypi`, editable ones (pip -e) `dev_0 <develop>` as conda lists them (`menv
 * export` is in cmd_export.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int list_revisions(const char *prefix, bool json)
{
	struct menv_error err = {0};
	struct menv_buf text = MENV_BUF_INIT;
	json_t *all = NULL;

	if (menv_history_revisions(prefix, &all, json ? NULL : &text, &err))
		return menv_cli_fail(&err);
	menv_cli_put_text(menv_buf_detach(&text));
	if (json)
		menv_cli_put_json(all, false);
	else
		json_decref(all);
	return 0;
}

int menv_cmd_list(int argc, char **argv)
{
	struct menv_cli_args o = {0};
	struct menv_error err = {0};
	struct menv_buf text = MENV_BUF_INIT;
	struct menv_txn_callbacks cb = {.event = menv_cli_on_event};
	json_t *rows = NULL;
	char *prefix = NULL;
	int rc, code = 0;

	const char *use = "usage: menv list [-n NAME | -p PREFIX] [--json] [--full-name] "
	                  "[--show-channel-urls] [REGEX]\n"
	                  "       menv list [-n NAME | -p PREFIX] --explicit [--md5]\n"
	                  "       menv list [-n NAME | -p PREFIX] --revisions [--json]\n";
	if ((rc = menv_cli_parse(argc, argv, "npjBRLUxMh", use, 0, 1, &o)))
		return MENV_CLI_EXIT(rc);
	if (o.revisions) {
		struct menv_config cfg = {0};
		rc = menv_config_load(&cfg, &err);
		if (!rc) {
			prefix = menv_cli_prefix(&cfg, o.name, o.prefix, &err);
			rc = prefix ? 0 : err.code;
		}
		menv_config_release(&cfg);
		code = rc ? menv_cli_fail(&err) : list_revisions(prefix, o.json);
		goto out;
	}
	struct menv_list_request req = {o.name,         o.prefix,    NULL,  o.full_name,
	                                o.channel_urls, o.explicit_, o.md5, &cb};
	req.regex = o.args.n ? o.args.v[0] : NULL;
	if (menv_env_list_packages(&req, &prefix, &rows, &text, &err)) {
		code = menv_cli_fail(&err);
	} else if (o.explicit_) {
		fputs(text.buf ? text.buf : "", stdout);
	} else if (o.json) {
		menv_cli_put_json(json_incref(rows), false);
	} else {
		printf("# packages in environment at %s:\n#\n", prefix);
		menv_cli_packages(rows);
	}
out:
	json_decref(rows);
	menv_buf_release(&text);
	menv_cli_args_release(&o);
	free(prefix);
	return code;
}
