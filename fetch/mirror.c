/*
 * mirror.c - `menv mirror`: copies package records (a channel's, or those a lockfile names) to
 * a channel folder that a web server can serve, or pushes them into an OCI registry laid out
 * as the proposed CEP "OCI Registries as conda Channels" (v1) says.
 *
 * Packages are fetched through the package cache code (menv_pkgcache_fetch_opts, into a
 * staging cache of their own: every file verified against its record's sha256 while it
 * arrives), hashed again as they are copied, and indexed as conda-index does
 * (menv_index_channel: each package's own info/index.json). The index comes last, so a half
 * copy is never visible as complete: a folder gets its packages first and its repodata.json
 * (written atomically by the indexer) after them; a registry gets every package blob and
 * manifest first and `<subdir>/mrepodata.json:latest` after them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "internal.h"

/* Copies `from` to `to` (menv_write_file_atomic: a temporary file and a rename), checking the bytes' sha256 against
 * `sha256` (when not NULL) before the rename. */
static int copy_verified(const char *from, const char *to, const char *sha256,
                         struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_hashes h;
	int rc;

	menv_buf_init(&b);
	rc = menv_buf_read_file(&b, from, err);
	if (rc)
		goto out;
	menv_hash_mem(b.buf, b.len, &h);
	if (sha256 && strcasecmp(sha256, h.sha256)) {
		rc = menv_error_set(err, MENV_ECHECKSUM,
		                    "sha256 mismatch for '%s': expected %s, got %s", from, sha256,
		                    h.sha256);
		goto out;
	}
	rc = menv_write_file_atomic(to, b.buf, b.len, err);
out:
	menv_buf_release(&b);
	return rc;
}

/* Pushes one package of `subdir` (its file at `path`, its record `rec` from the index). */
static int push_package(struct menv_oci *s, const char *base, const char *subdir, const char *fn,
                        const char *path, json_t *rec, const char *config, struct menv_error *err)
{
	const char *name = json_string_value(json_object_get(rec, "name"));
	const char *version = json_string_value(json_object_get(rec, "version"));
	const char *build = json_string_value(json_object_get(rec, "build"));
	size_t fl = strlen(fn);
	bool v1 = fl > 8 && !strcmp(fn + fl - 8, ".tar.bz2");
	struct menv_buf b = MENV_BUF_INIT;
	char *prepo = NULL, *tag = NULL, *repo = NULL, *index = NULL;
	char d_pkg[72], d_index[72], d_cfg[72];
	json_t *idx = NULL, *m = NULL;
	int rc;

	if (!name || !version || !build)
		return menv_error_set(err, MENV_EPARSE, "no name, version or build for '%s'", fn);
	menv_oci_package_names(name, version, build, &prepo, &tag);
	repo = menv_xasprintf("%s/%s/%s", base, subdir, prepo);
	menv_buf_init(&b);
	rc = menv_buf_read_file(&b, path, err);
	if (!rc)
		rc = menv_oci_push_blob(s, repo, config, 2, d_cfg, err);
	if (!rc)
		rc = menv_oci_push_blob(s, repo, b.buf, b.len, d_pkg, err);
	if (rc)
		goto out;
	/* info/index.json: the record without what the index added */
	idx = json_deep_copy(rec);
	json_object_del(idx, "md5");
	json_object_del(idx, "sha256");
	json_object_del(idx, "size");
	index = json_dumps(idx, JSON_INDENT(2) | JSON_SORT_KEYS);
	rc = menv_oci_push_blob(s, repo, index, strlen(index), d_index, err);
	if (rc)
		goto out;
	m = menv_oci_manifest_new(d_cfg);
	menv_oci_manifest_add_layer(
	        m, v1 ? "application/vnd.conda.package.v1" : "application/vnd.conda.package.v2",
	        d_pkg, b.len, fn);
	menv_oci_manifest_add_layer(m, "application/vnd.conda.info.index.v1+json", d_index,
	                            strlen(index), "index.json");
	json_t *ann = json_object_get(m, "annotations");
	json_object_set_new(ann, "org.conda.package.name", json_string(name));
	json_object_set_new(ann, "org.conda.package.version", json_string(version));
	json_object_set_new(ann, "org.conda.package.build", json_string(build));
	rc = menv_oci_push_manifest(s, repo, tag, m, err);
out:
	json_decref(m);
	json_decref(idx);
	free(index);
	menv_buf_release(&b);
	free(prepo);
	free(tag);
	free(repo);
	return rc;
}

/* Pushes the repodata of `subdir` (JSON and .zst layers) as `<base>/<subdir>/mrepodata.json`. */
static int push_repodata(struct menv_oci *s, const char *base, const char *subdir,
                         const struct menv_buf *json, const char *config, struct menv_error *err)
{
	char *repo = menv_xasprintf("%s/%s/mrepodata.json", base, subdir);
	size_t cap = ZSTD_compressBound(json->len);
	void *z = menv_xmalloc(cap + 1);
	size_t zn = ZSTD_compress(z, cap, json->buf, json->len, 10);
	char d_json[72], d_zst[72], d_cfg[72];
	json_t *m = NULL;
	int rc;

	if (ZSTD_isError(zn)) {
		rc = menv_error_set(err, MENV_EIO, "cannot compress the repodata of '%s'", subdir);
		goto out;
	}
	rc = menv_oci_push_blob(s, repo, config, 2, d_cfg, err);
	if (!rc)
		rc = menv_oci_push_blob(s, repo, json->buf, json->len, d_json, err);
	if (!rc)
		rc = menv_oci_push_blob(s, repo, z, zn, d_zst, err);
	if (rc)
		goto out;
	m = menv_oci_manifest_new(d_cfg);
	menv_oci_manifest_add_layer(m, "application/vnd.conda.repodata.v1+json", d_json, json->len,
	                            "repodata.json");
	menv_oci_manifest_add_layer(m, "application/vnd.conda.repodata.v1+json+zst", d_zst, zn,
	                            "repodata.json.zst");
	rc = menv_oci_push_manifest(s, repo, "latest", m, err);
out:
	json_decref(m);
	free(z);
	free(repo);
	return rc;
}

/* Pushes the indexed channel folder `chan` to the registry channel `dest`: every subdir's
 * packages first, then its repodata. */
static int push_channel(const char *chan, const char *dest, const struct menv_fetch_opts *o,
                        struct menv_mirror_stats *st, struct menv_error *err)
{
	static const char config[] = "{}";
	const char *base = menv_oci_path(dest);
	struct menv_oci *s = NULL;
	DIR *d = NULL;
	struct dirent *de;
	int rc;

	while (*base == '/')
		base++;
	rc = menv_oci_new(dest, o, &s, err);
	if (rc)
		return rc;
	d = opendir(chan);
	if (!d) {
		rc = menv_error_sys(err, MENV_EIO, "cannot read '%s'", chan);
		goto out;
	}
	while (!rc && (de = readdir(d))) {
		struct menv_buf b = MENV_BUF_INIT;
		char *rp;
		json_t *rd;

		if (de->d_name[0] == '.')
			continue;
		rp = menv_xasprintf("%s/%s/repodata.json", chan, de->d_name);
		menv_buf_init(&b);
		if (access(rp, F_OK) < 0) {
			free(rp);
			continue;
		}
		rc = menv_buf_read_file(&b, rp, err);
		rd = rc ? NULL : json_loadb(b.buf, b.len, 0, NULL);
		if (!rc && !rd)
			rc = menv_error_set(err, MENV_EPARSE, "cannot read the index '%s'", rp);
		static const char *const keys[] = {"packages", "packages.conda"};
		for (size_t k = 0; !rc && k < 2; k++) {
			const char *fn;
			json_t *rec;
			json_object_foreach(json_object_get(rd, keys[k]), fn, rec)
			{
				char *path = menv_xasprintf("%s/%s/%s", chan, de->d_name, fn);
				rc = push_package(s, base, de->d_name, fn, path, rec, config, err);
				free(path);
				if (rc)
					break;
			}
		}
		if (!rc)
			rc = push_repodata(s, base, de->d_name, &b, config, err);
		if (!rc && st)
			st->subdirs++;
		json_decref(rd);
		menv_buf_release(&b);
		free(rp);
	}
out:
	if (d)
		closedir(d);
	menv_oci_free(s);
	return rc;
}

/* mkdir -p `path`, each folder it makes (the deepest first) added to `made`. */
static int mkdir_undoable(const char *path, struct menv_strvec *made, struct menv_error *err)
{
	char *p = menv_xstrdup(path);
	for (char *slash; access(p, F_OK) != 0 && (slash = strrchr(p, '/')) && slash > p;
	     *slash = '\0')
		menv_strvec_push(made, p);
	free(p);
	return menv_fetch_mkdir_p(path, err);
}

static int longer_first(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* A failed mirror leaves its folder as it was: the package files it added are removed, then
 * the folders it made (the longest path first, so a folder goes before its parent; one that
 * holds something else stays). */
static void undo(const struct menv_strvec *added, struct menv_strvec *made)
{
	for (size_t i = 0; i < added->n; i++)
		unlink(added->v[i]);
	if (made->n)
		qsort(made->v, made->n, sizeof(*made->v), longer_first);
	for (size_t i = 0; i < made->n; i++)
		rmdir(made->v[i]);
}

int menv_mirror_records(struct menv_record *const *recs, size_t n, const char *dest,
                        const struct menv_fetch_opts *o, menv_fetch_cb cb, void *ud,
                        struct menv_mirror_stats *st, struct menv_error *err)
{
	char *stage = NULL, *pkgs = NULL, *chan = NULL;
	struct menv_strvec added = {0}, made = {0}; /* what a failure takes away again */
	bool oci = menv_oci_is_url(dest);
	struct menv_index_stats is = {0};
	int rc = 0;

	if (st) {
		char *safe = menv_url_redact(dest);
		memset(st, 0, sizeof(*st));
		snprintf(st->dest, sizeof(st->dest), "%s", safe);
		free(safe);
	}
	/* under $TMPDIR; what a killed mirror left there goes with the next run's */
	rc = menv_tmp_mkdir("mirror", &stage, err);
	if (rc)
		return rc;
	pkgs = menv_xasprintf("%s/pkgs", stage);
	if (oci)
		chan = menv_xasprintf("%s/channel", stage);
	else
		chan = menv_xstrdup(!strncmp(dest, "file://", 7) ? dest + 7 : dest);
	/* only the staging cache: with the user's pkgs_dirs, a package they hold (perhaps only
	 * extracted) would not be downloaded and its file would be missing from the stage */
	struct menv_fetch_opts so;
	if (o)
		so = *o;
	else
		menv_fetch_opts_init(&so);
	so.pkgs_dirs = NULL;
	/* each record's subdir (its URL's folder, as the source has it), checked first: it names
	 * a folder of the stage and of dest */
	char **subs = menv_xcalloc(n + 1, sizeof(*subs));
	for (size_t i = 0; i < n; i++) {
		const struct menv_record *r = recs[i];
		size_t off, len;
		subs[i] = r->url && menv_url_folder(r->url, &off, &len)
		                  ? menv_xstrndup(r->url + off, len)
		                  : menv_xstrdup(r->subdir && *r->subdir ? r->subdir : "noarch");
		/* a URL's "x/../fn" (or a base_url of "..") must not place the file outside dest */
		if (!rc && (!subs[i][0] || subs[i][0] == '.' || strchr(subs[i], '/') ||
		            strchr(subs[i], '\\')))
			rc = menv_error_set(
			        err, MENV_EPARSE,
			        "refusing to mirror '%s': its subdir '%s' is not a folder name",
			        r->url ? r->url : r->fn, subs[i]);
	}
	/* one file per <subdir>/<fn> in dest: two records of one name are one file (copied
	 * once) or refused; the same name in two subdirs (python_abi-3.12-5_cp312.conda of
	 * linux-64 and of osx-64) are two files, staged apart */
	bool *skip = menv_xcalloc(n + 1, sizeof(*skip));
	struct menv_strmap names = MENV_STRMAP_INIT; /* "<subdir>/<fn>" -> the first record */
	for (size_t i = 0; i < n && !rc; i++) {
		char *key = menv_xasprintf("%s/%s", subs[i], recs[i]->fn);
		const size_t *at = menv_strmap_get(&names, key);
		if (!at) {
			menv_strmap_put(&names, key, i);
			free(key);
			continue;
		}
		free(key);
		size_t k = *at;
		const char *a = recs[i]->sha256, *b = recs[k]->sha256;
		const char *x = recs[i]->md5, *y = recs[k]->md5;
		if ((a && b && !strcmp(a, b)) || (!(a && b) && x && y && !strcmp(x, y))) {
			skip[i] = true;
			continue;
		}
		char *u1 = menv_url_redact(recs[k]->url ? recs[k]->url : recs[k]->fn);
		char *u2 = menv_url_redact(recs[i]->url ? recs[i]->url : recs[i]->fn);
		rc = menv_error_set(err, MENV_EPARSE,
		                    "cannot mirror two different files as '%s/%s': '%s' and '%s' "
		                    "differ in their hashes",
		                    subs[i], recs[i]->fn, u1, u2);
		free(u1);
		free(u2);
	}
	menv_strmap_clear(&names);
	/* staged by subdir: one package cache folder per subdir */
	struct menv_record **group = menv_xcalloc(n + 1, sizeof(*group));
	struct menv_strmap staged = MENV_STRMAP_INIT; /* the subdirs fetched */
	for (size_t i = 0; i < n && !rc; i++) {
		size_t k = 0;
		if (!menv_strmap_add(&staged, subs[i], i))
			continue;
		for (size_t j = i; j < n; j++)
			if (!skip[j] && !strcmp(subs[j], subs[i]))
				group[k++] = recs[j];
		char *gp = menv_xasprintf("%s/%s", pkgs, subs[i]);
		rc = menv_pkgcache_fetch_opts(gp, group, k, &so, cb, ud, err);
		free(gp);
	}
	free(group);
	menv_strmap_clear(&staged);
	if (!rc)
		rc = mkdir_undoable(chan, &made, err);
	for (size_t i = 0; !rc && i < n; i++) {
		const struct menv_record *r = recs[i];
		if (skip[i])
			continue;
		char *dir = menv_xasprintf("%s/%s", chan, subs[i]);
		char *from = menv_xasprintf("%s/%s/%s", pkgs, subs[i], r->fn);
		char *to = menv_xasprintf("%s/%s", dir, r->fn);
		rc = mkdir_undoable(dir, &made, err);
		if (!rc)
			menv_crash_point(); /* tests: a kill between two packages */
		if (!rc && access(to, F_OK) != 0)
			menv_strvec_push(&added, to);
		if (!rc)
			rc = copy_verified(from, to, r->sha256, err);
		if (!rc && st) {
			struct stat sb;
			st->packages++;
			if (stat(to, &sb) == 0)
				st->bytes += (int64_t)sb.st_size;
		}
		free(dir);
		free(from);
		free(to);
	}
	for (size_t i = 0; i < n; i++)
		free(subs[i]);
	free(subs);
	free(skip);
	/* the index last: repodata.json is written once every package is in place */
	if (!rc)
		rc = menv_index_channel(chan, &is, err);
	if (!rc && st)
		st->subdirs = is.subdirs;
	if (!rc && oci) {
		if (st)
			st->subdirs = 0;
		rc = push_channel(chan, dest, o, st, err);
	}
	if (rc && !oci)
		undo(&added, &made);
	menv_strvec_clear(&added);
	menv_strvec_clear(&made);
	menv_fetch_rmtree(stage, NULL);
	free(stage);
	free(pkgs);
	free(chan);
	return rc;
}

/* A lock package as a record (the lock's url, hashes, size, depends and extra keys). Its file
 * name and subdir come from the URL's path (menv_url_basename: a query or a fragment is no part
 * of them); its url is the lock's without the fragment, the query kept for the download (the
 * staging cache records it redacted, and goes away). */
static int lock_record(const struct menv_lock_package *p, struct menv_record *r,
                       struct menv_error *err)
{
	size_t fl, off, sl;
	const char *fn = p->url ? menv_url_basename(p->url, &fl) : NULL;
	json_t *o;
	char *base, *name;
	int rc;

	if (!fn || fn == p->url || fn[-1] != '/' || !fl)
		return menv_error_set(err, MENV_EPARSE, "no URL for '%s' in the lock",
		                      p->name ? p->name : "?");
	o = json_is_object(p->extra) ? json_deep_copy(p->extra) : json_object();
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "version", json_string(p->version));
	json_object_set_new(o, "fn", json_stringn(fn, fl));
	if (p->build)
		json_object_set_new(o, "build", json_string(p->build));
	if (p->subdir)
		json_object_set_new(o, "subdir", json_string(p->subdir));
	else if (menv_url_folder(p->url, &off, &sl))
		json_object_set_new(o, "subdir", json_stringn(p->url + off, sl));
	if (p->md5)
		json_object_set_new(o, "md5", json_string(p->md5));
	if (p->sha256)
		json_object_set_new(o, "sha256", json_string(p->sha256));
	if (p->size >= 0)
		json_object_set_new(o, "size", json_integer((json_int_t)p->size));
	if (p->depends)
		json_object_set(o, "depends", p->depends);
	base = menv_xstrndup(p->url, (size_t)(fn - 1 - p->url));
	name = menv_xstrndup(fn, fl);
	rc = menv_record_from_json(r, o, name, base, NULL, err);
	json_decref(o);
	free(base);
	free(name);
	if (!rc) {
		free(r->url);
		r->url = menv_xstrndup(p->url, strcspn(p->url, "#"));
	}
	return rc;
}

int menv_mirror_lock_records(const struct menv_lockfile *lf, const char *const *platforms,
                             size_t nplatforms, struct menv_record **out, size_t *n,
                             struct menv_error *err)
{
	struct menv_record *recs = menv_xcalloc(lf->npkgs + 1, sizeof(*recs));
	struct menv_strset urls = MENV_STRSET_INIT;
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < lf->npkgs && !rc; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		bool want = nplatforms == 0;
		if (p->manager != MENV_LOCK_CONDA || !p->url)
			continue;
		for (size_t j = 0; j < nplatforms && !want; j++)
			want = p->platform && !strcmp(p->platform, platforms[j]);
		/* a URL listed twice is copied once */
		if (!want || !menv_strset_add(&urls, p->url))
			continue;
		rc = lock_record(p, &recs[k], err);
		if (!rc)
			k++;
	}
	menv_strset_clear(&urls);
	if (rc) {
		for (size_t i = 0; i < k; i++)
			menv_record_release(&recs[i]);
		free(recs);
		return rc;
	}
	*out = recs;
	*n = k;
	return 0;
}

int menv_mirror_channel(const struct menv_channel *c, const char *const *subdirs, size_t nsub,
                        const char *dest, const struct menv_fetch_opts *o, menv_fetch_cb cb,
                        void *ud, struct menv_mirror_stats *st, struct menv_error *err)
{
	struct menv_repodata_req *reqs = menv_xcalloc(nsub + 2, sizeof(*reqs));
	struct menv_repodata **rds = menv_xcalloc(nsub + 2, sizeof(*rds));
	struct menv_record **recs = NULL;
	size_t nreq = 0, nrec = 0, cap = 0;
	int rc;

	for (size_t i = 0; i < nsub; i++)
		if (strcmp(subdirs[i], "noarch"))
			reqs[nreq].channel = c, reqs[nreq++].subdir = subdirs[i];
	reqs[nreq].channel = c, reqs[nreq++].subdir = "noarch";
	rc = menv_fetch_repodata_many(reqs, nreq, o, err);
	for (size_t i = 0; !rc && i < nreq; i++) {
		rc = menv_repodata_parse(reqs[i].json.buf, reqs[i].json.len, reqs[i].url, c,
		                         reqs[i].subdir, &rds[i], err);
		for (size_t k = 0; !rc && k < rds[i]->n; k++) {
			if (nrec == cap) {
				cap = cap ? 2 * cap : 64;
				recs = menv_xrealloc(recs, cap * sizeof(*recs));
			}
			recs[nrec++] = &rds[i]->recs[k];
		}
	}
	if (!rc)
		rc = menv_mirror_records(recs, nrec, dest, o, cb, ud, st, err);
	for (size_t i = 0; i < nreq; i++) {
		menv_repodata_free(rds[i]);
		menv_repodata_req_release(&reqs[i]);
	}
	free(recs);
	free(rds);
	free(reqs);
	return rc;
}

int menv_mirror_lock(const char *path, const char *const *platforms, size_t nplatforms,
                     const char *dest, const struct menv_fetch_opts *o, menv_fetch_cb cb, void *ud,
                     struct menv_mirror_stats *st, struct menv_error *err)
{
	struct menv_lockfile *lf = NULL;
	struct menv_record *recs = NULL;
	size_t n = 0;
	int rc = menv_lockfile_load(path, &lf, err);
	if (!rc)
		rc = menv_mirror_lock_records(lf, platforms, nplatforms, &recs, &n, err);
	struct menv_record **ptrs = menv_xcalloc(n + 1, sizeof(*ptrs));
	for (size_t i = 0; i < n; i++)
		ptrs[i] = &recs[i];
	if (!rc)
		rc = menv_mirror_records(ptrs, n, dest, o, cb, ud, st, err);
	free(ptrs);
	for (size_t i = 0; i < n; i++)
		menv_record_release(&recs[i]);
	free(recs);
	menv_lockfile_free(lf);
	return rc;
}
