/*
 * matchspec.c - MatchSpec parsing and canonical strings (CEP-29), following conda's
 * reading of the spec string: brackets, `channel[/subdir]::`, the name, then the version and
 * build split where a blank or `=` that does not follow an operator separates them. Blanks
 * that follow an operator or comma belong to the version (`python > 3.10`, BR-001).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "specs.h"

static char *trim(const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return menv_xstrndup(s, n);
}

static bool is_op_char(char c)
{
	return c == '=' || c == '!' || c == '|' || c == ',' || c == '<' || c == '>' || c == '~';
}

static void set_field(char **slot, char *v)
{
	free(*slot);
	*slot = v;
}

/* key=value pairs of a bracket, values optionally quoted with ' or ". */
static int parse_brackets(struct menv_matchspec *ms, const char *s, const char *spec,
			  struct menv_error *err)
{
	const char *p = s;

	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		const char *k = p;
		while (*p && *p != '=' && *p != ',')
			p++;
		if (*p != '=')
			return menv_error_set(err, MENV_EPARSE,
					      "invalid match spec '%s': bracket entry without '='", spec);
		char *key = trim(k, (size_t)(p - k));
		p++;
		while (*p == ' ')
			p++;
		char *val;
		if (*p == '\'' || *p == '"') {
			char q = *p++;
			const char *v = p;
			while (*p && *p != q)
				p++;
			if (!*p) {
				free(key);
				return menv_error_set(err, MENV_EPARSE,
						      "invalid match spec '%s': unterminated quote", spec);
			}
			val = menv_xstrndup(v, (size_t)(p - v));
			p++;
		} else {
			const char *v = p;
			while (*p && *p != ',')
				p++;
			val = trim(v, (size_t)(p - v));
		}
		if (!strcmp(key, "version")) {
			/* blanks inside a bracket version are insignificant */
			char *d = val;
			for (char *q = val; *q; q++)
				if (*q != ' ')
					*d++ = *q;
			*d = '\0';
			set_field(&ms->version, val);
		} else if (!strcmp(key, "build"))
			set_field(&ms->build, val);
		else if (!strcmp(key, "build_number"))
			set_field(&ms->build_number, val);
		else if (!strcmp(key, "channel"))
			set_field(&ms->channel, val);
		else if (!strcmp(key, "subdir"))
			set_field(&ms->subdir, val);
		else if (!strcmp(key, "md5"))
			set_field(&ms->md5, val);
		else if (!strcmp(key, "sha256"))
			set_field(&ms->sha256, val);
		else if (!strcmp(key, "fn"))
			set_field(&ms->fn, val);
		else if (!strcmp(key, "url"))
			set_field(&ms->url, val);
		else if (!strcmp(key, "track_features"))
			set_field(&ms->track_features, val);
		else if (!strcmp(key, "license"))
			set_field(&ms->license, val);
		else if (!strcmp(key, "name"))
			set_field(&ms->name, val);
		else
			free(val); /* features, optional, target, namespace: no effect on matching */
		free(key);
	}
	return 0;
}

/* Splits "version[ build]" as conda does: the earliest blank or '=' that is not preceded by
 * an operator character and is followed only by build characters. */
static void split_version_build(const char *s, char **version, char **build)
{
	size_t n = strlen(s);

	*version = NULL;
	*build = NULL;
	for (size_t i = 1; i + 1 < n; i++) {
		if (s[i] != ' ' && s[i] != '=')
			continue;
		if (is_op_char(s[i - 1]))
			continue;
		bool ok = true;
		for (size_t j = i + 1; j < n && ok; j++)
			ok = !(s[j] == '-' || s[j] == '=' || s[j] == ',' || s[j] == '|' ||
			       s[j] == '<' || s[j] == '>' || s[j] == '~');
		if (!ok)
			continue;
		char *b = trim(s + i + 1, n - i - 1);
		if (!*b) {
			free(b);
			continue;
		}
		*build = b;
		n = i;
		break;
	}
	char *v = menv_xmalloc(n + 1), *d = v;
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ')
			*d++ = s[i];
	*d = '\0';
	*version = v;
}

static bool valid_version(const char *v)
{
	bool seen = false;
	for (const char *p = v; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (isalnum(c) || c == '*')
			seen = true;
		else if (!strchr("._+!=<>~,|()-", c))
			return false;
	}
	if (!seen)
		return false;
	/* an operator must be followed by a version */
	size_t n = strlen(v);
	return !(n && strchr("=<>!~,|", v[n - 1]));
}

static int parse_url_spec(struct menv_matchspec *ms, const char *s, struct menv_error *err)
{
	const char *base = strrchr(s, '/');
	const char *fn = base ? base + 1 : s;
	size_t n = strlen(fn);
	size_t ext = n > 6 && !strcmp(fn + n - 6, ".conda") ? 6 : 8;
	char *stem = menv_xstrndup(fn, n - ext);
	char *b = strrchr(stem, '-');
	char *v = b ? (*b = '\0', strrchr(stem, '-')) : NULL;

	if (!b || !v) {
		free(stem);
		return menv_error_set(err, MENV_EPARSE, "invalid package file name in '%s'", s);
	}
	*v = '\0';
	ms->name = menv_xstrdup(stem);
	ms->version = menv_xstrdup(v + 1);
	ms->build = menv_xstrdup(b + 1);
	ms->fn = menv_xstrdup(fn);
	ms->url = menv_xstrdup(s);
	free(stem);
	return 0;
}

int menv_matchspec_parse(const char *in, struct menv_matchspec **out, struct menv_error *err)
{
	struct menv_matchspec *ms = menv_xcalloc(1, sizeof(*ms));
	char *s, *p, *rest = NULL;
	const char *hash;
	int rc = 0;

	*out = NULL;
	hash = strstr(in, " #");
	s = trim(in, hash ? (size_t)(hash - in) : strlen(in));
	if (s[0] == '#')
		s[0] = '\0';
	if (!*s) {
		rc = menv_error_set(err, MENV_EPARSE, "empty match spec");
		goto out;
	}
	size_t n = strlen(s);
	if ((n > 6 && !strcmp(s + n - 6, ".conda")) || (n > 8 && !strcmp(s + n - 8, ".tar.bz2"))) {
		if (strstr(s, "://") || s[0] == '/' || s[0] == '.') {
			rc = parse_url_spec(ms, s, err);
			goto out;
		}
	}
	/* brackets */
	p = strchr(s, '[');
	if (p) {
		char *close = strrchr(s, ']');
		if (!close || close < p || close[1] != '\0') {
			rc = menv_error_set(err, MENV_EPARSE, "invalid match spec '%s': unbalanced "
					    "brackets", in);
			goto out;
		}
		*close = '\0';
		rc = parse_brackets(ms, p + 1, in, err);
		if (rc)
			goto out;
		*p = '\0';
	}
	/* channel[/subdir]:: */
	char *body = s;
	char *cc = NULL;
	for (char *q = strstr(s, "::"); q; q = strstr(q + 2, "::"))
		cc = q;
	if (cc) {
		*cc = '\0';
		char *ch = trim(s, strlen(s));
		body = cc + 2;
		char *slash = strrchr(ch, '/');
		if (slash && (!strncmp(slash + 1, "linux-", 6) || !strcmp(slash + 1, "noarch") ||
			      !strncmp(slash + 1, "osx-", 4) || !strncmp(slash + 1, "win-", 4))) {
			set_field(&ms->subdir, menv_xstrdup(slash + 1));
			*slash = '\0';
		}
		if (!*ch) {
			free(ch);
			rc = menv_error_set(err, MENV_EPARSE, "invalid match spec '%s': empty channel",
					    in);
			goto out;
		}
		if (ms->channel)
			free(ch); /* [channel=...] wins */
		else
			ms->channel = ch;
	}
	while (*body == ' ')
		body++;
	/* name */
	p = body;
	while (*p && *p != ' ' && *p != '=' && *p != '<' && *p != '>' && *p != '!' && *p != '~')
		p++;
	if (p == body && !ms->name) {
		rc = menv_error_set(err, MENV_EPARSE, "invalid match spec '%s': no package name", in);
		goto out;
	}
	if (p > body) /* the positional name wins over [name=...] */
		set_field(&ms->name, menv_xstrndup(body, (size_t)(p - body)));
	for (char *q = ms->name; *q; q++) {
		unsigned char c = (unsigned char)*q;
		if (!(isalnum(c) || c == '_' || c == '-' || c == '.' || c == '*')) {
			rc = menv_error_set(err, MENV_EPARSE,
					    "invalid match spec '%s': bad character '%c' in name", in,
					    c);
			goto out;
		}
		*q = (char)tolower(c);
	}
	rest = trim(p, strlen(p));
	if (*rest) {
		char *version, *build;
		split_version_build(rest, &version, &build);
		if (version[0] == '=' && version[1] == '=' && !build) {
			memmove(version, version + 2, strlen(version + 2) + 1);
		} else if (version[0] == '=' && version[1] != '=') {
			const char *t = version + 1;
			if (!strpbrk(t, "=,|")) {
				char *nv = !build && *t && t[strlen(t) - 1] != '*'
						   ? menv_xasprintf("%s*", t)
						   : menv_xstrdup(t);
				free(version);
				version = nv;
			}
		}
		if (!valid_version(version)) {
			free(version);
			free(build);
			rc = menv_error_set(err, MENV_EPARSE, "invalid match spec '%s': bad version "
					    "'%s'", in, rest);
			goto out;
		}
		if (!strcmp(version, "*") && !build) {
			free(version); /* `pkg *` and `pkg=*` mean any version */
			version = NULL;
		}
		/* bracket values take precedence over the positional ones, as in conda */
		if (version && !ms->version)
			ms->version = version;
		else
			free(version);
		if (build && !ms->build)
			ms->build = build;
		else
			free(build);
	}
out:
	free(rest);
	free(s);
	if (rc) {
		menv_matchspec_free(ms);
		return rc;
	}
	*out = ms;
	return 0;
}

void menv_matchspec_free(struct menv_matchspec *ms)
{
	if (!ms)
		return;
	free(ms->channel);
	free(ms->subdir);
	free(ms->name);
	free(ms->version);
	free(ms->build);
	free(ms->build_number);
	free(ms->md5);
	free(ms->sha256);
	free(ms->fn);
	free(ms->url);
	free(ms->track_features);
	free(ms->license);
	free(ms);
}

char *menv_matchspec_str(const struct menv_matchspec *ms)
{
	struct menv_buf b = MENV_BUF_INIT;
	const char *v = ms->version;

	menv_buf_adds(&b, ms->name ? ms->name : "*");
	if (v || ms->build) {
		/* an operator-less version is written with a blank: "zlib 1.3.*" */
		if (v && strchr("<>=!~", v[0]))
			menv_buf_adds(&b, v);
		else {
			menv_buf_addch(&b, ' ');
			menv_buf_adds(&b, v ? v : "*");
		}
		if (ms->build) {
			menv_buf_addch(&b, ' ');
			menv_buf_adds(&b, ms->build);
		}
	}
	return menv_buf_detach(&b);
}

char *menv_matchspec_str_full(const struct menv_matchspec *ms)
{
	char *s = menv_matchspec_str(ms);
	struct menv_buf b = MENV_BUF_INIT;
	bool open = false;

	if (ms->channel) {
		menv_buf_adds(&b, ms->channel);
		if (ms->subdir)
			menv_buf_addf(&b, "/%s", ms->subdir);
		menv_buf_adds(&b, "::");
	}
	menv_buf_adds(&b, s);
	free(s);
	const char *keys[] = { "build_number", "md5", "sha256", "fn", "track_features" };
	const char *vals[] = { ms->build_number, ms->md5, ms->sha256, ms->fn, ms->track_features };
	for (size_t i = 0; i < 5; i++) {
		if (!vals[i])
			continue;
		menv_buf_adds(&b, open ? ", " : "[");
		menv_buf_addf(&b, "%s=%s", keys[i], vals[i]);
		open = true;
	}
	if (open)
		menv_buf_addch(&b, ']');
	return menv_buf_detach(&b);
}
