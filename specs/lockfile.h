/*
 * lockfile.h - what the lockfile files of specs/ share and nothing else sees: the readers of
 * each format (called by menv_lockfile_parse in lockfile.c) and the small helpers they use.
 * The model itself (struct menv_lockfile, struct menv_lock_package) is public, in specs.h.
 *
 *   lockfile.c        the model, detection, entry points, these helpers
 *   lock_condalock.c  conda-lock v1 (CEP-37), read and written
 *   lock_explicit.c   explicit (CEP-23), read and written
 *   lock_pixi.c       pixi.lock v4-v7 (rattler_lock), read
 *   lock_mamba.c      micromamba's JSON lock, read
 */
#ifndef MENV_SPECS_LOCKFILE_H
#define MENV_SPECS_LOCKFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "specs.h"

struct menv_yaml_members; /* internal.h */

/* ---- format readers --------------------------------------------------------------------- */
/* Each adds the entries of one parsed document to `lf` (made by menv_lockfile_new with its
 * format) and fills its environments and platforms; `src` names the file in messages. 0, or
 * MENV_EPARSE "SRC: ..." naming the entry; `lf` is then freed by the caller. Where the
 * error is about one node of the document (an entry, a reference), `at` gets its path, which
 * menv_lockfile_parse turns into the line of the message (menv_yaml_line_at). */

/* A path into a parsed document: n steps from the root, each a mapping's key (borrowed from
 * the document) or, where key[i] is NULL, a list's item index[i] (0-based). */
struct menv_lock_at {
	const char *key[6];
	size_t index[6];
	size_t n;
	bool col; /* the message says the node's column too (FILE:LINE:COL) */
};

/* conda-lock v1: `root` is the YAML document as JSON (menv_yaml_to_json). */
int menv_lock_parse_conda_lock(struct menv_lockfile *lf, json_t *root, const char *src,
                               struct menv_lock_at *at, struct menv_error *err);
/* conda-lock v1 from the file's bytes (or, where `bytes` is NULL, what `fd` reads to its
 * end, the file never held whole: menv_yaml_stream_json_fd), its entries read one at a time
 * as libyaml's events come (menv_yaml_stream_json): 0, an error of
 * menv_lock_parse_conda_lock's, MENV_EINTR, or 1 where the file needs the general reader
 * (menv_yaml_to_json, then menv_lock_parse_conda_lock on a new `lf`: this one may hold
 * entries already). */
int menv_lock_read_conda_lock(struct menv_lockfile *lf, const char *bytes, size_t len, int fd,
                              const char *src, struct menv_lock_at *at, struct menv_error *err);
/* The same read by menv_lock_scan (no libyaml): 0, an error of menv_lock_parse_conda_lock's,
 * MENV_EINTR, or 1 (lf's entries cleared, a descriptor read to its end) where the file is not
 * of the shape the scanner reads: menv_lock_read_conda_lock then reads it (from the start). */
int menv_lock_scan_conda_lock(struct menv_lockfile *lf, const char *bytes, size_t len, int fd,
                              const char *src, struct menv_lock_at *at, struct menv_error *err);
/* The YAML that conda-lock and menv write read line by line without libyaml (lock_scan.c):
 * what menv_yaml_stream_json gives of the same bytes (or of what `fd` reads to its end where
 * `bytes` is NULL, a piece at a time), the items of the root's sequence `key` handed to
 * `item` as they end, and the root, that sequence left empty, in *out (new reference). 0; 1
 * (*out NULL) where the text is of any other shape or its root lines are not a conda-lock
 * file's (menv_lock_detected), or `item` returns non-zero: the caller reads it with libyaml,
 * which gives the same value or the error; MENV_EINTR "SRC: reading interrupted" (the cancel
 * flag, polled every 256 lines). */
int menv_lock_scan(const char *bytes, size_t len, int fd, const char *src, const char *key,
                   int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m,
                               size_t index, size_t line),
                   void *ud, json_t **out, struct menv_error *err);
/* The format menv_lockfile_detect gives where what its pass over the lines found is `seen`
 * (menv_lock_line_keys of each line that starts at column 0) and the first content line is
 * no JSON. */
enum menv_lock_format menv_lock_detected(unsigned seen);
unsigned menv_lock_line_keys(const char *line, size_t len);
/* menv_lockfile_parse without menv_lock_scan: a conda-lock file read by libyaml (streamed,
 * else whole), the reference the scanner is tested against (tests, fuzzing). */
int menv_lockfile_parse_libyaml(const char *bytes, size_t len, const char *src,
                                struct menv_lockfile **out, struct menv_error *err);
/* Frees lf's entries (npkgs 0) and the strings its chunks hold. */
void menv_lockfile_clear_entries(struct menv_lockfile *lf);
/* {name: spec} from "name spec" strings (conda-lock's `dependencies` from an entry's
 * depends); the specs of a name listed twice are joined into one ("VERSION[ BUILD]": the
 * version constraints joined by ',', "*" dropped; the first build pattern that is not "*").
 * New reference. */
json_t *menv_lock_deps_map(json_t *depends);
/* "SRC: ..." in `err` becomes "SRC:LINE: ..." (line > 0), or "SRC:LINE:COL: ..." where col
 * > 0 too; any other message stays. */
void menv_lock_error_line(struct menv_error *err, const char *src, size_t line, size_t col);
/* explicit: the file's bytes, line by line. */
int menv_lock_parse_explicit(struct menv_lockfile *lf, const char *bytes, size_t len,
                             const char *src, struct menv_error *err);
/* pixi.lock v4-v7: `root` is the YAML document as JSON. */
int menv_lock_parse_pixi(struct menv_lockfile *lf, json_t *root, const char *src,
                         struct menv_lock_at *at, struct menv_error *err);
/* micromamba's JSON lock: `root` is the parsed JSON. */
int menv_lock_parse_mamba_json(struct menv_lockfile *lf, json_t *root, const char *src,
                               struct menv_lock_at *at, struct menv_error *err);
/* The subdir a pixi platform name stands for (pixi v7 `platforms:`), borrowed from `lf`;
 * `name` itself when the file does not say. */
const char *menv_lock_pixi_subdir(const struct menv_lockfile *lf, const char *name);

/* ---- helpers (lockfile.c) ---------------------------------------------------------------- */

/* A JSON scalar as text (strings as they are, numbers printed), or NULL. Caller frees. */
char *menv_lock_jtext(json_t *v);
/* The string value of o[k], borrowed, or NULL. */
const char *menv_lock_jstr(json_t *o, const char *k);
/* s as a new JSON string, or JSON null for NULL. New reference. */
json_t *menv_lock_jstr_or_null(const char *s);
/* Is s exactly n hexadecimal digits long? */
bool menv_lock_is_hex(const char *s, size_t n);
/* A copy of s[0..n) (and a NUL) held by `lf` (its chunks of entry strings, freed with it):
 * what a reader puts in an entry's fields instead of a malloc'd string each. A field holding
 * one is never freed or replaced on its own. menv_lock_strdup: of a NUL-terminated s, NULL
 * for NULL. */
char *menv_lock_strndup(struct menv_lockfile *lf, const char *s, size_t n);
char *menv_lock_strdup(struct menv_lockfile *lf, const char *s);
/* Is `s` one of lf's held strings (menv_lock_strndup)? Only such a string may be shared by
 * two entries (the others are freed with their entry). */
bool menv_lock_holds(const struct menv_lockfile *lf, const char *s);
/* Room for `n` more entries in lf->pkgs at once (a reader that can count its entries before
 * reading them: no array grown and copied 17 times for 100,000 entries). A hint: adding
 * more still works. */
void menv_lockfile_reserve(struct menv_lockfile *lf, size_t n);
/* How many times `needle` occurs in bytes[0..len) (an upper bound of a lock's entries). */
size_t menv_lock_count(const char *bytes, size_t len, const char *needle);
/* Is k one of the strings of the NULL-terminated list? */
bool menv_lock_in_list(const char *const *list, const char *k);
/* Replaces *slot (freed) by a lowercase copy of hex, or NULL when hex is NULL or empty. */
void menv_lock_set_hash(char **slot, const char *hex);
/* As menv_lock_set_hash from a lock's JSON value: a string as it is, null or missing as none,
 * any other value as its JSON text ("12345", "[1]"), which menv_lockfile_parse then refuses
 * as no hash (a hash of the wrong type is never dropped silently: the package would be
 * installed unchecked). */
void menv_lock_set_hash_json(char **slot, json_t *v);
/* A conda entry's md5 or sha256 that `hashes` gives as an empty string set to "" (not to
 * NULL as menv_lock_set_hash_json sets it): menv_lockfile_parse refuses it, where no hash at
 * all may be allowed (pixi, micromamba's JSON). */
void menv_lock_keep_empty_hashes(struct menv_lock_package *p, json_t *hashes);
/* What conda-lock and pixi entries share, read from entry `e` into `p`: the name and version
 * (menv_lock_jtext), md5 and sha256 from `hashes` (conda-lock's `hash` mapping, pixi's entry
 * itself; menv_lock_set_hash_json, and menv_lock_keep_empty_hashes for a conda entry), and each key of `e` that `known` (NULL-terminated) does not
 * list, into p->extra. */
void menv_lock_entry_common(struct menv_lock_package *p, json_t *e, json_t *hashes,
                            const char *const *known);
/* The usual package URL, "…/NAME-VERSION-BUILD.conda" (or .tar.bz2) with no query: the two
 * last '-' of its file name in dash[0..1], where menv_dist_split would find them, the start of
 * its suffix in dash[2], and true; false for anything else (menv_dist_split then decides, with
 * its message). No copy of the file name is made: 100,000 lines are split in place. */
bool menv_lock_split_in_place(const char *url, const char *dash[3]);
/* For a conda entry with p->url: the build that the URL's file name says (menv_dist_split),
 * and with `names` its name and version, each where `p` has none; the subdir before the file
 * name (menv_url_folder) where `p` has none. Errors: those of menv_dist_split
 * (MENV_EPARSE: not NAME-VERSION-BUILD.conda or .tar.bz2), `p` then unchanged. */
int menv_lock_fill_from_url(struct menv_lock_package *p, bool names, struct menv_error *err);
/* Does entry `p` belong to `platform` (a platform name, or for pixi v7 its subdir)? */
bool menv_lock_on_platform(const struct menv_lockfile *lf, const struct menv_lock_package *p,
                           const char *platform);

#endif
