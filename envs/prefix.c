/*
 * prefix.c - environment transactions.
 *
 * Creating: every package is linked into a staging directory beside the target,
 * conda-meta/ is written there, and the staging directory is renamed to the prefix; the
 * post-link scripts then run under an `N` journal, so a failure (or a crash) removes the
 * new prefix: a prefix either appears complete or not at all.
 *
 * Changing (install, remove, update): under the prefix lock, after recovering any
 * interrupted transaction, every package is checked first; then the packages leaving are
 * unlinked (pre-unlink scripts, files moved aside into the journal's backup), the new ones
 * linked (pre-link scripts, files, .pyc, PrefixRecords), history appended and post-link
 * scripts run. Every change is journaled (journal.c), so any failure rolls the prefix back
 * to exactly its previous state, and a crash is rolled back by the next menv command.
 *
 * Every path written, moved or removed is relative to the descriptor of the prefix (the
 * staging directory while creating) and resolved beneath it (beneath.c): a package's links
 * are data, nothing is written through them, so packages that chain links cannot reach out
 * of the prefix; paths a package may not ship (conda-meta/, .menv*) are refused by the check
 * before anything changes.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "activate.h"
#include "intent.h"
#include "link.h"
#include "prefix.h"
#include "registry.h"

/* One package linked by a transaction. */
struct linked {
	const struct menv_record *r;
	char *dist;  /* name-version-build */
	char *label; /* "channel/subdir::dist" for history and messages */
	char *pkgdir;
	json_t *files, *paths;
	int link_type;
};

struct run {
	const char *prefix; /* the final prefix */
	struct menv_journal txn;
	const struct menv_install_opts *opts;
	struct menv_link_stats st;
	struct menv_link_caps caps;
	json_t *owners; /* prefix path -> label of the package that has it */
	char *site;     /* "lib/pythonX.Y/site-packages", or NULL without python */
	char *pyver;    /* "X.Y", or NULL */
	char *pydir;    /* python's extracted package (where its .pyc magic is noted), or NULL */
	bool pylinked;  /* python is linked from pydir by this transaction */
	struct linked *pk;
	size_t npk;
	struct menv_link_list **lists; /* per record of the transaction: its file list */
	size_t nlists;
	bool new_root; /* linking into a create's new staging directory (menv_link_ctx) */
	struct menv_strvec conda_req; /* conda_specs of opts->requested, made once (specs) */
	bool conda_req_made;
};

static void run_release(struct run *r)
{
	for (size_t i = 0; i < r->npk; i++) {
		free(r->pk[i].dist);
		free(r->pk[i].label);
		free(r->pk[i].pkgdir);
		json_decref(r->pk[i].files);
		json_decref(r->pk[i].paths);
	}
	free(r->pk);
	for (size_t i = 0; i < r->nlists; i++)
		menv_link_list_free(r->lists[i]);
	free(r->lists);
	json_decref(r->owners);
	free(r->site);
	free(r->pyver);
	free(r->pydir);
	menv_strvec_clear(&r->conda_req);
	menv_journal_release(&r->txn);
}

static void emit(const struct menv_install_opts *o, enum menv_env_event ev, const char *msg)
{
	if (o->cb)
		o->cb(o->ud, ev, msg);
}

static bool cancelled(const struct menv_install_opts *o)
{
	return o->cancel && *o->cancel;
}

/* Appends "; <note>" to the error message. */
__attribute__((format(printf, 2, 3))) static void add_note(struct menv_error *err, const char *fmt,
                                                           ...)
{
	va_list ap;
	if (!err)
		return;
	size_t l = strlen(err->msg);
	if (l + 3 >= sizeof(err->msg))
		return;
	err->msg[l++] = ';';
	err->msg[l++] = ' ';
	va_start(ap, fmt);
	vsnprintf(err->msg + l, sizeof(err->msg) - l, fmt, ap);
	va_end(ap);
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

/* The spec the user asked for that names this record, or NULL. */
/* `s` (its first n bytes) in ASCII lower case. Caller frees. */
static char *lower_n(const char *s, size_t n)
{
	char *l = menv_xstrndup(s, n);
	for (char *p = l; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return l;
}

/* The requested specs by the name each names (lower case; the first spec of a name). */
static void requested_map(const struct menv_strvec *req, struct menv_strmap *out)
{
	for (size_t i = 0; req && i < req->n; i++) {
		const char *s = req->v[i];
		const char *cc = strstr(s, "::");
		if (cc)
			s = cc + 2;
		char *name = lower_n(s, strcspn(s, " =<>!~["));
		menv_strmap_add(out, name, i);
		free(name);
	}
}

/* The index in the requested specs (mapped by requested_map) of the spec that asked for
 * package `name`, or NULL. */
static const size_t *requested_at(const struct menv_strmap *map, const char *name)
{
	char *l = lower_n(name, strlen(name));
	const size_t *at = menv_strmap_get(map, l);
	free(l);
	return at;
}

static char *record_label(const struct menv_record *r)
{
	char *dist = menv_record_dist(r);
	/* a record rebuilt from a PrefixRecord has only its channel URL (with the subdir) */
	char *l = r->channel || !r->channel_url
	                  ? menv_xasprintf("%s/%s::%s", r->channel ? r->channel->name : "<unknown>",
	                                   r->subdir ? r->subdir : "", dist)
	                  : menv_xasprintf("%s::%s", r->channel_url, dist);
	free(dist);
	return l;
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static char *json_dist(json_t *rec)
{
	return menv_xasprintf("%s-%s-%s", jstr(rec, "name"), jstr(rec, "version"),
	                      jstr(rec, "build"));
}

/* python's version and site-packages from its record (CEP-20; python_site_packages_path
 * when the record has it), and the extracted package it is (`linked`: by this transaction;
 * else the record's extracted_package_dir). */
static void set_python(struct run *r, json_t *rec, const struct menv_record *linked)
{
	const char *ver = jstr(rec, "version");
	const char *sp = jstr(rec, "python_site_packages_path");
	const char *epd = jstr(rec, "extracted_package_dir");
	int maj = 0, min = 0;

	if (!ver || sscanf(ver, "%d.%d", &maj, &min) != 2)
		return;
	free(r->pyver);
	free(r->site);
	free(r->pydir);
	r->pylinked = linked != NULL;
	r->pydir = linked ? menv_pkgcache_locate(r->opts->pkgs_dir, r->opts->pkgs_dirs, linked)
	           : epd && epd[0] == '/' ? menv_xstrdup(epd)
	                                  : NULL;
	r->pyver = menv_xasprintf("%d.%d", maj, min);
	r->site = sp && *sp && sp[0] != '/' && !strstr(sp, "..")
	                  ? menv_xstrdup(sp)
	                  : menv_xasprintf("lib/python%d.%d/site-packages", maj, min);
}

/* Writes a new file at rel inside the transaction (moving an existing one aside). */
static int txn_write(struct run *r, const char *rel, const char *data, size_t len,
                     struct menv_error *err)
{
	int rc = menv_journal_mkparents(&r->txn, rel, err);

	if (!rc && menv_beneath_exists(r->txn.rootfd, rel))
		rc = menv_journal_move_aside(&r->txn, rel, err);
	if (!rc)
		rc = menv_journal_created(&r->txn, rel, err);
	if (!rc)
		rc = menv_beneath_write(r->txn.rootfd, rel, data, len, menv_file_mode(), O_EXCL,
		                        err);
	return rc;
}

/* Every package can be linked into the prefix: extracted in the cache, file list
 * readable, binary placeholders long enough (BR-026), python present for noarch python. */
static int check_all(struct run *r, const struct menv_record *const *recs, size_t n,
                     struct menv_error *err)
{
	/* the links the packages ship: a path of the transaction through one is refused now,
	 * before anything changes (links already in the prefix are met by the link itself) */
	json_t *links = json_object();
	/* each package's file list read once, here, for the checks and the link */
	r->lists = menv_xcalloc(n + 1, sizeof(*r->lists));
	for (size_t i = 0; i < n; i++) {
		char *dist = menv_record_dist(recs[i]);
		char *pkgdir = menv_pkgcache_locate(r->opts->pkgs_dir, r->opts->pkgs_dirs, recs[i]);
		int rc = menv_link_list_load(pkgdir, recs[i]->noarch_python, &r->lists[i], err);
		if (!rc)
			r->nlists = i + 1;
		if (!rc)
			rc = menv_link_list_links(r->lists[i], pkgdir, dist, recs[i]->noarch_python,
			                          r->site, links, err);
		free(pkgdir);
		free(dist);
		if (rc) {
			json_decref(links);
			return rc;
		}
	}
	for (size_t i = 0; i < n; i++) {
		char *dist = menv_record_dist(recs[i]);
		int rc = 0;
		if (recs[i]->noarch_python && !r->site)
			rc = menv_error_set(err, MENV_EUNSUPPORTED,
			                    "'%s' is a noarch python package but the environment "
			                    "has no python",
			                    dist);
		if (!rc)
			rc = menv_link_check(r->lists[i], dist, r->prefix, recs[i]->noarch_python,
			                     r->site, links, err);
		free(dist);
		if (rc) {
			json_decref(links);
			return rc;
		}
	}
	json_decref(links);
	return 0;
}

static void show_prelink_messages(struct run *r, const char *pkgdir)
{
	char *dir = menv_xasprintf("%s/info/prelink_messages", pkgdir);
	struct dirent **names = NULL;
	int n = r->opts->cb ? scandir(dir, &names, NULL, alphasort) : -1;
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			struct menv_buf b = MENV_BUF_INIT;
			char *p = menv_xasprintf("%s/%s", dir, names[i]->d_name);
			if (menv_buf_read_file(&b, p, NULL) == 0 && b.len)
				emit(r->opts, MENV_ENV_MESSAGE, b.buf);
			menv_buf_release(&b);
			free(p);
		}
		free(names[i]);
	}
	free(names);
	free(dir);
}

static int script_failed(struct run *r, struct menv_buf *out, int rc)
{
	if (out->len)
		emit(r->opts, MENV_ENV_SCRIPT_OUTPUT, out->buf);
	return rc;
}

/* Whether prefix replacement may have rewritten a .py of a package's paths_data (a
 * placeholder, or bytes changed): its .pyc are not the package cache's. */
static bool relocated_py(json_t *paths)
{
	size_t i;
	json_t *e;
	json_array_foreach(paths, i, e)
	{
		const char *p = jstr(e, "_path");
		size_t l = p ? strlen(p) : 0;
		/* sha256_in_prefix is in every path as conda 26 writes it: a rewrite is a value
		 * other than the package's sha256 */
		const char *in = jstr(e, "sha256_in_prefix"), *sha = jstr(e, "sha256");
		if (l > 3 && !strcmp(p + l - 3, ".py") &&
		    (json_object_get(e, "prefix_placeholder") || (in && (!sha || strcmp(in, sha)))))
			return true;
	}
	return false;
}

/* Links every record into r->txn.root (pre-link scripts, files, entry points, .pyc). */
static int link_all(struct run *r, const struct menv_record *const *recs, size_t n,
                    struct menv_error *err)
{
	/* per noarch python package: its .py to compile, its .pyc, its entry points */
	json_t **py = menv_xcalloc(n + 1, sizeof(*py));
	json_t **pyc = menv_xcalloc(n + 1, sizeof(*pyc));
	json_t **epf = menv_xcalloc(n + 1, sizeof(*epf));
	json_t **epp = menv_xcalloc(n + 1, sizeof(*epp));
	struct linked **noarch = menv_xcalloc(n + 1, sizeof(*noarch));
	size_t nnoarch = 0;
	int rc = 0;
	/* a create's packages on threads when no script runs between them and none writes a
	 * path of another (the prefix is then the serial one's); else one after the other */
	struct menv_link_ctx *ctxs = menv_xcalloc(n + 1, sizeof(*ctxs));
	json_t **cfiles = menv_xcalloc(n + 1, sizeof(*cfiles));
	json_t **cpaths = menv_xcalloc(n + 1, sizeof(*cpaths));
	bool *remap = menv_xcalloc(n + 1, sizeof(*remap));
	int threads = r->new_root && r->nlists == n && n > 1 ? menv_link_threads() : 1;
	for (size_t i = 0; threads > 1 && i < n; i++) {
		char *pkgdir = menv_pkgcache_locate(r->opts->pkgs_dir, r->opts->pkgs_dirs, recs[i]);
		char *pre = menv_xasprintf("%s/bin/.%s-pre-link.sh", pkgdir, recs[i]->name);
		if (access(pre, F_OK) == 0)
			threads = 1;
		remap[i] = recs[i]->noarch_python && r->site;
		free(pre);
		free(pkgdir);
	}
	if (threads > 1 && !menv_link_disjoint(r->lists, remap, r->site, n))
		threads = 1;
	free(remap);

	r->pk = menv_xcalloc(n + 1, sizeof(*r->pk));
	for (size_t i = 0; i < n; i++) {
		const struct menv_record *rec = recs[i];
		struct linked *l = &r->pk[r->npk++];
		l->r = rec;
		l->dist = menv_record_dist(rec);
		l->label = record_label(rec);
		l->pkgdir = menv_pkgcache_locate(r->opts->pkgs_dir, r->opts->pkgs_dirs, rec);
		l->files = json_array();
		l->paths = json_array();
		if (cancelled(r->opts)) {
			rc = menv_error_set(err, MENV_EINTR, "interrupted");
			goto out;
		}
		emit(r->opts, MENV_ENV_LINK, l->dist);
		show_prelink_messages(r, l->pkgdir);
		char *pre = menv_xasprintf("%s/bin/.%s-pre-link.sh", l->pkgdir, rec->name);
		if (access(pre, F_OK) == 0) {
			struct menv_buf out = MENV_BUF_INIT;
			rc = menv_run_link_script(r->prefix, pre, "pre-link", rec->name,
			                          rec->version, rec->build_number, l->dist, &out,
			                          err);
			if (rc)
				script_failed(r, &out, rc);
			menv_buf_release(&out);
		}
		free(pre);
		if (rc)
			goto out;
		struct menv_link_ctx ctx = {
		        .prefix = r->prefix,
		        .txn = &r->txn,
		        .pkgdir = l->pkgdir,
		        .dist = l->label,
		        .noarch_python = rec->noarch_python,
		        .site_packages = r->site,
		        .pyver = r->pyver,
		        .opts = r->opts,
		        .owners = r->owners,
		        .caps = &r->caps,
		        .st = &r->st,
		        .list = i < r->nlists ? r->lists[i] : NULL,
		        .new_root = r->new_root,
		};
		if (rec->noarch_python) {
			ctx.py = py[nnoarch] = json_array();
			ctx.ep_files = epf[nnoarch] = json_array();
			ctx.ep_paths = epp[nnoarch] = json_array();
			pyc[nnoarch] = json_array();
			noarch[nnoarch++] = l;
		}
		if (threads > 1) { /* linked below, all at once */
			ctx.owners = NULL;
			ctxs[i] = ctx;
			cfiles[i] = l->files;
			cpaths[i] = l->paths;
			continue;
		}
		rc = menv_link_package(&ctx, l->files, l->paths, err);
		if (rc) {
			if (rc != MENV_EINTR)
				menv_error_prefix(err, "while linking '%s'", l->dist);
			goto out;
		}
		l->link_type = ctx.link_type;
		r->st.packages++;
	}
	if (threads > 1) {
		size_t failed;
		rc = menv_link_parallel(ctxs, cfiles, cpaths, n, threads, &r->st, &r->caps, &failed,
		                        err);
		for (size_t i = 0; i < n && i < failed; i++) {
			r->pk[i].link_type = ctxs[i].link_type;
			r->st.packages++;
		}
		if (rc) {
			if (rc != MENV_EINTR)
				menv_error_prefix(err, "while linking '%s'", r->pk[failed].dist);
			goto out;
		}
	}
	/* the .pyc of every noarch python package, in one go (conda's
	 * AggregateCompileMultiPycAction), those kept in the package cache linked */
	size_t made = 0;
	struct menv_pyc_pkg *cpk = menv_xcalloc(nnoarch + 1, sizeof(*cpk));
	for (size_t k = 0; k < nnoarch; k++)
		cpk[k] = (struct menv_pyc_pkg){noarch[k]->pkgdir, !relocated_py(noarch[k]->paths)};
	struct menv_pyc_cache cache = {r->opts->pkgs_dir, r->pydir, r->pylinked, r->site, cpk};
	rc = menv_compile_pyc(&r->txn, r->pyver, py, pyc, nnoarch, &cache, r->opts, &made, err);
	free(cpk);
	r->st.pyc += made;
	if (rc) {
		menv_error_prefix(err, "while compiling the .pyc files of noarch python packages");
		goto out;
	}
	/* conda's PrefixRecord: the package's files, then its .pyc, then its entry points */
	for (size_t k = 0; k < nnoarch; k++) {
		size_t i;
		json_t *e;
		json_array_foreach(pyc[k], i, e)
		{
			json_array_append(noarch[k]->files, json_object_get(e, "_path"));
			json_array_append(noarch[k]->paths, e);
		}
		json_array_extend(noarch[k]->files, epf[k]);
		json_array_extend(noarch[k]->paths, epp[k]);
	}
out:
	for (size_t k = 0; k < nnoarch; k++) {
		json_decref(py[k]);
		json_decref(pyc[k]);
		json_decref(epf[k]);
		json_decref(epp[k]);
	}
	free(py);
	free(pyc);
	free(epf);
	free(epp);
	free(noarch);
	free(ctxs);
	free(cfiles);
	free(cpaths);
	return rc;
}

static int by_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each spec of `in` (may be NULL) as conda's str(MatchSpec) writes it, into `out`; one that
 * does not parse as it is. */
static void conda_specs(const struct menv_strvec *in, struct menv_strvec *out)
{
	for (size_t i = 0; in && i < in->n; i++) {
		struct menv_matchspec *ms = NULL;
		if (menv_matchspec_parse(in->v[i], &ms, NULL) == 0)
			menv_strvec_push_owned(out, menv_matchspec_conda_str(ms));
		else
			menv_strvec_push(out, in->v[i]);
		menv_matchspec_free(ms);
	}
}

/* conda_specs of the run's requested specs, made on first use and kept: the records and the
 * history both write them (a lock's every package is one). Borrowed from r. */
static const struct menv_strvec *run_conda_specs(struct run *r)
{
	if (!r->conda_req_made)
		conda_specs(r->opts->requested, &r->conda_req);
	r->conda_req_made = true;
	return &r->conda_req;
}

/* conda's PathDataV1 keys in its order; others after them */
static json_t *conda_path_data(json_t *p)
{
	static const char *const keys[] = {
	        "_path",  "prefix_placeholder", "file_mode",   "no_link",         "path_type",
	        "sha256", "size_in_bytes",      "inode_paths", "sha256_in_prefix"};
	const size_t nkeys = sizeof(keys) / sizeof(*keys);
	/* already so (link.c's compact entries): shared as it is */
	size_t at = 0;
	bool ordered = true;
	const char *key;
	json_t *v;
	json_object_foreach(p, key, v)
	{
		while (at < nkeys && strcmp(keys[at], key))
			at++;
		ordered = ordered && at++ < nkeys && !json_is_null(v);
	}
	if (ordered)
		return json_incref(p);
	json_t *o = json_object();
	for (size_t k = 0; k < nkeys; k++) {
		json_t *kv = json_object_get(p, keys[k]);
		if (kv && !json_is_null(kv))
			json_object_set(o, keys[k], kv);
	}
	json_object_foreach(p, key, v) if (!json_object_get(o, key)) json_object_set(o, key, v);
	return o;
}

/* `rec` (the record with menv's additions) as conda 26's PrefixRecord.dump() orders and
 * leaves out its keys: PackageRecord's fields in their order (no legacy arch/platform; empty
 * flags/features left out), package_type from noarch, then the keys conda does not know
 * (kept: menv keeps every repodata key), then SolvedRecord's and PrefixRecord's fields, with
 * `requested_specs` last as dump() adds it. */
static json_t *conda_record(json_t *rec)
{
	static const char *const pkg[] = {"name",
	                                  "version",
	                                  "build",
	                                  "build_number",
	                                  "channel",
	                                  "subdir",
	                                  "fn",
	                                  "md5",
	                                  "legacy_bz2_md5",
	                                  "legacy_bz2_size",
	                                  "url",
	                                  "sha256",
	                                  "metadata_signature_status",
	                                  "depends",
	                                  "constrains",
	                                  "flags",
	                                  "track_features",
	                                  "features",
	                                  "noarch",
	                                  "preferred_env",
	                                  "python_site_packages_path",
	                                  "license",
	                                  "license_family",
	                                  "package_type",
	                                  "timestamp",
	                                  "date",
	                                  "size"};
	static const char *const tail[] = {"requested_spec",
	                                   "_requested_specs",
	                                   "package_tarball_full_path",
	                                   "extracted_package_dir",
	                                   "files",
	                                   "paths_data",
	                                   "link",
	                                   "auth",
	                                   "requested_specs"};
	json_t *o = json_object();
	const char *noarch = json_string_value(json_object_get(rec, "noarch"));
	if (json_is_true(json_object_get(rec, "noarch")))
		noarch = "generic";
	if (noarch && !json_object_get(rec, "package_type"))
		json_object_set_new(rec, "package_type",
		                    json_string(!strcmp(noarch, "python") ? "noarch_python"
		                                                          : "noarch_generic"));
	json_object_del(rec, "arch");
	json_object_del(rec, "platform");
	/* conda dumps depends and constrains always (their default is empty) */
	if (!json_is_array(json_object_get(rec, "depends")))
		json_object_set_new(rec, "depends", json_array());
	if (!json_is_array(json_object_get(rec, "constrains")))
		json_object_set_new(rec, "constrains", json_array());
	for (size_t k = 0; k < sizeof(pkg) / sizeof(*pkg); k++) {
		json_t *v = json_object_get(rec, pkg[k]);
		bool empty = !v || json_is_null(v) ||
		             (k >= 15 && k <= 17 &&
		              ((json_is_string(v) && !*json_string_value(v)) ||
		               (json_is_array(v) && !json_array_size(v))));
		if (!strcmp(pkg[k], "flags") && json_is_array(v) && !json_array_size(v))
			empty = true;
		if (!empty)
			json_object_set(o, pkg[k], v);
		json_object_del(rec, pkg[k]);
	}
	json_t *t = json_object();
	for (size_t k = 0; k < sizeof(tail) / sizeof(*tail); k++) {
		json_t *v = json_object_get(rec, tail[k]);
		if (v)
			json_object_set(t, tail[k], v);
		json_object_del(rec, tail[k]);
	}
	json_object_update(o, rec); /* the keys conda does not know */
	json_object_update(o, t);
	json_decref(t);
	return o;
}

/* conda-meta/<dist>.json for each linked package, as conda 26 writes it (conda_record; JSON
 * of 2-space indent, ASCII, no final newline). requested_spec comes only from this command's
 * specs (conda's match_specs_to_dists of the transaction's update specs): a package relinked
 * as a dependency gets `_requested_specs: []`, whatever its old record said. */
static int write_records(struct run *r, struct menv_error *err)
{
	struct menv_strmap req_map = MENV_STRMAP_INIT; /* name -> index */
	int rc = 0;

	/* conda's requested_spec: str(MatchSpec) of the spec that asked for the package */
	const struct menv_strvec *conda_req = run_conda_specs(r);
	requested_map(r->opts->requested, &req_map);
	for (size_t i = 0; !rc && i < r->npk; i++) {
		struct linked *l = &r->pk[i];
		char *rrpath = menv_xasprintf("%s/info/repodata_record.json", l->pkgdir);
		/* the cache's parse, shared (menv_pkgmeta_load; the record's own where it is that
		 * already, a lock's completed record): changed here in a copy of its top level only
		 * (nested values are replaced, never changed) */
		json_t *rec = NULL, *shared = l->r->json_is_cached ? json_incref(l->r->json)
		                              : access(rrpath, F_OK) == 0
		                                      ? menv_pkgmeta_load(rrpath, err)
		                                      : json_deep_copy(l->r->json);
		free(rrpath);
		if (shared) {
			rec = json_copy(shared);
			json_decref(shared);
		}
		if (!rec) {
			rc = MENV_EPARSE;
			break;
		}
		/* the record the solver or the lock chose wins over the cache's copy, which may
		 * predate a repodata patch (conda writes conda-meta from the solver's record) */
		json_object_update(rec, l->r->json);
		const size_t *at = requested_at(&req_map, l->r->name);
		const char *req = at ? conda_req->v[*at] : NULL;
		/* conda's index: python depends on pip when add_pip_as_python_dependency */
		json_t *deps = json_object_get(rec, "depends");
		if (r->opts->add_pip && !strcmp(l->r->name, "python") && json_is_array(deps)) {
			bool has = false;
			size_t k;
			json_t *d;
			json_array_foreach(deps, k, d)
			{
				const char *ds = json_string_value(d);
				has |= ds && !strncmp(ds, "pip", 3) && (!ds[3] || ds[3] == ' ');
			}
			if (!has) {
				json_t *nd = json_deep_copy(deps);
				json_array_append_new(nd, json_string("pip"));
				json_object_set_new(rec, "depends", nd);
			}
		}
		/* redacted: conda-meta never holds credentials or tokens */
		char *url = menv_url_redact(l->r->url ? l->r->url : "");
		char *chan = menv_url_redact(l->r->channel_url ? l->r->channel_url : "");
		json_object_set_new(rec, "url", json_string(url));
		json_object_set_new(rec, "channel", json_string(chan));
		free(url);
		free(chan);
		json_object_set(rec, "files", l->files);
		json_t *pd = json_object(), *paths = json_array();
		size_t k;
		json_t *e;
		json_array_foreach(l->paths, k, e) json_array_append_new(paths, conda_path_data(e));
		json_object_set_new(pd, "paths_version", json_integer(1));
		json_object_set_new(pd, "paths", paths);
		json_object_set_new(rec, "paths_data", pd);
		json_t *link = json_object();
		json_object_set_new(link, "source", json_string(l->pkgdir));
		json_object_set_new(link, "type", json_integer(l->link_type ? l->link_type : 1));
		json_object_set_new(rec, "link", link);
		/* conda: requested_spec and requested_specs on what was asked for,
		 * `_requested_specs: []` on the rest */
		json_object_del(rec, "requested_spec");
		json_object_del(rec, "requested_specs");
		if (req && *req) {
			char *reqr = menv_text_redact(req);
			json_object_set_new(rec, "requested_spec", json_string(reqr));
			json_t *list = json_array();
			json_array_append_new(list, json_string(reqr));
			json_object_set_new(rec, "requested_specs", list);
			free(reqr);
		} else {
			json_object_set_new(rec, "_requested_specs", json_array());
		}
		json_object_set_new(rec, "extracted_package_dir", json_string(l->pkgdir));
		/* the package file beside the extracted directory, in the cache it came from */
		const char *slash = strrchr(l->pkgdir, '/');
		char *tarball = menv_xasprintf("%.*s/%s", (int)(slash ? slash - l->pkgdir : 0),
		                               l->pkgdir, l->r->fn);
		json_object_set_new(rec, "package_tarball_full_path", json_string(tarball));
		free(tarball);
		json_t *out = conda_record(rec);
		char *dump = menv_json_python_dump(out, 0);
		json_decref(out);
		char *rel = menv_xasprintf("conda-meta/%s.json", l->dist);
		rc = txn_write(r, rel, dump, strlen(dump), err);
		free(rel);
		free(dump);
		json_decref(rec);
	}
	menv_strmap_clear(&req_map);
	return rc;
}

/* The labels ("channel/subdir::dist") the history added packages under, by dist: the
 * newest revision's, the first of a revision. `labels` (borrowed from revs) is what the
 * map's values index; free it. */
static void history_labels(const struct menv_revision *revs, size_t nrevs, struct menv_strmap *map,
                           const char ***labels)
{
	size_t n = 0;
	for (size_t i = 0; i < nrevs; i++)
		n += revs[i].added.n;
	*labels = menv_xcalloc(n + 1, sizeof(**labels));
	n = 0;
	for (size_t i = nrevs; i-- > 0;) {
		for (size_t k = 0; k < revs[i].added.n; k++) {
			const char *a = revs[i].added.v[k];
			const char *cc = strstr(a, "::");
			(*labels)[n] = a;
			if (menv_strmap_add(map, cc ? cc + 2 : a, n))
				n++;
		}
	}
}

/* The "channel/subdir::dist" an installed record was recorded under in the history (`map`,
 * `labels` from history_labels), or one made from its channel URL. Caller frees. */
static char *installed_label(json_t *rec, const struct menv_strmap *map, const char *const *labels)
{
	char *dist = json_dist(rec);
	const size_t *at = menv_strmap_get(map, dist);
	if (at) {
		free(dist);
		return menv_xstrdup(labels[*at]);
	}
	const char *ch = jstr(rec, "channel");
	const char *sd = jstr(rec, "subdir");
	char *c = menv_xstrdup(ch ? ch : "<unknown>");
	size_t n = strlen(c);
	if (sd && n > strlen(sd) + 1 && c[n - strlen(sd) - 1] == '/' &&
	    !strcmp(c + n - strlen(sd), sd))
		c[n - strlen(sd) - 1] = '\0';
	char *l = menv_xasprintf("%s/%s::%s", c, sd ? sd : "", dist);
	free(c);
	free(dist);
	return l;
}

/* conda-meta/created_at as conda's PrefixData.set_creation_time writes it when a history
 * is first written: the time in seconds as Python's str(float) (shortest round trip). */
static int write_created_at(struct run *r, struct menv_error *err)
{
	struct timespec ts;
	char text[64];
	clock_gettime(CLOCK_REALTIME, &ts);
	double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	for (int p = 10; p <= 17; p++) {
		snprintf(text, sizeof(text), "%.*g", p, now);
		if (strtod(text, NULL) == now)
			break;
	}
	if (!strpbrk(text, ".e"))
		strcat(text, ".0");
	return txn_write(r, "conda-meta/created_at", text, strlen(text), err);
}

static int write_history(struct run *r, const struct menv_strvec *minus, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	char when[64];
	time_t now = time(NULL);
	struct tm tm;
	char *path = menv_xasprintf("%s/conda-meta/history", r->txn.root);
	int rc;

	if (access(path, F_OK) == 0) {
		rc = menv_buf_read_file(&b, path, err);
		if (rc)
			goto out;
		if (b.len && b.buf[b.len - 1] != '\n')
			menv_buf_addch(&b, '\n');
	} else {
		rc = write_created_at(r, err);
		if (rc)
			goto out;
	}
	size_t start = b.len; /* the new block, redacted below */
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	menv_buf_addf(&b, "==> %s <==\n", when);
	/* one line each, valid UTF-8: a newline in an argument (a file name) cannot start a
	 * forged revision */
	char *cmd = menv_utf8_escape(r->opts->cmdline ? r->opts->cmdline : "menv");
	menv_buf_addf(&b, "# cmd: %s\n", cmd);
	free(cmd);
	menv_buf_addf(&b, "# menv version: %s\n", MENV_VERSION);
	/* conda's History.write_changes: the unlinked, then the linked, each sorted */
	struct menv_strvec plus = MENV_STRVEC_INIT, min = MENV_STRVEC_INIT;
	for (size_t i = 0; minus && i < minus->n; i++)
		menv_strvec_push_owned(&min, menv_utf8_escape(minus->v[i]));
	for (size_t i = 0; i < r->npk; i++)
		menv_strvec_push_owned(&plus, menv_utf8_escape(r->pk[i].label));
	if (min.n)
		qsort(min.v, min.n, sizeof(*min.v), by_strcmp);
	if (plus.n)
		qsort(plus.v, plus.n, sizeof(*plus.v), by_strcmp);
	for (size_t i = 0; i < min.n; i++)
		menv_buf_addf(&b, "-%s\n", min.v[i]);
	for (size_t i = 0; i < plus.n; i++)
		menv_buf_addf(&b, "+%s\n", plus.v[i]);
	menv_strvec_clear(&min);
	menv_strvec_clear(&plus);
	/* conda's History.write_specs: str(MatchSpec) of each, a Python list (none: no line) */
	const struct menv_strvec *specs = run_conda_specs(r);
	if (specs->n)
		menv_history_specs_line(&b, r->opts->remove_specs ? "remove" : "update", specs);
	/* no credentials or tokens on disk: channel URLs in the command, labels and specs */
	char *block = menv_text_redact(b.buf + start);
	b.len = start;
	b.buf[start] = '\0';
	menv_buf_adds(&b, block);
	free(block);
	rc = txn_write(r, "conda-meta/history", b.buf, b.len, err);
out:
	free(path);
	menv_buf_release(&b);
	return rc;
}

/* post-link scripts in link order, then the messages they left. */
static int post_link(struct run *r, struct menv_error *err)
{
	int rc = 0;

	if (menv_beneath_exists(r->txn.rootfd, ".messages.txt"))
		rc = menv_journal_move_aside(&r->txn, ".messages.txt", err);
	if (!rc)
		rc = menv_journal_created(&r->txn, ".messages.txt", err);
	for (size_t i = 0; !rc && i < r->npk; i++) {
		struct linked *l = &r->pk[i];
		char *s = menv_xasprintf("%s/bin/.%s-post-link.sh", r->txn.root, l->r->name);
		if (access(s, F_OK) == 0) {
			struct menv_buf out = MENV_BUF_INIT;
			rc = menv_run_link_script(r->prefix, s, "post-link", l->r->name,
			                          l->r->version, l->r->build_number, l->dist, &out,
			                          err);
			if (rc)
				script_failed(r, &out, rc);
			menv_buf_release(&out);
		}
		free(s);
		if (!rc && cancelled(r->opts))
			rc = menv_error_set(err, MENV_EINTR, "interrupted");
	}
	return rc;
}

/* After the commit: show and remove .messages.txt (as conda does). */
static void show_messages(struct run *r)
{
	char *msgs = menv_xasprintf("%s/.messages.txt", r->prefix);
	struct menv_buf b = MENV_BUF_INIT;
	if (menv_buf_read_file(&b, msgs, NULL) == 0) {
		if (b.len)
			emit(r->opts, MENV_ENV_MESSAGE, b.buf);
		menv_beneath_unlink(r->txn.rootfd, ".messages.txt", 0, NULL);
	}
	menv_buf_release(&b);
	free(msgs);
}

/* ---------------------------------------------------------------------------------------- */
/* Create                                                                                    */

int menv_env_check_prefix(const char *prefix, struct menv_error *err)
{
	/* quotes, backslashes and control characters end up inside shebangs, Python's
	 * sysconfig and activation scripts, where they break the environment */
	for (const char *c = prefix; *c; c++) {
		if (*c == '\'' || *c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
			return menv_error_set(err, MENV_EUSAGE,
			                      "prefix '%s' contains a character "
			                      "(%s) that breaks programs installed in it",
			                      prefix,
			                      (unsigned char)*c < 0x20 ? "a control character"
			                      : *c == '\\'             ? "a backslash"
			                                               : "a quote");
	}
	/* the prefix is written into history, records, the registry and exports: UTF-8 text */
	if (!menv_utf8_valid(prefix, strlen(prefix), NULL)) {
		char *shown = menv_utf8_escape(prefix);
		int rc = menv_error_set(err, MENV_EUSAGE, "prefix '%s' is not valid UTF-8", shown);
		free(shown);
		return rc;
	}
	/* PATH and LD_LIBRARY_PATH are ':'-separated: <prefix>/bin would be split (conda
	 * refuses it too) */
	if (strchr(prefix, ':'))
		return menv_error_set(err, MENV_EUSAGE,
		                      "prefix '%s' contains ':', which splits it in PATH", prefix);
	return 0;
}

/* ".<name>.menv-tmp-" for a prefix named `base`; long names are cut so that the staging
 * directory's name (plus mkdtemp's 6 characters) stays within NAME_MAX. Caller frees. */
static char *staging_name(const char *base)
{
	return menv_xasprintf(".%.200s.menv-tmp-", base);
}

/* Removes staging directories of earlier creates of this name (every name: base NULL) that
 * were killed (their lock is free), and what a killed removal left (intent.c moves a prefix
 * to such a name before removing it). */
static void remove_stale_staging(const char *parent, const char *base)
{
	DIR *d = opendir(parent);
	struct dirent *de;
	char *pfx = base ? staging_name(base) : NULL;
	static const char tag[] = ".menv-tmp-";

	while (d && (de = readdir(d))) {
		if (pfx ? strncmp(de->d_name, pfx, strlen(pfx)) ||
		                    strlen(de->d_name) != strlen(pfx) + 6
		        : de->d_name[0] != '.' || strlen(de->d_name) < sizeof(tag) + 6 ||
		                    strncmp(de->d_name + strlen(de->d_name) - 6 - (sizeof(tag) - 1),
		                            tag, sizeof(tag) - 1))
			continue;
		char *dir = menv_xasprintf("%s/%s", parent, de->d_name);
		char *lock = menv_xasprintf("%s/conda-meta/.menv.lock", dir);
		int fd = open(lock, O_RDWR | O_CLOEXEC);
		struct stat sb;
		bool stale = false;
		if (fd >= 0) {
			stale = flock(fd, LOCK_EX | LOCK_NB) == 0;
			close(fd);
		} else if (stat(dir, &sb) == 0 && time(NULL) - sb.st_mtime > 3600) {
			stale = true; /* never got its lock: died at once */
		}
		if (stale)
			menv_remove_tree(dir);
		free(lock);
		free(dir);
	}
	if (d)
		closedir(d);
	free(pfx);
}

void menv_env_remove_stale(const char *parent)
{
	remove_stale_staging(parent, NULL);
}

int menv_env_create(const char *prefix, const struct menv_record *const *recs, size_t n,
                    const struct menv_install_opts *opts, struct menv_link_stats *stats,
                    struct menv_error *err)
{
	struct run r = {.prefix = prefix, .opts = opts};
	char *pcopy = menv_xstrdup(prefix), *bcopy = menv_xstrdup(prefix);
	char *parent = dirname(pcopy), *base = basename(bcopy);
	char *staging = NULL;
	struct stat sb;
	bool empty_dir = false, renamed = false;
	int lock_fd = -1, rc = 0;

	menv_journal_init(&r.txn, "/");
	r.owners = json_object();
	if (prefix[0] != '/') {
		rc = menv_error_set(err, MENV_EUSAGE, "prefix '%s' is not an absolute path",
		                    prefix);
		goto out;
	}
	rc = menv_env_check_prefix(prefix, err);
	if (rc)
		goto out;
	if (lstat(prefix, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode) || !dir_is_empty(prefix)) {
			rc = menv_error_set(err, MENV_EEXIST, "prefix '%s' already exists", prefix);
			goto out;
		}
		empty_dir = true;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(recs[i]->name, "python"))
			set_python(&r, recs[i]->json, recs[i]);
	rc = check_all(&r, recs, n, err);
	if (rc)
		goto out;
	rc = menv_mkdirs(parent, err);
	if (rc)
		goto out;
	remove_stale_staging(parent, base);
	char *sname = staging_name(base);
	staging = menv_xasprintf("%s/%sXXXXXX", parent, sname);
	free(sname);
	if (!mkdtemp(staging)) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create a staging directory in '%s'",
		                    parent);
		free(staging);
		staging = NULL;
		goto out;
	}
	chmod(staging, menv_dir_mode());
	/* the staging directory is the root of every write until it is renamed */
	menv_journal_release(&r.txn);
	menv_journal_init(&r.txn, staging);
	r.new_root = true;
	rc = menv_beneath_mkdir(r.txn.rootfd, "conda-meta", menv_dir_mode(), err);
	if (rc)
		goto out;
	rc = menv_env_lock(staging, true, NULL, NULL, &lock_fd, err);
	if (rc)
		goto out;
	rc = link_all(&r, recs, n, err);
	if (!rc)
		rc = write_records(&r, err);
	if (!rc)
		rc = write_history(&r, NULL, err);
	if (!rc && opts->var_names && opts->var_values && opts->var_names->n)
		rc = menv_env_state_vars_set(staging, opts->var_names, opts->var_values, err);
	if (!rc && opts->staged)
		rc = opts->staged(opts->staged_ud, staging, err);
	if (!rc && opts->steps_follow)
		rc = menv_intent_creating(staging, true, err);
	if (rc)
		goto out;
	if (cancelled(opts)) {
		rc = menv_error_set(err, MENV_EINTR, "interrupted; '%s' was not created", prefix);
		goto out;
	}
	/* the journal says: a new prefix; until its commit, recovery removes it */
	rc = menv_journal_begin(&r.txn, 'N', err);
	if (rc)
		goto out;
	if (empty_dir && rmdir(prefix) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot replace empty directory '%s'", prefix);
		goto out;
	}
	if (rename(staging, prefix) < 0) {
		if (errno == ENOTEMPTY || errno == EEXIST)
			rc = menv_error_set(err, MENV_EEXIST,
			                    "prefix '%s' already exists (another "
			                    "process created it meanwhile)",
			                    prefix);
		else
			rc = menv_error_sys(err, MENV_EIO,
			                    "cannot move the new environment to "
			                    "'%s'",
			                    prefix);
		if (empty_dir)
			mkdir(prefix, menv_dir_mode());
		goto out;
	}
	renamed = true;
	menv_journal_moved(&r.txn, prefix);
	rc = post_link(&r, err);
	if (!rc)
		rc = menv_journal_commit(&r.txn, err);
	if (rc)
		goto out;
	show_messages(&r);
out:
	if (rc && renamed) {
		menv_remove_tree(prefix);
		if (empty_dir)
			mkdir(prefix, menv_dir_mode());
		if (rc == MENV_EINTR)
			menv_error_set(err, MENV_EINTR, "interrupted; '%s' was not created",
			               prefix);
		else
			add_note(err, "'%s' was not created", prefix);
	} else if (rc && staging) {
		if (rc == MENV_EINTR)
			menv_error_set(err, MENV_EINTR, "interrupted; '%s' was not created",
			               prefix);
		menv_remove_tree(staging);
	}
	menv_env_unlock(lock_fd);
	if (stats)
		*stats = r.st;
	run_release(&r);
	free(staging);
	free(pcopy);
	free(bcopy);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Changing an environment                                                                   */

static int by_depth_desc(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t dx = 0, dy = 0;
	for (const char *s = x; *s; s++)
		dx += *s == '/';
	for (const char *s = y; *s; s++)
		dy += *s == '/';
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(y, x);
}

/* Unlinks one installed package: pre-unlink script, files moved aside (except those another
 * remaining package lists), its record. Directories left empty are collected in `dirs`. */
static int unlink_one(struct run *r, json_t *rec, json_t *dirs, struct menv_error *err)
{
	const char *name = jstr(rec, "name");
	char *dist = json_dist(rec);
	char *pre = menv_xasprintf("%s/bin/.%s-pre-unlink.sh", r->prefix, name);
	json_t *files = json_object_get(rec, "files");
	json_t *bn = json_object_get(rec, "build_number");
	size_t i;
	json_t *f;
	int rc = 0;

	emit(r->opts, MENV_ENV_UNLINK, dist);
	if (access(pre, F_OK) == 0) {
		struct menv_buf out = MENV_BUF_INIT;
		struct menv_error serr = {0};
		if (menv_run_link_script(r->prefix, pre, "pre-unlink", name, jstr(rec, "version"),
		                         json_is_integer(bn) ? json_integer_value(bn) : 0, dist,
		                         &out, &serr)) {
			script_failed(r, &out, serr.code);
			/* a failing pre-unlink is a warning (as conda's); Ctrl-C stops */
			if (serr.code == MENV_EINTR)
				rc = menv_error_set(err, MENV_EINTR, "%s", serr.msg);
			else
				emit(r->opts, MENV_ENV_WARNING, serr.msg);
		}
		menv_buf_release(&out);
		if (rc)
			goto out;
	}
	json_array_foreach(files, i, f)
	{
		const char *rel = json_string_value(f);
		struct stat sb;
		if (!rel || !menv_beneath_relpath_ok(rel))
			continue;
		if (json_object_get(r->owners, rel))
			continue; /* a package that stays has this path too */
		/* gone, or behind a link (never removed through one): left as it is */
		struct menv_error lerr = {0};
		int lrc = menv_beneath_lstat(r->txn.rootfd, rel, &sb, &lerr);
		if (lrc == 0 && !S_ISDIR(sb.st_mode))
			rc = menv_journal_move_aside(&r->txn, rel, err);
		else if (lrc == MENV_EUNSAFE) {
			char *msg = menv_xasprintf("'%s': '%s' is not removed: %s", dist, rel,
			                           lerr.msg);
			emit(r->opts, MENV_ENV_WARNING, msg);
			free(msg);
		}
		if (rc)
			goto out;
		char *d = menv_xstrdup(rel);
		for (char *s = strrchr(d, '/'); s; s = strrchr(d, '/')) {
			*s = '\0';
			json_object_set_new(dirs, d, json_true());
		}
		free(d);
	}
	char *rel = menv_xasprintf("conda-meta/%s.json", dist);
	rc = menv_journal_move_aside(&r->txn, rel, err);
	free(rel);
	r->st.unlinked++;
out:
	free(pre);
	free(dist);
	return rc;
}

static int remove_empty_dirs(struct run *r, json_t *dirs, struct menv_error *err)
{
	const char *k;
	json_t *v;
	size_t n = 0, i = 0;
	const char **v2 = menv_xcalloc(json_object_size(dirs) + 1, sizeof(*v2));
	int rc = 0;

	json_object_foreach(dirs, k, v) v2[n++] = k;
	if (n)
		qsort(v2, n, sizeof(*v2), by_depth_desc);
	for (i = 0; i < n && !rc; i++) {
		if (!strcmp(v2[i], "conda-meta"))
			continue;
		if (menv_beneath_dir_empty(r->txn.rootfd, v2[i]))
			rc = menv_journal_rmdir(&r->txn, v2[i], err);
	}
	free(v2);
	return rc;
}

int menv_env_apply(const char *prefix, const struct menv_record *const *link, size_t nlink,
                   json_t *const *unlink, size_t nunlink, const struct menv_install_opts *opts,
                   struct menv_link_stats *stats, struct menv_error *err)
{
	struct run r = {.prefix = prefix, .opts = opts};
	struct menv_prefix_record *inst = NULL;
	struct menv_revision *revs = NULL;
	struct menv_strvec minus = MENV_STRVEC_INIT;
	struct menv_strmap hist = MENV_STRMAP_INIT;  /* dist -> its label in `labels` */
	struct menv_strset dists = MENV_STRSET_INIT; /* of the installed records */
	const char **labels = NULL;
	json_t *leaving = json_object(), *dirs = json_object();
	size_t ninst = 0, nrevs = 0;
	enum menv_recovery rec;
	bool began = false;
	int lock_fd = -1, rc;

	menv_journal_init(&r.txn, prefix);
	r.owners = json_object();
	if (!opts->locked) {
		rc = menv_env_lock(prefix, opts->no_wait, opts->cb, opts->ud, &lock_fd, err);
		if (rc)
			goto out;
	}
	rc = menv_env_recover(prefix, &rec, err);
	if (rc)
		goto out;
	if (rec != MENV_RECOVERY_NONE) {
		char *msg =
		        menv_xasprintf(rec == MENV_RECOVERY_FINISHED
		                               ? "finished an interrupted transaction in '%s'"
		                               : "rolled back an interrupted transaction in '%s'",
		                       prefix);
		emit(opts, MENV_ENV_RECOVERED, msg);
		free(msg);
	}
	if (opts->whole_env) {
		struct menv_strvec skipped = MENV_STRVEC_INIT;
		rc = menv_prefix_records_load_readable(prefix, &inst, &ninst, &skipped, err);
		menv_strvec_clear(&skipped);
	} else {
		rc = menv_prefix_records_load(prefix, &inst, &ninst, err);
	}
	if (rc)
		goto out;
	if (menv_history_load(prefix, &revs, &nrevs, NULL))
		nrevs = 0;
	history_labels(revs, nrevs, &hist, &labels);
	/* which installed records leave; the others own their files */
	for (size_t k = 0; k < ninst; k++) {
		char *dk = json_dist(inst[k].json);
		menv_strset_add(&dists, dk);
		free(dk);
	}
	for (size_t i = 0; i < nunlink; i++) {
		char *d = json_dist(unlink[i]);
		if (!menv_strset_has(&dists, d)) {
			rc = menv_error_set(err, MENV_ENOTFOUND,
			                    "'%s' is no longer installed in '%s' (another process "
			                    "changed the environment; run the command again)",
			                    d, prefix);
			free(d);
			goto out;
		}
		json_object_set_new(leaving, d, json_true());
		free(d);
	}
	for (size_t k = 0; k < ninst; k++) {
		char *dk = json_dist(inst[k].json);
		bool leaves = json_object_get(leaving, dk) != NULL;
		if (!leaves) {
			char *label = installed_label(inst[k].json, &hist, labels);
			size_t i;
			json_t *f;
			json_array_foreach(json_object_get(inst[k].json, "files"), i,
			                   f) if (json_is_string(f))
			        json_object_set_new(r.owners, json_string_value(f),
			                            json_string(label));
			free(label);
			if (!strcmp(inst[k].name, "python"))
				set_python(&r, inst[k].json, NULL);
		}
		free(dk);
	}
	for (size_t i = 0; i < nlink; i++)
		if (!strcmp(link[i]->name, "python"))
			set_python(&r, link[i]->json, link[i]);
	rc = check_all(&r, link, nlink, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < nunlink; i++)
		menv_strvec_push_owned(&minus, installed_label(unlink[i], &hist, labels));

	rc = menv_journal_begin(&r.txn, 'U', err);
	if (rc)
		goto out;
	began = true;
	for (size_t i = 0; i < nunlink && !rc; i++) {
		if (cancelled(opts))
			rc = menv_error_set(err, MENV_EINTR, "interrupted");
		else
			rc = unlink_one(&r, unlink[i], dirs, err);
	}
	if (!rc)
		rc = remove_empty_dirs(&r, dirs, err);
	if (rc)
		goto out;
	const char *pause = getenv("MENV_TEST_PAUSE_AFTER_UNLINK");
	if (pause) {
		for (long s = strtol(pause, NULL, 10) * 10; s > 0 && !cancelled(opts); s--)
			usleep(100000);
	}
	if (cancelled(opts)) {
		rc = menv_error_set(err, MENV_EINTR, "interrupted");
		goto out;
	}
	rc = link_all(&r, link, nlink, err);
	if (!rc)
		rc = write_records(&r, err);
	if (!rc)
		rc = write_history(&r, &minus, err);
	if (!rc)
		rc = post_link(&r, err);
	if (!rc && cancelled(opts))
		rc = menv_error_set(err, MENV_EINTR, "interrupted");
	if (!rc)
		rc = menv_journal_commit(&r.txn, err);
	if (!rc)
		show_messages(&r);
out:
	if (rc && began) {
		struct menv_error rerr = {0};
		if (menv_journal_rollback(&r.txn, &rerr))
			menv_error_prefix(err, "rolling back failed too (%s)", rerr.msg);
		else if (rc == MENV_EINTR)
			menv_error_set(err, MENV_EINTR,
			               "interrupted; '%s' was rolled back to its "
			               "previous state",
			               prefix);
		else
			add_note(err, "'%s' was rolled back to its previous state", prefix);
	}
	menv_env_unlock(lock_fd);
	if (stats)
		*stats = r.st;
	menv_strvec_clear(&minus);
	menv_strmap_clear(&hist);
	menv_strset_clear(&dists);
	free(labels);
	menv_history_free(revs, nrevs);
	menv_prefix_records_free(inst, ninst);
	json_decref(leaving);
	json_decref(dirs);
	run_release(&r);
	return rc;
}

int menv_env_remove(const char *prefix, const struct menv_install_opts *opts,
                    struct menv_link_stats *stats, struct menv_error *err)
{
	struct menv_prefix_record *inst = NULL;
	struct menv_install_opts o = *opts;
	json_t **all = NULL;
	size_t n = 0;
	int lock_fd = -1;
	int rc = 0;

	/* one lock from reading the records to removing the tree: nothing can change between */
	if (!o.locked) {
		rc = menv_env_lock(prefix, o.no_wait, o.cb, o.ud, &lock_fd, err);
		if (rc)
			return rc;
		o.locked = true;
	}
	o.whole_env = true;
	/* whatever the records hold: one that cannot be read goes with the prefix (the caller
	 * named it) */
	struct menv_strvec skipped = MENV_STRVEC_INIT;
	rc = menv_prefix_records_load_readable(prefix, &inst, &n, &skipped, err);
	menv_strvec_clear(&skipped);
	if (rc)
		goto out;
	all = menv_xcalloc(n + 1, sizeof(*all));
	for (size_t i = 0; i < n; i++)
		all[i] = inst[i].json;
	/* the commit point (intent.c): from here a kill is finished by the next command, which
	 * removes the whole prefix; `env list` no longer shows it */
	menv_crash_point();
	rc = cancelled(&o) ? MENV_EINTR : menv_intent_removing(prefix, err);
	if (rc)
		goto out;
	menv_crash_point();
	rc = cancelled(&o) ? MENV_EINTR : menv_env_apply(prefix, NULL, 0, all, n, &o, stats, err);
	if (rc) {
		/* rolled back (a pre-unlink script failed, Ctrl-C): the environment stays */
		char *mark = menv_xasprintf("%s/conda-meta/.menv-removing", prefix);
		unlink(mark);
		free(mark);
		goto out;
	}
	struct menv_error ignored = {0};
	menv_envreg_remove(prefix, &ignored);
	menv_crash_point();
	rc = menv_intent_remove_whole(prefix, err);
	/* Ctrl-C after every package was unlinked: the removal was finished, and says so */
	if (!rc && cancelled(&o))
		rc = menv_intent_late_cancel("its packages were unlinked", "removal", prefix, err);
out:
	if (rc == MENV_EINTR && !strchr(err ? err->msg : ";", ';'))
		menv_error_set(err, MENV_EINTR, "interrupted; '%s' was left as it was", prefix);
	menv_env_unlock(lock_fd);
	free(all);
	menv_prefix_records_free(inst, n);
	return rc;
}
