/*
 * child.h - child processes of a transaction (link scripts, compileall, pip): each runs in a
 * process group of its own under a small supervisor that dies with menv and takes the group
 * with it. Private to envs/.
 */
#ifndef MENV_CHILD_H
#define MENV_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "specs.h"

/* fork(2) for a child program (DESIGN.md "Children run in their own process group, die with
 * menv and are stopped by Ctrl-C"). Returns -1 (errno) when it cannot fork; in menv the pid
 * of a supervisor process; in the program's process 0, where the caller sets up its
 * descriptors and environment and calls execve (async-signal-safe calls only: menv has
 * threads).
 *
 * The program runs in a new process group (so the terminal's Ctrl-C reaches menv and the
 * supervisor, not the program); the supervisor stays in menv's group, gets SIGTERM when menv
 * dies (PR_SET_PDEATHSIG: also after a SIGKILL of menv), and on SIGTERM, SIGINT or SIGHUP
 * kills the program's whole group (SIGKILL). When the program exits, whatever it left
 * running is killed too, in its group or moved out of it (setsid, a double fork: the
 * supervisor is their subreaper, PR_SET_CHILD_SUBREAPER), and the supervisor exits with the program's status
 * (a signal re-raised), so waitpid() on the returned pid reads as the program's. */
pid_t menv_child_fork(void);

/* Reads `fd` (the child's stdout/stderr pipe; -1: none) to its end into `out` (may be NULL:
 * discarded; at most `cap` bytes kept) and reaps `pid` (from menv_child_fork) into *status
 * (waitpid's). While waiting it polls `cancel` (may be NULL) and the process's cancel flag
 * (menv_cancelled): when one is set the child's group is killed, reading stops and the child
 * is reaped at once. Returns 0, MENV_EINTR (stopped that way; *status is filled) or MENV_EIO
 * (waitpid failed, errno kept). Does not close fd. */
int menv_child_wait(pid_t pid, int fd, struct menv_buf *out, size_t cap, volatile int *cancel,
                    int *status);

/* The argv that runs a shell script: {shell, "-c", script, name, args[0..nargs)}, NULL;
 * malloc'd (free the array alone: the strings are the caller's). The one place menv hands a
 * script to a shell (DESIGN.md "No shell strings"): `script` must be a string literal, which
 * the macro proves by pasting it between two "" (anything else does not compile), and
 * lint.no_shell_strings allows a "-c" nowhere else. Data reaches the script only as its
 * positional parameters ($0 = name, then $1...) or environment variables, never as its text.
 * Build it before fork(): the child then only calls execve(argv[0], argv, envp). */
#define menv_sh_argv(shell, script, name, args, nargs)                                             \
	menv_sh_argv_((shell), "" script "", (name), (args), (nargs))
char **menv_sh_argv_(const char *shell, const char *script, const char *name, char *const *args,
                     size_t nargs);

#endif
