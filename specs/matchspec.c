/*
 * matchspec.c - MatchSpec parsing and canonical strings (CEP-29), following conda's
 * reading of the spec string: brackets, `channel[/subdir]::`, the name, then the version and
 * build split where a blank or `=` that does not follow an operator separates them. Blanks
 * that follow an operator or comma belong to the version (`python > 3.10`, BR-001).
 */
#include <ctype.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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

static int apply_key(struct menv_matchspec *ms, const char *key, char *val)
{
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
	else if (!strcmp(key, "license_family"))
		set_field(&ms->license_family, val);
	else if (!strcmp(key, "name"))
		set_field(&ms->name, val);
	else
		free(val); /* features, optional, target, namespace: no effect on matching */
	return 0;
}

/* The inside of a bracket: `key=value` entries separated by commas or blanks, values bare
 * (up to a comma or blank) or quoted with ' or ". Entries that are not `key=` (a bare word,
 * `key = value` with blanks) are ignored as conda ignores them; an empty value is an error. */
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
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (p == k || *p != '=') {
			/* not a key=value entry: skip this word */
			while (*p && *p != ',' && *p != ' ')
				p++;
			continue;
		}
		char *key = menv_xstrndup(k, (size_t)(p - k));
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
				                      "invalid match spec '%s': unterminated quote",
				                      spec);
			}
			val = menv_xstrndup(v, (size_t)(p - v));
			p++;
		} else {
			const char *v = p;
			while (*p && *p != ',' && *p != ' ')
				p++;
			val = menv_xstrndup(v, (size_t)(p - v));
		}
		if (!*val) {
			free(val);
			int rc = menv_error_set(err, MENV_EPARSE,
			                        "invalid match spec '%s': empty value for '%s'",
			                        spec, key);
			free(key);
			return rc;
		}
		apply_key(ms, key, val);
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
	size_t ext = n >= 6 && !strcmp(fn + n - 6, ".conda") ? 6 : 8;
	if (n <= ext) /* "https://x/.conda": the file name is all extension (fuzzer's find) */
		return menv_error_set(err, MENV_EPARSE, "invalid package file name in '%s'", s);
	char *stem = menv_xstrndup(fn, n - ext);
	char *b = strrchr(stem, '-');
	char *v = b ? (*b = '\0', strrchr(stem, '-')) : NULL;

	if (!b || !v) {
		free(stem);
		return menv_error_set(err, MENV_EPARSE, "invalid package file name in '%s'", s);
	}
	*v = '\0';
	ms->fn = menv_xstrdup(fn);
	if (strstr(s, "://")) {
		ms->url = menv_xstrdup(s);
	} else if (s[0] == '/') {
		ms->url = menv_xasprintf("file://%s", s);
	} else {
		/* a relative path: conda keeps only the file (as URL) and matches any name */
		char cwd[4096];
		if (!getcwd(cwd, sizeof(cwd)))
			strcpy(cwd, ".");
		ms->url = menv_xasprintf("file://%s/%s", cwd,
		                         s + (s[0] == '.' && s[1] == '/' ? 2 : 0));
		ms->name = menv_xstrdup("*");
		free(stem);
		return 0;
	}
	ms->name = menv_xstrdup(stem);
	ms->version = menv_xstrdup(v + 1);
	ms->build = menv_xstrdup(b + 1);
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
	size_t bad;
	if (!menv_utf8_valid(in, strlen(in), &bad)) {
		/* jansson (history, --json, lockfiles) takes nothing else; the message escapes it */
		rc = menv_error_set(err, MENV_EPARSE,
		                    "invalid match spec '%s': not valid UTF-8 at byte %zu", in,
		                    bad + 1);
		s = NULL;
		goto out;
	}
	if (isspace((unsigned char)in[0])) {
		/* conda refuses a spec that starts with a blank */
		rc = menv_error_set(err, MENV_EPARSE, "invalid match spec '%s': leading blank", in);
		s = NULL;
		goto out;
	}
	hash = strstr(in, " #");
	s = trim(in, hash ? (size_t)(hash - in) : strlen(in));
	if (s[0] == '#')
		s[0] = '\0';
	if (!*s) {
		if (*in) {
			rc = menv_error_set(err, MENV_EPARSE, "empty match spec");
			goto out;
		}
		ms->name = menv_xstrdup("*"); /* conda reads "" as "*" */
		goto out;
	}
	size_t n = strlen(s);
	if ((n > 6 && !strcmp(s + n - 6, ".conda")) || (n > 8 && !strcmp(s + n - 8, ".tar.bz2"))) {
		if (strstr(s, "://") || s[0] == '/' || s[0] == '.') {
			rc = parse_url_spec(ms, s, err);
			goto out;
		}
	}
	/* a trailing "(target=..., optional)" group carries nothing that matches */
	if (s[n - 1] == ')') {
		char *open = strrchr(s, '(');
		char *br = strrchr(s, ']');
		if (open && br && br + 1 == open)
			*open = '\0', n = strlen(s);
	}
	/* the bracket group at the end; brackets left in the name part are an error */
	if (s[n - 1] == ']') {
		char *open = strrchr(s, '[');
		if (!open) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "invalid match spec '%s': unbalanced "
			                    "brackets",
			                    in);
			goto out;
		}
		s[n - 1] = '\0';
		rc = parse_brackets(ms, open + 1, in, err);
		if (rc)
			goto out;
		*open = '\0';
	}
	{
		char *cc = strstr(s, "::");
		char *tail = cc ? cc + 2 : s;
		if (strpbrk(tail, "[]") || (!cc && strpbrk(s, "[]"))) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "invalid match spec '%s': misplaced "
			                    "brackets",
			                    in);
			goto out;
		}
	}
	/* channel:namespace:name and namespace:name (single colons) */
	if (!strstr(s, "::") && strchr(s, ':') && !strstr(s, "://")) {
		char *c1 = strchr(s, ':'), *c2 = strchr(c1 + 1, ':');
		if (c2) {
			*c1 = '\0';
			if (!ms->channel && *s)
				ms->channel = menv_xstrdup(s);
			memmove(s, c2 + 1, strlen(c2 + 1) + 1);
		} else {
			memmove(s, c1 + 1, strlen(c1 + 1) + 1);
		}
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
			rc = menv_error_set(err, MENV_EPARSE,
			                    "invalid match spec '%s': empty channel", in);
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
		rc = menv_error_set(err, MENV_EPARSE, "invalid match spec '%s': no package name",
		                    in);
		goto out;
	}
	if (p > body) /* the positional name wins over [name=...] */
		set_field(&ms->name, menv_xstrndup(body, (size_t)(p - body)));
	if (ms->name[0] == '-' || strstr(ms->name, "--")) {
		rc = menv_error_set(err, MENV_EPARSE,
		                    "invalid match spec '%s': invalid package name "
		                    "'%s'",
		                    in, ms->name);
		goto out;
	}
	for (char *q = ms->name; *q; q++) {
		unsigned char c = (unsigned char)*q;
		if (!(isalnum(c) || c == '_' || c == '-' || c == '.' || c == '*')) {
			/* the whole character, not its first byte (which alone is not UTF-8) */
			size_t cl = menv_utf8_seq(q, strlen(q));
			const char *at = strstr(in, ms->name);
			rc = menv_error_set(
			        err, MENV_EPARSE,
			        "invalid match spec '%s': bad character '%.*s' in the name at "
			        "column %d",
			        in, (int)(cl ? cl : 1), q,
			        (int)((at ? at - in : 0) + (q - ms->name)) + 1);
			goto out;
		}
		*q = (char)tolower(c);
	}
	rest = trim(p, strlen(p));
	if (!strcmp(rest, "="))
		rest[0] = '\0'; /* "numpy=": any version, as conda reads it */
	if (strpbrk(rest, "()")) {
		rc = menv_error_set(err, MENV_EPARSE,
		                    "invalid match spec '%s': parentheses are only "
		                    "allowed inside [version=...]",
		                    in);
		goto out;
	}
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
			rc = menv_error_set(err, MENV_EPARSE,
			                    "invalid match spec '%s': bad version "
			                    "'%s'",
			                    in, rest);
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
	if (ms->build_number && strcmp(ms->build_number, "*")) {
		/* a number, optionally after one relation: 3, >=3, <2, !=1 */
		const char *b = ms->build_number;
		b += strspn(b, "<>=!");
		if ((size_t)(b - ms->build_number) > 2 || !*b ||
		    strspn(b, "0123456789") != strlen(b)) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "invalid match spec '%s': build_number "
			                    "'%s' is not a number",
			                    in, ms->build_number);
			goto out;
		}
	}
	if (ms->version && strcmp(ms->version, "*")) {
		rc = menv_version_spec_parse(ms->version, &ms->vspec, err);
		if (rc) {
			menv_error_prefix(err, "invalid match spec '%s'", in);
			goto out;
		}
	}
	if (ms->build && ms->build[0] == '^' && ms->build[strlen(ms->build) - 1] != '$') {
		rc = menv_error_set(err, MENV_EPARSE,
		                    "invalid match spec '%s': a build regex must "
		                    "end with '$'",
		                    in);
		goto out;
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
	free(ms->license_family);
	menv_version_spec_free(ms->vspec);
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
	/* a subdir without a channel goes in brackets, as conda's MatchSpec writes it */
	const char *keys[] = {"subdir", "build_number", "md5", "sha256", "fn", "track_features"};
	const char *vals[] = {ms->channel ? NULL : ms->subdir,
	                      ms->build_number,
	                      ms->md5,
	                      ms->sha256,
	                      ms->fn,
	                      ms->track_features};
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
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

/* one bracket item of conda's MatchSpec.__str__: quoted when the value holds ", =" */
static void conda_bracket(struct menv_buf *b, bool *open, const char *key, const char *val,
                          const char *quote_if)
{
	menv_buf_adds(b, *open ? "," : "[");
	*open = true;
	if (strpbrk(val, quote_if))
		menv_buf_addf(b, "%s='%s'", key, val);
	else
		menv_buf_addf(b, "%s=%s", key, val);
}

char *menv_matchspec_conda_str(const struct menv_matchspec *ms)
{
	struct menv_buf b = MENV_BUF_INIT, br = MENV_BUF_INIT;
	bool open = false, exact = false;
	const char *v = ms->version && strcmp(ms->version, "*") ? ms->version : NULL;
	const char *bs = ms->build && strcmp(ms->build, "*") ? ms->build : NULL;

	if (ms->channel) {
		menv_buf_adds(&b, ms->channel);
		if (ms->subdir)
			menv_buf_addf(&b, "/%s", ms->subdir);
		menv_buf_adds(&b, "::");
	} else if (ms->subdir) {
		conda_bracket(&br, &open, "subdir", ms->subdir, "");
	}
	menv_buf_adds(&b, ms->name ? ms->name : "*");
	if (v) {
		size_t n = strlen(v);
		if (strpbrk(v, "><$^|,"))
			conda_bracket(&br, &open, "version", v, "><$^|,");
		else if (!strncmp(v, "!=", 2) || !strncmp(v, "~=", 2)) {
			if (bs)
				conda_bracket(&br, &open, "version", v, "!~");
			else
				menv_buf_adds(&b, v);
		} else if (n >= 2 && !strcmp(v + n - 2, ".*"))
			menv_buf_addf(&b, "=%.*s", (int)(n - 2), v);
		else if (v[n - 1] == '*')
			menv_buf_addf(&b, "=%.*s", (int)(n - 1), v);
		else if (!strncmp(v, "==", 2)) {
			menv_buf_adds(&b, v);
			exact = true;
		} else {
			menv_buf_addf(&b, "==%s", v);
			exact = true;
		}
	}
	if (bs) {
		if (strpbrk(bs, "><$^|,"))
			conda_bracket(&br, &open, "build", bs, bs);
		else if (strchr(bs, '*'))
			conda_bracket(&br, &open, "build", bs, "");
		else if (exact)
			menv_buf_addf(&b, "=%s", bs);
		else
			conda_bracket(&br, &open, "build", bs, "");
	}
	const char *keys[] = {"build_number", "track_features", "url", "md5", "sha256",
	                      "license",      "license_family", "fn"};
	const char *vals[] = {ms->build_number, ms->track_features, ms->url, ms->md5, ms->sha256,
	                      ms->license,      ms->license_family, ms->fn};
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		/* conda leaves fn out when url is there, and url when a channel is */
		if (!vals[i] || (i == 7 && ms->url) || (i == 2 && ms->channel))
			continue;
		conda_bracket(&br, &open, keys[i], vals[i], ", =");
	}
	if (open) {
		menv_buf_adds(&b, br.buf);
		menv_buf_addch(&b, ']');
	}
	menv_buf_release(&br);
	return menv_buf_detach(&b);
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* glob (`*`), regex (`^...$`) or exact match of a string field */
static bool str_match(const char *pat, const char *s, bool casefold)
{
	if (!s)
		s = "";
	size_t n = strlen(pat);
	if (n >= 2 && pat[0] == '^' && pat[n - 1] == '$') {
		regex_t re;
		bool m = false;
		if (!regcomp(&re, pat, REG_EXTENDED | REG_NOSUB | (casefold ? REG_ICASE : 0))) {
			m = regexec(&re, s, 0, NULL, 0) == 0;
			regfree(&re);
		}
		return m;
	}
	if (strchr(pat, '*'))
		return fnmatch(pat, s, casefold ? FNM_CASEFOLD : 0) == 0;
	return casefold ? !strcasecmp(pat, s) : !strcmp(pat, s);
}

/* track_features as a set: "mkl,openssl" equals "openssl mkl" */
static bool feature_set_equal(const char *a, const char *b)
{
	char *x = menv_xstrdup(a), *y = menv_xstrdup(b ? b : "");
	char *tx[64], *ty[64], *save;
	size_t nx = 0, ny = 0;
	bool eq = true;

	for (char *t = strtok_r(x, " ,", &save); t && nx < 64; t = strtok_r(NULL, " ,", &save))
		tx[nx++] = t;
	for (char *t = strtok_r(y, " ,", &save); t && ny < 64; t = strtok_r(NULL, " ,", &save))
		ty[ny++] = t;
	for (size_t i = 0; i < nx && eq; i++) {
		bool found = false;
		for (size_t j = 0; j < ny && !found; j++)
			found = !strcmp(tx[i], ty[j]);
		eq = found;
	}
	for (size_t j = 0; j < ny && eq; j++) {
		bool found = false;
		for (size_t i = 0; i < nx && !found; i++)
			found = !strcmp(tx[i], ty[j]);
		eq = found;
	}
	free(x);
	free(y);
	return eq;
}

bool menv_matchspec_build_number_ok(const char *spec, long long have)
{
	const char *b = spec;
	int op = 0; /* 0 ==, 1 >=, 2 <=, 3 >, 4 <, 5 != */
	if (!strncmp(b, ">=", 2))
		op = 1, b += 2;
	else if (!strncmp(b, "<=", 2))
		op = 2, b += 2;
	else if (!strncmp(b, "!=", 2))
		op = 5, b += 2;
	else if (!strncmp(b, "==", 2))
		b += 2;
	else if (*b == '>')
		op = 3, b++;
	else if (*b == '<')
		op = 4, b++;
	else if (*b == '=')
		b++;
	long long want = atoll(b);
	switch (op) {
	case 1: return have >= want;
	case 2: return have <= want;
	case 3: return have > want;
	case 4: return have < want;
	case 5: return have != want;
	default: return have == want;
	}
}

bool menv_matchspec_match_json(const struct menv_matchspec *ms, json_t *rec)
{
	const char *name = jstr(rec, "name"), *version = jstr(rec, "version");
	json_t *bn = json_object_get(rec, "build_number");

	if (!name || !version)
		return false;
	if (ms->name && strcmp(ms->name, "*") && !str_match(ms->name, name, true))
		return false;
	if (ms->vspec && !menv_version_spec_match(ms->vspec, version))
		return false;
	if (ms->build && strcmp(ms->build, "*") && !str_match(ms->build, jstr(rec, "build"), false))
		return false;
	if (ms->build_number && strcmp(ms->build_number, "*") &&
	    !menv_matchspec_build_number_ok(ms->build_number,
	                                    json_is_integer(bn) ? json_integer_value(bn) : 0))
		return false;
	if (ms->subdir && !str_match(ms->subdir, jstr(rec, "subdir"), false))
		return false;
	if (ms->md5 && !str_match(ms->md5, jstr(rec, "md5"), true))
		return false;
	if (ms->sha256 && !str_match(ms->sha256, jstr(rec, "sha256"), true))
		return false;
	if (ms->fn && !str_match(ms->fn, jstr(rec, "fn"), false))
		return false;
	if (ms->license && !str_match(ms->license, jstr(rec, "license"), true))
		return false;
	if (ms->license_family && !str_match(ms->license_family, jstr(rec, "license_family"), true))
		return false;
	if (ms->track_features) {
		json_t *tf = json_object_get(rec, "track_features");
		char *joined = NULL;
		if (json_is_array(tf)) {
			struct menv_buf b = MENV_BUF_INIT;
			size_t i;
			json_t *f;
			json_array_foreach(tf, i, f) if (json_is_string(f))
			{
				menv_buf_adds(&b, json_string_value(f));
				menv_buf_addch(&b, ' ');
			}
			joined = menv_buf_detach(&b);
		}
		bool eq = feature_set_equal(ms->track_features, joined ? joined
		                                                : json_is_string(tf)
		                                                        ? json_string_value(tf)
		                                                        : "");
		free(joined);
		if (!eq)
			return false;
	}
	return true;
}
