/*
 * cmd_shell.c - `menv shell hook|init|deinit|activate|deactivate`: the shell integration. The
 * hook defines a `menv` shell function; `menv activate ENV` in the shell runs
 * `menv shell activate --shell S ENV` and evals the code it prints (envs/activate.c writes
 * it). `menv activate` run as a program (no hook) explains how to set the hook up.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

#define USAGE                                                                                      \
	"usage: menv shell hook [--shell bash|zsh|fish|posix]\n"                                   \
	"       menv shell init [--shell S] [--rc-file FILE]\n"                                    \
	"       menv shell deinit [--shell S] [--rc-file FILE]\n"                                  \
	"       menv shell activate [--shell S] [--stack] [NAME|PREFIX]\n"                         \
	"       menv shell deactivate [--shell S]\n"                                               \
	"       menv shell completion bash|zsh|fish\n"                                             \
	"\nset-up:  eval \"$(menv shell hook --shell bash)\"   then   menv activate NAME\n"

/* Each subcommand's own usage and options (keys of args.c's table): `shell init --help` shows
 * init's, not the hook's. */
static const struct {
	const char *sub, *usage, *accepts;
} subs[] = {
        {"hook", "usage: menv shell hook [--shell bash|zsh|fish|posix]\n", "sh"},
        {"init", "usage: menv shell init [--shell S] [--rc-file FILE]\n", "sIh"},
        {"deinit", "usage: menv shell deinit [--shell S] [--rc-file FILE]\n", "sIh"},
        {"activate", "usage: menv shell activate [--shell S] [--stack] [NAME|PREFIX]\n", "sTh"},
        {"deactivate", "usage: menv shell deactivate [--shell S]\n", "sh"},
};

int menv_cmd_shell(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_buf out = MENV_BUF_INIT;
	enum menv_shell sh = menv_shell_default();
	const char *sub;
	char *exe = NULL, *prefix = NULL, *rcdefault = NULL;
	int rc = 0, exit_code = 0;

	if (argc < 2) {
		fputs(USAGE, stderr);
		return MENV_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		menv_cli_help(stdout, USAGE, "sITh");
		return 0;
	}
	sub = argv[1];
	if (!strcmp(sub, "completion")) {
		for (int i = 2; i < argc && !menv_cli_probe; i++)
			if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
				menv_cli_help(stdout,
				              "usage: menv shell completion bash|zsh|fish\n", "h");
				return 0;
			}
		return menv_cmd_completion(argc - 1, argv + 1);
	}
	const char *usage = USAGE, *accepts = "sITh";
	for (size_t i = 0; i < sizeof(subs) / sizeof(*subs); i++)
		if (!strcmp(sub, subs[i].sub)) {
			usage = subs[i].usage;
			accepts = subs[i].accepts;
		}
	if ((rc = menv_cli_parse(argc - 1, argv + 1, accepts, usage, 0, MENV_CLI_ANY, &a)))
		return MENV_CLI_EXIT(rc);
	if (a.shell && (rc = menv_shell_from_name(a.shell, &sh, &err)) != 0)
		goto out;
	const char *rcfile = a.rc_file;
	bool stack = a.stack;
	int nargs = (int)a.args.n;
	char **args = a.args.v;
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	exe = menv_self_exe();
	struct menv_activation act = {
	        .shell = sh,
	        .exe = exe,
	        .root_prefix = cfg.root_prefix,
	        .stack = stack,
	        .changeps1 = menv_config_changeps1(&cfg),
	        .environ = environ,
	};

	if (!strcmp(sub, "hook")) {
		menv_shell_hook(sh, exe, act.changeps1, &out);
	} else if (!strcmp(sub, "init") || !strcmp(sub, "deinit")) {
		bool changed = false, add = !strcmp(sub, "init");
		if (!rcfile)
			rcfile = rcdefault = menv_shell_rc_default(sh);
		if (!rcfile) {
			const char *h;
			rc = menv_home(&h, &err);
			menv_error_prefix(&err, "no %s rc file to %s (use --rc-file FILE)",
			                  menv_shell_name(sh), sub);
			goto out;
		}
		rc = menv_shell_rc_edit(rcfile, sh, exe, add, &changed, &err);
		if (rc)
			goto out;
		fprintf(stderr, "%s %s\n", changed ? "modified" : "no change", rcfile);
		if (changed && add)
			fprintf(stderr,
			        "open a new %s shell (or source %s) to use 'menv activate'\n",
			        menv_shell_name(sh), rcfile);
	} else if (!strcmp(sub, "activate")) {
		if (nargs > 1) {
			rc = menv_error_set(&err, MENV_EUSAGE,
			                    "activate takes one environment, got "
			                    "%d arguments",
			                    nargs);
			goto out;
		}
		rc = menv_env_locate(cfg.root_prefix, &cfg.envs_dirs, nargs ? args[0] : NULL,
		                     &prefix, &err);
		if (!rc)
			rc = menv_cli_recover(prefix, &err);
		if (!rc)
			rc = menv_activate(&act, prefix, &out, &err);
	} else if (!strcmp(sub, "deactivate")) {
		if (nargs) {
			rc = menv_error_set(&err, MENV_EUSAGE, "deactivate takes no arguments");
			goto out;
		}
		rc = menv_deactivate(&act, &out, &err);
	} else if (!strcmp(sub, "_continue")) {
		rc = menv_activate_continue(&act, &out, &err);
	} else {
		rc = menv_error_set(&err, MENV_EUSAGE, "unknown shell command '%s'", sub);
	}
	if (!rc && out.len)
		fwrite(out.buf, 1, out.len, stdout);
out:
	if (rc) {
		if (err.code == MENV_EUSAGE && !err.msg[0])
			fputs(USAGE, stderr);
		exit_code = menv_cli_fail(&err);
	}
	menv_buf_release(&out);
	menv_config_release(&cfg);
	free(rcdefault);
	free(prefix);
	free(exe);
	menv_cli_args_release(&a);
	return exit_code;
}

/* `menv activate` / `menv deactivate` run as a program: the shell function is missing. */
int menv_cmd_activate_nohook(int argc, char **argv)
{
	const char *name = menv_shell_name(menv_shell_default());
	bool act = !strcmp(argv[0], "activate");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") && strcmp(argv[i], "--help"))
			continue;
		menv_cli_help(
		        stdout,
		        act ? "usage: menv activate [--stack] [NAME|PREFIX]\n"
		              "(a shell function: set up with 'menv shell hook' or 'menv shell "
		              "init')\n"
		            : "usage: menv deactivate\n"
		              "(a shell function: set up with 'menv shell hook' or 'menv shell "
		              "init')\n",
		        act ? "Th" : "h");
		return 0;
	}
	fprintf(stderr,
	        "menv: error: 'menv %s' must run inside your shell: set up the hook with "
	        "'eval \"$(menv shell hook --shell %s)\"' or 'menv shell init --shell %s'\n",
	        argv[0], name, name);
	return MENV_EXIT_FAIL;
}
