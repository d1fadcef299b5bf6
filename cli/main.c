/*
 * main.c - the menv executable: a table of subcommands (git's commands[]), global options,
 * signal handling and the mapping of error codes to exit codes.
 */
#include <getopt.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Every option of the commands, once: long name, the key a command lists in its `accepts`
 * string (also the short form, -n NAME, where `shorthand`), and where its value goes in
 * struct menv_cli_args: a string, a flag, a list, or `value` into an int. */
enum kind { O_STR, O_FLAG, O_LIST, O_INT, O_REV };
#define AT(field) offsetof(struct menv_cli_args, field)
static const struct {
	const char *name;
	char key;
	bool shorthand;
	enum kind kind;
	size_t at;
	int value;
} options[] = {
        {"name", 'n', true, O_STR, AT(name), 0},
        {"prefix", 'p', true, O_STR, AT(prefix), 0},
        {"file", 'f', true, O_STR, AT(file), 0},
        {"environment", 'e', true, O_STR, AT(env), 0},
        {"channel", 'c', true, O_LIST, AT(channels), 0},
        {"quiet", 'q', true, O_FLAG, AT(quiet), 0},
        {"verbose", 'v', true, O_FLAG, AT(verbose), 0},
        {"yes", 'y', true, O_FLAG, AT(yes), 0},
        {"help", 'h', true, O_FLAG, AT(help), 0},
        {"dry-run", 'd', true, O_FLAG, AT(dry_run), 0},
        {"tree", 't', true, O_FLAG, AT(tree), 0},
        {"shell", 's', true, O_STR, AT(shell), 0},
        {"override-channels", 'O', false, O_FLAG, AT(override_channels), 0},
        {"strict-channel-priority", 'S', false, O_INT, AT(priority), 1},
        {"no-channel-priority", 'N', false, O_INT, AT(priority), 2},
        {"json", 'j', false, O_FLAG, AT(json), 0},
        {"offline", 'o', false, O_FLAG, AT(offline), 0},
        {"no-wait", 'W', false, O_FLAG, AT(no_wait), 0},
        {"no-smoke-check", 'K', false, O_FLAG, AT(no_smoke), 0},
        {"all", 'a', false, O_FLAG, AT(all), 0},
        {"prune", 'P', false, O_FLAG, AT(prune), 0},
        {"revision", 'r', false, O_REV, AT(revision), 0},
        {"format", 'F', false, O_STR, AT(format), 0},
        {"no-builds", 'B', false, O_FLAG, AT(no_builds), 0},
        {"from-history", 'H', false, O_FLAG, AT(from_history), 0},
        {"revisions", 'R', false, O_FLAG, AT(revisions), 0},
        {"full-name", 'L', false, O_FLAG, AT(full_name), 0},
        {"keep", 'k', false, O_FLAG, AT(keep), 0},
        {"cwd", 'C', false, O_STR, AT(cwd), 0},
        {"env", 'X', false, O_LIST, AT(sets), 0},
        {"clean-env", 'E', false, O_FLAG, AT(clean_env), 0},
        {"rc-file", 'I', false, O_STR, AT(rc_file), 0},
        {"stack", 'T', false, O_FLAG, AT(stack), 0},
};
#define NOPTIONS (sizeof(options) / sizeof(*options))

int menv_cli_parse(int argc, char **argv, const char *accepts, const char *usage, size_t min,
                   size_t max, struct menv_cli_args *a)
{
	struct option longopts[NOPTIONS + 1] = {{0}};
	char shorts[2 * NOPTIONS + 2] = "+"; /* '+': options end at the first operand */
	size_t nl = 0, ns = accepts[0] == '+' ? 1 : 0;
	char *end, *base = (char *)a;
	int c;

	for (size_t i = 0; i < NOPTIONS; i++) {
		if (!strchr(accepts, options[i].key))
			continue;
		bool arg = options[i].kind == O_STR || options[i].kind == O_LIST ||
		           options[i].kind == O_REV;
		longopts[nl++] = (struct option){options[i].name, arg, NULL, (int)i + 256};
		if (options[i].shorthand) {
			shorts[ns++] = options[i].key;
			if (arg)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = '\0';
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		size_t i = NOPTIONS;
		for (size_t k = 0; c < 256 && k < NOPTIONS; k++)
			if (options[k].key == c && options[k].shorthand)
				i = k;
		i = c >= 256 ? (size_t)c - 256 : i;
		if (i >= NOPTIONS)
			goto bad;
		void *at = base + options[i].at;
		switch (options[i].kind) {
		case O_STR: *(const char **)at = optarg; break;
		case O_FLAG: *(bool *)at = true; break;
		case O_LIST: menv_strvec_push(at, optarg); break;
		case O_INT: *(int *)at = options[i].value; break;
		case O_REV:
			a->revision = strtol(optarg, &end, 10);
			if (*end || a->revision < 0) {
				fprintf(stderr, "menv: error: invalid revision '%s'\n", optarg);
				menv_cli_args_release(a);
				return -1;
			}
			a->has_revision = true;
			break;
		}
		if (a->help) {
			printf("%s", usage);
			menv_cli_args_release(a);
			return 1;
		}
	}
	for (int i = optind; i < argc; i++)
		menv_strvec_push(&a->args, argv[i]);
	if (a->args.n >= min && a->args.n <= max)
		return 0;
bad:
	fprintf(stderr, "%s", usage);
	menv_cli_args_release(a);
	return -1;
}

void menv_cli_args_release(struct menv_cli_args *a)
{
	menv_strvec_clear(&a->channels);
	menv_strvec_clear(&a->sets);
	menv_strvec_clear(&a->args);
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
