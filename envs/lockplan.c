/*
 * lockplan.c - a lockfile's records in a transaction's plan (txn.c): `create -f LOCK` and
 * `install -f LOCK` install exactly what the lock names, without repodata and without the
 * solver (conda-lock v1 CEP-37, explicit CEP-23, pixi.lock v4-v7, micromamba JSON).
 *
 * The records come from the lock: URL, md5/sha256 and size (verified by the package cache
 * while downloading), depends where the lock has them. After the files are in the cache
 * each record is completed from the package's own info/index.json (build_number, license,
 * noarch, ...; depends when the lock has none, e.g. explicit files), and the cache's
 * info/repodata_record.json is rewritten to that complete record, so the conda-meta
 * PrefixRecords are the same whether the cache was cold or warm (a warm cache's record that
 * already is that completion is taken as it stands, not merged again; what index.json says
 * is checked still, to know the file is the package the lock names: from the compact
 * paths.json where menv kept it at the extraction, while index.json is the file read then,
 * else from index.json). Also the pip request of a lock's pip entries.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "txnpriv.h"

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Record keys a lock may carry beyond url/hashes/depends (pixi), copied into the record. */
static const char *const record_keys[] = {
        "build_number",   "constrains", "license",
        "license_family", "timestamp",  "noarch",
        "track_features", "features",   "python_site_packages_path",
        "arch",           "platform",   NULL};

void menv_lockrecs_release(struct menv_lockrecs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->recs[i].json) /* a light record owns nothing */
			menv_record_release(&l->recs[i]);
		menv_channel_free(l->chans[i]);
		json_decref(l->solved ? l->solved[i] : NULL);
	}
	menv_channels_free(l->folders, l->nfolders);
	menv_strvec_clear(&l->pool);
	free(l->recs);
	free(l->pkgs);
	free(l->chans);
	free(l->skip);
	free(l->lock_depends);
	free(l->solved);
	memset(l, 0, sizeof(*l));
}

/* Fills r from a JSON object plus the lock's URL (r owns new copies). */
static int record_set(struct menv_record *r, json_t *obj, const char *url,
                      const struct menv_channel *ch, struct menv_error *err)
{
	const char *fn = jstr(obj, "fn");
	int rc = menv_record_from_json(r, obj, fn, NULL, ch, err);
	if (rc)
		return rc;
	r->url = menv_xstrdup(url);
	r->channel_url = menv_xasprintf("%s/%s", ch->base_url, r->subdir ? r->subdir : "noarch");
	return 0;
}

/* The length of a package URL's folder ("https://h/c/linux-64/x-1-0.conda" -> up to the last
 * '/'), when the URL ends in a plain package file name (menv_url_basename; no query or
 * fragment); else 0. */
static size_t package_folder(const char *url)
{
	size_t n;
	const char *b = menv_url_basename(url, &n);
	if (b <= url + 1 || b[n])
		return 0;
	if ((n > 6 && !strcmp(b + n - 6, ".conda")) || (n > 8 && !strcmp(b + n - 8, ".tar.bz2")))
		return (size_t)(b - 1 - url);
	return 0;
}

/* The channel of a package URL, resolved once per folder: a lock names thousands of packages
 * of a few channels, and resolving one costs as much as reading .condarc's channel settings.
 * The packages of one folder share the first one's channel (it differs from theirs only in
 * the package file name, which *fn gives: borrowed from the URL or the channel); *own is set
 * when the channel is the record's own (a URL that names no package folder). */
static int channel_of(const char *url, const struct menv_config *cfg, struct menv_strmap *seen,
                      struct menv_lockrecs *l, struct menv_channel **out, bool *own,
                      const char **fn, struct menv_error *err)
{
	size_t dir = package_folder(url);
	char *key = dir ? menv_xstrndup(url, dir) : NULL;
	const size_t *at = key ? menv_strmap_get(seen, key) : NULL;
	int rc = 0;

	*own = false;
	if (at) {
		*out = l->folders[*at];
		*fn = url + dir + 1;
	} else {
		rc = menv_channel_parse(url, cfg, out, err);
		if (!rc && key) {
			l->folders =
			        menv_xrealloc(l->folders, (l->nfolders + 1) * sizeof(*l->folders));
			l->folders[l->nfolders] = *out;
			menv_strmap_put(seen, key, l->nfolders++);
		} else if (!rc) {
			*own = true;
		}
		if (!rc)
			*fn = (*out)->package_filename;
	}
	free(key);
	return rc;
}

/* The JSON of a lock entry's record, as the cache's completion overlays it on the
 * package's index.json: its identity, file, subdir, hashes, size, depends and the record
 * keys it carries. New reference. */
static json_t *entry_json(const struct menv_lock_package *p, const char *fn, const char *subdir)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "version", json_string(p->version));
	json_object_set_new(o, "build", json_string(p->build));
	json_object_set_new(o, "fn", json_string(fn));
	if (subdir)
		json_object_set_new(o, "subdir", json_string(subdir));
	if (p->md5)
		json_object_set_new(o, "md5", json_string(p->md5));
	if (p->sha256)
		json_object_set_new(o, "sha256", json_string(p->sha256));
	if (p->size >= 0)
		json_object_set_new(o, "size", json_integer(p->size));
	if (p->depends)
		json_object_set(o, "depends", p->depends);
	for (size_t k = 0; record_keys[k]; k++) {
		json_t *v = json_object_get(p->extra, record_keys[k]);
		if (v)
			json_object_set(o, record_keys[k], v);
	}
	return o;
}

/* `s` kept once in l's pool (`at` maps each to its index); the pooled copy. Takes s. */
static char *pooled(struct menv_lockrecs *l, struct menv_strmap *at, char *s)
{
	const size_t *k = menv_strmap_get(at, s);
	if (k) {
		free(s);
		return l->pool.v[*k];
	}
	menv_strmap_put(at, s, l->pool.n);
	menv_strvec_push_owned(&l->pool, s);
	return s;
}

/* A light record of lock entry p (no JSON: what the plan and a dry run read), with the
 * fields menv_record_from_json would give the entry's JSON (entry_json). */
static int light_record(struct menv_lockrecs *l, struct menv_strmap *urls,
                        const struct menv_lock_package *p, const char *fn, const char *subdir,
                        const struct menv_channel *ch, struct menv_record *r,
                        struct menv_error *err)
{
	memset(r, 0, sizeof(*r));
	if (!p->name || !p->version || !p->build)
		return menv_error_set(err, MENV_EPARSE,
		                      "record '%s' lacks a name, version or build string", fn);
	r->name = p->name;
	r->version = p->version;
	r->build = p->build;
	r->fn = fn;
	r->subdir = subdir;
	r->md5 = p->md5;
	r->sha256 = p->sha256;
	r->size = p->size >= 0 ? p->size : -1;
	r->depends = json_is_array(p->depends) ? p->depends : NULL;
	json_t *v = json_object_get(p->extra, "build_number");
	r->build_number = json_is_integer(v) ? json_integer_value(v) : 0;
	v = json_object_get(p->extra, "timestamp");
	r->timestamp = json_is_integer(v) ? json_integer_value(v) : 0;
	if (r->timestamp > 0 && r->timestamp < 253402300799LL)
		r->timestamp *= 1000; /* seconds, as menv_record_from_json takes them */
	v = json_object_get(p->extra, "noarch");
	r->noarch_python = json_is_string(v) && !strcmp(json_string_value(v), "python");
	r->channel = ch;
	r->url = p->url;
	/* the channel URL of a package folder's records, built once (the record before is most
	 * often of the same folder) */
	const char *sd = subdir ? subdir : "noarch";
	const struct menv_record *prev = r > l->recs ? r - 1 : NULL;
	if (prev && prev->channel == ch && !strcmp(prev->subdir ? prev->subdir : "noarch", sd))
		r->channel_url = prev->channel_url;
	else
		r->channel_url = pooled(l, urls, menv_xasprintf("%s/%s", ch->base_url, sd));
	return 0;
}

/* What the create checks once the package is fetched, checked for the plan (so a dry run
 * says it too): the entry's URL is one (a path or "chan/x.conda" was taken as a channel
 * path by the plan and as a host name by the download), and its file `fn`, when it is a
 * package file name, is the entry's name, version and build (the create compares them with
 * the package's index.json). */
static int entry_matches_url(const struct menv_lock_package *p, const char *fn,
                             struct menv_error *err)
{
	char *n = NULL, *v = NULL, *b = NULL;
	int rc = 0;
	if (!strstr(p->url, "://"))
		return menv_error_set(err, MENV_EPARSE,
		                      "lockfile entry '%s %s %s': its url '%s' is not a URL "
		                      "(scheme://...)",
		                      p->name ? p->name : "?", p->version ? p->version : "?",
		                      p->build ? p->build : "?", p->url);
	if (menv_dist_split(fn, &n, &v, &b, NULL) == 0 &&
	    ((p->name && strcmp(p->name, n)) || (p->version && strcmp(p->version, v)) ||
	     (p->build && strcmp(p->build, b))))
		rc = menv_error_set(err, MENV_EUNSAFE,
		                    "lockfile entry '%s %s %s': the package file '%s' is %s %s %s",
		                    p->name ? p->name : "?", p->version ? p->version : "?",
		                    p->build ? p->build : "?", fn, n, v, b);
	free(n);
	free(v);
	free(b);
	return rc;
}

/* The lock's conda entries as light records (before the cache completes them): nothing is
 * allocated per entry but the record itself (issue 22: 100,000 entries planned in well
 * under a second). */
/* "SRC:LINE: " (or "SRC: ") before the error about entry p. */
static int entry_error(const char *src, const struct menv_lock_package *p, int rc,
                       struct menv_error *err)
{
	if (p->line)
		menv_error_prefix(err, "%s:%zu", src, p->line);
	else
		menv_error_prefix(err, "%s", src);
	return rc;
}

int menv_lockrecs_build(const struct menv_config *cfg, const char *src,
                        const struct menv_lock_package **sel, size_t nsel,
                        struct menv_lockrecs *out, struct menv_error *err)
{
	struct menv_strmap seen = MENV_STRMAP_INIT; /* package folder -> its channel in folders */
	struct menv_strmap urls = MENV_STRMAP_INIT; /* pooled string -> its index in pool */
	int rc = 0;

	out->recs = menv_xcalloc(nsel + 1, sizeof(*out->recs));
	out->pkgs = menv_xcalloc(nsel + 1, sizeof(*out->pkgs));
	out->chans = menv_xcalloc(nsel + 1, sizeof(*out->chans));
	out->lock_depends = menv_xcalloc(nsel + 1, sizeof(*out->lock_depends));
	out->solved = menv_xcalloc(nsel + 1, sizeof(*out->solved));
	out->src = src;
	for (size_t i = 0; i < nsel; i++) {
		const struct menv_lock_package *p = sel[i];
		if (p->manager != MENV_LOCK_CONDA)
			continue;
		struct menv_channel *ch = NULL;
		const char *fn = NULL;
		bool own = false;
		/* the channel and file name of the URL's path: a query or a "#md5" fragment
		 * ("…/x-1-0.conda?token=…") made a channel "…/x-1-0.conda?token=…/noarch" */
		size_t plen = strcspn(p->url, "?#");
		const char *path =
		        p->url[plen] ? pooled(out, &urls, menv_xstrndup(p->url, plen)) : p->url;
		rc = channel_of(path, cfg, &seen, out, &ch, &own, &fn, err);
		if (rc) {
			menv_error_prefix(err, "lockfile entry '%s'", p->name);
			entry_error(src, p, rc, err);
			goto out;
		}
		if (!fn) {
			size_t fl; /* path has no query or fragment: fn ends where it does */
			fn = menv_url_basename(path, &fl);
		}
		if ((rc = entry_matches_url(p, fn, err))) {
			entry_error(src, p, rc, err);
			menv_channel_free(own ? ch : NULL);
			goto out;
		}
		out->lock_depends[out->n] = p->depends != NULL;
		out->chans[out->n] = own ? ch : NULL;
		out->pkgs[out->n] = p;
		rc = light_record(out, &urls, p, fn, p->subdir ? p->subdir : ch->platform, ch,
		                  &out->recs[out->n], err);
		if (rc) {
			entry_error(src, p, rc, err);
			menv_channel_free(out->chans[out->n]);
			out->chans[out->n] = NULL;
			goto out;
		}
		/* the fragment is no part of what is downloaded, nor of the record's url */
		const char *hash = strchr(p->url, '#');
		if (hash)
			out->recs[out->n].url =
			        pooled(out, &urls, menv_xstrndup(p->url, (size_t)(hash - p->url)));
		out->n++;
	}
out:
	menv_strmap_clear(&seen);
	menv_strmap_clear(&urls);
	return rc;
}

/* A non-empty string o[k], or NULL. */
static const char *jhash(json_t *o, const char *k)
{
	const char *s = jstr(o, k);
	return s && *s ? s : NULL;
}

/* Whether the package-cache entry `j` (an info/repodata_record.json) is the package of record
 * r, which gives both hashes, and r has one of them wrong: one hash the same, the other not
 * (the same sha256 is the same file; the same md5 too, as good as). Then an error naming the
 * wrong one. A cache entry with another package of the same file name (both differ) is not
 * this one: the fetch replaces it. */
static int hashes_disagree(const struct menv_record *r, json_t *j, const char *dir,
                           struct menv_error *err)
{
	const char *hs = jhash(j, "sha256"), *hm = jhash(j, "md5");
	if (!hs || !hm)
		return 0;
	bool sha = !strcasecmp(hs, r->sha256), md5 = !strcasecmp(hm, r->md5);
	if (sha == md5)
		return 0;
	return menv_error_set(err, MENV_ECHECKSUM,
	                      "lockfile entry '%s %s %s': its %s %s is not the package's (%s: "
	                      "'%s' in the package cache has the entry's %s)",
	                      r->name, r->version, r->build, sha ? "md5" : "sha256",
	                      sha ? r->md5 : r->sha256, sha ? hm : hs, dir, sha ? "sha256" : "md5");
}

int menv_lockrecs_check_cache(const char *pkgs_dir, const struct menv_strvec *dirs,
                              const struct menv_lockrecs *l, const struct menv_record *const *link,
                              const bool *cached, size_t n, struct menv_error *err)
{
	size_t *todo = menv_xcalloc(n + 1, sizeof(*todo)), nt = 0, ndirs = dirs ? dirs->n : 0;
	int rc = 0;

	for (size_t k = 0; k < n; k++) {
		const struct menv_record *r = link[k];
		if (!cached[k] && r >= l->recs && r < l->recs + l->n && r->md5 && r->sha256)
			todo[nt++] = k;
	}
	/* the entries of dirs, then pkgs_dir, each listed once: a lock of 100,000 packages that
	 * no cache holds costs a readdir a cache, not 100,000 failed opens */
	for (size_t c = 0; nt && c <= ndirs && !rc; c++) {
		const char *dir = c < ndirs ? dirs->v[c] : pkgs_dir;
		bool again = false;
		for (size_t q = 0; q < c && !again; q++)
			again = !strcmp(dirs->v[q], dir);
		DIR *d = again ? NULL : opendir(dir);
		if (!d)
			continue;
		struct menv_strset names = MENV_STRSET_INIT;
		for (struct dirent *e; (e = readdir(d));)
			menv_strset_add(&names, e->d_name);
		closedir(d);
		for (size_t q = 0; q < nt && !rc; q++) {
			const struct menv_record *r = link[todo[q]];
			char *path = menv_pkgcache_dir(dir, r);
			if (menv_strset_has(&names, strrchr(path, '/') + 1)) {
				char *rpath = menv_xasprintf("%s/info/repodata_record.json", path);
				json_t *j = menv_pkgmeta_load(rpath, NULL); /* read-only */
				rc = hashes_disagree(r, j, path, err);
				if (rc)
					entry_error(l->src, l->pkgs[r - l->recs], rc, err);
				json_decref(j);
				free(rpath);
			}
			free(path);
		}
		menv_strset_clear(&names);
	}
	free(todo);
	return rc;
}

void menv_lockrecs_fetch_error(const struct menv_lockrecs *l, struct menv_error *err)
{
	/* a checksum error names the package file: the entry's line goes first */
	for (size_t i = 0; err->code == MENV_ECHECKSUM && i < l->n; i++) {
		char *q = menv_xasprintf("'%s'", l->recs[i].fn);
		bool named = strstr(err->msg, q) != NULL;
		free(q);
		if (named) {
			entry_error(l->src, l->pkgs[i], err->code, err);
			return;
		}
	}
	menv_error_prefix(err, "while fetching the packages of '%s'", l->src);
}

/* Each light record of l (but the skipped) given its JSON, as the fetch, the cache and
 * conda-meta need a PackageRecord. */
static void lockrecs_json(struct menv_lockrecs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct menv_record *r = &l->recs[i];
		if (r->json || (l->skip && l->skip[i]))
			continue;
		struct menv_record light = *r;
		json_t *o = entry_json(l->pkgs[i], light.fn, light.subdir);
		struct menv_error ign = {0};
		if (menv_record_from_json(r, o, light.fn, NULL, light.channel, &ign) == 0) {
			r->url = menv_xstrdup(light.url);
			r->channel_url = menv_xstrdup(light.channel_url);
			r->size = light.size; /* the size a server reported for the plan */
		} else {
			*r = light; /* cannot happen: the light record has what it needs */
		}
		json_decref(o);
	}
}

/* Before the fetch: the repodata_record.json a solve left in the cache for the same file
 * (same sha256, else md5) knows more than index.json (patched depends): kept aside. */
void menv_lockrecs_snapshot(const char *pkgs_dir, const struct menv_strvec *dirs,
                            struct menv_lockrecs *l)
{
	lockrecs_json(l);
	for (size_t i = 0; i < l->n; i++) {
		if (l->skip && l->skip[i])
			continue;
		struct menv_record *r = &l->recs[i];
		char *dir = menv_pkgcache_locate(pkgs_dir, dirs, r);
		char *rpath = menv_xasprintf("%s/info/repodata_record.json", dir);
		/* read-only; the parse the cache check has just made (menv_pkgcache_has_each) */
		json_t *have = menv_pkgmeta_kept(rpath);
		if (!have)
			have = menv_pkgmeta_load(rpath, NULL);
		const char *hs = jstr(have, "sha256"), *hm = jstr(have, "md5");
		if (json_is_object(have) && json_object_get(have, "depends") &&
		    ((r->sha256 && hs && !strcasecmp(hs, r->sha256)) ||
		     (!r->sha256 && r->md5 && hm && !strcasecmp(hm, r->md5))))
			l->solved[i] = json_incref(have);
		json_decref(have);
		free(rpath);
		free(dir);
	}
}

/* The complete record of l's entry i: `index` (the package's info/index.json, or NULL),
 * then the record a solve left (l->solved), the lock's fields, the hashes and size the fetch
 * measured (from `have`, the cache's record) where the lock has none, url and channel. New
 * reference. */
static json_t *merged(const struct menv_lockrecs *l, size_t i, json_t *index, json_t *have)
{
	const struct menv_record *r = &l->recs[i];
	json_t *m = json_object(), *v;
	const char *k;

	if (index)
		json_object_update(m, index);
	if (l->solved[i])
		json_object_update(m, l->solved[i]);
	json_object_foreach(r->json, k, v)
	{
		if (!strcmp(k, "depends") && !l->lock_depends[i])
			continue;
		json_object_set(m, k, v);
	}
	/* the hashes and size the fetch measured on the verified file fill what the lock did
	 * not say (conda-lock has no size, explicit one hash) */
	static const char *const measured[] = {"md5", "sha256", "size", NULL};
	for (size_t k2 = 0; measured[k2]; k2++)
		if (!json_object_get(m, measured[k2]) && json_object_get(have, measured[k2]))
			json_object_set(m, measured[k2], json_object_get(have, measured[k2]));
	json_object_set_new(m, "url", json_string(r->url));
	json_object_set_new(m, "channel", json_string(r->channel_url));
	if (!json_object_get(m, "depends"))
		json_object_set_new(m, "depends", json_array());
	return m;
}

/* m as the cache keeps it: without the credentials or token a lock's URLs may hold (a copy
 * of m's top level; only its url and channel are replaced). New reference. */
static json_t *on_disk(json_t *m, const struct menv_record *r)
{
	json_t *disk = json_copy(m);
	menv_json_set_url(disk, "url", r->url);
	menv_json_set_url(disk, "channel", r->channel_url);
	return disk;
}

/* Whether `have` (the cache's record of the package, after the fetch) is one a solve or an
 * earlier completion of the same file left: the lock's name, version and build, its sha256
 * (else md5), and depends. */
static bool settled(const struct menv_record *r, json_t *have)
{
	static const char *const ident[] = {"name", "version", "build"};
	const char *hs = jstr(have, "sha256"), *hm = jstr(have, "md5");

	if (!json_is_object(have) || !json_is_array(json_object_get(have, "depends")))
		return false;
	for (int k = 0; k < 3; k++) {
		const char *is = jstr(have, ident[k]), *said = jstr(r->json, ident[k]);
		if (!is || !said || strcmp(is, said))
			return false;
	}
	return (r->sha256 && hs && !strcasecmp(hs, r->sha256)) ||
	       (!r->sha256 && r->md5 && hm && !strcasecmp(hm, r->md5));
}

/* Whether each field of the lock's entry i that merged() sets is so in `have` already, and
 * its url and channel are the entry's (as on disk, without credentials): merged(l, i, NULL,
 * have) is then `have` with the entry's url and channel. */
static bool agrees(const struct menv_lockrecs *l, size_t i, json_t *have)
{
	const struct menv_record *r = &l->recs[i];
	const char *k;
	json_t *v;
	bool same = true;

	json_object_foreach(r->json, k, v)
	{
		if (!strcmp(k, "depends") && !l->lock_depends[i])
			continue;
		if (!json_equal(json_object_get(have, k), v))
			return false;
	}
	const char *urls[2][2] = {{"url", r->url}, {"channel", r->channel_url}};
	for (int u = 0; u < 2 && same; u++) {
		const char *is = jstr(have, urls[u][0]);
		char *safe = urls[u][1] ? menv_url_redact(urls[u][1]) : NULL;
		same = is && safe && !strcmp(is, safe);
		free(safe);
	}
	return same;
}

/* After the fetch: each record completed from <pkgs>/<dist>/info/index.json (and a
 * repodata_record.json a solve wrote earlier), the lock's fields on top; the cache's
 * repodata_record.json rewritten when it differs. A warm cache's record that already is
 * that completion (settled and unchanged by it: a solve's of this file, or an earlier lock
 * create's) is taken as it stands, not merged again. What index.json says is checked for
 * each (menv_paths_index_ident, else index.json read): its name, version and build must be
 * the lock's (a solving create wrote the channel's record, which may name another package
 * than the file is: the cold create refuses it, so must the warm one). */
int menv_lockrecs_complete(const char *pkgs_dir, const struct menv_strvec *dirs,
                           struct menv_lockrecs *l, struct menv_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < l->n && !rc; i++) {
		if (l->skip && l->skip[i])
			continue;
		struct menv_record *r = &l->recs[i];
		char *dir = menv_pkgcache_locate(pkgs_dir, dirs, r);
		size_t pl = strlen(pkgs_dir);
		/* a read-only cache's record is used as it is */
		bool writable = !strncmp(dir, pkgs_dir, pl) && dir[pl] == '/';
		char *rpath = menv_xasprintf("%s/info/repodata_record.json", dir);
		/* read-only; the parse the fetch's check has just made under the cache's users
		 * lock, where it did not write the file (an extraction, a completed record) */
		json_t *have = menv_pkgmeta_kept(rpath);
		if (!have)
			have = menv_pkgmeta_load(rpath, NULL);
		char *ipath = menv_xasprintf("%s/info/index.json", dir);
		json_t *index = NULL, *m = NULL, *disk = NULL;
		char *is[3] = {NULL, NULL, NULL};
		static const char *const ident[] = {"name", "version", "build"};

		/* the lock names the package the file is: a hand-edited name, version or build
		 * would make a PrefixRecord of a package that is not there. Checked also where the
		 * cache's record agrees with the lock: a solving create writes the channel's
		 * record, which may name another package than the file's index.json (attack9).
		 * What index.json says is taken from the compact paths.json where menv kept it
		 * when it extracted the package, while index.json is the file it read then
		 * (menv_paths_index_ident); else index.json is read. */
		if (!menv_paths_index_ident(dir, is)) {
			index = menv_json_load_file(ipath, 0, NULL);
			if (!json_is_object(index)) {
				rc = menv_error_set(err, MENV_EPARSE,
				                    "package '%s' in the cache has no "
				                    "readable info/index.json",
				                    r->fn);
				goto next;
			}
			for (int k2 = 0; k2 < 3; k2++)
				is[k2] = menv_xstrdup(jstr(index, ident[k2]));
		}
		bool same = true;
		for (int k2 = 0; k2 < 3; k2++) {
			const char *said = jstr(r->json, ident[k2]);
			same = same && is[k2] && said && !strcmp(is[k2], said);
		}
		if (!same) {
			rc = menv_error_set(err, MENV_EUNSAFE,
			                    "lockfile entry '%s %s %s': the package file '%s' is "
			                    "%s %s %s",
			                    r->name, r->version, r->build, r->fn,
			                    is[0] ? is[0] : "?", is[1] ? is[1] : "?",
			                    is[2] ? is[2] : "?");
			entry_error(l->src, l->pkgs[i], rc, err);
			goto next;
		}
		bool as_cached = l->solved[i] == have && settled(r, have) && agrees(l, i, have);
		if (as_cached) {
			/* what merged() would give, as it was left: unchanged by the completion */
			m = json_copy(have);
			json_object_set_new(m, "url", json_string(r->url));
			json_object_set_new(m, "channel", json_string(r->channel_url));
		} else if (l->solved[i] && settled(r, have)) {
			m = merged(l, i, NULL, have);
			disk = on_disk(m, r);
			if (!json_equal(disk, have)) { /* the completion changes it: done in full */
				json_decref(m);
				json_decref(disk);
				m = disk = NULL;
			}
		}
		if (!m && !index) /* json_is_object evaluates its argument twice */
			index = menv_json_load_file(ipath, 0, NULL);
		if (!m && !json_is_object(index)) {
			rc = menv_error_set(
			        err, MENV_EPARSE,
			        "package '%s' in the cache has no readable info/index.json", r->fn);
			goto next;
		}
		if (!m) {
			m = merged(l, i, index, have);
			disk = on_disk(m, r);
			if (writable && !json_equal(disk, have)) {
				char *text = json_dumps(disk, JSON_INDENT(2) | JSON_SORT_KEYS);
				rc = menv_write_file_atomic(rpath, text, strlen(text), err);
				menv_pkgmeta_forget(rpath);
				free(text);
			}
		}
		if (!rc) {
			char *url = menv_xstrdup(r->url);
			const struct menv_channel *ch = r->channel;
			menv_record_release(r);
			rc = record_set(r, m, url, ch, err);
			r->json_is_cached = !rc && as_cached;
			free(url);
		}
	next:
		for (int k2 = 0; k2 < 3; k2++)
			free(is[k2]);
		free(ipath);
		json_decref(index);
		json_decref(have);
		json_decref(m);
		json_decref(disk);
		free(rpath);
		free(dir);
	}
	return rc;
}

/* pip requirement lines for a lock's pip entries; true when each has a sha256. */
static bool pip_lines(const struct menv_lock_package **sel, size_t nsel, struct menv_strvec *out)
{
	bool all_hashed = true;
	size_t npip = 0;
	for (size_t i = 0; i < nsel; i++) {
		if (sel[i]->manager != MENV_LOCK_PIP)
			continue;
		npip++;
		all_hashed =
		        all_hashed && sel[i]->sha256 && sel[i]->url && strstr(sel[i]->url, "://");
	}
	for (size_t i = 0; i < nsel; i++) {
		const struct menv_lock_package *p = sel[i];
		if (p->manager != MENV_LOCK_PIP)
			continue;
		if (!p->url || !strstr(p->url, "://"))
			menv_strvec_push_owned(out, menv_xasprintf("%s==%s", p->name, p->version));
		else if (all_hashed)
			menv_strvec_push_owned(out, menv_xasprintf("%s @ %s --hash=sha256:%s",
			                                           p->name, p->url, p->sha256));
		else
			menv_strvec_push_owned(out, menv_xasprintf("%s @ %s", p->name, p->url));
	}
	return npip && all_hashed;
}

/* The pip options of a lock (its metadata's pip_options, then the selected environment's
 * indexes and find-links, as pixi writes them) appended to `opts` ("--index-url URL"
 * strings) and, when `json` is not NULL, to that array. */
static void lock_pip_options(const struct menv_lockfile *lf, const char *env,
                             struct menv_strvec *opts, json_t *json)
{
	size_t i;
	json_t *v;
	/* menv's locks before custom_metadata: a list in the metadata */
	json_array_foreach(json_object_get(lf->metadata_extra, "pip_options"), i,
	                   v) if (json_is_string(v))
	{
		menv_strvec_push(opts, json_string_value(v));
		if (json)
			json_array_append(json, v);
	}
	const char *lines = json_string_value(json_object_get(
	        json_object_get(lf->metadata_extra, "custom_metadata"), MENV_LOCK_PIP_OPTIONS_KEY));
	while (lines && *lines) {
		size_t n = strcspn(lines, "\n");
		if (n) {
			char *o = menv_xstrndup(lines, n);
			if (json)
				json_array_append_new(json, json_string(o));
			menv_strvec_push_owned(opts, o);
		}
		lines += n + (lines[n] == '\n');
	}
	for (size_t e = 0; e < lf->nenvs; e++) {
		const struct menv_lock_env *le = &lf->envs[e];
		if (strcmp(le->name, env ? env : "default"))
			continue;
		for (size_t k = 0; k < le->indexes.n; k++) {
			char *opt = menv_xasprintf("%s %s", k ? "--extra-index-url" : "--index-url",
			                           le->indexes.v[k]);
			if (json)
				json_array_append_new(json, json_string(opt));
			menv_strvec_push_owned(opts, opt);
		}
		for (size_t k = 0; k < le->find_links.n; k++) {
			char *opt = menv_xasprintf("--find-links %s", le->find_links.v[k]);
			if (json)
				json_array_append_new(json, json_string(opt));
			menv_strvec_push_owned(opts, opt);
		}
	}
}

void menv_lock_pip_request(const struct menv_lockfile *lf, const char *env,
                           const struct menv_lock_package **sel, size_t nsel,
                           struct menv_pip_request *pr)
{
	struct menv_strvec opts = MENV_STRVEC_INIT;
	lock_pip_options(lf, env, &opts, NULL);
	/* options like "--index-url URL" are two argv words */
	for (size_t k = 0; k < opts.n; k++) {
		char *w = menv_xstrdup(opts.v[k]);
		char *sp = strchr(w, ' ');
		if (sp)
			*sp++ = '\0';
		menv_strvec_push(&pr->options, w);
		if (sp)
			menv_strvec_push(&pr->options, sp);
		free(w);
	}
	menv_strvec_clear(&opts);
	pr->require_hashes = pip_lines(sel, nsel, &pr->requirements);
	pr->no_deps = true;
}

json_t *menv_lock_pip_options_json(const struct menv_lockfile *lf, const char *env)
{
	struct menv_strvec opts = MENV_STRVEC_INIT;
	json_t *j = json_array();
	lock_pip_options(lf, env, &opts, j);
	menv_strvec_clear(&opts);
	return j;
}

/* Is this pip-section line an option that says where packages come from? */
int menv_lock_pip_python(const char *prefix, const struct menv_lockrecs *l, struct menv_error *err)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->recs[i].name, "python"))
			return 0;
	char *python = menv_xasprintf("%s/bin/python", prefix);
	bool have = access(python, X_OK) == 0;
	free(python);
	return have ? 0 : menv_pip_no_python(prefix, err);
}

bool menv_pip_source_option(const char *s)
{
	static const char *const opts[] = {"--index-url",  "-i", "--extra-index-url",
	                                   "--find-links", "-f", "--trusted-host",
	                                   "--no-index",   NULL};
	for (size_t i = 0; opts[i]; i++) {
		size_t n = strlen(opts[i]);
		if (!strncmp(s, opts[i], n) && (!s[n] || s[n] == ' ' || s[n] == '='))
			return true;
	}
	return false;
}

void menv_lockrecs_sizes(const struct menv_config *cfg, const struct menv_strvec *channels,
                         const struct menv_record **link, const bool *cached, size_t n)
{
	char **urls = menv_xcalloc(n + 1, sizeof(*urls));
	struct menv_record **recs = menv_xcalloc(n + 1, sizeof(*recs));
	int64_t *sizes = menv_xcalloc(n + 1, sizeof(*sizes));
	size_t k = 0, ncreds = 0;
	struct menv_fetch_opts fo;
	struct menv_channel **creds = NULL;

	menv_fetch_opts_from_config(&fo, cfg);
	for (size_t i = 0; i < n && !cfg->offline; i++)
		if (!cached[i] && link[i]->size <= 0 && link[i]->url) {
			if (!k) { /* asked where the fetch will ask: with the channels' credentials */
				menv_channel_credentials(cfg, channels, NULL, &creds, &ncreds);
				fo.creds = (const struct menv_channel *const *)creds;
				fo.ncreds = ncreds;
			}
			/* the records are the lock's own (struct menv_lockrecs), not the plan's */
			recs[k] = (struct menv_record *)link[i];
			urls[k] = menv_pkgcache_url(link[i], &fo);
			sizes[k++] = -1;
		}
	if (k)
		menv_fetch_sizes((const char *const *)urls, sizes, k, &fo);
	for (size_t i = 0; i < k; i++) {
		if (sizes[i] > 0)
			recs[i]->size = sizes[i];
		free(urls[i]);
	}
	menv_channels_free(creds, ncreds);
	free(urls);
	free(recs);
	free(sizes);
}
