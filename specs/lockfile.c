/*
 * lockfile.c - the lockfiles of the conda ecosystem as one model: conda-lock.yml v1 (CEP-37),
 * explicit files (CEP-23), pixi.lock v4-v7 (rattler_lock) and micromamba's JSON lock; writers
 * for conda-lock v1, explicit and environment.yml (CEP-24).
 *
 * YAML documents are read with libyaml and turned into jansson values first (plain scalars
 * that are integers, booleans or null become those; everything else stays a string, so a
 * version "1.10" is never read as the float 1.1), then every format is read from JSON. Keys
 * menv does not know are kept in each entry's `extra` object, so that writing a conda-lock
 * file back loses nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "internal.h"
#include "specs.h"

/* ---------------------------------------------------------------------------------------- */
/* YAML to JSON                                                                             */

struct yctx {
	yaml_document_t *doc;
	const char *src;
	struct menv_error *err;
	/* JSON values still to make: aliases repeat nodes, so a small document can stand for an
	 * exponential tree ("billion laughs"); past the budget it is refused */
	size_t budget;
};

static bool plain_int(const char *s, json_int_t *out)
{
	const char *p = s;
	char *end;

	if (*p == '-')
		p++;
	if (!*p || (p[0] == '0' && p[1]) || strspn(p, "0123456789") != strlen(p))
		return false;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = (json_int_t)v;
	return true;
}

static json_t *yaml_scalar_json(yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;
	json_int_t iv;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_string(v);
	if (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	    !strcmp(v, "NULL"))
		return json_null();
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
		return json_true();
	if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
		return json_false();
	if (plain_int(v, &iv))
		return json_integer(iv);
	return json_string(v);
}

static json_t *yaml_json(struct yctx *c, yaml_node_t *n, int depth)
{
	if (!n)
		return json_null();
	if (depth > MENV_PARSE_MAX_DEPTH) {
		menv_error_set(c->err, MENV_EPARSE, "%s:%zu:%zu: nested deeper than %d levels",
		               c->src, n->start_mark.line + 1, n->start_mark.column + 1,
		               MENV_PARSE_MAX_DEPTH);
		return NULL;
	}
	if (!c->budget--) {
		menv_error_set(c->err, MENV_EPARSE,
		               "%s:%zu:%zu: aliases expand to more values than the file holds",
		               c->src, n->start_mark.line + 1, n->start_mark.column + 1);
		return NULL;
	}
	if (!(c->budget & 4095) && menv_cancelled()) {
		menv_error_set(c->err, MENV_EINTR, "%s: reading interrupted", c->src);
		return NULL;
	}
	switch (n->type) {
	case YAML_SCALAR_NODE: return yaml_scalar_json(n);
	case YAML_SEQUENCE_NODE: {
		json_t *a = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			json_t *v = yaml_json(c, yaml_document_get_node(c->doc, *it), depth + 1);
			if (!v) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, v);
		}
		return a;
	}
	case YAML_MAPPING_NODE: {
		json_t *o = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
			if (!k || k->type != YAML_SCALAR_NODE) {
				menv_error_set(c->err, MENV_EPARSE,
				               "%s:%zu:%zu: a mapping key must "
				               "be a string",
				               c->src, k ? k->start_mark.line + 1 : 0,
				               k ? k->start_mark.column + 1 : 0);
				json_decref(o);
				return NULL;
			}
			const char *key = (const char *)k->data.scalar.value;
			if (json_object_get(o, key)) {
				/* which one wins is a guess: rattler refuses it, so does menv */
				menv_error_set(c->err, MENV_EPARSE,
				               "%s:%zu:%zu: duplicate key '%s'", c->src,
				               k->start_mark.line + 1, k->start_mark.column + 1,
				               key);
				json_decref(o);
				return NULL;
			}
			json_t *v =
			        yaml_json(c, yaml_document_get_node(c->doc, p->value), depth + 1);
			if (!v) {
				json_decref(o);
				return NULL;
			}
			json_object_set_new(o, key, v);
		}
		return o;
	}
	default: return json_null();
	}
}

/* Parses YAML (or JSON, a subset) into a new JSON value. Errors: MENV_EPARSE with position. */
static int yaml_load(const char *bytes, size_t len, const char *src, json_t **out,
                     struct menv_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct yctx c = {&doc, src, err, 0};
	int rc = 0;

	*out = NULL;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
	rc = menv_yaml_load(&parser, &doc, src, err);
	if (rc) {
		yaml_parser_delete(&parser);
		return rc;
	}
	/* each node once, plus room for the few aliases a hand-written file may use */
	c.budget = 2 * (size_t)(doc.nodes.top - doc.nodes.start) + 100000;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		rc = menv_error_set(err, MENV_EPARSE, "%s: the file is empty", src);
		goto out;
	}
	*out = yaml_json(&c, root, 0);
	if (!*out)
		rc = err ? err->code : MENV_EPARSE;
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                            */

/* A scalar as text (strings as they are, integers printed), or NULL. Caller frees. */
static char *jtext(json_t *v)
{
	if (json_is_string(v))
		return menv_xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return menv_xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (json_is_real(v))
		return menv_xasprintf("%g", json_real_value(v));
	return NULL;
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

static bool is_hex(const char *s, size_t n)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static char *lower_dup(const char *s)
{
	char *d = menv_xstrdup(s);
	for (char *p = d; p && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return d;
}

/* The last path component of a URL (without query or fragment). Caller frees. */
static char *url_basename(const char *url)
{
	size_t n = strcspn(url, "?#");
	const char *end = url + n, *p = end;
	while (p > url && p[-1] != '/')
		p--;
	return menv_xstrndup(p, (size_t)(end - p));
}

/* The path component before the file name ("linux-64" of ".../linux-64/x.conda"), or NULL. */
static char *url_subdir(const char *url)
{
	size_t n = strcspn(url, "?#");
	const char *end = url + n, *p = end;
	while (p > url && p[-1] != '/')
		p--;
	if (p <= url + 1)
		return NULL;
	const char *q = p - 1;
	while (q > url && q[-1] != '/')
		q--;
	if (q >= p - 1)
		return NULL;
	return menv_xstrndup(q, (size_t)(p - 1 - q));
}

int menv_dist_split(const char *fn, char **name, char **version, char **build,
                    struct menv_error *err)
{
	size_t n = strlen(fn);
	char *dist, *b, *v;

	*name = *version = *build = NULL;
	if (has_suffix(fn, ".conda"))
		dist = menv_xstrndup(fn, n - 6);
	else if (has_suffix(fn, ".tar.bz2"))
		dist = menv_xstrndup(fn, n - 8);
	else
		return menv_error_set(err, MENV_EPARSE,
		                      "'%s' is not a conda package file name "
		                      "(.conda or .tar.bz2)",
		                      fn);
	b = strrchr(dist, '-');
	if (b) {
		*b = '\0';
		v = strrchr(dist, '-');
		if (v) {
			*v = '\0';
			if (*dist && v[1] && b[1]) {
				*name = menv_xstrdup(dist);
				*version = menv_xstrdup(v + 1);
				*build = menv_xstrdup(b + 1);
				free(dist);
				return 0;
			}
		}
	}
	free(dist);
	return menv_error_set(err, MENV_EPARSE,
	                      "'%s' is not a conda package file name "
	                      "(name-version-build)",
	                      fn);
}

const char *menv_lock_format_name(enum menv_lock_format f)
{
	switch (f) {
	case MENV_LOCK_CONDA_LOCK: return "conda-lock";
	case MENV_LOCK_EXPLICIT: return "explicit";
	case MENV_LOCK_PIXI: return "pixi";
	case MENV_LOCK_MAMBA_JSON: return "mamba-json";
	default: return "none";
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Model                                                                                    */

struct menv_lockfile *menv_lockfile_new(enum menv_lock_format format)
{
	struct menv_lockfile *lf = menv_xcalloc(1, sizeof(*lf));
	lf->format = format;
	lf->version = format == MENV_LOCK_CONDA_LOCK ? 1 : 0;
	lf->content_hash = json_object();
	lf->channels_raw = json_array();
	lf->metadata_extra = json_object();
	lf->platforms_raw = json_array();
	return lf;
}

static void package_release(struct menv_lock_package *p)
{
	free(p->name);
	free(p->version);
	free(p->build);
	free(p->platform);
	free(p->subdir);
	free(p->url);
	free(p->md5);
	free(p->sha256);
	free(p->category);
	free(p->source);
	free(p->env);
	json_decref(p->depends);
	json_decref(p->deps_map);
	json_decref(p->extra);
}

void menv_lockfile_free(struct menv_lockfile *lf)
{
	if (!lf)
		return;
	for (size_t i = 0; i < lf->npkgs; i++)
		package_release(&lf->pkgs[i]);
	free(lf->pkgs);
	for (size_t i = 0; i < lf->nenvs; i++) {
		free(lf->envs[i].name);
		menv_strvec_clear(&lf->envs[i].channels);
		menv_strvec_clear(&lf->envs[i].indexes);
		menv_strvec_clear(&lf->envs[i].find_links);
	}
	free(lf->envs);
	free(lf->path);
	menv_strvec_clear(&lf->channels);
	menv_strvec_clear(&lf->platforms);
	menv_strvec_clear(&lf->sources);
	json_decref(lf->content_hash);
	json_decref(lf->channels_raw);
	json_decref(lf->metadata_extra);
	json_decref(lf->platforms_raw);
	free(lf);
}

struct menv_lock_package *menv_lockfile_add(struct menv_lockfile *lf)
{
	if (lf->npkgs >= lf->pkgs_alloc) {
		lf->pkgs_alloc = lf->pkgs_alloc ? 2 * lf->pkgs_alloc : 16;
		if (lf->pkgs_alloc <= lf->npkgs)
			lf->pkgs_alloc = 2 * lf->npkgs;
		lf->pkgs = menv_xrealloc(lf->pkgs, lf->pkgs_alloc * sizeof(*lf->pkgs));
	}
	struct menv_lock_package *p = &lf->pkgs[lf->npkgs++];
	memset(p, 0, sizeof(*p));
	p->size = -1;
	p->category = menv_xstrdup("main");
	p->extra = json_object();
	return p;
}

static void set_hash(char **slot, const char *hex)
{
	free(*slot);
	*slot = hex && *hex ? lower_dup(hex) : NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Detection                                                                                */

/* The first line that is neither blank nor a comment, trimmed, into `out`. */
static void first_content_line(const char *bytes, size_t len, char *out, size_t cap)
{
	size_t i = 0;
	out[0] = '\0';
	if (len >= 3 && !memcmp(bytes, "\xef\xbb\xbf", 3))
		i = 3;
	while (i < len) {
		size_t e = i;
		while (e < len && bytes[e] != '\n')
			e++;
		size_t s = i;
		while (s < e && (bytes[s] == ' ' || bytes[s] == '\t' || bytes[s] == '\r'))
			s++;
		if (s < e && bytes[s] != '#') {
			size_t n = e - s;
			while (n && (bytes[s + n - 1] == '\r' || bytes[s + n - 1] == ' '))
				n--;
			if (n >= cap)
				n = cap - 1;
			memcpy(out, bytes + s, n);
			out[n] = '\0';
			return;
		}
		i = e + 1;
	}
}

/* What one pass over the lines finds: a line that is exactly "@EXPLICIT" (blanks around
 * allowed), and the top-level (column 0) YAML keys a format is known by. One pass with
 * memchr: detection runs on every file handed to menv, of any size. */
enum {
	SEEN_EXPLICIT = 1,
	SEEN_DEPENDENCIES = 2,
	SEEN_ENVIRONMENTS = 4,
	SEEN_VERSION = 8,
	SEEN_PACKAGE = 16,
	SEEN_METADATA = 32,
};

static unsigned scan_lines(const char *bytes, size_t len)
{
	static const struct {
		const char *key;
		unsigned bit;
	} keys[] = {{"dependencies:", SEEN_DEPENDENCIES},
	            {"environments:", SEEN_ENVIRONMENTS},
	            {"version:", SEEN_VERSION},
	            {"package:", SEEN_PACKAGE},
	            {"metadata:", SEEN_METADATA}};
	unsigned seen = 0;

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(bytes + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - bytes) : len;
		size_t s = i, t = e;
		while (s < t && isspace((unsigned char)bytes[s]))
			s++;
		while (t > s && isspace((unsigned char)bytes[t - 1]))
			t--;
		if (t - s == 9 && !memcmp(bytes + s, "@EXPLICIT", 9))
			seen |= SEEN_EXPLICIT;
		for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
			size_t kl = strlen(keys[k].key);
			if (e - i >= kl && !memcmp(bytes + i, keys[k].key, kl))
				seen |= keys[k].bit;
		}
		i = e + 1;
	}
	return seen;
}

enum menv_lock_format menv_lockfile_detect(const char *bytes, size_t len)
{
	char first[256];
	unsigned seen = scan_lines(bytes, len);

	if (seen & SEEN_EXPLICIT)
		return MENV_LOCK_EXPLICIT;
	first_content_line(bytes, len, first, sizeof(first));
	if (first[0] == '{')
		return memmem(bytes, len, "\"lockVersion\"", 13) ? MENV_LOCK_MAMBA_JSON
		                                                 : MENV_LOCK_NONE;
	if (seen & SEEN_DEPENDENCIES)
		return MENV_LOCK_NONE; /* an environment.yml */
	if ((seen & SEEN_ENVIRONMENTS) && (seen & SEEN_VERSION))
		return MENV_LOCK_PIXI;
	if (seen & (SEEN_PACKAGE | SEEN_METADATA | SEEN_VERSION))
		return MENV_LOCK_CONDA_LOCK;
	return MENV_LOCK_NONE;
}

/* ---------------------------------------------------------------------------------------- */
/* conda-lock v1 (CEP-37)                                                                   */

/* {name: spec} to ["name spec", ...] ("name" alone for "" or "*"). New reference. */
static json_t *deps_from_map(json_t *map)
{
	json_t *a = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(map, k, v)
	{
		char *spec = jtext(v);
		if (!spec || !*spec || !strcmp(spec, "*"))
			json_array_append_new(a, json_string(k));
		else {
			char *s = menv_xasprintf("%s %s", k, spec);
			json_array_append_new(a, json_string(s));
			free(s);
		}
		free(spec);
	}
	return a;
}

static const char *const conda_lock_keys[] = {"name",         "version", "manager", "platform",
                                              "dependencies", "url",     "hash",    "category",
                                              "optional",     "build",   NULL};

static bool in_list(const char *const *list, const char *k)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], k))
			return true;
	return false;
}

static int conda_lock_entry(struct menv_lockfile *lf, json_t *e, size_t idx, const char *src,
                            struct menv_error *err)
{
	static const char *const req[] = {"name", "version", "manager", "platform", "url", NULL};
	const char *name = jstr(e, "name");
	int rc = 0;

	if (!json_is_object(e))
		return menv_error_set(err, MENV_EPARSE, "%s: package entry %zu is not a mapping",
		                      src, idx + 1);
	for (size_t i = 0; req[i]; i++) {
		json_t *v = json_object_get(e, req[i]);
		if (!v || json_is_null(v) || json_is_object(v) || json_is_array(v))
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: package entry %zu ('%s') "
			                      "lacks '%s'",
			                      src, idx + 1, name ? name : "?", req[i]);
	}
	json_t *hash = json_object_get(e, "hash");
	if (!json_is_object(hash))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: package entry %zu ('%s') lacks "
		                      "'hash'",
		                      src, idx + 1, name);
	const char *manager = jstr(e, "manager");
	if (!manager ||
	    (strcmp(manager, "conda") && strcmp(manager, "pip") && strcmp(manager, "pypi")))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: package entry %zu ('%s') has "
		                      "manager '%s' (expected 'conda' or 'pip')",
		                      src, idx + 1, name, manager ? manager : "?");
	json_t *deps = json_object_get(e, "dependencies");
	bool deps_list = json_is_array(deps);
	if (deps_list) {
		/* rattler's versions 2-3: a list of MatchSpec strings */
		size_t k;
		json_t *d;
		json_array_foreach(deps, k, d) if (!json_is_string(d)) deps_list = false;
		if (!deps_list)
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: package entry %zu ('%s'): "
			                      "'dependencies' must be a list of strings",
			                      src, idx + 1, name);
	} else if (deps && !json_is_null(deps) && !json_is_object(deps)) {
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: package entry %zu ('%s'): "
		                      "'dependencies' must be a mapping",
		                      src, idx + 1, name);
	}

	struct menv_lock_package *p = menv_lockfile_add(lf);
	p->manager = strcmp(manager, "conda") ? MENV_LOCK_PIP : MENV_LOCK_CONDA;
	p->name = jtext(json_object_get(e, "name"));
	p->version = jtext(json_object_get(e, "version"));
	p->platform = jtext(json_object_get(e, "platform"));
	p->url = jtext(json_object_get(e, "url"));
	set_hash(&p->md5, jstr(hash, "md5"));
	set_hash(&p->sha256, jstr(hash, "sha256"));
	if (json_is_string(json_object_get(e, "category"))) {
		free(p->category);
		p->category = menv_xstrdup(jstr(e, "category"));
	}
	p->optional = json_is_true(json_object_get(e, "optional"));
	if (deps_list) {
		p->depends = json_deep_copy(deps);
	} else if (json_is_object(deps)) {
		p->deps_map = json_incref(deps);
		p->depends = deps_from_map(deps);
	} else {
		p->deps_map = json_object();
		p->depends = json_array();
	}
	const char *k;
	json_t *v;
	json_object_foreach(e, k, v)
	{
		if (!in_list(conda_lock_keys, k))
			json_object_set(p->extra, k, v);
	}
	if (p->manager == MENV_LOCK_CONDA) {
		char *fn = url_basename(p->url), *n = NULL, *ver = NULL;
		rc = menv_dist_split(fn, &n, &ver, &p->build, err);
		if (rc)
			menv_error_prefix(err, "%s: package entry %zu ('%s')", src, idx + 1, name);
		/* rattler's versions 2-3 say the build and subdir (rattler prefers them) */
		if (!rc && jstr(e, "build")) {
			free(p->build);
			p->build = menv_xstrdup(jstr(e, "build"));
		}
		p->subdir =
		        jstr(e, "subdir") ? menv_xstrdup(jstr(e, "subdir")) : url_subdir(p->url);
		free(fn);
		free(n);
		free(ver);
	}
	return rc;
}

static int parse_conda_lock(struct menv_lockfile *lf, json_t *root, const char *src,
                            struct menv_error *err)
{
	json_t *ver = json_object_get(root, "version");
	json_t *meta = json_object_get(root, "metadata");
	json_t *pkgs = json_object_get(root, "package");
	const char *k;
	json_t *v;

	if (ver && !json_is_integer(ver))
		return menv_error_set(err, MENV_EPARSE, "%s: 'version' must be an integer", src);
	/* versions 2 and 3 are rattler's own conda-lock files (before pixi's format): the same
	 * layout, dependencies as a list of MatchSpecs, `pypi` for pip */
	if (ver && (json_integer_value(ver) < 1 || json_integer_value(ver) > 3))
		return menv_error_set(err, MENV_EUNSUPPORTED,
		                      "%s: conda-lock version %" JSON_INTEGER_FORMAT
		                      " is not supported (menv reads versions 1 to 3)",
		                      src, json_integer_value(ver));
	lf->version = ver ? (int)json_integer_value(ver) : 1;
	if (meta && !json_is_null(meta)) {
		if (!json_is_object(meta))
			return menv_error_set(err, MENV_EPARSE, "%s: 'metadata' must be a mapping",
			                      src);
		json_object_foreach(meta, k, v)
		{
			if (!strcmp(k, "content_hash")) {
				if (json_is_object(v)) {
					json_decref(lf->content_hash);
					lf->content_hash = json_incref(v);
				}
			} else if (!strcmp(k, "channels")) {
				if (!json_is_array(v))
					return menv_error_set(err, MENV_EPARSE,
					                      "%s: "
					                      "'metadata.channels' must be a list",
					                      src);
				json_decref(lf->channels_raw);
				lf->channels_raw = json_incref(v);
				size_t i;
				json_t *c;
				json_array_foreach(v, i, c)
				{
					char *u = jtext(
					        json_is_object(c) ? json_object_get(c, "url") : c);
					if (!u)
						return menv_error_set(err, MENV_EPARSE,
						                      "%s: channel "
						                      "%zu has no 'url'",
						                      src, i + 1);
					menv_strvec_push_owned(&lf->channels, u);
				}
			} else if (!strcmp(k, "platforms") || !strcmp(k, "sources")) {
				struct menv_strvec *sv =
				        k[0] == 'p' ? &lf->platforms : &lf->sources;
				size_t i;
				json_t *c;
				if (!json_is_array(v) && !json_is_null(v))
					return menv_error_set(err, MENV_EPARSE,
					                      "%s: 'metadata.%s' "
					                      "must be a list",
					                      src, k);
				json_array_foreach(v, i, c)
				{
					char *t = jtext(c);
					if (t)
						menv_strvec_push_owned(sv, t);
				}
			} else {
				json_object_set(lf->metadata_extra, k, v);
			}
		}
	}
	if (pkgs && !json_is_null(pkgs) && !json_is_array(pkgs))
		return menv_error_set(err, MENV_EPARSE, "%s: 'package' must be a list", src);
	size_t i;
	json_array_foreach(pkgs, i, v)
	{
		if (!(i & 4095) && menv_cancelled())
			return menv_error_set(err, MENV_EINTR, "%s: reading interrupted", src);
		int rc = conda_lock_entry(lf, v, i, src, err);
		if (rc)
			return rc;
	}
	/* platforms named by entries but not in the metadata still count */
	struct menv_strset seen = MENV_STRSET_INIT;
	for (size_t j = 0; j < lf->platforms.n; j++)
		menv_strset_add(&seen, lf->platforms.v[j]);
	for (size_t j = 0; j < lf->npkgs; j++)
		menv_strvec_push_unique(&lf->platforms, &seen, lf->pkgs[j].platform);
	menv_strset_clear(&seen);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* explicit (CEP-23)                                                                        */

static int parse_explicit(struct menv_lockfile *lf, const char *bytes, size_t len, const char *src,
                          struct menv_error *err)
{
	char *platform = NULL;
	bool seen = false;
	size_t lineno = 0, bad;
	int rc = 0;

	if (!menv_utf8_valid(bytes, len, &bad)) {
		/* URLs and names go into JSON (records, --json), which takes nothing else */
		size_t line = 1, col = 1;
		for (size_t j = 0; j < bad; j++)
			if (bytes[j] == '\n')
				line++, col = 1;
			else
				col++;
		return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: not valid UTF-8", src, line,
		                      col);
	}
	for (size_t i = 0; i < len && !rc;) {
		if (!(lineno & 4095) && menv_cancelled()) {
			rc = menv_error_set(err, MENV_EINTR, "%s: reading interrupted", src);
			break;
		}
		size_t e = i;
		while (e < len && bytes[e] != '\n')
			e++;
		lineno++;
		char *line = menv_xstrndup(bytes + i, e - i);
		char *s = line, *t;
		i = e + 1;
		if (lineno == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
			s += 3;
		while (isspace((unsigned char)*s))
			s++;
		t = s + strlen(s);
		while (t > s && isspace((unsigned char)t[-1]))
			*--t = '\0';
		if (!*s) {
			free(line);
			continue;
		}
		if (*s == '#') {
			const char *c = s + 1;
			while (*c == ' ')
				c++;
			if (!strncmp(c, "platform:", 9)) {
				c += 9;
				while (*c == ' ')
					c++;
				free(platform);
				platform = menv_xstrdup(c);
			} else if (!strncmp(c, "pip ", 4)) {
				/* conda-lock: "# pip name @ URL" */
				const char *at = strstr(c + 4, " @ ");
				if (!at) {
					rc = menv_error_set(err, MENV_EPARSE,
					                    "%s:%zu: a pip line must "
					                    "read '# pip NAME @ URL'",
					                    src, lineno);
				} else {
					struct menv_lock_package *p = menv_lockfile_add(lf);
					p->manager = MENV_LOCK_PIP;
					p->name = menv_xstrndup(c + 4, (size_t)(at - c - 4));
					const char *u = at + 3;
					const char *frag = strstr(u, "#sha256=");
					if (frag) {
						p->url = menv_xstrndup(u, (size_t)(frag - u));
						set_hash(&p->sha256, frag + 8);
					} else {
						p->url = menv_xstrdup(u);
					}
				}
			}
			free(line);
			continue;
		}
		if (!strcmp(s, "@EXPLICIT")) {
			seen = true;
			free(line);
			continue;
		}
		if (!seen) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "%s:%zu: '%s' comes before the "
			                    "'@EXPLICIT' line",
			                    src, lineno, s);
			free(line);
			break;
		}
		char *frag = strchr(s, '#');
		char *md5 = NULL, *sha = NULL;
		if (frag) {
			*frag++ = '\0';
			if (!strncmp(frag, "sha256:", 7) && is_hex(frag + 7, 64))
				sha = frag + 7;
			else if (is_hex(frag, 32))
				md5 = frag;
			else if (is_hex(frag, 64))
				sha = frag;
			else
				rc = menv_error_set(err, MENV_EPARSE,
				                    "%s:%zu: '#%s' is neither an "
				                    "md5 nor a 'sha256:' hash",
				                    src, lineno, frag);
		}
		if (!rc && !strstr(s, "://"))
			rc = menv_error_set(err, MENV_EPARSE, "%s:%zu: '%s' is not a package URL",
			                    src, lineno, s);
		if (!rc) {
			char *fn = url_basename(s), *n = NULL, *v = NULL, *b = NULL;
			rc = menv_dist_split(fn, &n, &v, &b, err);
			if (rc) {
				menv_error_prefix(err, "%s:%zu", src, lineno);
			} else {
				struct menv_lock_package *p = menv_lockfile_add(lf);
				p->manager = MENV_LOCK_CONDA;
				p->name = n;
				p->version = v;
				p->build = b;
				p->url = menv_xstrdup(s);
				p->subdir = url_subdir(s);
				set_hash(&p->md5, md5);
				set_hash(&p->sha256, sha);
				n = v = b = NULL;
			}
			free(fn);
			free(n);
			free(v);
			free(b);
		}
		free(line);
	}
	if (!rc && !seen)
		rc = menv_error_set(err, MENV_EPARSE, "%s: no '@EXPLICIT' line", src);
	if (!rc && !platform) {
		/* no "# platform:" header: the subdir of the packages that are not noarch */
		for (size_t j = 0; j < lf->npkgs && !platform; j++)
			if (lf->pkgs[j].subdir && strcmp(lf->pkgs[j].subdir, "noarch"))
				platform = menv_xstrdup(lf->pkgs[j].subdir);
		if (!platform)
			platform = menv_xstrdup("noarch");
	}
	if (!rc) {
		menv_strvec_push(&lf->platforms, platform);
		for (size_t j = 0; j < lf->npkgs; j++) {
			free(lf->pkgs[j].platform);
			lf->pkgs[j].platform = menv_xstrdup(platform);
			json_decref(lf->pkgs[j].deps_map);
			lf->pkgs[j].deps_map = NULL;
		}
	}
	free(platform);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* pixi.lock v4-v7 (rattler_lock)                                                           */

/* the keys of a pixi package entry that the model holds in its own fields */
static const char *const pixi_keys[] = {
        "kind",  "conda",  "pypi", "conda_source", "url",  "name",    "version",
        "build", "subdir", "md5",  "sha256",       "size", "depends", NULL};

/* The URL of an entry or reference with a `#sha256=` fragment and a `direct+` prefix off. */
static char *pixi_norm_url(const char *u)
{
	if (!strncmp(u, "direct+", 7))
		u += 7;
	return menv_xstrndup(u, strcspn(u, "#"));
}

/* An entry's kind ("conda", "pypi", "conda_source") and location. */
static bool pixi_entry_key(json_t *e, int version, const char **kind, const char **loc)
{
	*kind = *loc = NULL;
	if (!json_is_object(e))
		return false;
	if (jstr(e, "conda")) {
		*kind = "conda";
		*loc = jstr(e, "conda");
	} else if (jstr(e, "pypi")) {
		*kind = "pypi";
		*loc = jstr(e, "pypi");
	} else if (jstr(e, "conda_source")) {
		*kind = "conda_source";
		*loc = jstr(e, "conda_source");
	} else if (version <= 5 && jstr(e, "kind")) {
		*kind = jstr(e, "kind");
		*loc = jstr(e, "url");
		if (!*loc && !strcmp(*kind, "pypi"))
			*loc = jstr(e, "path");
	}
	return *kind && *loc;
}

/* Is `loc` something to build rather than a file to download? */
static bool pixi_is_source(const char *kind, const char *loc)
{
	if (!strcmp(kind, "conda_source"))
		return true;
	return !strstr(loc, "://") || !strncmp(loc, "git+", 4);
}

static int pixi_add(struct menv_lockfile *lf, json_t *e, const char *kind, const char *loc,
                    const char *env, const char *platform, const char *src, struct menv_error *err)
{
	struct menv_lock_package *p = menv_lockfile_add(lf);
	const char *k;
	json_t *v;

	p->manager = !strcmp(kind, "pypi") ? MENV_LOCK_PIP : MENV_LOCK_CONDA;
	p->env = menv_xstrdup(env);
	p->platform = menv_xstrdup(platform);
	p->name = jtext(json_object_get(e, "name"));
	p->version = jtext(json_object_get(e, "version"));
	p->build = jtext(json_object_get(e, "build"));
	p->subdir = jtext(json_object_get(e, "subdir"));
	set_hash(&p->md5, jstr(e, "md5"));
	set_hash(&p->sha256, jstr(e, "sha256"));
	if (json_is_integer(json_object_get(e, "size")))
		p->size = json_integer_value(json_object_get(e, "size"));
	json_t *dep = json_object_get(e, "depends");
	p->depends = json_is_array(dep) ? json_incref(dep) : NULL;
	if (p->manager == MENV_LOCK_CONDA && !p->depends)
		p->depends = json_array(); /* v6+ omits an empty list */
	json_object_foreach(e, k, v)
	{
		if (!in_list(pixi_keys, k))
			json_object_set(p->extra, k, v);
	}
	if (pixi_is_source(kind, loc)) {
		p->source = menv_xstrdup(loc);
		if (!p->name && !strcmp(kind, "conda_source"))
			p->name = menv_xstrndup(loc, strcspn(loc, "[ @"));
	} else {
		p->url = pixi_norm_url(loc);
		const char *frag = strstr(loc, "#sha256=");
		if (frag && !p->sha256)
			set_hash(&p->sha256, frag + 8);
	}
	if (p->manager == MENV_LOCK_CONDA && p->url) {
		/* v6+ leaves out what the file name says */
		char *fn = url_basename(p->url), *n = NULL, *ver = NULL, *b = NULL;
		int rc = menv_dist_split(fn, &n, &ver, &b, err);
		free(fn);
		if (rc) {
			menv_error_prefix(err, "%s: environment '%s', platform '%s'", src, env,
			                  platform);
			return rc;
		}
		if (!p->name)
			p->name = n, n = NULL;
		if (!p->version)
			p->version = ver, ver = NULL;
		if (!p->build)
			p->build = b, b = NULL;
		if (!p->subdir)
			p->subdir = url_subdir(p->url);
		free(n);
		free(ver);
		free(b);
	}
	if (!p->name)
		return menv_error_set(err, MENV_EPARSE, "%s: the package '%s' has no name", src,
		                      loc);
	return 0;
}

/* The subdir a pixi platform name stands for (v7 `platforms:`), borrowed. */
static const char *pixi_platform_subdir(const struct menv_lockfile *lf, const char *name)
{
	size_t i;
	json_t *p;
	json_array_foreach(lf->platforms_raw, i, p)
	{
		if (json_is_object(p) && jstr(p, "name") && !strcmp(jstr(p, "name"), name))
			return jstr(p, "subdir") ? jstr(p, "subdir") : name;
	}
	return name;
}

/* A v7 `platforms:` entry as rattler checks it: a name of letters, digits, '_' and '-'
 * (non-ASCII letters allowed, as rattler's is_alphanumeric), listed once, whose subdir (its
 * `subdir:`, else the name) is one conda knows. */
static int pixi_platform_ok(const struct menv_lockfile *lf, json_t *p, const char *name,
                            const char *src, struct menv_error *err)
{
	const char *sub = json_is_object(p) && jstr(p, "subdir") ? jstr(p, "subdir") : name;

	if (!*name)
		return menv_error_set(err, MENV_EPARSE, "%s: a platform has an empty name", src);
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (!(isalnum(*c) || *c == '_' || *c == '-' || *c >= 0x80))
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: '%s' is not a valid platform name (letters, "
			                      "digits, '_' and '-')",
			                      src, name);
	for (size_t i = 0; i < lf->platforms.n; i++)
		if (!strcmp(lf->platforms.v[i], name))
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: the platform '%s' is listed twice", src, name);
	if (json_is_object(p) && json_object_get(p, "subdir") && !jstr(p, "subdir"))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: platform '%s': 'subdir' must be a string", src, name);
	if (!menv_subdir_known(sub))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: platform '%s': '%s' is not a known platform subdir", src,
		                      name, sub);
	return 0;
}

static int parse_pixi(struct menv_lockfile *lf, json_t *root, const char *src,
                      struct menv_error *err)
{
	json_t *ver = json_object_get(root, "version");
	json_t *envs = json_object_get(root, "environments");
	json_t *pkgs = json_object_get(root, "packages");
	const char *ename;
	json_t *ev;
	int rc = 0;

	if (!json_is_integer(ver))
		return menv_error_set(err, MENV_EPARSE, "%s: 'version' must be an integer", src);
	lf->version = (int)json_integer_value(ver);
	if (lf->version < 4 || lf->version > 7)
		return menv_error_set(err, MENV_EUNSUPPORTED,
		                      "%s: pixi lock version %d is not "
		                      "supported (menv reads versions 4 to 7)",
		                      src, lf->version);
	if (!json_is_object(envs))
		return menv_error_set(err, MENV_EPARSE, "%s: 'environments' must be a mapping",
		                      src);
	if (pkgs && !json_is_null(pkgs) && !json_is_array(pkgs))
		return menv_error_set(err, MENV_EPARSE, "%s: 'packages' must be a list", src);
	json_t *plats = json_object_get(root, "platforms");
	if (json_is_array(plats)) {
		json_decref(lf->platforms_raw);
		lf->platforms_raw = json_incref(plats);
		size_t i;
		json_t *p;
		json_array_foreach(plats, i, p)
		{
			const char *n = json_is_object(p) ? jstr(p, "name") : json_string_value(p);
			if (!n)
				return menv_error_set(err, MENV_EPARSE,
				                      "%s: platform %zu has no "
				                      "'name'",
				                      src, i + 1);
			rc = pixi_platform_ok(lf, p, n, src, err);
			if (rc)
				return rc;
			menv_strvec_push(&lf->platforms, n);
		}
	}
	struct menv_strset declared = MENV_STRSET_INIT; /* v7: the names `platforms:` lists */
	for (size_t j = 0; j < lf->platforms.n; j++)
		menv_strset_add(&declared, lf->platforms.v[j]);
	bool v7_platforms = json_is_array(plats);
	/* index the package entries by normalised location */
	json_t *index = json_object();
	size_t i;
	json_t *e;
	json_array_foreach(pkgs, i, e)
	{
		const char *kind, *loc;
		if (!pixi_entry_key(e, lf->version, &kind, &loc)) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "%s: package entry %zu has no 'conda', "
			                    "'pypi' or 'conda_source' key",
			                    src, i + 1);
			goto out;
		}
		char *key = menv_xasprintf("%s %s", kind, loc);
		char *norm = pixi_norm_url(key);
		json_t *list = json_object_get(index, norm);
		if (!list) {
			list = json_array();
			json_object_set_new(index, norm, list);
		}
		json_array_append(list, e);
		free(norm);
		free(key);
	}
	json_object_foreach(envs, ename, ev)
	{
		if (!json_is_object(ev)) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "%s: environment '%s' must be a "
			                    "mapping",
			                    src, ename);
			goto out;
		}
		lf->envs = menv_xrealloc(lf->envs, (lf->nenvs + 1) * sizeof(*lf->envs));
		struct menv_lock_env *le = &lf->envs[lf->nenvs++];
		memset(le, 0, sizeof(*le));
		le->name = menv_xstrdup(ename);
		json_t *c;
		json_array_foreach(json_object_get(ev, "channels"), i, c)
		{
			char *u = jtext(json_is_object(c) ? json_object_get(c, "url") : c);
			if (u)
				menv_strvec_push_owned(&le->channels, u);
		}
		json_array_foreach(json_object_get(ev, "indexes"), i, c)
		{
			char *u = jtext(c);
			if (u)
				menv_strvec_push_owned(&le->indexes, u);
		}
		json_array_foreach(json_object_get(ev, "find-links"), i, c)
		{
			char *u = jtext(json_is_object(c) ? (json_object_get(c, "url")
			                                             ? json_object_get(c, "url")
			                                             : json_object_get(c, "path"))
			                                  : c);
			if (u)
				menv_strvec_push_owned(&le->find_links, u);
		}
		json_t *byplat = json_object_get(ev, "packages");
		if (byplat && !json_is_null(byplat) && !json_is_object(byplat)) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "%s: 'environments.%s.packages' must "
			                    "be a mapping of platforms",
			                    src, ename);
			goto out;
		}
		const char *plat;
		json_t *refs;
		json_object_foreach(byplat, plat, refs)
		{
			if (v7_platforms && !menv_strset_has(&declared, plat)) {
				/* rattler: an environment may only use the platforms listed */
				rc = menv_error_set(err, MENV_EPARSE,
				                    "%s: environment '%s' uses the platform '%s', "
				                    "which 'platforms' does not list",
				                    src, ename, plat);
				goto out;
			}
			menv_strvec_push_unique(&lf->platforms, &declared, plat);
			size_t j;
			json_t *ref;
			json_array_foreach(refs, j, ref)
			{
				const char *kind, *loc;
				if (!pixi_entry_key(ref, 6, &kind, &loc)) {
					rc = menv_error_set(err, MENV_EPARSE,
					                    "%s: environment '%s', "
					                    "platform '%s': reference %zu has no "
					                    "'conda', 'pypi' or 'conda_source' key",
					                    src, ename, plat, j + 1);
					goto out;
				}
				char *key = menv_xasprintf("%s %s", kind, loc);
				char *norm = pixi_norm_url(key);
				json_t *cands = json_object_get(index, norm);
				json_t *hit = NULL;
				size_t m;
				json_t *cand;
				json_array_foreach(cands, m, cand)
				{
					/* v7 references may name the variant they mean */
					const char *want[] = {"name", "build", "subdir"};
					bool ok = true;
					for (size_t w = 0; w < 3 && ok; w++) {
						const char *rv = jstr(ref, want[w]);
						const char *cv = jstr(cand, want[w]);
						ok = !rv || !cv || !strcmp(rv, cv);
					}
					if (ok) {
						hit = cand;
						break;
					}
				}
				free(norm);
				free(key);
				if (!hit) {
					rc = menv_error_set(err, MENV_EPARSE,
					                    "%s: environment '%s', "
					                    "platform '%s' refers to '%s', which "
					                    "is not in 'packages'",
					                    src, ename, plat, loc);
					goto out;
				}
				rc = pixi_add(lf, hit, kind, loc, ename, plat, src, err);
				if (rc)
					goto out;
			}
		}
	}
	if (lf->nenvs)
		for (size_t j = 0; j < lf->envs[0].channels.n; j++)
			menv_strvec_push(&lf->channels, lf->envs[0].channels.v[j]);
out:
	menv_strset_clear(&declared);
	json_decref(index);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* micromamba JSON lock                                                                     */

static int parse_mamba_json(struct menv_lockfile *lf, json_t *root, const char *src,
                            struct menv_error *err)
{
	const char *lv = jstr(root, "lockVersion");
	const char *plat = jstr(root, "platform");
	json_t *info = json_object_get(root, "channelInfo");
	const char *fn;
	json_t *e;

	if (!lv)
		return menv_error_set(err, MENV_EPARSE, "%s: 'lockVersion' must be a string", src);
	if (strncmp(lv, "1.", 2))
		return menv_error_set(err, MENV_EUNSUPPORTED,
		                      "%s: lockVersion '%s' is not "
		                      "supported (menv reads 1.x)",
		                      src, lv);
	if (!plat)
		return menv_error_set(err, MENV_EPARSE, "%s: 'platform' must be a string", src);
	lf->version = 1;
	menv_strvec_push(&lf->platforms, plat);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(root, "channels"), i, c) if (json_is_string(c))
	        menv_strvec_push(&lf->channels, json_string_value(c));
	json_object_foreach(json_object_get(root, "packages"), fn, e)
	{
		static const char *const req[] = {"name",   "version", "build",
		                                  "subdir", "channel", NULL};
		for (size_t k = 0; req[k]; k++)
			if (!json_is_string(json_object_get(e, req[k])))
				return menv_error_set(err, MENV_EPARSE,
				                      "%s: package '%s' lacks "
				                      "'%s'",
				                      src, fn, req[k]);
		const char *ch = jstr(e, "channel");
		json_t *ci = json_array_get(json_object_get(info, ch), 0);
		const char *base = json_is_object(ci) ? jstr(ci, "url") : NULL;
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_CONDA;
		p->name = menv_xstrdup(jstr(e, "name"));
		p->version = menv_xstrdup(jstr(e, "version"));
		p->build = menv_xstrdup(jstr(e, "build"));
		p->subdir = menv_xstrdup(jstr(e, "subdir"));
		p->platform = menv_xstrdup(plat);
		p->url = menv_xasprintf("%s/%s/%s", base ? base : ch, p->subdir, fn);
		set_hash(&p->md5, jstr(json_object_get(e, "hash"), "md5"));
		set_hash(&p->sha256, jstr(json_object_get(e, "hash"), "sha256"));
		if (jstr(e, "category")) {
			free(p->category);
			p->category = menv_xstrdup(jstr(e, "category"));
		}
		json_object_set_new(p->extra, "channel", json_string(ch));
	}
	json_object_foreach(json_object_get(root, "pipPackages"), fn, e)
	{
		if (!jstr(e, "name") || !jstr(e, "version") || !jstr(e, "url"))
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: pip package '%s' lacks a name, "
			                      "version or url",
			                      src, fn);
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_PIP;
		p->name = menv_xstrdup(jstr(e, "name"));
		p->version = menv_xstrdup(jstr(e, "version"));
		p->url = menv_xstrdup(jstr(e, "url"));
		p->platform = menv_xstrdup(plat);
		set_hash(&p->sha256, jstr(json_object_get(e, "hash"), "sha256"));
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry points                                                                             */

int menv_lockfile_parse(const char *bytes, size_t len, const char *src, struct menv_lockfile **out,
                        struct menv_error *err)
{
	enum menv_lock_format f = menv_lockfile_detect(bytes, len);
	struct menv_lockfile *lf = NULL;
	json_t *root = NULL;
	int rc = 0;

	*out = NULL;
	if (f == MENV_LOCK_NONE) {
		char first[256];
		first_content_line(bytes, len, first, sizeof(first));
		if (strstr(first, "://"))
			return menv_error_set(
			        err, MENV_EPARSE,
			        "%s: a list of URLs without an "
			        "'@EXPLICIT' line is not an explicit lockfile (CEP-23)",
			        src);
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: not a lockfile (no '@EXPLICIT' line, "
		                      "no conda-lock 'package:'/'metadata:', no pixi "
		                      "'environments:', no 'lockVersion')",
		                      src);
	}
	lf = menv_lockfile_new(f);
	lf->path = menv_xstrdup(src);
	if (f == MENV_LOCK_EXPLICIT) {
		rc = parse_explicit(lf, bytes, len, src, err);
		goto out;
	}
	if (f == MENV_LOCK_MAMBA_JSON) {
		rc = menv_json_parse(bytes, len, 0, src, &root, err);
		if (rc)
			goto out;
	} else {
		rc = yaml_load(bytes, len, src, &root, err);
		if (rc)
			goto out;
	}
	if (!json_is_object(root)) {
		rc = menv_error_set(err, MENV_EPARSE, "%s: a lockfile must be a mapping", src);
		goto out;
	}
	if (f == MENV_LOCK_CONDA_LOCK)
		rc = parse_conda_lock(lf, root, src, err);
	else if (f == MENV_LOCK_PIXI)
		rc = parse_pixi(lf, root, src, err);
	else
		rc = parse_mamba_json(lf, root, src, err);
out:
	json_decref(root);
	if (rc) {
		menv_lockfile_free(lf);
		return rc;
	}
	*out = lf;
	return 0;
}

int menv_lockfile_load(const char *path, struct menv_lockfile **out, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int rc = menv_buf_read_file(&b, path, err);
	if (!rc)
		rc = menv_lockfile_parse(b.buf, b.len, path, out, err);
	menv_buf_release(&b);
	return rc;
}

/* Does entry `p` belong to `platform` (a platform name, or for pixi v7 its subdir)? */
static bool on_platform(const struct menv_lockfile *lf, const struct menv_lock_package *p,
                        const char *platform)
{
	if (!p->platform)
		return false;
	/* an explicit file of noarch packages only, without "# platform:", suits every platform */
	if (!strcmp(p->platform, platform) || !strcmp(p->platform, "noarch"))
		return true;
	return lf->format == MENV_LOCK_PIXI &&
	       !strcmp(pixi_platform_subdir(lf, p->platform), platform);
}

int menv_lockfile_select(const struct menv_lockfile *lf, const char *env, const char *platform,
                         const struct menv_lock_package ***out, size_t *n, struct menv_error *err)
{
	const char *src = lf->path ? lf->path : "lockfile";
	bool known_platform = false;

	*out = NULL;
	*n = 0;
	if (lf->format == MENV_LOCK_PIXI) {
		const char *want = env ? env : "default";
		bool found = false;
		for (size_t i = 0; i < lf->nenvs && !found; i++)
			found = !strcmp(lf->envs[i].name, want);
		if (!found) {
			struct menv_buf b = MENV_BUF_INIT;
			for (size_t i = 0; i < lf->nenvs; i++)
				menv_buf_addf(&b, "%s'%s'", i ? ", " : "", lf->envs[i].name);
			menv_error_set(err, MENV_ENOTFOUND,
			               "%s has no environment '%s' (it has %s)", src, want,
			               lf->nenvs ? b.buf : "none");
			menv_buf_release(&b);
			return MENV_ENOTFOUND;
		}
		env = want;
	} else if (env) {
		return menv_error_set(err, MENV_EUSAGE,
		                      "-e/--environment '%s' applies to pixi "
		                      "lockfiles only; '%s' is a %s file",
		                      env, src, menv_lock_format_name(lf->format));
	}
	for (size_t i = 0; i < lf->platforms.n && !known_platform; i++)
		known_platform = !strcmp(lf->platforms.v[i], platform) ||
		                 !strcmp(lf->platforms.v[i], "noarch") ||
		                 (lf->format == MENV_LOCK_PIXI &&
		                  !strcmp(pixi_platform_subdir(lf, lf->platforms.v[i]), platform));
	const struct menv_lock_package **v = menv_xcalloc(lf->npkgs + 1, sizeof(*v));
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (env && (!p->env || strcmp(p->env, env)))
			continue;
		if (!on_platform(lf, p, platform))
			continue;
		if (p->source) {
			free(v);
			return menv_error_set(err, MENV_EUNSUPPORTED,
			                      "%s: '%s' is a source package "
			                      "('%s') that must be built; menv installs only "
			                      "locked package files",
			                      src, p->name, p->source);
		}
		v[(*n)++] = p;
	}
	if (!*n && !known_platform) {
		struct menv_buf b = MENV_BUF_INIT;
		for (size_t i = 0; i < lf->platforms.n; i++)
			menv_buf_addf(&b, "%s%s", i ? ", " : "", lf->platforms.v[i]);
		menv_error_set(err, MENV_ENOTFOUND,
		               "%s has no packages for platform '%s' (it "
		               "locks %s)",
		               src, platform, lf->platforms.n ? b.buf : "no platform");
		menv_buf_release(&b);
		free(v);
		return MENV_ENOTFOUND;
	}
	*out = v;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* YAML writing                                                                             */

/* Would a YAML reader take `s`, written plain, for something other than this string? */
static bool needs_quotes(const char *s)
{
	static const char *const words[] = {"true", "false", "yes",   "no",   "on",
	                                    "off",  "y",     "n",     "null", "~",
	                                    ".inf", "-.inf", "+.inf", ".nan", NULL};
	size_t n = strlen(s);

	if (!n || isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]))
		return true;
	if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0]))
		return true;
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return true;
		if ((*p == ':' && (!p[1] || p[1] == ' ')) || (*p == '#' && p > s && p[-1] == ' '))
			return true;
	}
	if (strspn(s, "0123456789:._-+") == n && strchr(s, ':'))
		return true; /* YAML 1.1 sexagesimal numbers (1:20) */
	for (size_t i = 0; words[i]; i++)
		if (!strcasecmp(s, words[i]))
			return true;
	/* numbers of any YAML flavour: ints, floats, 0x/0o, 1_000, exponents */
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (!strncmp(p, "0x", 2) || !strncmp(p, "0o", 2))
		return true;
	size_t digits = 0, dots = 0, other = 0;
	for (const char *q = p; *q; q++) {
		if (isdigit((unsigned char)*q) || *q == '_')
			digits++;
		else if (*q == '.')
			dots++;
		else if (*q != 'e' && *q != 'E' && *q != '+' && *q != '-')
			other++;
	}
	if (!other && digits && dots <= 1)
		return true;
	/* YAML 1.1 timestamps (2024-01-31) */
	if (n >= 8 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[3]) && s[4] == '-' &&
	    strspn(s, "0123456789-:.TtZz +") == n)
		return true;
	return false;
}

static void y_str(struct menv_buf *o, const char *s)
{
	if (!needs_quotes(s)) {
		menv_buf_adds(o, s);
		return;
	}
	menv_buf_addch(o, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			menv_buf_addf(o, "\\%c", *p);
		else if (*p == '\n')
			menv_buf_adds(o, "\\n");
		else if (*p == '\t')
			menv_buf_adds(o, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			menv_buf_addf(o, "\\x%02x", *p);
		else
			menv_buf_addch(o, (char)*p);
	}
	menv_buf_addch(o, '"');
}

static void y_scalar(struct menv_buf *o, json_t *v)
{
	if (json_is_string(v))
		y_str(o, json_string_value(v));
	else if (json_is_integer(v))
		menv_buf_addf(o, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		menv_buf_addf(o, "%.17g", json_real_value(v));
	else if (json_is_true(v))
		menv_buf_adds(o, "true");
	else if (json_is_false(v))
		menv_buf_adds(o, "false");
	else if (json_is_object(v))
		menv_buf_adds(o, "{}");
	else if (json_is_array(v))
		menv_buf_adds(o, "[]");
	else
		menv_buf_adds(o, "null");
}

static bool y_block(json_t *v)
{
	return (json_is_object(v) && json_object_size(v)) ||
	       (json_is_array(v) && json_array_size(v));
}

static void y_node(struct menv_buf *o, json_t *v, int indent);

static void y_indent(struct menv_buf *o, int n)
{
	for (int i = 0; i < n; i++)
		menv_buf_addch(o, ' ');
}

/* The value after "key:" or "- " at `indent` (the column of the key or dash). */
static void y_after(struct menv_buf *o, json_t *v, int indent)
{
	if (!y_block(v)) {
		menv_buf_addch(o, ' ');
		y_scalar(o, v);
		menv_buf_addch(o, '\n');
		return;
	}
	menv_buf_addch(o, '\n');
	y_node(o, v, indent + 2);
}

static void y_node(struct menv_buf *o, json_t *v, int indent)
{
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
		{
			y_indent(o, indent);
			y_str(o, k);
			menv_buf_addch(o, ':');
			y_after(o, x, indent);
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			y_indent(o, indent);
			menv_buf_adds(o, "-");
			if (json_is_object(x) && json_object_size(x)) {
				/* first key on the dash's line, the others under it */
				const char *k;
				json_t *y;
				bool first = true;
				json_object_foreach(x, k, y)
				{
					if (first)
						menv_buf_addch(o, ' ');
					else
						y_indent(o, indent + 2);
					first = false;
					y_str(o, k);
					menv_buf_addch(o, ':');
					y_after(o, y, indent + 2);
				}
			} else {
				y_after(o, x, indent);
			}
		}
	} else {
		y_indent(o, indent);
		y_scalar(o, v);
		menv_buf_addch(o, '\n');
	}
}

void menv_yaml_write(struct menv_buf *out, json_t *v)
{
	y_node(out, v, 0);
}

int menv_yaml_to_json(const char *bytes, size_t len, const char *src, json_t **out,
                      struct menv_error *err)
{
	return yaml_load(bytes, len, src, out, err);
}

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* Joins two conda-lock dependency values of one name ("VERSION[ BUILD]") into one: the
 * version constraints joined by ',' ("*" dropped), the first build pattern that is not "*". */
static char *join_dep_values(const char *a, const char *b)
{
	const char *vals[2] = {a, b};
	struct menv_buf ver = MENV_BUF_INIT;
	char *build = NULL, *out;
	for (int i = 0; i < 2; i++) {
		size_t vl = strcspn(vals[i], " ");
		const char *bp = vals[i] + vl;
		while (*bp == ' ')
			bp++;
		if (vl && strncmp(vals[i], "*", vl) != 0) {
			if (ver.len)
				menv_buf_addch(&ver, ',');
			menv_buf_add(&ver, vals[i], vl);
		}
		if (*bp && strcmp(bp, "*") && !build)
			build = menv_xstrdup(bp);
	}
	if (!ver.len)
		menv_buf_addch(&ver, '*');
	out = build ? menv_xasprintf("%s %s", ver.buf, build) : menv_xstrdup(ver.buf);
	menv_buf_release(&ver);
	free(build);
	return out;
}

/* {name: spec} from "name spec" strings (conda-lock's `dependencies`); the specs of a name
 * listed twice are joined into one (join_dep_values). */
static json_t *deps_to_map(json_t *depends)
{
	json_t *m = json_object();
	size_t i;
	json_t *d;
	json_array_foreach(depends, i, d)
	{
		const char *s = json_string_value(d);
		if (!s)
			continue;
		size_t nl = strcspn(s, " =<>!~[");
		char *name = menv_xstrndup(s, nl);
		const char *rest = s + nl;
		while (*rest == ' ')
			rest++;
		const char *old = json_string_value(json_object_get(m, name));
		if (old) {
			char *j = join_dep_values(old, *rest ? rest : "*");
			json_object_set_new(m, name, json_string(j));
			free(j);
		} else {
			json_object_set_new(m, name, json_string(*rest ? rest : "*"));
		}
		free(name);
	}
	return m;
}

void menv_lockfile_write_conda_lock(const struct menv_lockfile *lf, struct menv_buf *out)
{
	bool same = lf->format == MENV_LOCK_CONDA_LOCK;
	json_t *doc = json_object(), *meta = json_object(), *pkgs = json_array();
	const char *k;
	json_t *v;

	json_object_set_new(doc, "version", json_integer(1));
	json_object_set(meta, "content_hash", lf->content_hash);
	if (same && json_array_size(lf->channels_raw) == lf->channels.n) {
		json_object_set(meta, "channels", lf->channels_raw);
	} else {
		json_t *ch = json_array();
		for (size_t i = 0; i < lf->channels.n; i++)
			json_array_append_new(ch, json_pack("{s:s, s:[]}", "url", lf->channels.v[i],
			                                    "used_env_vars"));
		json_object_set_new(meta, "channels", ch);
	}
	json_t *pl = json_array(), *so = json_array();
	for (size_t i = 0; i < lf->platforms.n; i++)
		json_array_append_new(pl, json_string(lf->platforms.v[i]));
	for (size_t i = 0; i < lf->sources.n; i++)
		json_array_append_new(so, json_string(lf->sources.v[i]));
	json_object_set_new(meta, "platforms", pl);
	json_object_set_new(meta, "sources", so);
	if (same)
		json_object_foreach(lf->metadata_extra, k, v) json_object_set(meta, k, v);
	json_object_set_new(doc, "metadata", meta);
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (!p->url)
			continue; /* a source package has no place in conda-lock v1 */
		json_t *e = json_object(), *h = json_object();
		json_object_set_new(e, "name", jstr_or_null(p->name));
		json_object_set_new(e, "version", jstr_or_null(p->version));
		json_object_set_new(e, "manager",
		                    json_string(p->manager == MENV_LOCK_PIP ? "pip" : "conda"));
		json_object_set_new(e, "platform", jstr_or_null(p->platform));
		if (p->deps_map)
			json_object_set(e, "dependencies", p->deps_map);
		else
			json_object_set_new(e, "dependencies",
			                    p->depends ? deps_to_map(p->depends) : json_object());
		json_object_set_new(e, "url", json_string(p->url));
		if (p->md5)
			json_object_set_new(h, "md5", json_string(p->md5));
		if (p->sha256)
			json_object_set_new(h, "sha256", json_string(p->sha256));
		json_object_set_new(e, "hash", h);
		if (p->manager == MENV_LOCK_CONDA && p->build)
			json_object_set_new(e, "build", json_string(p->build));
		json_object_set_new(e, "category", json_string(p->category ? p->category : "main"));
		json_object_set_new(e, "optional", json_boolean(p->optional));
		if (same)
			json_object_foreach(p->extra, k, v) json_object_set(e, k, v);
		json_array_append_new(pkgs, e);
	}
	json_object_set_new(doc, "package", pkgs);
	menv_buf_adds(out, "# This lock file was generated by menv (conda-lock format version 1, "
	                   "CEP-37). Do not edit.\n"
	                   "# Re-create the environment with:  menv create -n NAME -f THIS_FILE\n");
	y_node(out, doc, 0);
	json_decref(doc);
}

void menv_lockfile_write_explicit(const struct menv_lockfile *lf, const char *platform,
                                  struct menv_buf *out)
{
	if (!platform)
		platform = lf->platforms.n ? lf->platforms.v[0] : menv_platform_subdir();
	menv_buf_adds(out, "# This file may be used to create an environment using:\n"
	                   "# $ menv create -n NAME -f THIS_FILE\n");
	menv_buf_addf(out, "# platform: %s\n@EXPLICIT\n", platform);
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (p->manager != MENV_LOCK_CONDA || !p->url || !on_platform(lf, p, platform))
			continue;
		if (p->sha256)
			menv_buf_addf(out, "%s#sha256:%s\n", p->url, p->sha256);
		else if (p->md5)
			menv_buf_addf(out, "%s#%s\n", p->url, p->md5);
		else
			menv_buf_addf(out, "%s\n", p->url);
	}
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (p->manager != MENV_LOCK_PIP || !p->url || !on_platform(lf, p, platform))
			continue;
		menv_buf_addf(out, "# pip %s @ %s", p->name, p->url);
		if (p->sha256)
			menv_buf_addf(out, "#sha256=%s", p->sha256);
		menv_buf_addch(out, '\n');
	}
}

static json_t *strvec_json(const struct menv_strvec *sv)
{
	json_t *a = json_array();
	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

json_t *menv_lockfile_to_json(const struct menv_lockfile *lf)
{
	json_t *j = json_object(), *pk = json_array(), *envs = json_array();
	json_object_set_new(j, "format", json_string(menv_lock_format_name(lf->format)));
	json_object_set_new(j, "version", json_integer(lf->version));
	json_object_set_new(j, "channels", strvec_json(&lf->channels));
	json_object_set_new(j, "platforms", strvec_json(&lf->platforms));
	json_object_set_new(j, "sources", strvec_json(&lf->sources));
	json_object_set(j, "content_hash", lf->content_hash);
	json_object_set(j, "metadata_extra", lf->metadata_extra);
	for (size_t i = 0; i < lf->nenvs; i++) {
		const struct menv_lock_env *e = &lf->envs[i];
		json_array_append_new(envs, json_pack("{s:s, s:o, s:o, s:o}", "name", e->name,
		                                      "channels", strvec_json(&e->channels),
		                                      "indexes", strvec_json(&e->indexes),
		                                      "find_links", strvec_json(&e->find_links)));
	}
	json_object_set_new(j, "environments", envs);
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		json_t *e = json_object();
		json_object_set_new(e, "manager",
		                    json_string(p->manager == MENV_LOCK_PIP ? "pip" : "conda"));
		json_object_set_new(e, "name", jstr_or_null(p->name));
		json_object_set_new(e, "version", jstr_or_null(p->version));
		json_object_set_new(e, "build", jstr_or_null(p->build));
		json_object_set_new(e, "platform", jstr_or_null(p->platform));
		json_object_set_new(e, "subdir", jstr_or_null(p->subdir));
		json_object_set_new(e, "url", jstr_or_null(p->url));
		json_object_set_new(e, "md5", jstr_or_null(p->md5));
		json_object_set_new(e, "sha256", jstr_or_null(p->sha256));
		json_object_set_new(e, "size", json_integer(p->size));
		json_object_set_new(e, "category", jstr_or_null(p->category));
		json_object_set_new(e, "optional", json_boolean(p->optional));
		json_object_set(e, "depends", p->depends ? p->depends : json_null());
		json_object_set(e, "dependencies", p->deps_map ? p->deps_map : json_null());
		json_object_set(e, "extra", p->extra);
		json_object_set_new(e, "source", jstr_or_null(p->source));
		json_object_set_new(e, "environment", jstr_or_null(p->env));
		json_array_append_new(pk, e);
	}
	json_object_set_new(j, "packages", pk);
	return j;
}

/* ---------------------------------------------------------------------------------------- */
/* environment.yml writing (CEP-24)                                                         */

void menv_envfile_write(const struct menv_envfile *ef, struct menv_buf *out)
{
	if (ef->name) {
		menv_buf_adds(out, "name: ");
		y_str(out, ef->name);
		menv_buf_addch(out, '\n');
	}
	menv_buf_adds(out, "channels:\n");
	for (size_t i = 0; i < ef->channels.n; i++) {
		menv_buf_adds(out, "  - ");
		y_str(out, ef->channels.v[i]);
		menv_buf_addch(out, '\n');
	}
	menv_buf_adds(out, "dependencies:\n");
	for (size_t i = 0; i < ef->deps.n; i++) {
		menv_buf_adds(out, "  - ");
		y_str(out, ef->deps.v[i]);
		menv_buf_addch(out, '\n');
	}
	if (ef->pip.n || ef->has_pip_section) {
		menv_buf_adds(out, "  - pip:\n");
		for (size_t i = 0; i < ef->pip.n; i++) {
			menv_buf_adds(out, "      - ");
			y_str(out, ef->pip.v[i]);
			menv_buf_addch(out, '\n');
		}
	}
	if (ef->var_names.n) {
		menv_buf_adds(out, "variables:\n");
		for (size_t i = 0; i < ef->var_names.n; i++) {
			menv_buf_adds(out, "  ");
			y_str(out, ef->var_names.v[i]);
			menv_buf_adds(out, ": ");
			y_str(out, i < ef->var_values.n ? ef->var_values.v[i] : "");
			menv_buf_addch(out, '\n');
		}
	}
	if (ef->prefix) {
		menv_buf_adds(out, "prefix: ");
		y_str(out, ef->prefix);
		menv_buf_addch(out, '\n');
	}
}
