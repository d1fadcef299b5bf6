/*
 * yaml.c - YAML in and out for specs/. In: a document read with libyaml (menv_yaml_load's
 * limits) turned into jansson values first, plain scalars typed as YAML 1.2's core schema
 * (integers, booleans, null; everything else stays a string, so a version "1.10" is never
 * read as the float 1.1), and on request the style each scalar had in the file. Out: JSON
 * values as block YAML in conda's layout, drawn here, each scalar written by libyaml's
 * emitter (its analysis decides plain or quoted and escapes; it refuses what is not UTF-8).
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	struct menv_yaml_styles *styles; /* NULL, or where each scalar's style is recorded */
};

struct menv_yaml_styles;
static void style_record(struct menv_yaml_styles *st, json_t *parent, const char *key, json_t *v,
                         yaml_node_t *n);

static bool plain_int(const char *s, json_int_t *out)
{
	const char *p = s;
	char *end;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9') /* the usual text: no strspn */
		return false;
	if ((p[0] == '0' && p[1]) || strspn(p, "0123456789") != strlen(p))
		return false;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = (json_int_t)v;
	return true;
}

/* What a scalar is typed as (menv_yaml_scalar_json); *iv the integer's value. */
static json_type scalar_type(const char *v, yaml_scalar_style_t style, json_int_t *iv)
{
	if (style != YAML_PLAIN_SCALAR_STYLE)
		return JSON_STRING;
	if (!*v)
		return JSON_NULL;
	if (!strchr("~nNtTfF", *v)) /* no null or boolean word: the usual text, no strcmp */
		return plain_int(v, iv) ? JSON_INTEGER : JSON_STRING;
	if (!strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL"))
		return JSON_NULL;
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
		return JSON_TRUE;
	if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
		return JSON_FALSE;
	if (plain_int(v, iv))
		return JSON_INTEGER;
	return JSON_STRING;
}

json_type menv_yaml_scalar_type(const char *v, yaml_scalar_style_t style)
{
	json_int_t iv;
	return scalar_type(v, style, &iv);
}

json_t *menv_yaml_scalar_json(const char *v, yaml_scalar_style_t style)
{
	json_int_t iv;
	switch (scalar_type(v, style, &iv)) {
	case JSON_NULL: return json_null();
	case JSON_TRUE: return json_true();
	case JSON_FALSE: return json_false();
	case JSON_INTEGER: return json_integer(iv);
	default: return json_string(v);
	}
}

/* The JSON value of node `n`, to be held by `parent` under `pkey` (NULL: an item). */
static json_t *yaml_json(struct yctx *c, yaml_node_t *n, int depth, json_t *parent,
                         const char *pkey)
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
	case YAML_SCALAR_NODE: {
		json_t *v = menv_yaml_scalar_json((const char *)n->data.scalar.value,
		                                  n->data.scalar.style);
		if (c->styles)
			style_record(c->styles, parent, pkey, v, n);
		return v;
	}
	case YAML_SEQUENCE_NODE: {
		json_t *a = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			json_t *v = yaml_json(c, yaml_document_get_node(c->doc, *it), depth + 1, a,
			                      NULL);
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
			json_t *v = yaml_json(c, yaml_document_get_node(c->doc, p->value),
			                      depth + 1, o, key);
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
                     struct menv_yaml_styles *styles, struct menv_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct yctx c = {&doc, src, err, 0, styles};
	int rc = 0;

	*out = NULL;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
	/* the styled reader is .condarc's (condarc.c): merge keys refused there */
	rc = styles ? menv_yaml_load_refusing(&parser, &doc, src, false, MENV_CONDARC_MERGE, err)
	            : menv_yaml_load(&parser, &doc, src, err);
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
	*out = yaml_json(&c, root, 0, NULL, NULL);
	if (!*out)
		rc = err ? err->code : MENV_EPARSE;
	else if ((rc = menv_yaml_single(&parser, src, "file", err))) {
		json_decref(*out);
		*out = NULL;
	}
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Out                                                                                      */

/* Would a YAML reader resolve `s`, written plain, to something other than this string: null,
 * a bool, a number or a timestamp, as YAML 1.1 (conda's ruamel.yaml, PyYAML) or 1.2's core
 * schema types it? The one decision libyaml's emitter leaves to its caller: the scalar event's
 * plain_implicit, which PyYAML's representer takes from its resolver the same way. Whether
 * the text can be plain at all (indicators, spaces, line breaks, what is printable) is
 * libyaml's analysis, not this. */
static bool plain_is_typed(const char *s)
{
	static const char *const words[] = {"true", "false", "yes",   "no",   "on",
	                                    "off",  "y",     "n",     "null", "~",
	                                    ".inf", "-.inf", "+.inf", ".nan", NULL};
	size_t n = strlen(s);

	if (!n)
		return true; /* null */
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

/* How a scalar asks to be written. */
enum want {
	WANT_STRING, /* a string: plain where a reader reads it back as this string, else quoted */
	WANT_PLAIN,  /* text that is plain on purpose (a number, a bool, a value read plain) */
	WANT_SINGLE, /* a value read single-quoted */
	WANT_DOUBLE, /* a value read double-quoted (or as a block scalar) */
};

/*
 * A libyaml emitter that writes one block mapping, "x: x" then one entry per scalar asked
 * for, each captured as it is written: a key's bytes are "\nKEY" (or "\n? KEY" where libyaml
 * will not make it a simple key), a value's ": VALUE". One emitter serves a whole document
 * (a new one per scalar doubles the time a large lockfile takes).
 */
struct semit {
	yaml_emitter_t em;
	struct menv_buf out; /* what libyaml wrote since the last capture */
	bool live;
};

static int semit_out(void *data, unsigned char *buf, size_t n)
{
	menv_buf_add(data, buf, n);
	return 1;
}

static bool semit_plain(struct semit *e, const char *s)
{
	yaml_event_t ev;
	return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
	                                    YAML_PLAIN_SCALAR_STYLE) &&
	       yaml_emitter_emit(&e->em, &ev);
}

static void semit_release(struct semit *e)
{
	if (e->live)
		yaml_emitter_delete(&e->em);
	menv_buf_release(&e->out);
	e->live = false;
}

static void semit_start(struct semit *e)
{
	yaml_event_t ev;
	if (!yaml_emitter_initialize(&e->em))
		abort(); /* out of memory, as in menv_xmalloc */
	e->live = true;
	yaml_emitter_set_output(&e->em, semit_out, &e->out);
	yaml_emitter_set_unicode(&e->em, 1); /* UTF-8 as it is, not \u escapes */
	yaml_emitter_set_width(&e->em, -1);  /* no folding of long lines */
	/* two entries first: libyaml holds a mapping's start until three events follow it, and
	 * then writes each later scalar at once */
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
	    !yaml_emitter_emit(&e->em, &ev) ||
	    !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
	    !yaml_emitter_emit(&e->em, &ev) ||
	    !yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
	    !yaml_emitter_emit(&e->em, &ev) || !semit_plain(e, "x") || !semit_plain(e, "x") ||
	    !semit_plain(e, "x") || !semit_plain(e, "x") || !yaml_emitter_flush(&e->em))
		abort(); /* constant events: only memory can fail */
}

/* Emits `s` as the next key (with the value "x") or value (of the key "x") of e's mapping;
 * *piece and *n are what libyaml wrote for it (in e->out, until the next call). False with
 * *problem set where libyaml refuses it (it takes only valid UTF-8). */
static bool semit_scalar(struct semit *e, const char *s, bool as_key, yaml_scalar_style_t style,
                         bool plain_implicit, const char **piece, size_t *n, const char **problem)
{
	yaml_event_t ev;
	size_t mark;
	bool ok;

	if (!e->live)
		semit_start(e);
	menv_buf_reset(&e->out);
	if (!as_key && !semit_plain(e, "x"))
		goto broken;
	if (!yaml_emitter_flush(&e->em))
		goto broken;
	mark = e->out.len;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
	                                  plain_implicit, 1, style)) {
		*problem = "is not valid UTF-8"; /* the only refusal of a scalar event */
		if (as_key) {
			/* keep the mapping whole: a key stands for the refused one */
			if (!semit_plain(e, "x") || !semit_plain(e, "x"))
				goto broken;
		} else if (!semit_plain(e, "x")) {
			goto broken;
		}
		return false;
	}
	ok = yaml_emitter_emit(&e->em, &ev) && yaml_emitter_flush(&e->em);
	if (!ok)
		goto broken;
	*piece = e->out.buf + mark;
	*n = e->out.len - mark;
	if (as_key && !semit_plain(e, "x"))
		goto broken;
	return true;
broken:
	*problem = e->em.problem ? e->em.problem : "cannot be written";
	semit_release(e);
	return false;
}

/*
 * One scalar, appended to `o` as libyaml's emitter writes it where it stands in menv's layout:
 * a block mapping's value or sequence item, or (`key`) a simple key, which libyaml writes as
 * a complex key when it cannot be a simple one (over 128 bytes, a line break): then "? KEY" is
 * appended, *complex set, and the caller puts ": VALUE" on the next line. Only the scalar is libyaml's, not the layout: its emitter writes
 * a block sequence inside a mapping indentless ("key:\n- a"), while conda's own files
 * (ruamel.yaml, indent(mapping=2, offset=2, sequence=4)) and menv's say "key:\n  - a", so
 * y_node draws the structure and this the scalars, with libyaml's scalar analysis run in the
 * scalar's own context (block, key or value): which indicators, spaces and characters allow
 * plain, its escapes, its refusal of bytes that are not UTF-8. What libyaml leaves to its
 * caller, whether a plain text would be read back as another type, is plain_is_typed's.
 * Quoted scalars are double-quoted (menv's style since its first export, and conda-lock's)
 * unless `want` keeps a single-quoted value, and never span lines: where libyaml would write
 * a quoted scalar over lines, it is asked for double quotes, which escape the line breaks.
 * Errors: MENV_EPARSE "'S' is not valid UTF-8" (libyaml's message for other refusals).
 */
static int scalar(struct semit *e, struct menv_buf *o, const char *s, enum want want, bool key,
                  bool *complex, struct menv_error *err)
{
	const char *problem = NULL, *b = NULL;
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
	size_t n = 0;

	if (want == WANT_SINGLE)
		style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
	else if (want == WANT_DOUBLE || (want == WANT_STRING && plain_is_typed(s)))
		style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	for (int pass = 0; pass < 2; pass++) {
		if (!semit_scalar(e, s, key, style, true, &b, &n, &problem))
			return menv_error_set(err, MENV_EPARSE, "'%s' %s", s, problem);
		/* a key: "\nKEY" or "\n? KEY" (kept with its "? "); a value: ": VALUE" */
		size_t skip = key ? 1 : 2;
		*complex = key && n >= 3 && !strncmp(b + 1, "? ", 2);
		b += skip < n ? skip : n;
		n -= skip < n ? skip : n;
		/* libyaml's single quotes where it cannot write plain, and its line breaks inside a
		 * quoted scalar, become double quotes */
		size_t q = *complex ? 2 : 0; /* where the scalar itself starts */
		if (pass == 0 && style != YAML_DOUBLE_QUOTED_SCALAR_STYLE &&
		    ((n > q && b[q] == '\'' && want != WANT_SINGLE) || memchr(b, '\n', n))) {
			style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
			continue;
		}
		break;
	}
	menv_buf_add(o, b, n);
	return 0;
}

int menv_yaml_write_str(struct menv_buf *o, const char *s, struct menv_error *err)
{
	struct semit e = {.out = MENV_BUF_INIT};
	bool complex;
	int rc = scalar(&e, o, s, WANT_STRING, false, &complex, err);
	semit_release(&e);
	return rc;
}

/* ---- the styles a file's scalars were read with */

struct style_entry {
	json_t *a, *b;  /* the value, NULL; or for true/false/null (shared by jansson) the
	                  * mapping or sequence holding it, the value */
	char *key;      /* for true/false/null in a mapping: the key */
	enum want want; /* WANT_PLAIN, WANT_SINGLE or WANT_DOUBLE */
	char *text;     /* for WANT_PLAIN: the text as read */
};

struct menv_yaml_styles {
	struct style_entry *v;
	size_t n, cap;
};

static bool singleton(json_t *v)
{
	return json_is_true(v) || json_is_false(v) || json_is_null(v);
}

static int style_cmp(const void *x, const void *y)
{
	const struct style_entry *p = x, *q = y;
	if (p->a != q->a)
		return (uintptr_t)p->a < (uintptr_t)q->a ? -1 : 1;
	if (p->b != q->b)
		return (uintptr_t)p->b < (uintptr_t)q->b ? -1 : 1;
	if (!p->key || !q->key)
		return !!p->key - !!q->key;
	return strcmp(p->key, q->key);
}

static void style_record(struct menv_yaml_styles *st, json_t *parent, const char *key, json_t *v,
                         yaml_node_t *n)
{
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 16;
		st->v = menv_xrealloc(st->v, st->cap * sizeof(*st->v));
	}
	struct style_entry *e = &st->v[st->n++];
	memset(e, 0, sizeof(*e));
	if (singleton(v)) {
		e->a = json_incref(parent); /* a reference: its address is never reused */
		e->b = v;
		e->key = key ? menv_xstrdup(key) : NULL;
	} else {
		e->a = json_incref(v);
	}
	switch (n->data.scalar.style) {
	case YAML_PLAIN_SCALAR_STYLE:
		e->want = WANT_PLAIN;
		e->text = menv_xstrdup((const char *)n->data.scalar.value);
		break;
	case YAML_SINGLE_QUOTED_SCALAR_STYLE: e->want = WANT_SINGLE; break;
	default: e->want = WANT_DOUBLE; break;
	}
}

static const struct style_entry *style_find(const struct menv_yaml_styles *st, json_t *parent,
                                            const char *key, json_t *v)
{
	if (!st || !st->n)
		return NULL;
	struct style_entry k = {.a = v};
	if (singleton(v)) {
		k.a = parent;
		k.b = v;
		k.key = (char *)key;
	}
	return bsearch(&k, st->v, st->n, sizeof(*st->v), style_cmp);
}

void menv_yaml_styles_free(struct menv_yaml_styles *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		json_decref(st->v[i].a);
		free(st->v[i].key);
		free(st->v[i].text);
	}
	free(st->v);
	free(st);
}

/* ---- the layout: block mappings and sequences, conda's indentation */

struct ywriter {
	struct menv_buf *o;
	const struct menv_yaml_styles *styles;
	struct menv_error *err;
	struct semit e;
};

static void y_indent(struct menv_buf *o, int n)
{
	for (int i = 0; i < n; i++)
		menv_buf_addch(o, ' ');
}

/* A scalar value (a string, number, bool, null, or an empty {} / []) held by `parent`
 * under `key` (NULL: a sequence item). */
static int y_scalar(struct ywriter *w, json_t *parent, const char *key, json_t *v)
{
	const struct style_entry *e = style_find(w->styles, parent, key, v);
	char num[64];
	bool complex;

	if (json_is_object(v) || json_is_array(v)) {
		menv_buf_adds(w->o, json_is_object(v) ? "{}" : "[]");
		return 0;
	}
	if (e && e->want == WANT_PLAIN)
		return scalar(&w->e, w->o, e->text, WANT_PLAIN, false, &complex, w->err);
	if (json_is_string(v))
		return scalar(&w->e, w->o, json_string_value(v), e ? e->want : WANT_STRING, false,
		              &complex, w->err);
	if (json_is_integer(v))
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(num, sizeof(num), "%.17g", json_real_value(v));
	else
		snprintf(num, sizeof(num), "%s",
		         json_is_true(v)    ? "true"
		         : json_is_false(v) ? "false"
		                            : "null");
	return scalar(&w->e, w->o, num, WANT_PLAIN, false, &complex, w->err);
}

static bool y_block(json_t *v)
{
	return (json_is_object(v) && json_object_size(v)) ||
	       (json_is_array(v) && json_array_size(v));
}

static int y_node(struct ywriter *w, json_t *v, int indent);

/* The value after "key:" or "-" at `indent` (the column of the key or dash). */
static int y_after(struct ywriter *w, json_t *parent, const char *key, json_t *v, int indent)
{
	int rc;
	if (!y_block(v)) {
		menv_buf_addch(w->o, ' ');
		size_t at = w->o->len;
		rc = y_scalar(w, parent, key, v);
		if (w->o->len == at) /* an empty plain null ("key:") keeps no trailing space */
			w->o->buf[--w->o->len] = '\0';
		menv_buf_addch(w->o, '\n');
		return rc;
	}
	menv_buf_addch(w->o, '\n');
	return y_node(w, v, indent + 2);
}

static int y_key(struct semit *e, struct menv_buf *o, const char *k, int indent,
                 struct menv_error *err)
{
	bool complex;
	int rc = scalar(e, o, k, WANT_STRING, true, &complex, err);
	if (rc)
		return rc;
	if (complex) {
		menv_buf_addch(o, '\n');
		y_indent(o, indent);
	}
	menv_buf_addch(o, ':');
	return 0;
}

int menv_yaml_write_key(struct menv_buf *o, const char *k, int indent, struct menv_error *err)
{
	struct semit e = {.out = MENV_BUF_INIT};
	int rc = y_key(&e, o, k, indent, err);
	semit_release(&e);
	return rc;
}

/* "KEY:" and its value, the key at column `indent` (already there). */
static int y_pair(struct ywriter *w, json_t *parent, const char *k, json_t *v, int indent)
{
	int rc = y_key(&w->e, w->o, k, indent, w->err);
	return rc ? rc : y_after(w, parent, k, v, indent);
}

static int y_node(struct ywriter *w, json_t *v, int indent)
{
	int rc = 0;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
		{
			y_indent(w->o, indent);
			if ((rc = y_pair(w, v, k, x, indent)))
				return rc;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			y_indent(w->o, indent);
			menv_buf_adds(w->o, "-");
			if (json_is_object(x) && json_object_size(x)) {
				/* first key on the dash's line, the others under it */
				const char *k;
				json_t *y;
				bool first = true;
				json_object_foreach(x, k, y)
				{
					if (first)
						menv_buf_addch(w->o, ' ');
					else
						y_indent(w->o, indent + 2);
					first = false;
					if ((rc = y_pair(w, x, k, y, indent + 2)))
						return rc;
				}
			} else if ((rc = y_after(w, v, NULL, x, indent))) {
				return rc;
			}
		}
	} else {
		y_indent(w->o, indent);
		rc = y_scalar(w, NULL, NULL, v);
		menv_buf_addch(w->o, '\n');
	}
	return rc;
}

int menv_yaml_write(struct menv_buf *out, json_t *v, int indent,
                    const struct menv_yaml_styles *styles, struct menv_error *err)
{
	struct ywriter w = {out, styles, err, {.out = MENV_BUF_INIT}};
	int rc = y_node(&w, v, indent);
	semit_release(&w.e);
	return rc;
}

int menv_yaml_to_json(const char *bytes, size_t len, const char *src, json_t **out,
                      struct menv_error *err)
{
	return yaml_load(bytes, len, src, out, NULL, err);
}

int menv_yaml_to_json_styled(const char *bytes, size_t len, const char *src, json_t **out,
                             struct menv_yaml_styles **styles, struct menv_error *err)
{
	struct menv_yaml_styles *st = menv_xcalloc(1, sizeof(*st));
	int rc = yaml_load(bytes, len, src, out, st, err);
	if (rc) {
		menv_yaml_styles_free(st);
		st = NULL;
	} else if (st->n) {
		qsort(st->v, st->n, sizeof(*st->v), style_cmp);
	}
	*styles = st;
	return rc;
}
