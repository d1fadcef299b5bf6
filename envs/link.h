/*
 * link.h - internal interface of envs/: the transaction journal (journal.c), linking one
 * package (link.c), link scripts and .pyc compilation (scripts.c), used by the environment
 * transactions of prefix.c. Not part of the public envs.h.
 */
#ifndef MENV_ENVS_LINK_H
#define MENV_ENVS_LINK_H

#include "envs.h"

/* ---------------------------------------------------------------------------------------- */
/* Journal (journal.c)                                                                       */

/* A transaction on the directory `root` (a prefix, or the staging directory of a create).
 * While fd < 0 nothing is journaled (a staging directory is removed whole on failure). */
struct menv_journal {
	char *root;      /* where changes are made */
	char *dir;       /* <root>/conda-meta/.menv-txn */
	int fd;          /* the journal, or -1 */
	size_t ops;      /* changes made so far (the MENV_TEST_CRASH_AFTER hook counts them) */
	size_t nbackups; /* files moved aside so far */
	long crash_after;
};

void menv_journal_init(struct menv_journal *t, const char *root);
void menv_journal_release(struct menv_journal *t);
/* Starts journaling: kind 'U' (changing an existing prefix) or 'N' (a new prefix whose
 * link scripts are still to run). Errors: MENV_EIO. */
int menv_journal_begin(struct menv_journal *t, char kind, struct menv_error *err);
/* Write-ahead records; each is logged before the change it announces. `rel` is relative
 * to t->root. */
int menv_journal_created(struct menv_journal *t, const char *rel, struct menv_error *err);
int menv_journal_mkdirs(struct menv_journal *t, const char *rel, struct menv_error *err);
int menv_journal_mkparents(struct menv_journal *t, const char *rel, struct menv_error *err);
int menv_journal_move_aside(struct menv_journal *t, const char *rel, struct menv_error *err);
int menv_journal_rmdir(struct menv_journal *t, const char *rel, struct menv_error *err);
/* Commit (fsync'd) then drop the backup; rollback undoes every journaled change. */
int menv_journal_commit(struct menv_journal *t, struct menv_error *err);
int menv_journal_rollback(struct menv_journal *t, struct menv_error *err);

/* rm -rf, best effort. */
void menv_remove_tree(const char *path);

/* ---------------------------------------------------------------------------------------- */
/* Linking (link.c)                                                                          */

struct menv_link_caps {
	bool no_reflink;  /* FICLONE failed with "not supported" once: don't try again */
	bool no_hardlink; /* link(2) failed across devices once */
};

struct menv_link_ctx {
	const char *prefix;        /* the final prefix path written into files */
	struct menv_journal *txn;  /* where files are created (txn->root) and journaled */
	const char *pkgdir;        /* the extracted package in the package cache */
	const char *dist;          /* "channel::name-version-build" for messages */
	bool noarch_python;        /* remap site-packages/ and python-scripts/ */
	const char *site_packages; /* "lib/python3.X/site-packages" for noarch python */
	const struct menv_install_opts *opts;
	json_t *owners; /* prefix path -> dist that has it now (borrowed, updated) */
	struct menv_link_caps *caps;
	struct menv_link_stats *st;
	int link_type; /* out: conda's link type of the package (1 hard, 2 soft, 3 copy) */
};

/* Links the files of ctx->pkgdir into ctx->txn->root, appending prefix-relative paths to
 * `files` and paths_data entries to `paths` (both JSON arrays, borrowed).
 * Errors: MENV_EPARSE, MENV_EUNSAFE, MENV_EUNSUPPORTED, MENV_EEXIST, MENV_EIO. */
int menv_link_package(struct menv_link_ctx *ctx, json_t *files, json_t *paths,
                      struct menv_error *err);

/* Checks before anything is written that a package can be linked into `prefix`: its file
 * list is readable and no binary-mode placeholder is shorter than `prefix` (BR-026).
 * Errors: MENV_EUNSUPPORTED naming the file and both lengths, MENV_EPARSE, MENV_ENOTFOUND. */
int menv_link_check(const char *pkgdir, const char *dist, const char *prefix,
                    struct menv_error *err);

/* mkdir -p. Errors: MENV_EIO. */
int menv_mkdirs(const char *path, struct menv_error *err);

/* sha256 of a memory block as lowercase hex (65 bytes with the NUL). */
void menv_sha256_hex(const void *data, size_t len, char out[65]);

/* The shebang line for scripts run by `python` of `prefix`: "#!<prefix>/bin/python\n", or,
 * when that line is longer than the kernel's limit or the prefix holds blanks, the
 * `#!/bin/sh` + `'''exec' "<python>" "$0" "$@"` trampoline (valid sh and Python). Caller
 * frees. */
char *menv_python_shebang(const char *prefix);

/* ---------------------------------------------------------------------------------------- */
/* Link scripts and .pyc (scripts.c)                                                         */

/* Runs `script` (an absolute path) for a package with conda's variables PREFIX, PKG_NAME,
 * PKG_VERSION, PKG_BUILDNUM (plus CONDA_PREFIX and PATH with <prefix>/bin first) after
 * sourcing the prefix's activate.d scripts (*.sh) in byte order, as conda runs post-link
 * scripts in the activated environment. The script is sourced by bash. Its output goes to
 * `output` (may be NULL). Errors: MENV_EIO when it cannot be started or exits non-zero
 * ("<action> script of '<dist>' failed with exit status N"). */
int menv_run_link_script(const char *prefix, const char *script, const char *action,
                         const char *name, const char *version, int64_t build_number,
                         const char *dist, struct menv_buf *output, struct menv_error *err);

/* Compiles the `.py` files among `files` (prefix-relative, a JSON array) with
 * <root>/bin/python (python version `pyver`, "3.9"), journaling each .pyc before it is
 * written; appends the .pyc files that exist afterwards to `files` and `paths` (path_type
 * pyc_file). No python in the prefix: nothing is done. Errors: MENV_EIO (journal); a failing
 * compileall is reported through opts->cb as a warning. */
int menv_compile_pyc(struct menv_journal *t, const char *prefix, const char *pyver, json_t *files,
                     json_t *paths, const struct menv_install_opts *opts, struct menv_error *err);

/* In a forked child: the umask the process started with (libraries may have it at 0 for a
 * moment in another thread). */
void menv_child_umask(void);

#endif
