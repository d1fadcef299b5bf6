/*
 * record.c - PackageRecords from repodata.json (CEP-36, `info.base_url` of CEP-15). A
 * record keeps its whole JSON object so that repodata_record.json and conda-meta records
 * carry every field the channel had, including ones menv does not know.
 */
#include <stdlib.h>
#include <string.h>

#include "specs.h"

static const char *str_field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

char *menv_record_dist(const struct menv_record *r)
{
	size_t n = strlen(r->fn);
	if (n > 6 && !strcmp(r->fn + n - 6, ".conda"))
		return menv_xstrndup(r->fn, n - 6);
	if (n > 8 && !strcmp(r->fn + n - 8, ".tar.bz2"))
		return menv_xstrndup(r->fn, n - 8);
	return menv_xasprintf("%s-%s-%s", r->name, r->version, r->build);
}

int menv_record_from_json(struct menv_record *r, json_t *obj, const char *fn, const char *base,
                          const struct menv_channel *ch, struct menv_error *err)
{
	json_t *v;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(obj))
		return menv_error_set(err, MENV_EPARSE, "record '%s' is not a JSON object", fn);
	r->json = json_incref(obj);
	r->name = str_field(obj, "name");
	r->version = str_field(obj, "version");
	r->build = str_field(obj, "build");
	if (!r->name || !r->version || !r->build) {
		json_decref(r->json);
		r->json = NULL;
		return menv_error_set(err, MENV_EPARSE,
		                      "record '%s' lacks a name, version or build string", fn);
	}
	/* "depends": null is seen in real repodata; conda-forge tooling reads it as [] */
	v = json_object_get(obj, "depends");
	if (!json_is_array(v))
		json_object_set_new(obj, "depends", json_array());
	v = json_object_get(obj, "constrains");
	if (v && !json_is_array(v))
		json_object_del(obj, "constrains");
	v = json_object_get(obj, "build_number");
	r->build_number = json_is_integer(v) ? json_integer_value(v) : 0;
	v = json_object_get(obj, "size");
	r->size = json_is_integer(v) ? json_integer_value(v) : -1;
	v = json_object_get(obj, "timestamp");
	r->timestamp = json_is_integer(v) ? json_integer_value(v) : 0;
	if (r->timestamp > 0 && r->timestamp < 253402300799LL)
		r->timestamp *= 1000; /* seconds in old repodata */
	r->md5 = str_field(obj, "md5");
	r->sha256 = str_field(obj, "sha256");
	if (!json_object_get(obj, "fn"))
		json_object_set_new(obj, "fn", json_string(fn));
	r->fn = str_field(obj, "fn");
	r->subdir = str_field(obj, "subdir");
	v = json_object_get(obj, "noarch");
	r->noarch_python = (json_is_string(v) && !strcmp(json_string_value(v), "python")) ||
	                   json_is_true(json_object_get(obj, "noarch_python"));
	r->channel = ch;
	if (base) {
		r->url = menv_xasprintf("%s/%s", base, fn);
		r->channel_url = menv_xstrdup(base);
	}
	return 0;
}

void menv_record_release(struct menv_record *r)
{
	json_decref(r->json);
	free(r->url);
	free(r->channel_url);
	memset(r, 0, sizeof(*r));
}

json_t *menv_record_depends(const struct menv_record *r)
{
	if (!r->json)
		return r->depends;
	return json_object_get(r->json, "depends");
}

json_t *menv_record_constrains(const struct menv_record *r)
{
	json_t *v = json_object_get(r->json, "constrains");
	return json_is_array(v) ? v : NULL;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

static int add_section(struct menv_repodata *rd, json_t *pkgs, const char *base, const char *src,
                       bool conda, struct menv_error *err)
{
	const char *fn;
	json_t *obj;

	if (!pkgs)
		return 0;
	if (!json_is_object(pkgs))
		return menv_error_set(err, MENV_EPARSE, "%s: \"%s\" is not an object", src,
		                      conda ? "packages.conda" : "packages");
	size_t k = 0;
	json_object_foreach(pkgs, fn, obj)
	{
		if (!(k++ & 4095) && menv_cancelled())
			return menv_error_set(err, MENV_EINTR, "%s: reading interrupted", src);
		struct menv_record *r = &rd->recs[rd->n];
		int rc = menv_record_from_json(r, obj, fn, base, rd->channel, err);
		if (rc)
			return menv_error_prefix(err, "%s", src);
		if (!r->subdir) {
			json_object_set_new(obj, "subdir", json_string(rd->subdir));
			r->subdir = str_field(obj, "subdir");
		}
		rd->n++;
	}
	return 0;
}

int menv_repodata_parse(const char *bytes, size_t len, const char *src,
                        const struct menv_channel *ch, const char *subdir,
                        struct menv_repodata **out, struct menv_error *err)
{
	json_t *root, *pkgs, *cpkgs, *info;
	struct menv_repodata *rd;
	char *base = NULL;
	int rc = 0;

	*out = NULL;
	rc = menv_json_parse(bytes, len, JSON_ALLOW_NUL, src, &root, err);
	if (rc)
		return rc;
	if (!json_is_object(root)) {
		json_decref(root);
		return menv_error_set(err, MENV_EPARSE, "%s: repodata is not a JSON object", src);
	}
	rd = menv_xcalloc(1, sizeof(*rd));
	rd->channel = ch;
	rd->subdir = menv_xstrdup(subdir);
	info = json_object_get(root, "info");
	const char *bu = str_field(info, "base_url");
	if (bu && *bu) {
		/* CEP-15: package URLs are relative to base_url (itself relative to the subdir) */
		if (strstr(bu, "://") || bu[0] == '/')
			base = menv_xstrdup(bu);
		else
			base = menv_xasprintf("%s/%s/%s", ch ? ch->base_url : "", subdir, bu);
		size_t n = strlen(base);
		while (n > 0 && base[n - 1] == '/')
			base[--n] = '\0';
	} else if (ch) {
		base = menv_xasprintf("%s/%s", ch->base_url, subdir);
	}
	pkgs = json_object_get(root, "packages");
	cpkgs = json_object_get(root, "packages.conda");
	rd->recs = menv_xcalloc(json_object_size(pkgs) + json_object_size(cpkgs) + 1,
	                        sizeof(*rd->recs));
	rc = add_section(rd, cpkgs, base, src, true, err);
	if (!rc && pkgs) {
		/* drop a .tar.bz2 whose .conda twin is present */
		json_t *keep = json_object();
		const char *fn;
		json_t *obj;
		json_object_foreach(pkgs, fn, obj)
		{
			if (ends_with(fn, ".tar.bz2") && json_is_object(cpkgs)) {
				char *alt = menv_xasprintf("%.*s.conda", (int)(strlen(fn) - 8), fn);
				bool twin = json_object_get(cpkgs, alt) != NULL;
				free(alt);
				if (twin)
					continue;
			}
			json_object_set(keep, fn, obj);
		}
		rc = add_section(rd, json_is_object(pkgs) ? keep : pkgs, base, src, false, err);
		json_decref(keep);
	}
	free(base);
	json_decref(root);
	if (rc) {
		menv_repodata_free(rd);
		return rc;
	}
	*out = rd;
	return 0;
}

void menv_repodata_free(struct menv_repodata *rd)
{
	if (!rd)
		return;
	for (size_t i = 0; i < rd->n; i++)
		menv_record_release(&rd->recs[i]);
	free(rd->recs);
	free(rd->subdir);
	free(rd);
}

json_t *menv_record_json(const struct menv_record *r)
{
	char *dist = menv_record_dist(r);
	const char *sub = r->subdir ? r->subdir : "";
	/* a lock's URL holds what the user wrote, credentials and /t/TOKEN included: printed
	 * redacted, as every URL menv shows */
	char *url = menv_url_redact(r->url ? r->url : "");
	char *base = menv_url_redact(r->channel ? r->channel->base_url : "");
	char *chan = menv_url_redact(r->channel ? r->channel->name : "");
	json_t *o =
	        json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "name", r->name,
	                  "version", r->version, "build_string", r->build, "build_number",
	                  (json_int_t)r->build_number, "channel", chan, "base_url", base, "subdir",
	                  sub, "platform", sub, "url", url, "fn", r->fn, "dist_name", dist);
	free(url);
	free(base);
	free(chan);
	if (r->md5)
		json_object_set_new(o, "md5", json_string(r->md5));
	if (r->sha256)
		json_object_set_new(o, "sha256", json_string(r->sha256));
	if (r->size >= 0)
		json_object_set_new(o, "size", json_integer(r->size));
	free(dist);
	return o;
}
