/*
 * jsonscan.c - one linear pass over a repodata.json (CEP-36) that finds where each package
 * record starts, without building a JSON tree: the solver keeps libsolv's solvables for every
 * record and parses the JSON of only the records a solve picks.
 */
#include <string.h>

#include "jsonscan.h"

/* Skips a JSON string starting at s[i] == '"'; returns the index after the closing quote. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
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
			cb(ud, MENV_JSONSCAN_INFO, NULL, 0, i);
			i = skip_value(s, n, i);
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
				cb(ud, section == 1 ? MENV_JSONSCAN_TARBZ2 : MENV_JSONSCAN_CONDA,
				   s + fs, fl, i);
				i = skip_value(s, n, i);
				i = skip_ws(s, n, i);
				if (i < n && s[i] == ',')
					i++;
			}
		} else {
			i = skip_value(s, n, i);
		}
		i = skip_ws(s, n, i);
		if (i < n && s[i] == ',')
			i++;
	}
}
