/*
 * intent.h - the intent records of the commands made of several transactions (rename, env
 * remove), inside libmenv's envs/ only; intent.c says what each file means.
 */
#ifndef MENV_ENVS_INTENT_H
#define MENV_ENVS_INTENT_H

#include "prefix.h"

/* Writes `<src>/conda-meta/.menv-rename` (atomically): the rename of `src` to `dest`, the old
 * destination moved to `aside` (NULL: none), the clone marked with `token`. Errors: MENV_EIO. */
int menv_intent_rename_begin(const char *src, const char *dest, const char *aside,
                             const char *token, struct menv_error *err);
/* Writes `<dest>/conda-meta/.menv-replaced` ("SRC\nTOKEN\n"): `dest` is about to be set
 * aside by the `rename --force` of `src` marked `token`, so that a command naming `dest` while
 * only the aside folder stands finds the rename (menv_env_replaced_recover). Errors: MENV_EIO. */
int menv_intent_replaced_mark(const char *dest, const char *src, const char *token,
                              struct menv_error *err);
/* Names the `rename --force` this process runs (`token`; NULL: it ended): its aside folder is
 * left alone by menv_env_replaced_recover while it makes its clone. Not thread-safe. */
void menv_intent_rename_running(const char *token);
/* Writes `<staging>/conda-meta/.menv-clone`: the clone of `src` marked `token`. */
int menv_intent_clone_mark(const char *staging, const char *src, const char *token,
                           struct menv_error *err);
/* `on`: writes `<prefix>/conda-meta/.menv-creating` (a new environment's last steps, its pip
 * step, request and registry line, are about to run: a kill removes the environment, and
 * `env list` does not show it meanwhile); else removes it (the steps are done). Errors:
 * MENV_EIO. */
int menv_intent_creating(const char *prefix, bool on, struct menv_error *err);
/* Writes `<prefix>/conda-meta/.menv-removing`: from here on `prefix` is being removed and the
 * next command finishes that. Errors: MENV_EIO. */
int menv_intent_removing(const char *prefix, struct menv_error *err);
/* Writes `<prefix>/conda-meta/.menv-doctor`, one dist a line: doctor --fix is about to set
 * their records aside (`<dist>.json.corrupt`) and link the packages again. Recovery (after
 * the relink's own journal is settled) puts a record back where no new one was written.
 * Errors: MENV_EIO. */
int menv_intent_doctor_begin(const char *prefix, const struct menv_strvec *dists,
                             struct menv_error *err);
/* Moves `path` to a hidden name beside it (`.<name>.menv-tmp-XXXXXX`, which a later create
 * of the name also cleans) with one rename, then removes that tree: `path` is there whole or
 * not at all. Errors: MENV_EIO when the rename fails. */
int menv_intent_remove_whole(const char *path, struct menv_error *err);
/* The end of every changing command (create, install, update, remove, env update, env remove,
 * rename, doctor --fix): a SIGINT/SIGTERM (the cancel flag, menv_cancelled) that came after
 * its commit point let the change run to its end, and the command says so and exits 130 as
 * for any Ctrl-C: MENV_EINTR "interrupted after DONE; the ACTION of 'PREFIX' was finished".
 * 0 when no signal came. */
int menv_intent_late_cancel(const char *done, const char *action, const char *prefix,
                            struct menv_error *err);

#endif
