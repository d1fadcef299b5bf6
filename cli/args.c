/*
 * args.c - what every command shares: one table of options and its parser (git's
 * parse-options in one place), the command line for conda-meta/history, and errors as one
 * line and an exit code. Calls no command.
 */
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

char *menv_cli_cmdline(void)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, "menv");
	for (int i = 1; i < menv_cli_argc; i++) {
		menv_buf_addch(&b, ' ');
		if (strpbrk(menv_cli_argv[i], " \t'\"$"))
			menv_buf_addf(&b, "'%s'", menv_cli_argv[i]);
		else
			menv_buf_adds(&b, menv_cli_argv[i]);
	}
	return menv_buf_detach(&b);
}

/* Every option of the commands, once: long name, the key a command lists in its `accepts`
 * string (also the short form, -n NAME, where `shorthand`), and where its value goes in
 * struct menv_cli_args: a string, a flag, a list, or `value` into an int. */
enum kind { O_STR, O_FLAG, O_LIST, O_INT, O_REV, O_BIT };
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
        {"smoke-check", 'Y', false, O_FLAG, AT(smoke_check), 0},
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
        {"show-channel-urls", 'U', false, O_FLAG, AT(channel_urls), 0},
        {"explicit", 'x', false, O_FLAG, AT(explicit_), 0},
        {"md5", 'M', false, O_FLAG, AT(md5), 0},
        {"fix", 'Z', false, O_FLAG, AT(fix), 0},
        {"platform", 'Q', false, O_LIST, AT(platforms), 0},
        {"virtual-package", 'V', false, O_LIST, AT(virtuals), 0},
        {"lockfile", 'l', true, O_STR, AT(lockfile), 0},
        {"check", 'G', false, O_FLAG, AT(check), 0},
        {"freeze-installed", '0', false, O_BIT, AT(modifiers), MENV_MOD_FREEZE_INSTALLED},
        {"no-update-deps", '1', false, O_BIT, AT(modifiers), MENV_MOD_NO_UPDATE_DEPS},
        {"update-deps", '2', false, O_BIT, AT(modifiers), MENV_MOD_UPDATE_DEPS},
        {"update-specs", '3', false, O_BIT, AT(modifiers), MENV_MOD_UPDATE_SPECS},
        {"update-all", '4', false, O_BIT, AT(modifiers), MENV_MOD_UPDATE_ALL},
        {"force-reinstall", '5', false, O_BIT, AT(modifiers), MENV_MOD_FORCE_REINSTALL},
        {"no-deps", '6', false, O_BIT, AT(modifiers), MENV_MOD_NO_DEPS},
        {"only-deps", '7', false, O_BIT, AT(modifiers), MENV_MOD_ONLY_DEPS},
        {"force", '8', false, O_BIT, AT(modifiers), MENV_MOD_FORCE},
        {"satisfied-skip-solve", '9', false, O_BIT, AT(modifiers), MENV_MOD_SATISFIED_SKIP},
};
#define NOPTIONS (sizeof(options) / sizeof(*options))

struct menv_strvec *menv_cli_probe;

static void probe_add(const char *w)
{
	if (!menv_strvec_contains(menv_cli_probe, w))
		menv_strvec_push(menv_cli_probe, w);
}

void menv_cli_probe_getopt(const struct option *lo)
{
	for (; lo->name; lo++) {
		char *w = menv_xasprintf("--%s", lo->name);
		probe_add(w);
		free(w);
	}
}

void menv_cli_probe_words(const char *const *words)
{
	for (; *words; words++)
		probe_add(*words);
}

int menv_cli_parse(int argc, char **argv, const char *accepts, const char *usage, size_t min,
                   size_t max, struct menv_cli_args *a)
{
	if (menv_cli_probe) {
		/* completion: the options this command takes, from this same table */
		for (size_t i = 0; i < NOPTIONS; i++) {
			if (!strchr(accepts, options[i].key))
				continue;
			char *w = menv_xasprintf("--%s", options[i].name);
			probe_add(w);
			free(w);
			if (options[i].shorthand) {
				char s[3] = {'-', options[i].key, '\0'};
				probe_add(s);
			}
		}
		return 1;
	}
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
		case O_BIT: *(unsigned *)at |= (unsigned)options[i].value; break;
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
	menv_strvec_clear(&a->platforms);
	menv_strvec_clear(&a->virtuals);
}

char *menv_cli_self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return menv_xstrdup("menv");
	buf[n] = '\0';
	return menv_xstrdup(buf);
}
