/*
 * internal.h - helpers shared by the parsers of specs/ and nothing else (libyaml types stay
 * inside specs/).
 */
#ifndef MENV_SPECS_INTERNAL_H
#define MENV_SPECS_INTERNAL_H

#include <yaml.h>

#include "specs.h"

/* Reads the next document of `parser` into `doc`, as yaml_parser_load() does (an empty
 * document with no root node once the stream has ended), but nesting deeper than
 * MENV_PARSE_MAX_DEPTH is refused, the cancel flag (menv_cancel_flag_set) is polled at every
 * event, and an alias may only name a node that has ended (so the document is never a cycle).
 * On success `doc` belongs to the caller (yaml_document_delete). Errors: MENV_EPARSE
 * "SRC:LINE:COL: ...", MENV_EINTR; `doc` is then left empty (nothing to delete). */
int menv_yaml_load(yaml_parser_t *parser, yaml_document_t *doc, const char *src,
                   struct menv_error *err);
/* As menv_yaml_load, merge keys refused (menv_yaml_merge's `refuse`) in every mapping
 * (.condarc's reader), or with `root_only` in the root mapping only (environment files):
 * MENV_EPARSE "SRC:LINE:COL: a merge key ('<<'): WHY; write the keys out". */
#define MENV_CONDARC_MERGE "conda's .condarc reader drops what it merges"
int menv_yaml_load_refusing(yaml_parser_t *parser, yaml_document_t *doc, const char *src,
                            bool root_only, const char *why, struct menv_error *err);
/* Resolves the merge keys of mapping node `id` of `doc` (its sources resolved before: an
 * alias names a node that has ended), as YAML 1.1, ruamel.yaml and PyYAML do: the pairs of
 * `<<: MAPPING` or `<<: [MAPPING, ...]` join the mapping after its own, a key it gives (or an
 * earlier source gives) winning; the `<<` pairs go. A quoted '<<' is a key. 0, or MENV_EPARSE
 * "SRC:LINE:COL: a merge key ('<<') takes a mapping or a list of mappings". `refuse` (NULL:
 * resolve): any merge key is MENV_EPARSE "SRC:LINE:COL: a merge key ('<<'): REFUSE; write the
 * keys out". `*read` counts the pairs of sources read in the whole document (0 at its
 * start): past 32 a node of it plus a million (a mapping merged n times, a chain of n anchors
 * each merging the last: n^2 from a file of n), MENV_EPARSE "SRC:LINE:COL: merge keys read
 * more pairs than the file holds" at the merge key. */
int menv_yaml_merge(yaml_document_t *doc, int id, const char *src, const char *refuse, size_t *read,
                    struct menv_error *err);
/* After the first document of `parser` (menv_yaml_load's, or a reader's own events up to
 * its document end): 0 where the stream ends there; MENV_EPARSE "SRC:LINE:COL: a second YAML
 * document (---) in one WHAT" where another document starts (PyYAML's and ruamel's single
 * `load`, conda's, refuse one too: "expected a single document in the stream"), or the
 * parse error "SRC:LINE:COL: ..." of what follows (a `---` then garbage is never ignored). */
int menv_yaml_single(yaml_parser_t *parser, const char *src, const char *what,
                     struct menv_error *err);

/* A YAML (or JSON) document as a new JSON value: plain scalars typed as YAML 1.2's core
 * schema (null, true/false, integers), others strings; mappings keep their order. Errors:
 * MENV_EPARSE "SRC:LINE:COL: ..." (duplicate keys too), MENV_EINTR. */
int menv_yaml_to_json(const char *bytes, size_t len, const char *src, json_t **out,
                      struct menv_error *err);
/* A scalar's JSON value as menv_yaml_to_json types it: a plain scalar by YAML 1.2's core
 * schema (null, true/false, integers), anything else a string. New reference, NULL where
 * `v` is not UTF-8. */
json_t *menv_yaml_scalar_json(const char *v, yaml_scalar_style_t style);
/* The type menv_yaml_scalar_json gives the scalar (JSON_STRING, JSON_NULL, JSON_TRUE,
 * JSON_FALSE or JSON_INTEGER), without making the value. */
json_type menv_yaml_scalar_type(const char *v, yaml_scalar_style_t style);

/* A mapping's members as libyaml's events gave them (yaml_stream.c): each key as written, and
 * its value, a scalar's text and style (not yet typed: menv_yaml_scalar_json), the members
 * of a mapping of scalars (`sub`: a lock entry's `hash` and `dependencies`, no JSON made of
 * them) or any other collection's JSON. Keys are distinct and valid UTF-8, texts valid UTF-8
 * without NUL. Exactly one of text, sub and v is set. */
struct menv_yaml_members;
struct menv_yaml_member {
	char *key;
	char *text;                    /* a scalar's text, or NULL for a collection */
	yaml_scalar_style_t style;     /* the scalar's style */
	struct menv_yaml_members *sub; /* a mapping whose values are scalars (owned), or NULL */
	json_t *v;                     /* another collection's value (owned), or NULL */
};
struct menv_yaml_members {
	struct menv_yaml_member *m;
	size_t n, alloc;
};
/* The members as the JSON object menv_yaml_to_json gives of the mapping. New reference. */
json_t *menv_yaml_members_json(const struct menv_yaml_members *m);

/* The first document of a YAML file read straight from libyaml's events into JSON, for files
 * that may be large (lockfiles: yaml_stream.c): no yaml_document_t in between, and each item
 * of the sequence under the root mapping's key `key` handed to `item` as soon as it ends
 * instead of being kept, so the file is never held whole; in *out, the document with that
 * sequence left empty. An item that is a mapping comes as its members `m` (no JSON object
 * made of it; `json` NULL), any other as its JSON (`json`, the reference `item` takes; `m`
 * NULL); the members are freed after the call. `item` returns 0, or non-zero to stop.
 * It reads the usual shape of such files only: returns 0, or 1 (*out NULL, nothing to free)
 * where the file needs menv_yaml_to_json, which then gives the same value or the error it
 * always gave — anchors and aliases, a duplicate or non-scalar key, a merge key (`<<`
 * anywhere, an item's mappings too: merged there), nesting past MENV_PARSE_MAX_DEPTH, an
 * empty file, a YAML error, or `item` refusing an item (non-zero).
 * `item` gets each item of the sequence with its index and the 1-based line where it starts.
 * Errors: MENV_EINTR "SRC: reading interrupted" (the cancel flag, polled at every event);
 * MENV_EPARSE "SRC:LINE:COL: ..." where a second document (or garbage) follows the first
 * (menv_yaml_single). */
int menv_yaml_stream_json(const char *bytes, size_t len, const char *src, const char *key,
                          int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m,
                                      size_t index, size_t line),
                          void *ud, json_t **out, struct menv_error *err);
/* The same of what the open file `fd` reads from where it is to its end, a piece at a time
 * (the file is never held whole); a read error ends the input as a YAML error does (1). */
int menv_yaml_stream_json_fd(int fd, const char *src, const char *key,
                             int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m,
                                         size_t index, size_t line),
                             void *ud, json_t **out, struct menv_error *err);

/* The 1-based line of a node of the YAML (or JSON: its flow syntax) document in bytes, found
 * by reading it again with menv_yaml_load, which keeps each node's mark: the path is n steps
 * from the root, each a mapping's key keys[i] (the member's key's line) or, where keys[i] is
 * NULL, a sequence's item index[i] (0-based; the item's line). 0 where the path is not in the
 * document or it cannot be read. For error messages (the entry a reader refused): it reads
 * the whole file once more. Where `col` is not NULL, *col gets the node's 1-based column (0
 * with a line of 0). */
size_t menv_yaml_line_at(const char *bytes, size_t len, const char *const *keys,
                         const size_t *index, size_t n, size_t *col);
/* The 1-based line of each item of the root mapping's sequence `key` (conda-lock's
 * `package`, pixi's `packages`) in out[0..n) (0 past the items or where the file cannot be
 * read): one more reading of the file, for the entries' lines (menv_lock_package.line). */
void menv_yaml_item_lines(const char *bytes, size_t len, const char *key, size_t *out, size_t n);

/* How each scalar of a document was written in its file (plain and its text, single- or
 * double-quoted), as menv_yaml_to_json_styled read it, so that menv_yaml_write writes each
 * value it still holds the same way: a float stays a float (30.50), a quoted "1.0" a string.
 * Free with menv_yaml_styles_free (NULL is a no-op). */
struct menv_yaml_styles;
/* menv_yaml_to_json (merge keys refused: .condarc's reader, menv_yaml_load_refusing), and in
 * *styles (the caller's, NULL on error) the style of each scalar. */
int menv_yaml_to_json_styled(const char *bytes, size_t len, const char *src, json_t **out,
                             struct menv_yaml_styles **styles, struct menv_error *err);
void menv_yaml_styles_free(struct menv_yaml_styles *styles);

/* `v` as block YAML in conda's layout (mappings in their order, a sequence under a key
 * indented by two: "key:
  - a"), its lines starting at column `indent`, appended to `out`.
 * Every scalar is written by libyaml's emitter (see scalar() in yaml.c): plain where a reader
 * reads it back as the same value, else double-quoted and escaped as libyaml escapes; a value
 * `styles` (may be NULL) has is written as it was read. Errors: MENV_EPARSE "'S' is not valid
 * UTF-8" (libyaml's emitter refuses it; strings made with json_string_nocheck reach it), and
 * `out` then holds a part of the document. */
int menv_yaml_write(struct menv_buf *out, json_t *v, int indent,
                    const struct menv_yaml_styles *styles, struct menv_error *err);
/* One string scalar as menv_yaml_write writes a value (plain, or double-quoted and escaped),
 * appended to `out`. Errors: as menv_yaml_write's. */
int menv_yaml_write_str(struct menv_buf *out, const char *s, struct menv_error *err);
/* A mapping key and its colon ("KEY:"), the key at column `indent` (already written): a key
 * libyaml will not write as a simple key (over 128 bytes, a line break) as "? KEY", a newline,
 * `indent` spaces, ":". Errors: as menv_yaml_write's. */
int menv_yaml_write_key(struct menv_buf *out, const char *k, int indent, struct menv_error *err);
/* Would `val` be accepted for the scalar setting `key`, or as an entry of the path list
 * pkgs_dirs or envs_dirs (config.c's reader: no "~USER" of no user, no relative or empty
 * path)? 0, 1 when `key` is neither, MENV_EUSAGE naming the key and what it must be. */
int menv_config_check_value(const char *key, const char *val, struct menv_error *err);

/* Whether a .condarc value node is YAML's null: a plain "~", "null", "Null", "NULL" or no
 * value at all (a quoted '~' is the text). */
bool menv_config_node_null(const yaml_node_t *v);

/* Checks a .condarc value node against the type of setting `key` (menv_config_param's
 * "str", "bool", "int", "float" list; YAML 1.2 core schema typing of plain scalars; null is
 * always allowed). 0 for unknown keys and non-scalars. Errors: MENV_EPARSE
 * "PATH:LINE:COL: KEY must be a str, not an int '42' (quote it to mean the text)". */
int menv_config_check_type(const char *path, const char *key, const yaml_node_t *v,
                           struct menv_error *err);

/* Checks an item of the list of strings `key` (channels, pkgs_dirs, ...): a quoted scalar or a
 * plain one that YAML 1.2's core schema types as a string; a number, bool, null, list or
 * mapping is refused, as conda's SequenceParameter(str) does. Errors: MENV_EPARSE
 * "PATH:LINE:COL: KEY must be a list of strings, not an int '42' in it (quote it to mean the
 * text)". */
int menv_config_check_item(const char *path, const char *key, const yaml_node_t *v,
                           struct menv_error *err);

/* Checks `val` as a value of the channel setting `key` (entry `sub` of a map, or NULL) given on
 * the command line (config --set/--add): no control character, no space in a URL
 * (channel_alias, custom_channels.*, proxy_servers.*, migrated_*, or a value with "://").
 * The same check runs on a file's values (proxy_servers' aside) through
 * menv_config_check_type/_item/_map_value (errors there name PATH:LINE:COL). Errors: MENV_EUSAGE "invalid value for KEY: 'VAL' holds a
 * space (...)"; 0 for any other key. */
int menv_config_check_url(const char *key, const char *sub, const char *val,
                          struct menv_error *err);

/* Checks the value of entry `sub` of the map of strings `key` (custom_channels,
 * migrated_custom_channels, proxy_servers), as conda's MapParameter(str) does: a string as
 * menv_config_check_item judges one; a null only in proxy_servers (conda's (str, NoneType):
 * no proxy), elsewhere it is no location. Errors: MENV_EPARSE "PATH:LINE:COL: KEY.SUB must be a
 * str, not an int '42' (quote it to mean the text)" (or "not a list"). */
int menv_config_check_map_value(const char *path, const char *key, const char *sub,
                                const yaml_node_t *v, struct menv_error *err);

#endif
