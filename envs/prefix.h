/*
 * prefix.h - prefix mechanics (CEP-32, CEP-34): linking packages from the package cache into
 * a prefix, prefix replacement, the journaled create/apply/remove below the transaction,
 * recovery and the prefix lock, `conda-meta/` PrefixRecords and history, and pip in a prefix.
 * What an environment change tells its caller (enum menv_env_event) is declared here too.
 *
 * A new environment is built in a temporary directory beside its target and renamed into
 * place when complete, so a failed or interrupted create leaves nothing behind. Never
 * touches the network.
 */
#ifndef MENV_ENVS_PREFIX_H
#define MENV_ENVS_PREFIX_H

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
	bool add_pip;                        /* add_pip_as_python_dependency: python's record
	                                        in conda-meta/ depends on pip, as conda's */
	bool no_wait;   /* a busy prefix lock is MENV_ELOCKED, not waited for */
	bool locked;    /* the caller already holds the prefix lock (it read
					      the records its plan was made from under it) */
	menv_env_cb cb; /* events, or NULL */
	void *ud;
	/* `variables:` of the environment file (parallel, may be NULL): written to
	 * conda-meta/state as conda's {"env_vars": {...}} */
	const struct menv_strvec *var_names, *var_values;
	/* create only, or NULL: called with the staging directory complete (packages, records,
	 * history) before it is renamed into place, so that what it adds appears with the
	 * environment, atomically (rename's copies of the files no package owns) */
	int (*staged)(void *ud, const char *staging, struct menv_error *err);
	void *staged_ud;
	bool steps_follow; /* create: steps follow (pip, the request, the registry line); the
	                      environment appears marked as not yet complete (intent.c
	                      `.menv-creating`) until they are done */
	bool whole_env;    /* menv_env_remove: every package goes, so a record that cannot be
	                      read is left out instead of stopping the removal */
};

/* Test hooks (environment variables, read by the transactions; for tests only):
 *   MENV_TEST_PAUSE_AFTER_UNLINK=SECONDS  sleep after the unlink phase of menv_env_apply,
 *                                         before the first package is linked (Ctrl-C tests);
 *   MENV_TEST_CRASH_AFTER=N               SIGKILL the process itself at its N-th crash
 *                                         point: each journaled change, each step of rename,
 *                                         env remove, doctor --fix and a create's pip step
 *                                         (crash-consistency tests);
 *   MENV_TEST_GATE_RENAME=FIFO            rename, holding the source's lock, reads FIFO to
 *                                         its end before it clones (lost-write tests);
 *   MENV_TEST_GATE_RELINK=FIFO            doctor --fix, holding the cache's users lock,
 *                                         reads FIFO to its end before it relinks;
 *   MENV_TEST_PAUSE_BEFORE_LINK=SECONDS   sleep in menv_txn_commit after the fetch, holding
 *                                         the cache's users lock (clean-vs-create tests);
 *   MENV_TEST_PAUSE_REGISTRY=SECONDS      sleep in an update of environments.txt, holding
 *                                         its lock (Ctrl-C-after-commit tests). */

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
 * remains in it (menv's state, files no package owns) is deleted. A record that cannot be
 * read is no error: its files go with the prefix. Errors: as menv_env_apply. */
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
/* Is `prefix` a create that has not committed: its journal starts with the create's record and
 * has no commit record (a create killed after its prefix was renamed into place, or one still
 * running)? Not an environment yet: the next menv_env_recover removes it. Reads the journal,
 * no lock; false when there is none or it cannot be read. */
bool menv_env_half_created(const char *prefix);

/* Whether `prefix` holds the intent record of an interrupted multi-step command (rename, env
 * remove, doctor --fix, a create's pip step; intent.c): then menv_env_intent_recover must run
 * before it is used. */
bool menv_env_intent_pending(const char *prefix);
/* Whether `prefix` is an environment on its way out or not yet complete (an env remove or
 * rename committed, a rename's clone, a create whose pip step runs): `menv env list` does not
 * show it. */
bool menv_env_leaving(const char *prefix);
/* Under the caller's lock of `prefix`: finishes (the commit point was passed) or rolls back an
 * interrupted rename, env remove, doctor --fix or create's pip step that `prefix` is the
 * source, the destination's clone, the removed or the repaired environment of. `*said`
 * (caller frees; NULL when nothing was pending) is the line that says which. A clone's source
 * is locked in turn (cb: its wait). Errors: MENV_ENOTFOUND when `prefix` is gone as a result
 * (removed, renamed away), MENV_EIO. */
int menv_env_intent_recover(const char *prefix, menv_env_cb cb, void *ud, char **said,
                            struct menv_error *err);
/* Whether `prefix` (absolute) is missing and an interrupted `rename --force` set it aside
 * beside it (`.NAME.menv-replaced-TOKEN` holding conda-meta/.menv-replaced): then
 * menv_env_replaced_recover must run before `prefix` is used or made anew. No lock. */
bool menv_env_replaced_pending(const char *prefix);
/* For a menv_env_replaced_pending `prefix`: the rename's source (locked in turn, cb: its wait)
 * recovers it (rolled back: the old environment moved back to `prefix`; committed: the clone
 * stands); a source that no longer knows of the rename (gone) leaves the aside folder moved
 * back. `*said` (caller frees; NULL when nothing was done) says which. Errors: MENV_EIO. */
int menv_env_replaced_recover(const char *prefix, menv_env_cb cb, void *ud, char **said,
                              struct menv_error *err);

/* Locks `prefix` for a change (flock on conda-meta/.menv.lock, into which it writes its pid):
 * waits for another menv process, calling cb(MENV_ENV_LOCK_WAIT) once (naming the holder's
 * pid when known, menv_flock_holder), unless `no_wait`. `*lock_fd` is released with
 * menv_env_unlock() (or when the process exits). Once taken, the lock is re-validated: a
 * prefix replaced meanwhile at the same path is locked again, one removed or renamed by the
 * process this one waited for is an error (never a success on a prefix that is gone).
 * Errors: MENV_ENOTFOUND (no conda-meta/, or removed while waiting), MENV_ELOCKED (busy and
 * no_wait), MENV_EINTR (a signal while waiting), MENV_EIO. */
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
/* The command line `argv[1..argc)` as conda-meta/history's "# cmd:" holds it: "menv" and
 * each word after a blank, a word with a blank, tab, quote or '$' in single quotes. New
 * string, caller frees. */
char *menv_history_cmdline(int argc, char *const *argv);
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
/* `conda list --revisions` of `prefix` (its conda-meta/history, menv_history_load): `*out`
 * a new JSON array of menv_revision_json, one per revision; `text` (may be NULL) gets
 * conda's lines appended: "DATE  (rev N)", the changed packages, then "-label" and
 * "+label" lines (the channel part before "::" left out), a blank line after each.
 * Errors: those of menv_history_load. */
int menv_history_revisions(const char *prefix, json_t **out, struct menv_buf *text,
                           struct menv_error *err);

/* An installed package (a parsed conda-meta/<dist>.json). */
struct menv_prefix_record {
	json_t *json;                       /* the whole record (owned reference) */
	const char *name, *version, *build; /* borrowed from json */
	int64_t build_number;
	const char *channel, *subdir, *url; /* borrowed, may be NULL */
};

/* `v` as JSON text the way Python's json.dump(v, indent=2) writes it, as conda writes
 * conda-meta/ (ASCII with lower-case `\\uxxxx` escapes, DEL escaped, objects' keys in their
 * order, 2-space indent, no final newline; reals as Python's repr(float): "0.1", "1e+16"),
 * written straight into one buffer; "null" where jansson's dump fails (a string that is not
 * UTF-8). `hint`: the bytes expected (0: unknown). Returns a NUL-terminated string the
 * caller frees; never NULL. */
char *menv_json_python_dump(json_t *v, size_t hint);

/* Reads every `conda-meta/<dist>.json` of `prefix`, sorted by name. `*out` is a new array of
 * `*n` records; free with menv_prefix_records_free(). A prefix without conda-meta/ is
 * MENV_ENOTFOUND; an unreadable record is MENV_EPARSE naming the file. */
int menv_prefix_records_load(const char *prefix, struct menv_prefix_record **out, size_t *n,
                             struct menv_error *err);
/* As menv_prefix_records_load, but a record that cannot be read (not JSON, or without name,
 * version and build) is left out and its path pushed to `skipped` (caller's vector): what
 * removing a whole environment reads, which must work whatever its records hold. Errors:
 * MENV_ENOTFOUND for a prefix without conda-meta/, MENV_EIO. */
int menv_prefix_records_load_readable(const char *prefix, struct menv_prefix_record **out,
                                      size_t *n, struct menv_strvec *skipped,
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
/* pip (pip.c): the `pip:` section of an environment                                         */

/* A distribution pip installed into a prefix. Strings owned. */
struct menv_pip_dist {
	char *name;     /* PEP 503-normalised ("charset-normalizer") */
	char *version;  /* as its METADATA says */
	char *url;      /* where the wheel came from (PEP 610 direct_url.json, or what menv saw
			  pip download), or NULL */
	char *sha256;   /* of that file, lowercase hex, or NULL */
	char *index;    /* the index pip found it in (its --index-url), without credentials, or
			   NULL */
	bool local;     /* installed from a local path (direct_url.json names a file:// URL) */
	char *editable; /* `pip install -e DIR`: the project folder DIR (PEP 660's direct_url.json
			   with dir_info.editable, or setuptools' <name>.egg-link), else NULL */
};

/* `url` without its user information ("https://user:pass@host/x" -> "https://host/x"), for
 * what a lock or MENV_SOURCE records: pip finds credentials in .netrc, its keyring or the
 * environment where the lock is used. Caller frees. */
char *menv_pip_url_strip_auth(const char *url);
/* A pip option line ("--index-url URL", "--extra-index-url=URL", "-f URL") with the URL's
 * credentials dropped as menv_pip_url_strip_auth does ("--index-url URL" after "="); other
 * lines are copied. Caller frees. */
char *menv_pip_option_strip_auth(const char *opt);

/* The distributions pip installed in `prefix`: the `*.dist-info` folders of
 * lib/pythonX.Y/site-packages that no conda-meta record lists among its files (BR-021),
 * with Name and Version from their METADATA, and the `*.egg-link` files of editable
 * installs (`setup.py develop`: Name and Version from the project's *.egg-info/PKG-INFO). `*out` is a new array of `*n`; free with
 * menv_pip_dists_free(). Errors: as menv_prefix_records_load. */
int menv_pip_list(const char *prefix, struct menv_pip_dist **out, size_t *n,
                  struct menv_error *err);
/* menv_pip_list, and each unowned dist-info whose METADATA cannot be written into a record
 * or an export (no Name or Version, a Name that is not PEP 508's, a Version with characters
 * PEP 440 does not use, longer than 200 bytes, non-UTF-8) is skipped with one line appended
 * to `warnings` (owned strings; may be NULL) naming the dist-info folder. */
int menv_pip_list_checked(const char *prefix, struct menv_pip_dist **out, size_t *n,
                          struct menv_strvec *warnings, struct menv_error *err);
void menv_pip_dists_free(struct menv_pip_dist *v, size_t n);
/* How many of `after` are not in `before` with the same name and version: what a pip step
 * installed (sorted merge, O(n log n)). The arrays are only read. */
size_t menv_pip_dists_new(const struct menv_pip_dist *before, size_t nbefore,
                          const struct menv_pip_dist *after, size_t nafter);
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
/* MENV_ENOTFOUND "the environment has no python to run pip with ('PREFIX/bin/python'): ...",
 * menv_pip_install's error where the prefix has no python (the plan says it first). */
int menv_pip_no_python(const char *prefix, struct menv_error *err);
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

#endif
