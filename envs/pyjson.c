/*
 * pyjson.c - JSON text as Python's json.dump(obj, indent=2) writes it (ensure_ascii, the
 * objects' keys in their order, no final newline): what conda writes into conda-meta/.
 * Written here straight into one buffer, the bytes jansson's JSON_INDENT(2) |
 * JSON_ENSURE_ASCII dump gives with Python's two differences applied (its `\uxxxx` escapes in
 * lower case, DEL escaped): jansson's dump checks every container for a loop through a hash
 * table of their addresses (a malloc each) and wants a second pass for the escapes, which
 * was a tenth of a warm create of a large environment (one object per file of paths_data).
 * Reals are jansson's own text (its %.17g form), as before.
 */
#include <stdlib.h>
#include <string.h>

#include "prefix.h"

static const char hexd[] = "0123456789abcdef";

static void add_u(struct menv_buf *b, unsigned cp)
{
	char e[6] = {'\\',
	             'u',
	             hexd[(cp >> 12) & 15],
	             hexd[(cp >> 8) & 15],
	             hexd[(cp >> 4) & 15],
	             hexd[cp & 15]};
	menv_buf_add(b, e, 6);
}

/* One UTF-8 sequence at s (n bytes left) as jansson's utf8_iterate takes it: its length and
 * code point, 0 when it is not valid UTF-8 (jansson's dump fails on it). */
static size_t utf8_next(const unsigned char *s, size_t n, unsigned *cp)
{
	unsigned c = s[0], v;
	size_t len;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || (len == 3 && v < 0x800) ||
	    (len == 4 && v < 0x10000))
		return 0;
	*cp = v;
	return len;
}

/* `s` (n bytes) as a JSON string with Python's ensure_ascii escapes. -1 on invalid UTF-8. */
static int add_string(struct menv_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	menv_buf_grow(b, n + 2);
	b->buf[b->len++] = '"';
	while (p < end) {
		const unsigned char *run = p;
		while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			menv_buf_add(b, run, (size_t)(p - run));
		if (p == end)
			break;
		unsigned cp;
		size_t len = utf8_next(p, (size_t)(end - p), &cp);
		if (!len)
			return -1;
		p += len;
		const char *esc = NULL;
		switch (cp) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default: break;
		}
		if (esc) {
			menv_buf_add(b, esc, 2);
		} else if (cp < 0x10000) {
			add_u(b, cp);
		} else {
			cp -= 0x10000;
			add_u(b, 0xd800 | (cp >> 10));
			add_u(b, 0xdc00 | (cp & 0x3ff));
		}
	}
	menv_buf_addch(b, '"');
	return 0;
}

static void add_indent(struct menv_buf *b, size_t depth)
{
	menv_buf_grow(b, 2 * depth + 1);
	b->buf[b->len++] = '\n';
	memset(b->buf + b->len, ' ', 2 * depth);
	b->len += 2 * depth;
	b->buf[b->len] = '\0';
}

/* v into b at nesting `depth`; -1 where jansson's dump fails (invalid UTF-8). */
static int add_value(struct menv_buf *b, json_t *v, size_t depth)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *m;
		bool first = true;
		if (!json_object_size(v)) {
			menv_buf_add(b, "{}", 2);
			return 0;
		}
		menv_buf_addch(b, '{');
		json_object_foreach(v, key, m)
		{
			if (!first)
				menv_buf_addch(b, ',');
			first = false;
			add_indent(b, depth + 1);
			if (add_string(b, key, strlen(key)) < 0)
				return -1;
			menv_buf_add(b, ": ", 2);
			if (add_value(b, m, depth + 1) < 0)
				return -1;
		}
		add_indent(b, depth);
		menv_buf_addch(b, '}');
		return 0;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);
		if (!n) {
			menv_buf_add(b, "[]", 2);
			return 0;
		}
		menv_buf_addch(b, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				menv_buf_addch(b, ',');
			add_indent(b, depth + 1);
			if (add_value(b, json_array_get(v, i), depth + 1) < 0)
				return -1;
		}
		add_indent(b, depth);
		menv_buf_addch(b, ']');
		return 0;
	}
	case JSON_STRING: return add_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: {
		/* "%lld" (JSON_INTEGER_FORMAT) without printf: a size on every file */
		char d[24], *q = d + sizeof(d);
		json_int_t i = json_integer_value(v);
		unsigned long long u = i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;
		do
			*--q = (char)('0' + u % 10);
		while (u /= 10);
		if (i < 0)
			*--q = '-';
		menv_buf_add(b, q, (size_t)(d + sizeof(d) - q));
		return 0;
	}
	case JSON_REAL: {
		char *s = json_dumps(v, JSON_ENCODE_ANY);
		if (!s)
			return -1;
		menv_buf_adds(b, s);
		free(s);
		return 0;
	}
	case JSON_TRUE: menv_buf_add(b, "true", 4); return 0;
	case JSON_FALSE: menv_buf_add(b, "false", 5); return 0;
	case JSON_NULL: menv_buf_add(b, "null", 4); return 0;
	}
	return -1;
}

char *menv_json_python_dump(json_t *v, size_t hint)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_grow(&b, hint ? hint : 4096);
	if (!v || add_value(&b, v, 0) < 0) {
		/* what jansson's failed dump left: "null" (json_dumps gave NULL) */
		menv_buf_reset(&b);
		menv_buf_adds(&b, "null");
	}
	return menv_buf_detach(&b);
}
