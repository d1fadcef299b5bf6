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

/* A YAML (or JSON) document as a new JSON value: plain scalars typed as YAML 1.2's core
 * schema (null, true/false, integers), others strings; mappings keep their order. Errors:
 * MENV_EPARSE "SRC:LINE:COL: ..." (duplicate keys too), MENV_EINTR. */
int menv_yaml_to_json(const char *bytes, size_t len, const char *src, json_t **out,
                      struct menv_error *err);
/* `v` as block YAML (mappings in their order, strings quoted where a reader would take them
 * for something else), appended to `out`. */
void menv_yaml_write(struct menv_buf *out, json_t *v);
/* One string scalar as menv_yaml_write writes it (plain, or double-quoted and escaped where a
 * reader would take it for something else), appended to `out`. */
void menv_yaml_write_str(struct menv_buf *out, const char *s);
/* Would `val` be accepted for the scalar setting `key` (config.c's reader)? 0, 1 when `key`
 * is not a scalar setting, MENV_EUSAGE naming the key and what it must be. */
int menv_config_check_value(const char *key, const char *val, struct menv_error *err);

#endif
