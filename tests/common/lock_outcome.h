/* What one reading of a lockfile gave, as one text, so that two readings of the same bytes
 * (the conda-lock scanner of specs/lock_scan.c, libyaml's reader, a file loaded from its
 * descriptor) can be compared with strcmp: tests/unit/specs/test_lock_scan.c and
 * tests/fuzz/fuzz_lockfile.c both use it (lock_outcome.c). */
#ifndef MENV_TEST_LOCK_OUTCOME_H
#define MENV_TEST_LOCK_OUTCOME_H

#include "lockfile.h"
#include "specs.h"

/* "RC MESSAGE" where rc is non-zero (the error's code and text), else the model: the JSON of
 * menv_lockfile_to_json with its keys sorted, plus what it leaves out ("channels_raw",
 * "platforms_raw", "lines": each entry's 1-based line). Frees lf (NULL allowed). Returns a
 * malloc'd string the caller frees; never NULL. */
char *menv_test_lock_outcome(int rc, struct menv_lockfile *lf, const struct menv_error *e);

/* Parses `data` with menv_lockfile_parse and with menv_lockfile_parse_libyaml under the name
 * `src`; NULL when both gave the same outcome, else a malloc'd text naming both readings
 * ("the scanner's reading differs\n  scanner: ...\n  libyaml: ...", each cut to 2,000 bytes). */
char *menv_test_lock_differs(const char *data, size_t len, const char *src);

#endif
