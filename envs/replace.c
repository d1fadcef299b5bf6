/*
 * replace.c - prefix replacement (CEP-34): the build prefix placeholder recorded in
 * `paths.json` / `has_prefix` is rewritten to the environment's prefix, in text mode by
 * plain substitution, in binary mode inside NUL-terminated strings padded to keep offsets.
 * A text file's shebang that holds the placeholder and would become longer than the kernel
 * reads (127 bytes) or hold a blank is rewritten to `#!/usr/bin/env NAME ARGS`, as conda
 * does: the kernel would cut it or split it at the blank.
 */
#include <string.h>

#include "prefix.h"

#define MAX_SHEBANG 127

static size_t count_hits(const char *s, size_t n, const char *ph, size_t pl)
{
	size_t k = 0;
	for (const char *h; n >= pl && (h = memmem(s, n, ph, pl));) {
		k++;
		n -= (size_t)(h - s) + pl;
		s = h + pl;
	}
	return k;
}

/* `data` is the original text, `out` its replaced form; rewrites out's shebang if needed. */
static void fix_shebang(const char *data, size_t len, const char *ph, const char *prefix,
                        struct menv_buf *out)
{
	size_t pl = strlen(ph), nl = strlen(prefix);
	const char *eol = memchr(data, '\n', len);
	size_t l1 = eol ? (size_t)(eol - data) : len;
	const char *oeol = memchr(out->buf, '\n', out->len);
	size_t l2 = oeol ? (size_t)(oeol - out->buf) : out->len;

	if (!memmem(data, l1, ph, pl))
		return;
	if (l2 <= MAX_SHEBANG && !strpbrk(prefix, " \t"))
		return;
	size_t i = 2;
	while (i < l1 && (data[i] == ' ' || data[i] == '\t'))
		i++;
	size_t j = i;
	while (j < l1 && data[j] != ' ' && data[j] != '\t' && data[j] != '\r')
		j++;
	if (j == i || !memmem(data + i, j - i, ph, pl))
		return; /* the placeholder is in the arguments only */
	const char *name = data + i;
	for (size_t k = i; k < j; k++)
		if (data[k] == '/')
			name = data + k + 1;
	size_t namelen = (size_t)(data + j - name);
	if (!namelen || (namelen == 3 && !memcmp(name, "env", 3)))
		return;
	/* where the interpreter ends in the replaced line */
	size_t newint = (j - i) + count_hits(data + i, j - i, ph, pl) * nl -
	                count_hits(data + i, j - i, ph, pl) * pl;
	size_t rest = i + newint;
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, "#!/usr/bin/env ");
	menv_buf_add(&b, name, namelen);
	menv_buf_add(&b, out->buf + rest, out->len - rest);
	menv_buf_release(out);
	*out = b;
}

int menv_prefix_replace(const char *data, size_t len, const char *placeholder, const char *prefix,
                        bool binary, struct menv_buf *out, struct menv_error *err)
{
	size_t pl = strlen(placeholder), nl = strlen(prefix);
	size_t i = 0;

	if (pl == 0)
		return menv_error_set(err, MENV_EPARSE, "empty prefix placeholder");
	if (binary && nl > pl)
		return menv_error_set(err, MENV_EUNSUPPORTED,
		                      "prefix '%s' is longer than the %zu-byte placeholder of a "
		                      "binary file",
		                      prefix, pl);
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
	if (!binary && len > 2 && data[0] == '#' && data[1] == '!')
		fix_shebang(data, len, placeholder, prefix, out);
	return 0;
}
