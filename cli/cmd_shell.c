/*
 * cmd_shell.c - `menv shell hook|init|deinit|activate|deactivate`: the shell integration. The
 * hook defines a `menv` shell function; `menv activate ENV` in the shell runs
 * `menv shell activate --shell S ENV` and evals the code it prints (envs/activate.c writes
 * it). `menv activate` run as a program (no hook) explains how to set the hook up.
 */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "envs.h"

extern char **environ;

char *menv_cli_self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return menv_xstrdup("menv");
	buf[n] = '\0';
	return menv_xstrdup(buf);
}

/* changeps1 (default true): $MENV_CHANGEPS1 or $CONDA_CHANGEPS1, else the last top-level
 * `changeps1:` of the rc files that were read. */
bool menv_cli_changeps1(const struct menv_config *cfg)
{
	const char *env = getenv("MENV_CHANGEPS1");
	bool v = true;

	if (!env)
		env = getenv("CONDA_CHANGEPS1");
	if (env && *env)
		return !(!strcasecmp(env, "false") || !strcasecmp(env, "no") ||
		         !strcasecmp(env, "off") || !strcmp(env, "0"));
	for (size_t i = 0; i < cfg->files.n; i++) {
		FILE *f = fopen(cfg->files.v[i], "r");
		char line[512];
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "changeps1:", 10))
				continue;
			char *s = line + 10;
			while (*s == ' ' || *s == '\t')
				s++;
			size_t n = strcspn(s, " \t\r\n#");
			s[n] = '\0';
			if (!strcasecmp(s, "false") || !strcasecmp(s, "no") ||
			    !strcasecmp(s, "off"))
				v = false;
			else if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") ||
			         !strcasecmp(s, "on"))
				v = true;
		}
		fclose(f);
	}
	return v;
}

/* The shell named by $SHELL when it is one menv knows, else posix. */
static enum menv_shell default_shell(void)
{
	const char *sh = getenv("SHELL");
	const char *base = sh ? strrchr(sh, '/') : NULL;
	enum menv_shell out = MENV_SHELL_POSIX;
	if (base)
		menv_shell_from_name(base + 1, &out, NULL);
	return out;
}

static char *default_rc_file(enum menv_shell sh)
{
	const char *home = getenv("HOME");
	const char *zd = getenv("ZDOTDIR"), *xdg = getenv("XDG_CONFIG_HOME");
	if (!home)
		home = ".";
	switch (sh) {
	case MENV_SHELL_BASH: return menv_xasprintf("%s/.bashrc", home);
	case MENV_SHELL_ZSH: return menv_xasprintf("%s/.zshrc", zd && *zd ? zd : home);
	case MENV_SHELL_FISH:
		if (xdg && *xdg)
			return menv_xasprintf("%s/fish/config.fish", xdg);
		return menv_xasprintf("%s/.config/fish/config.fish", home);
	default: return menv_xasprintf("%s/.profile", home);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: menv shell hook [--shell bash|zsh|fish|posix]\n"
	           "       menv shell init [--shell S] [--rc-file FILE]\n"
	           "       menv shell deinit [--shell S] [--rc-file FILE]\n"
	           "       menv shell activate [--shell S] [--stack] [NAME|PREFIX]\n"
	           "       menv shell deactivate [--shell S]\n"
	           "\nset-up:  eval \"$(menv shell hook --shell bash)\"   then   menv activate "
	           "NAME\n");
}

int menv_cmd_shell(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"shell", required_argument, NULL, 's'},
	        {"rc-file", required_argument, NULL, 'r'},
	        {"stack", no_argument, NULL, 'S'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_buf out = MENV_BUF_INIT;
	enum menv_shell sh = default_shell();
	const char *rcfile = NULL, *sub;
	char *exe = NULL, *prefix = NULL, *rcdefault = NULL;
	bool stack = false;
	int c, rc = 0, exit_code = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? MENV_EXIT_USAGE : 0;
	}
	sub = argv[1];
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			rc = menv_shell_from_name(optarg, &sh, &err);
			if (rc)
				goto out;
			break;
		case 'r': rcfile = optarg; break;
		case 'S': stack = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return MENV_EXIT_USAGE;
		}
	}
	int nargs = argc - 1 - optind;
	char **args = argv + 1 + optind;
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	exe = menv_cli_self_exe();
	struct menv_activation act = {
	        .shell = sh,
	        .exe = exe,
	        .root_prefix = cfg.root_prefix,
	        .stack = stack,
	        .changeps1 = menv_cli_changeps1(&cfg),
	        .environ = environ,
	};

	if (!strcmp(sub, "hook")) {
		menv_shell_hook(sh, exe, act.changeps1, &out);
	} else if (!strcmp(sub, "init") || !strcmp(sub, "deinit")) {
		bool changed = false, add = !strcmp(sub, "init");
		if (!rcfile)
			rcfile = rcdefault = default_rc_file(sh);
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
		rc = menv_env_locate(cfg.root_prefix, cfg.envs_dir, nargs ? args[0] : NULL, &prefix,
		                     &err);
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
			usage(stderr);
		exit_code = menv_cli_fail(&err);
	}
	menv_buf_release(&out);
	menv_config_release(&cfg);
	free(rcdefault);
	free(prefix);
	free(exe);
	return exit_code;
}

/* `menv activate` / `menv deactivate` run as a program: the shell function is missing. */
int menv_cmd_activate_nohook(int argc, char **argv)
{
	(void)argc;
	const char *name = menv_shell_name(default_shell());
	fprintf(stderr,
	        "menv: error: 'menv %s' must run inside your shell: set up the hook with "
	        "'eval \"$(menv shell hook --shell %s)\"' or 'menv shell init --shell %s'\n",
	        argv[0], name, name);
	return MENV_EXIT_FAIL;
}
