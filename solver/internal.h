/*
 * internal.h - what the files of solver/ share and nothing outside it sees: the solver object
 * with its libsolv pool, the repodata files mapped into it, and the few functions one file
 * calls in another. libsolv's types (Pool, Id, Solver, ...) never leave solver/; the public
 * API is solver.h.
 *
 *   pool.c      the solver object; records, installed, virtual packages and pins into the pool
 *   load.c      repodata.json files through libsolv's conda reader, cached as .solv
 *   sparse.c    a large repodata.json indexed by name; only the names a request reaches read
 *   rank.c      channel/subdir order, strict priority, variant ranking
 *   features.c  conda's legacy features (track_features switching builds' features on)
 *   prune.c     builds no solution can hold, out of a first solve
 *   reduce.c    conda's get_reduced_index replayed for Resolve.valid2's memo
 *   request.c   a request as libsolv jobs, relaxation, the transaction
 *   problems.c  a failed solve's problems as text and JSON
 *   query.c     search and whoneeds
 */
#ifndef MENV_SOLVER_INTERNAL_H
#define MENV_SOLVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/repo.h>
#include <solv/repodata.h>
#include <solv/solver.h>

#include "solver.h"

struct menv_solver {
	Pool *pool;
	char *subdir;
	enum menv_channel_priority prio;
	Repo *virt;
	const struct menv_record **by_id; /* solvable Id -> record (NULL for virtual ones) */
	char *problems;                   /* the last failed solve's problem tree, or NULL */
	json_t *problems_json;            /* the same as JSON, or NULL */
	bool has_cuda;                    /* a __cuda virtual package was added */
	bool add_pip;                     /* conda's add_pip_as_python_dependency */
	bool *noarch_repo;                /* repo Id -> a noarch subdir (menv_solv_order_repos) */
	bool pip_added;                   /* python's pip dependency was added */
	int npins;
	bool ranked;         /* menv_solv_rank_variants ran for every name */
	Map *ranked_names;   /* names (string Ids) whose variants are ranked */
	bool prepared;       /* whatprovides made for queries */
	Id canon_solvables;  /* evr.c: solvables below this Id have conda's underscore order */
	Id canon_rels;       /* evr.c: reldeps below this Id too */
	Map *considered;     /* strict priority: the installable solvables */
	Map *pruned;         /* prune.c: considered less the builds no solution holds, or NULL */
	Map *unpruned;       /* the pool's considered map before (borrowed), while pruned */
	Map *reduced;        /* reduce.c: considered less what conda's valid2 memo leaves out */
	Map *unreduced;      /* the pool's considered map before (borrowed), while reduced */
	json_t **inst_by_id; /* solvable Id -> installed PrefixRecord (borrowed) */
	size_t inst_alloc;
	size_t by_id_alloc;
	int nrepos;
	int nfilled; /* channel repos that may hold records (an empty repodata's do not) */
	struct filerepo **files; /* repos read from repodata.json files */
	size_t nfiles;
	Id offkey;            /* "menv:offset": a record's byte offset in its JSON */
	Id cachekey;          /* "menv:cachekey" on SOLVID_META of a .solv */
	Id baseurlkey;        /* "menv:base_url" on SOLVID_META */
	Id warnkey;           /* "menv:warnings" on SOLVID_META: the load's warnings, one a line */
	volatile int *cancel; /* non-zero stops a load: MENV_EINTR; or NULL */
	struct menv_strvec warnings;  /* what the loads skipped, one line each */
	struct menv_error unreadable; /* why the last record that could not be read was not */
	/* sparse.c: a cached index, closure or subset read back inconsistent with the JSON
	 * (cache_suspect), and a load again from the JSON that reads none of them (cache_off) */
	bool cache_suspect, cache_off;
	/* requested specs whose name the channels have but no package of which matches
	 * (`pytorch>=2.0` where there is pytorch 1.13.1): each becomes a job libsolv cannot
	 * satisfy, so the solve fails with a problem explaining it (mamba's "nothing provides
	 * requested"); unmatched_ok: add_spec_job may do so (the request's install specs) */
	const struct menv_matchspec **unmatched;
	size_t nunmatched;
	bool unmatched_ok;
};

/* A channel subdir whose solvables came from libsolv's conda reader (or its .solv cache);
 * its records are parsed from the mapped JSON only when a solve needs them. */
struct filerepo {
	const struct menv_channel *ch;
	char *subdir;
	char *base;      /* URL the package files live under */
	const char *map; /* the repodata.json, mapped read-only */
	size_t size;
	Repo *repo;
	struct menv_record **recs;   /* lazily made, indexed by p - repo->start */
	size_t nrecs;                /* entries of recs (repo->end - repo->start when made) */
	char *path, *solv_path;      /* the JSON, its .solv cache (or NULL) */
	char *key;                   /* the JSON's cache key (size, mtime, inode) */
	int fd;                      /* the JSON, open while sparse (-1: closed) */
	struct sparse_index *sparse; /* sparse.c's index while not every record is read */
};

/* ---- pool.c ---------------------------------------------------------------------------- */

/* The record of solvable p: a repodata record added with menv_solver_add_repodata, or the
 * JSON object at its offset in a mapped repodata file, parsed on first use (and kept by the
 * solver: the pointer is borrowed for the solver's life). NULL for installed and virtual
 * solvables, and for a record that cannot be read (s->unreadable says why). */
const struct menv_record *menv_solv_record_of(struct menv_solver *s, Id p);
/* conda's add_pip_as_python_dependency (when menv_solver_set_add_pip asked for it): python
 * 2.x and 3.x records need pip, where the channels have pip at all. Once per pool, before
 * whatprovides is made. */
void menv_solv_add_pip_dependency(struct menv_solver *s);

/* ---- load.c ---------------------------------------------------------------------------- */

/* Loads every record of f (its .solv when current, else the JSON, then writes the .solv). */
int menv_solv_load_full(struct menv_solver *s, struct filerepo *f, struct menv_error *err);
/* The records of doc[0..len) (a repodata.json document holding some of f's records) as .solv
 * bytes (appended to `out`), read in a pool of their own as menv_solv_load_full reads the
 * whole file: records conda cannot take are dropped with a warning (kept in the bytes' meta
 * data), each kept one gets its byte offset in f's JSON from `sorted` ("fn\0fileoffset:
 * docoffset" strings sorted by fn, `n` of them). 0, MENV_EPARSE (libsolv's reader refused
 * the JSON), MENV_EIO or MENV_EINTR. */
int menv_solv_json_to_solv(struct menv_solver *s, struct filerepo *f, const char *doc, size_t len,
                           char **sorted, size_t n, struct menv_buf *out, struct menv_error *err);
/* Adds the records of .solv bytes[0..len) (menv_solv_json_to_solv's) to f's repo, and the
 * warnings they carry to s->warnings. 0, MENV_EIO (not .solv bytes libsolv reads) or
 * MENV_EINTR. */
int menv_solv_add_solv(struct menv_solver *s, struct filerepo *f, const char *bytes, size_t len,
                       struct menv_error *err);
/* The base URL of f's packages from its "info" JSON (info[0..len), or NULL). New string. */
char *menv_solv_base_url(const struct filerepo *f, const char *info, size_t len);

/* ---- sparse.c -------------------------------------------------------------------------- */

/* Indexes f's JSON by package name (from its index cache beside the .solv when current,
 * else one scan, then the cache written) and reads no record yet. */
int menv_solv_sparse_open(struct menv_solver *s, struct filerepo *f, struct menv_error *err);
/* Reads the records of every name `req` can reach (its specs, the installed, virtual and
 * pinned packages, then the depends and constrains of each record read, until closed) from
 * the sparsely opened files; all of them when a spec has no plain name. */
int menv_solv_sparse_load(struct menv_solver *s, const struct menv_solve_request *req,
                          struct menv_error *err);
/* Reads the records named `name` (as written and lower-cased; all of them for a glob or no
 * name) and those without a readable name, not what they reach (a search by name). */
int menv_solv_sparse_load_name(struct menv_solver *s, const char *name, struct menv_error *err);
/* Reads every record of the sparsely opened files (queries over everything). */
int menv_solv_sparse_load_all(struct menv_solver *s, struct menv_error *err);
void menv_solv_sparse_free(struct sparse_index *x);
/* The bytes of f's record at byte offset `off` into `out` (read, not mapped: a request's
 * records lie all over a large file, whose mapped pages would all count as this process's).
 * False when f is not sparse or has no record there. */
bool menv_solv_sparse_record(struct filerepo *f, size_t off, struct menv_buf *out);

/* Has the caller's cancel flag (menv_solver_set_cancel; NULL: never) been raised? */
bool menv_solv_cancelled(volatile int *cancel);

/* ---- cachefile.c ----------------------------------------------------------------------- */

/* One piece of a cache file's bytes. */
struct menv_solv_part {
	const void *data;
	size_t len;
};
/* Writes parts[0..n) one after another, then a trailer (a magic and a checksum of those bytes),
 * as the cache file at path: under a new temporary name beside it (mkstemp, mode 0644), renamed
 * over path when whole; nothing changes when a write fails or *cancel is raised. Best effort:
 * no error is returned (a cache that cannot be written costs only time). */
void menv_solv_cache_write(const char *path, const struct menv_solv_part *parts, size_t n,
                           volatile int *cancel);
/* Maps the cache file at path (a regular file, not followed through a symlink, opened without
 * waiting) when its trailer's checksum matches its bytes: *bytes and *len the bytes before the
 * trailer (give them to menv_solv_cache_unmap). False (nothing mapped) for a missing, short,
 * changed or foreign file: one not this user's or writable by group or others, or in a folder
 * not this user's (or root's) or writable by group or others. */
bool menv_solv_cache_map(const char *path, const char **bytes, size_t *len);
/* Unmaps what menv_solv_cache_map mapped (bytes NULL: nothing). */
void menv_solv_cache_unmap(const char *bytes, size_t len);
/* Whether bytes[0..len) have the header of .solv bytes libsolv's repo_add_solv (0.7.40,
 * repo_solv.c) reads: "SOLV", version 8 or 9, counts no larger than the bytes could hold, and
 * a string section whose prefix-compressed entries stay inside it and expand to the size it
 * gives. Cheap checks before cached bytes reach libsolv, which trusts the strings' layout;
 * not a proof the rest is sound. */
bool menv_solv_bytes_plausible(const char *bytes, size_t len);

/* ---- evr.c ----------------------------------------------------------------------------- */

/* conda's VersionOrder puts "1.1_" (a trailing underscore) below "1.1a1"; libsolv reads it as
 * "1.1". Rewrites the libsolv strings of the solvables and conda reldeps added since the last
 * call (a trailing '_' of a version as '^', which libsolv orders as conda orders "_"), and
 * remakes whatprovides if it existed. Call before pool_createwhatprovides. */
void menv_solv_conda_underscores(struct menv_solver *s);
/* pool_conda_matchspec of str with the same rewriting: for specs parsed after the call above. */
Id menv_solv_matchspec(Pool *pool, const char *str);
/* Text made from libsolv's strings (problems) as conda writes versions: each '^' after a
 * letter or digit back to '_' (a regex's '^' stays; in place; text may be NULL). The _json form does it in every string of j. */
void menv_solv_conda_display(char *text);
void menv_solv_conda_display_json(json_t *j);

/* ---- rank.c ---------------------------------------------------------------------------- */

/* conda's order between channels and subdirs as libsolv's repo subpriorities (the build
 * number before arch-over-noarch; channel order with priority disabled). Once per pool. */
void menv_solv_order_repos(struct menv_solver *s);
/* Ranks the same-version builds of the names `req` can reach (conda-forge's libsolv variant
 * order) by rewriting their build-version key; each name once per pool. */
void menv_solv_rank_variants(struct menv_solver *s, const struct menv_solve_request *req);
/* Strict channel priority: a name only from the highest-priority channel that has it
 * (`chan::pkg` requests exempt), through the pool's considered map (owned by s). */
void menv_solv_strict_priority(struct menv_solver *s, const struct menv_solve_request *req);

/* ---- features.c ------------------------------------------------------------------------ */

/* Adds the features of v to set (a JSON object, feature -> true): a string of them, as conda
 * writes track_features and features ("a b", "a,b"), or a list of such strings; anything
 * else adds none. */
void menv_solv_add_features(json_t *v, json_t *set);
/* conda's legacy features after a solve `solv`: the features its packages track, then for
 * each name of the solution the builds that lose by conda's feature metric (fewer tracked
 * features, or a feature nothing tracks; for a `requested` name only at versions a
 * featured build reaches) as SOLVER_DISFAVOR jobs appended to job; an installed build of
 * the solution that loses is set in `freed` (sized for the pool: the caller no longer locks
 * it) and weakly erased, its name weakly installed. Returns how many jobs were appended:
 * none when no package of the solution loses (the solution stands); -1 on a pruned pool
 * (prune.c) where a feature is tracked or carried: the builds pruning left out count too. */
/* conda's feature count on a remove solved over channels (envs/txn.c): after the first solve
 * `solv` (the installed records only), the features tracked only by packages the user did not
 * ask for (`asked`: the history's names) are dropped, as conda's fewest-tracked-features
 * objective drops them where the channels offer builds without. Appends to job: the installed
 * solvables the first solve removed erased; the trackers of a dropped feature weakly erased
 * with what only they needed (cleandeps); the builds carrying one weakly erased, and for an
 * asked name its string Id pushed on relink (the caller installs its history spec) and the
 * channel builds of it carrying a dropped feature locked out. Returns how many jobs: 0 when
 * nothing is dropped (the first solve stands). */
int menv_solv_remove_feature_jobs(struct menv_solver *s, Solver *solv,
                                  const struct menv_strvec *asked, Queue *job, Queue *relink);
int menv_solv_feature_jobs(struct menv_solver *s, Solver *solv, const struct menv_strvec *requested,
                           Queue *job, Map *freed);

/* ---- prune.c --------------------------------------------------------------------------- */

/* Leaves out of the pool (its considered map, then whatprovides made again) every channel
 * build that no solution can hold: one of its dependencies has no provider, or only such
 * builds. Not when installed packages are in the pool. After pool_createwhatprovides and the
 * variant ranking; returns how many builds it left out (0: the pool is as it was; always with
 * MENV_SOLVER_PRUNE=0, the tests' reference). A solve
 * on the pruned pool answers as on the full one unless it fails, relaxes, has best-version
 * jobs or legacy features to weigh: then menv_solv_prune_undo and solve again. */
int menv_solv_prune(struct menv_solver *s);
/* The full pool back (no-op when not pruned); whatprovides made again. */
void menv_solv_prune_undo(struct menv_solver *s);
/* conda's classic Solver on the UPDATE_SPECS road of a change (installed records, update
 * specs): replays the reduced indexes conda 26.7.1 makes (conda/core/solve.py _add_specs'
 * explicit pool and conflict check, UPDATE_SPECS' get_conflicting_specs, _run_sat's) with
 * Resolve.valid2's memo carried from one to the next, as conda's MatchSpec objects carry it,
 * and takes out of the pool's considered map (whatprovides made again) the channel records a
 * fresh final reduction holds and the replayed one lacks. Returns how many; undo with
 * menv_solv_reduce_undo. MENV_SOLVER_VALID2_MEMO=0 (tests) replays nothing. */
int menv_solv_reduce_stale(struct menv_solver *s, const struct menv_solve_request *req);
void menv_solv_reduce_undo(struct menv_solver *s);

/* ---- request.c ------------------------------------------------------------------------- */

/* Does record r (NULL: no) satisfy the keys of ms that libsolv's conda reader does not
 * evaluate (channel, subdir, md5, sha256, fn, build_number, track_features)? */
bool menv_solv_extra_keys_match(const struct menv_matchspec *ms, const struct menv_record *r);

/* ---- problems.c ------------------------------------------------------------------------ */

/* The problems of the failed solve `solv` of `req`: one line per problem appended to `line`
 * ("a; b"), a tree per problem (requested spec -> candidates -> what they need and conflict
 * with) to `tree`, and the same as objects appended to the JSON array `js`. *needs_cuda is
 * set when a problem involves __cuda. */
void menv_solv_describe_problems(struct menv_solver *s, Solver *solv,
                                 const struct menv_solve_request *req, struct menv_buf *line,
                                 struct menv_buf *tree, json_t *js, bool *needs_cuda);

#endif
