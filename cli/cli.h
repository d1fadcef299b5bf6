/*
 * cli.h - the menv executable's subcommands (git's builtin.h pattern). Each command parses its
 * own argv with getopt_long, calls libmenv, renders the result and returns the exit code.
 * Only the CLI prints errors.
 */
#ifndef MENV_CLI_H
#define MENV_CLI_H

#include <signal.h>

#include "envs.h"
#include "fetch.h"
#include "specs.h"

/* Exit codes */
#define MENV_EXIT_OK          0
#define MENV_EXIT_FAIL        1
#define MENV_EXIT_USAGE       2
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
int menv_cmd_search(int argc, char **argv);
int menv_cmd_clean(int argc, char **argv);
int menv_cmd_repoquery(int argc, char **argv);

/* Activation, `menv run`, environments (cmd_shell.c, cmd_run.c, cmd_env.c) */
int menv_cmd_shell(int argc, char **argv);
int menv_cmd_activate_nohook(int argc, char **argv);
int menv_cmd_run(int argc, char **argv);
int menv_cmd_env(int argc, char **argv);
/* The absolute path of the running menv executable (/proc/self/exe). Caller frees. */
char *menv_cli_self_exe(void);
/* .condarc `changeps1` (default true; $MENV_CHANGEPS1 / $CONDA_CHANGEPS1 override). */
bool menv_cli_changeps1(const struct menv_config *cfg);
/* -n NAME ("base" is the root prefix) / -p PREFIX / else the active $CONDA_PREFIX, as an
 * existing environment (menv_env_locate). Caller frees; NULL + err (MENV_EUSAGE,
 * MENV_ENOTFOUND) otherwise. */
char *menv_cli_env_prefix(const struct menv_config *cfg, const char *name, const char *path,
                          struct menv_error *err);

/* The registry of environments shared with conda, mamba and micromamba (envreg.c):
 * `$HOME/.conda/environments.txt`, one absolute prefix path a line, in the order they were
 * added (conda's format: conda reads it, strips each line and skips what is not an existing
 * environment). Every change runs under flock(2) on `environments.txt.lock` beside it and
 * replaces the file with a rename (menv_write_file_atomic; a registry that is a symbolic link
 * has its target replaced); lines menv does not change are kept as they are. Prefixes are
 * compared after menv_cli_envreg_normalize, so "/a//b/" and "/a/b" are one entry. */
/* The registry's path, or NULL when $HOME is unset or empty. Caller frees. */
char *menv_cli_envreg_path(void);
/* An absolute path normalized lexically as Python's os.path.normpath does ("//" and "."
 * dropped, ".." taken out with the part before it, no trailing '/'; symbolic links are not
 * resolved). `prefix` must start with '/'. Caller frees. */
char *menv_cli_envreg_normalize(const char *prefix);
/* Appends the registry's prefixes to `out` (normalized, each once, in file order; blank
 * lines and lines not starting with '/' skipped). Whether they still exist is not checked.
 * A missing registry or an unset $HOME adds nothing and is no error.
 * Errors: MENV_EIO (the registry exists but cannot be read). */
int menv_cli_envreg_load(struct menv_strvec *out, struct menv_error *err);
/* Adds the absolute `prefix` unless a line already names it, creating `~/.conda` when missing.
 * Errors: MENV_EUSAGE ($HOME unset, a relative prefix), MENV_EIO (~/.conda, the lock or the
 * registry cannot be made, read or written). */
int menv_cli_envreg_add(const char *prefix, struct menv_error *err);
/* Takes out every line naming `prefix`; no registry is no error (and creates nothing).
 * Errors: as menv_cli_envreg_add. */
int menv_cli_envreg_remove(const char *prefix, struct menv_error *err);
/* What create and remove --all call once the prefix is in place / gone: menv_cli_envreg_add
 * / menv_cli_envreg_remove, where a failure is one "menv: warning: ..." line on stderr and
 * never fails the command. */
void menv_cli_envreg_register(const char *prefix);
void menv_cli_envreg_unregister(const char *prefix);

/* Changing environments (cmd_install.c): install, remove, update, `env update` (called by
 * cmd_env.c's dispatcher for `menv env update`). */
int menv_cmd_install(int argc, char **argv);
int menv_cmd_remove(int argc, char **argv);
int menv_cmd_update(int argc, char **argv);
int menv_cmd_env_update(int argc, char **argv);
/* `menv list --revisions [--json]` for an environment (cmd_install.c). */
int menv_cli_list_revisions(const char *prefix, bool json);

/* Channels and their repodata for a command (channels.c). */
struct menv_cli_channels {
	struct menv_channel **chans; /* owned, in priority order */
	size_t nchans;
	struct menv_repodata **rds; /* owned: parsed subdirs (sharded repodata) */
	size_t nrds;
	/* subdirs whose repodata.json is in the cache: read by the solver itself */
	struct menv_strvec
	        paths; /* their repodata.json (the cached copy, or a file:// channel's) */
	struct menv_strvec solvs; /* the .solv cache of each, in <pkgs>/cache */
	const struct menv_channel **path_chans;
	const char **path_subdirs;
};
/* Resolves the channels in conda's order (cli_channels, then file_channels, then the
 * configured ones unless override_channels or `nodefaults` in file_channels; either vector
 * may be NULL), adds the channel of each `channel::name` spec (rewriting spec->channel to
 * the channel's base URL, as menv_solver_solve expects) and loads cfg->subdir and noarch
 * repodata of each through the repodata cache (a channel needs at least one of the two;
 * sharded where the channels serve shards). Prints progress on stderr unless quiet. Release
 * `out` with menv_cli_channels_release, also after an error.
 * Errors: as menv_channel_parse, menv_fetch_repodata_many, menv_repodata_parse; MENV_EINTR. */
int menv_cli_load_channels(const struct menv_config *cfg, const struct menv_strvec *cli_channels,
                           const struct menv_strvec *file_channels, bool override_channels,
                           struct menv_matchspec **specs, size_t nspecs, bool quiet,
                           struct menv_cli_channels *out, struct menv_error *err);
void menv_cli_channels_release(struct menv_cli_channels *l);
struct menv_solver;
/* Adds every loaded subdir to the solver (cached files through libsolv's reader with a .solv
 * beside them, parsed ones as records). Errors: as menv_solver_add_repodata_file. */
int menv_cli_channels_to_solver(const struct menv_cli_channels *l, struct menv_solver *s,
                                struct menv_error *err);

/* Fills io->link_mode and io->allow_softlinks from conda's always_copy, always_softlink and
 * allow_softlinks (today from $MENV_<KEY> / $CONDA_<KEY>, e.g. CONDA_ALWAYS_COPY=true). */
void menv_cli_link_settings(const struct menv_config *cfg, struct menv_install_opts *io);
/* Draws environment-transaction events (menv_env_cb); `ud` is a struct menv_cli_events or
 * NULL. Clobbers and warnings go to stderr, package messages to stdout (or into
 * ud->messages with --json). */
struct menv_cli_events {
	json_t *messages; /* non-NULL: collect package messages here (--json) */
	bool verbose;     /* show link progress and failing scripts' output */
};
void menv_cli_env_event(void *ud, enum menv_env_event ev, const char *msg);
/* Takes the prefix lock of an existing environment for a change (menv_env_lock; `*lock_fd`
 * to release with menv_env_unlock) and finishes or rolls back a transaction a crash left
 * there, saying so on stderr. Errors: menv_env_lock's and menv_env_recover's;
 * MENV_ENOTFOUND when the prefix was an interrupted create (now removed). */
int menv_cli_lock_env(const char *prefix, bool no_wait, struct menv_cli_events *ev, int *lock_fd,
                      struct menv_error *err);

/* Lockfiles and pip (cmd_export.c, cmd_lock.c, lockinstall.c) */
int menv_cmd_lock(int argc, char **argv);
/* An installed environment as a conda-lock model for cfg->subdir: every conda-meta record
 * (url, md5, sha256, size, depends) and the pip-installed distributions (manager pip).
 * Errors: as menv_prefix_records_load; MENV_EUNSUPPORTED for a record without a URL. */
int menv_cli_lock_from_prefix(const struct menv_config *cfg, const char *prefix,
                              struct menv_lockfile **out, struct menv_error *err);
/* conda-meta/.menv-request of a prefix (what it was created from), or MENV_ENOTFOUND. */
int menv_cli_request_load(const char *prefix, json_t **out);
/* A record's channel URL shown as conda does (subdir dropped, channel_alias made a name). */
char *menv_cli_channel_display(const struct menv_config *cfg, const char *channel,
                               const char *subdir);
/* Does the file hold a lockfile (menv_lockfile_detect)? */
bool menv_cli_is_lockfile(const char *path);
struct menv_cli_lock_opts {
	const char *file;          /* the lockfile */
	const char *env;           /* pixi environment (-e), or NULL for "default" */
	const char *name, *prefix; /* -n / -p */
	bool dry_run, json, quiet;
	bool no_wait; /* install -f: --no-wait */
	bool smoke;   /* run the smoke check on the new or changed environment */
};
/* `menv create -f LOCKFILE`: the lock's records for cfg->subdir, fetched (hashes verified)
 * and linked without repodata or solver, then its pip entries (--no-deps, --require-hashes
 * when every entry has a sha256), then the smoke check where o->smoke and the environment
 * has a CUDA compiler (a failed check keeps the environment and exits 1, as create -f
 * environment.yml). Prints, and returns the exit code. */
int menv_cli_create_from_lock(const struct menv_config *cfg, const struct menv_cli_lock_opts *o);
/* `menv install -f LOCKFILE` into the existing environment -n/-p: the lock's conda records
 * for cfg->subdir that the prefix does not hold as name-version-build are linked, and the
 * installed record of each such name unlinked, in one transaction (menv_env_apply, rolled
 * back on failure) under the prefix lock; packages the lock does not name stay, as in
 * micromamba. No repodata, no solve. Then the lock's pip entries not installed at their
 * version (--no-deps, --require-hashes when every entry has a sha256); when pip fails, what it
 * added is uninstalled and the conda packages go back to the revision before
 * (menv_cli_pip_into_env). Prints, and returns the exit code. */
int menv_cli_install_from_lock(const struct menv_config *cfg, const struct menv_cli_lock_opts *o);
/* The conda side of an environment file's specs, as conda sees it: `pip` added when the file
 * has a `pip:` section and no pip spec (BR-003; an existing pip spec is never widened,
 * BR-022); `name::pkg` where `name` is the last path part of a listed URL or path channel
 * (file:///srv/chan/second) rewritten to that channel (BR-023). `ef` may be NULL. */
void menv_cli_envfile_specs(const struct menv_envfile *ef, const struct menv_strvec *cli_channels,
                            struct menv_strvec *specs);
/* After menv_env_create renamed a new environment into place: records what it was made
 * from (conda-meta/.menv-request) and runs the file's `pip:` section with the
 * environment's pip; when pip fails the new prefix is removed and the error returned. */
int menv_cli_after_create(const struct menv_config *cfg, const char *prefix,
                          const struct menv_envfile *ef, const struct menv_strvec *cli_channels,
                          const struct menv_strvec *specs, bool quiet, struct menv_error *err);
/* The pip step of a change to an existing environment (`env update -f` with a `pip:`
 * section, `install -f LOCK` with pip entries), after its conda transaction committed, under
 * the caller's prefix lock. When pip fails, the distributions it added are uninstalled and,
 * when revert_to >= 0, the conda packages go back to that history revision (the one before
 * this command's transaction; menv_cli_revert_to_revision), so the environment is as it was;
 * err says pip's failure and what was put back. Errors: as menv_pip_install. */
int menv_cli_pip_into_env(const struct menv_config *cfg, const char *prefix,
                          const struct menv_pip_request *pr, long revert_to,
                          struct menv_error *err);
/* When a plan moves python to another minor version, every installed noarch: python package
 * that stays is unlinked and linked again, as conda does (CEP-20: its files live in
 * lib/pythonX.Y/site-packages and its .pyc carry X.Y's tag). The record comes from the
 * solver's channels (`solver` may be NULL; the same URL preferred), else from the installed
 * PrefixRecord itself (its package is in the cache or downloaded again from its URL).
 * `*link` / `*unlink` (arrays of *nlink / *nunlink) grow (realloc'd; the caller re-orders
 * links that must follow their dependencies); records made from PrefixRecords go into
 * `*made`, a new array of *nmade records (*made must be NULL on entry; release each, then
 * free the array, after the links are done with). Returns how many packages were added. No
 * errors: a record that cannot be rebuilt is left as it is. */
size_t menv_cli_relink_noarch_python(struct menv_solver *solver, struct menv_prefix_record *inst,
                                     size_t ninst, const struct menv_record ***link, size_t *nlink,
                                     json_t ***unlink, size_t *nunlink, struct menv_record **made,
                                     size_t *nmade);
/* Takes back a pip step into `prefix` that a killed menv left half done (its
 * conda-meta/.menv-pip-pending marker): the distributions it added are uninstalled, the
 * conda packages go back to the revision before and those pip removed files of are linked
 * again, as menv_cli_pip_into_env does on a failure. The caller holds the prefix lock.
 * `*undone` says whether there was such a step. Errors: those of the steps, naming which. */
int menv_cli_pip_recover(const char *prefix, bool *undone, struct menv_error *err);
/* Links and unlinks what it takes to give `prefix` the packages of history revision `rev`
 * again (as `install --revision`; records from the package cache), as one journaled
 * transaction whose history `# cmd:` line names `why`. The caller holds the prefix lock.
 * Errors: MENV_ENOTFOUND (rev out of range, a package of that revision no longer in the
 * cache), and those of menv_env_apply. */
int menv_cli_revert_to_revision(const struct menv_config *cfg, const char *prefix, size_t rev,
                                const char *why, struct menv_error *err);

/* Rendering shared by the commands (render.c). A record in conda's --json transaction shape
 * (name, version, build_string, build_number, channel, base_url, subdir, platform, url, fn,
 * dist_name, md5, sha256, size); caller owns the new reference. */
json_t *menv_cli_record_json(const struct menv_record *r);
/* A menv_fetch_cb drawing one line per package on stderr; `ud` points at a bool "quiet". */

void menv_cli_on_fetch(void *ud, enum menv_fetch_event ev, const struct menv_record *r);
/* Download progress on a terminal, redrawn in place on stderr (fetch's progress callback):
 * a bar per running download (name, bytes; at most MENV_CLI_PROGRESS_ROWS) above an overall
 * bar with bytes, rate, ETA and packages done; only the overall bar stays at the end.
 * Nothing when quiet or when stderr is not a terminal (the per-package lines of
 * menv_cli_on_fetch remain). `p` must outlive the fetch. */
#define MENV_CLI_PROGRESS_ROWS 8
struct menv_cli_progress {
	double start; /* seconds, monotonic */
	size_t lines; /* per-download lines drawn above the overall bar last time */
	bool ended;   /* the last line was drawn */
};
void menv_cli_progress_init(struct menv_cli_progress *p, struct menv_fetch_opts *fo, bool quiet);
void menv_cli_progress_draw(void *ud, int64_t done, int64_t total, size_t finished, size_t n,
                            const struct menv_fetch_item *running, size_t nrunning);
/* With --json, a failure as conda's JSON on stdout: success false, the error's kind and
 * message, and for an unsatisfiable request the solver's problem tree (text and JSON). */
struct menv_solver;
void menv_cli_print_json_error(const struct menv_error *err, const struct menv_solver *solver);
/* True when `path` exists and is not an empty directory (a create target that is taken). */
bool menv_cli_prefix_in_use(const char *path);

/* Runs the ops/ smoke check on `prefix` and draws it (to stderr with `json`); returns the
 * exit code: 0 passed (GPU steps may be skipped without a driver), 1 failed (the environment
 * is kept), other codes for errors, which are printed. With `report`, the result as JSON
 * goes there (caller owns it); else with `json` it is printed on stdout. */
int menv_cli_smoke(const char *prefix, bool json, bool verbose, bool keep, json_t **report);
/* Finishes or rolls back a transaction that a crash, SIGKILL or Ctrl-C interrupted in
 * `prefix` (menv_env_recover, under the prefix lock, waiting for it), saying which on stderr;
 * nothing when none is pending. Every command that reads an environment calls it first.
 * Errors: those of menv_env_lock and menv_env_recover. */
int menv_cli_recover(const char *prefix, struct menv_error *err);
/* One "menv: warning: FILE:LINE: unknown key 'K' is ignored" line on stderr for each top-level
 * key of `ef` that an environment file does not have (a typo such as `dependncies` would
 * otherwise make an empty environment without a word), as conda warns. */
void menv_cli_envfile_warnings(const struct menv_envfile *ef);
/* For `-f PATH` that is not a regular file (a pipe: `-f /dev/stdin`, `-f <(cat f)`): reads it
 * once into a new temporary file and returns that file's path (the caller unlinks and frees
 * it); NULL for a regular file (use PATH itself) or on an error (err set: MENV_ENOTFOUND,
 * MENV_EIO). */
char *menv_cli_file_once(const char *path, struct menv_error *err);
/* Takes the variables activation owns (menv_env_var_reserved: PATH, CONDA_PREFIX, ...) out of
 * the parallel vectors `names` / `values` (freeing them), with one "menv: warning: <where>:
 * ..." line on stderr for each, as conda does for a protected PATH. */
void menv_cli_drop_reserved_vars(struct menv_strvec *names, struct menv_strvec *values,
                                 const char *where);
/* Should create/install run the smoke check on this prefix? When the setting smoke_check is
 * on (default) and the environment holds a CUDA compiler (cudatoolkit or cuda-nvcc). */
bool menv_cli_wants_smoke(const struct menv_config *cfg, const char *prefix);

/* The pins of a solve: `.condarc`'s pinned_packages, then `<prefix>/conda-meta/pinned` (one
 * MatchSpec a line, `#` comments) when `prefix` is given. `*pins` is a new array of `*n`
 * parsed specs (caller frees each with menv_matchspec_free, then the array).
 * Errors: MENV_EPARSE naming the file or key. */
int menv_cli_load_pins(const struct menv_config *cfg, const char *prefix,
                       struct menv_matchspec ***pins, size_t *n, struct menv_error *err);

/* `menv smoke`: the ops/ sample built and tested in an environment (envs/smoke.c). */
int menv_cmd_smoke(int argc, char **argv);

#endif
