/*
 * prefix.c - creating an environment as one transaction: every package is linked into a
 * staging directory beside the target, conda-meta/ is written there, and the staging
 * directory is renamed to the prefix at the end. Any failure (or Ctrl-C) removes the staging
 * directory, so a prefix either appears complete or not at all.
 */

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "envs.h"
#include "link.h"

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf; errors are ignored (best effort cleanup). */
static void remove_tree(const char *path)
{
	nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
}

static bool dir_is_empty(const char *path)
{
	
	int n = 0;
	DIR *d = opendir(path);
	struct dirent *de;
	if (!d)
		return false;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n == 0;
}

static json_t *load_json(const char *path, struct menv_error *err)
{
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);
	if (!j)
		menv_error_set(err, MENV_EPARSE, "%s:%d:%d: %s", path, jerr.line, jerr.column,
			       jerr.text);
	return j;
}

/* The spec the user asked for that names this record, or "". */
static const char *requested_for(const struct menv_strvec *req, const char *name)
{
	if (!req)
		return "";
	for (size_t i = 0; i < req->n; i++) {
		const char *s = req->v[i];
		const char *cc = strstr(s, "::");
		if (cc)
			s = cc + 2;
		size_t n = strcspn(s, " =<>!~[");
		if (strlen(name) == n && !strncasecmp(s, name, n))
			return req->v[i];
	}
	return "";
}

static int write_history(const char *staging, const struct menv_record *const *recs, size_t n,
			 const struct menv_install_opts *opts, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	char when[64];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	menv_buf_addf(&b, "==> %s <==\n", when);
	menv_buf_addf(&b, "# cmd: %s\n", opts->cmdline ? opts->cmdline : "menv create");
	menv_buf_addf(&b, "# menv version: %s\n", MENV_VERSION);
	for (size_t i = 0; i < n; i++) {
		char *dist = menv_record_dist(recs[i]);
		menv_buf_addf(&b, "+%s/%s::%s\n",
			      recs[i]->channel ? recs[i]->channel->name : "<unknown>",
			      recs[i]->subdir ? recs[i]->subdir : "", dist);
		free(dist);
	}
	json_t *specs = json_array();
	for (size_t i = 0; opts->requested && i < opts->requested->n; i++)
		json_array_append_new(specs, json_string(opts->requested->v[i]));
	char *js = json_dumps(specs, JSON_COMPACT | JSON_ENSURE_ASCII);
	menv_buf_addf(&b, "# update specs: %s\n", js);
	free(js);
	json_decref(specs);
	char *path = menv_xasprintf("%s/conda-meta/history", staging);
	rc = menv_write_file_atomic(path, b.buf, b.len, err);
	free(path);
	menv_buf_release(&b);
	return rc;
}

static int link_record(const char *prefix, const char *staging, const struct menv_record *r,
		       const char *site_packages, const struct menv_install_opts *opts,
		       struct menv_link_stats *st, struct menv_error *err)
{
	char *dist = menv_record_dist(r);
	char *pkgdir = menv_xasprintf("%s/%s", opts->pkgs_dir, dist);
	char *rrpath = menv_xasprintf("%s/info/repodata_record.json", pkgdir);
	json_t *files = json_array(), *paths = json_array(), *rec = NULL;
	int rc = 0;

	if (r->noarch_python && !site_packages) {
		rc = menv_error_set(err, MENV_EUNSUPPORTED,
				    "'%s' is a noarch python package but the environment has no "
				    "python", dist);
		goto out;
	}
	struct menv_link_ctx ctx = {
		.prefix = prefix,
		.staging = staging,
		.pkgdir = pkgdir,
		.noarch_python = r->noarch_python,
		.site_packages = site_packages,
	};
	size_t hard_before = st->hardlinks;
	rc = menv_link_package(&ctx, files, paths, st, err);
	if (rc) {
		menv_error_prefix(err, "while linking '%s'", dist);
		goto out;
	}
	/* the PrefixRecord: the repodata record plus what linking did */
	rec = access(rrpath, F_OK) == 0 ? load_json(rrpath, err) : json_deep_copy(r->json);
	if (!rec) {
		rc = MENV_EPARSE;
		goto out;
	}
	json_object_set_new(rec, "url", json_string(r->url ? r->url : ""));
	json_object_set_new(rec, "channel", json_string(r->channel_url ? r->channel_url : ""));
	json_object_set_new(rec, "files", files);
	files = NULL;
	json_t *pd = json_object();
	json_object_set_new(pd, "paths", paths);
	json_object_set_new(pd, "paths_version", json_integer(1));
	paths = NULL;
	json_object_set_new(rec, "paths_data", pd);
	json_t *link = json_object();
	json_object_set_new(link, "source", json_string(pkgdir));
	json_object_set_new(link, "type", json_integer(st->hardlinks > hard_before ? 1 : 3));
	json_object_set_new(rec, "link", link);
	json_object_set_new(rec, "requested_spec",
			    json_string(requested_for(opts->requested, r->name)));
	json_object_set_new(rec, "extracted_package_dir", json_string(pkgdir));
	char *tarball = menv_xasprintf("%s/%s", opts->pkgs_dir, r->fn);
	json_object_set_new(rec, "package_tarball_full_path", json_string(tarball));
	free(tarball);
	char *dump = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
	char *out = menv_xasprintf("%s/conda-meta/%s.json", staging, dist);
	rc = menv_write_file_atomic(out, dump, strlen(dump), err);
	free(out);
	free(dump);
	st->packages++;
out:
	json_decref(rec);
	json_decref(files);
	json_decref(paths);
	free(rrpath);
	free(pkgdir);
	free(dist);
	return rc;
}

int menv_env_create(const char *prefix, const struct menv_record *const *recs, size_t n,
		    const struct menv_install_opts *opts, struct menv_link_stats *stats,
		    struct menv_error *err)
{
	struct menv_link_stats st = { 0 };
	char *pcopy = menv_xstrdup(prefix), *bcopy = menv_xstrdup(prefix);
	char *parent = dirname(pcopy), *base = basename(bcopy);
	char *staging = NULL, *meta = NULL, *site = NULL;
	struct stat sb;
	bool empty_dir = false;
	int rc = 0;

	if (prefix[0] != '/') {
		rc = menv_error_set(err, MENV_EUSAGE, "prefix '%s' is not an absolute path", prefix);
		goto out;
	}
	if (lstat(prefix, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode) || !dir_is_empty(prefix)) {
			rc = menv_error_set(err, MENV_EEXIST, "prefix '%s' already exists", prefix);
			goto out;
		}
		empty_dir = true;
	}
	rc = menv_mkdirs(parent, err);
	if (rc)
		goto out;
	staging = menv_xasprintf("%s/.%s.menv-tmp-XXXXXX", parent, base);
	if (!mkdtemp(staging)) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create a staging directory in '%s'",
				    parent);
		free(staging);
		staging = NULL;
		goto out;
	}
	chmod(staging, 0755);
	meta = menv_xasprintf("%s/conda-meta", staging);
	rc = menv_mkdirs(meta, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(recs[i]->name, "python")) {
			int maj = 0, min = 0;
			if (sscanf(recs[i]->version, "%d.%d", &maj, &min) == 2)
				site = menv_xasprintf("lib/python%d.%d/site-packages", maj, min);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (opts->cancel && *opts->cancel) {
			rc = menv_error_set(err, MENV_EINTR, "interrupted; '%s' was not created",
					    prefix);
			goto out;
		}
		rc = link_record(prefix, staging, recs[i], site, opts, &st, err);
		if (rc)
			goto out;
	}
	rc = write_history(staging, recs, n, opts, err);
	if (rc)
		goto out;
	if (opts->cancel && *opts->cancel) {
		rc = menv_error_set(err, MENV_EINTR, "interrupted; '%s' was not created", prefix);
		goto out;
	}
	if (empty_dir && rmdir(prefix) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot replace empty directory '%s'", prefix);
		goto out;
	}
	if (rename(staging, prefix) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot move the new environment to '%s'", prefix);
		goto out;
	}
	free(staging);
	staging = NULL;
out:
	if (staging) {
		remove_tree(staging);
		free(staging);
	}
	if (stats)
		*stats = st;
	free(site);
	free(meta);
	free(pcopy);
	free(bcopy);
	return rc;
}
