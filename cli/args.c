/*
 * args.c - what every command shares: one table of options and its parser (git's
 * parse-options in one place), the command line for conda-meta/history, and errors as one
 * line and an exit code. Calls no command.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int menv_cli_argc;
char **menv_cli_argv;

int menv_cli_fail(const struct menv_error *err)
{
	fprintf(stderr, "menv: error: %s\n", err->msg[0] ? err->msg : menv_error_name(err->code));
	switch (err->code) {
	case MENV_EUSAGE: return MENV_EXIT_USAGE;
	case MENV_EINTR: return MENV_EXIT_INTERRUPTED;
	default: return MENV_EXIT_FAIL;
	}
}

/* Every option of the commands, once: long name, the key a command lists in its `accepts`
 * string, the short form (-n NAME; 0: none), where its value goes in struct menv_cli_args (a
 * string, a flag, a list, `value` into an int or as a bit, a KEY VALUE pair onto a list),
 * and the one line of text --help shows for it (with `arg` naming its value). */
enum kind { O_STR, O_FLAG, O_LIST, O_INT, O_REV, O_BIT, O_VIEW, O_PAIR };
#define AT(field) offsetof(struct menv_cli_args, field)
static const struct {
	const char *name;
	char key;
	char short_;
	enum kind kind;
	size_t at;
	int value;
	const char *arg;
	const char *help;
} options[] = {
        {"name", 'n', 'n', O_STR, AT(name), 0, "NAME",
         "the environment's name (base: the root prefix)"},
        {"prefix", 'p', 'p', O_STR, AT(prefix), 0, "PREFIX", "the environment's path"},
        {"file", 'f', 'f', O_STR, AT(file), 0, "FILE", "the file to read or write"},
        {"environment", 'e', 'e', O_STR, AT(env), 0, "ENV", "the lockfile's environment"},
        {"channel", 'c', 'c', O_LIST, AT(channels), 0, "CHANNEL",
         "a channel to use, before the configured ones (repeatable)"},
        {"quiet", 'q', 'q', O_FLAG, AT(quiet), 0, NULL, "print less"},
        {"verbose", 'v', 'v', O_FLAG, AT(verbose), 0, NULL, "print more"},
        {"yes", 'y', 'y', O_FLAG, AT(yes), 0, NULL, "do not ask for confirmation"},
        {"help", 'h', 'h', O_FLAG, AT(help), 0, NULL, "show this help"},
        {"dry-run", 'd', 'd', O_FLAG, AT(dry_run), 0, NULL, "only show what would be done"},
        {"tree", 't', 't', O_FLAG, AT(tree), 0, NULL, "show dependencies as a tree"},
        {"shell", 's', 's', O_STR, AT(shell), 0, "SHELL",
         "bash, zsh, fish or posix (default: from $SHELL)"},
        {"override-channels", 'O', 0, O_FLAG, AT(override_channels), 0, NULL,
         "use only the channels given with -c"},
        {"strict-channel-priority", 'S', 0, O_INT, AT(priority), 1, NULL,
         "take a package only from the first channel having it"},
        {"no-channel-priority", 'N', 0, O_INT, AT(priority), 2, NULL,
         "channel order does not rank packages"},
        {"json", 'j', 0, O_FLAG, AT(json), 0, NULL, "print the result as JSON on stdout"},
        {"offline", 'o', 0, O_FLAG, AT(offline), 0, NULL, "use only cached repodata and packages"},
        {"no-wait", 'W', 0, O_FLAG, AT(no_wait), 0, NULL,
         "fail at once when the environment is locked"},
        {"no-smoke-check", 'K', 0, O_FLAG, AT(no_smoke), 0, NULL,
         "skip the smoke check after the change"},
        {"smoke-check", '!', 0, O_FLAG, AT(smoke_check), 0, NULL,
         "run the smoke check even when its inputs are unchanged"},
        {"all", 'a', 0, O_FLAG, AT(all), 0, NULL, "every package"},
        {"all", '*', 0, O_FLAG, AT(all), 0, NULL, "every package: the whole environment"},
        {"all", '$', 0, O_BIT, AT(clean),
         MENV_CLEAN_TARBALLS | MENV_CLEAN_PACKAGES | MENV_CLEAN_INDEX | MENV_CLEAN_TEMP, NULL,
         "tarballs, packages, index cache and locks"},
        {"prune", 'P', 0, O_FLAG, AT(prune), 0, NULL,
         "remove packages the environment file no longer needs"},
        {"revision", 'r', 0, O_REV, AT(revision), 0, "N", "revision N of the history"},
        {"format", 'F', 0, O_STR, AT(format), 0, "FORMAT", "conda-lock, explicit or environment"},
        {"no-builds", 'B', 0, O_FLAG, AT(no_builds), 0, NULL, "leave build strings out"},
        {"from-history", 'H', 0, O_FLAG, AT(from_history), 0, NULL,
         "only the specs the user asked for"},
        {"revisions", 'R', 0, O_FLAG, AT(revisions), 0, NULL, "list the revisions of the history"},
        {"full-name", 'L', 0, O_FLAG, AT(full_name), 0, NULL, "match the package name exactly"},
        {"keep", 'k', 0, O_FLAG, AT(keep), 0, NULL, "keep the temporary build directory"},
        {"cwd", 'C', 0, O_STR, AT(cwd), 0, "DIR", "run the command in DIR"},
        {"env", 'X', 0, O_LIST, AT(sets), 0, "VAR=VALUE",
         "set a variable for the command (repeatable)"},
        {"clean-env", 'E', 0, O_FLAG, AT(clean_env), 0, NULL, "start from an empty environment"},
        {"rc-file", 'I', 0, O_STR, AT(rc_file), 0, "FILE", "the rc file to edit"},
        {"stack", 'T', 0, O_FLAG, AT(stack), 0, NULL, "keep the current environment on PATH"},
        {"show-channel-urls", 'U', 0, O_FLAG, AT(channel_urls), 0, NULL, "show channel URLs"},
        {"explicit", 'x', 0, O_FLAG, AT(explicit_), 0, NULL, "list URLs as an explicit lockfile"},
        {"md5", 'M', 0, O_FLAG, AT(md5), 0, NULL, "add #md5 to the --explicit URLs"},
        {"fix", 'Z', 0, O_FLAG, AT(fix), 0, NULL, "repair what can be repaired"},
        {"platform", 'Q', 'p', O_LIST, AT(platforms), 0, "PLATFORM",
         "a platform (subdir) to lock or mirror (repeatable)"},
        {"virtual-package", 'V', 0, O_LIST, AT(virtuals), 0, "SPEC",
         "a virtual package to solve with (repeatable)"},
        {"lockfile", 'l', 'l', O_STR, AT(lockfile), 0, "FILE", "the lockfile to write"},
        {"check", 'G', 0, O_FLAG, AT(check), 0, NULL, "only check that the lockfile is current"},
        {"freeze-installed", '0', 0, O_BIT, AT(modifiers), MENV_MOD_FREEZE_INSTALLED, NULL,
         "do not change installed packages"},
        {"no-update-deps", '1', 0, O_BIT, AT(modifiers), MENV_MOD_NO_UPDATE_DEPS, NULL,
         "do not update dependencies"},
        {"update-deps", '2', 0, O_BIT, AT(modifiers), MENV_MOD_UPDATE_DEPS, NULL,
         "update dependencies too"},
        {"update-specs", '3', 0, O_BIT, AT(modifiers), MENV_MOD_UPDATE_SPECS, NULL,
         "update the named packages only as needed"},
        {"update-all", '4', 0, O_BIT, AT(modifiers), MENV_MOD_UPDATE_ALL, NULL,
         "update every package"},
        {"force-reinstall", '5', 0, O_BIT, AT(modifiers), MENV_MOD_FORCE_REINSTALL, NULL,
         "reinstall even if installed"},
        {"no-deps", '6', 0, O_BIT, AT(modifiers), MENV_MOD_NO_DEPS, NULL,
         "do not install dependencies"},
        {"only-deps", '7', 0, O_BIT, AT(modifiers), MENV_MOD_ONLY_DEPS, NULL,
         "install only the dependencies"},
        {"force", '8', 0, O_BIT, AT(modifiers), MENV_MOD_FORCE, NULL,
         "remove: leave what depends on it; rename: replace the destination"},
        {"satisfied-skip-solve", '9', 0, O_BIT, AT(modifiers), MENV_MOD_SATISFIED_SKIP, NULL,
         "skip the solve when the specs are satisfied"},
        {"tarballs", 'b', 't', O_BIT, AT(clean), MENV_CLEAN_TARBALLS, NULL,
         "downloaded package files"},
        {"packages", 'g', 'p', O_BIT, AT(clean), MENV_CLEAN_PACKAGES, NULL,
         "extracted packages no environment uses"},
        {"index-cache", 'i', 'i', O_BIT, AT(clean), MENV_CLEAN_INDEX, NULL, "cached repodata"},
        {"locks", 'm', 'l', O_BIT, AT(clean), MENV_CLEAN_TEMP, NULL,
         "leftovers of interrupted downloads and extractions"},
        {"show", 'w', 0, O_VIEW, AT(config_view), 1 + MENV_CONFIG_SHOW, NULL,
         "show the settings (all, or KEY...)"},
        {"show-sources", 'D', 0, O_VIEW, AT(config_view), 1 + MENV_CONFIG_SOURCES, NULL,
         "show each settings file"},
        {"describe", 'J', 0, O_VIEW, AT(config_view), 1 + MENV_CONFIG_DESCRIBE, NULL,
         "describe the settings (all, or KEY...)"},
        {"get", 'A', 0, O_VIEW, AT(config_view), MENV_CLI_CFG_GET, NULL,
         "the file's values (all, or KEY...)"},
        {"set", 'Y', 0, O_PAIR, AT(config_ops[MENV_CONFIG_SET]), 0, "KEY VALUE", "set a value"},
        {"add", 'z', 0, O_PAIR, AT(config_ops[MENV_CONFIG_PREPEND]), 0, "KEY VALUE",
         "add to the front of a list"},
        {"prepend", 'u', 0, O_PAIR, AT(config_ops[MENV_CONFIG_PREPEND]), 0, "KEY VALUE",
         "add to the front of a list"},
        {"append", '@', 0, O_PAIR, AT(config_ops[MENV_CONFIG_APPEND]), 0, "KEY VALUE",
         "add to the end of a list"},
        {"remove", '#', 0, O_PAIR, AT(config_ops[MENV_CONFIG_REMOVE]), 0, "KEY VALUE",
         "take a value out of a list"},
        {"remove-key", '%', 0, O_LIST, AT(config_ops[MENV_CONFIG_REMOVE_KEY]), 0, "KEY",
         "take a key out"},
        {"env", '^', 0, O_FLAG, AT(env_rc), 0, NULL, "edit the active environment's .condarc"},
        {"system", '&', 0, O_FLAG, AT(system_rc), 0, NULL, "edit the root prefix's .condarc"},
};
#define NOPTIONS (sizeof(options) / sizeof(*options))

struct menv_strvec *menv_cli_probe;

static void probe_add(const char *w)
{
	if (!menv_strvec_contains(menv_cli_probe, w))
		menv_strvec_push(menv_cli_probe, w);
}

void menv_cli_help(FILE *f, const char *usage, const char *accepts)
{
	fputs(usage, f);
	fputs("\noptions:\n", f);
	for (size_t i = 0; i < NOPTIONS; i++) {
		if (!strchr(accepts, options[i].key))
			continue;
		char lhs[64];
		snprintf(lhs, sizeof(lhs), "%c%c%s--%s%s%s", options[i].short_ ? '-' : ' ',
		         options[i].short_ ? options[i].short_ : ' ',
		         options[i].short_ ? ", " : "  ", options[i].name,
		         options[i].arg ? " " : "", options[i].arg ? options[i].arg : "");
		fprintf(f, "  %-30s %s\n", lhs, options[i].help);
	}
}

int menv_cli_parse_count(const char *s, long max, long *out)
{
	long v = 0;
	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	for (; *s; s++) {
		if (v > (max - (*s - '0')) / 10)
			return -2;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return 0;
}

int menv_cli_parse(int argc, char **argv, const char *accepts, const char *usage, size_t min,
                   size_t max, struct menv_cli_args *a)
{
	/* a key names one option in the commands' accept strings: two options sharing one would
	 * each be taken where only the other belongs (remove took --set, config --smoke-check) */
	for (size_t i = 0; i < NOPTIONS; i++)
		for (size_t k = i + 1; k < NOPTIONS; k++)
			if (options[i].key == options[k].key) {
				fprintf(stderr,
				        "menv: internal error: --%s and --%s share the key '%c'\n",
				        options[i].name, options[k].name, options[i].key);
				return 2;
			}
	if (menv_cli_probe) {
		/* completion: the options this command takes, from this same table */
		for (size_t i = 0; i < NOPTIONS; i++) {
			if (!strchr(accepts, options[i].key))
				continue;
			char *w = menv_xasprintf("--%s", options[i].name);
			probe_add(w);
			free(w);
			if (options[i].short_) {
				char s[3] = {'-', options[i].short_, '\0'};
				probe_add(s);
			}
		}
		return 1;
	}
	struct option longopts[NOPTIONS + 1] = {{0}};
	char shorts[2 * NOPTIONS + 2] = "+"; /* '+': options end at the first operand */
	size_t nl = 0, ns = accepts[0] == '+' ? 1 : 0;
	char *base = (char *)a;
	int c;

	for (size_t i = 0; i < NOPTIONS; i++) {
		if (!strchr(accepts, options[i].key))
			continue;
		bool arg = options[i].kind == O_STR || options[i].kind == O_LIST ||
		           options[i].kind == O_REV || options[i].kind == O_PAIR;
		longopts[nl++] = (struct option){options[i].name, arg, NULL, (int)i + 256};
		if (options[i].short_) {
			shorts[ns++] = options[i].short_;
			if (arg)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = '\0';
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		size_t i = NOPTIONS;
		for (size_t k = 0; c < 256 && k < NOPTIONS; k++)
			if (options[k].short_ == c && strchr(accepts, options[k].key))
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
		case O_BIT: *(unsigned *)at |= (unsigned)options[i].value; break;
		case O_VIEW:
			if (*(int *)at) {
				fprintf(stderr, "menv: error: give one of --show, --show-sources, "
				                "--describe, --get\n");
				goto bad;
			}
			*(int *)at = options[i].value;
			break;
		case O_PAIR:
			/* KEY is optarg, VALUE the word after it */
			if (optind >= argc) {
				fprintf(stderr, "menv: error: --%s takes KEY VALUE\n",
				        options[i].name);
				goto bad;
			}
			menv_strvec_push(at, optarg);
			menv_strvec_push(at, argv[optind++]);
			break;
		case O_REV: {
			int k = menv_cli_parse_count(optarg, LONG_MAX, &a->revision);
			if (k) {
				fprintf(stderr, "menv: error: invalid revision '%s' (%s)\n", optarg,
				        k == -2 ? "no revision is that large"
				                : "a revision number: 0, 1, 2, ...");
				menv_cli_args_release(a);
				return -1;
			}
			a->has_revision = true;
			break;
		}
		}
		if (a->help) {
			menv_cli_help(stdout, usage, accepts);
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
	menv_strvec_clear(&a->platforms);
	menv_strvec_clear(&a->virtuals);
	for (size_t i = 0; i < MENV_CONFIG_NEDITS; i++)
		menv_strvec_clear(&a->config_ops[i]);
}
