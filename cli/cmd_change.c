/*
 * cmd_change.c - the commands that change environments: `menv create`, `install`, `remove`,
 * `update`, `env update`, `env remove` (remove --all), and their lockfile and --revision forms. Each parses its options
 * into one struct menv_txn_opts and runs the library's transaction (envs/txn.c): prepare,
 * draw the plan, commit, smoke check; then the summary line, or conda's JSON with --json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum cmd { C_CREATE, C_INSTALL, C_REMOVE, C_UPDATE, C_ENV_UPDATE, C_ENV_REMOVE };

#define ENV "[-n NAME | -p PREFIX] "
#define CHANNELS                                                                                   \
	"[-c CHANNEL]... [--override-channels]\n"                                                  \
	"         [--strict-channel-priority | --no-channel-priority]\n         "
#define COMMON "[--dry-run] [--json] [-q] [-y] [--no-wait] [--[no-]smoke-check]"
#define MODS                                                                                       \
	"\n         [--freeze-installed | --update-deps | --update-specs | --update-all]\n"        \
	"         [--no-deps"
static const char *const usages[] = {
        [C_CREATE] = "usage: menv create (-n NAME | -p PREFIX) " CHANNELS COMMON " [--offline]"
                     " SPEC...\n       menv create -f environment.yml|LOCKFILE [-e ENV] " ENV
                     "[options]\n",
        [C_INSTALL] = "usage: menv install " ENV CHANNELS COMMON MODS " | --only-deps]"
                      " [--force-reinstall] [--satisfied-skip-solve] [--offline] SPEC...\n"
                      "       menv install " ENV "[--offline] --revision N | -f LOCKFILE\n",
        [C_REMOVE] = "usage: menv remove " ENV CHANNELS COMMON " [--offline] [--force]\n"
                     "         (NAME... | --all)\n",
        [C_UPDATE] = "usage: menv update " ENV CHANNELS COMMON MODS
                     "] [--force-reinstall] [--offline] (NAME... | --all)\n",
        [C_ENV_UPDATE] = "usage: menv env update -f environment.yml " ENV "[--prune] " COMMON "\n",
        [C_ENV_REMOVE] = ("usage: menv env remove [-n NAME | -p PREFIX] [--dry-run] [--json] "
                          "[-q] [-y] [--no-wait]\n"),
};

/* The options each command takes (keys of args.c's table). */
static const char *const accepts[] = {
        [C_CREATE] = "npfecOSNdjqvyWoK!h",       [C_INSTALL] = "npfcOSNdjqvyWoK!rh0123456789",
        [C_REMOVE] = "npcOSNodjqvyWK!*h8",       [C_UPDATE] = "npcOSNdjqvyWoK!ah0123456",
        [C_ENV_UPDATE] = "npfdjqvyWPK!h0123456", [C_ENV_REMOVE] = "npdjqvyWh",
};

/* What the command asks of the transaction engine (menv_txn_request_opts checks it; `ef`: an
 * environment file, read from `once`, a pipe's copy, if not NULL; errors name a->file). */
static int request(enum cmd cmd, struct menv_cli_args *a, const char *once, struct menv_config *cfg,
                   struct menv_envfile **ef, struct menv_txn_opts *o, char **prefix,
                   struct menv_error *err)
{
	static const enum menv_txn_kind kinds[] = {
	        [C_CREATE] = MENV_TXN_CREATE,         [C_INSTALL] = MENV_TXN_INSTALL,
	        [C_REMOVE] = MENV_TXN_REMOVE,         [C_UPDATE] = MENV_TXN_UPDATE,
	        [C_ENV_UPDATE] = MENV_TXN_ENV_UPDATE, [C_ENV_REMOVE] = MENV_TXN_REMOVE};
	struct menv_txn_request rq = {
	        kinds[cmd], a->name,         a->prefix,  once ? once : a->file,
	        a->file,    a->has_revision, a->no_smoke};
	struct menv_strvec w = MENV_STRVEC_INIT;
	*o = (struct menv_txn_opts){
	        .lock_env = a->env,
	        .specs = &a->args,
	        .channels = &a->channels,
	        .override_channels = a->override_channels,
	        .all = a->all,
	        .prune = a->prune,
	        .modifiers = a->modifiers,
	        .revision = a->revision,
	        .dry_run = a->dry_run,
	        .no_wait = a->no_wait,
	        .smoke_force = a->smoke_check,
	        .quiet_pip = a->quiet || a->json,
	        .cancel = MENV_CLI_CANCEL,
	};
	int rc = menv_txn_request_opts(&rq, cfg, o, ef, prefix, &w, err);
	menv_cli_warnings(&w);
	a->name = rq.name;
	return rc;
}

static int change(enum cmd cmd, struct menv_cli_args *a)
{
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_envfile *ef = NULL;
	struct menv_txn_opts o;
	struct menv_txn *t = NULL;
	struct menv_cli_draw d = {0};
	char *prefix = NULL, *once = NULL, *cmdline = menv_cli_cmdline();
	int rc, code = 0;

	menv_heap_for_large_input(); /* locks, histories, plans of 100,000 entries */
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	cfg.offline = cfg.offline || a->offline; /* repodata from the cache only */
	if (a->priority)
		cfg.channel_priority =
		        a->priority == 1 ? MENV_PRIORITY_STRICT : MENV_PRIORITY_DISABLED;
	if (a->file)
		once = menv_file_once(a->file, &err);
	rc = err.code ? err.code : request(cmd, a, once, &cfg, &ef, &o, &prefix, &err);
	if (rc)
		goto out;
	menv_cli_draw_init(&d, &o.cb, a->quiet || a->json, a->json, a->verbose);
	d.messages = a->json ? json_array() : NULL;
	/* conda's question, on a terminal only: a script or a pipe proceeds as with -y */
	if (!a->yes && !a->json && !a->dry_run && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		o.cb.confirm = menv_cli_confirm;
	o.cmdline = cmdline;
	rc = menv_txn_new(&o, &t, &err);
	if (!rc)
		rc = menv_txn_prepare(t, &err);
	if (rc)
		goto out;
	const struct menv_txn_plan *p = menv_txn_plan(t);
	char *lock_line = a->quiet || a->json ? NULL : menv_txn_lock_line(p);
	if (lock_line)
		fprintf(stderr, "%s\n", lock_line);
	free(lock_line);
	if (!a->json && !p->finished_removal)
		menv_cli_print_plan(p);
	fflush(stdout); /* the plan before the fetch's lines on stderr */
	if (a->dry_run) {
		if (a->json) {
			menv_cli_put_json(menv_txn_plan_json(p, true, NULL, NULL), true);
		} else {
			printf("Dry run: nothing was changed.\n");
		}
		goto out;
	}
	rc = menv_txn_commit(t, &err);
	if (rc)
		goto out;
	const struct menv_txn_result *res = menv_txn_result(t);
	if (!a->json && (p->nlink || p->nunlink || p->pip->n || p->remove_env ||
	                 o.kind == MENV_TXN_CREATE || o.kind == MENV_TXN_CREATE_LOCK))
		menv_cli_put_text(menv_txn_result_text(p, res, a->name, !a->quiet));
	fflush(stdout);
	rc = menv_txn_smoke(t, &err);
	if (rc)
		goto out;
	json_t *smoke = res->smoke_ran ? menv_smoke_result_json(&res->smoke) : NULL;
	if (res->smoke_ran)
		code = menv_cli_smoke_verdict(&d, &res->smoke, res->smoke_record_failed);
	if (a->json)
		menv_cli_put_json(menv_txn_plan_json(p, false, d.messages, smoke), true);
	json_decref(smoke);
out:
	if (rc) {
		menv_error_rename(&err, once, a->file);
		if (a->json)
			menv_cli_put_json(menv_txn_error_json(&err, t), true);
		code = menv_cli_fail(&err);
	}
	json_decref(d.messages);
	menv_txn_exit(t); /* the command's last step: its memory left to exit() */
	menv_envfile_free(ef);
	menv_config_release(&cfg);
	menv_cli_args_release(a);
	menv_file_once_drop(once);
	free(prefix);
	free(cmdline);
	return code;
}

static int run(enum cmd cmd, int argc, char **argv)
{
	struct menv_cli_args a = {0};
	/* `env create` (cmd_env.c calls it so) shows its own usage */
	const char *usage = cmd == C_CREATE && !strcmp(argv[0], "env create")
	                            ? "usage: menv env create [-f environment.yml] [-n NAME | -p "
	                              "PREFIX] [options]\n"
	                            : usages[cmd];
	int rc = menv_cli_parse(argc, argv, accepts[cmd], usage, 0,
	                        cmd == C_ENV_REMOVE ? 0 : MENV_CLI_ANY, &a);
	if (rc)
		return MENV_CLI_EXIT(rc);
	if (cmd == C_ENV_REMOVE) /* conda env remove: the whole environment */
		a.all = true;
	return change(cmd, &a);
}

/* each command a call of run() with its kind */
#define COMMAND(fn, cmd)                                                                           \
	int fn(int argc, char **argv)                                                              \
	{                                                                                          \
		return run(cmd, argc, argv);                                                       \
	}
COMMAND(menv_cmd_create, C_CREATE)
COMMAND(menv_cmd_install, C_INSTALL)
COMMAND(menv_cmd_remove, C_REMOVE)
COMMAND(menv_cmd_update, C_UPDATE)
COMMAND(menv_cmd_env_update, C_ENV_UPDATE)
COMMAND(menv_cmd_env_remove, C_ENV_REMOVE)
