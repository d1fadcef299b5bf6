/*
 * cmd_complete.c - `menv completion bash|zsh|fish` (also `menv shell completion SHELL`): the
 * completion script, generated from main.c's table of commands and the options each one
 * parses (args.c's table, probed through menv_cli_parse; hand-parsed commands push theirs),
 * written by the library (envs/complete.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Runs `fn` with argv {name, sub (or none), "--help"} under the probe, its output thrown
 * away (a command that does not reach the parser prints its usage). */
static void probe(const struct menv_cli_command *c, const char *sub, struct menv_strvec *opts)
{
	char *argv[] = {(char *)c->name, (char *)(sub ? sub : "--help"), (char *)"--help", NULL};
	int out = dup(STDOUT_FILENO), errfd = dup(STDERR_FILENO);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	fflush(NULL);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	menv_cli_probe = opts;
	c->fn(sub ? 3 : 2, argv);
	menv_cli_probe = NULL;
	fflush(NULL);
	if (out >= 0) {
		dup2(out, STDOUT_FILENO);
		close(out);
	}
	if (errfd >= 0) {
		dup2(errfd, STDERR_FILENO);
		close(errfd);
	}
}

int menv_cmd_completion(int argc, char **argv)
{
	struct menv_error err = {0};
	enum menv_shell sh;
	size_t n;
	const struct menv_cli_command *cmds = menv_cli_commands(&n);

	if (menv_cli_probe)
		return 0; /* probed itself: it takes a shell name only */
	bool help = false;
	for (int i = 1; i < argc; i++)
		help |= !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help");
	if (help || argc != 2 || argv[1][0] == '-') {
		const char *use = "usage: menv completion bash|zsh|fish\n"
		                  "  bash: eval \"$(menv completion bash)\" in ~/.bashrc\n";
		if (help)
			menv_cli_help(stdout, use, "h");
		else
			fputs(use, stderr);
		return help ? 0 : MENV_EXIT_USAGE;
	}
	if (menv_shell_from_name(argv[1], &sh, &err))
		return menv_cli_fail(&err);
	struct menv_completion_cmd *cc = menv_xcalloc(n, sizeof(*cc));
	for (size_t i = 0; i < n; i++) {
		cc[i].name = cmds[i].name;
		cc[i].help = cmds[i].help;
		probe(&cmds[i], NULL, &cc[i].opts);
		for (const char *s = cmds[i].subs; s && *s;) {
			size_t l = strcspn(s, " ");
			char *sub = menv_xstrndup(s, l);
			menv_strvec_push(&cc[i].subs, sub);
			probe(&cmds[i], sub, &cc[i].opts);
			free(sub);
			s += l + (s[l] == ' ');
		}
	}
	struct menv_buf out = MENV_BUF_INIT;
	menv_shell_completion(sh, "menv", cc, n, &out);
	fputs(out.buf, stdout);
	menv_buf_release(&out);
	for (size_t i = 0; i < n; i++) {
		menv_strvec_clear(&cc[i].subs);
		menv_strvec_clear(&cc[i].opts);
	}
	free(cc);
	return 0;
}
