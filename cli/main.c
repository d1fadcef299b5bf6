/*
 * main.c - the menv executable: a table of subcommands (git's commands[]), global options,
 * signal handling and the mapping of error codes to exit codes.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

volatile sig_atomic_t menv_cli_cancel;

static int g_argc;
static char **g_argv;

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
        {"create", menv_cmd_create, "create an environment from specs or an environment file"},
        {"list", menv_cmd_list, "list the packages of an environment"},
        {"export", menv_cmd_export, "print an environment as a lockfile or environment.yml"},
        {"lock", menv_cmd_lock, "solve an environment file for platforms into a lockfile"},
        {"index", menv_cmd_index, "write repodata.json for a folder of packages"},
        {"info", menv_cmd_info, "show settings, locations and virtual packages"},
        {"clean", menv_cmd_clean, "free the package cache (tarballs, unused packages, index)"},
        {"search", menv_cmd_search, "list the channels' packages matching a spec"},
        {"repoquery", menv_cmd_repoquery, "a package's dependencies, or what depends on it"},
        {"install", menv_cmd_install, "install packages into an environment (or --revision N)"},
        {"remove", menv_cmd_remove, "remove packages (and what needs them) from an environment"},
        {"update", menv_cmd_update, "update packages of an environment (--all: every package)"},
        {"shell", menv_cmd_shell, "shell hook, init/deinit of rc files, activation code"},
        {"activate", menv_cmd_activate_nohook, "activate an environment (needs the shell hook)"},
        {"deactivate", menv_cmd_activate_nohook, "deactivate the environment (needs the hook)"},
        {"run", menv_cmd_run, "run a command in an environment"},
        {"env", menv_cmd_env, "list environments; env config vars list|set|unset"},
        {"smoke", menv_cmd_smoke, "build and test the sample CUDA op in an environment"},
};

static void on_signal(int sig)
{
	(void)sig;
	menv_cli_cancel = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: menv [--version] [--help] <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nrun 'menv <command> --help' for a command's options\n");
}

int menv_cli_fail(const struct menv_error *err)
{
	fprintf(stderr, "menv: error: %s\n", err->msg[0] ? err->msg : menv_error_name(err->code));
	switch (err->code) {
	case MENV_EUSAGE: return MENV_EXIT_USAGE;
	case MENV_EINTR: return MENV_EXIT_INTERRUPTED;
	default: return MENV_EXIT_FAIL;
	}
}

char *menv_cli_cmdline(void)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, "menv");
	for (int i = 1; i < g_argc; i++) {
		menv_buf_addch(&b, ' ');
		if (strpbrk(g_argv[i], " \t'\"$"))
			menv_buf_addf(&b, "'%s'", g_argv[i]);
		else
			menv_buf_adds(&b, g_argv[i]);
	}
	return menv_buf_detach(&b);
}

char *menv_cli_file_once(const char *path, struct menv_error *err)
{
	struct stat sb;
	struct menv_buf b = MENV_BUF_INIT;
	char *tmp = NULL;

	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		return NULL;
	/* a pipe (`-f /dev/stdin`, `-f <(...)`) can be read once: menv reads a file more than
	 * once (to tell a lockfile from an environment file, then to load it) */
	if (menv_buf_read_file(&b, path, err))
		return NULL;
	const char *dir = getenv("TMPDIR");
	tmp = menv_xasprintf("%s/menv-file-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0 || (b.len && write(fd, b.buf, b.len) != (ssize_t)b.len)) {
		menv_error_sys(err, MENV_EIO, "cannot keep a copy of '%s'", path);
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		tmp = NULL;
	} else {
		close(fd);
	}
	menv_buf_release(&b);
	return tmp;
}

char *menv_cli_prefix(const struct menv_config *cfg, const char *name, const char *prefix,
                      struct menv_error *err)
{
	if (name && prefix) {
		menv_error_set(err, MENV_EUSAGE, "give either -n NAME or -p PREFIX, not both");
		return NULL;
	}
	if (name) {
		/* conda's rule ('/', ' ', ':', '#' not allowed), and no leading '-' (it would
		 * read as an option to `menv activate`) */
		if (!*name || strpbrk(name, "/ :#") || name[0] == '-' || !strcmp(name, ".") ||
		    !strcmp(name, "..")) {
			menv_error_set(err, MENV_EUSAGE,
			               "invalid environment name '%s': it may not start with '-' "
			               "nor contain '/', ' ', ':' or '#'",
			               name);
			return NULL;
		}
		return menv_xasprintf("%s/%s", cfg->envs_dir, name);
	}
	if (prefix) {
		char cwd[PATH_MAX];
		if (prefix[0] == '/')
			return menv_xstrdup(prefix);
		if (!getcwd(cwd, sizeof(cwd))) {
			menv_error_sys(err, MENV_EIO, "cannot read the current directory");
			return NULL;
		}
		char *p = menv_xasprintf("%s/%s", cwd, prefix);
		size_t n = strlen(p);
		while (n > 1 && p[n - 1] == '/')
			p[--n] = '\0';
		return p;
	}
	menv_error_set(err, MENV_EUSAGE, "no environment given: use -n NAME or -p PREFIX");
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	g_argc = argc;
	g_argv = argv;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (argc < 2) {
		usage(stderr);
		return MENV_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("menv %s\n", MENV_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "menv: error: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return MENV_EXIT_USAGE;
}
