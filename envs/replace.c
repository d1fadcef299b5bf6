/*
 * replace.c - prefix replacement (CEP-34): the build prefix placeholder recorded in
 * `paths.json` / `has_prefix` is rewritten to the environment's prefix, in text mode by
 * plain substitution, in binary mode inside NUL-terminated strings padded to keep offsets.
 */
#include <string.h>

#include "envs.h"

int menv_prefix_replace(const char *data, size_t len, const char *placeholder,
			const char *prefix, bool binary, struct menv_buf *out,
			struct menv_error *err)
{
	size_t pl = strlen(placeholder), nl = strlen(prefix);
	size_t i = 0;

	if (pl == 0)
		return menv_error_set(err, MENV_EPARSE, "empty prefix placeholder");
	if (binary && nl > pl)
		return menv_error_set(err, MENV_EUNSUPPORTED,
				      "prefix '%s' is longer than the %zu-byte placeholder of a "
				      "binary file", prefix, pl);
	menv_buf_grow(out, len);
	while (i < len) {
		const char *hit = memmem(data + i, len - i, placeholder, pl);
		if (!hit) {
			menv_buf_add(out, data + i, len - i);
			break;
		}
		size_t h = (size_t)(hit - data);
		menv_buf_add(out, data + i, h - i);
		if (!binary) {
			menv_buf_add(out, prefix, nl);
			i = h + pl;
			continue;
		}
		/* binary: rewrite the rest of this C string, then pad with NULs */
		const char *nul = memchr(hit, '\0', len - h);
		size_t end = nul ? (size_t)(nul - data) : len;
		size_t before = out->len;
		size_t j = h;
		while (j < end) {
			const char *m = memmem(data + j, end - j, placeholder, pl);
			if (!m) {
				menv_buf_add(out, data + j, end - j);
				break;
			}
			menv_buf_add(out, data + j, (size_t)(m - data) - j);
			menv_buf_add(out, prefix, nl);
			j = (size_t)(m - data) + pl;
		}
		size_t written = out->len - before;
		for (size_t k = written; k < end - h; k++)
			menv_buf_addch(out, '\0');
		i = end;
	}
	return 0;
}
