/*
 * records.c - reading a prefix's installed packages: the PrefixRecords in
 * `conda-meta/<name>-<version>-<build>.json` (CEP-32).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prefix.h"

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
			if (skipped) {
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
