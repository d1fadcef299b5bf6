/*
 * pyjson.c - JSON text as Python's json.dump(obj, indent=2) writes it (ensure_ascii, the
 * objects' keys in their order, no final newline): what conda writes into conda-meta/.
 * jansson writes it (JSON_INDENT(2) | JSON_ENSURE_ASCII); Python differs only in the case of
 * its `\uXXXX` escapes (lower) and in escaping DEL, which one pass over jansson's text fixes.
 */
#include <stdlib.h>
#include <string.h>

#include "prefix.h"

char *menv_json_python_dump(json_t *v, size_t hint)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	struct menv_buf b = MENV_BUF_INIT;

	/* no DEL: the escapes' case fixed in place, no copy (a PrefixRecord of 10k files) */
	if (s && !strchr(s, 0x7f)) {
		for (char *p = strchr(s, '\\'); p; p = strchr(p, '\\')) {
			p++; /* the escaped character: a `\\` never starts another escape */
			if (*p == 'u')
				for (int k = 1; k < 5 && p[k]; k++)
					if (p[k] >= 'A' && p[k] <= 'F')
						p[k] = (char)(p[k] - 'A' + 'a');
			if (*p)
				p++;
		}
		return s;
	}

	menv_buf_grow(&b, hint ? hint : s ? strlen(s) + 16 : 16);
	for (const char *p = s ? s : "null"; *p; p++) {
		if (*p == 0x7f) {
			menv_buf_adds(&b, "\\u007f");
			continue;
		}
		menv_buf_addch(&b, *p);
		if (*p != '\\' || !p[1])
			continue;
		p++; /* the escaped character: a `\\` never starts another escape */
		menv_buf_addch(&b, *p);
		for (int k = *p == 'u' ? 1 : 5; k < 5 && p[1]; k++) {
			p++;
			menv_buf_addch(&b, *p >= 'A' && *p <= 'F' ? (char)(*p - 'A' + 'a') : *p);
		}
	}
	free(s);
	return menv_buf_detach(&b);
}
