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
	MENV_ENV_RECOVERED,     /* an interrupted transaction was rolled back or finished */
	MENV_ENV_CLOBBER,       /* a path is shared by two packages (conda's ClobberWarning) */
	MENV_ENV_MESSAGE,       /* text a package left for the user (.messages.txt, prelink) */
	MENV_ENV_WARNING,       /* something the user should know; the transaction goes on */
	MENV_ENV_SCRIPT_OUTPUT, /* the output of a link script that failed */
	MENV_ENV_UNLINK,        /* progress: unlinking the package `msg` (a dist) */
	MENV_ENV_LINK,          /* progress: linking the package `msg` (a dist) */
};
typedef void (*menv_env_cb)(void *ud, enum menv_env_event ev, const char *msg);

struct menv_install_opts {
	const char *pkgs_dir;                /* the package cache holding the extracted packages */
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
 *                                         journaled change (crash-consistency tests). */

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

/* Locks `prefix` for a change (flock on conda-meta/.menv.lock): waits for another menv
 * process, calling cb(MENV_ENV_LOCK_WAIT) once, unless `no_wait`. `*lock_fd` is released with
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
/* The shell's name as --shell takes it; static storage. */
const char *menv_shell_name(enum menv_shell sh);
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
	char *name;    /* PEP 503-normalised ("charset-normalizer") */
	char *version; /* as its METADATA says */
	char *url;     /* where the wheel came from (PEP 610 direct_url.json, or what menv saw
			  pip download), or NULL */
	char *sha256;  /* of that file, lowercase hex, or NULL */
	bool local;    /* installed from a local path (direct_url.json names a file:// URL) */
};

/* The distributions pip installed in `prefix`: the `*.dist-info` folders of
 * lib/pythonX.Y/site-packages that no conda-meta record lists among its files (BR-021),
 * with Name and Version from their METADATA. `*out` is a new array of `*n`; free with
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
 * --extra-index-url, --find-links, -r, -e) work. pip's output goes to stderr. Afterwards
 * records in each new dist-info folder (MENV_SOURCE) the URL and sha256 pip reported for
 * its wheel, for lockfile exports. Must run in the final prefix (scripts get its path).
 * Errors: MENV_ENOTFOUND (no python in the prefix), MENV_EIO (pip failed, naming its exit
 * status and the requirements), MENV_EINTR. The caller rolls back (menv_pip_rollback_prefix
 * for a new environment). */
int menv_pip_install(const char *prefix, const struct menv_pip_request *req,
                     struct menv_error *err);
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
	menv_smoke_cb cb;        /* may be NULL */
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
	char log_path[1024];  /* the whole output of every step, kept */
	char build_dir[1024]; /* "" once removed (all passed and !keep_build) */
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

/* Writes menv_smoke_result_json() to `<prefix>/conda-meta/menv-smoke-check` atomically.
 * Errors: MENV_EIO. */
int menv_smoke_write_record(const char *prefix, const struct menv_smoke_result *res,
                            struct menv_error *err);

#endif
