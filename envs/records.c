/*
 * records.c - reading a prefix's installed packages: the PrefixRecords in
 * `conda-meta/<name>-<version>-<build>.json` (CEP-32), and `menv list`'s rows of them and of
 * the pip distributions (conda list).
 */
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prefix.h"
#include "registry.h"
#include "txn.h"

static const char *str_field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int by_name(const void *a, const void *b)
{
	const struct menv_prefix_record *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* menv_prefix_records_load, or with `skipped` the records that cannot be read named there and
 * left out. */
static int load(const char *prefix, struct menv_prefix_record **out, size_t *n,
                struct menv_strvec *skipped, struct menv_error *err)
{
	char *dir = menv_xasprintf("%s/conda-meta", prefix);
	struct menv_prefix_record *recs = NULL;
	size_t cnt = 0, alloc = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	*out = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d) {
		rc = errno == ENOENT
		             ? menv_error_set(err, MENV_ENOTFOUND,
		                              "'%s' is not a conda environment (no conda-meta/)",
		                              prefix)
		             : menv_error_sys(err, MENV_EIO, "cannot read '%s'", dir);
		free(dir);
		return rc;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.')
			continue;
		char *path = menv_xasprintf("%s/%s", dir, de->d_name);
		struct menv_error jerr = {0};
		json_t *j = menv_json_load_file(path, 0, &jerr);
		if (!j || !str_field(j, "name") || !str_field(j, "version") ||
		    !str_field(j, "build")) {
			if (skipped && jerr.code != MENV_EINTR) { /* Ctrl-C is no bad record */
				menv_strvec_push_owned(skipped, path);
				json_decref(j);
				continue;
			}
			if (j)
				rc = menv_error_set(err, MENV_EPARSE,
				                    "%s:1:1: not a package record", path);
			else {
				if (err)
					*err = jerr;
				rc = jerr.code;
			}
			json_decref(j);
			free(path);
			break;
		}
		free(path);
		if (cnt == alloc) {
			alloc = alloc ? alloc * 2 : 32;
			recs = menv_xrealloc(recs, alloc * sizeof(*recs));
		}
		struct menv_prefix_record *r = &recs[cnt++];
		json_t *bn = json_object_get(j, "build_number");
		r->json = j;
		r->name = str_field(j, "name");
		r->version = str_field(j, "version");
		r->build = str_field(j, "build");
		r->build_number = json_is_integer(bn) ? json_integer_value(bn) : 0;
		r->channel = str_field(j, "channel");
		r->subdir = str_field(j, "subdir");
		r->url = str_field(j, "url");
	}
	closedir(d);
	free(dir);
	if (rc) {
		menv_prefix_records_free(recs, cnt);
		return rc;
	}
	if (cnt)
		qsort(recs, cnt, sizeof(*recs), by_name);
	*out = recs;
	*n = cnt;
	return 0;
}

int menv_prefix_records_load(const char *prefix, struct menv_prefix_record **out, size_t *n,
                             struct menv_error *err)
{
	return load(prefix, out, n, NULL, err);
}

int menv_prefix_records_load_readable(const char *prefix, struct menv_prefix_record **out,
                                      size_t *n, struct menv_strvec *skipped,
                                      struct menv_error *err)
{
	return load(prefix, out, n, skipped, err);
}

void menv_prefix_records_free(struct menv_prefix_record *recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(recs[i].json);
	free(recs);
}

static int by_row(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcasecmp(str_field(x, "name"), str_field(y, "name"));
	return c ? c : strcmp(str_field(x, "channel"), str_field(y, "channel"));
}

int menv_env_list_packages(const struct menv_list_request *req, char **prefix, json_t **rows,
                           struct menv_buf *text, struct menv_error *err)
{
	struct menv_config cfg = {0};
	struct menv_prefix_record *recs = NULL;
	struct menv_pip_dist *pips = NULL;
	struct menv_strvec warn = MENV_STRVEC_INIT;
	size_t n = 0, npip = 0;
	regex_t re;
	int rc;

	*prefix = NULL;
	/* conda list REGEX: the names it finds (case-insensitive); --full-name: the whole name */
	if (req->regex) {
		char *pat = req->full_name ? menv_xasprintf("^(%s)$", req->regex)
		                           : menv_xstrdup(req->regex);
		int e = regcomp(&re, pat, REG_EXTENDED | REG_ICASE | REG_NOSUB);
		free(pat);
		if (e) {
			char msg[256];
			regerror(e, &re, msg, sizeof(msg));
			return menv_error_set(err, MENV_EUSAGE,
			                      "invalid regular expression '%s': %s", req->regex,
			                      msg);
		}
	}
	rc = menv_config_load(&cfg, err);
	if (!rc && !(*prefix = menv_env_prefix_find(&cfg, req->name, req->prefix, err)))
		rc = err->code;
	if (!rc)
		rc = menv_txn_recover(*prefix, req->cb, err);
	if (!rc)
		rc = menv_prefix_records_load(*prefix, &recs, &n, err);
	if (!rc) {
		rc = menv_pip_list_checked(*prefix, &pips, &npip, &warn, err);
		for (size_t i = 0; i < warn.n; i++) /* unreadable dist-info folders, skipped */
			if (req->cb && req->cb->event)
				req->cb->event(req->cb->ud, MENV_ENV_WARNING, warn.v[i]);
	}
	if (rc)
		goto out;
	if (req->explicit_) { /* conda list --explicit [--md5]: a file `create -f` takes */
		menv_buf_addf(text,
		              "# This file may be used to create an environment using:\n# $ menv "
		              "create -n NAME -f THIS_FILE\n# platform: %s\n@EXPLICIT\n",
		              cfg.subdir);
		for (size_t i = 0; i < n; i++) {
			const char *md5 = str_field(recs[i].json, "md5");
			if (recs[i].url && (!req->regex || !regexec(&re, recs[i].name, 0, NULL, 0)))
				menv_buf_addf(text, "%s%s%s\n", recs[i].url,
				              req->md5 && md5 ? "#" : "",
				              req->md5 && md5 ? md5 : "");
		}
		goto out;
	}
	json_t **v = menv_xcalloc(n + npip + 1, sizeof(*v));
	size_t nv = 0;
	for (size_t i = 0; i < n; i++) {
		const struct menv_prefix_record *r = &recs[i];
		char *ch = req->channel_urls ? menv_channel_url(&cfg, r->channel, r->subdir)
		                             : menv_channel_display(&cfg, r->channel, r->subdir);
		v[nv++] = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "name", r->name, "version",
		                    r->version, "build_string", r->build, "build_number",
		                    (json_int_t)r->build_number, "channel", ch, "platform",
		                    r->subdir ? r->subdir : "");
		free(ch);
	}
	/* conda's rows of pip's distributions: `pypi_0 pypi`, and an editable one (pip -e)
	 * `dev_0 <develop>` */
	for (size_t i = 0; i < npip; i++)
		v[nv++] = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "name", pips[i].name,
		                    "version", pips[i].version, "build_string",
		                    pips[i].editable ? "dev_0" : "pypi_0", "build_number",
		                    (json_int_t)0, "channel",
		                    pips[i].editable ? "<develop>" : "pypi", "platform", "pypi");
	qsort(v, nv, sizeof(*v), by_row); /* by name, as conda list sorts */
	*rows = json_array();
	for (size_t i = 0; i < nv; i++)
		if (req->regex && regexec(&re, str_field(v[i], "name"), 0, NULL, 0) != 0)
			json_decref(v[i]);
		else
			json_array_append_new(*rows, v[i]);
	free(v);
out:
	if (req->regex)
		regfree(&re);
	menv_strvec_clear(&warn);
	menv_pip_dists_free(pips, npip);
	menv_prefix_records_free(recs, n);
	menv_config_release(&cfg);
	return rc;
}
