/*
 * link.h - internal interface of envs/: the transaction journal (journal.c), linking one
 * package (link.c), link scripts and .pyc compilation (scripts.c), used by the environment
 * transactions of prefix.c. Not part of the public envs.h.
 */
#ifndef MENV_ENVS_LINK_H
#define MENV_ENVS_LINK_H

#include <sys/stat.h>

#include "prefix.h"

/* ---------------------------------------------------------------------------------------- */
/* Journal (journal.c)                                                                       */

/* A transaction on the directory `root` (a prefix, or the staging directory of a create).
 * While fd < 0 nothing is journaled (a staging directory is removed whole on failure). */
struct menv_journal {
	char *root;        /* where changes are made */
	int rootfd;        /* an O_PATH descriptor of root (beneath.c), or -1 when it could not
	                  * be opened: every change is made relative to it */
	char *dir;         /* <root>/conda-meta/.menv-txn */
	int fd;            /* the journal, or -1 */
	size_t ops;        /* changes made so far (the MENV_TEST_CRASH_AFTER hook counts them) */
	size_t nbackups;   /* files moved aside so far */
	char *last_parent; /* the directory menv_journal_mkparents saw last (all there) */
};

/* Removes what killed creates and removals left in the folder `parent`:
 * `.<name>.menv-tmp-XXXXXX` directories whose lock no live process holds. */
void menv_env_remove_stale(const char *parent);

/* Opens `root` too (t->rootfd; -1 when that fails, and then every change fails with
 * MENV_EIO). menv_journal_release closes it. */
void menv_journal_init(struct menv_journal *t, const char *root);
/* The root directory was renamed to `root` (a create's staging directory moved into place):
 * the names change, the descriptor stays (it is the same directory). */
void menv_journal_moved(struct menv_journal *t, const char *root);
void menv_journal_release(struct menv_journal *t);
/* Starts journaling: kind 'U' (changing an existing prefix) or 'N' (a new prefix whose
 * link scripts are still to run). Errors: MENV_EIO. */
int menv_journal_begin(struct menv_journal *t, char kind, struct menv_error *err);
/* Write-ahead records; each is logged before the change it announces. `rel` is relative
 * to t->root and resolved beneath it (beneath.c): mkdirs, mkparents and move_aside fail with
 * MENV_EUNSAFE when a component above the last is a symbolic link, MENV_EEXIST when one is
 * not a directory. */
int menv_journal_created(struct menv_journal *t, const char *rel, struct menv_error *err);
int menv_journal_mkdirs(struct menv_journal *t, const char *rel, struct menv_error *err);
int menv_journal_mkparents(struct menv_journal *t, const char *rel, struct menv_error *err);
/* The 'D' record of mkdirs (a menv_beneath_mkdir_cb, `t` the journal): the directory rel is
 * about to be created. For a caller that makes directories itself (menv_beneath_subdir). */
int menv_journal_log_mkdir(void *t, const char *rel, struct menv_error *err);
int menv_journal_move_aside(struct menv_journal *t, const char *rel, struct menv_error *err);
int menv_journal_rmdir(struct menv_journal *t, const char *rel, struct menv_error *err);
/* Commit (fsync'd) then drop the backup; rollback undoes every journaled change. */
int menv_journal_commit(struct menv_journal *t, struct menv_error *err);
int menv_journal_rollback(struct menv_journal *t, struct menv_error *err);

/* rm -rf, best effort; follows no link below `path` itself (a link is removed as a link). */
void menv_remove_tree(const char *path);

/* ---------------------------------------------------------------------------------------- */
/* Paths beneath a directory (beneath.c)                                                     */

/* Every write menv makes in a prefix (link, unlink, journal, rollback, records, history,
 * .pyc, entry points, pip's MENV_SOURCE) goes through these: `rel` is a path relative to
 * `rootfd` (an O_PATH descriptor of the prefix or of a create's staging directory) and no
 * component above its last may be a symbolic link, even one pointing inside the prefix; the
 * last component is never followed. A link's target may point anywhere: nothing is written
 * through it. openat2(2) RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS where
 * the kernel has it, else a component-by-component O_NOFOLLOW walk. Each function keeps
 * errno of the failing system call. Common errors: MENV_EUNSAFE (`rel` is absolute, has an
 * empty, "." or ".." component or a newline, or a link is in the way: "'<path>' is a symbolic
 * link ..."), MENV_ENOTFOUND (a component is missing), MENV_EEXIST (a component is not a
 * directory), MENV_EIO. */

/* A relative path of non-empty components, none "." or "..", no newline. */
bool menv_beneath_relpath_ok(const char *rel);
/* Opens `path` itself (links in it followed: the user's prefix may sit behind one) as an
 * O_PATH directory descriptor; the caller closes *fd. Errors: MENV_ENOTFOUND, MENV_EIO. */
int menv_beneath_root(const char *path, int *fd, struct menv_error *err);
/* The directory `rel` ("" is rootfd itself) as a new O_PATH descriptor; caller closes. */
int menv_beneath_dir(int rootfd, const char *rel, int *out, struct menv_error *err);
/* The directory holding `rel` (*dirfd, caller closes) and rel's last component (*leaf, a
 * pointer into rel). */
int menv_beneath_parent(int rootfd, const char *rel, int *dirfd, const char **leaf,
                        struct menv_error *err);
/* lstat of rel. MENV_ENOTFOUND when it (or a parent) does not exist. */
int menv_beneath_lstat(int rootfd, const char *rel, struct stat *st, struct menv_error *err);
/* Whether rel exists (as anything, a link included) with no link above it. */
bool menv_beneath_exists(int rootfd, const char *rel);
/* openat(2) of rel with O_NOFOLLOW | O_CLOEXEC added to `flags`; *fd belongs to the caller.
 * A link as the last component: MENV_EUNSAFE. */
int menv_beneath_open(int rootfd, const char *rel, int flags, mode_t mode, int *fd,
                      struct menv_error *err);
/* Creates rel (O_CREAT | `extra_flags`, e.g. O_EXCL or O_TRUNC) holding `len` bytes. */
int menv_beneath_write(int rootfd, const char *rel, const void *data, size_t len, mode_t mode,
                       int extra_flags, struct menv_error *err);
/* menv_beneath_open and menv_beneath_write of the entry `leaf` (one component) of `dirfd`, a
 * directory descriptor from menv_beneath_dir, menv_beneath_subdir or the root itself:
 * `shown` (the path relative to the root) names it in errors. */
int menv_beneath_open_at(int dirfd, const char *leaf, const char *shown, int flags, mode_t mode,
                         int *fd, struct menv_error *err);
int menv_beneath_write_at(int dirfd, const char *leaf, const char *shown, const void *data,
                          size_t len, mode_t mode, int extra_flags, struct menv_error *err);
/* mkdir of rel (its parent must exist). MENV_EEXIST when rel exists. */
int menv_beneath_mkdir(int rootfd, const char *rel, mode_t mode, struct menv_error *err);
/* mkdir -p of rel: `cb` (may be NULL) is called with the path so far before each directory
 * is created (the journal logs it there); a non-zero return stops. */
typedef int (*menv_beneath_mkdir_cb)(void *ud, const char *rel, struct menv_error *err);
int menv_beneath_mkdirs(int rootfd, const char *rel, menv_beneath_mkdir_cb cb, void *ud,
                        struct menv_error *err);
/* menv_beneath_dir in one openat2(2) call and without a message: 0, or -1 with errno (ENOENT
 * a component is missing, ELOOP or EXDEV a link is in the way, ENOTDIR a file is; ENOSYS when
 * openat2 is not in use, and then the caller walks, e.g. with menv_beneath_subdir). `rel`
 * must be menv_beneath_relpath_ok; *out belongs to the caller. */
int menv_beneath_dir_fast(int rootfd, const char *rel, int *out);
/* The directory `name` (one component, no '/') of `dirfd` (a directory descriptor beneath a
 * root, or the root) as a new O_PATH descriptor (*out, caller closes), never following a
 * link there; created with mode 0755 when missing, `cb` (may be NULL) called first with
 * `shown` (the directory's path relative to the root, for the journal and messages).
 * Errors: MENV_EUNSAFE (a link, or a bad name), MENV_EEXIST (not a directory), MENV_EIO. */
int menv_beneath_subdir(int dirfd, const char *name, const char *shown, menv_beneath_mkdir_cb cb,
                        void *ud, int *out, struct menv_error *err);
/* symlinkat(target, rel): `target` is stored as given. */
int menv_beneath_symlink(const char *target, int rootfd, const char *rel, struct menv_error *err);
/* A hard link at rel of `src` (a file outside the prefix, e.g. in the package cache). */
int menv_beneath_link(const char *src, int rootfd, const char *rel, struct menv_error *err);
/* unlinkat(2) of rel; flags 0 or AT_REMOVEDIR. */
int menv_beneath_unlink(int rootfd, const char *rel, int flags, struct menv_error *err);
/* renameat(2) of `from` to `to`, both beneath rootfd. */
int menv_beneath_rename(int rootfd, const char *from, const char *to, struct menv_error *err);
/* rm -rf of rel, best effort, following no link. */
void menv_beneath_remove_tree(int rootfd, const char *rel);
/* Whether rel is a directory (not a link) with nothing in it. */
bool menv_beneath_dir_empty(int rootfd, const char *rel);
/* Test hooks: force the walk (as on a kernel without openat2; MENV_TEST_NO_OPENAT2=1 in the
 * environment does the same), or go back to trying openat2; whether openat2 is in use. */
void menv_beneath_force_walk(bool on);
bool menv_beneath_uses_openat2(void);

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
	const char *pyver;         /* the environment's python, "3.9", for noarch python */
	/* noarch python only (borrowed JSON arrays, appended to): the prefix paths of the
	 * package's site-packages/ .py files (conda's CompileMultiPycAction list, for
	 * menv_compile_pyc), and the files and paths_data of its entry points, which conda's
	 * PrefixRecord lists after the .pyc */
	json_t *py, *ep_files, *ep_paths;
	const struct menv_install_opts *opts;
	json_t *owners; /* prefix path -> dist that has it now (borrowed, updated) */
	struct menv_link_caps *caps;
	struct menv_link_stats *st;
	int link_type; /* out: conda's link type of the package (1 hard, 2 soft, 3 copy) */
	/* the package's file list (menv_link_list_load, borrowed), or NULL: read here */
	struct menv_link_list *list;
	/* txn->root was empty when the transaction began and nothing is journaled (a create's
	 * staging directory): files and directories are made without looking first, a path
	 * that exists (two packages ship it) is found by EEXIST and then handled as always */
	bool new_root;
	/* the prefix's directories written into, each opened once (menv_link_dirs_new; given
	 * by the caller to keep them across packages when no script runs between them), or
	 * NULL: menv_link_package opens them for the package and closes them */
	struct menv_link_dirs *dirs;
	int srcfd; /* set by menv_link_package while it links: the package's directory */
};

/* A package's file list (info/paths.json, or the legacy info/files + has_prefix, and for a
 * noarch python package its info/link.json), read once for the checks, the overlap of
 * packages and the link. Errors: MENV_EPARSE, MENV_ENOTFOUND, MENV_EIO. *out is freed with
 * menv_link_list_free. */
struct menv_link_list;
int menv_link_list_load(const char *pkgdir, bool noarch_python, struct menv_link_list **out,
                        struct menv_error *err);
void menv_link_list_free(struct menv_link_list *l);
/* Its number of entries; entry i's prefix path (noarch python remapped under
 * site_packages; caller frees) and whether it is a directory entry; the prefix paths
 * ("bin/<name>") of its python entry points (NULL-terminated, borrowed). */
size_t menv_link_list_size(const struct menv_link_list *l);
char *menv_link_list_target(const struct menv_link_list *l, size_t i, bool noarch_python,
                            const char *site_packages, bool *is_dir);
const char *const *menv_link_list_entry_points(const struct menv_link_list *l);

/* Directories of the prefix opened beneath txn->root (at most 256 kept at a time), for
 * menv_link_ctx.dirs. One per thread. */
struct menv_link_dirs *menv_link_dirs_new(struct menv_journal *txn);
void menv_link_dirs_free(struct menv_link_dirs *d);

/* Links the files of ctx->pkgdir into ctx->txn->root, appending prefix-relative paths to
 * `files` and paths_data entries to `paths` (both JSON arrays, borrowed); for a noarch
 * python package whose package metadata (info/link.json, else info/package_metadata.json,
 * as conda reads it) has noarch type "python", also ctx->py (what to compile) and its entry
 * points (ctx->ep_files, ctx->ep_paths). A copy (or reflink) keeps the package file's modification time, as
 * conda's copy (shutil.copystat) does: a .pyc holds its source's mtime.
 * Errors: MENV_EPARSE, MENV_EUNSAFE, MENV_EUNSUPPORTED, MENV_EEXIST, MENV_EIO. */
int menv_link_package(struct menv_link_ctx *ctx, json_t *files, json_t *paths,
                      struct menv_error *err);

/* Checks before anything is written that a package (its file list `l`) can be linked into
 * `prefix`: every path stays in the prefix and is none of menv's own (conda-meta/...,
 * top-level .menv*; noarch python paths checked where they land, under `site_packages`), and
 * no binary-mode placeholder is shorter than `prefix` (BR-026); with `links` (may be NULL,
 * see menv_link_list_links) no path runs through a link another package of the transaction
 * (or this one) ships. Errors: MENV_EUNSAFE naming the package and the path, MENV_EUNSUPPORTED naming the file
 * and both lengths, MENV_EPARSE, MENV_ENOTFOUND. */
int menv_link_check(struct menv_link_list *l, const char *dist, const char *prefix,
                    bool noarch_python, const char *site_packages, json_t *links,
                    struct menv_error *err);
/* Adds to `links` (a JSON object, borrowed) prefix path -> `dist` for every symbolic link the
 * package (`l`, extracted in `pkgdir`) ships, so that menv_link_check (given the same object)
 * refuses before anything is written a path of the transaction that runs through one. Each
 * file's lstat is kept in `l` for menv_link_package. Errors: none today (0). */
int menv_link_list_links(struct menv_link_list *l, const char *pkgdir, const char *dist,
                         bool noarch_python, const char *site_packages, json_t *links,
                         struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Linking packages on threads (linkpool.c)                                                  */

/* How many threads link a create's packages: MENV_LINK_THREADS (1 to 64; 1 links one package
 * after the other) when set, else 1 under a test's MENV_TEST_CRASH_AFTER (a sweep needs its
 * crash points in one order), else the online CPUs, at most 4. */
int menv_link_threads(void);
/* Whether the `n` packages (their file lists, noarch_python[i] remapping package i under
 * site_packages) write no path in common: every file, link and entry point path of one is
 * no path of another, nor a directory above one; directories may be shared. Only then do
 * they link in any order to the same prefix, with no clobber. */
bool menv_link_disjoint(struct menv_link_list *const *lists, const bool *noarch_python,
                        const char *site_packages, size_t n);
/* menv_link_package for each of the `n` contexts (files[i], paths[i] their outputs), on
 * `threads` threads (this one among them), each with its own directories (ctx[i].dirs,
 * .st and .caps are set here), the packages with the most files (ctx[i].list) taken first;
 * their counts are added to *st, their capabilities to *caps.
 * The contexts must share no path (menv_link_disjoint) and need no script between them;
 * ctx[i].owners should be NULL (no thread writes a shared object). A failure stops the
 * packages not yet begun (a cancel is seen by each one's next file): the error of the first
 * failed package in order is returned, and its index in *failed (n when none failed). */
int menv_link_parallel(struct menv_link_ctx *ctx, json_t *const *files, json_t *const *paths,
                       size_t n, int threads, struct menv_link_stats *st,
                       struct menv_link_caps *caps, size_t *failed, struct menv_error *err);

/* mkdir -p. Errors: MENV_EIO. */
int menv_mkdirs(const char *path, struct menv_error *err);

/* sha256 of a memory block as lowercase hex (65 bytes with the NUL). */
void menv_sha256_hex(const void *data, size_t len, char out[65]);

/* The shebang of a noarch python entry point run by bin/python<pyver> of `prefix` (pyver
 * "3.9"), as conda 26.7.1's generate_shebang_for_entry_point writes it:
 * "#!<prefix>/bin/python3.9\n", or, when that line with its newline is longer than 127
 * bytes or the prefix holds a blank, "#!/bin/sh\n'''exec' \"<python>\" \"$0\" \"$@\" #'''\n"
 * (valid sh and Python). Where conda's bytes would not run, menv differs: a tab or newline in
 * the prefix also takes the second form, and `"`, `$`, `` ` `` and `\` in it are escaped
 * there with a backslash. Caller frees. */
char *menv_python_shebang(const char *prefix, const char *pyver);
/* The whole entry point file for `module:func` (conda's create_python_entry_point:
 * menv_python_shebang + python_entry_point_template, importing func's first component).
 * Caller frees. */
char *menv_python_entry_point(const char *prefix, const char *pyver, const char *module,
                              const char *func);

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

/* conda's pyc_path: "<dir>/__pycache__/<stem>.cpython-39.pyc" for "<dir>/<stem>.py" and
 * python "3.9" (PEP 3147), "<dir>/<stem>.pyc" for python 2. Caller frees. */
char *menv_pyc_path(const char *py, const char *pyver);

/* ---------------------------------------------------------------------------------------- */
/* The .pyc of noarch python packages in the package cache (pyccache.c)                      */

/* One noarch python package of a compile. */
struct menv_pyc_pkg {
	const char *pkgdir; /* its extracted folder in a package cache */
	bool cacheable;     /* no .py of it was rewritten by prefix replacement */
};

/* Where menv_compile_pyc looks for .pyc compiled before and keeps the ones it compiles. */
struct menv_pyc_cache {
	const char *pkgs_dir; /* the writable package cache: only its packages get .pyc kept */
	const char *pydir;    /* the extracted package of the prefix's python, or NULL */
	bool note_magic;      /* that python was linked from pydir by this transaction: its
	                       * magic number may be noted there */
	const char *site;     /* "lib/python3.9/site-packages" */
	const struct menv_pyc_pkg *pkgs; /* one per package, parallel to py of menv_compile_pyc */
};

/* The magic number of the python of `pydir` as noted there (`.menv-pyc/magic`): true with
 * magic[0..3] set, false when none is noted. */
bool menv_pyccache_magic(const char *pydir, unsigned char magic[4]);
/* The .pyc kept for the package `pkgdir` under python `magic` and `site`, when its MANIFEST
 * lists exactly the prefix paths `py` (a JSON array of strings) in order and each of them in
 * the prefix (rootfd, links followed as python follows them) has the mtime and size it lists:
 * true with src[i] (caller frees; NULL where python wrote no .pyc) and size[i] (bytes) for
 * each; false, nothing set, otherwise. Reads only. */
bool menv_pyccache_find(const char *pkgdir, const unsigned char magic[4], const char *site,
                        int rootfd, json_t *py, char **src, int64_t *size);
/* Puts the kept .pyc `src` at rel beneath rootfd as package files are put: a symbolic link
 * (MENV_LINK_SOFTLINK), a copy (MENV_LINK_COPY, or once a hard link failed across devices:
 * *no_hardlink), else a hard link (python replaces a .pyc by rename, never in place, so the
 * cache's file cannot change through the prefix). 0, or -1 with errno. */
int menv_pyccache_link(int rootfd, const char *src, const char *rel, enum menv_link_mode mode,
                       bool *no_hardlink);
/* Keeps in the package cache the .pyc python just wrote in the prefix (rootfd) for each
 * package k with keep[k]: py[k] the prefix paths of its .py, pyc[k][i] that of py[k][i]'s .pyc.
 * Only packages in c->pkgs_dir that are cacheable, each only when every .pyc read back has
 * the header of its .py in the prefix and one magic number; under the cache lock taken
 * without waiting (busy: nothing kept); notes the magic number in c->pydir (c->note_magic).
 * Best effort, never fails: what cannot be written is compiled again next time. Crash
 * point (menv_crash_point) before each package's folder is renamed into place. */
void menv_pyccache_publish(const struct menv_pyc_cache *c, int rootfd, json_t *const *py,
                           char *const *const *pyc, const bool *keep, size_t n);

/* Compiles the .py files of `n` noarch python packages (py[k]: a JSON array of
 * prefix-relative paths) with the environment's python `pyver` ("3.9") as conda 26.7.1's
 * compile_multiple_pyc does: `<root>/bin/python3.9 -Wi -m compileall -q -l -i LIST -j 0`
 * (no -j before python 3.6), in t->root, LIST the relative paths, so that each .pyc names
 * its source by its prefix-relative path (co_filename "lib/python3.9/site-packages/x.py")
 * and is the same in every prefix. The list goes through stdin and is dealt to up to 4
 * pythons (compileall compiles a list one file after the other); PYTHONPYCACHEPREFIX,
 * PYTHONHOME and PYTHONPATH are unset, PYTHONHASHSEED is 0 (conda leaves it random, and
 * the .pyc of a module with a set constant then differs from run to run: menv's are
 * conda's under PYTHONHASHSEED=0, always the same). bin/python stands in when bin/python3.9 is missing.
 * Each .pyc (menv_pyc_path) is journaled before it is written; pyc[k] (a JSON array,
 * borrowed) gets a paths_data entry for each of py[k] in order, {_path, path_type
 * "pyc_file", size_in_bytes}, without size_in_bytes where python wrote none (as conda
 * records it: a .py the python cannot compile). `written` (may be NULL) counts the .pyc
 * written. With `cache` (may be NULL; c->pkgs[k] for py[k]), the .pyc kept in the package
 * cache for a package and this python (pyccache.c) are linked instead of compiled (the same
 * bytes), and those compiled are kept there for the next prefix. No python: nothing is done. Errors: MENV_EIO (journal, python not started),
 * MENV_EINTR; a failing compileall is reported through opts->cb as a warning. */
int menv_compile_pyc(struct menv_journal *t, const char *pyver, json_t *const *py,
                     json_t *const *pyc, size_t n, const struct menv_pyc_cache *cache,
                     const struct menv_install_opts *opts, size_t *written, struct menv_error *err);

/* In a forked child: the umask the process started with (libraries may have it at 0 for a
 * moment in another thread). */
void menv_child_umask(void);
/* The umask the process started with. */
mode_t menv_start_umask(void);

#endif
