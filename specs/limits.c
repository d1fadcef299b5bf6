/*
 * limits.c - what keeps hostile or clumsy input from hurting menv: the process-wide cancel
 * flag that long parses poll, UTF-8 checks (jansson takes only valid UTF-8; a string it refuses
 * comes back NULL), a string hash set (so that de-duplicating input is linear, not quadratic),
 * and the JSON and YAML readers every parser in specs/ goes through: nesting bounded by
 * MENV_PARSE_MAX_DEPTH, Ctrl-C honoured, errors naming FILE:LINE:COL.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "internal.h"
#include "specs.h"

/* ---------------------------------------------------------------------------------------- */
/* Cancellation                                                                             */

static volatile int *cancel_flag;
static _Thread_local unsigned cancel_blocked; /* menv_cancel_block depth of this thread */

void menv_cancel_flag_set(volatile int *flag)
{
	cancel_flag = flag;
}

void menv_cancel_block(bool block)
{
	if (block)
		cancel_blocked++;
	else if (cancel_blocked)
		cancel_blocked--;
}

bool menv_cancelled(void)
{
	return !cancel_blocked && cancel_flag && *cancel_flag;
}

/* ---------------------------------------------------------------------------------------- */
/* UTF-8                                                                                    */

size_t menv_utf8_seq(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	unsigned cp;

	if (!len)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and code points past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool menv_utf8_valid(const char *s, size_t len, size_t *bad)
{
	size_t i = 0;
	while (i < len) {
		uint64_t w;
		if (len - i >= 8 && (memcpy(&w, s + i, 8), !(w & 0x8080808080808080ull))) {
			i += 8; /* eight ASCII bytes at once */
			continue;
		}
		if ((unsigned char)s[i] < 0x80) {
			i++; /* ASCII: no call */
			continue;
		}
		size_t n = menv_utf8_seq(s + i, len - i);
		if (!n) {
			if (bad)
				*bad = i;
			return false;
		}
		i += n;
	}
	return true;
}

/* The columns code point `cp` takes on a terminal: 0 for combining marks and zero-width
 * characters, 2 for East Asian Wide and Fullwidth ones (Unicode's EastAsianWidth W/F, the
 * ranges of Markus Kuhn's wcwidth), 1 otherwise. */
static size_t cp_width(unsigned long cp)
{
	static const unsigned long zero[][2] = {
	        {0x0300, 0x036f}, {0x0483, 0x0489},  {0x0591, 0x05bd}, {0x0610, 0x061a},
	        {0x064b, 0x065f}, {0x1ab0, 0x1aff},  {0x1dc0, 0x1dff}, {0x200b, 0x200f},
	        {0x2060, 0x2064}, {0x20d0, 0x20ff},  {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f},
	        {0xfeff, 0xfeff}, {0xe0100, 0xe01ef}};
	static const unsigned long wide[][2] = {
	        {0x1100, 0x115f},   {0x2329, 0x232a},  {0x2e80, 0x303e},   {0x3040, 0xa4cf},
	        {0xac00, 0xd7a3},   {0xf900, 0xfaff},  {0xfe10, 0xfe19},   {0xfe30, 0xfe6f},
	        {0xff00, 0xff60},   {0xffe0, 0xffe6},  {0x1f300, 0x1f64f}, {0x1f900, 0x1f9ff},
	        {0x20000, 0x2fffd}, {0x30000, 0x3fffd}};
	for (size_t i = 0; i < sizeof(zero) / sizeof(*zero); i++)
		if (cp >= zero[i][0] && cp <= zero[i][1])
			return 0;
	for (size_t i = 0; i < sizeof(wide) / sizeof(*wide); i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

/* The character at `s` (`len` bytes left): its bytes in *n and its columns; ASCII, or a byte
 * that is not UTF-8, is one byte of one column. */
static size_t char_width(const char *s, size_t len, size_t *n)
{
	*n = menv_utf8_seq(s, len);
	if (*n <= 1) {
		*n = 1;
		return 1;
	}
	const unsigned char *p = (const unsigned char *)s;
	unsigned long cp = p[0] & (*n == 2 ? 0x1f : *n == 3 ? 0x0f : 0x07);
	for (size_t k = 1; k < *n; k++)
		cp = (cp << 6) | (p[k] & 0x3f);
	return cp_width(cp);
}

size_t menv_utf8_width(const char *s)
{
	size_t i = 0, w, len, n;
	while ((unsigned char)s[i] - 1u < 0x7fu)
		i++; /* ASCII, one column a byte: the usual cell, without strlen */
	if (!s[i])
		return i;
	len = i + strlen(s + i);
	for (w = i; i < len; i += n)
		w += char_width(s + i, len - i, &n);
	return w;
}

char *menv_utf8_fit(const char *s, size_t w)
{
	if (w < 8 || menv_utf8_width(s) <= w)
		return menv_xstrdup(s);
	size_t len = strlen(s), head = (w - 3) / 2, tail = w - 3 - head, hb = 0, tb = len, n, cw;
	for (size_t hw = 0; hb < len && hw + (cw = char_width(s + hb, len - hb, &n)) <= head;
	     hw += cw)
		hb += n; /* whole characters from the start, up to `head` columns */
	for (size_t tw = 0; tb > hb; tw += cw) {
		size_t st = tb - 1; /* the start of the character that ends at `tb` */
		while (st > hb && tb - st < 4 && ((unsigned char)s[st] & 0xc0) == 0x80)
			st--;
		cw = char_width(s + st, tb - st, &n);
		if (st + n != tb) /* not one whole character: its last byte alone */
			cw = char_width(s + (st = tb - 1), 1, &n);
		if (tw + cw > tail)
			break;
		tb = st;
	}
	return menv_xasprintf("%.*s...%s", (int)hb, s, s + tb);
}

/* n blanks at the end of b */
static void add_blanks(struct menv_buf *b, size_t n)
{
	static const char blanks[] = "                                ";
	for (size_t k; n; n -= k)
		menv_buf_add(b, blanks, k = n < sizeof(blanks) - 1 ? n : sizeof(blanks) - 1);
}

void menv_buf_add_padded(struct menv_buf *b, const char *s, size_t width)
{
	size_t w = menv_utf8_width(s);
	menv_buf_adds(b, s);
	add_blanks(b, w < width ? width - w : 0);
}

void menv_buf_add_right(struct menv_buf *b, const char *s, size_t width)
{
	size_t n = strlen(s);
	add_blanks(b, n < width ? width - n : 0);
	menv_buf_add(b, s, n);
}

char *menv_utf8_escape(const char *s)
{
	struct menv_buf b = MENV_BUF_INIT;
	size_t len = s ? strlen(s) : 0;

	for (size_t i = 0; i < len;) {
		size_t n = menv_utf8_seq(s + i, len - i);
		unsigned char c = (unsigned char)s[i];
		if (!n || c < 0x20 || c == 0x7f) {
			menv_buf_addf(&b, "\\x%02x", c);
			i++;
			continue;
		}
		menv_buf_add(&b, s + i, n);
		i += n;
	}
	return menv_buf_detach(&b);
}

json_t *menv_json_str(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *e = menv_utf8_escape(s);
	j = json_string(e);
	free(e);
	return j ? j : json_string("");
}

/* ---------------------------------------------------------------------------------------- */
/* String sets                                                                              */

static size_t str_hash(const char *s)
{
	size_t h = 1469598103934665603ull; /* FNV-1a, 64 bit */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t slot_of(char *const *slots, size_t cap, const char *s)
{
	size_t i = str_hash(s) & (cap - 1);
	while (slots[i] && strcmp(slots[i], s))
		i = (i + 1) & (cap - 1);
	return i;
}

bool menv_strset_has(const struct menv_strset *set, const char *s)
{
	return set->cap && set->slots[slot_of(set->slots, set->cap, s)];
}

bool menv_strset_add(struct menv_strset *set, const char *s)
{
	if (2 * (set->n + 1) > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 16;
		char **slots = menv_xcalloc(cap, sizeof(*slots));
		for (size_t i = 0; i < set->cap; i++)
			if (set->slots[i])
				slots[slot_of(slots, cap, set->slots[i])] = set->slots[i];
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	size_t i = slot_of(set->slots, set->cap, s);
	if (set->slots[i])
		return false;
	set->slots[i] = menv_xstrdup(s);
	set->n++;
	return true;
}

void menv_strset_clear(struct menv_strset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
	set->slots = NULL;
	set->n = set->cap = 0;
}

void menv_strvec_push_unique(struct menv_strvec *sv, struct menv_strset *seen, const char *s)
{
	if (menv_strset_add(seen, s))
		menv_strvec_push(sv, s);
}

/* ---------------------------------------------------------------------------------------- */
/* JSON                                                                                     */

/* The bytes go to jansson through its callback reader, in chunks, so that nesting is counted
 * (outside strings) and the cancel flag polled between chunks. */
struct jfeed {
	const char *p;
	size_t len, off;
	int depth;
	bool in_str, esc;
	bool one_value;   /* JSON_DISABLE_EOF_CHECK: what follows the first value is not counted */
	bool past;        /* the first value ended */
	size_t line, col; /* of the byte being scanned: 1-based line, 0-based column */
	int why;          /* 0, MENV_EPARSE (too deep) or MENV_EINTR */
	size_t bad_line, bad_col;
};

enum { JSON_CHUNK = 1 << 16 };

/* The number token at t[0..n) (JSON's number characters) as jansson is given it: where it
 * is out of jansson's range — an integer past int64 ("size": 99999999999999999999), a real
 * past a double (1e400) — it is written over, in `out`, by the nearest value jansson holds
 * (INT64_MAX or INT64_MIN; 1e308 or -1e308) padded with spaces to n bytes, so that lines and
 * columns stay where they were. Python's json, which conda reads JSON with, takes both (its
 * ints are unbounded, such a float is inf); jansson refused the whole document ("too big
 * integer", "real number overflow"), and menv skipped the record it was in. */
static void clamp_number(const char *t, size_t n, char *out)
{
	char tok[64];
	const char *v = NULL;

	if (n < 4 || n >= sizeof(tok))
		return; /* nothing shorter overflows; longer: jansson's to judge, as before */
	memcpy(tok, t, n);
	tok[n] = '\0';
	bool real = strpbrk(tok, ".eE") != NULL;
	char *end;
	errno = 0;
	if (real) {
		double d = strtod(tok, &end);
		if (*end || errno != ERANGE || !isinf(d))
			return;
		v = d < 0 ? "-1e308" : "1e308";
	} else {
		long long l = strtoll(tok, &end, 10);
		if (*end || errno != ERANGE)
			return;
		v = l < 0 ? "-9223372036854775808" : "9223372036854775807";
	}
	size_t k = strlen(v);
	if (k > n)
		return;
	memcpy(out, v, k);
	memset(out + k, ' ', n - k);
}

static bool number_char(char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static size_t jfeed_read(void *buf, size_t buflen, void *data)
{
	struct jfeed *f = data;
	size_t n = f->len - f->off;

	if (f->why)
		return (size_t)-1;
	if (menv_cancelled()) {
		f->why = MENV_EINTR;
		return (size_t)-1;
	}
	if (n > buflen)
		n = buflen;
	if (n > JSON_CHUNK)
		n = JSON_CHUNK;
	memcpy(buf, f->p + f->off, n);
	for (size_t i = 0; i < n && !f->past; i++) {
		char c = f->p[f->off + i];
		if (f->in_str) {
			if (f->esc)
				f->esc = false;
			else if (c == '\\')
				f->esc = true;
			else if (c == '"')
				f->in_str = false;
		} else if (c == '"') {
			f->in_str = true;
		} else if (c == '[' || c == '{') {
			if (++f->depth > MENV_PARSE_MAX_DEPTH) {
				f->why = MENV_EPARSE;
				f->bad_line = f->line;
				f->bad_col = f->col + 1;
				/* hand over what precedes the bracket: jansson stops at our error */
				n = i;
				break;
			}
		} else if (c == ']' || c == '}') {
			if (--f->depth == 0 && f->one_value)
				f->past = true;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			/* a number: whole in this chunk (one cut by its end goes whole to the
			 * next, unless it starts this one), then within jansson's range */
			size_t e = f->off + i;
			while (e < f->len && number_char(f->p[e]))
				e++;
			if (e > f->off + n && i > 0) {
				n = i;
				break;
			}
			size_t tl = e - (f->off + i);
			if (tl > n - i)
				tl = n - i;
			clamp_number(f->p + f->off + i, tl, (char *)buf + i);
			f->col += tl;
			i += tl - 1;
			continue;
		}
		if (c == '\n')
			f->line++, f->col = 0;
		else
			f->col++;
	}
	f->off += n;
	if (!n && f->why)
		return (size_t)-1;
	return n;
}

int menv_json_parse(const char *bytes, size_t len, size_t flags, const char *src, json_t **out,
                    struct menv_error *err)
{
	struct jfeed f = {.p = bytes,
	                  .len = len,
	                  .line = 1,
	                  .one_value = (flags & JSON_DISABLE_EOF_CHECK) != 0};
	json_error_t je;

	*out = json_load_callback(jfeed_read, &f, flags, &je);
	if (*out && !f.why)
		return 0;
	json_decref(*out);
	*out = NULL;
	if (f.why == MENV_EINTR)
		return menv_error_set(err, MENV_EINTR, "%s: reading interrupted", src);
	if (f.why == MENV_EPARSE)
		return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: nested deeper than %d levels",
		                      src, f.bad_line, f.bad_col, MENV_PARSE_MAX_DEPTH);
	return menv_error_set(err, MENV_EPARSE, "%s:%d:%d: %s", src, je.line, je.column, je.text);
}

json_t *menv_json_load_file(const char *path, size_t flags, struct menv_error *err)
{
	struct menv_error local;
	struct menv_buf b = MENV_BUF_INIT;
	json_t *j = NULL;

	if (!err)
		err = &local;
	if (menv_buf_read_file(&b, path, err) == 0)
		menv_json_parse(b.buf, b.len, flags, path, &j, err);
	menv_buf_release(&b);
	return j;
}

/* ---------------------------------------------------------------------------------------- */
/* YAML                                                                                     */

struct yframe {
	int id;       /* the collection's node */
	int key;      /* a mapping's key waiting for its value, or 0 */
	char *anchor; /* registered when the collection ends (no alias into itself) */
};

static int yaml_problem(yaml_parser_t *p, const char *src, struct menv_error *err)
{
	yaml_mark_t m = p->problem_mark;
	return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s%s%s", src, m.line + 1, m.column + 1,
	                      p->problem ? p->problem : "invalid YAML", p->context ? " " : "",
	                      p->context ? p->context : "");
}

static int yaml_at(const char *src, yaml_mark_t m, const char *what, struct menv_error *err)
{
	return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s", src, m.line + 1, m.column + 1,
	                      what);
}

int menv_yaml_single(yaml_parser_t *parser, const char *src, const char *what,
                     struct menv_error *err)
{
	yaml_event_t ev;
	int rc = 0;
	if (parser->stream_end_produced)
		return 0;
	if (!yaml_parser_parse(parser, &ev))
		return yaml_problem(parser, src, err);
	if (ev.type == YAML_DOCUMENT_START_EVENT) {
		char m[128];
		snprintf(m, sizeof(m), "a second YAML document (---) in one %s", what);
		rc = yaml_at(src, ev.start_mark, m, err);
	}
	yaml_event_delete(&ev);
	return rc;
}

static void yaml_attach(yaml_document_t *doc, struct yframe *top, int id)
{
	yaml_node_t *n = &doc->nodes.start[top->id - 1];
	if (n->type == YAML_SEQUENCE_NODE) {
		yaml_document_append_sequence_item(doc, top->id, id);
	} else if (!top->key) {
		top->key = id;
	} else {
		yaml_document_append_mapping_pair(doc, top->id, top->key, id);
		top->key = 0;
	}
}

static int yaml_load_doc(yaml_parser_t *parser, yaml_document_t *doc, const char *src, int refuse,
                         const char *why, struct menv_error *err)
{
	struct yframe *stack = NULL;
	size_t depth = 0, alloc = 0;
	json_t *anchors = json_object(); /* name -> node id */
	size_t merged = 0;               /* pairs merge keys have read (menv_yaml_merge) */
	yaml_event_t ev;
	bool have_doc = false, done = false;
	int rc = 0;

	if (!parser->stream_start_produced) {
		if (!yaml_parser_parse(parser, &ev)) {
			rc = yaml_problem(parser, src, err);
			goto out;
		}
		yaml_event_delete(&ev);
	}
	if (parser->stream_end_produced) {
		yaml_document_initialize(doc, NULL, NULL, NULL, 1, 1);
		have_doc = true;
		goto out;
	}
	while (!done && !rc) {
		if (menv_cancelled()) {
			rc = menv_error_set(err, MENV_EINTR, "%s: reading interrupted", src);
			break;
		}
		if (!yaml_parser_parse(parser, &ev)) {
			rc = yaml_problem(parser, src, err);
			break;
		}
		int id = 0;
		const char *anchor = NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			yaml_document_initialize(doc, NULL, NULL, NULL, 1, 1);
			have_doc = true;
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			yaml_document_initialize(doc, NULL, NULL, NULL,
			                         ev.data.document_start.implicit, 1);
			have_doc = true;
			doc->start_mark = ev.start_mark;
			break;
		case YAML_DOCUMENT_END_EVENT:
			doc->end_mark = ev.end_mark;
			done = true;
			break;
		case YAML_ALIAS_EVENT: {
			json_t *a = json_object_get(anchors, (const char *)ev.data.alias.anchor);
			if (!a) {
				rc = yaml_at(src, ev.start_mark, "found undefined alias", err);
				break;
			}
			id = (int)json_integer_value(a);
			break;
		}
		case YAML_SCALAR_EVENT:
			if (ev.data.scalar.length > INT_MAX) {
				rc = yaml_at(src, ev.start_mark, "scalar too long", err);
				break;
			}
			/* a NUL byte ("A\0B", "\x00") would cut the text where C reads it (a
			 * lock's "depend\0ent" taken as "depend", a .condarc channel shortened):
			 * refused in every YAML file menv reads */
			if (memchr(ev.data.scalar.value, '\0', ev.data.scalar.length)) {
				char m[160];
				snprintf(m, sizeof(m),
				         "a NUL byte in the text after '%.80s' (text cannot hold "
				         "one)",
				         (const char *)ev.data.scalar.value);
				rc = yaml_at(src, ev.start_mark, m, err);
				break;
			}
			id = yaml_document_add_scalar(doc, ev.data.scalar.tag, ev.data.scalar.value,
			                              (int)ev.data.scalar.length,
			                              ev.data.scalar.style);
			if (!id)
				rc = yaml_at(src, ev.start_mark, "invalid scalar", err);
			anchor = (const char *)ev.data.scalar.anchor;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth >= MENV_PARSE_MAX_DEPTH) {
				char m[64];
				snprintf(m, sizeof(m), "nested deeper than %d levels",
				         MENV_PARSE_MAX_DEPTH);
				rc = yaml_at(src, ev.start_mark, m, err);
				break;
			}
			if (ev.type == YAML_SEQUENCE_START_EVENT)
				id = yaml_document_add_sequence(doc, ev.data.sequence_start.tag,
				                                ev.data.sequence_start.style);
			else
				id = yaml_document_add_mapping(doc, ev.data.mapping_start.tag,
				                               ev.data.mapping_start.style);
			if (!id) {
				rc = yaml_at(src, ev.start_mark, "invalid collection", err);
				break;
			}
			doc->nodes.start[id - 1].start_mark = ev.start_mark;
			if (depth == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				stack = menv_xrealloc(stack, alloc * sizeof(*stack));
			}
			anchor = ev.type == YAML_SEQUENCE_START_EVENT
			                 ? (const char *)ev.data.sequence_start.anchor
			                 : (const char *)ev.data.mapping_start.anchor;
			stack[depth++] = (struct yframe){id, 0, menv_xstrdup(anchor)};
			id = 0; /* attached when it ends */
			anchor = NULL;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT: {
			struct yframe f = stack[--depth];
			id = f.id;
			doc->nodes.start[id - 1].end_mark = ev.end_mark;
			if (ev.type == YAML_MAPPING_END_EVENT)
				rc = menv_yaml_merge(doc, id, src,
				                     refuse == 2 || (refuse && !depth) ? why : NULL,
				                     &merged, err);
			if (f.anchor)
				json_object_set_new(anchors, f.anchor, json_integer(id));
			free(f.anchor);
			break;
		}
		default: break;
		}
		if (!rc && id && ev.type == YAML_SCALAR_EVENT) {
			doc->nodes.start[id - 1].start_mark = ev.start_mark;
			doc->nodes.start[id - 1].end_mark = ev.end_mark;
			if (anchor)
				json_object_set_new(anchors, anchor, json_integer(id));
		}
		if (!rc && id && depth)
			yaml_attach(doc, &stack[depth - 1], id);
		yaml_event_delete(&ev);
	}
out:
	while (depth)
		free(stack[--depth].anchor);
	free(stack);
	json_decref(anchors);
	if (rc && have_doc)
		yaml_document_delete(doc);
	if (rc)
		memset(doc, 0, sizeof(*doc));
	return rc;
}

int menv_yaml_load(yaml_parser_t *parser, yaml_document_t *doc, const char *src,
                   struct menv_error *err)
{
	return yaml_load_doc(parser, doc, src, 0, NULL, err);
}

int menv_yaml_load_refusing(yaml_parser_t *parser, yaml_document_t *doc, const char *src,
                            bool root_only, const char *why, struct menv_error *err)
{
	return yaml_load_doc(parser, doc, src, root_only ? 1 : 2, why, err);
}
