/*
 * jsonscan.h - finding package records in repodata.json bytes without parsing them
 * (internal to solver/).
 */
#ifndef MENV_SOLVER_JSONSCAN_H
#define MENV_SOLVER_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>

enum menv_jsonscan_kind {
	MENV_JSONSCAN_INFO,
	MENV_JSONSCAN_TARBZ2,
	MENV_JSONSCAN_CONDA,
	MENV_JSONSCAN_OTHER /* "packages" or "packages.conda" that is no object (libsolv also
	                       reads a list there): its records are not reported */
};

/* One value the scan found: for the "info" object (key NULL) and for each record of
 * "packages" (TARBZ2) and "packages.conda" (CONDA), and OTHER for such a section that is not
 * an object. `key` points at the file name inside the
 * buffer (not NUL-terminated, JSON escapes left as they are; real file names have none),
 * [off, end) are the bytes of the value. `name` is the record's top-level "name" string
 * (inside the buffer, without quotes), or NULL when it has none, it is not a string, or it
 * holds a JSON escape (the caller then treats the record as one of every name). */
struct menv_jsonscan_item {
	enum menv_jsonscan_kind kind;
	const char *key;
	size_t keylen;
	size_t off, end;
	const char *name;
	size_t namelen;
};
typedef void (*menv_jsonscan_cb)(void *ud, const struct menv_jsonscan_item *it);

/* Scans repodata.json bytes. Returns 0, or -1 when the top level is not a JSON object of
 * the expected shape (the caller then reports the file as invalid). */
int menv_jsonscan_repodata(const char *s, size_t n, menv_jsonscan_cb cb, void *ud);

/* Calls `cb` with the package name of each string of the record's top-level "depends",
 * "requires" and "constrains" arrays (the record's bytes are s[0..n)), read as libsolv's
 * conda matcher reads a MatchSpec: after the last ':', up to the first of " =<>!~",
 * lower-cased into `buf` (NUL-terminated, truncated to `cap` - 1 bytes). Returns false when
 * a string's name cannot be read that way (a JSON escape, a glob or regex, an empty name, one
 * longer than buf): the caller then cannot know the names it reaches. *name and *namelen:
 * the record's "name" as menv_jsonscan_repodata reports it (NULL and 0: none readable). */
bool menv_jsonscan_dep_names(const char *s, size_t n, char *buf, size_t cap,
                             void (*cb)(void *ud, const char *name), void *ud, const char **name,
                             size_t *namelen);

#endif
