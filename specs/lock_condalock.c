/*
 * lock_condalock.c - conda-lock.yml v1 (CEP-37): its `package:` entries read into the lockfile
 * model (keys menv does not know kept in each entry's `extra`), and the model written back
 * as conda-lock v1 YAML.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lockfile.h"
#include "specs.h"

/* {name: spec} to ["name spec", ...] ("name" alone for "" or "*"). New reference. */
static json_t *deps_from_map(json_t *map)
{
	json_t *a = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(map, k, v)
	{
		char *spec = menv_lock_jtext(v);
		if (!spec || !*spec || !strcmp(spec, "*"))
			json_array_append_new(a, json_string(k));
		else {
			/* "name spec", made on the stack where it fits */
			char buf[256];
			int n = snprintf(buf, sizeof(buf), "%s %s", k, spec);
			char *s = n >= 0 && (size_t)n < sizeof(buf)
			                  ? buf
			                  : menv_xasprintf("%s %s", k, spec);
			json_array_append_new(a, json_string(s));
			if (s != buf)
				free(s);
		}
		free(spec);
	}
	return a;
}

static const char *const conda_lock_keys[] = {"name",         "version", "manager", "platform",
                                              "dependencies", "url",     "hash",    "category",
                                              "optional",     "build",   NULL};

/* What a `dependencies` value is when it is no version text (NULL when it is one: a string, a
 * number, or null for "any"). */
static const char *dep_value_kind(json_t *v)
{
	return json_is_object(v)    ? "a mapping"
	       : json_is_array(v)   ? "a list"
	       : json_is_boolean(v) ? "a boolean"
	                            : NULL;
}

/* Entry idx of the `package` list; *at is its path (package, idx), which an error about one
 * of its values extends to that value, with the column. */
static int conda_lock_entry(struct menv_lockfile *lf, json_t *e, size_t idx, const char *src,
                            struct menv_lock_at *at, struct menv_error *err)
{
	static const char *const req[] = {"name", "version", "manager", "platform", "url", NULL};
	const char *name = menv_lock_jstr(e, "name");
	int rc = 0;

	if (!json_is_object(e)) {
		at->col = true; /* a "- ~" item: where on its line */
		return menv_error_set(err, MENV_EPARSE, "%s: package entry %zu is not a mapping",
		                      src, idx + 1);
	}
	for (size_t i = 0; req[i]; i++) {
		json_t *v = json_object_get(e, req[i]);
		if (!v || json_is_null(v) || json_is_object(v) || json_is_array(v))
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: package entry %zu ('%s') "
			                      "lacks '%s'",
			                      src, idx + 1, name ? name : "?", req[i]);
	}
	/* conda-lock's model takes a string (pydantic, strict): `platform: 64` named no platform
	 * menv installs for, and the entry was left out silently */
	if (!json_is_string(json_object_get(e, "platform"))) {
		char *t = menv_lock_jtext(json_object_get(e, "platform"));
		*at = (struct menv_lock_at){{"package", NULL, "platform"}, {0, idx}, 3, true};
		menv_error_set(err, MENV_EPARSE,
		               "%s: package entry %zu ('%s'): its platform %s is not a string (a "
		               "platform name such as \"linux-64\")",
		               src, idx + 1, name ? name : "?", t ? t : "?");
		free(t);
		return MENV_EPARSE;
	}
	/* conda-lock's model requires `hash` (and a conda package's md5): without it the
	 * package was installed unchecked */
	json_t *hash = json_object_get(e, "hash");
	if (!json_is_object(hash))
		return menv_error_set(err, MENV_EPARSE, "%s: no md5 or sha256 for %s (%s)", src,
		                      name ? name : "?",
		                      !hash || json_is_null(hash) ? "the entry has no 'hash'"
		                                                  : "its 'hash' is not a mapping");
	const char *manager = menv_lock_jstr(e, "manager");
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
	} else if (json_is_object(deps)) {
		/* {name: VERSION}: a mapping or a list there was read as "any version" */
		const char *k;
		json_t *v;
		json_object_foreach(deps, k, v)
		{
			const char *kind = dep_value_kind(v);
			if (!kind)
				continue;
			*at = (struct menv_lock_at){
			        {"package", NULL, "dependencies", k}, {0, idx}, 4, true};
			return menv_error_set(
			        err, MENV_EPARSE,
			        "%s: package entry %zu ('%s'): the dependency '%s' is "
			        "%s, not a version (\"VERSION[ BUILD]\", \"*\" or "
			        "nothing)",
			        src, idx + 1, name ? name : "?", k, kind);
		}
	}

	struct menv_lock_package *p = menv_lockfile_add(lf);
	p->manager = strcmp(manager, "conda") ? MENV_LOCK_PIP : MENV_LOCK_CONDA;
	menv_lock_entry_common(p, e, hash, conda_lock_keys);
	p->platform = menv_lock_jtext(json_object_get(e, "platform"));
	p->url = menv_lock_jtext(json_object_get(e, "url"));
	if (json_is_string(json_object_get(e, "category"))) {
		p->category = menv_xstrdup(menv_lock_jstr(e, "category")); /* was "main" */
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
	if (p->manager == MENV_LOCK_CONDA) {
		/* rattler's versions 2-3 say the build and subdir (rattler prefers them) */
		if (menv_lock_jstr(e, "build"))
			p->build = menv_xstrdup(menv_lock_jstr(e, "build"));
		if (menv_lock_jstr(e, "subdir"))
			p->subdir = menv_xstrdup(menv_lock_jstr(e, "subdir"));
		rc = menv_lock_fill_from_url(p, false, err);
		if (rc)
			menv_error_prefix(err, "%s: package entry %zu ('%s')", src, idx + 1, name);
	}
	return rc;
}

int menv_lock_parse_conda_lock(struct menv_lockfile *lf, json_t *root, const char *src,
                               struct menv_lock_at *at, struct menv_error *err)
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
					char *u = menv_lock_jtext(
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
					char *t = menv_lock_jtext(c);
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
		*at = (struct menv_lock_at){{"package", NULL}, {0, i}, 2, false};
		int rc = conda_lock_entry(lf, v, i, src, at, err);
		if (rc)
			return rc;
	}
	at->n = 0;
	/* platforms named by entries but not in the metadata still count */
	struct menv_strset seen = MENV_STRSET_INIT;
	for (size_t j = 0; j < lf->platforms.n; j++)
		menv_strset_add(&seen, lf->platforms.v[j]);
	for (size_t j = 0; j < lf->npkgs; j++)
		menv_strvec_push_unique(&lf->platforms, &seen, lf->pkgs[j].platform);
	menv_strset_clear(&seen);
	return 0;
}

struct stream {
	struct menv_lockfile *lf;
	const char *src;
	struct menv_error *err;
};

/* The member `key` of m, or NULL. */
static const struct menv_yaml_member *member(const struct menv_yaml_members *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->m[i].key, key))
			return &m->m[i];
	return NULL;
}

/* A member that is a scalar typed as a string (menv_yaml_scalar_type): its text, else NULL. */
static const char *member_text(const struct menv_yaml_member *e)
{
	return e && e->text && menv_yaml_scalar_type(e->text, e->style) == JSON_STRING ? e->text
	                                                                               : NULL;
}

/* A hash of `hash`'s members (md5 or sha256) as menv_lock_entry_common sets a conda entry's,
 * lowercase, into lf's strings (an empty string kept, which menv_lockfile_parse refuses): true,
 * or false where it is not a string (or null or missing). */
static bool member_hash(struct menv_lockfile *lf, const struct menv_yaml_members *hash,
                        const char *k, char **slot)
{
	const struct menv_yaml_member *e = member(hash, k);
	*slot = NULL;
	if (!e)
		return true;
	json_type t = e->text ? menv_yaml_scalar_type(e->text, e->style) : JSON_ARRAY;
	if (t == JSON_STRING) {
		*slot = menv_lock_strdup(lf, e->text);
		for (char *c = *slot; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	return t == JSON_NULL || t == JSON_STRING;
}

/* `dependencies`' members (a mapping of scalars) as deps_from_map makes the array of the
 * mapping's JSON, in *out (new reference); *implied where menv_lock_deps_map gives the
 * mapping back exactly from that array (every value a string that is neither empty nor
 * starts with a blank, each name free of the characters that end a name): no JSON of the
 * mapping is kept then. False where a value is no version (a boolean, a collection). */
static bool member_deps(const struct menv_yaml_members *deps, json_t **out, bool *implied)
{
	*out = json_array();
	*implied = true;
	for (size_t i = 0; deps && i < deps->n; i++) {
		const struct menv_yaml_member *d = &deps->m[i];
		json_type t = d->text ? menv_yaml_scalar_type(d->text, d->style) : JSON_ARRAY;
		if (t != JSON_STRING && t != JSON_NULL && t != JSON_INTEGER) {
			json_decref(*out);
			return false;
		}
		char *typed = NULL;
		if (t != JSON_STRING) {
			json_t *v = menv_yaml_scalar_json(d->text, d->style);
			typed = menv_lock_jtext(v);
			json_decref(v);
		}
		const char *spec = t == JSON_STRING ? d->text : typed;
		*implied = *implied && t == JSON_STRING && *spec && *spec != ' ' && *d->key &&
		           !d->key[strcspn(d->key, " =<>!~[")];
		if (!spec || !*spec || !strcmp(spec, "*")) {
			json_array_append_new(*out, json_string_nocheck(d->key));
		} else {
			/* "name spec", made on the stack where it fits */
			char buf[256];
			size_t kl = strlen(d->key), sl = strlen(spec);
			char *s = kl + sl + 2 <= sizeof(buf) ? buf : menv_xmalloc(kl + sl + 2);
			memcpy(s, d->key, kl);
			s[kl] = ' ';
			memcpy(s + kl + 1, spec, sl + 1);
			json_array_append_new(*out, json_string_nocheck(s));
			if (s != buf)
				free(s);
		}
		free(typed);
	}
	return true;
}

/* The usual conda entry (its keys, each of the type conda_lock_entry wants, a plain package
 * URL), straight from its members into lf with its strings held by lf: no JSON object of the
 * entry, no string of its own (issue 22). False, with lf unchanged, for any other entry:
 * conda_lock_entry reads it (and says what is wrong with it). */
static bool fast_entry(struct menv_lockfile *lf, const struct menv_yaml_members *m)
{
	/* the known keys, each told by its first letter (one pass, one strcmp a member; the
	 * reader refused a key given twice) */
	static const char *const known[26] = {
	        ['n' - 'a'] = "name",     ['v' - 'a'] = "version", ['m' - 'a'] = "manager",
	        ['p' - 'a'] = "platform", ['u' - 'a'] = "url",     ['c' - 'a'] = "category",
	        ['b' - 'a'] = "build",    ['h' - 'a'] = "hash",    ['d' - 'a'] = "dependencies",
	        ['o' - 'a'] = "optional"};
	const struct menv_yaml_member *at[26] = {0};
	for (size_t i = 0; i < m->n; i++) {
		const char *k = m->m[i].key;
		unsigned c = (unsigned char)k[0] - 'a';
		if (c >= 26 || !known[c] || strcmp(k, known[c]))
			return false;
		at[c] = &m->m[i];
	}
	const char *name = member_text(at['n' - 'a']);
	const char *version = member_text(at['v' - 'a']);
	const char *manager = member_text(at['m' - 'a']);
	const char *platform = member_text(at['p' - 'a']);
	const char *url = member_text(at['u' - 'a']);
	const struct menv_yaml_member *category = at['c' - 'a'];
	const struct menv_yaml_member *build = at['b' - 'a'];
	const struct menv_yaml_member *hash = at['h' - 'a'];
	const struct menv_yaml_member *deps = at['d' - 'a'];
	const struct menv_yaml_member *optional = at['o' - 'a'];
	const char *dash[3];
	if (!name || !version || !manager || strcmp(manager, "conda") || !platform || !url ||
	    (category && !member_text(category)) || (build && !member_text(build)) || !hash ||
	    !hash->sub ||
	    (deps && !deps->sub &&
	     !(deps->text && menv_yaml_scalar_type(deps->text, deps->style) == JSON_NULL)) ||
	    strchr(url, '#') || !menv_lock_split_in_place(url, dash))
		return false;
	char *md5, *sha256;
	if (!member_hash(lf, hash->sub, "md5", &md5) ||
	    !member_hash(lf, hash->sub, "sha256", &sha256))
		return false; /* (the strings made stay in lf's chunks, freed with it) */
	json_t *depends;
	bool implied;
	if (!member_deps(deps ? deps->sub : NULL, &depends, &implied))
		return false;
	struct menv_lock_package *p = menv_lockfile_add(lf);
	p->manager = MENV_LOCK_CONDA;
	p->name = menv_lock_strdup(lf, name);
	p->version = menv_lock_strdup(lf, version);
	p->md5 = md5;
	p->sha256 = sha256;
	const struct menv_lock_package *prev = lf->npkgs > 1 ? p - 1 : NULL;
	/* the strings of the entry before that lf holds (menv_lock_holds) may be shared */
	if (prev && (!menv_lock_holds(lf, prev->platform) || !menv_lock_holds(lf, prev->subdir)))
		prev = NULL;
	p->platform = prev && !strcmp(prev->platform, platform) ? prev->platform
	                                                        : menv_lock_strdup(lf, platform);
	p->url = menv_lock_strdup(lf, url);
	if (category)
		p->category = menv_lock_strdup(lf, category->text);
	p->optional = optional && optional->text &&
	              menv_yaml_scalar_type(optional->text, optional->style) == JSON_TRUE;
	p->depends = depends;
	p->deps_map_implied = implied;
	if (!implied)
		p->deps_map = menv_yaml_members_json(deps->sub);
	/* the build as the entry says it, else as its file name does (menv_lock_fill_from_url);
	 * the subdir, the folder before the file name, the entry before's copy where the same */
	p->build = build ? menv_lock_strdup(lf, build->text)
	                 : menv_lock_strndup(lf, dash[1] + 1, (size_t)(dash[2] - dash[1] - 1));
	size_t off, sl;
	if (menv_url_folder(url, &off, &sl))
		p->subdir =
		        prev && strlen(prev->subdir) == sl && !memcmp(prev->subdir, url + off, sl)
		                ? prev->subdir
		                : menv_lock_strndup(lf, url + off, sl);
	return true;
}

/* An entry as it ends; one refused sends the file to the general reader, which finds it
 * again (a header error may come first) and says where it is (menv_lock_at). */
static int stream_entry(void *ud, json_t *e, const struct menv_yaml_members *m, size_t idx,
                        size_t line)
{
	struct stream *st = ud;
	struct menv_lock_at at = {{"package", NULL}, {0, idx}, 2, false};
	if (m && fast_entry(st->lf, m)) {
		st->lf->pkgs[st->lf->npkgs - 1].line = line;
		return 0;
	}
	if (m)
		e = menv_yaml_members_json(m);
	int rc = conda_lock_entry(st->lf, e, idx, st->src, &at, st->err);
	if (!rc)
		st->lf->pkgs[st->lf->npkgs - 1].line = line;
	json_decref(e);
	return rc;
}

void menv_lock_error_line(struct menv_error *err, const char *src, size_t line, size_t col)
{
	size_t n = strlen(src);
	if (line && !strncmp(err->msg, src, n) && !strncmp(err->msg + n, ": ", 2)) {
		char *rest = menv_xstrdup(err->msg + n + 2);
		if (col)
			menv_error_set(err, err->code, "%s:%zu:%zu: %s", src, line, col, rest);
		else
			menv_error_set(err, err->code, "%s:%zu: %s", src, line, rest);
		free(rest);
	}
}

int menv_lock_read_conda_lock(struct menv_lockfile *lf, const char *bytes, size_t len, int fd,
                              const char *src, struct menv_lock_at *at, struct menv_error *err)
{
	struct stream st = {lf, src, err};
	json_t *root = NULL;
	/* every entry names its manager */
	if (bytes)
		menv_lockfile_reserve(lf, menv_lock_count(bytes, len, "manager:"));
	int rc =
	        bytes ? menv_yaml_stream_json(bytes, len, src, "package", stream_entry, &st, &root,
	                                      err)
	              : menv_yaml_stream_json_fd(fd, src, "package", stream_entry, &st, &root, err);
	if (rc)
		return rc;
	if (!json_is_object(root))
		rc = 1; /* menv_lockfile_parse says what it is */
	else
		rc = menv_lock_parse_conda_lock(lf, root, src, at, err);
	json_decref(root);
	return rc;
}

int menv_lock_scan_conda_lock(struct menv_lockfile *lf, const char *bytes, size_t len, int fd,
                              const char *src, struct menv_lock_at *at, struct menv_error *err)
{
	struct stream st = {lf, src, err};
	json_t *root = NULL;
	int rc = menv_lock_scan(bytes, len, fd, src, "package", stream_entry, &st, &root, err);
	if (rc == 1)
		menv_lockfile_clear_entries(lf); /* those read before it fell back */
	if (rc)
		return rc;
	rc = menv_lock_parse_conda_lock(lf, root, src, at, err);
	json_decref(root);
	return rc;
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

json_t *menv_lock_deps_map(json_t *depends)
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

/* s as a JSON string as it is, or JSON null for NULL: bytes that are not UTF-8 reach the YAML
 * writer, whose emitter refuses them (json_string() would drop the value silently). */
static json_t *raw_str(const char *s)
{
	return s ? json_string_nocheck(s) : json_null();
}

int menv_lockfile_write_conda_lock(const struct menv_lockfile *lf, struct menv_buf *out,
                                   struct menv_error *err)
{
	bool same = lf->format == MENV_LOCK_CONDA_LOCK;
	json_t *doc = json_object(), *meta = json_object(), *pkg = json_array();
	const char *k;
	json_t *v;
	int rc = 0;

	json_object_set_new(doc, "version", json_integer(1));
	json_object_set(meta, "content_hash", lf->content_hash);
	if (same && json_array_size(lf->channels_raw) == lf->channels.n) {
		json_object_set(meta, "channels", lf->channels_raw);
	} else {
		json_t *ch = json_array();
		for (size_t i = 0; i < lf->channels.n; i++)
			json_array_append_new(ch, json_pack("{s:o, s:[]}", "url",
			                                    raw_str(lf->channels.v[i]),
			                                    "used_env_vars"));
		json_object_set_new(meta, "channels", ch);
	}
	json_t *pl = json_array(), *so = json_array();
	for (size_t i = 0; i < lf->platforms.n; i++)
		json_array_append_new(pl, raw_str(lf->platforms.v[i]));
	for (size_t i = 0; i < lf->sources.n; i++)
		json_array_append_new(so, raw_str(lf->sources.v[i]));
	json_object_set_new(meta, "platforms", pl);
	json_object_set_new(meta, "sources", so);
	if (same)
		json_object_foreach(lf->metadata_extra, k, v) json_object_set(meta, k, v);
	json_object_set_new(doc, "metadata", meta);
	menv_buf_adds(out, "# This lock file was generated by menv (conda-lock format version 1, "
	                   "CEP-37). Do not edit.\n"
	                   "# Re-create the environment with:  menv create -n NAME -f THIS_FILE\n");
	if ((rc = menv_yaml_write(out, doc, 0, NULL, err))) {
		menv_error_prefix(err, "cannot write the lock's metadata");
		goto out;
	}
	/* one entry at a time, so that an error names its package */
	bool any = false;
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (!p->url)
			continue; /* a source package has no place in conda-lock v1 */
		const char *manager = p->manager == MENV_LOCK_PIP ? "pip" : "conda";
		json_t *e = json_object(), *h = json_object();
		json_object_set_new(e, "name", raw_str(p->name));
		json_object_set_new(e, "version", raw_str(p->version));
		json_object_set_new(e, "manager", json_string(manager));
		json_object_set_new(e, "platform", raw_str(p->platform));
		if (p->deps_map)
			json_object_set(e, "dependencies", p->deps_map);
		else
			json_object_set_new(e, "dependencies",
			                    p->depends ? menv_lock_deps_map(p->depends)
			                               : json_object());
		json_object_set_new(e, "url", raw_str(p->url));
		if (p->md5)
			json_object_set_new(h, "md5", raw_str(p->md5));
		if (p->sha256)
			json_object_set_new(h, "sha256", raw_str(p->sha256));
		json_object_set_new(e, "hash", h);
		if (p->manager == MENV_LOCK_CONDA && p->build)
			json_object_set_new(e, "build", raw_str(p->build));
		json_object_set_new(e, "category", raw_str(p->category ? p->category : "main"));
		json_object_set_new(e, "optional", json_boolean(p->optional));
		if (same)
			json_object_foreach(p->extra, k, v) json_object_set(e, k, v);
		json_array_clear(pkg);
		json_array_append_new(pkg, e);
		if (!any)
			menv_buf_adds(out, "package:\n");
		any = true;
		if ((rc = menv_yaml_write(out, pkg, 2, NULL, err))) {
			menv_error_prefix(err, "cannot write package '%s' %s (%s)",
			                  p->name ? p->name : "", p->version ? p->version : "",
			                  manager);
			goto out;
		}
	}
	if (!any)
		menv_buf_adds(out, "package: []\n");
out:
	json_decref(pkg);
	json_decref(doc);
	return rc;
}
