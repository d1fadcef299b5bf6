/*
 * activate.h - activation (conda's activator): the code `menv activate`/`deactivate` print
 * for each shell, environment variables of a prefix (conda-meta/state), the environment of
 * `menv run`, the shell hook and completion scripts.
 */
#ifndef MENV_ENVS_ACTIVATE_H
#define MENV_ENVS_ACTIVATE_H

#include "specs.h"

/* The shells activation writes code for. bash, zsh and posix (dash, sh) share POSIX syntax;
 * fish has its own. */
enum menv_shell { MENV_SHELL_POSIX, MENV_SHELL_BASH, MENV_SHELL_ZSH, MENV_SHELL_FISH };

/* "bash", "zsh", "fish", "posix" (also "sh", "dash") to a shell. Errors: MENV_EUSAGE. */
int menv_shell_from_name(const char *name, enum menv_shell *out, struct menv_error *err);
/* The shell named by $SHELL when it is one menv knows, else posix. */
enum menv_shell menv_shell_default(void);
/* The rc file `shell init` edits for `sh`, as conda's: ~/.bashrc, $ZDOTDIR (or ~)/.zshrc,
 * $XDG_CONFIG_HOME (or ~/.config)/fish/config.fish, ~/.profile. Caller frees. */
char *menv_shell_rc_default(enum menv_shell sh);
/* The shell's name as --shell takes it; static storage. */
const char *menv_shell_name(enum menv_shell sh);

/* One command of a front end, for its completion script (complete.c). */
struct menv_completion_cmd {
	const char *name, *help; /* borrowed */
	struct menv_strvec subs; /* its subcommands, completed right after it */
	struct menv_strvec opts; /* its options ("--name", "-n"; its subcommands' too) */
};
/* The completion script of `prog` for `sh` (bash: a `complete -F` function over compgen;
 * zsh: a #compdef function with each command's help; fish: `complete -c` lines, long and
 * short options), command names first, then per command its subcommands and options.
 * posix is given bash's (dash has no completion). Appends to `out`. */
void menv_shell_completion(enum menv_shell sh, const char *prog,
                           const struct menv_completion_cmd *cmds, size_t n, struct menv_buf *out);
/* Appends `s` quoted for `sh` so that the shell reads back exactly these bytes (blanks, quotes,
 * `$`, backslashes, newlines included) and expands nothing: POSIX '...' with \' for quotes,
 * fish '...' with \' and \\. */
void menv_shell_quote(enum menv_shell sh, const char *s, struct menv_buf *out);
/* True for a name a shell can export: [A-Za-z_][A-Za-z0-9_]*. */
bool menv_env_var_name_ok(const char *name);
/* Whether activation owns the variable `name` (PATH, CONDA_PREFIX, CONDA_SHLVL,
 * CONDA_DEFAULT_ENV, CONDA_PROMPT_MODIFIER, CONDA_EXE, CONDA_PYTHON_EXE, CONDA_PREFIX_<n>,
 * CONDA_STACKED_<n>, menv's _MENV_*): an environment's own variables may not set it (as in
 * conda, which protects PATH); such entries are skipped when they are loaded. */
bool menv_env_var_reserved(const char *name);

/* What activation needs to know about the caller. All strings borrowed. */
struct menv_activation {
	enum menv_shell shell;
	const char *exe;         /* absolute path of the menv executable the code calls back */
	const char *root_prefix; /* the base environment (CONDA_DEFAULT_ENV "base") */
	bool stack;              /* --stack: keep the current environment applied underneath */
	bool changeps1;          /* .condarc changeps1: prefix PS1 with "(name) " */
	char *const *environ;    /* the calling shell's exported environment ("NAME=VALUE", NULL
				    terminated; include PS1 to have the prompt changed) */
};

/* .condarc `changeps1` (default true) as menv_config_load read and type-checked it:
 * $MENV_CHANGEPS1, $CONDA_CHANGEPS1, else the rc files (a value that is no bool is refused
 * there with FILE:LINE:COL or the variable's name). */
bool menv_config_changeps1(const struct menv_config *cfg);

/* Finds an environment like conda activate: NULL, "", "base" or "root" is the root prefix (a
 * directory); a string with '/' (or "." / "..") a path made absolute against the working
 * directory without resolving symlinks; anything else `<dir>/NAME` for the first entry of
 * `envs_dirs` (the config's, in order: conda's locate_prefix_by_name) that holds it. Except
 * for the root, the directory must hold conda-meta/. `*out` is owned by the caller.
 * Errors: MENV_ENOTFOUND naming the environment (and the first envs dir), MENV_EIO. */
int menv_env_locate(const char *root_prefix, const struct menv_strvec *envs_dirs,
                    const char *name_or_path, char **out, struct menv_error *err);

/* Appends to `out` the shell code that activates `prefix` (absolute) in the calling shell, as
 * conda's `activate`: CONDA_SHLVL + 1, CONDA_PREFIX, CONDA_PREFIX_<old level> (the previous
 * one), CONDA_DEFAULT_ENV, CONDA_PROMPT_MODIFIER, PS1 (changeps1), CONDA_STACKED_<level>
 * (stack); PATH with `prefix`/bin first; the variables of menv_env_vars_load(); then sources
 * etc/conda/activate.d/ *.sh (*.fish for fish) in byte order of their names. Without `stack`
 * an active environment is taken off first (its deactivate.d scripts run), and the same
 * environment again re-runs its scripts at the same level. Every exported variable that
 * activation (including the scripts) changed is recorded in `_MENV_BACKUP_<level>` by a call
 * back into `a->exe shell _continue`, so that menv_deactivate() can restore it.
 * Errors: MENV_EPARSE (an unreadable env_vars.d file or conda-meta/state). */
int menv_activate(const struct menv_activation *a, const char *prefix, struct menv_buf *out,
                  struct menv_error *err);
/* Appends the code that deactivates the top environment: its deactivate.d scripts in reverse
 * byte order, then every variable recorded at activation back to its old value (unset when it
 * was unset), and only the entries activation added taken out of PATH; bookkeeping as conda
 * (a non-stacked level re-activates the environment underneath). At level 0 appends nothing.
 * Errors: as menv_activate. */
int menv_deactivate(const struct menv_activation *a, struct menv_buf *out, struct menv_error *err);
/* The second half of an operation whose scripts ran in the shell: reads `_MENV_CONT` from
 * a->environ and appends the code that finishes it. Errors: MENV_EUSAGE (nothing in progress),
 * MENV_EPARSE. */
int menv_activate_continue(const struct menv_activation *a, struct menv_buf *out,
                           struct menv_error *err);

/* The complete environment to exec a command in `prefix` with (`menv run`): a->environ, or
 * with `clean` only HOME, USER, LOGNAME, SHELL, TERM, LANG, LANGUAGE, LC_*, TZ, TMPDIR,
 * DISPLAY and the system PATH (confstr _CS_PATH); then a stacked activation (CONDA_* as
 * menv_activate, PATH, env_vars.d, conda-meta/state) and, when the prefix has activate.d *.sh
 * scripts, the environment they leave: they are sourced in order by bash (else sh), their
 * stdout sent to stderr, and `env -0` read back. Appends "NAME=VALUE" strings to `out`.
 * Errors: MENV_EPARSE, MENV_EIO (the scripts' shell could not run or failed). */
int menv_run_environ(const struct menv_activation *a, const char *prefix, bool clean,
                     struct menv_strvec *out, struct menv_error *err);
/* `menv run --env VAR=VALUE`: each of the `n` assignments `sets` (checked by
 * menv_env_vars_assignments) replaces the "VAR=..." entry of `env` (split at its first '=')
 * or is appended to it. */
void menv_environ_assign(struct menv_strvec *env, char *const *sets, size_t n);

/* The variables an environment sets on activation, conda's order: each
 * etc/conda/env_vars.d/ *.json object (files in byte order of their names), then `env_vars` of
 * conda-meta/state; a later value replaces an earlier one in place. String values as they
 * are, numbers as text; other values and names a shell cannot export are skipped. Appends to
 * the parallel vectors `names` / `values`. Errors: MENV_EPARSE naming the file and position. */
int menv_env_vars_load(const char *prefix, struct menv_strvec *names, struct menv_strvec *values,
                       struct menv_error *err);
/* Only the `env_vars` of `prefix`/conda-meta/state (a missing file has none), in file order.
 * Errors: MENV_EPARSE. */
int menv_env_state_vars_load(const char *prefix, struct menv_strvec *names,
                             struct menv_strvec *values, struct menv_error *err);
/* `env config vars list`: the `env_vars` of conda-meta/state (menv_env_state_vars_load), each
 * value as menv_text_redact shows it: the state keeps a URL's user:password and /t/<token>
 * for activation to export, nothing prints them. `json` (when non-NULL) receives a new object
 * {NAME: VALUE} in file order; `text` (when non-NULL) gets conda's "NAME = VALUE" line for
 * each. Errors: as menv_env_state_vars_load. */
int menv_env_state_vars_show(const char *prefix, json_t **json, struct menv_buf *text,
                             struct menv_error *err);
/* Sets (adds or replaces) variables in `env_vars` of conda-meta/state, keeping the file's
 * other keys (conda's `env config vars set`); the file is replaced atomically. `prefix` may be
 * a staging directory. Errors: MENV_EUSAGE (a name a shell cannot export), MENV_ENOTFOUND (no
 * conda-meta/), MENV_EPARSE, MENV_EIO. */
int menv_env_state_vars_set(const char *prefix, const struct menv_strvec *names,
                            const struct menv_strvec *values, struct menv_error *err);
/* Removes variables from `env_vars` of conda-meta/state; absent names are ignored.
 * Errors: as menv_env_state_vars_set. */
int menv_env_state_vars_unset(const char *prefix, const struct menv_strvec *names,
                              struct menv_error *err);

/* Appends the hook for `sh` (to eval): a `menv` shell function that runs `exe` and, for
 * `menv activate|deactivate ...`, evals the code of `exe shell activate|deactivate`; sets
 * CONDA_SHLVL=0 when unset (as conda's hook). For fish with `changeps1` it also wraps
 * fish_prompt to show CONDA_PROMPT_MODIFIER. */
void menv_shell_hook(enum menv_shell sh, const char *exe, bool changeps1, struct menv_buf *out);
/* Adds (`add`) or removes the "# >>> menv initialize >>>" ... "# <<< menv initialize <<<"
 * block that evals the hook to rc file `path` (followed through symlinks; mode kept; created
 * with its directories when missing). Idempotent: an existing block is replaced in place,
 * and a file already as wanted is not written. `*changed` says whether it was.
 * Errors: MENV_EPARSE (a block without its end line), MENV_EIO. */
int menv_shell_rc_edit(const char *path, enum menv_shell sh, const char *exe, bool add,
                       bool *changed, struct menv_error *err);

/* installed.c: the absolute path of the running executable (/proc/self/exe; "menv" when it
 * cannot be read), for the shell hook and `menv run`'s activation. Caller frees. */
char *menv_self_exe(void);

#endif
