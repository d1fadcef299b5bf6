/*
 * yaml.c - YAML in and out for specs/. In: a document read with libyaml (menv_yaml_load's
 * limits) turned into jansson values first, plain scalars typed as YAML 1.2's core schema
 * (integers, booleans, null; everything else stays a string, so a version "1.10" is never
 * read as the float 1.1). Out: JSON values as block YAML, strings quoted where a reader
 * would take them for something else.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "internal.h"
#include "specs.h"

struct yctx {
	yaml_document_t *doc;
	const char *src;
	struct menv_error *err;
	/* JSON values still to make: aliases repeat nodes, so a small document can stand for an
	 * exponential tree ("billion laughs"); past the budget it is refused */
	size_t budget;
};

static bool plain_int(const char *s, json_int_t *out)
{
	const char *p = s;
	char *end;

	if (*p == '-')
		p++;
	if (!*p || (p[0] == '0' && p[1]) || strspn(p, "0123456789") != strlen(p))
		return false;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = (json_int_t)v;
	return true;
}

static json_t *yaml_scalar_json(yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;
	json_int_t iv;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_string(v);
	if (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	    !strcmp(v, "NULL"))
		return json_null();
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
		return json_true();
	if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
		return json_false();
	if (plain_int(v, &iv))
		return json_integer(iv);
	return json_string(v);
}

static json_t *yaml_json(struct yctx *c, yaml_node_t *n, int depth)
{
	if (!n)
		return json_null();
	if (depth > MENV_PARSE_MAX_DEPTH) {
		menv_error_set(c->err, MENV_EPARSE, "%s:%zu:%zu: nested deeper than %d levels",
		               c->src, n->start_mark.line + 1, n->start_mark.column + 1,
		               MENV_PARSE_MAX_DEPTH);
		return NULL;
	}
	if (!c->budget--) {
		menv_error_set(c->err, MENV_EPARSE,
		               "%s:%zu:%zu: aliases expand to more values than the file holds",
		               c->src, n->start_mark.line + 1, n->start_mark.column + 1);
		return NULL;
	}
	if (!(c->budget & 4095) && menv_cancelled()) {
		menv_error_set(c->err, MENV_EINTR, "%s: reading interrupted", c->src);
		return NULL;
	}
	switch (n->type) {
	case YAML_SCALAR_NODE: return yaml_scalar_json(n);
	case YAML_SEQUENCE_NODE: {
		json_t *a = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			json_t *v = yaml_json(c, yaml_document_get_node(c->doc, *it), depth + 1);
			if (!v) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, v);
		}
		return a;
	}
	case YAML_MAPPING_NODE: {
		json_t *o = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
			if (!k || k->type != YAML_SCALAR_NODE) {
				menv_error_set(c->err, MENV_EPARSE,
				               "%s:%zu:%zu: a mapping key must "
				               "be a string",
				               c->src, k ? k->start_mark.line + 1 : 0,
				               k ? k->start_mark.column + 1 : 0);
				json_decref(o);
				return NULL;
			}
			const char *key = (const char *)k->data.scalar.value;
			if (json_object_get(o, key)) {
				/* which one wins is a guess: rattler refuses it, so does menv */
				menv_error_set(c->err, MENV_EPARSE,
				               "%s:%zu:%zu: duplicate key '%s'", c->src,
				               k->start_mark.line + 1, k->start_mark.column + 1,
				               key);
				json_decref(o);
				return NULL;
			}
			json_t *v =
			        yaml_json(c, yaml_document_get_node(c->doc, p->value), depth + 1);
			if (!v) {
				json_decref(o);
				return NULL;
			}
			json_object_set_new(o, key, v);
		}
		return o;
	}
	default: return json_null();
	}
}

/* Parses YAML (or JSON, a subset) into a new JSON value. Errors: MENV_EPARSE with position. */
static int yaml_load(const char *bytes, size_t len, const char *src, json_t **out,
                     struct menv_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct yctx c = {&doc, src, err, 0};
	int rc = 0;

	*out = NULL;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
	rc = menv_yaml_load(&parser, &doc, src, err);
	if (rc) {
		yaml_parser_delete(&parser);
		return rc;
	}
	/* each node once, plus room for the few aliases a hand-written file may use */
	c.budget = 2 * (size_t)(doc.nodes.top - doc.nodes.start) + 100000;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		rc = menv_error_set(err, MENV_EPARSE, "%s: the file is empty", src);
		goto out;
	}
	*out = yaml_json(&c, root, 0);
	if (!*out)
		rc = err ? err->code : MENV_EPARSE;
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

/* Would a YAML reader take `s`, written plain, for something other than this string? */
static bool needs_quotes(const char *s)
{
	static const char *const words[] = {"true", "false", "yes",   "no",   "on",
	                                    "off",  "y",     "n",     "null", "~",
	                                    ".inf", "-.inf", "+.inf", ".nan", NULL};
	size_t n = strlen(s);

	if (!n || isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]))
		return true;
	if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0]))
		return true;
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return true;
		if ((*p == ':' && (!p[1] || p[1] == ' ')) || (*p == '#' && p > s && p[-1] == ' '))
			return true;
	}
	if (strspn(s, "0123456789:._-+") == n && strchr(s, ':'))
		return true; /* YAML 1.1 sexagesimal numbers (1:20) */
	for (size_t i = 0; words[i]; i++)
		if (!strcasecmp(s, words[i]))
			return true;
	/* numbers of any YAML flavour: ints, floats, 0x/0o, 1_000, exponents */
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (!strncmp(p, "0x", 2) || !strncmp(p, "0o", 2))
		return true;
	size_t digits = 0, dots = 0, other = 0;
	for (const char *q = p; *q; q++) {
		if (isdigit((unsigned char)*q) || *q == '_')
			digits++;
		else if (*q == '.')
			dots++;
		else if (*q != 'e' && *q != 'E' && *q != '+' && *q != '-')
			other++;
	}
	if (!other && digits && dots <= 1)
		return true;
	/* YAML 1.1 timestamps (2024-01-31) */
	if (n >= 8 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[3]) && s[4] == '-' &&
	    strspn(s, "0123456789-:.TtZz +") == n)
		return true;
	return false;
}

void menv_yaml_write_str(struct menv_buf *o, const char *s)
{
	if (!needs_quotes(s)) {
		menv_buf_adds(o, s);
		return;
	}
	menv_buf_addch(o, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			menv_buf_addf(o, "\\%c", *p);
		else if (*p == '\n')
			menv_buf_adds(o, "\\n");
		else if (*p == '\t')
			menv_buf_adds(o, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			menv_buf_addf(o, "\\x%02x", *p);
		else
			menv_buf_addch(o, (char)*p);
	}
	menv_buf_addch(o, '"');
}

static void y_scalar(struct menv_buf *o, json_t *v)
{
	if (json_is_string(v))
		menv_yaml_write_str(o, json_string_value(v));
	else if (json_is_integer(v))
		menv_buf_addf(o, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		menv_buf_addf(o, "%.17g", json_real_value(v));
	else if (json_is_true(v))
		menv_buf_adds(o, "true");
	else if (json_is_false(v))
		menv_buf_adds(o, "false");
	else if (json_is_object(v))
		menv_buf_adds(o, "{}");
	else if (json_is_array(v))
		menv_buf_adds(o, "[]");
	else
		menv_buf_adds(o, "null");
}

static bool y_block(json_t *v)
{
	return (json_is_object(v) && json_object_size(v)) ||
	       (json_is_array(v) && json_array_size(v));
}

static void y_node(struct menv_buf *o, json_t *v, int indent);

static void y_indent(struct menv_buf *o, int n)
{
	for (int i = 0; i < n; i++)
		menv_buf_addch(o, ' ');
}

/* The value after "key:" or "- " at `indent` (the column of the key or dash). */
static void y_after(struct menv_buf *o, json_t *v, int indent)
{
	if (!y_block(v)) {
		menv_buf_addch(o, ' ');
		y_scalar(o, v);
		menv_buf_addch(o, '\n');
		return;
	}
	menv_buf_addch(o, '\n');
	y_node(o, v, indent + 2);
}

static void y_node(struct menv_buf *o, json_t *v, int indent)
{
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
		{
			y_indent(o, indent);
			menv_yaml_write_str(o, k);
			menv_buf_addch(o, ':');
			y_after(o, x, indent);
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			y_indent(o, indent);
			menv_buf_adds(o, "-");
			if (json_is_object(x) && json_object_size(x)) {
				/* first key on the dash's line, the others under it */
				const char *k;
				json_t *y;
				bool first = true;
				json_object_foreach(x, k, y)
				{
					if (first)
						menv_buf_addch(o, ' ');
					else
						y_indent(o, indent + 2);
					first = false;
					menv_yaml_write_str(o, k);
					menv_buf_addch(o, ':');
					y_after(o, y, indent + 2);
				}
			} else {
				y_after(o, x, indent);
			}
		}
	} else {
		y_indent(o, indent);
		y_scalar(o, v);
		menv_buf_addch(o, '\n');
	}
}

void menv_yaml_write(struct menv_buf *out, json_t *v)
{
	y_node(out, v, 0);
}

int menv_yaml_to_json(const char *bytes, size_t len, const char *src, json_t **out,
                      struct menv_error *err)
{
	return yaml_load(bytes, len, src, out, err);
}
