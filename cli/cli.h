/*
 * cli.h - the menv executable's subcommands (git's builtin.h pattern). Each command parses its
 * own argv with getopt_long, calls libmenv, renders the result and returns the exit code.
 * Only the CLI prints errors.
 */
#ifndef MENV_CLI_H
#define MENV_CLI_H

#include <signal.h>

#include "specs.h"

/* Exit codes */
#define MENV_EXIT_OK 0
#define MENV_EXIT_FAIL 1
#define MENV_EXIT_USAGE 2
#define MENV_EXIT_INTERRUPTED 130

/* Set by SIGINT/SIGTERM; long operations poll it and roll back. */
extern volatile sig_atomic_t menv_cli_cancel;

/* Prints "menv: <msg>" (one line) on stderr and returns the exit code for err->code. */
int menv_cli_fail(const struct menv_error *err);
/* The full command line as one string, for conda-meta/history. Caller frees. */
char *menv_cli_cmdline(void);
/* Resolves -n NAME / -p PREFIX to an absolute prefix path. Caller frees. NULL + err when
 * neither or both are given. */
char *menv_cli_prefix(const struct menv_config *cfg, const char *name, const char *prefix,
		      struct menv_error *err);

int menv_cmd_create(int argc, char **argv);
int menv_cmd_list(int argc, char **argv);
int menv_cmd_export(int argc, char **argv);
int menv_cmd_index(int argc, char **argv);
int menv_cmd_info(int argc, char **argv);

#endif
