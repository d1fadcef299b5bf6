/*
 * txnpriv.h - the pieces of the transaction engine that txn.c calls and the files below it
 * (plan.c, lockplan.c, pipstep.c) implement. Private to envs/: the front ends see envs.h.
 */
#ifndef MENV_TXNPRIV_H
#define MENV_TXNPRIV_H

#include "prefix.h"
#include "solver.h"
#include "txn.h"

/* Records owned by the plan (from the package cache, a PrefixRecord or a lockfile). */
struct menv_owned_recs {
	struct menv_record *v;
	size_t n;
};
void menv_owned_recs_release(struct menv_owned_recs *o);

/* ---- plan.c ---------------------------------------------------------------------------- */

/* The name a dependency spec names ("python >=3.8" -> "python"). Caller frees. */
char *menv_dep_name(const char *dep);
/* The same without an allocation where it fits: written to `buf` and `buf` returned, else a
 * new string the caller frees (when the result is not `buf`). */
#define MENV_DEP_NAME_BUF 128
char *menv_dep_name_in(const char *dep, char buf[MENV_DEP_NAME_BUF]);
/* Orders `recs` in place so that each comes after the records of the set it depends on (by
 * name; names outside the set, like virtual packages, are ignored); otherwise the given
 * order; a cycle keeps its members in their order, pip in python's dependencies left out (as
 * conda's toposort does). The order of a lockfile's records: conda links an explicit file's
 * packages in the file's order (conda/misc.py install_explicit_packages, CEP-23), menv
 * dependencies first, then in the file's order. */
void menv_records_toposort(const struct menv_record **recs, size_t n);

/* ---- linkorder.c ----------------------------------------------------------------------- */

/* One package of a set to order: its name, its depends (a JSON array of MatchSpec strings;
 * NULL: none) and its dist_str, given (`key`) or made from channel (the URL with its subdir,
 * as a record's "channel"), version and build when key is NULL. All borrowed. */
struct menv_order_node {
	const char *name;
	json_t *depends;
	const char *key; /* conda's dist_str, "<channel URL/subdir>::<name>-<version>-<build>" */
	const char *channel, *version, *build;
};
/* The order conda 26.7.1 links the n packages of `nd` in (conda/models/prefix_graph.py
 * PrefixGraph._toposort, allow_cycles as by default): a node's parents are the nodes its
 * depends name, itself and pip as python's parent left out (_toposort_prepare_graph; menuinst
 * made a parent of what python is a parent of); the nodes with neither parents nor children
 * first, by name; then Kahn's levels, each by name (ties: the given order); in a cycle, the
 * node with the fewest parents left, then the least dist_str. Writes the n node indices to
 * `out` (caller's array of n). Dependencies are matched by name, not whole MatchSpec: the
 * same in a consistent environment. O((n + edges) log n). */
void menv_conda_order(const struct menv_order_node *nd, size_t n, size_t *out);
/* Orders `recs` in place as menv_conda_order orders them (a new environment's links). */
void menv_records_conda_order(const struct menv_record **recs, size_t n);
/* A change's order, as conda's diff_for_unlink_link_precs (conda/core/solve.py) gives it:
 * `unlink` (records of `inst`, by address) in the reverse of the installed environment's
 * order, `link` in the order of the final environment (the installed records not unlinked,
 * and the links). Both reordered in place; an unlink not among `inst` goes last. */
void menv_plan_conda_order(const struct menv_prefix_record *inst, size_t ninst,
                           const struct menv_record **link, size_t nlink, json_t **unlink,
                           size_t nunlink);
/* --prune: keeps only what `specs` need (their closure over depends of the records that
 * stay and those linked); appends the installed records no longer needed to `unlink`
 * (realloc'd array of *nunlink) and drops unneeded links from `link`. */
void menv_plan_prune(struct menv_matchspec **specs, size_t nspecs,
                     const struct menv_prefix_record *inst, size_t ninst,
                     const struct menv_record **link, size_t *nlink, json_t ***unlink,
                     size_t *nunlink);
/* --revision N: the records to link and unlink (new arrays) to get back to revision N's
 * packages (history from conda/history.py): from the channel set's parsed records, else the
 * channels `solver` (may be NULL) reads, else, with `use_cache`, cfg->pkgs_dirs'
 * repodata_record.json (into `owned`) where its channel is the history line's (conda's
 * install_revision builds Index(use_cache=None): the cache's records only offline, matched
 * by MatchSpec.from_dist_str). Errors: MENV_ENOTFOUND (rev out of range, a package the
 * channels lack and, with use_cache, the cache too, or cached from another channel),
 * MENV_EIO. */
/* Whether `prefix`'s history has revision `rev` (0-based): 0, or MENV_ENOTFOUND naming rev
 * and the count (errors of menv_history_load too), as conda's get_state raises for one it
 * lacks (CondaIndexError "no such revision"). */
int menv_plan_revision_exists(const char *prefix, size_t rev, struct menv_error *err);
int menv_plan_revision(const char *prefix, const struct menv_config *cfg, size_t rev,
                       bool use_cache, const struct menv_channel_set *ch,
                       struct menv_solver *solver, const struct menv_prefix_record *inst,
                       size_t ninst, struct menv_owned_recs *owned,
                       const struct menv_record ***link, size_t *nlink, json_t ***unlink,
                       size_t *nunlink, struct menv_error *err);
/* The record of `dist` ("name-version-build") as the first package cache of `dirs`
 * (pkgs_dirs, in order) holding it has it (<dir>/<dist>/info/repodata_record.json: its fn, and its url less the file name as the
 * base). False when the cache lacks it or the record is incomplete. */
bool menv_record_from_cache(const struct menv_strvec *dirs, const char *dist,
                            struct menv_record *out);
/* A record to link again from an installed PrefixRecord (its url, fn, hashes and depends;
 * the install locations dropped). False when the PrefixRecord lacks its url or fn. */
bool menv_record_from_installed(json_t *rec, struct menv_record *out);
/* When the plan moves python to another minor version, every installed noarch: python
 * package that stays is unlinked and linked again, as conda does (CEP-20). The record comes
 * from the solver's channels (`solver` may be NULL; the same URL preferred), else from the
 * PrefixRecord itself (into `made`). `*link` / `*unlink` grow (realloc'd). Returns how many
 * packages were added (the caller then re-sorts `*link`). */
size_t menv_plan_relink_noarch_python(struct menv_solver *solver,
                                      const struct menv_prefix_record *inst, size_t ninst,
                                      const struct menv_record ***link, size_t *nlink,
                                      json_t ***unlink, size_t *nunlink,
                                      struct menv_owned_recs *made);

/* ---- lockplan.c ------------------------------------------------------------------------ */

/* The conda records of a lockfile for one platform, as the plan holds them: light records
 * (no JSON; their strings borrowed from the lock entries, `pool` and the channels) until the
 * fetch gives each its JSON (menv_lockrecs_snapshot). The lockfile outlives them. */
struct menv_lockrecs {
	struct menv_record *recs;
	size_t n;
	const struct menv_lock_package **pkgs; /* per record: its lock entry (borrowed) */
	struct menv_strvec pool; /* owned strings the light records borrow (channel URLs, ...) */
	struct menv_channel **chans;   /* per record: its own channel (owned), or NULL when it
					is one of `folders` (recs[i].channel borrows either) */
	struct menv_channel **folders; /* owned: one channel per package folder of the lock */
	size_t nfolders;
	bool *lock_depends; /* the lock gave the record's depends */
	json_t **solved;    /* a complete repodata_record.json already in the cache
					before the fetch (left by a solve), or NULL */
	bool *skip;         /* records neither fetched nor completed (installed) */
	const char *src;    /* the lockfile as messages name it (borrowed) */
};
void menv_lockrecs_release(struct menv_lockrecs *l);
/* The lock's conda entries of `sel` as light records (before the cache completes them);
 * `sel`, its lockfile and `src` (the file's name in messages) must outlive `out`. Errors:
 * MENV_EPARSE "SRC:LINE: lockfile entry ..." naming the entry and its line (a URL that is no
 * package URL, an entry without name, version or build, one whose URL's file is another
 * package), MENV_EUNSAFE; menv_lockrecs_complete's name it so too. */
int menv_lockrecs_build(const struct menv_config *cfg, const char *src,
                        const struct menv_lock_package **sel, size_t nsel,
                        struct menv_lockrecs *out, struct menv_error *err);
/* Before the plan is drawn: each record of `l` that the package cache lacks (`cached` says,
 * parallel to the records of `link`) and whose lock entry gave no size gets the size its
 * server reports (menv_fetch_sizes: HEAD, file:// stat), so the plan shows what the fetch
 * will download; the download then verifies it. Asked at the URL the fetch downloads from
 * (menv_pkgcache_url: the credentials of cfg's channels and `channels`, -c's, which may be
 * NULL). Offline: nothing is asked. */
void menv_lockrecs_sizes(const struct menv_config *cfg, const struct menv_strvec *channels,
                         const struct menv_record **link, const bool *cached, size_t n);
/* After the plan found which of the records `link` (n, those of `l` among them) the package
 * caches hold (`cached`): each record of `l` not held there that gives both an md5 and a
 * sha256 is compared with a cache entry of its name (<dir>/<dist>/info/repodata_record.json
 * in `dirs`, then `pkgs_dir`; each folder listed once): one hash the same and the other not
 * is the package with a wrong hash in the lock. MENV_ECHECKSUM "SRC:LINE: lockfile entry
 * 'N V B': its md5 X is not the package's (Y: ...)", naming the wrong hash; nothing is
 * written. Conda 26.7.1 checks only the sha256 of a download that has both and records the
 * lock's md5 as it is (its explicit lines give one hash). */
int menv_lockrecs_check_cache(const char *pkgs_dir, const struct menv_strvec *dirs,
                              const struct menv_lockrecs *l, const struct menv_record *const *link,
                              const bool *cached, size_t n, struct menv_error *err);
/* The fetch of l's packages failed with `err`: "SRC:LINE: " before a checksum error that
 * names the package file of one of them (its lock entry's line), else "while fetching the
 * packages of 'SRC': ". */
void menv_lockrecs_fetch_error(const struct menv_lockrecs *l, struct menv_error *err);
/* Before the fetch: gives each record but the skipped its JSON (the lock entry's fields, as
 * a PackageRecord; the size a server reported kept), then keeps aside a
 * repodata_record.json that a solve left in the cache for the same file (it knows patched
 * depends). The caches are `dirs` (pkgs_dirs, in order),
 * `pkgs_dir` the one written (menv_pkgcache_locate). */
void menv_lockrecs_snapshot(const char *pkgs_dir, const struct menv_strvec *dirs,
                            struct menv_lockrecs *l);
/* After the fetch: each record (but the skipped) checked to be the package its info/index.json
 * names (what menv_paths_index_ident kept, else index.json read) and completed from
 * index.json and the snapshot, the lock's fields on top, the measured hashes and size
 * filling what the lock lacks; the cache's repodata_record.json rewritten to it where the
 * package is in `pkgs_dir` (a read-only cache of `dirs` is only read). Errors: MENV_EPARSE (no readable info/index.json), MENV_EIO. */
int menv_lockrecs_complete(const char *pkgs_dir, const struct menv_strvec *dirs,
                           struct menv_lockrecs *l, struct menv_error *err);
/* The key of metadata.custom_metadata under which a conda-lock export keeps the pip section's
 * options (one a line): conda-lock's models allow no other free-form field. */
#define MENV_LOCK_PIP_OPTIONS_KEY "menv.pip_options"
/* A pip request for a lock's pip entries `sel`: the lock's pip options (its metadata's
 * custom_metadata["menv.pip_options"] or older menv's pip_options list, then the selected pixi environment's indexes and find-links) split into
 * argv words, the requirement lines (with --hash where every entry has a sha256), --no-deps.
 * Release its vectors with menv_strvec_clear. */
void menv_lock_pip_request(const struct menv_lockfile *lf, const char *env,
                           const struct menv_lock_package **sel, size_t nsel,
                           struct menv_pip_request *pr);
/* Before a lock's pip entries are planned for `prefix`: 0 where the lock's records `l` link
 * a python or the prefix has one (bin/python); else menv_pip_no_python's error, which the
 * pip step would give after linking (a dry run passed, the create failed). */
int menv_lock_pip_python(const char *prefix, const struct menv_lockrecs *l, struct menv_error *err);
/* The lock's pip options as a JSON array of strings (new reference), for .menv-request. */
json_t *menv_lock_pip_options_json(const struct menv_lockfile *lf, const char *env);
/* Is this `pip:` section line an option that says where packages come from? */
bool menv_pip_source_option(const char *line);

/* ---- pipstep.c ------------------------------------------------------------------------- */

/* The pip step of a change to an existing environment, after its conda transaction
 * committed, under the caller's prefix lock. conda-meta/.menv-pip-pending is written first
 * (so a killed menv's step is taken back by menv_txn_pip_recover). When pip fails, the
 * distributions it added are uninstalled, the conda packages go back to history revision
 * `revert_to` when >= 0 (menv_txn_revert_to_revision), and the conda packages pip removed
 * files of are linked again, so the environment is as it was; err says pip's failure and
 * what was put back. Errors: as menv_pip_install. */
int menv_txn_pip_into_env(const struct menv_config *cfg, const char *prefix,
                          const struct menv_pip_request *pr, long revert_to,
                          struct menv_error *err);
/* Takes back a pip step into `prefix` that a killed menv left half done (its
 * conda-meta/.menv-pip-pending marker), as menv_txn_pip_into_env does on a failure. The
 * caller holds the prefix lock. `*undone` says whether there was such a step. */
int menv_txn_pip_recover(const char *prefix, bool *undone, struct menv_error *err);
/* Links and unlinks what it takes to give `prefix` the packages of history revision `rev`
 * again (records from the package cache), as one journaled transaction whose history
 * `# cmd:` line names `why`. The caller holds the prefix lock. Errors: MENV_ENOTFOUND, and
 * those of menv_env_apply. */
int menv_txn_revert_to_revision(const struct menv_config *cfg, const char *prefix, size_t rev,
                                const char *why, struct menv_error *err);
/* pipfiles.c: menv_pip_files_before lists every path of `prefix` (conda-meta/ aside) into
 * conda-meta/.menv-pip-before before a pip step; menv_pip_files_undo removes every path not
 * in that list (what the step wrote, dist-info or not; `*removed` counts them) and drops the
 * list; menv_pip_files_done drops it after a step that succeeded. Errors: MENV_EIO. */
int menv_pip_files_before(const char *prefix, struct menv_error *err);
int menv_pip_files_undo(const char *prefix, size_t *removed, struct menv_error *err);
void menv_pip_files_done(const char *prefix);

/* Links again from the package cache (fetched again from their URL when it lost them) the
 * installed packages named in `names`, or, with NULL, those a file of which is missing, as
 * one journaled transaction under the caller's prefix lock. `*repaired` counts them.
 * Errors: those of the package cache and menv_env_apply. */
int menv_txn_repair(const struct menv_config *cfg, const char *prefix,
                    const struct menv_strvec *names, size_t *repaired, struct menv_error *err);
/* conda-meta/.menv-request: what a new environment was made from (for export
 * --from-history and re-creating its pip part). Best effort. */
void menv_env_request_write(const char *prefix, json_t *req);

/* ---- txn.c, txnsmoke.c ----------------------------------------------------------------- */

/* The transaction's state: read and written by txn.c (stages 1-6) and txnsmoke.c (stage 7)
 * only; the files below take the pieces they work on. */
struct menv_txn {
	struct menv_txn_opts o;
	struct menv_txn_plan plan; /* what menv_txn_plan shows */
	struct menv_txn_result res;
	int lock_fd;                  /* the prefix lock, or -1 */
	struct menv_strvec spec_strs; /* the request's specs: the file's, then the command's */
	struct menv_matchspec **specs;
	size_t nspecs;
	struct menv_matchspec **hist; /* conda-meta/history's requested specs */
	size_t nhist;
	struct menv_prefix_record *inst; /* the installed PrefixRecords */
	size_t ninst;
	json_t **instj;
	struct menv_channel_set ch;
	struct menv_solver *solver;
	const struct menv_record **link; /* the plan's arrays, owned */
	size_t nlink;
	bool *cached; /* per link: in the package cache when planned */
	bool *here;   /* per link: extracted and intact in the cache written (fetch skips it) */
	struct menv_txn_change *changes;
	json_t **unlink;
	size_t nunlink;
	struct menv_owned_recs owned, relinked; /* records the plan made itself */
	struct menv_strvec pip;                 /* pip requirement lines */
	struct menv_lockfile *lf;               /* *_LOCK */
	const struct menv_lock_package **sel, **pipsel;
	size_t nsel, npipsel;
	struct menv_lockrecs lr;
	long revert_to; /* the history revision a failed pip step goes back to, or -1 */
	bool prepared, committed;
};

static inline bool menv_txn_is_create(enum menv_txn_kind k)
{
	return k == MENV_TXN_CREATE || k == MENV_TXN_CREATE_LOCK;
}

static inline bool menv_txn_is_lock(enum menv_txn_kind k)
{
	return k == MENV_TXN_CREATE_LOCK || k == MENV_TXN_INSTALL_LOCK;
}

#endif
