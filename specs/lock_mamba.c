/*
 * lock_mamba.c - micromamba's JSON lock (`menv export --json` style: a list of package
 * records with URLs and hashes) read into the lockfile model.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lockfile.h"
#include "specs.h"

int menv_lock_parse_mamba_json(struct menv_lockfile *lf, json_t *root, const char *src,
                               struct menv_lock_at *at, struct menv_error *err)
{
	const char *lv = menv_lock_jstr(root, "lockVersion");
	const char *plat = menv_lock_jstr(root, "platform");
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
		*at = (struct menv_lock_at){{"packages", fn}, {0, 0}, 2, false};
		for (size_t k = 0; req[k]; k++)
			if (!json_is_string(json_object_get(e, req[k])))
				return menv_error_set(err, MENV_EPARSE,
				                      "%s: package '%s' lacks "
				                      "'%s'",
				                      src, fn, req[k]);
		const char *ch = menv_lock_jstr(e, "channel");
		json_t *ci = json_array_get(json_object_get(info, ch), 0);
		const char *base = json_is_object(ci) ? menv_lock_jstr(ci, "url") : NULL;
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_CONDA;
		p->name = menv_xstrdup(menv_lock_jstr(e, "name"));
		p->version = menv_xstrdup(menv_lock_jstr(e, "version"));
		p->build = menv_xstrdup(menv_lock_jstr(e, "build"));
		p->subdir = menv_xstrdup(menv_lock_jstr(e, "subdir"));
		p->platform = menv_xstrdup(plat);
		p->url = menv_xasprintf("%s/%s/%s", base ? base : ch, p->subdir, fn);
		menv_lock_set_hash_json(&p->md5,
		                        json_object_get(json_object_get(e, "hash"), "md5"));
		menv_lock_set_hash_json(&p->sha256,
		                        json_object_get(json_object_get(e, "hash"), "sha256"));
		menv_lock_keep_empty_hashes(p, json_object_get(e, "hash"));
		if (menv_lock_jstr(e, "category")) {
			p->category = menv_xstrdup(menv_lock_jstr(e, "category")); /* was "main" */
		}
		if (!p->extra)
			p->extra = json_object();
		json_object_set_new(p->extra, "channel", json_string(ch));
	}
	json_object_foreach(json_object_get(root, "pipPackages"), fn, e)
	{
		*at = (struct menv_lock_at){{"pipPackages", fn}, {0, 0}, 2, false};
		if (!menv_lock_jstr(e, "name") || !menv_lock_jstr(e, "version") ||
		    !menv_lock_jstr(e, "url"))
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: pip package '%s' lacks a name, "
			                      "version or url",
			                      src, fn);
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_PIP;
		p->name = menv_xstrdup(menv_lock_jstr(e, "name"));
		p->version = menv_xstrdup(menv_lock_jstr(e, "version"));
		p->url = menv_xstrdup(menv_lock_jstr(e, "url"));
		p->platform = menv_xstrdup(plat);
		menv_lock_set_hash_json(&p->sha256,
		                        json_object_get(json_object_get(e, "hash"), "sha256"));
	}
	at->n = 0;
	return 0;
}
