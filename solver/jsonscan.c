/*
 * jsonscan.c - one linear pass over a repodata.json (CEP-36) that finds where each package
 * record starts and ends and its name, without building a JSON tree: the solver loads the
 * records of the names a request reaches (sparse load) and parses the JSON of only the
 * records a solve picks.
 */
#include <string.h>

#include "jsonscan.h"

/* Skips a JSON string starting at s[i] == '"'; returns the index after the closing quote. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n;) {
		const char *q = memchr(s + i, '"', n - i);
		if (!q)
			return n;
		size_t j = (size_t)(q - s), k = j;
		while (k > i && s[k - 1] == '\\')
			k--;
		if ((j - k) % 2 == 0)
			return j + 1;
		i = j + 1; /* an escaped quote */
	}
	return n;
}

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
		i++;
	return i;
}

/* Skips any JSON value starting at s[i]; returns the index after it. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return n;
	if (s[i] == '"')
		return skip_string(s, n, i);
	if (s[i] == '{' || s[i] == '[') {
		int depth = 0;
		while (i < n) {
			char c = s[i];
			if (c == '"') {
				i = skip_string(s, n, i);
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return i + 1;
			i++;
		}
		return n;
	}
	while (i < n && !strchr(",}] \n\r\t", s[i]))
		i++;
	return i;
}

/* Walks the top-level keys of the object at s[i] == '{': `on_key` sees each key (its bytes
 * and length) and the index of its value, and returns the index after the value, or 0 to
 * have it skipped. Returns the index after the object. */
typedef size_t (*key_fn)(void *ud, const char *s, size_t n, const char *key, size_t kl, size_t vi);
static size_t walk_object(const char *s, size_t n, size_t i, key_fn on_key, void *ud)
{
	if (i >= n || s[i] != '{')
		return skip_value(s, n, i);
	for (i++;;) {
		i = skip_ws(s, n, i);
		if (i >= n)
			return n;
		if (s[i] == '}')
			return i + 1;
		if (s[i] == ',') {
			i++;
			continue;
		}
		if (s[i] != '"')
			return skip_value(s, n, i); /* not JSON: the reader will say so */
		size_t ks = i + 1;
		i = skip_string(s, n, i);
		size_t kl = i - 1 - ks;
		i = skip_ws(s, n, i);
		if (i >= n || s[i] != ':')
			return n;
		i = skip_ws(s, n, i + 1);
		size_t e = on_key(ud, s, n, s + ks, kl, i);
		i = e ? e : skip_value(s, n, i);
	}
}

struct name_ctx {
	const char *name;
	size_t namelen;
};

static size_t on_record_key(void *ud, const char *s, size_t n, const char *key, size_t kl,
                            size_t vi)
{
	struct name_ctx *c = ud;
	if (kl != 4 || memcmp(key, "name", 4) || vi >= n || s[vi] != '"')
		return 0;
	size_t e = skip_string(s, n, vi);
	c->name = s + vi + 1;
	c->namelen = e - vi - 2;
	if (memchr(c->name, '\\', c->namelen))
		c->name = NULL; /* an escape: the reader decides what the name is */
	return e;
}

int menv_jsonscan_repodata(const char *s, size_t n, menv_jsonscan_cb cb, void *ud)
{
	size_t i = skip_ws(s, n, 0);
	if (i >= n || s[i] != '{')
		return -1;
	i++;
	for (;;) {
		i = skip_ws(s, n, i);
		if (i < n && s[i] == '}')
			return 0;
		if (i >= n || s[i] != '"')
			return -1;
		size_t ks = i + 1;
		i = skip_string(s, n, i);
		size_t kl = i - 1 - ks;
		i = skip_ws(s, n, i);
		if (i >= n || s[i] != ':')
			return -1;
		i = skip_ws(s, n, i + 1);
		int section = 0;
		if (kl == 8 && !memcmp(s + ks, "packages", 8))
			section = 1;
		else if (kl == 14 && !memcmp(s + ks, "packages.conda", 14))
			section = 2;
		else if (kl == 4 && !memcmp(s + ks, "info", 4))
			section = 3;
		if (section == 3) {
			struct menv_jsonscan_item it = {.kind = MENV_JSONSCAN_INFO, .off = i};
			i = skip_value(s, n, i);
			it.end = i;
			cb(ud, &it);
		} else if (section && i < n && s[i] == '{') {
			i++;
			for (;;) {
				i = skip_ws(s, n, i);
				if (i < n && s[i] == '}') {
					i++;
					break;
				}
				if (i >= n || s[i] != '"')
					return -1;
				size_t fs = i + 1;
				i = skip_string(s, n, i);
				size_t fl = i - 1 - fs;
				i = skip_ws(s, n, i);
				if (i >= n || s[i] != ':')
					return -1;
				i = skip_ws(s, n, i + 1);
				struct name_ctx nc = {0};
				struct menv_jsonscan_item it = {
				        .kind = section == 1 ? MENV_JSONSCAN_TARBZ2
				                             : MENV_JSONSCAN_CONDA,
				        .key = s + fs,
				        .keylen = fl,
				        .off = i};
				i = walk_object(s, n, i, on_record_key, &nc);
				it.end = i;
				it.name = nc.name;
				it.namelen = nc.namelen;
				cb(ud, &it);
				i = skip_ws(s, n, i);
				if (i < n && s[i] == ',')
					i++;
			}
		} else {
			if (section) {
				struct menv_jsonscan_item it = {.kind = MENV_JSONSCAN_OTHER,
				                                .off = i};
				cb(ud, &it);
			}
			i = skip_value(s, n, i);
		}
		i = skip_ws(s, n, i);
		if (i < n && s[i] == ',')
			i++;
	}
}

struct deps_ctx {
	char *buf;
	size_t cap;
	void (*cb)(void *ud, const char *name);
	void *ud;
	bool ok;
	struct name_ctx name;
};

/* The name of one MatchSpec string s[0..n) as libsolv's pool_conda_matchspec reads it. */
static void dep_name(struct deps_ctx *c, const char *s, size_t n)
{
	if (memchr(s, '\\', n)) {
		c->ok = false;
		return;
	}
	for (size_t k = n; k > 0; k--)
		if (s[k - 1] == ':') {
			s += k;
			n -= k;
			break;
		}
	size_t l = 0;
	while (l < n && !strchr(" =<>!~", s[l]))
		l++;
	if (!l || l >= c->cap || s[0] == '^' || memchr(s, '*', l)) {
		c->ok = false;
		return;
	}
	for (size_t k = 0; k < l; k++)
		c->buf[k] = s[k] >= 'A' && s[k] <= 'Z' ? (char)(s[k] + 'a' - 'A') : s[k];
	c->buf[l] = '\0';
	c->cb(c->ud, c->buf);
}

static size_t on_dep_key(void *ud, const char *s, size_t n, const char *key, size_t kl, size_t vi)
{
	struct deps_ctx *c = ud;
	if (kl == 4 && !memcmp(key, "name", 4))
		return on_record_key(&c->name, s, n, key, kl, vi);
	bool deps = (kl == 7 && !memcmp(key, "depends", 7)) ||
	            (kl == 8 && !memcmp(key, "requires", 8)) ||
	            (kl == 10 && !memcmp(key, "constrains", 10));
	if (!deps || vi >= n || s[vi] != '[')
		return 0;
	size_t i = vi + 1;
	for (;;) {
		i = skip_ws(s, n, i);
		if (i >= n)
			return n;
		if (s[i] == ']')
			return i + 1;
		if (s[i] == ',') {
			i++;
			continue;
		}
		if (s[i] != '"') {
			i = skip_value(s, n, i); /* libsolv's reader takes strings only */
			continue;
		}
		size_t e = skip_string(s, n, i);
		dep_name(c, s + i + 1, e - i - 2);
		i = e;
	}
}

bool menv_jsonscan_dep_names(const char *s, size_t n, char *buf, size_t cap,
                             void (*cb)(void *ud, const char *name), void *ud, const char **name,
                             size_t *namelen)
{
	struct deps_ctx c = {buf, cap, cb, ud, true, {NULL, 0}};
	walk_object(s, n, skip_ws(s, n, 0), on_dep_key, &c);
	*name = c.name.name;
	*namelen = c.name.name ? c.name.namelen : 0;
	return c.ok;
}
