/*
 * channels.c - the channel list of a command (conda's order: -c channels, then the
 * environment file's, then .condarc's unless --override-channels or `nodefaults`; a
 * `channel::pkg` spec adds its channel) and its repodata, for every command that solves
 * (the transaction engine, `menv lock`, `menv search`); plus the pins of a solve and the
 * link settings (always_copy, always_softlink, allow_softlinks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

#include "fetch.h"
#include "prefix.h"
#include "solver.h"
#include "txn.h"

void menv_channel_set_release(struct menv_channel_set *l)
{
	for (size_t i = 0; i < l->nrds; i++)
		menv_repodata_free(l->rds[i]);
	for (size_t i = 0; i < l->nchans; i++)
		menv_channel_free(l->chans[i]);
	free(l->rds);
	free(l->chans);
	menv_strvec_clear(&l->paths);
	menv_strvec_clear(&l->solvs);
	free(l->path_chans);
	free(l->path_subdirs);
	memset(l, 0, sizeof(*l));
}

/* Finds or adds the channel with this base URL; returns it (borrowed). */
static struct menv_channel *add_channel(struct menv_channel_set *l, struct menv_channel *c)
{
	for (size_t i = 0; i < l->nchans; i++) {
		if (!strcmp(l->chans[i]->base_url, c->base_url)) {
			menv_channel_free(c);
			return l->chans[i];
		}
	}
	l->chans = menv_xrealloc(l->chans, (l->nchans + 1) * sizeof(*l->chans));
	l->chans[l->nchans++] = c;
	return c;
}

/* Loads <subdir> and noarch of every channel: cached as conda does in <pkgs>/cache (HTTP
 * semantics, .zst, offline), sharded (CEP-16) where every subdir serves shards and every spec
 * names a package. Subdirs whose JSON is in the cache go to the solver as files (libsolv's
 * reader and a .solv beside them); the others (shards) are parsed here. */
static int load_repodata(struct menv_channel_set *l, const struct menv_config *cfg,
                         struct menv_matchspec *const *specs, size_t nspecs, volatile int *cancel,
                         menv_env_cb cb, void *ud, struct menv_error *err)
{
	const char *subdirs[2] = {cfg->subdir, "noarch"};
	struct menv_fetch_opts fo;
	struct menv_strvec roots = MENV_STRVEC_INIT;
	struct menv_strset roots_seen = MENV_STRSET_INIT;
	size_t n = l->nchans * 2;
	struct menv_repodata_req *reqs = menv_xcalloc(n + 1, sizeof(*reqs));
	char *cache = menv_xasprintf("%s/cache", cfg->pkgs_dir);
	bool sharded = cfg->repodata_use_shards && nspecs > 0;
	int rc = 0;

	menv_fetch_opts_from_config(&fo, cfg);
	fo.cache_dir = cache;
	/* the .solv files of file:// channels go there too (best effort: none is only slower) */
	for (char *p = cache + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(cache, menv_dir_mode());
			*p = '/';
		}
	}
	mkdir(cache, menv_dir_mode());
	fo.cancel = cancel;
	fo.repodata_as_file = true;       /* the solver reads the file itself: no copy in memory */
	fo.offline_uncached_empty = true; /* conda's fetch_latest offline: an empty channel */
	for (size_t i = 0; i < l->nchans; i++) {
		/* shards are read from a channel's own URL: not for mirrors or oci:// */
		if (l->chans[i]->mirrors.n || menv_oci_is_url(l->chans[i]->base_url))
			sharded = false;
		l->chans[i]->priority = (int)(l->nchans - i);
		for (int k = 0; k < 2; k++) {
			reqs[2 * i + (size_t)k].channel = l->chans[i];
			reqs[2 * i + (size_t)k].subdir = subdirs[k];
		}
	}
	for (size_t i = 0; i < nspecs && sharded; i++) {
		const char *name = specs[i]->name;
		if (!name || strpbrk(name, "*?["))
			sharded = false;
		else
			menv_strvec_push_unique(&roots, &roots_seen, name);
	}
	if (sharded) {
		rc = menv_fetch_repodata_sharded(reqs, n, &roots, &fo, err);
		if (rc == MENV_EINTR)
			goto out;
		if (rc) /* some subdir has no shards (or they failed): full repodata for all */
			sharded = false;
	}
	if (!sharded) {
		for (size_t i = 0; i < n; i++)
			menv_repodata_req_release(&reqs[i]);
		rc = menv_fetch_repodata_many(reqs, n, &fo, err);
		if (rc)
			goto out;
	}
	l->rds = menv_xcalloc(n + 1, sizeof(*l->rds));
	l->path_chans = menv_xcalloc(n + 1, sizeof(*l->path_chans));
	l->path_subdirs = menv_xcalloc(n + 1, sizeof(*l->path_subdirs));
	for (size_t i = 0; i < n; i++) {
		struct menv_repodata_req *r = &reqs[i];
		if (!sharded && !r->missing && !r->offline_empty) {
			/* the same bytes as a file: the cached copy, or a file:// channel's own
			 * repodata.json; its .solv goes to the cache either way */
			char *url = menv_channel_subdir_url(r->channel, r->subdir, true);
			char *name = menv_repodata_cache_name(url);
			char *path = !strncmp(url, "file://", 7)
			                     ? menv_xasprintf("%s/repodata.json", url + 7)
			                     : menv_xasprintf("%s/%s", cache, name);
			char *solv = menv_xasprintf("%s/%.*s.solv", cache,
			                            (int)(strlen(name) - strlen(".json")), name);
			struct stat st;
			free(url);
			free(name);
			if (r->path) {
				/* the file fetch/ named (a file:// subdir's own, or the cache's) */
				free(path);
				path = menv_xstrdup(r->path);
			}
			if (r->path ||
			    (stat(path, &st) == 0 && (size_t)st.st_size == r->json.len)) {
				l->path_chans[l->paths.n] = r->channel;
				l->path_subdirs[l->paths.n] = r->subdir;
				menv_strvec_push_owned(&l->paths, path);
				menv_strvec_push_owned(&l->solvs, solv);
				continue;
			}
			free(path);
			free(solv);
		}
		rc = menv_repodata_parse(r->json.buf, r->json.len, r->url, r->channel, r->subdir,
		                         &l->rds[l->nrds], err);
		if (rc)
			goto out;
		l->nrds++;
	}
	for (size_t i = 0; cb && i < n; i++) {
		/* conda says this at debug level only; an empty channel deserves a line */
		const struct menv_repodata_req *r = &reqs[i], *o = &reqs[i ^ 1];
		char *line;
		if (!r->offline_empty || (o->offline_empty && i % 2))
			continue;
		line = o->offline_empty ? menv_xasprintf("offline: channel '%s' has no cached "
		                                         "repodata: read as empty, as conda does",
		                                         r->channel->name)
		                        : menv_xasprintf("offline: no cached repodata for '%s': "
		                                         "read as empty, as conda does",
		                                         r->url);
		cb(ud, MENV_ENV_WARNING, line);
		free(line);
	}
	for (size_t i = 0; cb && i < l->nchans; i++) {
		char *line = menv_xasprintf("  channel %s%s", l->chans[i]->name,
		                            sharded                    ? " (sharded)"
		                            : reqs[2 * i].from_cache   ? " (cached)"
		                            : reqs[2 * i].not_modified ? " (not modified)"
		                                                       : "");
		cb(ud, MENV_ENV_STATUS, line);
		free(line);
	}
out:
	for (size_t i = 0; i < n; i++)
		menv_repodata_req_release(&reqs[i]);
	free(reqs);
	free(cache);
	menv_strvec_clear(&roots);
	menv_strset_clear(&roots_seen);
	return rc;
}

int menv_channel_set_to_solver(const struct menv_channel_set *l, struct menv_solver *s,
                               struct menv_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < l->nrds; i++)
		menv_solver_add_repodata(s, l->rds[i]);
	for (size_t i = 0; i < l->paths.n && !rc; i++)
		rc = menv_solver_add_repodata_file(s, l->path_chans[i], l->path_subdirs[i],
		                                   l->paths.v[i], l->solvs.v[i], err);
	return rc;
}

int menv_channel_set_load(const struct menv_config *cfg, const struct menv_strvec *cli_channels,
                          const struct menv_strvec *file_channels, bool override_channels,
                          struct menv_matchspec **specs, size_t nspecs, volatile int *cancel,
                          menv_env_cb cb, void *ud, struct menv_channel_set *out,
                          struct menv_error *err)
{
	struct menv_strvec user = MENV_STRVEC_INIT, names = MENV_STRVEC_INIT;
	bool nodefaults = override_channels;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; cli_channels && i < cli_channels->n; i++)
		menv_strvec_push(&user, cli_channels->v[i]);
	for (size_t i = 0; file_channels && i < file_channels->n; i++)
		menv_strvec_push(&user, file_channels->v[i]);
	if (file_channels && menv_strvec_contains(file_channels, "nodefaults"))
		nodefaults = true;
	if (!nodefaults)
		for (size_t i = 0; i < cfg->channels.n; i++)
			menv_strvec_push(&user, cfg->channels.v[i]);
	if (!nodefaults && !cfg->channels.n)
		menv_strvec_push(&user, "defaults");
	menv_channels_expand(&user, cfg, &names);
	for (size_t i = 0; i < names.n; i++) {
		struct menv_channel *ch;
		rc = menv_channel_parse(names.v[i], cfg, &ch, err);
		if (rc)
			goto out;
		add_channel(out, ch);
	}
	/* a `channel::pkg` spec loads its channel even when it is not listed (BR-005) */
	for (size_t i = 0; i < nspecs; i++) {
		struct menv_channel *ch;
		if (!specs[i]->channel)
			continue;
		rc = menv_channel_parse(specs[i]->channel, cfg, &ch, err);
		if (rc)
			goto out;
		ch = add_channel(out, ch);
		free(specs[i]->channel);
		specs[i]->channel = menv_xstrdup(ch->base_url);
	}
	if (!out->nchans)
		goto out;
	if (cb) {
		char *line = menv_xasprintf("Reading repodata for %s", cfg->subdir);
		cb(ud, MENV_ENV_STATUS, line);
		free(line);
	}
	rc = load_repodata(out, cfg, specs, nspecs, cancel, cb, ud, err);
out:
	menv_strvec_clear(&user);
	menv_strvec_clear(&names);
	return rc;
}

void menv_install_opts_link_settings(const struct menv_config *cfg, struct menv_install_opts *io)
{
	/* .condarc's keys; MENV_/CONDA_ variables of the same names are applied by the config */
	io->link_mode = cfg->always_copy       ? MENV_LINK_COPY
	                : cfg->always_softlink ? MENV_LINK_SOFTLINK
	                                       : MENV_LINK_AUTO;
	io->allow_softlinks = cfg->allow_softlinks;
	io->add_pip = cfg->add_pip_as_python_dependency;
	io->pkgs_dirs = &cfg->pkgs_dirs;
}

int menv_pins_load(const struct menv_config *cfg, const char *prefix, struct menv_matchspec ***pins,
                   size_t *n, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	char *path = prefix ? menv_xasprintf("%s/conda-meta/pinned", prefix) : NULL;
	int rc = 0;

	*pins = NULL;
	*n = 0;
	for (size_t i = 0; i < cfg->pinned_packages.n && !rc; i++) {
		struct menv_matchspec *ms;
		rc = menv_matchspec_parse(cfg->pinned_packages.v[i], &ms, err);
		if (rc) {
			menv_error_prefix(err, "pinned_packages");
			break;
		}
		*pins = menv_xrealloc(*pins, (*n + 1) * sizeof(**pins));
		(*pins)[(*n)++] = ms;
	}
	if (rc || !path || menv_buf_read_file(&b, path, NULL))
		goto out;
	char *save = NULL;
	for (char *line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		struct menv_matchspec *ms;
		rc = menv_matchspec_parse(line, &ms, err);
		if (rc) {
			menv_error_prefix(err, "%s", path);
			goto out;
		}
		*pins = menv_xrealloc(*pins, (*n + 1) * sizeof(**pins));
		(*pins)[(*n)++] = ms;
	}
out:
	menv_buf_release(&b);
	free(path);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Queries over channels (`menv search`, `menv repoquery`)                                   */

struct menv_query {
	struct menv_channel_set ch;
	struct menv_solver *solver;
};

int menv_query_open(const struct menv_config *cfg, const struct menv_strvec *channels,
                    bool override_channels, struct menv_matchspec *ms, volatile int *cancel,
                    struct menv_query **out, struct menv_error *err)
{
	struct menv_query *q = menv_xcalloc(1, sizeof(*q));
	int rc = menv_channel_set_load(cfg, channels, NULL, override_channels, &ms, 1, cancel, NULL,
	                               NULL, &q->ch, err);
	if (!rc && !q->ch.nchans)
		rc = menv_error_set(err, MENV_EUSAGE,
		                    "no channels: give -c CHANNEL or list channels in .condarc");
	if (!rc) {
		q->solver = menv_solver_new(cfg->subdir, cfg->channel_priority);
		rc = menv_channel_set_to_solver(&q->ch, q->solver, err);
	}
	if (rc) {
		menv_query_free(q);
		q = NULL;
	}
	*out = q;
	return rc;
}

int menv_query_search(struct menv_query *q, const struct menv_matchspec *ms,
                      const struct menv_record ***out, size_t *n, struct menv_error *err)
{
	return menv_solver_search(q->solver, ms, out, n, err);
}

int menv_query_find(struct menv_query *q, const struct menv_matchspec *ms, const char *spec,
                    const struct menv_record ***out, size_t *n, struct menv_error *err)
{
	int rc = menv_solver_search(q->solver, ms, out, n, err);
	if (!rc && !*n)
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "no package matches '%s' in the current channels", spec);
	return rc;
}

int menv_query_whoneeds(struct menv_query *q, const char *name, const struct menv_record ***out,
                        size_t *n, struct menv_error *err)
{
	return menv_solver_whoneeds(q->solver, name, out, n, err);
}

void menv_query_free(struct menv_query *q)
{
	if (!q)
		return;
	menv_solver_free(q->solver);
	menv_channel_set_release(&q->ch);
	free(q);
}

int menv_env_whoneeds(const char *prefix, const char *name, json_t **out, struct menv_buf *text,
                      struct menv_error *err)
{
	struct menv_prefix_record *pr = NULL;
	size_t np = 0, nl = strlen(name);
	int rc = menv_prefix_records_load(prefix, &pr, &np, err);

	*out = json_array();
	if (text && !rc)
		menv_buf_addf(text, "%-28s %-16s %-28s %s\n", "# Name", "Version", "Build",
		              "Depends on");
	for (size_t i = 0; !rc && i < np; i++) {
		json_t *deps = json_object_get(pr[i].json, "depends"), *d;
		size_t k;
		json_array_foreach(deps, k, d)
		{
			const char *ds = json_string_value(d);
			size_t l = ds ? strcspn(ds, " =<>!~[") : 0;
			if (ds && l == nl && !strncmp(ds, name, l)) {
				json_array_append_new(*out, json_pack("{s:s,s:s,s:s,s:s}", "name",
				                                      pr[i].name, "version",
				                                      pr[i].version, "build",
				                                      pr[i].build, "depends", ds));
				if (text)
					menv_buf_addf(text, "%-28s %-16s %-28s %s\n", pr[i].name,
					              pr[i].version, pr[i].build, ds);
				break;
			}
		}
	}
	menv_prefix_records_free(pr, np);
	return rc;
}

/* depends --tree: each dependency's newest matching record, recursively, each name once. */
void menv_query_tree(struct menv_query *s, const struct menv_record *r, int depth,
                     struct menv_strset *seen, struct menv_strvec *lines)
{
	bool first = menv_strset_add(seen, r->name);
	menv_strvec_push_owned(lines, menv_xasprintf("%*s%s%s %s %s%s", depth * 2, "",
	                                             depth ? "└─ " : "", r->name, r->version,
	                                             r->build, first ? "" : " (shown above)"));
	if (!first)
		return;
	json_t *deps = menv_record_depends(r), *d;
	size_t i;
	json_array_foreach(deps, i, d)
	{
		struct menv_matchspec *ms = NULL;
		struct menv_error err;
		const struct menv_record **m = NULL;
		size_t n = 0;
		if (!json_is_string(d) || menv_matchspec_parse(json_string_value(d), &ms, &err))
			continue;
		bool found = !menv_query_search(s, ms, &m, &n, &err) && n;
		if (found && depth + 1 > MENV_QUERY_TREE_DEPTH)
			/* a recursion a level: a chain of thousands ran past the stack (SIGSEGV) */
			menv_strvec_push_owned(
			        lines, menv_xasprintf("%*s└─ %s ... (deeper than %d levels: "
			                              "not shown)",
			                              (depth + 1) * 2, "", m[0]->name,
			                              MENV_QUERY_TREE_DEPTH));
		else if (found)
			menv_query_tree(s, m[0], depth + 1, seen, lines);
		else
			menv_strvec_push_owned(
			        lines, menv_xasprintf("%*s└─ %s (not in the channels)",
			                              (depth + 1) * 2, "", json_string_value(d)));
		free(m);
		menv_matchspec_free(ms);
	}
}
