/*
 * pyjson.c - JSON text as Python's json.dump(obj, indent=2) writes it (ensure_ascii, the
 * objects' keys in their order, no final newline): what conda writes into conda-meta/.
 * Written here straight into one buffer, the bytes jansson's JSON_INDENT(2) |
 * JSON_ENSURE_ASCII dump gives with Python's two differences applied (its `\uxxxx` escapes in
 * lower case, DEL escaped): jansson's dump checks every container for a loop through a hash
 * table of their addresses (a malloc each) and wants a second pass for the escapes, which
 * was a tenth of a warm create of a large environment (one object per file of paths_data).
 * Reals as Python's repr(float) writes them (the shortest digits that read back: "0.1",
 * "1e+16", "1e-05"), not jansson's %.17g ("0.10000000000000001", "10000000000000000.0",
 * "1.0000000000000001e-5"), which no conda-meta file of conda's holds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

/* The p significant digits of x as printf's correctly rounded "%.*e" gives them: *m (p
 * digits) and the decimal exponent of the first one; whether that text reads back as x. */
static bool digits_at(double x, int p, uint64_t *m, int *e)
{
	char t[40], *q = t;
	snprintf(t, sizeof(t), "%.*e", p - 1, x);
	bool exact = strtod(t, NULL) == x;
	*m = 0;
	for (; *q != 'e'; q++)
		if (*q >= '0' && *q <= '9')
			*m = *m * 10 + (uint64_t)(*q - '0');
	*e = atoi(q + 1);
	return exact;
}

/* A finite x as Python's repr(float) writes it, which json.dumps uses: the shortest digits
 * that read back as x (David Gay's mode 0: of those, the nearest to x), positional when
 * the decimal point falls within 16 digits after the first one and no more than 3 zeros
 * come before that ("0.0001", "1000000000000000.0", "-0.0"), else "D.DDDe+XX" with at
 * least two exponent digits ("1e-05", "1e+16"). 0.018 ms a value (reals are rare in a
 * record). Writes at most 24 bytes to out; returns their count. */
static size_t py_float_repr(double x, char *out)
{
	char dig[20], *o = out;
	uint64_t m = 0, pow10 = 1;
	int e = 0, p = 1, n;

	if (signbit(x))
		*o++ = '-';
	x = fabs(x);
	if (x == 0) {
		memcpy(o, "0.0", 3);
		return (size_t)(o - out) + 3;
	}
	for (; p <= 17; p++, pow10 *= 10) {
		if (digits_at(x, p, &m, &e))
			break;
		/* the nearest p digits do not read back as x, but the p-digit number next to them
		 * on x's other side may: at a power of two the doubles below x are closer than
		 * those above (2^-1019 is 7.120236347223045e-307, not ...0444e-307) */
		char t[40];
		snprintf(t, sizeof(t), "%.*e", p - 1, x);
		bool below = strtod(t, NULL) < x;
		uint64_t m2 = below ? m + 1 : m - 1;
		int e2 = e;
		if (m2 == pow10 * 10) { /* 99..9 + 1: 10..0, an exponent up */
			m2 = pow10;
			e2++;
		} else if (m2 < pow10) { /* 10..0 - 1: 99..9, an exponent down */
			m2 = pow10 * 10 - 1;
			e2--;
		}
		snprintf(t, sizeof(t), "%llue%d", (unsigned long long)m2, e2 - (p - 1));
		if (strtod(t, NULL) == x) {
			m = m2;
			e = e2;
			break;
		}
	}
	n = snprintf(dig, sizeof(dig), "%llu", (unsigned long long)m);
	while (n > 1 && dig[n - 1] == '0')
		n--;
	int decpt = e + 1; /* digits before the decimal point */
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			memcpy(o, "0.", 2);
			o += 2;
			memset(o, '0', (size_t)-decpt);
			o += -decpt;
			memcpy(o, dig, (size_t)n);
			o += n;
		} else if (decpt >= n) {
			memcpy(o, dig, (size_t)n);
			o += n;
			memset(o, '0', (size_t)(decpt - n));
			o += decpt - n;
			memcpy(o, ".0", 2);
			o += 2;
		} else {
			memcpy(o, dig, (size_t)decpt);
			o += decpt;
			*o++ = '.';
			memcpy(o, dig + decpt, (size_t)(n - decpt));
			o += n - decpt;
		}
		return (size_t)(o - out);
	}
	*o++ = dig[0];
	if (n > 1) {
		*o++ = '.';
		memcpy(o, dig + 1, (size_t)(n - 1));
		o += n - 1;
	}
	o += sprintf(o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	return (size_t)(o - out);
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
		char d[40];
		menv_buf_add(b, d, py_float_repr(json_real_value(v), d));
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
