/*
 * lock_scan.c - a conda-lock file read without libyaml (issue 22): a scanner for the YAML that
 * conda-lock and menv write, line by line, that gives what menv_yaml_stream_json gives of the
 * same bytes (the root mapping with the `package` sequence left empty, each of its items
 * handed to the caller as it ends, as members) or says "fall back" on anything else, so that
 * libyaml stays the reference for every file out of the ordinary.
 *
 * What it reads: printable ASCII lines ('\n' ends them), comments, the root a block mapping
 * at column 0, block mappings and sequences each at one indentation (a sequence also at its
 * key's), plain scalars on one line, single-quoted ones ('' for a quote) and double-quoted
 * ones (\" and \\ the only escapes) on one line, and flow mappings and sequences of those
 * within one line ("{a: '1', b: c}", "[linux-64]", "{}"). What sends the file back (1): any
 * other byte (a tab, a carriage return, a byte order mark, UTF-8), a directive or a document
 * marker, anchors, aliases, tags, block scalars, a scalar or a flow collection over several
 * lines, a complex or merge key, a duplicate key, an indentation it does not expect, empty
 * entries or a trailing comma in a flow collection, a colon or '#' in a plain scalar of one,
 * and a root whose lines menv_lockfile_detect would not call conda-lock's.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "internal.h"
#include "lockfile.h"
#include "specs.h"

enum { FALLBACK = 1 };
/* nesting deeper falls back (libyaml's reader refuses past MENV_PARSE_MAX_DEPTH); a key
 * written longer (quotes and escapes included) is no simple key for libyaml (1,024) */
enum { MAX_DEPTH = 64, MAX_KEY = 1000 };
enum { N_SCALAR, N_MAP, N_SEQ };
/* what ends a scalar: the line (a block value), ": " (a block key), a flow indicator */
enum { IN_BLOCK, IN_KEY, IN_FLOW, IN_FLOW_KEY };

/* A node of the value being read; indexes into scan.nodes (0: none), texts offsets into
 * scan.text (NUL-terminated). */
struct node {
	unsigned char type, style;
	size_t key;              /* a mapping member's key, or SIZE_MAX */
	size_t text;             /* a scalar's text */
	size_t kids, last, next; /* first and last child, next sibling */
	size_t nkids, line;
};

struct scan {
	const char *bytes; /* the input held: all of it, or the window of what fd read */
	size_t len, pos;   /* its length; where the next line starts */
	int fd;            /* -1 where bytes is all of it */
	bool eof;
	struct menv_buf win;
	size_t lineno;         /* the current line's number (1-based) */
	const char *cur, *end; /* the current content line past its indentation; NULL: the end */
	size_t ind;            /* its indentation */
	unsigned seen;         /* what menv_lock_line_keys finds on the root's lines */
	struct node *nodes;
	size_t nn, nalloc;
	struct menv_buf text;
	struct menv_yaml_member *mem; /* an item's members and its members' mappings' */
	struct menv_yaml_members *subs;
	size_t memalloc, suballoc;
	const char *src, *key; /* the root's key whose sequence is streamed */
	int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m, size_t index,
	            size_t line);
	void *ud;
	size_t items, polls;
	int rc; /* MENV_EINTR once the cancel flag was seen */
	struct menv_error *err;
};

static size_t node_new(struct scan *s, unsigned char type, size_t line)
{
	if (s->nn == s->nalloc) {
		s->nalloc = s->nalloc ? 2 * s->nalloc : 256;
		s->nodes = menv_xrealloc(s->nodes, s->nalloc * sizeof(*s->nodes));
	}
	s->nodes[s->nn] =
	        (struct node){type, YAML_PLAIN_SCALAR_STYLE, SIZE_MAX, 0, 0, 0, 0, 0, line};
	return s->nn++;
}

static void node_add(struct scan *s, size_t parent, size_t kid)
{
	struct node *p = &s->nodes[parent];
	if (p->last)
		s->nodes[p->last].next = kid;
	else
		p->kids = kid;
	p->last = kid;
	p->nkids++;
}

static const char *text_at(const struct scan *s, size_t off)
{
	return s->text.buf + off;
}

/* ---- lines ----------------------------------------------------------------------------- */

/* More of fd's bytes in the window, the bytes before `keep` dropped (s->pos moves with
 * them): false at its end (or a read error, which the general reader meets again). */
static bool fill(struct scan *s, size_t keep)
{
	struct menv_buf *w = &s->win;
	ssize_t r;
	if (keep) /* the window is empty (and its buf NULL) at the first fill */
		memmove(w->buf, w->buf + keep, w->len - keep);
	w->len -= keep;
	s->pos -= keep;
	menv_buf_grow(w, 1u << 20);
	while ((r = read(s->fd, w->buf + w->len, w->alloc - w->len - 1)) < 0 && errno == EINTR &&
	       !menv_cancelled())
		;
	if (r > 0)
		w->len += (size_t)r;
	else
		s->eof = true;
	s->bytes = w->buf;
	s->len = w->len;
	return r > 0;
}

/* The index of the first byte of bytes[i..len) that is not printable ASCII (0x20-0x7e; a
 * '\n' is one), or len. */
static size_t printable_run(const char *bytes, size_t i, size_t len)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	while (len - i >= 8) {
		uint64_t x;
		memcpy(&x, bytes + i, 8);
		/* a byte under 0x20, over 0x7e (0x7f plus one carries to 0x80), or over 0x7f */
		if (((x - 0x20 * ones) | (x + 0x01 * ones) | x) & high)
			break;
		i += 8;
	}
	while (i < len && (unsigned char)(bytes[i] - 0x20) < 0x5f)
		i++;
	return i;
}

/* The next content line (neither blank nor a comment) as s->cur, s->end, s->ind, s->lineno;
 * s->cur NULL at the input's end. FALLBACK for a byte that is not printable ASCII. */
static int next_line(struct scan *s)
{
	for (;;) {
		size_t start = s->pos, i = start;
		for (;;) {
			/* one pass: the line's end and its bytes checked, 8 at a time */
			i = printable_run(s->bytes, i, s->len);
			if (i < s->len || s->fd < 0 || s->eof)
				break;
			bool more = fill(s, start);
			i -= start;
			start = 0;
			if (!more)
				break;
		}
		if (i < s->len && s->bytes[i] != '\n')
			return FALLBACK;
		if (i == start && i >= s->len) {
			s->cur = NULL;
			return 0;
		}
		s->lineno++;
		s->pos = i < s->len ? i + 1 : i;
		const char *p = s->bytes + start, *e = s->bytes + i;
		while (p < e && *p == ' ')
			p++;
		if (p == e || *p == '#')
			continue;
		s->cur = p;
		s->end = e;
		s->ind = (size_t)(p - (s->bytes + start));
		if (!(++s->polls & 255) && menv_cancelled()) {
			s->rc = menv_error_set(s->err, MENV_EINTR, "%s: reading interrupted",
			                       s->src);
			return FALLBACK;
		}
		return 0;
	}
}

/* Is the current line a block sequence's entry ("-" alone or before a blank)? */
static bool seq_line(const struct scan *s)
{
	return s->cur[0] == '-' && (s->cur + 1 == s->end || s->cur[1] == ' ');
}

/* ---- scalars --------------------------------------------------------------------------- */

/* What a byte is to a plain scalar: one it may not start with (an indicator, a blank), one
 * that ends it in a flow collection, one that may end it in a block (": ", " #"). */
enum { NOT_START = 1, FLOW_STOP = 2, BLOCK_STOP = 4 };
static const unsigned char cls[256] = {
        ['-'] = NOT_START,
        ['?'] = NOT_START,
        [':'] = NOT_START | FLOW_STOP | BLOCK_STOP,
        [','] = NOT_START | FLOW_STOP,
        ['['] = NOT_START | FLOW_STOP,
        [']'] = NOT_START | FLOW_STOP,
        ['{'] = NOT_START | FLOW_STOP,
        ['}'] = NOT_START | FLOW_STOP,
        ['#'] = NOT_START | FLOW_STOP | BLOCK_STOP,
        ['&'] = NOT_START,
        ['*'] = NOT_START,
        ['!'] = NOT_START,
        ['|'] = NOT_START,
        ['>'] = NOT_START,
        ['\''] = NOT_START,
        ['"'] = NOT_START,
        ['%'] = NOT_START,
        ['@'] = NOT_START,
        ['`'] = NOT_START,
        [' '] = NOT_START,
};

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* A quoted scalar at *pp (its opening quote), its text to d: its length, *pp past the closing
 * quote. FALLBACK (-1) for one that goes on to the next line or an escape other than \" and
 * \\. */
static ptrdiff_t quoted(const char **pp, const char *end, char *d)
{
	const char *p = *pp;
	char q = *p++, *d0 = d;
	for (;;) {
		const char *run = p;
		while (p < end && *p != q && *p != '\\')
			p++;
		memcpy(d, run, (size_t)(p - run));
		d += p - run;
		if (p == end)
			return -1;
		if (q == '\'' && *p == '\\') {
			*d++ = *p++;
		} else if (q == '\'') {
			if (p + 1 == end || p[1] != '\'')
				break;
			*d++ = '\'';
			p += 2;
		} else if (*p == '\\') {
			if (p + 1 == end || (p[1] != '"' && p[1] != '\\'))
				return -1;
			*d++ = p[1];
			p += 2;
		} else {
			break;
		}
	}
	*pp = p + 1;
	return d - d0;
}

/* Where a plain scalar from p ends in a block: at the first ": " (or ':' ending the line) or
 * " #", else at the line's end (memchr for each: a URL's one ':' is passed over at once). */
static const char *block_end(const char *p, const char *end)
{
	const char *c = p, *h = p;
	while ((c = memchr(c, ':', (size_t)(end - c))) && c + 1 < end && c[1] != ' ')
		c++;
	while ((h = memchr(h, '#', (size_t)(end - h))) && h[-1] != ' ')
		h++;
	if (!c)
		c = end;
	return h && h < c ? h : c;
}

/* Is what p starts, up to the line's end, a comment or nothing (past blanks, '#' after one)? */
static bool rest_empty(const char *p, const char *end)
{
	const char *q = skip_blanks(p, end);
	return q == end || (*q == '#' && q > p);
}

/* The scalar at *pp (its first byte, not a blank) as a new node, its text in s->text: *pp
 * past it (past the ':' of a key, at the ',', '}' or ']' after one in a flow collection).
 * FALLBACK for anything out of the ordinary. */
static int scalar(struct scan *s, const char **pp, const char *end, int ctx, size_t *out)
{
	const char *p = *pp;
	size_t n = node_new(s, N_SCALAR, s->lineno), len;
	bool key = ctx == IN_KEY || ctx == IN_FLOW_KEY, flow = ctx >= IN_FLOW;

	*out = n;
	s->nodes[n].text = s->text.len;
	if (p == end)
		return FALLBACK;
	/* room for the text as written and its NUL (unquoting only shortens it) */
	menv_buf_grow(&s->text, (size_t)(end - p) + 1);
	char *d = s->text.buf + s->text.len;
	if (*p == '\'' || *p == '"') {
		s->nodes[n].style = *p == '\'' ? YAML_SINGLE_QUOTED_SCALAR_STYLE
		                               : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		ptrdiff_t q = quoted(&p, end, d);
		if (q < 0)
			return FALLBACK;
		len = (size_t)q;
		if (key) {
			if (p == end || *p != ':' || (p + 1 < end && p[1] != ' ') ||
			    (flow && p + 1 == end))
				return FALLBACK;
			p++;
		} else if (flow) {
			p = skip_blanks(p, end);
			if (p == end || (*p != ',' && *p != ']' && *p != '}'))
				return FALLBACK;
		} else if (!rest_empty(p, end)) {
			return FALLBACK;
		}
	} else {
		if ((cls[(unsigned char)*p] & NOT_START) ||
		    (end - p >= 3 && (!memcmp(p, "---", 3) || !memcmp(p, "...", 3))))
			return FALLBACK;
		const char *e = p;
		if (flow) {
			/* to the first flow indicator; ':' only where it ends a key */
			while (e < end && !(cls[(unsigned char)*e] & FLOW_STOP))
				e++;
			if (e == end || *e == '[' || *e == '{' || *e == '#' ||
			    (*e == ':' ? !key || e + 1 == end || e[1] != ' ' : key))
				return FALLBACK;
		} else {
			/* to the end of the line (a block value) or ": " (a key); " #" starts a
			 * comment, which no key holds; ": " in a value is no scalar */
			e = block_end(p, end);
			if (key ? e == end || *e != ':' : e < end && *e == ':')
				return FALLBACK;
		}
		const char *t = e;
		while (t > p && t[-1] == ' ')
			t--;
		if (key && t != e)
			return FALLBACK; /* "a : b" */
		len = (size_t)(t - p);
		if (key && len == 2 && !memcmp(p, "<<", 2))
			return FALLBACK; /* a merge key */
		memcpy(d, p, len);
		p = key ? e + 1 : e;
	}
	/* libyaml's bound is on the key as written (its quotes and escapes counted): "'k''k''...'"
	 * unquoted to 1,000 bytes but written in 1,500 is no simple key */
	if (key && (size_t)(p - *pp) > MAX_KEY)
		return FALLBACK;
	d[len] = '\0';
	s->text.len += len + 1;
	*pp = p;
	return 0;
}

/* ---- collections ----------------------------------------------------------------------- */

/* Are the keys of mapping m distinct? */
static int cmp_keys(const void *a, const void *b, void *base)
{
	return strcmp((const char *)base + *(const size_t *)a,
	              (const char *)base + *(const size_t *)b);
}

static bool keys_distinct(const struct scan *s, size_t m)
{
	const struct node *map = &s->nodes[m];
	/* keys of distinct first bytes are distinct (an entry's: name, version, manager, ...) */
	uint64_t seen = 0;
	bool clash = false;
	for (size_t a = map->kids; a && !clash; a = s->nodes[a].next) {
		uint64_t bit = (uint64_t)1 << (text_at(s, s->nodes[a].key)[0] & 63);
		clash = seen & bit;
		seen |= bit;
	}
	if (!clash)
		return true;
	if (map->nkids <= 12) {
		for (size_t a = map->kids; a; a = s->nodes[a].next)
			for (size_t b = s->nodes[a].next; b; b = s->nodes[b].next)
				if (!strcmp(text_at(s, s->nodes[a].key),
				            text_at(s, s->nodes[b].key)))
					return false;
		return true;
	}
	size_t *k = menv_xmalloc(map->nkids * sizeof(*k)), n = 0;
	for (size_t a = map->kids; a; a = s->nodes[a].next)
		k[n++] = s->nodes[a].key;
	qsort_r(k, n, sizeof(*k), cmp_keys, s->text.buf);
	bool ok = true;
	for (size_t i = 1; i < n && ok; i++)
		ok = strcmp(text_at(s, k[i - 1]), text_at(s, k[i])) != 0;
	free(k);
	return ok;
}

/* The flow collection at *pp ('{' or '['), within the line: *pp past its closing bracket. */
static int flow(struct scan *s, const char **pp, const char *end, int depth, size_t *out)
{
	const char *p = *pp;
	bool map = *p == '{';
	size_t c = node_new(s, map ? N_MAP : N_SEQ, s->lineno);
	char close = map ? '}' : ']';

	*out = c;
	if (depth >= MAX_DEPTH)
		return FALLBACK;
	p = skip_blanks(p + 1, end);
	if (p < end && *p == close) {
		*pp = p + 1;
		return 0;
	}
	for (;;) {
		size_t k = 0, v;
		if (map) {
			if (p == end || *p == '{' || *p == '[' ||
			    scalar(s, &p, end, IN_FLOW_KEY, &k))
				return FALLBACK;
			p = skip_blanks(p, end);
		}
		if (p < end && (*p == '{' || *p == '[')) {
			if (flow(s, &p, end, depth + 1, &v))
				return FALLBACK;
			p = skip_blanks(p, end);
		} else if (map && p < end && (*p == ',' || *p == '}')) {
			v = node_new(s, N_SCALAR, s->lineno); /* "f: ," is null */
			s->nodes[v].text = s->text.len;
			menv_buf_addch(&s->text, '\0');
		} else if (scalar(s, &p, end, IN_FLOW, &v)) {
			return FALLBACK;
		}
		if (map)
			s->nodes[v].key = s->nodes[k].text;
		node_add(s, c, v);
		if (p == end)
			return FALLBACK;
		if (*p == close)
			break;
		if (*p != ',')
			return FALLBACK;
		p = skip_blanks(p + 1, end);
		if (p == end || *p == ',' || *p == close)
			return FALLBACK; /* an empty entry, a trailing comma */
	}
	if (map && !keys_distinct(s, c))
		return FALLBACK;
	*pp = p + 1;
	return 0;
}

static int block(struct scan *s, size_t ind, int depth, bool stream, size_t *out);

/* The value of a key or a sequence entry whose text on its line starts at p (the line's end
 * or a comment where it is on the next lines), at indentation ind: *out its node; the lines
 * read past it. `stream`: the root's key whose sequence is streamed. */
static int value(struct scan *s, const char *p, size_t ind, bool indentless, int depth, bool stream,
                 size_t *out)
{
	const char *end = s->end;
	size_t line = s->lineno;
	if (rest_empty(p, end)) {
		int rc = next_line(s);
		if (rc)
			return rc;
		if (s->cur && (s->ind > ind || (indentless && s->ind == ind && seq_line(s))))
			return block(s, s->ind, depth + 1, stream, out);
		*out = node_new(s, N_SCALAR, line); /* nothing: null */
		s->nodes[*out].text = s->text.len;
		menv_buf_addch(&s->text, '\0');
		return 0;
	}
	p = skip_blanks(p, end);
	if (*p == '{' || *p == '[') {
		if (flow(s, &p, end, depth + 1, out) || !rest_empty(p, end))
			return FALLBACK;
		/* the streamed sequence as "[]" */
		if (stream && s->nodes[*out].type == N_SEQ && s->nodes[*out].nkids)
			return FALLBACK;
	} else if (scalar(s, &p, end, IN_BLOCK, out)) {
		return FALLBACK;
	}
	int rc = next_line(s);
	/* a scalar going on on the next line, or an indentation out of place */
	return rc ? rc : s->cur && s->ind > ind ? FALLBACK : 0;
}

/* Does the text from p (a sequence entry's) start a mapping ("key: ...")? */
static bool starts_mapping(const char *p, const char *end)
{
	if (*p == '\'' || *p == '"') {
		const char *q = p + 1;
		for (; q < end; q++) {
			if (*p == '"' && *q == '\\') {
				q++;
				continue;
			}
			if (*q == *p && *p == '\'' && q + 1 < end && q[1] == '\'') {
				q++;
				continue;
			}
			if (*q == *p)
				break;
		}
		return q + 1 < end && q[1] == ':' && (q + 2 == end || q[2] == ' ');
	}
	if (*p == '{' || *p == '[')
		return false;
	for (const char *q = p; q < end; q++) {
		if (*q == ':' && (q + 1 == end || q[1] == ' '))
			return true;
		if (*q == '#' && q > p && q[-1] == ' ')
			return false;
	}
	return false;
}

/* The item members of an item's mapping node m, in s->mem from *used on (its mappings of
 * scalars as `sub`, other collections as JSON). */
static json_t *to_json(const struct scan *s, size_t n);

static void to_members(struct scan *s, size_t m, struct menv_yaml_members *out, size_t *used,
                       size_t *subs)
{
	size_t first = *used;
	*used += s->nodes[m].nkids;
	out->m = s->mem + first;
	out->n = out->alloc = s->nodes[m].nkids;
	size_t i = first;
	for (size_t k = s->nodes[m].kids; k; k = s->nodes[k].next, i++) {
		const struct node *v = &s->nodes[k];
		struct menv_yaml_member *e = &s->mem[i];
		*e = (struct menv_yaml_member){(char *)text_at(s, v->key), NULL, v->style, NULL,
		                               NULL};
		if (v->type == N_SCALAR) {
			e->text = (char *)text_at(s, v->text);
			continue;
		}
		bool scalars = v->type == N_MAP;
		for (size_t c = v->kids; c && scalars; c = s->nodes[c].next)
			scalars = s->nodes[c].type == N_SCALAR;
		if (scalars && out == &s->subs[0]) {
			e->sub = &s->subs[++*subs];
			to_members(s, k, e->sub, used, subs);
		} else {
			e->v = to_json(s, k);
		}
	}
}

static json_t *to_json(const struct scan *s, size_t n)
{
	const struct node *v = &s->nodes[n];
	if (v->type == N_SCALAR)
		return menv_yaml_scalar_json(text_at(s, v->text), v->style);
	json_t *j = v->type == N_MAP ? json_object() : json_array();
	for (size_t k = v->kids; k; k = s->nodes[k].next) {
		if (v->type == N_MAP)
			json_object_set_new_nocheck(j, text_at(s, s->nodes[k].key), to_json(s, k));
		else
			json_array_append_new(j, to_json(s, k));
	}
	return j;
}

/* Item n of the streamed sequence to the caller, then forgotten (the nodes and texts from
 * `nodes` and `text` on). */
static int emit(struct scan *s, size_t n, size_t nodes, size_t text)
{
	int rc;
	if (s->nodes[n].type == N_MAP) {
		/* room for every node's member, and a mapping of members for each */
		size_t need = s->nn - nodes, used = 0, subs = 0;
		if (need > s->memalloc) {
			s->memalloc = need;
			s->mem = menv_xrealloc(s->mem, need * sizeof(*s->mem));
		}
		if (need + 1 > s->suballoc) {
			s->suballoc = need + 1;
			s->subs = menv_xrealloc(s->subs, s->suballoc * sizeof(*s->subs));
		}
		to_members(s, n, &s->subs[0], &used, &subs);
		rc = s->item(s->ud, NULL, &s->subs[0], s->items++, s->nodes[n].line);
		for (size_t i = 0; i < used; i++)
			json_decref(s->mem[i].v);
	} else {
		rc = s->item(s->ud, to_json(s, n), NULL, s->items++, s->nodes[n].line);
	}
	s->nn = nodes;
	s->text.len = text;
	return rc ? FALLBACK : 0;
}

/* The block mapping or sequence at the current line (indentation ind) as a new node. */
static int block(struct scan *s, size_t ind, int depth, bool stream, size_t *out)
{
	bool seq = seq_line(s);
	size_t c = node_new(s, seq ? N_SEQ : N_MAP, s->lineno);
	int rc = 0;

	*out = c;
	if (depth >= MAX_DEPTH)
		return FALLBACK;
	if (stream && !seq)
		stream = false;
	while (!rc && s->cur && s->ind == ind) {
		size_t v = 0, nodes = s->nn, text = s->text.len;
		if (seq != seq_line(s))
			return seq ? 0 : FALLBACK; /* a key after an indentless sequence */
		if (!depth && !seq) /* a root key: what detection makes of its line */
			s->seen |= menv_lock_line_keys(s->cur, (size_t)(s->end - s->cur));
		if (seq) {
			const char *p = skip_blanks(s->cur + 1, s->end);
			if (p < s->end && *p != '#' && starts_mapping(p, s->end)) {
				/* "- key: value": a mapping at the key's column */
				s->ind += (size_t)(p - s->cur);
				s->cur = p;
				rc = block(s, s->ind, depth + 1, false, &v);
				if (!rc && s->cur && s->ind > ind)
					rc = FALLBACK;
			} else if (p < s->end && *p == '-' && (p + 1 == s->end || p[1] == ' ')) {
				rc = FALLBACK; /* "- - x" */
			} else {
				rc = value(s, s->cur + 1, ind, false, depth, false, &v);
			}
			if (!rc && stream) {
				rc = emit(s, v, nodes, text);
				continue;
			}
		} else {
			size_t k;
			const char *p = s->cur;
			if (scalar(s, &p, s->end, IN_KEY, &k))
				return FALLBACK;
			/* the root's `key`: its sequence's items go to the caller */
			bool streamed = !depth && !strcmp(text_at(s, s->nodes[k].text), s->key);
			rc = value(s, p, ind, true, depth, streamed, &v);
			if (!rc)
				s->nodes[v].key = s->nodes[k].text;
		}
		if (!rc)
			node_add(s, c, v);
	}
	if (!rc && !seq && !keys_distinct(s, c))
		rc = FALLBACK;
	return rc;
}

int menv_lock_scan(const char *bytes, size_t len, int fd, const char *src, const char *key,
                   int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m,
                               size_t index, size_t line),
                   void *ud, json_t **out, struct menv_error *err)
{
	struct scan s = {.bytes = bytes ? bytes : "",
	                 .len = bytes ? len : 0,
	                 .fd = bytes ? -1 : fd,
	                 .src = src,
	                 .key = key,
	                 .item = item,
	                 .ud = ud,
	                 .err = err};
	size_t root = 0;
	int rc = next_line(&s);

	*out = NULL;
	node_new(&s, N_SCALAR, 0); /* node 0: none */
	if (!rc && (!s.cur || s.ind || seq_line(&s)))
		rc = FALLBACK; /* no root mapping at column 0 */
	if (!rc)
		rc = block(&s, 0, 0, false, &root);
	if (!rc && s.cur)
		rc = FALLBACK;
	if (!rc && menv_lock_detected(s.seen) != MENV_LOCK_CONDA_LOCK)
		rc = FALLBACK;
	if (!rc)
		*out = to_json(&s, root);
	if (s.rc)
		rc = s.rc;
	free(s.nodes);
	free(s.mem);
	free(s.subs);
	menv_buf_release(&s.text);
	menv_buf_release(&s.win);
	return rc;
}
