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

#endif
