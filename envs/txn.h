/*
 * txn.h - changing environments: the transaction engine every create, install, update,
 * remove and lockfile install goes through (txn.c), the channels of a command and their
 * repodata (channels.c), environments as lockfiles and environment files (lock.c), and
 * rename, which is two transactions (rename.c).
 */
#ifndef MENV_ENVS_TXN_H
#define MENV_ENVS_TXN_H

#include "prefix.h"
#include "smoke.h"

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
	const char *file_shown; /* the lockfile's name as the user gave it (NULL: `file`), which
				   the plan's lock_file names: /dev/stdin, not a pipe's copy */
	const char *lock_env;   /* a pixi lock's environment (-e), NULL: "default" */
	const struct menv_strvec *specs;    /* MatchSpecs of the command line, or NULL */
	const struct menv_strvec *channels; /* -c channels, or NULL */
	bool override_channels;             /* --override-channels */
	bool all;                           /* update --all, remove --all */
	bool prune;                         /* env update --prune */
	unsigned modifiers;                 /* MENV_MOD_* */
	long revision;                      /* MENV_TXN_REVISION: the revision to go back to */
	bool dry_run;                       /* plan only: no lock, nothing changed */
	bool no_wait;                       /* a busy prefix lock is MENV_ELOCKED */
	bool locked; /* the caller holds the prefix lock (menv_env_lock) through the transaction */
	int (*staged)(void *ud, const char *staging, struct menv_error *err); /* create: as in */
	void *staged_ud;                                                      /* install_opts */
	bool smoke;       /* menv_txn_smoke runs where menv_env_wants_smoke */
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
	bool finished_removal;         /* remove --all: preparing finished an interrupted
	                                * removal of the prefix; nothing is left to do */
	const char *lock_file;         /* *_LOCK: the lockfile, its format name ("conda-lock v1") */
	const char *lock_format;
	size_t lock_conda, lock_pip; /* *_LOCK: its conda and pip entries for this platform */
};

/* What menv_txn_commit did. */
struct menv_txn_result {
	struct menv_link_stats stats;
	size_t pip_lines;               /* requirement lines given to pip (0: no pip step) */
	size_t pip_installed;           /* distributions the pip step added or changed (new
	                                 * name or version in the prefix; options lines and
	                                 * what was there already not counted) */
	bool smoke_ran;                 /* the smoke check ran, or found its inputs unchanged
	                                 * (smoke.unchanged): then `smoke` holds its result */
	struct menv_smoke_result smoke; /* passed false: a failed check (the env is kept) */
	bool smoke_record_failed;       /* conda-meta/menv-smoke-check could not be written */
};

struct menv_txn;

/* txnrequest.c: what a change command was given (create, install, update, remove, env
 * update), beside the options it fills itself (specs, channels, all, modifiers, revision,
 * dry_run, ...). */
struct menv_txn_request {
	enum menv_txn_kind kind; /* CREATE, INSTALL, UPDATE, REMOVE or ENV_UPDATE */
	const char *name, *path; /* -n, -p; NULL: the environment file's, else the active one */
	const char *file;        /* -f: a lockfile or an environment file, or NULL */
	const char *given;       /* -f as the user gave it (NULL: `file`): what warnings, the
				    environment file's path and the plan name; `file` may be a
				    pipe's copy (menv_file_once) */
	bool revision;           /* --revision N was given (opts.revision is N) */
	bool smoke_off;          /* --no-smoke-check */
};
/* Checks `rq` and completes `o` (kind, cfg, prefix, envfile, file, smoke): -f FILE is a
 * lockfile (menv_file_is_lockfile: CREATE_LOCK / INSTALL_LOCK) or an environment file,
 * loaded into `*ef` (free with menv_envfile_free; what menv_envfile_check says is appended
 * to `warnings`), whose name or prefix is taken when neither -n nor -p is given (rq->name,
 * rq->path are then the file's, borrowed from `*ef`); --revision makes a REVISION. The
 * prefix (menv_env_prefix_new for CREATE, else menv_env_prefix_find) is `*prefix` (caller
 * frees) and o->prefix. Errors: MENV_EUSAGE (--smoke-check with --no-smoke-check; install -f
 * of an environment file; specs with a lockfile or --revision; env update without -f;
 * install, update or remove with no package, file, revision or --all), those of
 * menv_envfile_load and of the prefix lookups. */
int menv_txn_request_opts(struct menv_txn_request *rq, const struct menv_config *cfg,
                          struct menv_txn_opts *o, struct menv_envfile **ef, char **prefix,
                          struct menv_strvec *warnings, struct menv_error *err);

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
 * releases the prefix lock (the check only reads); makes the check's fingerprint
 * (menv_smoke_fingerprint, of $MENV_OPS_DIR or MENV_OPS_DIR, the driver as menv_env_smoke
 * finds it) once; unless opts->smoke_force, a check whose fingerprint is unchanged since one
 * that passed is not run (the result says smoke.unchanged; nothing is written; false on any
 * error, the check then runs); else tells cb.event MENV_ENV_SMOKE and runs it as
 * menv_env_smoke does, storing that fingerprint, drawing through cb.smoke.
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

/* For a `-f PATH` that is not a regular file (a pipe: `-f /dev/stdin`, `-f <(cat f)`, which
 * can be read once while menv reads a file twice: to tell a lockfile from an environment
 * file, then to load it): reads it into a new temporary file in $TMPDIR (or /tmp) and
 * returns that file's path (the caller unlinks and frees it); NULL for a regular file (use
 * PATH itself) or on an error (err set: MENV_ENOTFOUND, MENV_EIO). */
char *menv_file_once(const char *path, struct menv_error *err);
/* Unlinks and frees what menv_file_once returned; NULL: nothing. */
void menv_file_once_drop(char *copy);
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

/* txnjson.c: the plan in conda's --json shape (conda/cli/install.py): actions.FETCH (the
 * records the package cache lacks), LINK (menv_record_json), UNLINK (the installed records
 * in the same shape), PREFIX; prefix, dry_run, success; `solved: false` from a lockfile;
 * conda's "All requested packages already installed." message for a change that does
 * nothing; `messages` (the packages' messages, borrowed, left out when NULL or empty) and
 * `smoke` (the smoke check's report, borrowed, left out when NULL). New reference. */
json_t *menv_txn_plan_json(const struct menv_txn_plan *p, bool dry_run, json_t *messages,
                           json_t *smoke);
/* A failure in conda's --json shape: success false, `error` the kind (menv_error_name),
 * `message`; after MENV_EUNSAT also `problems` and `problem_tree` from `t` (may be NULL).
 * New reference. */
json_t *menv_txn_error_json(const struct menv_error *err, const struct menv_txn *t);

/* txntext.c: the plan as the rows of its text table. Each change is a row ('+' new, 'o' a
 * reinstall whose build says "(relink)"); an upgrade, downgrade or change also has a '-' row
 * of the installed record above it (its channel as menv_channel_display, no size); a
 * removal only that. The columns: name, version, build, channel, size (menv_size_text, or
 * "Cached" when the package cache holds it). Rows keep the plan's order (by kind, then
 * name); `counts` are packages per kind, `cached` the links the cache holds, `download` the
 * bytes of the others; `pip` the plan's pip lines safe to print. Release with
 * menv_txn_plan_rows_release, before the plan. */
#define MENV_PLAN_COLUMNS 5
struct menv_txn_plan_row {
	enum menv_change_kind kind;
	char mark;
	/* borrowed from the plan (which must outlive the rows), or owned where bit c of `own`
	 * is set: 100,000 rows copy no 500,000 strings (issue 22) */
	const char *cols[MENV_PLAN_COLUMNS];
	unsigned own;
};
struct menv_txn_plan_rows {
	struct menv_txn_plan_row *v;
	size_t n;
	size_t counts[MENV_CHANGE_REMOVE + 1];
	size_t cached;
	int64_t download;
	struct menv_strvec pip; /* the plan's pip lines, credentials redacted (menv_text_redact) */
};
void menv_txn_plan_rows(const struct menv_txn_plan *p, struct menv_txn_plan_rows *out);
void menv_txn_plan_rows_release(struct menv_txn_plan_rows *rows);
/* Column c of `row` becomes `text` (owned by the row now; the column's own text freed). */
void menv_txn_plan_row_set(struct menv_txn_plan_row *row, int c, char *text);
/* What a commit did, as the text conda and menv end a change with (new string, caller frees):
 * "Created|Updated PREFIX[ from lockfile F]: N packages removed, M linked (K pip), F files
 * (... reflinked, hardlinked, softlinked, copied, relocated, .pyc)"; "Removed PREFIX: N
 * packages" for remove --all (or that its interrupted removal was finished); a warning line
 * for files that more than one package provides; after a create with `hint`, conda's lines
 * on how to activate it (`name`, else the prefix; conda's -q leaves them out). */
char *menv_txn_result_text(const struct menv_txn_plan *p, const struct menv_txn_result *r,
                           const char *name, bool hint);
/* For a plan from a lockfile, the line that says so (new string, caller frees; NULL for
 * another plan): "Installing from lockfile F (FORMAT, SUBDIR) into PREFIX: N to link, M to
 * unlink, C conda + P pip packages in the lock, no solve". */
char *menv_txn_lock_line(const struct menv_txn_plan *p);
/* A section's title: "Install", "Upgrade", "Downgrade", "Change", "Reinstall", "Remove". */
const char *menv_change_kind_name(enum menv_change_kind k);
/* `n` bytes as text into `out`: "512 B", "1.5 kB", "2.3 MB", "1.1 GB" (powers of 1000, as
 * conda), "-" when negative (unknown). */
void menv_size_text(int64_t n, char *out, size_t len);

/* Releases the transaction, its plan and the prefix lock. NULL is a no-op. */
void menv_txn_free(struct menv_txn *t);
/* menv_txn_free for a process about to exit: the prefix lock released, the memory left to the
 * kernel (a lock of 100,000 entries: ~115M instructions of free() saved) except in sanitizer
 * builds (MENV_SANITIZED, ASan/LSan), which free it all so LeakSanitizer sees any real leak. */
void menv_txn_exit(struct menv_txn *t);

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
/* `menv env config vars set|unset` (conda env config vars): under the prefix lock
 * (menv_env_lock, waiting, `cb`/`ud` told), `set` splits `args` as
 * menv_env_vars_assignments, leaves out the variables activation owns, a line pushed to
 * `warnings` for each, and sets the others (menv_env_state_vars_set); else the `args` names
 * are removed (menv_env_state_vars_unset). Errors: those of the four. */
int menv_env_config_vars_edit(const char *prefix, bool set, char *const *args, size_t n,
                              menv_env_cb cb, void *ud, struct menv_strvec *warnings,
                              struct menv_error *err);
/* txnrequest.c: `menv env config vars SUB ARG...` checked before anything is read: SUB is
 * list (no ARG), set (VAR=VALUE...) or unset (VAR...). Errors: MENV_EUSAGE saying which. */
int menv_env_config_vars_check(const char *sub, size_t nargs, struct menv_error *err);
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
/* menv_query_search for `search` and `repoquery depends`: none found is MENV_ENOTFOUND,
 * "no package matches 'SPEC' in the current channels" (SPEC: `spec`, as the user typed it). */
int menv_query_find(struct menv_query *q, const struct menv_matchspec *ms, const char *spec,
                    const struct menv_record ***out, size_t *n, struct menv_error *err);
int menv_query_whoneeds(struct menv_query *q, const char *name, const struct menv_record ***out,
                        size_t *n, struct menv_error *err);
void menv_query_free(struct menv_query *q);
/* `repoquery depends --tree`: `r` and, indented two blanks a level under "└─ ", the newest
 * record matching each of its dependencies, recursively, each name expanded once (later
 * ones say "(shown above)"; a dependency no channel has says so). One line each appended to
 * `lines`; `seen` holds the names expanded (start empty). Drawn MENV_QUERY_TREE_DEPTH levels
 * deep: a dependency below says "NAME ... (deeper than N levels: not shown)" (it recursed
 * once a level: a chain of thousands of packages ran past the stack). */
#define MENV_QUERY_TREE_DEPTH 1000
void menv_query_tree(struct menv_query *s, const struct menv_record *r, int depth,
                     struct menv_strset *seen, struct menv_strvec *lines);
/* The installed packages of `prefix` with a dependency on `name` (repoquery whoneeds -n):
 * `*out` a new JSON array of {name, version, build, depends: the dependency string};
 * `text` (may be NULL) gets them as a table appended, under "# Name Version Build Depends
 * on" (columns of 28, 16 and 28). Errors: as menv_prefix_records_load. */
int menv_env_whoneeds(const char *prefix, const char *name, json_t **out, struct menv_buf *text,
                      struct menv_error *err);
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
/* records.c: `menv list` (conda list) of an installed environment. */
struct menv_list_request {
	const char *name, *prefix; /* -n NAME, -p PREFIX (neither: the active environment) */
	const char *regex;         /* NULL, or only the names it finds (POSIX ERE, any case) */
	bool full_name;            /* the regex must match the whole name */
	bool channel_urls;   /* channels as URLs (menv_channel_url), else menv_channel_display */
	bool explicit_, md5; /* conda list --explicit [--md5]: the text, not the rows */
	const struct menv_txn_callbacks *cb; /* event: recovery, MENV_ENV_WARNING lines */
};
/* Loads the settings, finds the environment (`*prefix`, caller frees; NULL on error),
 * recovers it (menv_txn_recover) and reads its records and pip distributions
 * (menv_pip_list_checked; each skipped dist-info a MENV_ENV_WARNING). With explicit_, the
 * conda list --explicit file for cfg.subdir is appended to `text`: its header, then each
 * record's URL (with "#MD5" when md5). Else `*rows` (new reference) is conda list --json's
 * array, sorted by name (any case) then channel: {name, version, build_string,
 * build_number, channel, platform} for each record, and for each pip distribution build
 * "pypi_0" (editable: "dev_0"), channel "pypi" ("<develop>"), platform "pypi". Errors:
 * MENV_EUSAGE for an invalid regex (before anything is read), those of menv_config_load,
 * menv_env_prefix_find, menv_txn_recover, menv_prefix_records_load, menv_pip_list. */
int menv_env_list_packages(const struct menv_list_request *req, char **prefix, json_t **rows,
                           struct menv_buf *text, struct menv_error *err);
/* `menv export` of an installed environment (conda env export, conda-lock). */
struct menv_export_request {
	const char *name, *prefix; /* -n NAME, -p PREFIX (neither: the active environment) */
	/* conda-lock, explicit or environment; NULL: environment with no_builds, from_history
	 * or json, else conda-lock */
	const char *format;
	bool no_builds, from_history; /* --format environment only */
	bool json; /* the environment file as JSON (menv_envfile_json) or the lockfile model */
	const struct menv_txn_callbacks *cb; /* event: recovery, MENV_ENV_WARNING lines */
};
/* Loads the settings, finds the environment, recovers it (menv_txn_recover) and appends it
 * to `out` in the format asked (menv_env_to_envfile then menv_envfile_write or its JSON;
 * menv_env_to_lockfile then conda-lock v1, explicit for cfg.subdir or its JSON), every
 * credential redacted (menv_buf_redact). Pip dist-info folders left out and records only
 * named by version are MENV_ENV_WARNING events. Errors: MENV_EUSAGE for an unknown format
 * or --no-builds/--from-history with another than environment (before anything is read),
 * MENV_ENOTFOUND for a missing environment, those of menv_config_load,
 * menv_env_prefix_find, menv_txn_recover and the writers. */
int menv_env_export(const struct menv_export_request *req, struct menv_buf *out,
                    struct menv_error *err);
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

/* `menv lock`: an environment file solved for several platforms into one conda-lock v1. */
struct menv_lock_request {
	const char *file;              /* the environment file */
	const char *check;             /* non-NULL: only compare with this lockfile */
	struct menv_strvec *platforms; /* --platform; when empty, this machine's is pushed */
	const struct menv_strvec
	        *virtuals; /* --virtual-package "[PLATFORM:]NAME=VERSION[=BUILD]" */
	const struct menv_strvec *channels; /* -c, before the file's */
	bool override_channels;
	/* event: MENV_ENV_STATUS "Solving FILE for P" and "  P: N packages" for each platform,
	 * MENV_ENV_WARNING for the file's unknown keys and its unlocked `pip:` section */
	const struct menv_txn_callbacks *cb;
};
/* Loads the settings and `req->file`, then for each platform either compares the content
 * hash (menv_lock_content_hash) with the one `req->check` holds, pushing "PLATFORM (why)"
 * to `stale` for each that differs (`*out` stays NULL), or solves it
 * (menv_lock_solve_platform with menv_lock_virtuals of the file's `virtual-packages:`, then
 * req->virtuals) into `*out`, a new conda-lock v1 model with the hashes set (release with
 * menv_lockfile_free; NULL on error). Errors: MENV_EUSAGE for a malformed --virtual-package
 * or a platform conda does not know, those of menv_config_load, menv_envfile_parse,
 * menv_lockfile_load and the solve. */
int menv_lock_env(const struct menv_lock_request *req, struct menv_lockfile **out,
                  struct menv_strvec *stale, struct menv_error *err);

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
 * removal, with `src` locked from reading it until it is gone (a command waiting for it then
 * finds it gone, menv_env_lock): a conda-lock of its conda packages is created at `dest`
 * (linked from the package cache, fetched from their URLs when the cache lost them: every
 * placeholder file, shebang and noarch python file is written for `dest`), and in the same
 * staging directory, before the clone appears, the files and links no package owns (pip's)
 * are copied with `src` replaced by `dest` in text files and link targets (files hardlinked
 * to each other stay one file), with conda-meta/history and state; then .menv-request, then
 * `src` is removed whole (as conda's rm_rf; registry updated). With `force` an existing
 * `dest` is moved aside to a hidden name and removed after. The steps run under an intent
 * record (intent.c): a failure or a kill before the commit point (`src` marked as removed)
 * removes the clone and moves an old `dest` back; after it the removal is finished; the
 * next command on either environment does that and says which. Errors:
 * menv_env_rename_check's, menv_env_lock's, the transactions' (MENV_ENOTFOUND, MENV_ENET,
 * MENV_ECHECKSUM, MENV_EIO, MENV_EINTR, ...). */
int menv_env_rename(const struct menv_rename_opts *o, const char *src, const char *dest,
                    struct menv_rename_result *res, struct menv_error *err);
/* What a rename from `src` to `dest` did (`dry_run`: would do), as a new JSON object
 * {success, source, destination, dry_run, packages, untracked}; `text` (may be NULL) gets
 * conda's two "Dry run action: clone SRC,DEST" / "rm_rf SRC" lines for a dry run, else
 * "Renamed SRC to DEST: N packages linked, M files no package owns copied". */
json_t *menv_rename_report(const char *src, const char *dest, bool dry_run,
                           const struct menv_rename_result *res, struct menv_buf *text);

#endif
