/*
 * lock_pixi.c - pixi.lock v4-v7 (rattler_lock's format): environments, their per-platform
 * package references, and the package entries they point at (conda and pypi), read into the
 * lockfile model. Read only: menv does not write pixi.lock.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "lockfile.h"
#include "specs.h"

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
	if (menv_lock_jstr(e, "conda")) {
		*kind = "conda";
		*loc = menv_lock_jstr(e, "conda");
	} else if (menv_lock_jstr(e, "pypi")) {
		*kind = "pypi";
		*loc = menv_lock_jstr(e, "pypi");
	} else if (menv_lock_jstr(e, "conda_source")) {
		*kind = "conda_source";
		*loc = menv_lock_jstr(e, "conda_source");
	} else if (version <= 5 && menv_lock_jstr(e, "kind")) {
		*kind = menv_lock_jstr(e, "kind");
		*loc = menv_lock_jstr(e, "url");
		if (!*loc && !strcmp(*kind, "pypi"))
			*loc = menv_lock_jstr(e, "path");
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

/* Entry e (item k of `packages`) as referred to by environment env's platform. */
static int pixi_add(struct menv_lockfile *lf, json_t *e, size_t k, const char *kind,
                    const char *loc, const char *env, const char *platform, const char *src,
                    struct menv_error *err)
{
	struct menv_lock_package *p = menv_lockfile_add(lf);
	p->line = k + 1; /* its index + 1, made its line by menv_lockfile_parse */

	p->manager = !strcmp(kind, "pypi") ? MENV_LOCK_PIP : MENV_LOCK_CONDA;
	p->env = menv_xstrdup(env);
	p->platform = menv_xstrdup(platform);
	menv_lock_entry_common(p, e, e, pixi_keys);
	p->build = menv_lock_jtext(json_object_get(e, "build"));
	p->subdir = menv_lock_jtext(json_object_get(e, "subdir"));
	if (json_is_integer(json_object_get(e, "size")))
		p->size = json_integer_value(json_object_get(e, "size"));
	json_t *dep = json_object_get(e, "depends");
	p->depends = json_is_array(dep) ? json_incref(dep) : NULL;
	if (p->manager == MENV_LOCK_CONDA && !p->depends)
		p->depends = json_array(); /* v6+ omits an empty list */
	if (pixi_is_source(kind, loc)) {
		p->source = menv_xstrdup(loc);
		if (!p->name && !strcmp(kind, "conda_source"))
			p->name = menv_xstrndup(loc, strcspn(loc, "[ @"));
	} else {
		/* with its fragment ("#sha256=..."): menv_lockfile_parse checks it against the
		 * entry's hashes, and gives the entry the one it lacks */
		p->url = menv_xstrdup(loc + (strncmp(loc, "direct+", 7) ? 0 : 7));
	}
	if (p->manager == MENV_LOCK_CONDA && p->url) {
		/* v6+ leaves out what the file name says */
		int rc = menv_lock_fill_from_url(p, true, err);
		if (rc) {
			menv_error_prefix(err, "%s: environment '%s', platform '%s'", src, env,
			                  platform);
			return rc;
		}
	}
	if (!p->name)
		return menv_error_set(err, MENV_EPARSE, "%s: the package '%s' has no name", src,
		                      loc);
	return 0;
}

/* The subdir a pixi platform name stands for (v7 `platforms:`), borrowed. */
const char *menv_lock_pixi_subdir(const struct menv_lockfile *lf, const char *name)
{
	size_t i;
	json_t *p;
	json_array_foreach(lf->platforms_raw, i, p)
	{
		if (json_is_object(p) && menv_lock_jstr(p, "name") &&
		    !strcmp(menv_lock_jstr(p, "name"), name))
			return menv_lock_jstr(p, "subdir") ? menv_lock_jstr(p, "subdir") : name;
	}
	return name;
}

/* A v7 `platforms:` entry as rattler checks it: a name of letters, digits, '_' and '-'
 * (non-ASCII letters allowed, as rattler's is_alphanumeric), listed once, whose subdir (its
 * `subdir:`, else the name) is one conda knows. */
static int pixi_platform_ok(const struct menv_lockfile *lf, json_t *p, const char *name,
                            const char *src, struct menv_error *err)
{
	const char *sub = json_is_object(p) && menv_lock_jstr(p, "subdir")
	                          ? menv_lock_jstr(p, "subdir")
	                          : name;

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
	if (json_is_object(p) && json_object_get(p, "subdir") && !menv_lock_jstr(p, "subdir"))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: platform '%s': 'subdir' must be a string", src, name);
	if (!menv_subdir_known(sub))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: platform '%s': '%s' is not a known platform subdir", src,
		                      name, sub);
	return 0;
}

int menv_lock_parse_pixi(struct menv_lockfile *lf, json_t *root, const char *src,
                         struct menv_lock_at *at, struct menv_error *err)
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
			const char *n = json_is_object(p) ? menv_lock_jstr(p, "name")
			                                  : json_string_value(p);
			*at = (struct menv_lock_at){{"platforms", NULL}, {0, i}, 2, false};
			if (!n)
				return menv_error_set(err, MENV_EPARSE,
				                      "%s: platform %zu has no "
				                      "'name'",
				                      src, i + 1);
			rc = pixi_platform_ok(lf, p, n, src, err);
			if (rc)
				return rc;
			at->n = 0;
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
			*at = (struct menv_lock_at){{"packages", NULL}, {0, i}, 2, false};
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
		json_array_append_new(list, json_pack("[O, I]", e, (json_int_t)i));
		free(norm);
		free(key);
	}
	json_object_foreach(envs, ename, ev)
	{
		*at = (struct menv_lock_at){{"environments", ename, "packages"}, {0}, 2, false};
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
			char *u =
			        menv_lock_jtext(json_is_object(c) ? json_object_get(c, "url") : c);
			if (u)
				menv_strvec_push_owned(&le->channels, u);
		}
		json_array_foreach(json_object_get(ev, "indexes"), i, c)
		{
			char *u = menv_lock_jtext(c);
			if (u)
				menv_strvec_push_owned(&le->indexes, u);
		}
		json_array_foreach(json_object_get(ev, "find-links"), i, c)
		{
			char *u = menv_lock_jtext(json_is_object(c)
			                                  ? (json_object_get(c, "url")
			                                             ? json_object_get(c, "url")
			                                             : json_object_get(c, "path"))
			                                  : c);
			if (u)
				menv_strvec_push_owned(&le->find_links, u);
		}
		json_t *byplat = json_object_get(ev, "packages");
		if (byplat && !json_is_null(byplat) && !json_is_object(byplat)) {
			at->n = 3;
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
			at->key[3] = plat;
			at->n = 4;
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
				at->key[4] = NULL;
				at->index[4] = j;
				at->n = 5;
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
				size_t m, hit_at = 0;
				json_t *pair;
				json_array_foreach(cands, m, pair)
				{
					json_t *cand = json_array_get(pair, 0);
					/* v7 references may name the variant they mean */
					const char *want[] = {"name", "build", "subdir"};
					bool ok = true;
					for (size_t w = 0; w < 3 && ok; w++) {
						const char *rv = menv_lock_jstr(ref, want[w]);
						const char *cv = menv_lock_jstr(cand, want[w]);
						ok = !rv || !cv || !strcmp(rv, cv);
					}
					if (ok) {
						hit = cand;
						hit_at = (size_t)json_integer_value(
						        json_array_get(pair, 1));
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
				rc = pixi_add(lf, hit, hit_at, kind, loc, ename, plat, src, err);
				if (rc) {
					/* about the entry itself */
					*at = (struct menv_lock_at){
					        {"packages", NULL}, {0, hit_at}, 2, false};
					goto out;
				}
			}
		}
	}
	at->n = 0;
	if (lf->nenvs)
		for (size_t j = 0; j < lf->envs[0].channels.n; j++)
			menv_strvec_push(&lf->channels, lf->envs[0].channels.v[j]);
out:
	menv_strset_clear(&declared);
	json_decref(index);
	return rc;
}
