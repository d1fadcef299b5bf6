/*
 * cli.h - the menv executable: argv (one table of commands, main.c), drawing what libmenv
 * reports (render.c) and exit codes. Each command parses its options, calls the library and
 * draws the result; only the CLI prints. Changing environments is one call chain into
 * envs/'s transaction engine (cmd_change.c).
 */
#ifndef MENV_CLI_H
#define MENV_CLI_H

#include <signal.h>
#include <stdio.h>

#include "envs.h"

/* "s" after a count of anything but one ("1 package", "2 packages") */
#define MENV_CLI_S(n) ((n) == 1 ? "" : "s")

/* Exit codes */
#define MENV_EXIT_OK          0
#define MENV_EXIT_FAIL        1
#define MENV_EXIT_USAGE       2
#define MENV_EXIT_INTERRUPTED 130

/* Set by SIGINT/SIGTERM; the library polls it (opts.cancel) and rolls back. */
extern volatile sig_atomic_t menv_cli_cancel;
#define MENV_CLI_CANCEL ((volatile int *)&menv_cli_cancel)

/* args.c */
extern int menv_cli_argc; /* main's argc and argv, for menv_cli_cmdline */
extern char **menv_cli_argv;
/* config_view: 0 (none), 1 + a library view (enum menv_config_view), or --get */
#define MENV_CLI_CFG_GET (MENV_CONFIG_DESCRIBE + 2)
/* What a command's options said (main.c's one table of options). */
struct menv_cli_args {
	const char *name, *prefix, *file, *env, *format, *cwd, *shell, *rc_file, *lockfile;
	struct menv_strvec channels;            /* -c, in order */
	struct menv_strvec sets;                /* run --env VAR=VALUE */
	struct menv_strvec args;                /* the operands */
	struct menv_strvec platforms, virtuals; /* lock --platform, --virtual-package */
	bool override_channels, dry_run, json, quiet, verbose, no_wait, all, prune, offline;
	bool no_smoke, smoke_check, has_revision, revisions, full_name, no_builds, from_history,
	        tree, keep;
	bool clean_env, stack, yes, help, channel_urls, explicit_, md5, fix, check;
	long revision;
	int priority;       /* 0: from the settings, 1: --strict-channel-priority, 2: --no-... */
	unsigned modifiers; /* MENV_MOD_* (--freeze-installed ...) */
	unsigned clean;     /* clean's MENV_CLEAN_* (--tarballs ...) */
	int config_view;    /* config's view: MENV_CLI_CFG_GET's comment */
	bool env_rc, system_rc;                            /* config --env, --system */
	struct menv_strvec config_ops[MENV_CONFIG_NEDITS]; /* config's edits: KEY VALUE pairs
	                                                    (KEY alone for --remove-key) */
};
/* Parses argv[1..] for the options whose keys `accepts` lists (a leading '+': options end at
 * the first operand), with min..max operands. Returns 0 (release `a` with
 * menv_cli_args_release), or 1 after printing `usage` for --help, -1 after printing it on
 * stderr for a wrong option or operand count (`a` released; MENV_CLI_EXIT gives the exit
 * code). */
int menv_cli_parse(int argc, char **argv, const char *accepts, const char *usage, size_t min,
                   size_t max, struct menv_cli_args *a);
#define MENV_CLI_ANY ((size_t)-1)
/* The one parser of a number the user gives menv's front end (an option's value such as
 * --revision N, $COLUMNS): decimal digits only, no sign, space or other text, at most `max`.
 * 0 with *out set; -1 when `s` is no such number, -2 when it is one larger than `max` (strtol
 * clamped "99999999999999999999" to LONG_MAX, which was then reported as if the user had
 * typed it): the caller's message names `s` as typed. */
int menv_cli_parse_count(const char *s, long max, long *out);
/* A command's --help: `usage`, then "options:" and one line for each option whose key
 * `accepts` lists (its short and long form, its value's name, its one line of text from
 * args.c's table), in the table's order. */
void menv_cli_help(FILE *f, const char *usage, const char *accepts);
/* Completion probe (cmd_complete.c): while non-NULL, menv_cli_parse appends the options
 * `accepts` names ("--name", then "-n" for a shorthand) to it, each once, and returns 1
 * without parsing or printing. */
extern struct menv_strvec *menv_cli_probe;
#define MENV_CLI_EXIT(rc) ((rc) > 0 ? MENV_EXIT_OK : MENV_EXIT_USAGE)
void menv_cli_args_release(struct menv_cli_args *a);
/* main.c's table of commands: name, entry point, one-line help, its subcommands (words
 * separated by blanks, or NULL). */
struct menv_cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
	const char *subs;
};
const struct menv_cli_command *menv_cli_commands(size_t *n);
/* Prints "menv: <msg>" (one line) on stderr and returns the exit code for err->code. */
int menv_cli_fail(const struct menv_error *err);
/* The full command line as one string, for conda-meta/history. Caller frees. */
#define menv_cli_cmdline() menv_history_cmdline(menv_cli_argc, menv_cli_argv)

/* menv_txn_recover drawn on stderr (every command that reads an environment calls it). */
int menv_cli_recover(const char *prefix, struct menv_error *err);
/* menv_env_prefix_find, and menv_cli_recover of the prefix found when an interrupted
 * `rename --force` set it aside (menv_env_replaced_pending): for the commands that read an
 * environment without a transaction. A new string, or NULL with `err` set. */
char *menv_cli_prefix(const struct menv_config *cfg, const char *name, const char *path,
                      struct menv_error *err);
/* Prints each line as "menv: warning: ..." on stderr and clears the vector. */
void menv_cli_warnings(struct menv_strvec *warnings);

/* table.c: text tables fitted to the terminal (list, search; the plan uses the same width) */
/* The terminal's width on stdout, else $COLUMNS, else 0 (no limit). */
size_t menv_cli_term_width(void);
/* The rows of `menv list` and `menv search` (objects with name, version, build_string and
 * channel, borrowed) as a table on stdout under "# Name Version Build Channel": columns sized
 * to their content, one blank apart, no trailing blanks; when a row would be wider than
 * menv_cli_term_width, the channel column gives way first, then the build, each down to 12
 * columns, their cells shortened in the middle (menv_utf8_fit). */
void menv_cli_packages(json_t *rows);

/* render.c: drawing what the library reports */
struct menv_cli_draw {
	bool quiet, json, verbose;
	bool bars;        /* download bars on a terminal (then no per-package lines) */
	json_t *messages; /* non-NULL: package messages are collected here (--json) */
	double start;     /* progress: when the first bar was drawn */
	size_t lines;     /* progress: per-download lines drawn above the overall bar */
	bool bars_ended;
};
#define MENV_CLI_PROGRESS_ROWS 8
/* Fills `cb` with the CLI's drawing callbacks, `d` their state. */
void menv_cli_draw_init(struct menv_cli_draw *d, struct menv_txn_callbacks *cb, bool quiet,
                        bool json, bool verbose);
void menv_cli_on_event(void *ud, enum menv_env_event ev, const char *msg);
/* The txn's confirm callback: asks "Proceed ([y]/n)?" on stdout, reads stdin. */
bool menv_cli_confirm(void *ud, const struct menv_txn_plan *plan);
void menv_cli_on_smoke(void *ud, enum menv_smoke_event ev, const struct menv_smoke_step *st,
                       const char *line);
/* The line after a smoke check; returns the exit code (0 passed, 1 failed). */
int menv_cli_smoke_verdict(const struct menv_cli_draw *d, const struct menv_smoke_result *res,
                           bool record_failed);
/* The plan as a table on stdout: Install / Upgrade / Downgrade / Change / Reinstall /
 * Remove, rows sorted by name, columns sized to their content and fitted to the terminal,
 * `Cached` for what the package cache holds, the total download. */
void menv_cli_print_plan(const struct menv_txn_plan *p);
/* Prints `s` (a string the library made) on stdout and frees it. */
void menv_cli_put_text(char *s);
/* Prints `j` indented (keys sorted, or in their order) and releases it. */
void menv_cli_put_json(json_t *j, bool sort_keys);

/* The commands: cmd_change.c (create, install, remove, update, env update), one file each
 * for the others */
int menv_cmd_create(int argc, char **argv);
int menv_cmd_install(int argc, char **argv);
int menv_cmd_remove(int argc, char **argv);
int menv_cmd_update(int argc, char **argv);
int menv_cmd_env_update(int argc, char **argv);
int menv_cmd_env_remove(int argc, char **argv);
int menv_cmd_rename(int argc, char **argv);
int menv_cmd_config(int argc, char **argv);
int menv_cmd_completion(int argc, char **argv);
int menv_cmd_list(int argc, char **argv);
int menv_cmd_export(int argc, char **argv);
int menv_cmd_lock(int argc, char **argv);
int menv_cmd_index(int argc, char **argv);
int menv_cmd_mirror(int argc, char **argv);
int menv_cmd_info(int argc, char **argv);
int menv_cmd_search(int argc, char **argv);
int menv_cmd_repoquery(int argc, char **argv);
int menv_cmd_clean(int argc, char **argv);
int menv_cmd_shell(int argc, char **argv);
int menv_cmd_activate_nohook(int argc, char **argv);
int menv_cmd_run(int argc, char **argv);
int menv_cmd_env(int argc, char **argv);
int menv_cmd_smoke(int argc, char **argv);
int menv_cmd_doctor(int argc, char **argv);

#endif
