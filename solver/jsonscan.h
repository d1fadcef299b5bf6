/*
 * jsonscan.h - finding package records in repodata.json bytes without parsing them
 * (internal to solver/).
 */
#ifndef MENV_SOLVER_JSONSCAN_H
#define MENV_SOLVER_JSONSCAN_H

#include <stddef.h>

enum menv_jsonscan_kind { MENV_JSONSCAN_INFO, MENV_JSONSCAN_TARBZ2, MENV_JSONSCAN_CONDA };

/* Called for the "info" object (key NULL) and for each record of "packages" (TARBZ2) and
 * "packages.conda" (CONDA): `key` points at the file name inside the buffer (not
 * NUL-terminated, JSON escapes left as they are; real file names have none), `off` is the
 * byte offset of the value. */
typedef void (*menv_jsonscan_cb)(void *ud, enum menv_jsonscan_kind kind, const char *key,
                                 size_t keylen, size_t off);

/* Scans repodata.json bytes. Returns 0, or -1 when the top level is not a JSON object of
 * the expected shape (the caller then reports the file as invalid). */
int menv_jsonscan_repodata(const char *s, size_t n, menv_jsonscan_cb cb, void *ud);

#endif
