/*
 * registry.h - the environments of a machine: the registry shared with conda
 * (~/.conda/environments.txt, registry.c), listing them, naming them (-n/-p to a prefix),
 * `menv info` and `menv clean`.
 */
#ifndef MENV_ENVS_REGISTRY_H
#define MENV_ENVS_REGISTRY_H

#include "prefix.h"

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
 * the named environments of each envs_dirs entry (in order, each sorted), the registry's
 * prefixes that still hold conda-meta/ (in their order), then active ones ($CONDA_PREFIX,
 * $CONDA_PREFIX_<n>) not listed yet. Appended to `envs` as found and to `normalized` as compared
 * (menv_envreg_normalize), in the same order. Errors: MENV_EIO for an unreadable registry
 * (the others are still listed). */
int menv_env_list(const struct menv_config *cfg, struct menv_strvec *envs,
                  struct menv_strvec *normalized, struct menv_error *err);
/* `conda env list`'s text for what menv_env_list found, appended to `out`: "# menv
 * environments:", "#", then a line per environment: its name ("base" for the first, the
 * folder's name for one directly under an entry of cfg->envs_dirs, else blank) padded to 20
 * columns, "*" for the active one ($CONDA_PREFIX, compared normalized), its path. */
void menv_env_list_text(const struct menv_config *cfg, const struct menv_strvec *envs,
                        const struct menv_strvec *normalized, struct menv_buf *out);

/* The extracted packages ("<dist>" folder names of the package cache) that the environments
 * of menv_env_list use, appended to `keep` once each (`conda clean --packages` keeps them).
 * Errors: as menv_env_list (the environments found are still counted). */
int menv_env_used_packages(const struct menv_config *cfg, struct menv_strvec *keep,
                           struct menv_error *err);
/* What `conda info --json` shows, as a new JSON object: menv_version, root_prefix,
 * pkgs_dirs, envs_dirs, platform, channels (the configured ones expanded, credentials and
 * tokens redacted: menv_url_redact), config_files, virtual_pkgs ("name=version=build",
 * menv_virtual_detect), active_prefix, active_prefix_name (null when none) and shlvl (-1
 * when unset). `text` (may be NULL) gets `conda info`'s text appended: one "key : value"
 * line each, keys right-aligned, a list's further values under the first. */
json_t *menv_env_info(const struct menv_config *cfg, struct menv_buf *text);

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

/* Refuses an environment name as one line (MENV_EUSAGE naming its first bytes): empty, ".",
 * "..", holding '/', not UTF-8 text or holding a control character, or longer than NAME_MAX
 * (255) bytes, the longest folder name the system takes; for a `fresh` one (a new
 * environment's) also conda's PREFIX_NAME_DISALLOWED_CHARS (' ', ':', '#') and a leading '-'.
 * "base" and "root" are the caller's to decide. 0 when the name is fine. */
int menv_env_name_check(const char *name, bool fresh, struct menv_error *err);
/* Refuses a prefix path (absolute or relative, as given) as one line (MENV_EUSAGE) when it is
 * longer than PATH_MAX less 256 bytes (3,839: room for the staging folder beside it and the
 * records in it) or one of its '/'-separated components is longer than NAME_MAX (255) bytes:
 * what the system would refuse at a later step that names it. 0 when it is fine. */
int menv_env_path_check(const char *path, struct menv_error *err);

/* The prefix of a new environment: for a NAME, the environment of that name in the first
 * envs_dirs entry that holds one (menv_env_locate, conda's target_prefix: the caller then
 * finds it exists), else `<envs_dir>/NAME`; or PREFIX made absolute against the
 * working directory (trailing '/' dropped). The name must pass menv_env_name_check (fresh),
 * the prefix menv_env_path_check. Caller frees; NULL with MENV_EUSAGE when
 * neither or both are given or the name is refused, MENV_EIO without a working directory. */
char *menv_env_prefix_new(const struct menv_config *cfg, const char *name, const char *prefix,
                          struct menv_error *err);
/* The prefix of an existing environment: -n NAME ("base" is the root prefix), -p PREFIX, else
 * the active $CONDA_PREFIX, through menv_env_locate. The one place of conda's rule "the
 * active environment is the default": every command that acts on an existing environment
 * takes its -n/-p here (cli.active_default enumerates them); refusals of the active one
 * (env remove, rename) are the commands' own. Caller frees; NULL with MENV_EUSAGE
 * (nothing given, both given, a bad name) or menv_env_locate's error. */
char *menv_env_prefix_find(const struct menv_config *cfg, const char *name, const char *path,
                           struct menv_error *err);

/* May `prefix` (absolute) be removed whole (remove --all, env remove)? Not when it is, or is
 * an ancestor of, the root prefix, an entry of envs_dirs or of pkgs_dirs (or envs_dir,
 * pkgs_dir): compared lexically (menv_envreg_normalize) and, where they exist, by device and
 * inode of `prefix` against each such directory and each of its parents, the path as given
 * and its realpath, so that links and ".." do not get around it. Returns 0, or MENV_EUSAGE
 * with one line naming the directory `prefix` is or holds and its setting. */
int menv_env_check_not_config_dir(const struct menv_config *cfg, const char *prefix,
                                  struct menv_error *err);

#endif
