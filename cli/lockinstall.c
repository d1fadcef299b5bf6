/*
 * lockinstall.c - `menv create -f LOCKFILE` (and `install -f LOCKFILE` into an existing
 * environment): an environment made exactly from a lockfile's records (conda-lock v1,
 * explicit, pixi.lock v4-v7 with -e ENV, micromamba JSON), without
 * repodata and without the solver; and the pip step of every create (environment.yml
 * `pip:` sections, pip entries of a lock).
 *
 * The records come from the lock: URL, md5/sha256 and size (verified by the package cache
 * while downloading), depends where the lock has them. After the files are in the cache
 * each record is completed from the package's own info/index.json (build_number, license,
 * noarch, ...; depends when the lock has none, e.g. explicit files), and the cache's
 * info/repodata_record.json is rewritten to that complete record, so the conda-meta
 * PrefixRecords are the same whether the cache was cold or warm.
 *
 * pip runs after menv_env_create has renamed the staging directory into place (scripts and
 * paths must name the final prefix); if pip fails the new prefix is removed again
 * (menv_pip_rollback_prefix), so a failed create leaves nothing behind. In `install -f` the
 * pip entries run after the conda transaction committed; a failure takes both back
 * (menv_cli_pip_into_env).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "envs.h"
#include "fetch.h"

bool menv_cli_is_lockfile(const char *path)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	bool yes = false;
	if (!menv_buf_read_file(&b, path, &err))
		yes = menv_lockfile_detect(b.buf, b.len) != MENV_LOCK_NONE;
	menv_buf_release(&b);
	return yes;
}

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

struct lockrecs {
	struct menv_record *recs;
	size_t n;
	struct menv_channel **chans; /* one per record, owned (borrowed by recs[i].channel) */
	bool *lock_depends;          /* the lock gave the record's depends */
	json_t **solved;             /* a complete repodata_record.json already in the cache
					before the fetch (left by a solve), or NULL */
	bool *skip; /* owned or NULL: records not fetched nor completed (already installed) */
};

static void lockrecs_release(struct lockrecs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		menv_record_release(&l->recs[i]);
		menv_channel_free(l->chans[i]);
		json_decref(l->solved ? l->solved[i] : NULL);
	}
	free(l->recs);
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

/* The lock's conda entries as records (before the cache completes them). */
static int build_records(const struct menv_config *cfg, const struct menv_lock_package **sel,
                         size_t nsel, struct lockrecs *out, struct menv_error *err)
{
	int rc = 0;

	out->recs = menv_xcalloc(nsel + 1, sizeof(*out->recs));
	out->chans = menv_xcalloc(nsel + 1, sizeof(*out->chans));
	out->lock_depends = menv_xcalloc(nsel + 1, sizeof(*out->lock_depends));
	out->solved = menv_xcalloc(nsel + 1, sizeof(*out->solved));
	for (size_t i = 0; i < nsel; i++) {
		const struct menv_lock_package *p = sel[i];
		if (p->manager != MENV_LOCK_CONDA)
			continue;
		struct menv_channel *ch = NULL;
		rc = menv_channel_parse(p->url, cfg, &ch, err);
		if (rc) {
			menv_error_prefix(err, "lockfile entry '%s'", p->name);
			return rc;
		}
		char *fn = ch->package_filename ? menv_xstrdup(ch->package_filename) : NULL;
		if (!fn) {
			const char *b = strrchr(p->url, '/');
			fn = menv_xstrndup(b ? b + 1 : p->url, strcspn(b ? b + 1 : p->url, "?#"));
		}
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(p->name));
		json_object_set_new(o, "version", json_string(p->version));
		json_object_set_new(o, "build", json_string(p->build));
		json_object_set_new(o, "fn", json_string(fn));
		const char *subdir = p->subdir ? p->subdir : ch->platform;
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
		out->lock_depends[out->n] = p->depends != NULL;
		out->chans[out->n] = ch;
		rc = record_set(&out->recs[out->n], o, p->url, ch, err);
		json_decref(o);
		free(fn);
		if (rc) {
			menv_channel_free(ch);
			out->chans[out->n] = NULL;
			return rc;
		}
		out->n++;
	}
	return 0;
}

/* Before the fetch: the repodata_record.json a solve left in the cache for the same file
 * (same sha256, else md5) knows more than index.json (patched depends): kept aside. */
static void snapshot_solved(const char *pkgs_dir, struct lockrecs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->skip && l->skip[i])
			continue;
		struct menv_record *r = &l->recs[i];
		char *dir = menv_pkgcache_dir(pkgs_dir, r);
		char *rpath = menv_xasprintf("%s/info/repodata_record.json", dir);
		json_t *have = json_load_file(rpath, 0, NULL);
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

/* After the fetch: each record completed from <pkgs>/<dist>/info/index.json (and a
 * repodata_record.json a solve wrote earlier), the lock's fields on top; the cache's
 * repodata_record.json rewritten when it differs. */
static int complete_records(const char *pkgs_dir, struct lockrecs *l, struct menv_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < l->n && !rc; i++) {
		if (l->skip && l->skip[i])
			continue;
		struct menv_record *r = &l->recs[i];
		char *dir = menv_pkgcache_dir(pkgs_dir, r);
		char *ipath = menv_xasprintf("%s/info/index.json", dir);
		char *rpath = menv_xasprintf("%s/info/repodata_record.json", dir);
		json_t *index = json_load_file(ipath, 0, NULL);
		json_t *have = json_load_file(rpath, 0, NULL);
		json_t *m = json_object();
		const char *k;
		json_t *v;
		bool lock_deps = l->lock_depends[i];

		if (!json_is_object(index)) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "package '%s' in the cache has no "
			                    "readable info/index.json",
			                    r->fn);
			goto next;
		}
		json_object_update(m, index);
		if (l->solved[i])
			json_object_update(m, l->solved[i]);
		json_object_foreach(r->json, k, v)
		{
			if (!strcmp(k, "depends") && !lock_deps)
				continue;
			json_object_set(m, k, v);
		}
		/* the hashes and size the fetch measured on the verified file fill what the lock
		 * did not say (conda-lock has no size, explicit one hash) */
		static const char *const measured[] = {"md5", "sha256", "size", NULL};
		for (size_t k2 = 0; measured[k2]; k2++)
			if (!json_object_get(m, measured[k2]) &&
			    json_object_get(have, measured[k2]))
				json_object_set(m, measured[k2],
				                json_object_get(have, measured[k2]));
		json_object_set_new(m, "url", json_string(r->url));
		json_object_set_new(m, "channel", json_string(r->channel_url));
		if (!json_object_get(m, "depends"))
			json_object_set_new(m, "depends", json_array());
		if (!json_equal(m, have)) {
			char *text = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS);
			rc = menv_write_file_atomic(rpath, text, strlen(text), err);
			free(text);
		}
		if (!rc) {
			char *url = menv_xstrdup(r->url);
			const struct menv_channel *ch = r->channel;
			menv_record_release(r);
			rc = record_set(r, m, url, ch, err);
			free(url);
		}
	next:
		json_decref(index);
		json_decref(have);
		json_decref(m);
		free(ipath);
		free(rpath);
		free(dir);
	}
	return rc;
}

/* Every record of `l` but the skipped, and the `nextra` records of `extra` (relinked
 * packages, not completed), downloaded (hashes verified) and extracted into cfg->pkgs_dir,
 * then
 * completed from the package's info/ (complete_records). Errors: the package cache's, with
 * the lockfile `file` named. */
static int fetch_and_complete(const struct menv_config *cfg, struct lockrecs *l,
                              struct menv_record *extra, size_t nextra, const char *file,
                              bool quiet, struct menv_error *err)
{
	struct menv_fetch_opts fo;
	struct menv_cli_progress prog;
	menv_fetch_opts_from_config(&fo, cfg);
	fo.cancel = (volatile int *)&menv_cli_cancel;
	if (!quiet)
		fprintf(stderr, "Fetching packages into %s\n", cfg->pkgs_dir);
	struct menv_record **ptrs = menv_xcalloc(l->n + nextra + 1, sizeof(*ptrs));
	size_t nptrs = 0;
	for (size_t i = 0; i < l->n; i++)
		if (!l->skip || !l->skip[i])
			ptrs[nptrs++] = &l->recs[i];
	for (size_t i = 0; i < nextra; i++)
		ptrs[nptrs++] = &extra[i];
	menv_cli_progress_init(&prog, &fo, quiet);
	bool lines_off = quiet || fo.progress;
	snapshot_solved(cfg->pkgs_dir, l);
	int rc = menv_pkgcache_fetch_opts(cfg->pkgs_dir, ptrs, nptrs, &fo, menv_cli_on_fetch,
	                                  &lines_off, err);
	free(ptrs);
	if (rc) {
		menv_error_prefix(err, "while fetching the packages of '%s'", file);
		return rc;
	}
	return complete_records(cfg->pkgs_dir, l, err);
}

/* Orders records so each comes after the ones it depends on (by name; names outside the
 * lock, like virtual packages, are ignored); the lock's order otherwise. */
static const struct menv_record **toposort(const struct lockrecs *l)
{
	const struct menv_record **out = menv_xcalloc(l->n + 1, sizeof(*out));
	int *state = menv_xcalloc(l->n + 1, sizeof(*state)); /* 0 new, 1 visiting, 2 done */
	size_t *stack = menv_xcalloc(l->n + 1, sizeof(*stack));
	size_t *next = menv_xcalloc(l->n + 1, sizeof(*next));
	size_t nout = 0;

	for (size_t root = 0; root < l->n; root++) {
		size_t sp = 0;
		if (state[root])
			continue;
		stack[sp++] = root;
		state[root] = 1;
		next[root] = 0;
		while (sp) {
			size_t cur = stack[sp - 1];
			json_t *deps = menv_record_depends(&l->recs[cur]);
			bool pushed = false;
			while (next[cur] < json_array_size(deps) && !pushed) {
				const char *d =
				        json_string_value(json_array_get(deps, next[cur]++));
				if (!d)
					continue;
				size_t nl = strcspn(d, " =<>!~[");
				for (size_t j = 0; j < l->n; j++) {
					if (state[j] || strlen(l->recs[j].name) != nl ||
					    strncmp(l->recs[j].name, d, nl))
						continue;
					state[j] = 1;
					next[j] = 0;
					stack[sp++] = j;
					pushed = true;
					break;
				}
			}
			if (!pushed) {
				state[cur] = 2;
				out[nout++] = &l->recs[cur];
				sp--;
			}
		}
	}
	free(state);
	free(stack);
	free(next);
	return out;
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
	json_array_foreach(json_object_get(lf->metadata_extra, "pip_options"), i,
	                   v) if (json_is_string(v))
	{
		menv_strvec_push(opts, json_string_value(v));
		if (json)
			json_array_append(json, v);
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

/* Completes a pip request for a lock's pip entries: pr->options (as lock_pip_options left
 * them) split into argv words, the requirement lines with hashes where every entry has one,
 * --no-deps (the lock lists every distribution). */
static void lock_pip_request(const struct menv_lock_package **sel, size_t nsel, bool quiet,
                             struct menv_pip_request *pr)
{
	/* options like "--index-url URL" are two argv words */
	struct menv_strvec words = MENV_STRVEC_INIT;
	for (size_t k = 0; k < pr->options.n; k++) {
		char *w = menv_xstrdup(pr->options.v[k]);
		char *sp = strchr(w, ' ');
		if (sp) {
			*sp = '\0';
			menv_strvec_push(&words, w);
			menv_strvec_push(&words, sp + 1);
		} else {
			menv_strvec_push(&words, w);
		}
		free(w);
	}
	menv_strvec_clear(&pr->options);
	pr->options = words;
	pr->require_hashes = pip_lines(sel, nsel, &pr->requirements);
	pr->no_deps = true;
	pr->quiet = quiet;
	pr->cancel = (volatile int *)&menv_cli_cancel;
}

/* Is this pip-section line an option that says where packages come from? */
static bool pip_source_option(const char *s)
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

static char *abs_path(const char *p)
{
	char buf[PATH_MAX];
	if (realpath(p, buf))
		return menv_xstrdup(buf);
	return menv_xstrdup(p);
}

/* conda-meta/.menv-request: what the environment was made from (for --from-history and
 * re-creating its pip part). Best effort. */
static void write_request(const char *prefix, json_t *req)
{
	char *path = menv_xasprintf("%s/conda-meta/.menv-request", prefix);
	char *text = json_dumps(req, JSON_INDENT(2));
	struct menv_error err = {0};
	menv_write_file_atomic(path, text, strlen(text), &err);
	free(text);
	free(path);
}

/* A transaction from a lock in conda's --json shape (actions LINK, UNLINK, PREFIX), marked
 * not solved. */
static void print_lock_change(const char *prefix, const struct menv_record *const *link,
                              size_t nlink, json_t *const *unlink, size_t nunlink, bool dry_run,
                              json_t *smoke)
{
	json_t *root = json_object(), *actions = json_object(), *ja = json_array(),
	       *ju = json_array();
	for (size_t i = 0; i < nlink; i++)
		json_array_append_new(ja, menv_cli_record_json(link[i]));
	for (size_t i = 0; i < nunlink; i++)
		json_array_append(ju, unlink[i]);
	json_object_set_new(actions, "LINK", ja);
	json_object_set_new(actions, "UNLINK", ju);
	json_object_set_new(actions, "PREFIX", json_string(prefix));
	json_object_set_new(root, "actions", actions);
	json_object_set_new(root, "prefix", json_string(prefix));
	json_object_set_new(root, "dry_run", json_boolean(dry_run));
	json_object_set_new(root, "success", json_true());
	json_object_set_new(root, "solved", json_false());
	if (smoke) /* the smoke check's report (a failed check keeps the environment) */
		json_object_set(root, "smoke_check", smoke);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("%s\n", s);
	free(s);
	json_decref(root);
}

int menv_cli_create_from_lock(const struct menv_config *cfg, const struct menv_cli_lock_opts *o)
{
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	const struct menv_lock_package **sel = NULL;
	const struct menv_record **order = NULL;
	struct lockrecs l = {0};
	struct menv_strvec requested = MENV_STRVEC_INIT;
	struct menv_pip_request pr = {0};
	char *prefix = NULL, *cmdline = NULL, *src = NULL;
	size_t nsel = 0, npip = 0;
	int rc, code = 0;

	rc = menv_lockfile_load(o->file, &lf, &err);
	if (rc)
		goto out;
	rc = menv_lockfile_select(lf, o->env, cfg->subdir, &sel, &nsel, &err);
	if (rc)
		goto out;
	prefix = menv_cli_prefix(cfg, o->name, o->prefix, &err);
	if (!prefix) {
		rc = err.code;
		goto out;
	}
	if (!o->dry_run && menv_cli_prefix_in_use(prefix)) {
		rc = menv_error_set(&err, MENV_EEXIST, "prefix '%s' already exists", prefix);
		goto out;
	}
	for (size_t i = 0; i < nsel; i++)
		npip += sel[i]->manager == MENV_LOCK_PIP;
	rc = build_records(cfg, sel, nsel, &l, &err);
	if (rc)
		goto out;
	if (!o->quiet)
		fprintf(stderr,
		        "Installing from lockfile %s (%s, %s): %zu conda + %zu pip packages, "
		        "no solve\n",
		        o->file, menv_lock_format_name(lf->format), cfg->subdir, l.n, npip);
	if (o->dry_run) {
		order = toposort(&l);
		if (o->json) {
			print_lock_change(prefix, order, l.n, NULL, 0, true, NULL);
		} else {
			printf("\nTransaction (from lockfile, not solved)\n\n  Prefix: %s\n\n",
			       prefix);
			for (size_t i = 0; i < l.n; i++)
				printf("  + %-26s %-16s %-26s %s\n", order[i]->name,
				       order[i]->version, order[i]->build,
				       order[i]->channel ? order[i]->channel->name : "");
			for (size_t i = 0; i < nsel; i++)
				if (sel[i]->manager == MENV_LOCK_PIP)
					printf("  + %-26s %-16s %-26s pypi\n", sel[i]->name,
					       sel[i]->version, "");
			printf("\nDry run: nothing was changed.\n");
		}
		goto out;
	}
	if (l.n) {
		rc = fetch_and_complete(cfg, &l, NULL, 0, o->file, o->quiet || o->json, &err);
		if (rc)
			goto out;
	}
	order = toposort(&l);
	for (size_t i = 0; i < l.n; i++)
		menv_strvec_push_owned(&requested,
		                       menv_xasprintf("%s==%s=%s", order[i]->name,
		                                      order[i]->version, order[i]->build));
	cmdline = menv_cli_cmdline();
	struct menv_cli_events ev = {0};
	struct menv_install_opts io = {
	        .pkgs_dir = cfg->pkgs_dir,
	        .requested = &requested,
	        .cmdline = cmdline,
	        .cancel = (volatile int *)&menv_cli_cancel,
	        .cb = menv_cli_env_event,
	        .ud = &ev,
	};
	menv_cli_link_settings(cfg, &io);
	struct menv_link_stats st;
	rc = menv_env_create(prefix, order, l.n, &io, &st, &err);
	if (rc)
		goto out;

	/* the pip entries: exact files, no dependency resolution, hashes where known */
	src = abs_path(o->file);
	json_t *req = json_object(), *popts = json_array();
	json_object_set_new(req, "source", json_string(src));
	json_object_set_new(req, "lockfile", json_string(menv_lock_format_name(lf->format)));
	json_t *chans = json_array();
	for (size_t i = 0; i < lf->channels.n; i++)
		json_array_append_new(chans, json_string(lf->channels.v[i]));
	json_object_set_new(req, "channels", chans);
	json_object_set_new(req, "specs", json_array());
	lock_pip_options(lf, o->env, &pr.options, popts);
	json_object_set_new(req, "pip_options", popts);
	write_request(prefix, req);
	json_decref(req);
	if (npip) {
		lock_pip_request(sel, nsel, o->quiet, &pr);
		if (!o->quiet)
			fprintf(stderr, "Installing %zu pip packages (--no-deps%s)\n", npip,
			        pr.require_hashes ? ", --require-hashes" : "");
		rc = menv_pip_install(prefix, &pr, &err);
		if (rc) {
			menv_pip_rollback_prefix(prefix);
			menv_error_prefix(&err, "the new environment was removed");
			goto out;
		}
	}
	menv_cli_envreg_register(prefix); /* ~/.conda/environments.txt, as conda does */
	if (!o->json)
		printf("Created %s from lockfile %s: %zu packages (%zu pip), %zu files, no solve\n",
		       prefix, o->file, l.n + npip, npip, st.files);
	/* the sample CUDA op built and tested with the new environment's own toolchain */
	json_t *smoke = NULL;
	if (o->smoke && menv_cli_wants_smoke(cfg, prefix)) {
		fflush(stdout);
		code = menv_cli_smoke(prefix, o->json, false, false, o->json ? &smoke : NULL);
	}
	if (o->json)
		print_lock_change(prefix, order, l.n, NULL, 0, false, smoke);
	json_decref(smoke);
out:
	if (rc) {
		if (o->json) {
			json_t *j = json_pack("{s:b, s:s, s:s}", "success", 0, "error",
			                      menv_error_name(err.code), "message", err.msg);
			char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
			printf("%s\n", s);
			free(s);
			json_decref(j);
		}
		code = menv_cli_fail(&err);
	}
	free(order);
	free(sel);
	lockrecs_release(&l);
	menv_lockfile_free(lf);
	menv_strvec_clear(&requested);
	menv_strvec_clear(&pr.requirements);
	menv_strvec_clear(&pr.options);
	free(prefix);
	free(cmdline);
	free(src);
	return code;
}

int menv_cli_install_from_lock(const struct menv_config *cfg, const struct menv_cli_lock_opts *o)
{
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	const struct menv_lock_package **sel = NULL;
	const struct menv_record **order = NULL, **link = NULL;
	struct menv_prefix_record *inst = NULL;
	json_t **unlink = NULL;
	struct lockrecs l = {0};
	struct menv_strvec requested = MENV_STRVEC_INIT;
	struct menv_cli_events ev = {0};
	char *prefix = NULL, *cmdline = NULL;
	const struct menv_lock_package **pipsel = NULL;
	struct menv_pip_dist *pips = NULL;
	struct menv_record *made = NULL; /* records of relinked noarch python packages */
	size_t nsel = 0, ninst = 0, nlink = 0, nunlink = 0, npips = 0, npipsel = 0, nmade = 0;
	int rc, code = 0, lock_fd = -1;

	rc = menv_lockfile_load(o->file, &lf, &err);
	if (rc)
		goto out;
	rc = menv_lockfile_select(lf, o->env, cfg->subdir, &sel, &nsel, &err);
	if (rc)
		goto out;
	prefix = menv_cli_env_prefix(cfg, o->name, o->prefix, &err);
	if (!prefix) {
		rc = err.code ? err.code : MENV_EUSAGE;
		goto out;
	}
	if (!o->dry_run) {
		bool undone = false;
		rc = menv_cli_lock_env(prefix, o->no_wait, &ev, &lock_fd, &err);
		if (!rc)
			rc = menv_cli_pip_recover(prefix, &undone, &err);
		if (!rc && undone)
			fprintf(stderr, "menv: took back an interrupted pip step in '%s'\n",
			        prefix);
		if (rc)
			goto out;
	}
	rc = menv_prefix_records_load(prefix, &inst, &ninst, &err);
	if (rc)
		goto out;
	/* the lock's pip entries that the prefix does not hold at that version */
	if (menv_pip_list(prefix, &pips, &npips, NULL))
		npips = 0;
	pipsel = menv_xcalloc(nsel + 1, sizeof(*pipsel));
	for (size_t i = 0; i < nsel; i++) {
		if (sel[i]->manager != MENV_LOCK_PIP)
			continue;
		char *norm = menv_pip_normalize(sel[i]->name);
		bool have = false;
		for (size_t k = 0; k < npips && !have; k++)
			have = !strcmp(pips[k].name, norm) && sel[i]->version &&
			       !strcmp(pips[k].version, sel[i]->version);
		free(norm);
		if (!have)
			pipsel[npipsel++] = sel[i];
	}
	rc = build_records(cfg, sel, nsel, &l, &err);
	if (rc)
		goto out;
	order = toposort(&l);
	/* link what the prefix does not hold as name-version-build; unlink the installed
	 * record of each such name (like micromamba: packages outside the lock stay) */
	link = menv_xcalloc(l.n + 1, sizeof(*link));
	unlink = menv_xcalloc(l.n + 1, sizeof(*unlink));
	l.skip = menv_xcalloc(l.n + 1, sizeof(*l.skip));
	for (size_t i = 0; i < l.n; i++) {
		const struct menv_record *r = order[i];
		const struct menv_prefix_record *have = NULL;
		for (size_t k = 0; k < ninst && !have; k++)
			if (!strcmp(inst[k].name, r->name))
				have = &inst[k];
		if (have && !strcmp(have->version, r->version) && !strcmp(have->build, r->build)) {
			l.skip[r - l.recs] = true;
			continue;
		}
		link[nlink++] = r;
		if (have)
			unlink[nunlink++] = have->json;
	}
	/* a lock that moves python to another minor version: the noarch python packages it
	 * does not name move with it */
	menv_cli_relink_noarch_python(NULL, inst, ninst, &link, &nlink, &unlink, &nunlink, &made,
	                              &nmade);
	if (!o->quiet)
		fprintf(stderr,
		        "Installing from lockfile %s (%s, %s) into %s: %zu to link, %zu to "
		        "unlink, no solve\n",
		        o->file, menv_lock_format_name(lf->format), cfg->subdir, prefix, nlink,
		        nunlink);
	if (!o->json) {
		printf("\nTransaction (from lockfile, not solved)\n\n  Prefix: %s\n\n", prefix);
		for (size_t i = 0; i < nunlink; i++)
			printf("  - %-26s %-16s %s\n",
			       json_string_value(json_object_get(unlink[i], "name")),
			       json_string_value(json_object_get(unlink[i], "version")),
			       json_string_value(json_object_get(unlink[i], "build")));
		for (size_t i = 0; i < nlink; i++)
			printf("  + %-26s %-16s %-26s %s\n", link[i]->name, link[i]->version,
			       link[i]->build, link[i]->channel ? link[i]->channel->name : "");
		for (size_t i = 0; i < npipsel; i++)
			printf("  + %-26s %-16s %-26s pypi\n", pipsel[i]->name,
			       pipsel[i]->version ? pipsel[i]->version : "", "");
		if (!nlink && !nunlink && !npipsel)
			printf("  All requested packages already installed.\n");
		printf("\n");
	}
	if (o->dry_run || (!nlink && !nunlink && !npipsel)) {
		if (o->json) {
			print_lock_change(prefix, link, nlink, unlink, nunlink, o->dry_run, NULL);
		} else if (o->dry_run) {
			printf("Dry run: nothing was changed.\n");
		}
		goto out;
	}
	/* only the records to link are fetched (the kept ones are already installed) */
	rc = fetch_and_complete(cfg, &l, made, nmade, o->file, o->quiet || o->json, &err);
	if (rc)
		goto out;
	for (size_t i = 0; i < nlink; i++)
		menv_strvec_push_owned(&requested,
		                       menv_xasprintf("%s==%s=%s", link[i]->name, link[i]->version,
		                                      link[i]->build));
	cmdline = menv_cli_cmdline();
	struct menv_install_opts io = {
	        .pkgs_dir = cfg->pkgs_dir,
	        .requested = &requested,
	        .cmdline = cmdline,
	        .cancel = (volatile int *)&menv_cli_cancel,
	        .no_wait = o->no_wait,
	        .locked = true,
	        .cb = menv_cli_env_event,
	        .ud = &ev,
	};
	menv_cli_link_settings(cfg, &io);
	struct menv_link_stats st = {0};
	/* the revision a failed pip step puts the environment back to */
	struct menv_revision *revs = NULL;
	size_t nrevs = 0;
	if (menv_history_load(prefix, &revs, &nrevs, NULL))
		nrevs = 0;
	menv_history_free(revs, nrevs);
	if (nlink || nunlink)
		rc = menv_env_apply(prefix, link, nlink, unlink, nunlink, &io, &st, &err);
	if (!rc && npipsel) {
		struct menv_pip_request pr = {0};
		lock_pip_options(lf, o->env, &pr.options, NULL);
		lock_pip_request(pipsel, npipsel, o->quiet, &pr);
		if (!o->quiet)
			fprintf(stderr, "Installing %zu pip packages (--no-deps%s)\n", npipsel,
			        pr.require_hashes ? ", --require-hashes" : "");
		rc = menv_cli_pip_into_env(
		        cfg, prefix, &pr, (nlink || nunlink) && nrevs ? (long)nrevs - 1 : -1, &err);
		menv_strvec_clear(&pr.options);
		menv_strvec_clear(&pr.requirements);
		if (rc)
			menv_error_prefix(&err, "%s", o->file);
	}
	if (rc)
		goto out;
	if (o->json) {
		print_lock_change(prefix, link, nlink, unlink, nunlink, false, NULL);
	} else {
		printf("Updated %s from lockfile %s: %zu packages removed, %zu linked (%zu pip), "
		       "%zu files, no solve\n",
		       prefix, o->file, st.unlinked, st.packages + npipsel, npipsel, st.files);
	}
	if (o->smoke && menv_cli_wants_smoke(cfg, prefix)) {
		menv_env_unlock(lock_fd);
		lock_fd = -1;
		fflush(stdout);
		json_t *report = NULL;
		code = menv_cli_smoke(prefix, o->json, false, false, o->json ? &report : NULL);
		json_decref(report);
	}
out:
	if (rc) {
		if (o->json)
			menv_cli_print_json_error(&err, NULL);
		code = menv_cli_fail(&err);
	}
	menv_env_unlock(lock_fd);
	free(link);
	free(unlink);
	free(order);
	free(pipsel);
	for (size_t i = 0; i < nmade; i++)
		menv_record_release(&made[i]);
	free(made);
	menv_pip_dists_free(pips, npips);
	free(sel);
	lockrecs_release(&l);
	menv_prefix_records_free(inst, ninst);
	menv_lockfile_free(lf);
	menv_strvec_clear(&requested);
	free(prefix);
	free(cmdline);
	return code;
}

/* The listed channel (a URL or path) whose last path components are `name`, or NULL. */
static const char *listed_channel(const char *name, const struct menv_strvec *a,
                                  const struct menv_strvec *b)
{
	const struct menv_strvec *lists[2] = {a, b};
	size_t nl = strlen(name);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; lists[k] && i < lists[k]->n; i++) {
			const char *c = lists[k]->v[i];
			size_t cl = strlen(c);
			while (cl > 1 && c[cl - 1] == '/')
				cl--;
			if (!strstr(c, "://") && c[0] != '/' && c[0] != '.' && c[0] != '~')
				continue; /* a name: resolved as usual */
			if (cl > nl && !strncmp(c + cl - nl, name, nl) && c[cl - nl - 1] == '/')
				return c;
		}
	}
	return NULL;
}

void menv_cli_envfile_specs(const struct menv_envfile *ef, const struct menv_strvec *cli_channels,
                            struct menv_strvec *specs)
{
	bool has_pip = false;
	for (size_t i = 0; i < specs->n; i++) {
		const char *s = specs->v[i];
		const char *c = strstr(s, "::");
		const char *nm = c ? c + 2 : s;
		while (*nm == ' ')
			nm++;
		size_t nl = strcspn(nm, " =<>!~[");
		if (nl == 3 && !strncmp(nm, "pip", 3))
			has_pip = true; /* a pip spec is there: never widened (BR-022) */
		if (!c || strstr(s, "://") || s[0] == '/' || s[0] == '.')
			continue;
		char *chan = menv_xstrndup(s, (size_t)(c - s));
		const char *slash = strchr(chan, '/');
		const char *url =
		        slash ? NULL
		              : listed_channel(chan, cli_channels, ef ? &ef->channels : NULL);
		if (url) {
			char *n = menv_xasprintf("%s::%s", url, c + 2);
			free(specs->v[i]);
			specs->v[i] = n;
		}
		free(chan);
	}
	if (ef && ef->has_pip_section && !has_pip)
		menv_strvec_push(specs, "pip");
}

int menv_cli_after_create(const struct menv_config *cfg, const char *prefix,
                          const struct menv_envfile *ef, const struct menv_strvec *cli_channels,
                          const struct menv_strvec *specs, bool quiet, struct menv_error *err)
{
	json_t *req = json_object(), *ch = json_array(), *sp = json_array(), *pip = json_array();
	json_t *popts = json_array();
	struct menv_pip_request pr = {0};
	char *dir = NULL;
	int rc = 0;

	(void)cfg;
	for (size_t i = 0; cli_channels && i < cli_channels->n; i++)
		json_array_append_new(ch, json_string(cli_channels->v[i]));
	for (size_t i = 0; ef && i < ef->channels.n; i++)
		json_array_append_new(ch, json_string(ef->channels.v[i]));
	for (size_t i = 0; specs && i < specs->n; i++)
		json_array_append_new(sp, json_string(specs->v[i]));
	for (size_t i = 0; ef && i < ef->pip.n; i++) {
		json_array_append_new(pip, json_string(ef->pip.v[i]));
		if (pip_source_option(ef->pip.v[i]))
			json_array_append_new(popts, json_string(ef->pip.v[i]));
	}
	if (ef && ef->path) {
		char *src = abs_path(ef->path);
		json_object_set_new(req, "source", json_string(src));
		free(src);
	}
	json_object_set_new(req, "channels", ch);
	json_object_set_new(req, "specs", sp);
	json_object_set_new(req, "pip", pip);
	json_object_set_new(req, "pip_options", popts);
	json_object_set_new(req, "has_pip_section", json_boolean(ef && ef->has_pip_section));
	write_request(prefix, req);
	json_decref(req);
	if (!ef || !ef->pip.n)
		return 0;

	/* the pip section, as conda runs it: a requirements file beside the env file's paths */
	for (size_t i = 0; i < ef->pip.n; i++)
		menv_strvec_push(&pr.requirements, ef->pip.v[i]);
	if (ef->path) {
		char *abs = abs_path(ef->path);
		char *slash = strrchr(abs, '/');
		if (slash)
			*slash = '\0';
		dir = abs;
		pr.cwd = dir;
	}
	pr.quiet = quiet;
	pr.cancel = (volatile int *)&menv_cli_cancel;
	if (!quiet)
		fprintf(stderr,
		        "Installing the 'pip:' section (%zu lines) with the environment's "
		        "pip\n",
		        ef->pip.n);
	rc = menv_pip_install(prefix, &pr, err);
	if (rc) {
		menv_pip_rollback_prefix(prefix);
		menv_error_prefix(err,
		                  "the 'pip:' section of '%s' failed and the new environment "
		                  "was removed",
		                  ef->path ? ef->path : "the environment file");
	}
	free(dir);
	menv_strvec_clear(&pr.requirements);
	return rc;
}
