/*
 * channel.c - channel names and URLs (CEP-26): a name is resolved against channel_alias, a
 * path becomes a file:// URL, and a URL under the alias is shown by its short name, as conda
 * does ("conda-forge", "extra").
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "specs.h"

static const char *const known_subdirs[] = {
	"noarch", "linux-32", "linux-64", "linux-aarch64", "linux-armv6l", "linux-armv7l",
	"linux-ppc64", "linux-ppc64le", "linux-riscv64", "linux-s390x", "osx-64", "osx-arm64",
	"win-32", "win-64", "win-arm64", "zos-z", "emscripten-wasm32", "wasi-wasm32",
};

static bool is_known_subdir(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(known_subdirs) / sizeof(*known_subdirs); i++)
		if (strlen(known_subdirs[i]) == n && !strncmp(known_subdirs[i], s, n))
			return true;
	return false;
}

static bool has_scheme(const char *s)
{
	const char *p = strstr(s, "://");
	if (!p || p == s)
		return false;
	for (const char *q = s; q < p; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '+'))
			return false;
	return true;
}

static bool is_path(const char *s)
{
	return s[0] == '/' || s[0] == '~' || !strncmp(s, "./", 2) || !strncmp(s, "../", 3) ||
	       !strcmp(s, ".") || !strcmp(s, "..");
}

/* Lexically normalises an absolute path: removes "//", "/./" and resolves "/../". */
static char *normalize_path(const char *abs)
{
	char *out = menv_xmalloc(strlen(abs) + 2);
	size_t o = 0;
	const char *p = abs;

	while (*p) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - p);
		if (n == 0)
			break;
		if (n == 1 && p[0] == '.') {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

static char *path_to_url(const char *s)
{
	char *abs, *norm, *url;

	if (s[0] == '~') {
		const char *h = getenv("HOME");
		abs = menv_xasprintf("%s%s", h ? h : "", s + 1);
	} else if (s[0] == '/') {
		abs = menv_xstrdup(s);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			strcpy(cwd, "/");
		abs = menv_xasprintf("%s/%s", cwd, s);
	}
	norm = normalize_path(abs);
	url = menv_xasprintf("file://%s", norm);
	free(abs);
	free(norm);
	return url;
}

int menv_channel_parse(const char *s, const struct menv_config *cfg, struct menv_channel **out,
		       struct menv_error *err)
{
	struct menv_channel *c;
	char *url;
	size_t n;

	*out = NULL;
	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0)
		return menv_error_set(err, MENV_EPARSE, "empty channel name");
	url = menv_xstrndup(s, n);
	if (strchr(url, ' ') || strstr(url, "::")) {
		menv_error_set(err, MENV_EPARSE, "invalid channel '%s'", url);
		free(url);
		return MENV_EPARSE;
	}

	c = menv_xcalloc(1, sizeof(*c));
	if (has_scheme(url)) {
		c->base_url = url;
	} else if (is_path(url)) {
		c->base_url = path_to_url(url);
		free(url);
	} else {
		/* a name, possibly with a label: "conda-forge", "pytorch/label/nightly" */
		c->base_url = menv_xasprintf("%s/%s", cfg->channel_alias, url);
		free(url);
	}
	/* drop trailing slashes and a trailing subdir */
	n = strlen(c->base_url);
	while (n > 0 && c->base_url[n - 1] == '/')
		c->base_url[--n] = '\0';
	char *slash = strrchr(c->base_url, '/');
	if (slash && slash > strstr(c->base_url, "://") + 2 &&
	    is_known_subdir(slash + 1, strlen(slash + 1)))
		*slash = '\0';

	/* the name conda shows: the part after the alias, else the whole URL */
	size_t al = strlen(cfg->channel_alias);
	if (!strncmp(c->base_url, cfg->channel_alias, al) && c->base_url[al] == '/' &&
	    c->base_url[al + 1])
		c->name = menv_xstrdup(c->base_url + al + 1);
	else
		c->name = menv_xstrdup(c->base_url);
	*out = c;
	return 0;
}

void menv_channel_free(struct menv_channel *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->base_url);
	free(c);
}

void menv_channels_expand(const struct menv_strvec *in, const struct menv_config *cfg,
			  struct menv_strvec *out)
{
	for (size_t i = 0; i < in->n; i++) {
		const char *c = in->v[i];
		if (!strcmp(c, "nodefaults"))
			continue;
		if (!strcmp(c, "defaults")) {
			for (size_t j = 0; j < cfg->default_channels.n; j++)
				if (!menv_strvec_contains(out, cfg->default_channels.v[j]))
					menv_strvec_push(out, cfg->default_channels.v[j]);
			continue;
		}
		if (!menv_strvec_contains(out, c))
			menv_strvec_push(out, c);
	}
}
