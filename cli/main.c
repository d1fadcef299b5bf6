/*
 * main.c - the menv executable: a table of subcommands (git's commands[]), global options,
 * signal handling and the mapping of error codes to exit codes.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

volatile sig_atomic_t menv_cli_cancel;

static const struct menv_cli_command commands[] = {
        {"create", menv_cmd_create, "create an environment from specs or an environment file",
         NULL},
        {"list", menv_cmd_list, "list the packages of an environment", NULL},
        {"export", menv_cmd_export, "print an environment as a lockfile or environment.yml", NULL},
        {"lock", menv_cmd_lock, "solve an environment file for platforms into a lockfile", NULL},
        {"index", menv_cmd_index, "write repodata.json for a folder of packages", NULL},
        {"mirror", menv_cmd_mirror, "copy a channel or a lock's packages to a folder or oci://",
         NULL},
        {"info", menv_cmd_info, "show settings, locations and virtual packages", NULL},
        {"config", menv_cmd_config, "show, describe or change the settings (.condarc files)", NULL},
        {"clean", menv_cmd_clean, "free the package cache (tarballs, unused packages, index)",
         NULL},
        {"search", menv_cmd_search, "list the channels' packages matching a spec", NULL},
        {"repoquery", menv_cmd_repoquery, "a package's dependencies, or what depends on it",
         "depends whoneeds"},
        {"install", menv_cmd_install, "install packages into an environment (or --revision N)",
         NULL},
        {"remove", menv_cmd_remove, "remove packages (and what needs them) from an environment",
         NULL},
        {"update", menv_cmd_update, "update packages of an environment (--all: every package)",
         NULL},
        {"shell", menv_cmd_shell, "shell hook, init/deinit of rc files, activation, completion",
         "hook init deinit activate deactivate completion"},
        {"activate", menv_cmd_activate_nohook, "activate an environment (needs the shell hook)",
         NULL},
        {"deactivate", menv_cmd_activate_nohook, "deactivate the environment (needs the hook)",
         NULL},
        {"run", menv_cmd_run, "run a command in an environment", NULL},
        {"env", menv_cmd_env, "list, create, export, update or remove environments; config vars",
         "list create export update remove config"},
        {"rename", menv_cmd_rename, "rename an environment (a clone, then the original removed)",
         NULL},
        {"smoke", menv_cmd_smoke, "build and test the sample CUDA op in an environment", NULL},
        {"doctor", menv_cmd_doctor, "check an environment's records, files and toolchain", NULL},
        {"completion", menv_cmd_completion, "print the completion script of bash, zsh or fish",
         "bash zsh fish"},
};

const struct menv_cli_command *menv_cli_commands(size_t *n)
{
	*n = sizeof(commands) / sizeof(*commands);
	return commands;
}

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

int main(int argc, char **argv)
{
	struct sigaction sa;

	/* `menv ... >&-`: a closed standard descriptor is held by /dev/null (read only, so a
	 * write to it still fails and is reported at the end with its reason) before any file
	 * is opened, so none of them can become "standard output" */
	menv_std_fds_open();
	menv_cli_argc = argc;
	menv_cli_argv = argv;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN); /* past RLIMIT_FSIZE a write fails (EFBIG), named, not a kill */
	menv_cancel_flag_set(MENV_CLI_CANCEL); /* the parsers poll it too */
	menv_installed_paths();

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
		if (!strcmp(argv[1], commands[i].name)) {
			/* what killed runs left under $TMPDIR goes (the shell's per-prompt calls
			 * skip the readdir) */
			if (strcmp(argv[1], "shell") && strcmp(argv[1], "completion"))
				menv_tmp_sweep();
			int rc = commands[i].fn(argc - 1, argv + 1);
			struct menv_error out = {0};
			if (menv_error_stream(stdout, &out) && !rc) /* output cut short */
				rc = menv_cli_fail(&out);
			if (!rc && menv_cli_cancel) /* past the command's last look at the flag */
				fputs("menv: error: interrupted, but the command finished\n",
				      stderr);
			return !rc && menv_cli_cancel ? MENV_EXIT_INTERRUPTED : rc;
		}
	fprintf(stderr, "menv: error: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return MENV_EXIT_USAGE;
}
