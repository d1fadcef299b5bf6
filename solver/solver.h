/*
 * solver.h - conda solving on libsolv in conda mode.
 *
 * menv keeps libsolv inside this module: callers hand in channels' PackageRecords, virtual
 * packages and MatchSpecs, and get back the records to link, ordered dependencies first.
 * No `Pool *` or `Id` leaves solver/. Follows conda's semantics: MatchSpec matching
 * (CEP-29, translated by specs/ and evaluated by libsolv's conda matcher), channel priority
 * (flexible or strict), track_features de-prioritisation, virtual packages (CEP-30).
 */
#ifndef MENV_SOLVER_H
#define MENV_SOLVER_H

#include "specs.h"

struct menv_solver;

/* A new, empty solver for `subdir` ("linux-64") with the given channel priority mode.
 * Free with menv_solver_free(). */
struct menv_solver *menv_solver_new(const char *subdir, enum menv_channel_priority prio);
void menv_solver_free(struct menv_solver *s);

/* Adds the records of one channel subdir. `rd` is borrowed and must outlive the solver.
 * Channels added earlier get higher priority unless rd->channel->priority says otherwise. */
void menv_solver_add_repodata(struct menv_solver *s, const struct menv_repodata *rd);

/* Adds the records of one channel subdir from a repodata.json file (CEP-36) through
 * libsolv's conda reader. A file of 4 MiB or more (MENV_SOLVER_LOAD=sparse: any file;
 * =full: none) is only indexed by package name here (one scan, cached beside the .solv as
 * `<solv_path>.names`): a solve reads the records of the names its request reaches
 * (rattler's SparseRepoData), a search or repoquery every record; the warnings of such a
 * file name the records read and come at that solve. The file is mapped for the solver's lifetime and only the records
 * a solve returns are parsed into menv_records (owned by the solver). When `solv_path` is
 * given, the pool is cached there as a .solv file keyed to the JSON's size and mtime and
 * reused while they match (a stale or unreadable cache is rebuilt; one that cannot be
 * written is skipped; the key is conda's and micromamba's: size, mtime in ns, inode). Records
 * without a name, version or build string are skipped (conda's PackageRecord cannot be made
 * of them), and so are records whose version conda's VersionOrder refuses (menv_version_parse;
 * conda fails the load of the whole file on one), each named in menv_solver_warnings() with
 * the file, its key and the reason. A load honours
 * menv_solver_set_cancel()'s flag within 64 KiB of reading or writing; the .solv then is
 * left as it was (never half written). `ch` is borrowed and must outlive the solver.
 * Errors: MENV_ENOTFOUND, MENV_EIO, MENV_EPARSE naming the file, MENV_EINTR. */
int menv_solver_add_repodata_file(struct menv_solver *s, const struct menv_channel *ch,
                                  const char *subdir, const char *path, const char *solv_path,
                                  struct menv_error *err);

/* conda's add_pip_as_python_dependency (its default is true; a new solver's is false): the
 * python 2.x and 3.x records of the channels need pip, where the channels have pip. Call
 * before the first solve. */
void menv_solver_set_add_pip(struct menv_solver *s, bool on);

/* Loads stop with MENV_EINTR once *cancel is non-zero (Ctrl-C); NULL (the default): never.
 * The flag is borrowed and must outlive the solver. */
void menv_solver_set_cancel(struct menv_solver *s, volatile int *cancel);

/* What the loads skipped so far, one line each ("'<file>': skipped the record '<key>': it
 * has no 'version' ..."), at most 20 per file plus a count (borrowed, valid until the next
 * load or menv_solver_free). The library never prints them: the caller shows them. */
const struct menv_strvec *menv_solver_warnings(const struct menv_solver *s);
/* Forgets the warnings shown (a sparse load adds its own at the solve, for the records the
 * request reaches). */
void menv_solver_clear_warnings(struct menv_solver *s);

/* Adds a virtual package (CEP-30), e.g. ("__glibc", "2.36", "0"). Strings are copied. */
void menv_solver_add_virtual(struct menv_solver *s, const char *name, const char *version,
                             const char *build);

/* Pins a package (conda's pinned_packages and conda-meta/pinned): when `pin->name` is part
 * of the solution it must match the pin; the pin does not request it. Only name, version
 * and build of the spec are used. `pin` is borrowed. */
void menv_solver_add_pin(struct menv_solver *s, const struct menv_matchspec *pin);

/* A virtual package as detected on this machine. */
struct menv_virtual {
	char name[32];
	char version[64];
	char build[32];
};
/* Detects this machine's virtual packages (CEP-30): __unix, __linux (kernel release),
 * __glibc (gnu_get_libc_version), __archspec (x86-64 microarchitecture level), __cuda (the
 * driver's CUDA version via libcuda's cuDriverGetVersion; absent without a driver), each
 * overridden by CONDA_OVERRIDE_<NAME> (empty value: removed). Fills up to `max` entries and
 * returns how many. */
size_t menv_virtual_detect(struct menv_virtual *out, size_t max);
/* The virtual packages a solve for `subdir` sees, as conda's plugins give them: __unix for
 * linux-* and osx-*; __linux and __glibc (this machine's) for linux-* only; __osx for osx-*
 * only from CONDA_OVERRIDE_OSX (this machine runs no macOS); __win for win-* ("0", or
 * CONDA_OVERRIDE_WIN); __archspec: this machine's level for its own subdir, the target's
 * machine ("arm64", "x86_64") for another; __cuda from the driver. menv_virtual_detect()
 * is this for this machine's own subdir. */
size_t menv_virtual_detect_subdir(const char *subdir, struct menv_virtual *out, size_t max);

/* Solves for installing `specs` (parsed MatchSpecs, borrowed) into an empty prefix.
 * A spec's `channel`, when set, must already be resolved by the caller to a channel
 * base URL (menv_channel_parse()->base_url); such a spec only matches records of that
 * channel (and of `subdir` when set). md5, sha256, fn, build_number and track_features
 * keys filter candidates too.
 * On success `*out` is a new array of `*n_out` borrowed record pointers (free the array
 * only), ordered so that each record comes after its dependencies (virtual packages are
 * not included). Errors: MENV_EUNSAT with the problems on one line (the rules behind them
 * from menv_solver_problems(); a hint when a missing __cuda is involved; a requested spec
 * that no package of a name the channels have matches is one of them, "nothing provides
 * requested pytorch>=2.0 for python 3.9* (the channels have pytorch 1.13.1, which needs
 * python >=3.11,<3.12.0a0)", as mamba reports it), MENV_ENOTFOUND when a requested name
 * exists in no channel, or strict channel priority hides every match (named). */
int menv_solver_solve(struct menv_solver *s, struct menv_matchspec *const *specs, size_t n,
                      const struct menv_record ***out, size_t *n_out, struct menv_error *err);

/* Adds the packages installed in a prefix (PrefixRecord JSON objects, borrowed; they must
 * outlive the solver), so that a solve changes an existing environment. Added before any
 * channel (a records-only solve, conda's offline index of the prefix), a record's legacy
 * "features" require an installed record that tracks them (conda's ms_depends). */
void menv_solver_add_installed(struct menv_solver *s, json_t *const *recs, size_t n);

/* What to change. Specs are borrowed; channels in specs resolved as for menv_solver_solve.
 * The defaults are conda's (update_modifier update_specs, deps_modifier not set): the
 * requested names may change; every other installed package stays unless the request
 * cannot be met without moving it, and then as few as possible move (the installed records
 * are locked first, and the locks the problems involve are lifted step by step, as
 * conda-libmamba-solver does). The history's specs hold like requested ones, and python
 * stays within its installed minor version unless python is requested (conda's rule). */
struct menv_solve_request {
	struct menv_matchspec *const *install; /* conda install: add or change to match; an
	                                          installed name updates to the newest allowed */
	size_t ninstall;
	struct menv_matchspec *const *update; /* conda update NAME: newest allowed */
	size_t nupdate;
	struct menv_matchspec *const *remove; /* conda remove: take out what needs it too, and
	                                         the dependencies no other package or request
	                                         needs (conda's pruning) */
	size_t nremove;
	/* conda-meta/history's user-requested specs (menv_history_requested_specs), parsed */
	struct menv_matchspec *const *history;
	size_t nhistory;
	/* names a remove never prunes as orphans (conda's aggressive_update_packages), or NULL */
	const struct menv_strvec *aggressive;
	/* the installed ones of `aggressive` update on every install or update, the history's
	 * constraints on them dropped (conda, unless offline) */
	bool aggressive_update;
	bool update_all;           /* update --all / update_modifier update_all: everything may
	                              update; history keeps only its names */
	bool freeze_installed;     /* --freeze-installed: installed packages never move */
	bool no_update_deps;       /* --no-update-deps: conda's other name for freeze_installed */
	bool update_specs;         /* --update-specs: conda's solve_final_state default; with
	                              it (and for every update request) installed packages the
	                              history does not name float to their newest, as conda's
	                              classic Solver does (a bare install keeps them: the
	                              frozen solve conda's command line tries first) */
	bool update_deps;          /* --update-deps: the requested names' dependencies update too */
	bool force_reinstall;      /* unlink and link the requested names again even unchanged */
	bool no_deps;              /* --no-deps: only the requested names change */
	bool only_deps;            /* --only-deps: everything but the requested names */
	bool force_remove;         /* remove --force: the named packages only, nothing else */
	bool satisfied_skip_solve; /* --satisfied-skip-solve: when installed records satisfy every
	                              install spec, change nothing (micromamba's install) */
};

/* The result of a solve: records to link (ordered dependencies first, borrowed from the
 * repodata) and installed records to unlink (borrowed PrefixRecords). A package that changes
 * version or build appears in both. Release the arrays with menv_transaction_release(). */
struct menv_transaction {
	const struct menv_record **link;
	size_t nlink;
	json_t **unlink;
	size_t nunlink;
};
void menv_transaction_release(struct menv_transaction *t);

/* Solves a request against the channels, the installed packages, virtual packages and pins
 * (which are never removed). Installed packages may be changed or removed where the request
 * needs it, as conda does (see struct menv_solve_request). Errors as menv_solver_solve (one
 * MENV_ENOTFOUND naming every requested package no channel has); an unsatisfiable change
 * also names the specs the environment holds that the problems involve (a history spec,
 * python's minor version, an installed package --freeze-installed keeps); removing a name
 * that is not installed is MENV_ENOTFOUND. */
int menv_solver_solve_request(struct menv_solver *s, const struct menv_solve_request *req,
                              struct menv_transaction *out, struct menv_error *err);

/* Every record of the loaded channels that matches `ms` (name globs allowed), sorted by
 * name, then newest version, higher build number, higher channel priority (conda search's
 * order reversed to newest first). `*out` is a new array of `*n_out` borrowed records (free
 * the array only). A sparsely added file (menv_solver_add_repodata_file) gives the records of
 * a plain name, read then, or all of its records for a glob. Errors: those of that reading
 * (MENV_EIO, MENV_EPARSE naming the file, MENV_EINTR). */
int menv_solver_search(struct menv_solver *s, const struct menv_matchspec *ms,
                       const struct menv_record ***out, size_t *n_out, struct menv_error *err);
/* Every record of the loaded channels with a dependency on `name`, sorted as by
 * menv_solver_search (conda/mamba repoquery whoneeds on channels). */
int menv_solver_whoneeds(struct menv_solver *s, const char *name, const struct menv_record ***out,
                         size_t *n_out, struct menv_error *err);

/* After a failed solve: each problem as a tree, several lines: the requested spec, the
 * packages that could satisfy it, what each needs (recursively) and what it conflicts with,
 * like mamba's problem tree (borrowed, valid until the next solve or menv_solver_free). ""
 * when there was none. */
const char *menv_solver_problems(const struct menv_solver *s);
/* The same as JSON: [{"problem": text, "tree": [{"requested": spec, "candidates": [node]}]}]
 * with node = {"package", "needs": [{"dep", "nothing_provides"?, "candidates": [node]}],
 * "conflicts_with": [package], "not_installable"?, "see_above"?}; a spec nothing matches:
 * {"requested": spec, "nothing_matches": true, "available": [{"package", "excluded_by":
 * [{"dep", "requested"}]}]} (borrowed; NULL before a failed solve). */
json_t *menv_solver_problems_json(const struct menv_solver *s);

#endif
