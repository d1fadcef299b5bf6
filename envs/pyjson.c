/*
 * pyjson.c - JSON text as Python's json.dump(obj, indent=2) writes it (ensure_ascii, the
 * objects' keys in their order, no final newline): what conda writes into conda-meta/. One
 * buffer, one pass over the values: a torch environment's PrefixRecords are 30k path entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefix.h"

static void indent(struct menv_buf *b, size_t depth)
{
	static const char nl[] = "\n                                ";
	if (2 * depth < sizeof(nl) - 1) {
		menv_buf_add(b, nl, 1 + 2 * depth);
		return;
	}
	menv_buf_addch(b, '\n');
	for (size_t i = 0; i < depth; i++)
		menv_buf_add(b, "  ", 2);
}

/* `\uxxxx` in lower-case hex, as Python writes it. */
static void add_u(struct menv_buf *b, unsigned cp)
{
	static const char hex[] = "0123456789abcdef";
	char e[6] = {
	        '\\',        'u', hex[(cp >> 12) & 15], hex[(cp >> 8) & 15], hex[(cp >> 4) & 15],
	        hex[cp & 15]};
	menv_buf_add(b, e, 6);
}

/* A string (UTF-8, as jansson keeps it) with Python's ensure_ascii escapes: `\"`, `\\`, the
 * short escapes of \b \f \n \r \t, `\u00xx` for other control characters and DEL, `\uxxxx`
 * (a surrogate pair past U+FFFF) for anything not ASCII. */
static void add_string(struct menv_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	menv_buf_addch(b, '"');
	while (p < end) {
		const unsigned char *run = p;
		while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			menv_buf_add(b, (const char *)run, (size_t)(p - run));
		if (p == end)
			break;
		unsigned c = *p++;
		switch (c) {
		case '"': menv_buf_add(b, "\\\"", 2); continue;
		case '\\': menv_buf_add(b, "\\\\", 2); continue;
		case '\b': menv_buf_add(b, "\\b", 2); continue;
		case '\f': menv_buf_add(b, "\\f", 2); continue;
		case '\n': menv_buf_add(b, "\\n", 2); continue;
		case '\r': menv_buf_add(b, "\\r", 2); continue;
		case '\t': menv_buf_add(b, "\\t", 2); continue;
		default: break;
		}
		if (c < 0x80) {
			add_u(b, c);
			continue;
		}
		/* jansson's strings are valid UTF-8: the sequence's length from its first byte */
		size_t more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
		unsigned cp = c & (more == 3 ? 0x07 : more == 2 ? 0x0f : 0x1f);
		for (size_t k = 0; k < more && p < end; k++)
			cp = cp << 6 | (*p++ & 0x3f);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			add_u(b, 0xd800 | (cp >> 10));
			add_u(b, 0xdc00 | (cp & 0x3ff));
		} else {
			add_u(b, cp);
		}
	}
	menv_buf_addch(b, '"');
}

static void add_value(struct menv_buf *b, json_t *v, size_t depth)
{
	char num[32];
	size_t i, n;
	const char *key;
	json_t *e;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (!json_object_size(v)) {
			menv_buf_add(b, "{}", 2);
			break;
		}
		menv_buf_addch(b, '{');
		n = 0;
		json_object_foreach(v, key, e)
		{
			if (n++)
				menv_buf_addch(b, ',');
			indent(b, depth + 1);
			add_string(b, key, strlen(key));
			menv_buf_add(b, ": ", 2);
			add_value(b, e, depth + 1);
		}
		indent(b, depth);
		menv_buf_addch(b, '}');
		break;
	case JSON_ARRAY:
		if (!json_array_size(v)) {
			menv_buf_add(b, "[]", 2);
			break;
		}
		menv_buf_addch(b, '[');
		json_array_foreach(v, i, e)
		{
			if (i)
				menv_buf_addch(b, ',');
			indent(b, depth + 1);
			add_value(b, e, depth + 1);
		}
		indent(b, depth);
		menv_buf_addch(b, ']');
		break;
	case JSON_STRING: add_string(b, json_string_value(v), json_string_length(v)); break;
	case JSON_INTEGER:
		n = (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		                     json_integer_value(v));
		menv_buf_add(b, num, n);
		break;
	case JSON_REAL: {
		/* jansson's shortest-round-trip form, as conda-meta held it before */
		char *r = json_dumps(v, JSON_ENCODE_ANY);
		if (r)
			menv_buf_adds(b, r);
		free(r);
		break;
	}
	case JSON_TRUE: menv_buf_add(b, "true", 4); break;
	case JSON_FALSE: menv_buf_add(b, "false", 5); break;
	case JSON_NULL: menv_buf_add(b, "null", 4); break;
	}
}

char *menv_json_python_dump(json_t *v, size_t hint)
{
	struct menv_buf b = MENV_BUF_INIT;

	menv_buf_grow(&b, hint ? hint : 4096);
	add_value(&b, v, 0);
	return menv_buf_detach(&b);
}
