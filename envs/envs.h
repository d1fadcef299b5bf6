/*
 * envs.h - prefixes: linking packages from the package cache, prefix replacement,
 * `conda-meta/` PrefixRecords and history (CEP-32, CEP-34).
 *
 * A new environment is built in a temporary directory beside its target and renamed into
 * place when complete, so a failed or interrupted create leaves nothing behind. Never
 * touches the network.
 */
#ifndef MENV_ENVS_H
#define MENV_ENVS_H

#include "fetch.h"
#include "specs.h"

/* The conda placeholder prefix that packages built by conda-build carry. */
#define MENV_PLACEHOLDER "/opt/anaconda1anaconda2anaconda3"

struct menv_link_stats {
	size_t packages;  /* packages linked */
	size_t unlinked;  /* packages unlinked */
	size_t files;     /* files, links and directories created */
	size_t reflinks;  /* files cloned from the package cache (FICLONE) */
	size_t hardlinks; /* files hardlinked from the package cache */
	size_t softlinks; /* files symlinked to the package cache (always_softlink, ...) */
	size_t copies;    /* files copied (no link possible, or prefix replaced) */
	size_t replaced;  /* files whose prefix placeholder was replaced */
	size_t clobbered; /* files of one package overwritten by another (reported) */
	size_t pyc;       /* .pyc files compiled for noarch python packages */
};

/* How files are placed in a prefix (conda's always_copy, always_softlink, allow_softlinks).
 * AUTO: a reflink (FICLONE) where the file system supports it, else a hardlink, else a
 * softlink when allow_softlinks, else a copy. COPY: always an independent copy (a reflink
 * where possible). SOFTLINK: a symlink to the package cache. Files that need their prefix
 * replaced and `no_link` files are always written as copies. */
enum menv_link_mode { MENV_LINK_AUTO, MENV_LINK_COPY, MENV_LINK_SOFTLINK };

/* What an environment transaction tells its caller (the library never prints). `msg` is
 * borrowed for the call. */
enum menv_env_event {
	MENV_ENV_LOCK_WAIT,     /* another process holds the prefix lock; waiting for it */
	MENV_ENV_CACHE_WAIT,    /* another process holds a package-cache lock (the cache lock or
				   its users lock); waiting for it ("... held by pid N") */
	MENV_ENV_RECOVERED,     /* an interrupted transaction was rolled back or finished */
	MENV_ENV_CLOBBER,       /* a path is shared by two packages (conda's ClobberWarning) */
	MENV_ENV_MESSAGE,       /* text a package left for the user (.messages.txt, prelink) */
	MENV_ENV_WARNING,       /* something the user should know; the transaction goes on */
	MENV_ENV_SCRIPT_OUTPUT, /* the output of a link script that failed */
	MENV_ENV_UNLINK,        /* progress: unlinking the package `msg` (a dist) */
	MENV_ENV_LINK,          /* progress: linking the package `msg` (a dist) */
	/* from the transaction engine (menv_txn_*) */
	MENV_ENV_STATUS,   /* a line saying what the transaction does now ("Reading repodata for
			      linux-64", "  channel conda-forge (cached)", "Fetching packages into
			      DIR", "Installing the 'pip:' section ...") */
	MENV_ENV_PROBLEMS, /* the solver's problem tree (text, several lines) of an unsatisfiable
			      request, just before the MENV_EUNSAT error */
	MENV_ENV_SMOKE,    /* the smoke check of the prefix `msg` begins (its steps follow through
			      menv_txn_callbacks.smoke) */
};
typedef void (*menv_env_cb)(void *ud, enum menv_env_event ev, const char *msg);

struct menv_install_opts {
	const char *pkgs_dir;                /* the package cache written (pkgs_dir) */
	const struct menv_strvec *pkgs_dirs; /* every package cache, in order (pkgs_dirs; NULL:
						pkgs_dir only): a package is linked from the
						first holding it (menv_pkgcache_locate) */
	const struct menv_strvec *requested; /* MatchSpecs the user asked for (history, records) */
	const char *cmdline;                 /* the command line for conda-meta/history */
	bool remove_specs;                   /* history says "# remove specs:" (menv remove) */
	volatile int *cancel;                /* set non-zero (by a signal handler) to stop */
	enum menv_link_mode link_mode;       /* always_copy / always_softlink */
	bool allow_softlinks;                /* softlink where a hardlink is impossible */
	bool no_wait;   /* a busy prefix lock is MENV_ELOCKED, not waited for */
	bool locked;    /* the caller already holds the prefix lock (it read
					      the records its plan was made from under it) */
	menv_env_cb cb; /* events, or NULL */
	void *ud;
	/* `variables:` of the environment file (parallel, may be NULL): written to
	 * conda-meta/state as conda's {"env_vars": {...}} */
	const struct menv_strvec *var_names, *var_values;
};

/* Test hooks (environment variables, read by the transactions; for tests only):
 *   MENV_TEST_PAUSE_AFTER_UNLINK=SECONDS  sleep after the unlink phase of menv_env_apply,
 *                                         before the first package is linked (Ctrl-C tests);
 *   MENV_TEST_CRASH_AFTER=N               SIGKILL the process itself just before the N-th
 *                                         journaled change (crash-consistency tests);
 *   MENV_TEST_PAUSE_BEFORE_LINK=SECONDS   sleep in menv_txn_commit after the fetch, holding
 *                                         the cache's users lock (clean-vs-create tests). */

/* Refuses prefix paths that would break the programs installed in them: quotes,
 * backslashes and control characters (they end up in shebangs, Python's sysconfig and
 * activation scripts). Blanks are allowed. Errors: MENV_EUSAGE naming the character. */
int menv_env_check_prefix(const char *prefix, struct menv_error *err);

/* Creates a new environment at `prefix` holding `recs` (ordered dependencies first; each
 * already extracted in opts->pkgs_dir). `prefix` must not exist, or be an empty directory.
 * First checks every package (file lists readable; binary placeholders not shorter than
 * `prefix`, BR-026). Links each file of `info/paths.json` (fallback `info/files` +
 * `info/has_prefix`) by opts->link_mode, or copy when the file needs its prefix replaced
 * (text mode, with too long or blank-holding shebangs rewritten to `#!/usr/bin/env`; binary
 * mode padded with NULs; CEP-34); softlinks are recreated. noarch python packages go to the
 * environment python's site-packages (`python_site_packages_path` when its record has one)
 * and bin, get entry points and `.pyc` files compiled by the environment's python (CEP-20).
 * Runs pre-link scripts, writes `conda-meta/<dist>.json` PrefixRecords (conda's fields,
 * paths_data with sha256_in_prefix where a file changed) and `conda-meta/history`.
 * Everything is built in `<parent>/.<name>.menv-tmp-XXXXXX` and renamed to `prefix`; then the
 * post-link scripts run (PREFIX is the final prefix) under a journal: if one fails, or the
 * process dies, the prefix is removed (by this call, or by the next menv_env_recover()).
 * Messages packages leave (`.messages.txt`) go to opts->cb.
 * Errors: MENV_EEXIST (prefix not empty), MENV_EUNSUPPORTED (binary placeholder shorter
 * than the new prefix), MENV_EUNSAFE (a path leaving the prefix), MENV_EIO (including a
 * failing link script), MENV_EINTR; MENV_EUSAGE for a prefix menv_env_check_prefix refuses. */
int menv_env_create(const char *prefix, const struct menv_record *const *recs, size_t n,
                    const struct menv_install_opts *opts, struct menv_link_stats *stats,
                    struct menv_error *err);

/* Changes the existing environment `prefix`: unlinks `unlink` (installed PrefixRecords as
 * loaded by menv_prefix_records_load, borrowed), then links `link` (ordered dependencies
 * first, extracted in opts->pkgs_dir) - conda's order. Takes the prefix lock (waits, telling
 * opts->cb, unless opts->no_wait) and first recovers an interrupted transaction. Every
 * package is checked before the first change (as menv_env_create). Every change is
 * journaled in `conda-meta/.menv-txn/`; on any error, Ctrl-C (opts->cancel), failing
 * pre-link or post-link script, the prefix is rolled back to its previous state before this
 * returns; if the process dies, the next menv_env_recover() rolls it back. pre-unlink scripts
 * run before a package's files go (a failure is a warning, as in conda). Files shared by
 * two packages are reported (MENV_ENV_CLOBBER) and the later package's copy is kept; a file
 * still listed by a package that stays is not removed. Appends a block to
 * `conda-meta/history` (`+`/`-` lines, `# update specs:` or `# remove specs:`).
 * Errors: MENV_ENOTFOUND (not an environment), MENV_ELOCKED, MENV_EUNSUPPORTED, MENV_EUNSAFE,
 * MENV_EEXIST, MENV_EIO, MENV_EINTR (each after the rollback). */
int menv_env_apply(const char *prefix, const struct menv_record *const *link, size_t nlink,
                   json_t *const *unlink, size_t nunlink, const struct menv_install_opts *opts,
                   struct menv_link_stats *stats, struct menv_error *err);

/* Removes the whole environment `prefix` (conda remove --all): every package is unlinked as
 * by menv_env_apply (pre-unlink scripts; rolled back on failure), then the prefix with what
 * remains in it (menv's state, files no package owns) is deleted. Errors: as
 * menv_env_apply. */
int menv_env_remove(const char *prefix, const struct menv_install_opts *opts,
                    struct menv_link_stats *stats, struct menv_error *err);

/* What menv_env_recover found. */
enum menv_recovery {
	MENV_RECOVERY_NONE,        /* no interrupted transaction */
	MENV_RECOVERY_ROLLED_BACK, /* a change was undone: the environment is as before it */
	MENV_RECOVERY_FINISHED,    /* a committed change was finished (backup dropped) */
	MENV_RECOVERY_REMOVED,     /* a create whose link scripts never finished: prefix removed */
};
/* Finishes or rolls back a transaction of `prefix` that a crash, kill or Ctrl-C left behind
 * (see menv_env_apply). The caller holds the prefix lock (menv_env_lock). Idempotent.
 * Errors: MENV_EIO. */
int menv_env_recover(const char *prefix, enum menv_recovery *what, struct menv_error *err);
/* Is an interrupted transaction waiting in `prefix`? (cheap; no lock) */
bool menv_env_needs_recovery(const char *prefix);

/* Locks `prefix` for a change (flock on conda-meta/.menv.lock, into which it writes its pid):
 * waits for another menv process, calling cb(MENV_ENV_LOCK_WAIT) once (naming the holder's
 * pid when known, menv_flock_holder), unless `no_wait`. `*lock_fd` is released with
 * menv_env_unlock() (or when the process exits). Errors: MENV_ENOTFOUND (no conda-meta/),
 * MENV_ELOCKED (busy and no_wait), MENV_EINTR (a signal while waiting), MENV_EIO. */
int menv_env_lock(const char *prefix, bool no_wait, menv_env_cb cb, void *ud, int *lock_fd,
                  struct menv_error *err);
void menv_env_unlock(int lock_fd);

/* One block of conda-meta/history: a revision. */
struct menv_revision {
	char *date;                      /* "2024-05-01 10:00:00" */
	char *cmd;                       /* the "# cmd:" line's command, or NULL */
	struct menv_strvec added;        /* "+" lines: "channel/subdir::name-version-build" */
	struct menv_strvec removed;      /* "-" lines */
	struct menv_strvec specs;        /* "# update specs:" / "# remove specs:" entries */
	bool remove_specs;               /* the specs were "# remove specs:" */
	struct menv_strvec update_specs; /* "# update|install|create specs:" entries */
	struct menv_strvec remove_list;  /* "# remove|uninstall specs:" entries */
	struct menv_strvec neutered;     /* "# neutered specs:" entries */
};
/* Reads `<prefix>/conda-meta/history` (conda's format: `==> DATE <==` blocks of `# cmd:`,
 * `+dist` and `-dist` lines and `# update specs: [...]` / `# remove specs: [...]` lists, which
 * may be JSON or Python list literals). Revision 0 is the first block. A prefix without
 * history has none. `*out` is a new array of `*n` revisions; free with
 * menv_history_free(). Errors: MENV_EIO. */
int menv_history_load(const char *prefix, struct menv_revision **out, size_t *n,
                      struct menv_error *err);
void menv_history_free(struct menv_revision *revs, size_t n);
/* The MatchSpecs the user asked for in `<prefix>`, as conda's
 * History.get_requested_specs_map(): every block with a `# cmd:` line, in order, sets the
 * specs of its `# update specs:` (also `install`/`create`) by package name, takes out the
 * names of its `# remove specs:` (also `uninstall`), then sets its `# neutered specs:`;
 * names not in `installed` (package names; NULL: no filter) are left out. Appends the spec
 * strings, in the order conda's dict keeps them, to `out` (caller clears it). A prefix
 * without history appends nothing. Errors: MENV_EIO. */
int menv_history_requested_specs(const char *prefix, const struct menv_strvec *installed,
                                 struct menv_strvec *out, struct menv_error *err);
/* Appends `# <action> specs: [...]\n` as conda's History.write_specs writes it (a Python
 * list of the spec strings, each as Python's repr writes a str), so that conda reads it
 * back. `action` is "update", "remove" or "neutered". */
void menv_history_specs_line(struct menv_buf *b, const char *action,
                             const struct menv_strvec *specs);
/* The dists ("channel/subdir::name-version-build") installed after revision `rev`, sorted.
 * Errors: MENV_ENOTFOUND when rev >= n. */
int menv_history_state(const struct menv_revision *revs, size_t n, size_t rev,
                       struct menv_strvec *out, struct menv_error *err);

/* What one revision changed, as `conda list --revisions` shows it (plan.c). */
struct menv_revision_diff {
	struct menv_strvec install;   /* labels added whose name was not there before */
	struct menv_strvec remove;    /* labels removed whose name did not come back */
	struct menv_strvec upgrade;   /* "name-oldver-build -> newver-build" */
	struct menv_strvec downgrade; /* likewise, to an older version */
	struct menv_strvec changed;   /* "name  {oldver-build -> newver-build}", both kinds */
};
/* Fills `out` (zeroed by the caller; released with menv_revision_diff_release) from the
 * `+`/`-` lines of `r`: a name both removed and added is an upgrade or a downgrade by
 * conda's version order. */
void menv_revision_diff(const struct menv_revision *r, struct menv_revision_diff *out);
void menv_revision_diff_release(struct menv_revision_diff *d);
/* Revision number `rev` as `conda list --revisions --json` shows it: {rev, date, install,
 * remove, upgrade, downgrade, cmd (when the block has one)}. New reference. */
json_t *menv_revision_json(const struct menv_revision *r, size_t rev,
                           const struct menv_revision_diff *d);

/* An installed package (a parsed conda-meta/<dist>.json). */
struct menv_prefix_record {
	json_t *json;                       /* the whole record (owned reference) */
	const char *name, *version, *build; /* borrowed from json */
	int64_t build_number;
	const char *channel, *subdir, *url; /* borrowed, may be NULL */
};

/* Reads every `conda-meta/<dist>.json` of `prefix`, sorted by name. `*out` is a new array of
 * `*n` records; free with menv_prefix_records_free(). A prefix without conda-meta/ is
 * MENV_ENOTFOUND; an unreadable record is MENV_EPARSE naming the file. */
int menv_prefix_records_load(const char *prefix, struct menv_prefix_record **out, size_t *n,
                             struct menv_error *err);
void menv_prefix_records_free(struct menv_prefix_record *recs, size_t n);

/* Replaces every occurrence of `placeholder` with `prefix` in `data` (CEP-34).
 * Text mode: plain substitution, `out` receives the new bytes.
 * Binary mode: inside each NUL-terminated string holding the placeholder, the tail is shifted
 * and the string padded with NULs so the file keeps its length.
 * Errors: MENV_EUNSUPPORTED in binary mode when `prefix` is longer than `placeholder`. */
int menv_prefix_replace(const char *data, size_t len, const char *placeholder, const char *prefix,
                        bool binary, struct menv_buf *out, struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Activation (conda's activator), environment variables, `menv run`, shell hook             */

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

/* .condarc `changeps1` (default true): $MENV_CHANGEPS1 or $CONDA_CHANGEPS1 ("false", "no",
 * "off", "0" turn it off), else the last top-level `changeps1:` of the rc files read. */
bool menv_config_changeps1(const struct menv_config *cfg);

/* Finds an environment like conda activate: NULL, "", "base" or "root" is the root prefix (a
 * directory); a string with '/' (or "." / "..") a path made absolute against the working
 * directory without resolving symlinks; anything else `<envs_dir>/NAME`. Except for the root,
 * the directory must hold conda-meta/. `*out` is owned by the caller.
 * Errors: MENV_ENOTFOUND naming the environment, MENV_EIO. */
int menv_env_locate(const char *root_prefix, const char *envs_dir, const char *name_or_path,
                    char **out, struct menv_error *err);

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

/* ---------------------------------------------------------------------------------------- */
/* pip (pip.c): the `pip:` section of an environment                                         */

/* A distribution pip installed into a prefix. Strings owned. */
struct menv_pip_dist {
	char *name;     /* PEP 503-normalised ("charset-normalizer") */
	char *version;  /* as its METADATA says */
	char *url;      /* where the wheel came from (PEP 610 direct_url.json, or what menv saw
			  pip download), or NULL */
	char *sha256;   /* of that file, lowercase hex, or NULL */
	bool local;     /* installed from a local path (direct_url.json names a file:// URL) */
	char *editable; /* `pip install -e DIR`: the project folder DIR (PEP 660's direct_url.json
			   with dir_info.editable, or setuptools' <name>.egg-link), else NULL */
};

/* The distributions pip installed in `prefix`: the `*.dist-info` folders of
 * lib/pythonX.Y/site-packages that no conda-meta record lists among its files (BR-021),
 * with Name and Version from their METADATA, and the `*.egg-link` files of editable
 * installs (`setup.py develop`: Name and Version from the project's *.egg-info/PKG-INFO). `*out` is a new array of `*n`; free with
 * menv_pip_dists_free(). Errors: as menv_prefix_records_load. */
int menv_pip_list(const char *prefix, struct menv_pip_dist **out, size_t *n,
                  struct menv_error *err);
void menv_pip_dists_free(struct menv_pip_dist *v, size_t n);
/* PEP 503 name normalisation (lower case, runs of -_. as one '-'). Caller frees. */
char *menv_pip_normalize(const char *name);

/* What to install with pip. Strings borrowed. */
struct menv_pip_request {
	struct menv_strvec requirements; /* requirements-file lines: "requests==2.31", "-r f",
					    "--index-url URL", "-e path", "name @ URL --hash=..." */
	struct menv_strvec options;      /* extra command-line options ("--no-index", ...) */
	const char *cwd;                 /* where relative paths resolve (the env file's
					    folder), or NULL */
	bool no_deps;                    /* --no-deps (installing from a lock) */
	bool require_hashes;             /* --require-hashes (every line has --hash) */
	bool quiet;                      /* -q */
	volatile int *cancel;            /* non-zero: stop pip (SIGTERM) and fail MENV_EINTR */
};

/* Runs `<prefix>/bin/python -m pip install` non-interactively (--no-input, PIP_NO_INPUT,
 * no version check, no user site) with the requirements written to a temporary
 * requirements file, as conda does, so that the section's own options (--index-url,
 * --extra-index-url, --find-links, -r, -e) work; the options pip takes on its command line
 * only (--no-build-isolation, --no-deps, --use-pep517, ...: menv_pip_cli_option) go there
 * instead. Relative paths of -r, -c and -e resolve against `cwd` (the env file's folder). pip's output goes to stderr. Afterwards
 * records in each new dist-info folder (MENV_SOURCE) the URL and sha256 pip reported for
 * its wheel, for lockfile exports. Must run in the final prefix (scripts get its path).
 * Errors: MENV_ENOTFOUND (no python in the prefix), MENV_EIO (pip failed, naming its exit
 * status and the requirements), MENV_EINTR. The caller rolls back (menv_pip_rollback_prefix
 * for a new environment). */
int menv_pip_install(const char *prefix, const struct menv_pip_request *req,
                     struct menv_error *err);
/* Is this `pip:` line an option pip accepts on its command line only, not in a requirements
 * file ("--no-build-isolation", "--no-deps", "--use-pep517", "--no-use-pep517",
 * "--no-cache-dir", "--force-reinstall", "--ignore-installed", "--upgrade", "-U")? */
bool menv_pip_cli_option(const char *line);
/* Runs `<prefix>/bin/python -m pip uninstall --yes` for the named distributions (PEP 503
 * names, borrowed); none named: nothing runs. Used to take back what a failed pip step into
 * an existing environment added. Errors: MENV_EIO (pip could not run or failed). */
int menv_pip_uninstall(const char *prefix, const struct menv_strvec *names, struct menv_error *err);
/* Removes a prefix that was just created, after its pip step failed: renamed aside first,
 * then removed. Best effort. */
void menv_pip_rollback_prefix(const char *prefix);

/* ---------------------------------------------------------------------------------------- */
/* Smoke check: the sample custom-op package (ops/) built and tested inside an environment  */

/* Where menv finds the ops/ sources: $MENV_OPS_DIR, else this path, fixed at build time. */
#ifndef MENV_OPS_DIR
#define MENV_OPS_DIR "ops"
#endif

enum menv_smoke_verdict { MENV_SMOKE_PASS, MENV_SMOKE_FAIL, MENV_SMOKE_SKIP };

/* One step: "toolchain", "configure", "build", "host tests", "GPU tests", "python", "torch". */
struct menv_smoke_step {
	const char *name; /* static storage */
	enum menv_smoke_verdict verdict;
	double seconds;
	char summary[512]; /* one line: what passed, or why it failed or skipped */
};

enum menv_smoke_event {
	MENV_SMOKE_STEP_BEGIN, /* step: name set; line NULL */
	MENV_SMOKE_STEP_END,   /* step: verdict, seconds, summary set */
	MENV_SMOKE_LINE,       /* line: one "[ops] ..." line of a test (without the tag) */
	MENV_SMOKE_HINT,       /* line: a diagnosis, one or two sentences saying what to do */
};
/* Progress callback: the library never prints; the CLI draws these. Arguments are borrowed
 * for the call only. */
typedef void (*menv_smoke_cb)(void *ctx, enum menv_smoke_event ev,
                              const struct menv_smoke_step *step, const char *line);

struct menv_smoke_opts {
	const char *ops_dir;     /* sources; NULL: $MENV_OPS_DIR, else MENV_OPS_DIR */
	const char *cuda_driver; /* version of the __cuda virtual package, NULL without a driver */
	const char *tmp_dir;     /* parent of the build directory; NULL: $TMPDIR, else /tmp */
	bool keep_build;         /* keep the build directory even when every step passed */
	int step_timeout_s;      /* per step; 0: 1200 */
	bool force;       /* menv_env_smoke_unchanged: run even when the fingerprint is unchanged */
	menv_smoke_cb cb; /* may be NULL */
	void *ctx;
	volatile int *cancel; /* set non-zero (by a signal handler) to stop: MENV_EINTR */
};

#define MENV_SMOKE_MAX_STEPS 8
#define MENV_SMOKE_MAX_PERF  4
#define MENV_SMOKE_MAX_HINTS 6

struct menv_smoke_result {
	bool passed;  /* no step failed (skipped steps do not fail the check) */
	bool gpu_ran; /* the GPU tests ran to a verdict (not skipped) */
	struct menv_smoke_step steps[MENV_SMOKE_MAX_STEPS];
	size_t n_steps;
	char nvcc_path[1024], nvcc_version[32]; /* "" when not found */
	char cxx_path[1024], cxx_version[32];
	bool cxx_in_env;                /* the host compiler lives in the prefix */
	char driver_cuda[32];           /* opts->cuda_driver, or "" */
	char gpu[128], compute_cap[16]; /* from the GPU tests, "" when none ran */
	char targets[128];              /* GPU code built: "sm_80 sm_90 compute_90" */
	struct {
		char what[64]; /* "f32 forward 8192x8192" */
		double ms, gbs, peak_gbs;
	} perf[MENV_SMOKE_MAX_PERF];
	size_t n_perf;
	char hints[MENV_SMOKE_MAX_HINTS][512];
	size_t n_hints;
	char log_path[1024];      /* the whole output of every step, kept */
	char build_dir[1024];     /* "" once removed (all passed and !keep_build) */
	bool unchanged;           /* not run: inputs unchanged since a passed check (no steps) */
	char unchanged_since[32]; /* that check's date, "2026-12-01 15:40:02 UTC" */
};

/* Runs the smoke check on the environment at `prefix`: copies the ops/ sources to a new
 * temporary directory and there, in a scrubbed environment (PATH=$PREFIX/bin:/usr/bin:/bin,
 * HOME, LC_ALL=C, CONDA_PREFIX; no CUDA_HOME, LIBRARY_PATH, CPATH; LD_LIBRARY_PATH only
 * where it holds the driver's libcuda.so.1) with the prefix's etc/conda/activate.d scripts (.sh)
 * sourced in lexical order (so CC/CXX come from the environment), runs: toolchain probe,
 * configure, build (ninja, else make), and the tests (host, GPU, python, torch; a test that
 * exits 77 is skipped, e.g. "GPU run skipped: no CUDA driver found"). Known failures get a
 * hint (nvcc missing, host compiler too new for nvcc, driver older than the toolkit, no
 * kernel image for this GPU, missing headers). The log is written to
 * `<prefix>/conda-meta/smoke-check.log` (or the build directory when the prefix is not
 * writable). A failing check is a result (res->passed false), not an error.
 * Errors: MENV_ENOTFOUND (no prefix, no ops sources), MENV_EIO, MENV_EINTR. */
int menv_smoke_run(const char *prefix, const struct menv_smoke_opts *opts,
                   struct menv_smoke_result *res, struct menv_error *err);

/* The result as JSON (status, steps, versions of nvcc/g++/driver, GPU, timings, GB/s,
 * hints, log). New reference. */
json_t *menv_smoke_result_json(const struct menv_smoke_result *res);

/* Where the smoke check reads the ops/ sources: `ops_dir` when not NULL, else $MENV_OPS_DIR
 * when set and not empty, else MENV_OPS_DIR (fixed at build time). Borrowed. */
const char *menv_smoke_ops_dir(const char *ops_dir);

/* The host-compiler check that the smoke check makes first and `menv doctor` reports, so
 * both give one verdict: in the smoke check's scrubbed shell with the prefix's activation
 * (PATH=$PREFIX/bin:/usr/bin:/bin), which nvcc and host compiler ($CXX, else g++) a build
 * gets and their versions; when nvcc's CUDA release refuses that GCC (CUDA 11.0: GCC <= 9,
 * 11.1-11.3: <= 10, 11.4-11.8: <= 11, 12.0-12.3: <= 12, later 12.x: <= 13, 13.x: <= 15) or
 * there is none, `*problem` is one line (new string) naming both and what to add, e.g.
 * "nvcc 11.8.89 does not support the host compiler g++ 12.2.0 ('/usr/bin/g++', from the
 * system, not the environment): nvcc 11.8 accepts GCC up to 11; add gxx_linux-64=11 to the
 * environment"; else NULL (also without nvcc). Errors: MENV_EIO (the probe could not run). */
int menv_smoke_host_compiler(const char *prefix, char **problem, struct menv_error *err);

/* The smoke check's toolchain probe (as menv_smoke_host_compiler runs it) as one line for
 * the fingerprint: "probe nvcc PATH VERSION, c++ PATH VERSION" ("none"/"-" where not found),
 * so that a host compiler from outside the package records (the system's g++, a $CXX an
 * activation script names) counts too. `*line` is new. Errors: MENV_EIO. */
int menv_smoke_probe_line(const char *prefix, char **line, struct menv_error *err);

/* The smoke check's fingerprint (smokefp.c): the lowercase hex sha256 (`out`, 65 bytes with
 * the NUL) of sorted text lines naming what the check depends on: the PrefixRecords of the
 * toolchain packages (nvcc/cudatoolkit/cuda-*, gcc/gxx/binutils/libgcc/libstdcxx/sysroot,
 * python, numpy, pybind11, pytorch, ninja, setuptools; name, version, build and the package
 * file's sha256), pip's dist-info folders of numpy, pybind11, torch, ninja, setuptools, the
 * nvcc and host compiler a build gets with their versions (menv_smoke_probe_line), the
 * sha256 of each ops/ source file under `ops_dir` (as the check copies them), the driver
 * (`cuda_driver`, the __cuda version or NULL, and /proc/driver/nvidia/version's first line)
 * and $MENV_OPS_ARCH. A pure package (ply) changes none of them. `inputs`, when not NULL,
 * receives those lines (copies). Errors: MENV_ENOTFOUND (no conda-meta/, no ops sources),
 * MENV_EPARSE (a record), MENV_EIO. */
int menv_smoke_fingerprint(const char *prefix, const char *ops_dir, const char *cuda_driver,
                           char out[65], struct menv_strvec *inputs, struct menv_error *err);

/* Whether `<prefix>/conda-meta/menv-smoke-fingerprint` holds `fp` for a check that passed;
 * then its date goes to `since` ("2026-12-01 15:40:02 UTC"). A missing or unreadable file
 * is false. */
bool menv_smoke_fingerprint_unchanged(const char *prefix, const char *fp, char since[32]);

/* Writes `<prefix>/conda-meta/menv-smoke-fingerprint` atomically: {fingerprint, status
 * ("passed"/"failed"), date (UTC), timestamp, inputs}. Errors: MENV_EIO. */
int menv_smoke_fingerprint_write(const char *prefix, const char *fp,
                                 const struct menv_strvec *inputs, bool passed,
                                 struct menv_error *err);

/* Writes menv_smoke_result_json() to `<prefix>/conda-meta/menv-smoke-check` atomically.
 * Errors: MENV_EIO. */
int menv_smoke_write_record(const char *prefix, const struct menv_smoke_result *res,
                            struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* The transaction engine (txn.c): every change to an environment goes through one          */
/* transaction, in libalpm's shape (init / prepare / commit), whatever started it.          */
/*                                                                                           */
/*   menv_txn_new      the request: what kind of change, to which prefix, from what           */
/*   menv_txn_prepare  plan: take the prefix lock and recover an interrupted change; read     */
/*                     the installed PrefixRecords; solve against the channels (or read the   */
/*                     lockfile, or the history revision); --prune, noarch python relinks     */
/*   menv_txn_commit   fetch and verify every package (before the first unlink), link and     */
/*                     unlink under the journal, the pip step, conda-meta/ records, history   */
/*                     and the environment registry, then the smoke check                     */
/*   menv_txn_free     releases the prefix lock                                               */
/*                                                                                           */
/* The library never prints: what happens reaches the caller through menv_txn_callbacks,    */
/* and errors come back in struct menv_error. Ctrl-C is opts->cancel, polled throughout.    */

enum menv_txn_kind {
	MENV_TXN_CREATE,       /* a new environment from specs and/or an environment file */
	MENV_TXN_CREATE_LOCK,  /* a new environment from a lockfile: its records, no solve */
	MENV_TXN_INSTALL,      /* install SPEC... into an existing environment */
	MENV_TXN_UPDATE,       /* update NAME... (or opts->all) */
	MENV_TXN_REMOVE,       /* remove NAME... and what needs them (opts->all: the whole env) */
	MENV_TXN_ENV_UPDATE,   /* env update -f FILE [--prune] */
	MENV_TXN_INSTALL_LOCK, /* install -f LOCK: the lock's records into an existing env */
	MENV_TXN_REVISION,     /* install --revision N: back to the packages of revision N */
};

struct menv_txn_plan;

/* conda's modifiers of a change (menv_txn_opts.modifiers, or'ed), as the command-line flags;
 * without FREEZE, NO_UPDATE_DEPS, UPDATE_DEPS, UPDATE_SPECS and UPDATE_ALL the setting
 * update_modifier decides (struct menv_solve_request says what each does). */
enum {
	MENV_MOD_FREEZE_INSTALLED = 1 << 0, /* --freeze-installed */
	MENV_MOD_NO_UPDATE_DEPS = 1 << 1,   /* --no-update-deps */
	MENV_MOD_UPDATE_DEPS = 1 << 2,      /* --update-deps */
	MENV_MOD_UPDATE_SPECS = 1 << 3,     /* --update-specs */
	MENV_MOD_UPDATE_ALL = 1 << 4,       /* --update-all */
	MENV_MOD_FORCE_REINSTALL = 1 << 5,  /* --force-reinstall */
	MENV_MOD_NO_DEPS = 1 << 6,          /* --no-deps */
	MENV_MOD_ONLY_DEPS = 1 << 7,        /* --only-deps */
	MENV_MOD_FORCE = 1 << 8,            /* remove --force */
	MENV_MOD_SATISFIED_SKIP = 1 << 9,   /* --satisfied-skip-solve */
};

/* What a transaction reports. Every callback may be NULL; all get `ud`; arguments are
 * borrowed for the call only. Callbacks run on the calling thread. */
struct menv_txn_callbacks {
	menv_env_cb event;   /* status lines, problems, clobbers, messages, link progress */
	menv_fetch_cb fetch; /* each package as the package cache has it */
	/* download progress (bytes held, expected total or 0, transfers finished and in all,
	 * the running ones), about every 100 ms: menv_fetch_opts.progress */
	void (*progress)(void *ud, int64_t done, int64_t total, size_t finished, size_t n,
	                 const struct menv_fetch_item *running, size_t nrunning);
	menv_smoke_cb smoke; /* the smoke check's steps */
	/* Once the plan is made, before anything is fetched or changed (never for a dry run or
	 * an empty plan): return false to stop (menv_txn_commit then fails MENV_EINTR, nothing
	 * changed). NULL: proceed (conda's --yes). */
	bool (*confirm)(void *ud, const struct menv_txn_plan *plan);
	void *ud;
};

/* The request. Strings and vectors are borrowed: they must outlive the transaction. */
struct menv_txn_opts {
	enum menv_txn_kind kind;
	const struct menv_config *cfg; /* settings (subdir, channels, pkgs_dir, priority, ...) */
	const char *prefix;            /* absolute path of the environment */
	const struct menv_envfile *envfile; /* CREATE, ENV_UPDATE: the environment file, or NULL
					       (its deps, channels, variables, `pip:` section) */
	const char *file;                   /* *_LOCK: the lockfile */
	const char *lock_env;               /* a pixi lock's environment (-e), NULL: "default" */
	const struct menv_strvec *specs;    /* MatchSpecs of the command line, or NULL */
	const struct menv_strvec *channels; /* -c channels, or NULL */
	bool override_channels;             /* --override-channels */
	bool all;                           /* update --all, remove --all */
	bool prune;                         /* env update --prune */
	unsigned modifiers;                 /* MENV_MOD_* */
	long revision;                      /* MENV_TXN_REVISION: the revision to go back to */
	bool dry_run;                       /* plan only: no lock, nothing changed */
	bool no_wait;                       /* a busy prefix lock is MENV_ELOCKED */
	bool smoke;                         /* menv_txn_smoke runs where menv_env_wants_smoke */
	bool smoke_force; /* ... and always (--smoke-check), even when its inputs are unchanged */
	bool quiet_pip;   /* pip -q */
	const char *cmdline;  /* for conda-meta/history; NULL: "menv" */
	volatile int *cancel; /* non-zero (a signal handler) stops: MENV_EINTR */
	struct menv_txn_callbacks cb;
};

/* One package's change in a plan, as mamba's and conda's plans group them. */
enum menv_change_kind {
	MENV_CHANGE_INSTALL,   /* new: only `link` */
	MENV_CHANGE_UPGRADE,   /* `unlink` then `link` of a newer version */
	MENV_CHANGE_DOWNGRADE, /* ... of an older version */
	MENV_CHANGE_CHANGE,    /* same version, another build or channel */
	MENV_CHANGE_REINSTALL, /* the same record again (a noarch python relink) */
	MENV_CHANGE_REMOVE,    /* only `unlink` */
};
struct menv_txn_change {
	enum menv_change_kind kind;
	const char *name;               /* borrowed */
	const struct menv_record *link; /* or NULL */
	bool cached;                    /* link: the package cache holds it already */
	json_t *unlink;                 /* the installed PrefixRecord, or NULL */
};

/* The plan menv_txn_prepare made, borrowed from the transaction (valid until it is freed). */
struct menv_txn_plan {
	enum menv_txn_kind kind;
	const char *prefix;
	const struct menv_config *cfg;         /* the transaction's settings */
	const char *pkgs_dir;                  /* the package cache the links come from */
	const struct menv_record *const *link; /* to link, dependencies first */
	const bool *cached;                    /* per link: the package cache held it already */
	size_t nlink;
	const struct menv_txn_change *changes; /* the same, per package: sorted by kind, then
						  name (conda's version order decides up or
						  down) */
	size_t nchanges;
	json_t *const *unlink; /* installed PrefixRecords to unlink (conda-meta JSON) */
	size_t nunlink;
	const struct menv_strvec *pip; /* pip requirement lines to install after the conda
					  packages (an environment file's `pip:` section, or a
					  lock's pip entries not installed yet); may be empty */
	bool solved;                   /* false: records from a lockfile or history, no solve */
	bool remove_env;               /* remove --all: the whole prefix goes */
	const char *lock_file;         /* *_LOCK: the lockfile, its format name ("conda-lock v1") */
	const char *lock_format;
	size_t lock_conda, lock_pip; /* *_LOCK: its conda and pip entries for this platform */
};

/* What menv_txn_commit did. */
struct menv_txn_result {
	struct menv_link_stats stats;
	size_t pip_lines; /* requirement lines given to pip (0: no pip step) */
	bool smoke_ran;   /* the smoke check ran, or found its inputs unchanged (smoke.unchanged):
	                   then `smoke` holds its result */
	struct menv_smoke_result smoke; /* passed false: a failed check (the env is kept) */
	bool smoke_record_failed;       /* conda-meta/menv-smoke-check could not be written */
};

struct menv_txn;

/* A new transaction for `o` (copied; what it points to is borrowed). Nothing is read yet.
 * `*out` is freed with menv_txn_free. Errors: MENV_EUSAGE (a kind that needs a file or
 * specs given none, or the other way round). */
int menv_txn_new(const struct menv_txn_opts *o, struct menv_txn **out, struct menv_error *err);

/* Makes the plan. For an existing environment, unless dry_run: takes the prefix lock (waits,
 * telling cb.event MENV_ENV_LOCK_WAIT, unless no_wait), finishes or rolls back an interrupted
 * transaction and takes back a half-done pip step (MENV_ENV_RECOVERED), and holds the lock
 * until menv_txn_free so the plan is made from records nobody else changes. Then, by kind:
 * the channels in conda's order (-c, the file's, .condarc's unless override_channels or
 * `nodefaults`; `chan::pkg` adds its channel) and their repodata through the repodata cache,
 * pins (`pinned_packages`, conda-meta/pinned) and virtual packages, and a solve with libsolv
 * in conda mode (CREATE: the specs; INSTALL/ENV_UPDATE: install; UPDATE: update or update
 * all; REMOVE: remove; conda's rules in solver.h); the lockfile's records for cfg->subdir
 * (*_LOCK, CEP-23/CEP-37/pixi, no solve); history revision N (REVISION, conda's
 * conda/history.py); then --prune and the noarch python packages that follow python to a new
 * minor version (CEP-20). Errors: MENV_EUSAGE, MENV_ENOTFOUND (no such environment, a
 * package not installed, revision out of range), MENV_EEXIST (CREATE* into a prefix in
 * use), MENV_EUNSAT (after MENV_ENV_PROBLEMS; menv_txn_problems_json has the tree),
 * MENV_ELOCKED, MENV_EPARSE (a file, naming it), MENV_ENET, MENV_EINTR. */
int menv_txn_prepare(struct menv_txn *t, struct menv_error *err);

/* The plan (after a successful menv_txn_prepare), borrowed. */
const struct menv_txn_plan *menv_txn_plan(const struct menv_txn *t);

/* Carries the plan out; a dry run or an empty plan without a pip step changes nothing. Every
 * package is fetched, verified and extracted into the package cache before the first unlink
 * (menv_pkgcache_fetch_opts; records from a lockfile are then completed from the packages'
 * info/index.json, so PrefixRecords are the same from a cold or a warm cache). Then one
 * journaled change (menv_env_create into a staging directory renamed into place, or
 * menv_env_apply / menv_env_remove; rolled back on any failure or Ctrl-C). Then the pip step
 * (a new environment whose pip step fails is removed; in an existing one what pip added is
 * uninstalled and the conda packages go back to the revision before, menv_txn_pip_into_env);
 * conda-meta/.menv-request for a new environment; the registry
 * (~/.conda/environments.txt: a create adds the prefix, remove --all takes it out; a
 * failure there is a MENV_ENV_WARNING).
 * Errors: those of the package cache (MENV_ECHECKSUM, MENV_ENET, ...), of menv_env_create /
 * menv_env_apply, of pip (MENV_EIO), MENV_EINTR (also when cb.confirm said no). */
int menv_txn_commit(struct menv_txn *t, struct menv_error *err);

/* The last stage, after a commit that linked packages (or created the environment) with
 * opts->smoke set, where menv_env_wants_smoke (opts->smoke_force: after any commit):
 * releases the prefix lock (the check only reads); unless opts->smoke_force, a check whose
 * fingerprint is unchanged since one that passed is not run (menv_env_smoke_unchanged: the
 * result says smoke.unchanged); else tells cb.event MENV_ENV_SMOKE and runs menv_env_smoke
 * (which stores the new fingerprint), drawing through cb.smoke.
 * A failed check is a result (menv_txn_result: smoke_ran, smoke.passed false; the
 * environment is kept), not an error; nothing to check is 0 with smoke_ran false.
 * Errors: as menv_smoke_run. */
int menv_txn_smoke(struct menv_txn *t, struct menv_error *err);

/* The smoke check of `prefix` (menv_smoke_run, with the driver's CUDA version from
 * menv_virtual_detect when so->cuda_driver is NULL), its report then written to
 * conda-meta/menv-smoke-check (`*record_failed` when that failed). Errors: as
 * menv_smoke_run. */
int menv_env_smoke(const char *prefix, const struct menv_smoke_opts *so,
                   struct menv_smoke_result *res, bool *record_failed, struct menv_error *err);

/* Whether the smoke check of `prefix` can be left out: so->force is false and the
 * fingerprint (menv_smoke_fingerprint, of so->ops_dir or $MENV_OPS_DIR or MENV_OPS_DIR, and
 * the driver as menv_env_smoke finds it) equals that of the last check, which passed. Then
 * `res` says so (passed, unchanged, unchanged_since; no steps) and nothing is run or
 * written. False on any error (the check then runs). */
bool menv_env_smoke_unchanged(const char *prefix, const struct menv_smoke_opts *so,
                              struct menv_smoke_result *res);

/* For a `-f PATH` that is not a regular file (a pipe: `-f /dev/stdin`, `-f <(cat f)`, which
 * can be read once while menv reads a file twice: to tell a lockfile from an environment
 * file, then to load it): reads it into a new temporary file in $TMPDIR (or /tmp) and
 * returns that file's path (the caller unlinks and frees it); NULL for a regular file (use
 * PATH itself) or on an error (err set: MENV_ENOTFOUND, MENV_EIO). */
char *menv_file_once(const char *path, struct menv_error *err);
/* Does the file hold a lockfile (menv_lockfile_detect: conda-lock, explicit, pixi, micromamba
 * JSON)? False for an environment file and for a file that cannot be read. */
bool menv_file_is_lockfile(const char *path);
/* True when `path` exists and is not an empty directory (a create target that is taken). */
bool menv_path_in_use(const char *path);

/* What the commit did, borrowed. */
const struct menv_txn_result *menv_txn_result(const struct menv_txn *t);

/* After MENV_EUNSAT: the solver's problem tree as JSON (conda's --json `problems`) and as
 * text; NULL otherwise. Borrowed from the transaction. */
json_t *menv_txn_problems_json(const struct menv_txn *t);
const char *menv_txn_problems(const struct menv_txn *t);

/* Releases the transaction, its plan and the prefix lock. NULL is a no-op. */
void menv_txn_free(struct menv_txn *t);

/* Finishes or rolls back a transaction that a crash, SIGKILL or Ctrl-C interrupted in
 * `prefix`, and takes back a pip step a killed menv left half done, under the prefix lock
 * (waiting for it, cb.event MENV_ENV_LOCK_WAIT); MENV_ENV_RECOVERED says what was done.
 * Nothing when none is pending. Every command that reads an environment calls it first.
 * Errors: those of menv_env_lock and menv_env_recover; MENV_ENOTFOUND when the prefix was
 * an interrupted create (now removed). */
int menv_txn_recover(const char *prefix, const struct menv_txn_callbacks *cb,
                     struct menv_error *err);

/* Should create/install run the smoke check on this prefix? When the setting smoke_check is
 * on (default) and the environment holds a CUDA compiler (cudatoolkit or cuda-nvcc). */
bool menv_env_wants_smoke(const struct menv_config *cfg, const char *prefix);

/* The variables of an environment file that activation owns (menv_env_var_reserved: PATH,
 * CONDA_PREFIX, ...) taken out of the parallel vectors `names` / `values`; each name taken
 * out is appended to `dropped` (conda protects PATH the same way). */
void menv_env_vars_drop_reserved(struct menv_strvec *names, struct menv_strvec *values,
                                 struct menv_strvec *dropped);

/* `VAR=VALUE` arguments (env config vars set, run --env) split at their first '=' (the value
 * keeps later ones, BR-029) into `names` / `values` (either may be NULL: only checked).
 * Errors: MENV_EUSAGE for one without '=' or with a name a shell cannot export. */
int menv_env_vars_assignments(char *const *args, size_t n, struct menv_strvec *names,
                              struct menv_strvec *values, struct menv_error *err);
/* What conda warns about in an environment file, one line each appended to `warnings`:
 * unknown top-level keys (FILE:LINE: a typo such as `dependncies` would otherwise make an
 * empty environment) and `variables:` that activation owns (PATH, ...), which are dropped
 * from `ef` (conda protects PATH the same way). */
void menv_envfile_check(struct menv_envfile *ef, struct menv_strvec *warnings);
/* The conda side of an environment file's specs, as conda sees it: `pip` added when the file
 * has a `pip:` section and no pip spec (BR-003; an existing pip spec is never widened,
 * BR-022); `name::pkg` where `name` is the last path part of a listed URL or path channel
 * (file:///srv/chan/second) rewritten to that channel (BR-023). `ef` may be NULL. */
void menv_envfile_conda_specs(const struct menv_envfile *ef, const struct menv_strvec *cli_channels,
                              struct menv_strvec *specs);

/* ---------------------------------------------------------------------------------------- */
/* Channels of a command and their repodata (channels.c)                                     */

/* The channels a command uses and their loaded subdirs. */
struct menv_channel_set {
	struct menv_channel **chans; /* owned, in priority order */
	size_t nchans;
	struct menv_repodata **rds; /* owned: parsed subdirs (sharded repodata) */
	size_t nrds;
	/* subdirs whose repodata.json is a file (the cached copy, or a file:// channel's): read
	 * by the solver itself, with the .solv cache of each in <pkgs>/cache */
	struct menv_strvec paths, solvs;
	const struct menv_channel **path_chans;
	const char **path_subdirs;
};
/* Resolves the channels in conda's order (cli_channels, then file_channels, then the
 * configured ones unless override_channels or `nodefaults` in file_channels; either vector
 * may be NULL), adds the channel of each `channel::name` spec (rewriting spec->channel to the
 * channel's base URL, as menv_solver_solve expects) and loads cfg->subdir and noarch
 * repodata of each through the repodata cache (CEP-36; sharded, CEP-16, where the channels
 * serve shards and every spec names a package). Status lines go to `cb` (MENV_ENV_STATUS).
 * Release `out` with menv_channel_set_release, also after an error.
 * Errors: as menv_channel_parse, menv_fetch_repodata_many, menv_repodata_parse; MENV_EINTR. */
int menv_channel_set_load(const struct menv_config *cfg, const struct menv_strvec *cli_channels,
                          const struct menv_strvec *file_channels, bool override_channels,
                          struct menv_matchspec **specs, size_t nspecs, volatile int *cancel,
                          menv_env_cb cb, void *ud, struct menv_channel_set *out,
                          struct menv_error *err);
void menv_channel_set_release(struct menv_channel_set *l);
struct menv_solver;
/* Adds every loaded subdir to the solver (files through libsolv's reader with a .solv beside
 * them, parsed ones as records). Errors: as menv_solver_add_repodata_file. */
int menv_channel_set_to_solver(const struct menv_channel_set *l, struct menv_solver *s,
                               struct menv_error *err);
/* A query over the records of channels (`menv search`, `menv repoquery`): the channels as
 * menv_channel_set_load loads them for `ms` (no virtual packages: queries show everything).
 * `*out` is freed with menv_query_free. Errors: as menv_channel_set_load; MENV_EUSAGE when
 * no channel is given or configured. */
struct menv_query;
int menv_query_open(const struct menv_config *cfg, const struct menv_strvec *channels,
                    bool override_channels, struct menv_matchspec *ms, volatile int *cancel,
                    struct menv_query **out, struct menv_error *err);
/* The records matching `ms` (menv_solver_search: name globs, newest first) or depending on
 * `name` (menv_solver_whoneeds). `*out` is a new array of `*n` records borrowed from the
 * query (free the array only). Errors: none today. */
int menv_query_search(struct menv_query *q, const struct menv_matchspec *ms,
                      const struct menv_record ***out, size_t *n, struct menv_error *err);
int menv_query_whoneeds(struct menv_query *q, const char *name, const struct menv_record ***out,
                        size_t *n, struct menv_error *err);
void menv_query_free(struct menv_query *q);
/* `repoquery depends --tree`: `r` and, indented two blanks a level under "└─ ", the newest
 * record matching each of its dependencies, recursively, each name expanded once (later
 * ones say "(shown above)"; a dependency no channel has says so). One line each appended to
 * `lines`; `seen` holds the names expanded (start empty). */
void menv_query_tree(struct menv_query *s, const struct menv_record *r, int depth,
                     struct menv_strvec *seen, struct menv_strvec *lines);
/* The installed packages of `prefix` with a dependency on `name` (repoquery whoneeds -n):
 * `*out` a new JSON array of {name, version, build, depends: the dependency string}.
 * Errors: as menv_prefix_records_load. */
int menv_env_whoneeds(const char *prefix, const char *name, json_t **out, struct menv_error *err);
/* The pins of a solve: `.condarc`'s pinned_packages, then `<prefix>/conda-meta/pinned` (one
 * MatchSpec a line, `#` comments) when `prefix` is given. `*pins` is a new array of `*n`
 * parsed specs (caller frees each with menv_matchspec_free, then the array).
 * Errors: MENV_EPARSE naming the file or key. */
int menv_pins_load(const struct menv_config *cfg, const char *prefix, struct menv_matchspec ***pins,
                   size_t *n, struct menv_error *err);
/* Fills io->link_mode and io->allow_softlinks from conda's always_copy, always_softlink and
 * allow_softlinks. */
void menv_install_opts_link_settings(const struct menv_config *cfg, struct menv_install_opts *io);

/* ---------------------------------------------------------------------------------------- */
/* Lockfiles of environments (lock.c): `menv export`, `menv lock`                            */

/* An installed environment as a conda-lock model for cfg->subdir: every conda-meta record
 * (url, md5, sha256, size, depends) and the pip-installed distributions (manager pip; one
 * installed from a local path is named name==version, with a line for it appended to
 * `warnings` when not NULL). The source is the file the environment was made from, the
 * content hash sha256 over the URLs and hashes. `*out` is freed with menv_lockfile_free.
 * Errors: as menv_prefix_records_load; MENV_EUNSUPPORTED for a record without a URL. */
int menv_env_to_lockfile(const struct menv_config *cfg, const char *prefix,
                         struct menv_strvec *warnings, struct menv_lockfile **out,
                         struct menv_error *err);
/* An installed environment as an environment file (conda env export, CEP-24), filled into
 * `ef` (zeroed by the caller; release with menv_envfile_free's fields or keep on the stack
 * and clear them): name (`name`, else the prefix's last part), prefix, variables, channels
 * (then `nodefaults`), `name=version=build` specs (`name=version` with no_builds) and the
 * pip packages as a `pip:` section with the section's index options. With from_history:
 * what the user asked for (conda-meta/.menv-request, else menv_env_history_specs).
 * Errors: as menv_env_to_lockfile, menv_env_state_vars_load. */
int menv_env_to_envfile(const struct menv_config *cfg, const char *prefix, const char *name,
                        bool no_builds, bool from_history, struct menv_envfile *ef,
                        struct menv_error *err);
/* An environment file as `conda env export --json` prints it: name, channels,
 * dependencies (the pip section as {"pip": [...]}), variables when any, prefix. New
 * reference. */
json_t *menv_envfile_json(const struct menv_envfile *ef);
/* A record's channel URL shown as conda does: the subdir dropped, a channel under
 * channel_alias shortened to its name. Caller frees. */
char *menv_channel_display(const struct menv_config *cfg, const char *channel, const char *subdir);
/* The same as a URL (conda's --show-channel-urls): the subdir dropped, a name under
 * channel_alias given back its alias. Caller frees. */
char *menv_channel_url(const struct menv_config *cfg, const char *channel, const char *subdir);
/* conda-meta/.menv-request of a prefix (what it was created from: source, channels, specs,
 * pip lines and options), a new reference; MENV_ENOTFOUND without one. */
int menv_env_request_load(const char *prefix, json_t **out);
/* The user-requested specs of an environment in the order first asked, from
 * conda-meta/history's `# update specs:` lines (a later `# remove specs:` drops a name), as
 * `conda env export --from-history`. Appends to `out`. Errors: MENV_EIO. */
int menv_env_history_specs(const char *prefix, struct menv_strvec *out, struct menv_error *err);
/* The virtual packages a lock is solved with by default, as "name=version[=build]" strings
 * appended to `out`: this machine's (menv_virtual_detect, CONDA_OVERRIDE_* applied) for its
 * own platform, except __cuda; conda-lock's defaults for the others (__unix, __linux 5.10
 * and __glibc 2.17 on linux, __osx 10.15 / 11.0, __win; __archspec for the architecture). */
void menv_lock_default_virtuals(const char *platform, struct menv_strvec *out);
/* The virtual packages of `platform` for a lock: menv_lock_default_virtuals, then each of
 * `declared` ("NAME=VERSION[=BUILD]" for every platform, "PLATFORM:NAME=..." for one) in
 * order, a declared name replacing an earlier one. Appended to `out`. */
void menv_lock_virtuals(const char *platform, const struct menv_strvec *declared,
                        struct menv_strvec *out);
/* A lock's content hash for `platform` (lowercase hex sha256, caller frees): over the source
 * file's bytes, the platform, the -c channels and the declared virtual packages (not the
 * detected ones, so one lock checks as current on every machine). */
char *menv_lock_content_hash(const struct menv_buf *src, const char *platform,
                             const struct menv_strvec *channels, const struct menv_strvec *virt);
/* Solves the environment file `ef` for `platform` (its subdir and noarch of the channels:
 * cli_channels, the file's, the configured ones unless override_channels) with exactly the
 * virtual packages `virt` ("name=version[=build]" strings) and appends the records to `lf`
 * as conda-lock v1 entries (CEP-37) of that platform; the lock's channel list is filled from
 * the first platform's. `*count` is the number of records. Errors: as menv_txn_prepare's
 * solve, prefixed with the platform. */
int menv_lock_solve_platform(const struct menv_config *cfg, const struct menv_envfile *ef,
                             const struct menv_strvec *cli_channels, bool override_channels,
                             const char *platform, const struct menv_strvec *virt,
                             const struct menv_txn_callbacks *cb, struct menv_lockfile *lf,
                             size_t *count, struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* The registry of environments shared with conda, mamba and micromamba (registry.c):        */
/* `$HOME/.conda/environments.txt`, one absolute prefix path a line, in the order they were  */
/* added (conda's format: conda reads it, strips each line and skips what is not an existing */
/* environment). Every change runs under flock(2) on `environments.txt.lock` beside it and   */
/* replaces the file with a rename (a registry that is a symbolic link has its target        */
/* replaced); lines menv does not change are kept as they are. Prefixes are compared after   */
/* menv_envreg_normalize, so "/a//b/" and "/a/b" are one entry.                              */

/* The registry's path, or NULL when $HOME is unset or empty. Caller frees. */
char *menv_envreg_path(void);
/* An absolute path normalized lexically as Python's os.path.normpath does ("//" and "."
 * dropped, ".." taken out with the part before it, no trailing '/'; symbolic links are not
 * resolved). `prefix` must start with '/'. Caller frees. */
char *menv_envreg_normalize(const char *prefix);
/* Are `a` and `b` one prefix once normalized (menv_envreg_normalize; relative paths are
 * compared as they are)? */
bool menv_env_same_prefix(const char *a, const char *b);
/* Appends the registry's prefixes to `out` (normalized, each once, in file order; blank
 * lines and lines not starting with '/' skipped). Whether they still exist is not checked.
 * A missing registry or an unset $HOME adds nothing and is no error.
 * Errors: MENV_EIO (the registry exists but cannot be read). */
int menv_envreg_load(struct menv_strvec *out, struct menv_error *err);
/* Adds the absolute `prefix` unless a line already names it, creating `~/.conda` when missing.
 * Errors: MENV_EUSAGE ($HOME unset, a relative prefix), MENV_EIO (~/.conda, the lock or the
 * registry cannot be made, read or written). */
int menv_envreg_add(const char *prefix, struct menv_error *err);
/* Takes out every line naming `prefix`; no registry is no error (and creates nothing).
 * Errors: as menv_envreg_add. */
int menv_envreg_remove(const char *prefix, struct menv_error *err);

/* Every environment menv knows, as `conda env list` lists them, each once: the root prefix,
 * the named environments of envs_dir (sorted), the registry's prefixes that still hold
 * conda-meta/ (in their order), then active ones ($CONDA_PREFIX, $CONDA_PREFIX_<n>) not
 * listed yet. Appended to `envs` as found and to `normalized` as compared
 * (menv_envreg_normalize), in the same order. Errors: MENV_EIO for an unreadable registry
 * (the others are still listed). */
int menv_env_list(const struct menv_config *cfg, struct menv_strvec *envs,
                  struct menv_strvec *normalized, struct menv_error *err);

/* The extracted packages ("<dist>" folder names of the package cache) that the environments
 * of menv_env_list use, appended to `keep` once each (`conda clean --packages` keeps them).
 * Errors: as menv_env_list (the environments found are still counted). */
int menv_env_used_packages(const struct menv_config *cfg, struct menv_strvec *keep,
                           struct menv_error *err);
/* What `conda info --json` shows, as a new JSON object: menv_version, root_prefix,
 * pkgs_dirs, envs_dirs, platform, channels (the configured ones expanded), config_files,
 * virtual_pkgs ("name=version=build", menv_virtual_detect), active_prefix,
 * active_prefix_name (null when none) and shlvl (-1 when unset). */
json_t *menv_env_info(const struct menv_config *cfg);
/* `menv doctor` (conda doctor): what is wrong with an environment. */
enum menv_doctor_kind {
	MENV_DOCTOR_CORRUPT_RECORD, /* a conda-meta/ JSON record that does not parse or names nothing */
	MENV_DOCTOR_MISSING_FILE,   /* a file a PrefixRecord lists is gone */
	MENV_DOCTOR_CHANGED_FILE,   /* its sha256 (or size) is not the record's */
	MENV_DOCTOR_LINK_OUT,       /* a symbolic link of a package resolves out of the prefix */
	MENV_DOCTOR_STALE_REGISTRY, /* ~/.conda/environments.txt names a prefix that is gone */
	MENV_DOCTOR_TOOLCHAIN,      /* two lines on nvcc, its host g++ or the driver (no fault) */
	MENV_DOCTOR_HOST_COMPILER,  /* nvcc refuses the host compiler a build gets: the smoke
	                               check's verdict (menv_smoke_host_compiler) */
};
struct menv_doctor_finding {
	enum menv_doctor_kind kind;
	char *package; /* the dist or record file (owned, may be "") */
	char *path;    /* the file, relative to the prefix, or the record's or registry's path */
	char *text;    /* one line saying it (two for TOOLCHAIN), owned */
	bool fixed;    /* --fix repaired it */
};
struct menv_doctor_report {
	struct menv_doctor_finding *findings;
	size_t n;
	size_t packages, files; /* records read, files checked */
};
/* Checks `prefix`: every JSON record of conda-meta/ read on its own (a corrupt one is a
 * finding, not an error), each file of paths_data present with its size and sha256
 * (sha256_in_prefix where the prefix was written into it), package links that leave the
 * prefix, registry lines of gone environments (with `all_envs`, every line, as for a doctor
 * asked about no environment in particular; else only the lines naming `prefix`), and where
 * the environment has nvcc its toolchain (nvcc, the host g++ it accepts, the driver's CUDA
 * from __cuda) and, as a problem, a host compiler nvcc refuses (menv_smoke_host_compiler,
 * the smoke check's own verdict). With `fix`, under the prefix lock: corrupt records set aside as
 * `<file>.corrupt` (so every command works again), packages with missing or changed files
 * linked again from the package cache in one journaled transaction, stale registry lines
 * taken out. Fill `r` (release with menv_doctor_report_release). Errors: MENV_ENOTFOUND (no
 * conda-meta/), those of menv_env_lock and of the relink. */
int menv_env_doctor(const struct menv_config *cfg, const char *prefix, bool fix, bool all_envs,
                    struct menv_doctor_report *r, struct menv_error *err);
void menv_doctor_report_release(struct menv_doctor_report *r);

/* `conda clean`: what `what` selects (MENV_CLEAN_*) removed from cfg->pkgs_dir (the writable
 * cache; the read-only entries of pkgs_dirs are never cleaned, and with none writable nothing
 * is removed, MENV_ENV_WARNING saying so), under the cache's users lock held exclusive
 * (menv_pkgcache_use: a create or install between its fetch and its link is waited for,
 * `waiting` told once), extracted packages that any environment of menv_env_list uses kept
 * (menv_env_used_packages). `events` (may be NULL) hears MENV_ENV_LOCK_WAIT and, for an
 * unreadable registry, MENV_ENV_WARNING (cleaning goes on); `cb` each removed path; both get
 * `ud`. Errors: as menv_pkgcache_clean, and menv_pkgcache_use's. */
int menv_env_clean(const struct menv_config *cfg, unsigned what, bool dry_run, menv_clean_cb cb,
                   menv_env_cb events, void *ud, struct menv_clean_stats *st,
                   struct menv_error *err);
/* `menv rename` (conda rename, conda/cli/main_rename.py). */
struct menv_rename_opts {
	const struct menv_config *cfg;
	const char *active;   /* the active prefix ($CONDA_PREFIX), or NULL: never renamed */
	bool force;           /* an existing destination is replaced (conda's --yes) */
	bool dry_run;         /* only the checks */
	const char *cmdline;  /* for the clone's and the original's history */
	volatile int *cancel; /* non-zero (a signal handler) stops: MENV_EINTR */
	struct menv_txn_callbacks cb; /* the two transactions' events (confirm is not used) */
};
struct menv_rename_result {
	size_t packages;  /* conda packages linked into the new prefix */
	size_t untracked; /* files and links no package owns, copied */
};
/* The checks of a rename from the environment `src` to the new prefix `dest` (absolute):
 * MENV_EUSAGE for the root environment, the active one, the same path, a path inside `src`,
 * the root prefix or a folder holding `src`, a `dest` with characters menv refuses
 * (menv_env_check_prefix); MENV_EEXIST when `dest` exists and is not empty: always when it
 * is not an environment (a directory, not a link, holding conda-meta/; conda's --force would
 * remove any folder), else unless `force`. */
int menv_env_rename_check(const struct menv_config *cfg, const char *src, const char *dest,
                          const char *active, bool force, struct menv_error *err);
/* Renames the environment `src` to `dest` (both absolute) as conda does, by a clone and a
 * remove, each one transaction: with `src` locked, a conda-lock of its conda packages is
 * created at `dest` (linked from the package cache, fetched from their URLs when the cache
 * lost them: every placeholder file, shebang and noarch python file is written for `dest`),
 * the files and links no package owns (pip's) are copied with `src` replaced by `dest` in
 * text files and link targets, conda-meta/history, .menv-request and state are copied; then
 * `src` is removed (whole-environment remove, registry updated). With `force` an existing
 * `dest` is moved aside and removed after, or put back when the clone fails (which removes
 * the partial clone; `src` is untouched). Errors: menv_env_rename_check's, the
 * transactions' (MENV_ENOTFOUND, MENV_ENET, MENV_ECHECKSUM, MENV_EIO, MENV_EINTR, ...). */
int menv_env_rename(const struct menv_rename_opts *o, const char *src, const char *dest,
                    struct menv_rename_result *res, struct menv_error *err);

/* The prefix of a new environment: `<envs_dir>/NAME`, or PREFIX made absolute against the
 * working directory (trailing '/' dropped). A name may not be empty, ".", "..", start with
 * '-' or hold '/', ' ', ':' or '#' (conda's rule). Caller frees; NULL with MENV_EUSAGE when
 * neither or both are given or the name is refused, MENV_EIO without a working directory. */
char *menv_env_prefix_new(const struct menv_config *cfg, const char *name, const char *prefix,
                          struct menv_error *err);
/* The prefix of an existing environment: -n NAME ("base" is the root prefix), -p PREFIX, else
 * the active $CONDA_PREFIX, through menv_env_locate. Caller frees; NULL with MENV_EUSAGE
 * (nothing given, both given, a bad name) or menv_env_locate's error. */
char *menv_env_prefix_find(const struct menv_config *cfg, const char *name, const char *path,
                           struct menv_error *err);

#endif
