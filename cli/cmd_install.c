/*
 * cmd_install.c - changing an existing environment: `menv install`, `menv remove`,
 * `menv update [--all]`, `menv env update -f FILE [--prune]`, `menv install --revision N`,
 * and `menv list --revisions`. Each reads the prefix's PrefixRecords, solves a request
 * against them (menv_solver_solve_request), prints the transaction like conda (or conda's
 * JSON with LINK and UNLINK), fetches what is new, and applies it as one journaled
 * transaction (menv_env_apply): unlink before link, rolled back on any failure.
 */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "envs.h"
#include "fetch.h"
#include "solver.h"

enum kind { K_INSTALL, K_REMOVE, K_UPDATE, K_ENV_UPDATE };

struct chg_opts {
	enum kind kind;
	const char *name, *prefix, *file;
	struct menv_strvec channels;
	struct menv_strvec specs;
	bool override_channels, dry_run, json, quiet, no_wait, all, prune, verbose;
	bool no_smoke; /* --no-smoke-check */
	bool has_revision;
	long revision;
	int priority; /* 0: from the settings, 1: --strict-channel-priority, 2: --no-channel-priority */
	/* menv-solve: conda's update/deps modifiers (--freeze-installed ... --only-deps) and
	 * remove --force, carried into struct menv_solve_request */
	bool freeze_installed, no_update_deps, update_deps, update_specs, update_all;
	bool force_reinstall, no_deps, only_deps, force, satisfied_skip_solve;
};

static const char *const usages[] = {
        [K_INSTALL] = "usage: menv install [-n NAME | -p PREFIX] [-c CHANNEL]... "
                      "[--override-channels]\n"
                      "                    [--strict-channel-priority | --no-channel-priority]\n"
                      "                    [--freeze-installed | --update-deps | --update-specs |\n"
                      "                     --update-all | --satisfied-skip-solve]\n"
                      "                    [--no-deps | --only-deps] [--force-reinstall]\n"
                      "                    [--dry-run] [--json] [-q] [-y] [--no-wait] SPEC...\n"
                      "       menv install [-n NAME | -p PREFIX] --revision N\n"
                      "       menv install [-n NAME | -p PREFIX] [--dry-run] [--json] -f "
                      "LOCKFILE\n",
        [K_REMOVE] = "usage: menv remove [-n NAME | -p PREFIX] [--force] [--dry-run] [--json] [-q] "
                     "[-y] [--no-wait]\n"
                     "                   (NAME... | --all)\n",
        [K_UPDATE] = "usage: menv update [-n NAME | -p PREFIX] [-c CHANNEL]... "
                     "[--override-channels]\n"
                     "                   [--strict-channel-priority | --no-channel-priority]\n"
                     "                   [--dry-run] [--json] [-q] [-y] [--no-wait] (NAME... | "
                     "--all)\n",
        [K_ENV_UPDATE] = "usage: menv env update -f environment.yml [-n NAME | -p PREFIX] "
                         "[--prune]\n"
                         "                       [--dry-run] [--json] [-q] [-y] [--no-wait]\n",
};

static int parse(int argc, char **argv, struct chg_opts *o)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'},
	        {"prefix", required_argument, NULL, 'p'},
	        {"file", required_argument, NULL, 'f'},
	        {"channel", required_argument, NULL, 'c'},
	        {"override-channels", no_argument, NULL, 'O'},
	        {"strict-channel-priority", no_argument, NULL, 'S'},
	        {"no-channel-priority", no_argument, NULL, 'N'},
	        {"dry-run", no_argument, NULL, 'd'},
	        {"json", no_argument, NULL, 'j'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"verbose", no_argument, NULL, 'v'},
	        {"yes", no_argument, NULL, 'y'},
	        {"no-wait", no_argument, NULL, 'W'},
	        {"no-smoke-check", no_argument, NULL, 'K'},
	        {"all", no_argument, NULL, 'a'},
	        {"prune", no_argument, NULL, 'P'},
	        {"revision", required_argument, NULL, 'r'},
	        /* menv-solve: conda's update and deps modifiers */
	        {"freeze-installed", no_argument, NULL, 'Z'},
	        {"no-update-deps", no_argument, NULL, 'X'},
	        {"update-deps", no_argument, NULL, 'U'},
	        {"update-specs", no_argument, NULL, 'E'},
	        {"update-all", no_argument, NULL, 'A'},
	        {"force-reinstall", no_argument, NULL, 'R'},
	        {"no-deps", no_argument, NULL, 'D'},
	        {"only-deps", no_argument, NULL, 'L'},
	        {"force", no_argument, NULL, 'G'},
	        {"satisfied-skip-solve", no_argument, NULL, 'T'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:p:f:c:dqvyh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->name = optarg; break;
		case 'p': o->prefix = optarg; break;
		case 'f': o->file = optarg; break;
		case 'c': menv_strvec_push(&o->channels, optarg); break;
		case 'O': o->override_channels = true; break;
		case 'S': o->priority = 1; break;
		case 'N': o->priority = 2; break;
		case 'd': o->dry_run = true; break;
		case 'j':
			o->json = true;
			o->quiet = true;
			break;
		case 'q': o->quiet = true; break;
		case 'v': o->verbose = true; break;
		case 'y': break;
		case 'W': o->no_wait = true; break;
		case 'K': o->no_smoke = true; break;
		case 'a': o->all = true; break;
		case 'P': o->prune = true; break;
		case 'r':
			o->revision = strtol(optarg, &end, 10);
			if (*end || o->revision < 0) {
				fprintf(stderr, "menv: error: invalid revision '%s'\n", optarg);
				return -1;
			}
			o->has_revision = true;
			break;
		/* menv-solve */
		case 'Z': o->freeze_installed = true; break;
		case 'X': o->no_update_deps = true; break;
		case 'U': o->update_deps = true; break;
		case 'E': o->update_specs = true; break;
		case 'A': o->update_all = true; break;
		case 'R': o->force_reinstall = true; break;
		case 'D': o->no_deps = true; break;
		case 'L': o->only_deps = true; break;
		case 'G': o->force = true; break;
		case 'T': o->satisfied_skip_solve = true; break;
		case 'h': printf("%s", usages[o->kind]); return 1;
		default: fprintf(stderr, "%s", usages[o->kind]); return -1;
		}
	}
	for (int i = optind; i < argc; i++)
		menv_strvec_push(&o->specs, argv[i]);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Rendering                                                                                 */

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : "";
}

static json_t *unlink_json(json_t *rec)
{
	json_t *o = json_object();
	json_t *bn = json_object_get(rec, "build_number");
	char *dist = menv_xasprintf("%s-%s-%s", jstr(rec, "name"), jstr(rec, "version"),
	                            jstr(rec, "build"));
	json_object_set_new(o, "name", json_string(jstr(rec, "name")));
	json_object_set_new(o, "version", json_string(jstr(rec, "version")));
	json_object_set_new(o, "build_string", json_string(jstr(rec, "build")));
	json_object_set_new(o, "build_number",
	                    json_integer(json_is_integer(bn) ? json_integer_value(bn) : 0));
	json_object_set_new(o, "channel", json_string(jstr(rec, "channel")));
	json_object_set_new(o, "subdir", json_string(jstr(rec, "subdir")));
	json_object_set_new(o, "platform", json_string(jstr(rec, "subdir")));
	json_object_set_new(o, "dist_name", json_string(dist));
	free(dist);
	return o;
}

static int cmp_versions(const char *a, const char *b)
{
	struct menv_version *va = NULL, *vb = NULL;
	int c = 0;
	if (menv_version_parse(a, &va, NULL) == 0 && menv_version_parse(b, &vb, NULL) == 0)
		c = menv_version_cmp(va, vb);
	else
		c = strcmp(a, b);
	menv_version_free(va);
	menv_version_free(vb);
	return c;
}

static json_t *find_unlink_named(json_t *const *unlink, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(jstr(unlink[i], "name"), name))
			return unlink[i];
	return NULL;
}

static bool links_name(const struct menv_record *const *link, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(link[i]->name, name))
			return true;
	return false;
}

static void print_plan(const char *prefix, const struct menv_record *const *link, size_t nlink,
                       json_t *const *unlink, size_t nunlink)
{
	size_t nrem = 0, nchg = 0, nadd = 0;

	printf("\nTransaction\n\n  Prefix: %s\n\n", prefix);
	if (!nlink && !nunlink) {
		printf("  All requested packages already installed.\n\n");
		return;
	}
	for (size_t i = 0; i < nunlink; i++)
		if (!links_name(link, nlink, jstr(unlink[i], "name")))
			nrem++;
	for (size_t i = 0; i < nlink; i++) {
		if (find_unlink_named(unlink, nunlink, link[i]->name))
			nchg++;
		else
			nadd++;
	}
	if (nrem) {
		printf("  Remove (%zu package%s):\n\n", nrem, nrem == 1 ? "" : "s");
		for (size_t i = 0; i < nunlink; i++)
			if (!links_name(link, nlink, jstr(unlink[i], "name")))
				printf("  - %-26s %-16s %-26s\n", jstr(unlink[i], "name"),
				       jstr(unlink[i], "version"), jstr(unlink[i], "build"));
		printf("\n");
	}
	if (nchg) {
		printf("  Change (%zu package%s):\n\n", nchg, nchg == 1 ? "" : "s");
		for (size_t i = 0; i < nlink; i++) {
			json_t *u = find_unlink_named(unlink, nunlink, link[i]->name);
			if (!u)
				continue;
			int c = cmp_versions(link[i]->version, jstr(u, "version"));
			printf("  %s %-26s %s-%s -> %s-%s (%s)\n",
			       c > 0   ? "^"
			       : c < 0 ? "v"
			               : "~",
			       link[i]->name, jstr(u, "version"), jstr(u, "build"),
			       link[i]->version, link[i]->build,
			       c > 0   ? "upgrade"
			       : c < 0 ? "downgrade"
			       : !strcmp(link[i]->build, jstr(u, "build"))
			               ? "relink"
			               : "reinstall or rebuild");
		}
		printf("\n");
	}
	if (nadd) {
		printf("  Install (%zu package%s):\n\n", nadd, nadd == 1 ? "" : "s");
		for (size_t i = 0; i < nlink; i++)
			if (!find_unlink_named(unlink, nunlink, link[i]->name))
				printf("  + %-26s %-16s %-26s %s\n", link[i]->name,
				       link[i]->version, link[i]->build,
				       link[i]->channel ? link[i]->channel->name : "");
		printf("\n");
	}
}

static void print_json(const char *prefix, const struct menv_record *const *link, size_t nlink,
                       json_t *const *unlink, size_t nunlink, bool dry_run, json_t *messages)
{
	json_t *root = json_object(), *actions = json_object();
	json_t *jl = json_array(), *ju = json_array(), *jf = json_array();
	for (size_t i = 0; i < nlink; i++) {
		json_array_append_new(jl, menv_cli_record_json(link[i]));
		json_array_append_new(jf, menv_cli_record_json(link[i]));
	}
	for (size_t i = 0; i < nunlink; i++)
		json_array_append_new(ju, unlink_json(unlink[i]));
	json_object_set_new(actions, "LINK", jl);
	json_object_set_new(actions, "UNLINK", ju);
	json_object_set_new(actions, "FETCH", jf);
	json_object_set_new(actions, "PREFIX", json_string(prefix));
	json_object_set_new(root, "actions", actions);
	json_object_set_new(root, "prefix", json_string(prefix));
	json_object_set_new(root, "dry_run", json_boolean(dry_run));
	json_object_set_new(root, "success", json_true());
	if (!nlink && !nunlink)
		json_object_set_new(root, "message",
		                    json_string("All requested packages already installed."));
	if (messages && json_array_size(messages))
		json_object_set(root, "messages", messages);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("%s\n", s);
	free(s);
	json_decref(root);
}

/* ---------------------------------------------------------------------------------------- */
/* Requests                                                                                  */

/* conda-meta/pinned: one MatchSpec a line (# comments). */

/* The name a dependency spec names ("python >=3.8" -> "python"). Caller frees. */
static char *dep_name(const char *dep)
{
	const char *s = strstr(dep, "::");
	s = s ? s + 2 : dep;
	while (*s == ' ')
		s++;
	return menv_xstrndup(s, strcspn(s, " =<>!~[;"));
}

/* --prune: keeps only what the file's specs need (its closure over depends); appends the
 * installed records that are no longer needed to `*unlink` and drops unneeded links. */
static void prune(struct menv_matchspec **specs, size_t nspecs, struct menv_prefix_record *inst,
                  size_t ninst, struct menv_transaction *t, json_t ***unlink, size_t *nunlink)
{
	json_t *final = json_object(); /* name -> depends array */
	json_t *need = json_object();
	struct menv_strvec queue = MENV_STRVEC_INIT;

	for (size_t i = 0; i < ninst; i++) {
		bool leaving = false;
		for (size_t k = 0; k < t->nunlink && !leaving; k++)
			leaving = t->unlink[k] == inst[i].json;
		if (!leaving)
			json_object_set(final, inst[i].name,
			                json_object_get(inst[i].json, "depends"));
	}
	for (size_t i = 0; i < t->nlink; i++)
		json_object_set(final, t->link[i]->name, menv_record_depends(t->link[i]));
	for (size_t i = 0; i < nspecs; i++)
		if (specs[i]->name)
			menv_strvec_push(&queue, specs[i]->name);
	for (size_t q = 0; q < queue.n; q++) {
		const char *nm = queue.v[q];
		if (json_object_get(need, nm) || !json_object_get(final, nm))
			continue;
		json_object_set_new(need, nm, json_true());
		size_t k;
		json_t *d;
		json_array_foreach(json_object_get(final, nm), k, d)
		{
			if (json_is_string(d))
				menv_strvec_push_owned(&queue, dep_name(json_string_value(d)));
		}
	}
	*unlink = menv_xcalloc(t->nunlink + ninst + 1, sizeof(**unlink));
	*nunlink = 0;
	for (size_t i = 0; i < t->nunlink; i++)
		(*unlink)[(*nunlink)++] = t->unlink[i];
	for (size_t i = 0; i < ninst; i++) {
		bool leaving = false;
		for (size_t k = 0; k < t->nunlink && !leaving; k++)
			leaving = t->unlink[k] == inst[i].json;
		if (!leaving && !json_object_get(need, inst[i].name))
			(*unlink)[(*nunlink)++] = inst[i].json;
	}
	size_t w = 0;
	for (size_t i = 0; i < t->nlink; i++)
		if (json_object_get(need, t->link[i]->name))
			t->link[w++] = t->link[i];
	t->nlink = w;
	menv_strvec_clear(&queue);
	json_decref(need);
	json_decref(final);
}

static const char *dist_of_label(const char *label)
{
	const char *cc = strstr(label, "::");
	return cc ? cc + 2 : label;
}

/* Records kept alive for --revision (from the package cache). */
struct owned_recs {
	struct menv_record *v;
	size_t n;
};

static void owned_recs_release(struct owned_recs *o)
{
	for (size_t i = 0; i < o->n; i++)
		menv_record_release(&o->v[i]);
	free(o->v);
	memset(o, 0, sizeof(*o));
}

/* Orders records so that each comes after the records of the same set it depends on. */
static void toposort(const struct menv_record **recs, size_t n)
{
	const struct menv_record **out = menv_xcalloc(n + 1, sizeof(*out));
	bool *done = menv_xcalloc(n + 1, sizeof(*done));
	size_t k = 0;

	while (k < n) {
		size_t before = k;
		for (size_t i = 0; i < n; i++) {
			if (done[i])
				continue;
			bool ready = true;
			size_t j;
			json_t *d;
			json_array_foreach(menv_record_depends(recs[i]), j, d)
			{
				char *dn =
				        json_is_string(d) ? dep_name(json_string_value(d)) : NULL;
				for (size_t m = 0; dn && m < n && ready; m++)
					if (m != i && !done[m] && !strcmp(recs[m]->name, dn))
						ready = false;
				free(dn);
			}
			if (ready) {
				done[i] = true;
				out[k++] = recs[i];
			}
		}
		if (k == before) { /* a cycle: the rest in their order */
			for (size_t i = 0; i < n; i++)
				if (!done[i]) {
					done[i] = true;
					out[k++] = recs[i];
				}
		}
	}
	memcpy(recs, out, n * sizeof(*recs));
	free(out);
	free(done);
}

/* --revision N: the records to link and unlink to get back to revision N's packages. */
static int revision_plan(const char *prefix, const struct menv_config *cfg, size_t rev,
                         const struct menv_cli_channels *ch, struct menv_prefix_record *inst,
                         size_t ninst, struct owned_recs *owned, struct menv_transaction *t,
                         struct menv_error *err)
{
	struct menv_revision *revs = NULL;
	struct menv_strvec target = MENV_STRVEC_INIT;
	size_t nrevs = 0;
	int rc = menv_history_load(prefix, &revs, &nrevs, err);

	if (!rc)
		rc = menv_history_state(revs, nrevs, rev, &target, err);
	if (rc)
		goto out;
	t->link = menv_xcalloc(target.n + 1, sizeof(*t->link));
	t->unlink = menv_xcalloc(ninst + 1, sizeof(*t->unlink));
	owned->v = menv_xcalloc(target.n + 1, sizeof(*owned->v));
	for (size_t i = 0; i < ninst; i++) {
		char *d = menv_xasprintf("%s-%s-%s", inst[i].name, inst[i].version, inst[i].build);
		bool keep = false;
		for (size_t k = 0; k < target.n && !keep; k++)
			keep = !strcmp(dist_of_label(target.v[k]), d);
		if (!keep)
			t->unlink[t->nunlink++] = inst[i].json;
		free(d);
	}
	for (size_t k = 0; k < target.n; k++) {
		const char *want = dist_of_label(target.v[k]);
		bool have = false;
		for (size_t i = 0; i < ninst && !have; i++) {
			char *d = menv_xasprintf("%s-%s-%s", inst[i].name, inst[i].version,
			                         inst[i].build);
			have = !strcmp(d, want);
			free(d);
		}
		if (have)
			continue;
		const struct menv_record *found = NULL;
		for (size_t r = 0; r < ch->nrds && !found; r++) {
			for (size_t j = 0; j < ch->rds[r]->n && !found; j++) {
				char *d = menv_record_dist(&ch->rds[r]->recs[j]);
				if (!strcmp(d, want))
					found = &ch->rds[r]->recs[j];
				free(d);
			}
		}
		if (!found) {
			/* the package cache still has it */
			char *p = menv_xasprintf("%s/%s/info/repodata_record.json", cfg->pkgs_dir,
			                         want);
			json_t *j = json_load_file(p, 0, NULL);
			free(p);
			const char *url = j ? jstr(j, "url") : "";
			const char *fn = j ? jstr(j, "fn") : "";
			if (j && *fn) {
				char *base = menv_xstrdup(url);
				char *slash = strrchr(base, '/');
				if (slash)
					*slash = '\0';
				struct menv_record *nr = &owned->v[owned->n];
				if (menv_record_from_json(nr, j, fn, base, NULL, NULL) == 0) {
					owned->n++;
					found = nr;
				}
				free(base);
			}
			json_decref(j);
		}
		if (!found) {
			rc = menv_error_set(
			        err, MENV_ENOTFOUND,
			        "'%s' of revision %zu is in neither the channels nor the "
			        "package cache",
			        want, rev);
			goto out;
		}
		t->link[t->nlink++] = found;
	}
	toposort(t->link, t->nlink);
out:
	menv_strvec_clear(&target);
	menv_history_free(revs, nrevs);
	return rc;
}

/* "3.10.4" -> "3.10" in out (at most outlen bytes). */
static void minor_of(const char *version, char *out, size_t outlen)
{
	const char *dot = strchr(version, '.');
	const char *end = dot ? strchr(dot + 1, '.') : NULL;
	size_t n = end ? (size_t)(end - version) : strlen(version);
	snprintf(out, outlen, "%.*s", (int)n, version);
}

static bool json_noarch_python(json_t *rec)
{
	json_t *v = json_object_get(rec, "noarch");
	return (json_is_string(v) && !strcmp(json_string_value(v), "python")) ||
	       json_is_true(json_object_get(rec, "noarch_python"));
}

/* A record to link again from an installed PrefixRecord (its url, fn, hashes and depends;
 * the install locations dropped). False when the PrefixRecord lacks its url or fn. */
static bool record_from_installed(json_t *rec, struct menv_record *out)
{
	const char *url = jstr(rec, "url"), *fn = jstr(rec, "fn");
	static const char *const drop[] = {"files",
	                                   "paths_data",
	                                   "link",
	                                   "extracted_package_dir",
	                                   "package_tarball_full_path",
	                                   "requested_spec",
	                                   "requested_specs"};
	if (!*url || !*fn)
		return false;
	json_t *copy = json_deep_copy(rec);
	for (size_t k = 0; k < sizeof(drop) / sizeof(*drop); k++)
		json_object_del(copy, drop[k]);
	char *base = menv_xstrdup(url);
	char *slash = strrchr(base, '/');
	if (slash)
		*slash = '\0';
	bool ok = menv_record_from_json(out, copy, fn, base, NULL, NULL) == 0;
	free(base);
	json_decref(copy);
	return ok;
}

/* noarch: python packages follow python to its new minor version (cli.h). */
size_t menv_cli_relink_noarch_python(struct menv_solver *solver, struct menv_prefix_record *inst,
                                     size_t ninst, const struct menv_record ***link, size_t *nlink,
                                     json_t ***unlink, size_t *nunlink, struct menv_record **made,
                                     size_t *nmade)
{
	char was[32] = "", now[32] = "";
	size_t added = 0;

	for (size_t i = 0; i < ninst; i++)
		if (!strcmp(inst[i].name, "python"))
			minor_of(inst[i].version, was, sizeof(was));
	for (size_t i = 0; i < *nlink; i++)
		if (!strcmp((*link)[i]->name, "python"))
			minor_of((*link)[i]->version, now, sizeof(now));
	if (!was[0] || !now[0] || !strcmp(was, now))
		return 0;
	*link = menv_xrealloc(*link, (*nlink + ninst + 1) * sizeof(**link));
	*unlink = menv_xrealloc(*unlink, (*nunlink + ninst + 1) * sizeof(**unlink));
	*made = menv_xcalloc(ninst + 1, sizeof(**made)); /* *link points into it */
	*nmade = 0;
	for (size_t i = 0; i < ninst; i++) {
		json_t *rec = inst[i].json;
		bool leaves = links_name(*link, *nlink, inst[i].name);
		for (size_t k = 0; k < *nunlink && !leaves; k++)
			leaves = (*unlink)[k] == rec;
		if (leaves || !json_noarch_python(rec))
			continue;
		const char *url = jstr(rec, "url");
		const struct menv_record *found = NULL, **cands = NULL;
		struct menv_matchspec *ms = NULL;
		size_t ncands = 0;
		if (solver && menv_matchspec_parse(inst[i].name, &ms, NULL) == 0 &&
		    menv_solver_search(solver, ms, &cands, &ncands, NULL) == 0) {
			for (size_t j = 0; j < ncands; j++) {
				const struct menv_record *c = cands[j];
				if (strcmp(c->version, inst[i].version) ||
				    strcmp(c->build, inst[i].build))
					continue;
				if (!found || (c->url && !strcmp(c->url, url)))
					found = c;
			}
		}
		free(cands);
		menv_matchspec_free(ms);
		if (!found && record_from_installed(rec, &(*made)[*nmade]))
			found = &(*made)[(*nmade)++];
		if (!found)
			continue;
		(*unlink)[(*nunlink)++] = rec;
		(*link)[(*nlink)++] = found;
		added++;
	}
	return added;
}

int menv_cli_revert_to_revision(const struct menv_config *cfg, const char *prefix, size_t rev,
                                const char *why, struct menv_error *err)
{
	struct menv_prefix_record *inst = NULL;
	struct menv_cli_channels none = {0};
	struct owned_recs owned = {0}, relinked = {0};
	struct menv_transaction t = {0};
	struct menv_strvec requested = MENV_STRVEC_INIT;
	json_t **unlink = NULL;
	size_t ninst = 0, nunlink = 0;
	int rc = menv_prefix_records_load(prefix, &inst, &ninst, err);

	if (!rc)
		rc = revision_plan(prefix, cfg, rev, &none, inst, ninst, &owned, &t, err);
	if (rc)
		goto out;
	unlink = menv_xcalloc(t.nunlink + 1, sizeof(*unlink));
	for (size_t i = 0; i < t.nunlink; i++)
		unlink[nunlink++] = t.unlink[i];
	if (menv_cli_relink_noarch_python(NULL, inst, ninst, &t.link, &t.nlink, &unlink, &nunlink,
	                                  &relinked.v, &relinked.n))
		toposort(t.link, t.nlink);
	if (t.nlink || nunlink) {
		char *cmdline = menv_xasprintf("menv (rollback to revision %zu: %s)", rev, why);
		struct menv_install_opts io = {
		        .pkgs_dir = cfg->pkgs_dir,
		        .requested = &requested,
		        .cmdline = cmdline,
		        .locked = true,
		};
		menv_cli_link_settings(cfg, &io);
		rc = menv_env_apply(prefix, t.link, t.nlink, unlink, nunlink, &io, NULL, err);
		free(cmdline);
	}
out:
	free(unlink);
	menv_transaction_release(&t);
	owned_recs_release(&owned);
	owned_recs_release(&relinked);
	menv_prefix_records_free(inst, ninst);
	return rc;
}

/* Adds "; <note>" after err's message (keeps the code). */
static void add_note(struct menv_error *err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void add_note(struct menv_error *err, const char *fmt, ...)
{
	char note[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	size_t len = strlen(err->msg);
	snprintf(err->msg + len, sizeof(err->msg) - len, "; %s", note);
}

/* After a failed pip step: every conda package that lost a file (pip uninstalls a conda
 * package's distribution before it replaces it, and may fail before the replacement is in)
 * is linked again from the package cache (fetched again from its URL when the cache lost it),
 * in one journaled transaction under the caller's prefix lock. `*repaired` counts them.
 * Errors: those of the package cache and menv_env_apply. */
static int repair_damaged(const struct menv_config *cfg, const char *prefix, size_t *repaired,
                          struct menv_error *err)
{
	struct menv_prefix_record *inst = NULL;
	struct menv_record *recs = NULL;
	const struct menv_record **link = NULL;
	json_t **unlink = NULL;
	size_t ninst = 0, n = 0;
	int rc = menv_prefix_records_load(prefix, &inst, &ninst, err);

	*repaired = 0;
	if (rc)
		return rc;
	recs = menv_xcalloc(ninst + 1, sizeof(*recs));
	link = menv_xcalloc(ninst + 1, sizeof(*link));
	unlink = menv_xcalloc(ninst + 1, sizeof(*unlink));
	for (size_t i = 0; i < ninst; i++) {
		bool lost = false;
		size_t k;
		json_t *f;
		json_array_foreach(json_object_get(inst[i].json, "files"), k, f)
		{
			struct stat sb;
			char *p = menv_xasprintf("%s/%s", prefix, json_string_value(f));
			lost = json_is_string(f) && lstat(p, &sb) != 0;
			free(p);
			if (lost)
				break;
		}
		if (lost && record_from_installed(inst[i].json, &recs[n])) {
			link[n] = &recs[n];
			unlink[n] = inst[i].json;
			n++;
		}
	}
	if (n) {
		struct menv_fetch_opts fo;
		menv_fetch_opts_from_config(&fo, cfg);
		rc = menv_pkgcache_fetch_opts(cfg->pkgs_dir, (struct menv_record *const *)link, n,
		                              &fo, NULL, NULL, err);
	}
	if (n && !rc) {
		struct menv_strvec requested = MENV_STRVEC_INIT;
		struct menv_install_opts io = {
		        .pkgs_dir = cfg->pkgs_dir,
		        .requested = &requested,
		        .cmdline = "menv (repair: files a failed pip step removed)",
		        .locked = true,
		};
		menv_cli_link_settings(cfg, &io);
		rc = menv_env_apply(prefix, link, n, unlink, n, &io, NULL, err);
		if (!rc)
			*repaired = n;
	}
	for (size_t i = 0; i < n; i++)
		menv_record_release(&recs[i]);
	free(recs);
	free(link);
	free(unlink);
	menv_prefix_records_free(inst, ninst);
	return rc;
}

/* conda-meta/.menv-pip-pending: written before a pip step into an existing environment and
 * removed once it succeeded or was taken back; a menv killed meanwhile leaves it, and the
 * next command takes the step back (menv_cli_pip_recover). JSON: {"revert_to": N or -1,
 * "before": [[name, version], ...]} (the pip distributions before the step). */
static char *pending_path(const char *prefix)
{
	return menv_xasprintf("%s/conda-meta/.menv-pip-pending", prefix);
}

/* Takes back a pip step (menv_cli_pip_into_env's failure path): uninstalls the distributions
 * not in `before`, puts the conda packages back to `revert_to` (when >= 0) and links again
 * the conda packages pip removed files of (`*repaired`). On failure `*stage` says which step
 * failed and `e` why. */
static int pip_undo(const struct menv_config *cfg, const char *prefix, json_t *before,
                    long revert_to, size_t *repaired, const char **stage, struct menv_error *e)
{
	struct menv_pip_dist *after = NULL;
	struct menv_strvec added = MENV_STRVEC_INIT;
	size_t nafter = 0;
	int rc;

	*repaired = 0;
	if (menv_pip_list(prefix, &after, &nafter, NULL) == 0) {
		for (size_t i = 0; i < nafter; i++) {
			bool had = false;
			size_t k;
			json_t *b;
			json_array_foreach(before, k, b)
			{
				const char *bn = json_string_value(json_array_get(b, 0));
				const char *bv = json_string_value(json_array_get(b, 1));
				had = had || (bn && bv && !strcmp(after[i].name, bn) &&
				              !strcmp(after[i].version, bv));
			}
			if (!had)
				menv_strvec_push(&added, after[i].name);
		}
	}
	*stage = "taking back its packages";
	rc = menv_pip_uninstall(prefix, &added, e);
	if (!rc && revert_to >= 0) {
		*stage = "putting the conda packages back";
		rc = menv_cli_revert_to_revision(cfg, prefix, (size_t)revert_to,
		                                 "the pip step failed", e);
	}
	if (!rc) {
		*stage = "linking again the conda packages pip had removed files of";
		rc = repair_damaged(cfg, prefix, repaired, e);
	}
	menv_pip_dists_free(after, nafter);
	menv_strvec_clear(&added);
	return rc;
}

int menv_cli_pip_into_env(const struct menv_config *cfg, const char *prefix,
                          const struct menv_pip_request *pr, long revert_to, struct menv_error *err)
{
	struct menv_pip_dist *before = NULL;
	struct menv_error e2 = {0};
	json_t *pending = json_object(), *list = json_array();
	char *ppath = pending_path(prefix), *text;
	const char *stage = "";
	size_t nbefore = 0, repaired = 0;
	int rc;

	if (menv_pip_list(prefix, &before, &nbefore, NULL))
		nbefore = 0;
	for (size_t i = 0; i < nbefore; i++)
		json_array_append_new(list, json_pack("[s,s]", before[i].name, before[i].version));
	json_object_set_new(pending, "revert_to", json_integer(revert_to));
	json_object_set_new(pending, "before", list);
	text = json_dumps(pending, JSON_INDENT(1));
	rc = menv_write_file_atomic(ppath, text, strlen(text), err);
	free(text);
	if (rc)
		goto out;
	rc = menv_pip_install(prefix, pr, err);
	if (!rc) {
		unlink(ppath);
		goto out;
	}
	/* take back what pip added before it failed, then the conda part of this command */
	if (pip_undo(cfg, prefix, list, revert_to, &repaired, &stage, &e2)) {
		add_note(err, "%s failed too (%s)", stage, e2.msg);
		goto out; /* the marker stays: the next command tries again */
	}
	unlink(ppath);
	if (revert_to < 0)
		add_note(err, "'%s' is as it was%s", prefix,
		         repaired ? " (conda packages whose files pip removed were linked again)"
		                  : "");
	else
		add_note(err, "'%s' was put back to revision %ld, as it was before%s", prefix,
		         revert_to,
		         repaired ? " (conda packages whose files pip removed were linked again)"
		                  : "");
out:
	menv_pip_dists_free(before, nbefore);
	json_decref(pending);
	free(ppath);
	return rc;
}

int menv_cli_pip_recover(const char *prefix, bool *undone, struct menv_error *err)
{
	struct menv_config cfg = {0};
	struct menv_error e2 = {0};
	char *ppath = pending_path(prefix);
	json_t *pending = NULL;
	const char *stage = "";
	size_t repaired = 0;
	int rc = 0;

	*undone = false;
	if (access(ppath, F_OK) != 0)
		goto out;
	pending = json_load_file(ppath, 0, NULL);
	rc = menv_config_load(&cfg, err);
	if (rc)
		goto out;
	json_t *rt = json_object_get(pending, "revert_to");
	rc = pip_undo(&cfg, prefix, json_object_get(pending, "before"),
	              json_is_integer(rt) ? (long)json_integer_value(rt) : -1, &repaired, &stage,
	              &e2);
	if (rc) {
		rc = menv_error_set(err, rc,
		                    "taking back an interrupted pip step in '%s': %s failed "
		                    "(%s)",
		                    prefix, stage, e2.msg);
		goto out;
	}
	unlink(ppath);
	*undone = true;
out:
	json_decref(pending);
	menv_config_release(&cfg);
	free(ppath);
	return rc;
}

/* Under the prefix lock: a pip step a killed menv left half done is taken back first. */
static int pip_recover_locked(const char *prefix, struct menv_error *err)
{
	bool undone = false;
	int rc = menv_cli_pip_recover(prefix, &undone, err);
	if (!rc && undone)
		fprintf(stderr, "menv: took back an interrupted pip step in '%s'\n", prefix);
	return rc;
}

static bool is_installed(struct menv_prefix_record *inst, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(inst[i].name, name))
			return true;
	return false;
}

int menv_cli_lock_env(const char *prefix, bool no_wait, struct menv_cli_events *ev, int *lock_fd,
                      struct menv_error *err)
{
	enum menv_recovery what;
	int rc = menv_env_lock(prefix, no_wait, menv_cli_env_event, ev, lock_fd, err);
	if (rc || !menv_env_needs_recovery(prefix))
		return rc;
	rc = menv_env_recover(prefix, &what, err);
	if (rc)
		return rc;
	if (what != MENV_RECOVERY_NONE)
		fprintf(stderr, "menv: %s an interrupted transaction in '%s'\n",
		        what == MENV_RECOVERY_FINISHED ? "finished" : "rolled back", prefix);
	if (what == MENV_RECOVERY_REMOVED)
		return menv_error_set(err, MENV_ENOTFOUND,
		                      "'%s' was an interrupted create and has been removed",
		                      prefix);
	return 0;
}

/* env update -f FILE: the file's `pip:` section after the conda packages (none: nothing). On
 * failure what pip added is taken back and, when revert_to >= 0, the conda packages go back
 * to that revision (menv_cli_pip_into_env). */
static int env_update_pip(const struct menv_config *cfg, const char *prefix,
                          const struct menv_envfile *ef, long revert_to, bool quiet,
                          struct menv_error *err)
{
	struct menv_pip_request pr = {0};
	char *dir = NULL;
	int rc;

	if (!ef || !ef->pip.n)
		return 0;
	for (size_t i = 0; i < ef->pip.n; i++)
		menv_strvec_push(&pr.requirements, ef->pip.v[i]);
	if (ef->path) {
		char buf[PATH_MAX];
		dir = menv_xstrdup(realpath(ef->path, buf) ? buf : ef->path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		pr.cwd = slash ? dir : NULL;
	}
	pr.quiet = quiet;
	pr.cancel = (volatile int *)&menv_cli_cancel;
	if (!quiet)
		fprintf(stderr,
		        "Installing the 'pip:' section (%zu lines) with the environment's pip\n",
		        ef->pip.n);
	rc = menv_cli_pip_into_env(cfg, prefix, &pr, revert_to, err);
	if (rc && ef->path)
		menv_error_prefix(err, "%s", ef->path);
	menv_strvec_clear(&pr.requirements);
	free(dir);
	return rc;
}

static int change(struct chg_opts *o)
{
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_envfile *ef = NULL;
	struct menv_prefix_record *inst = NULL;
	struct menv_matchspec **specs = NULL, **pins = NULL;
	struct menv_cli_channels ch = {0};
	struct menv_solver *solver = NULL;
	struct menv_transaction t = {0};
	struct owned_recs owned = {0}, relinked = {0};
	struct menv_strvec spec_strs = MENV_STRVEC_INIT, requested = MENV_STRVEC_INIT;
	struct menv_cli_events ev = {.verbose = o->verbose};
	json_t **unlink = NULL, **instj = NULL;
	size_t ninst = 0, nspecs = 0, npins = 0, nunlink = 0;
	/* menv-solve: the specs conda-meta/history says the user asked for */
	struct menv_strvec hist_strs = MENV_STRVEC_INIT, inst_names = MENV_STRVEC_INIT;
	struct menv_matchspec **hist = NULL;
	size_t nhist = 0;
	char *prefix = NULL, *cmdline = NULL, *once = NULL; /* once: a copy of a piped -f */
	bool remove_env = false;
	int rc = 0, exit_code = 0, lock_fd = -1;

	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	if (o->priority)
		cfg.channel_priority =
		        o->priority == 1 ? MENV_PRIORITY_STRICT : MENV_PRIORITY_DISABLED;
	if (o->file) {
		once = menv_cli_file_once(o->file, &err);
		if (err.code) {
			rc = err.code;
			goto out;
		}
		if (once)
			o->file = once;
	}
	if (o->kind == K_INSTALL && o->file) {
		if (!menv_cli_is_lockfile(o->file)) {
			rc = menv_error_set(&err, MENV_EUSAGE,
			                    "%s: not a lockfile (install -f takes a lockfile; "
			                    "for an environment file use env update -f)",
			                    o->file);
			goto out;
		}
		if (o->specs.n || o->has_revision) {
			rc = menv_error_set(&err, MENV_EUSAGE,
			                    "install -f LOCKFILE takes no package specs");
			goto out;
		}
		struct menv_cli_lock_opts lo = {
		        .file = o->file,
		        .name = o->name,
		        .prefix = o->prefix,
		        .dry_run = o->dry_run,
		        .json = o->json,
		        .quiet = o->quiet,
		        .no_wait = o->no_wait,
		        .smoke = !o->no_smoke,
		};
		exit_code = menv_cli_install_from_lock(&cfg, &lo);
		goto out;
	}
	if (o->kind == K_ENV_UPDATE) {
		if (!o->file) {
			rc = menv_error_set(&err, MENV_EUSAGE, "env update needs -f FILE");
			goto out;
		}
		rc = menv_envfile_load(o->file, &ef, &err);
		if (rc)
			goto out;
		menv_cli_envfile_warnings(ef);
		if (!o->name && !o->prefix) {
			if (ef->name)
				o->name = ef->name;
			else if (ef->prefix)
				o->prefix = ef->prefix;
		}
		for (size_t i = 0; i < ef->deps.n; i++)
			menv_strvec_push(&spec_strs, ef->deps.v[i]);
	}
	for (size_t i = 0; i < o->specs.n; i++)
		menv_strvec_push(&spec_strs, o->specs.v[i]);
	if (o->has_revision && spec_strs.n) {
		rc = menv_error_set(&err, MENV_EUSAGE, "--revision takes no package specs");
		goto out;
	}
	if (!spec_strs.n && !o->has_revision && !o->all && o->kind != K_ENV_UPDATE) {
		rc = menv_error_set(&err, MENV_EUSAGE, "no packages given%s",
		                    o->kind == K_INSTALL ? "" : " (or --all)");
		goto out;
	}
	prefix = menv_cli_env_prefix(&cfg, o->name, o->prefix, &err);
	if (!prefix) {
		rc = err.code ? err.code : MENV_EUSAGE;
		goto out;
	}
	/* hold the prefix lock from reading the installed records until the change is applied:
	 * a plan made from records another process is changing would break the environment */
	if (!o->dry_run) {
		rc = menv_cli_lock_env(prefix, o->no_wait, &ev, &lock_fd, &err);
		if (!rc)
			rc = pip_recover_locked(prefix, &err);
		if (rc)
			goto out;
	}
	rc = menv_prefix_records_load(prefix, &inst, &ninst, &err);
	if (rc)
		goto out;
	instj = menv_xcalloc(ninst + 1, sizeof(*instj));
	for (size_t i = 0; i < ninst; i++)
		instj[i] = inst[i].json;
	/* menv-solve: history specs, carried into every solve of this environment */
	for (size_t i = 0; i < ninst; i++)
		menv_strvec_push(&inst_names, inst[i].name);
	rc = menv_history_requested_specs(prefix, &inst_names, &hist_strs, &err);
	if (rc)
		goto out;
	hist = menv_xcalloc(hist_strs.n + 1, sizeof(*hist));
	for (size_t i = 0; i < hist_strs.n; i++)
		if (menv_matchspec_parse(hist_strs.v[i], &hist[nhist], NULL) == 0)
			nhist++;

	specs = menv_xcalloc(spec_strs.n + 1, sizeof(*specs));
	for (size_t i = 0; i < spec_strs.n; i++) {
		rc = menv_matchspec_parse(spec_strs.v[i], &specs[nspecs], &err);
		if (rc) {
			if (o->file)
				menv_error_prefix(&err, "%s", o->file);
			goto out;
		}
		nspecs++;
	}
	if (o->kind == K_UPDATE || o->kind == K_REMOVE) {
		for (size_t i = 0; i < nspecs; i++) {
			if (specs[i]->name && !strchr(specs[i]->name, '*') &&
			    !is_installed(inst, ninst, specs[i]->name)) {
				rc = menv_error_set(&err, MENV_ENOTFOUND,
				                    "package '%s' is not installed in '%s'",
				                    specs[i]->name, prefix);
				goto out;
			}
		}
	}

	if (o->kind == K_REMOVE && o->all) {
		/* the whole environment: unlink everything (pre-unlink scripts), then remove it */
		remove_env = true;
		t.unlink = menv_xcalloc(ninst + 1, sizeof(*t.unlink));
		for (size_t i = 0; i < ninst; i++)
			t.unlink[t.nunlink++] = inst[i].json;
	} else {
		if (o->kind != K_REMOVE) {
			rc = menv_cli_load_channels(&cfg, &o->channels, ef ? &ef->channels : NULL,
			                            o->override_channels, specs, nspecs, o->quiet,
			                            &ch, &err);
			if (rc)
				goto out;
			if (!ch.nchans && (nspecs || o->all)) {
				rc = menv_error_set(&err, MENV_EUSAGE,
				                    "no channels: give -c CHANNEL or list channels "
				                    "in the environment file or .condarc");
				goto out;
			}
		}
		if (o->has_revision) {
			rc = revision_plan(prefix, &cfg, (size_t)o->revision, &ch, inst, ninst,
			                   &owned, &t, &err);
			if (rc)
				goto out;
		} else {
			solver = menv_solver_new(cfg.subdir, cfg.channel_priority);
			menv_solver_set_add_pip(solver,
			                        cfg.add_pip_as_python_dependency); /* menv-solve */
			rc = menv_cli_channels_to_solver(&ch, solver, &err);
			if (rc)
				goto out;
			struct menv_virtual virt[8];
			size_t nv = menv_virtual_detect_subdir(cfg.subdir, virt,
			                                       8); /* menv-solve: the target's */
			for (size_t i = 0; i < nv; i++)
				menv_solver_add_virtual(solver, virt[i].name, virt[i].version,
				                        virt[i].build);
			menv_solver_add_installed(solver, instj, ninst);
			rc = menv_cli_load_pins(&cfg, prefix, &pins, &npins, &err);
			if (rc)
				goto out;
			for (size_t i = 0; i < npins; i++)
				menv_solver_add_pin(solver, pins[i]);
			struct menv_solve_request req = {0};
			/* menv-solve: history specs and conda's modifiers (flags, then .condarc's
			 * update_modifier) */
			req.history = hist;
			req.nhistory = nhist;
			req.aggressive = &cfg.aggressive_update_packages;
			req.freeze_installed = o->freeze_installed;
			req.no_update_deps = o->no_update_deps;
			req.update_deps = o->update_deps;
			req.update_specs = o->update_specs;
			req.update_all = o->update_all;
			req.force_reinstall = o->force_reinstall;
			req.no_deps = o->no_deps;
			req.only_deps = o->only_deps;
			req.force_remove = o->force;
			req.satisfied_skip_solve = o->satisfied_skip_solve;
			if (!o->freeze_installed && !o->no_update_deps && !o->update_deps &&
			    !o->update_specs && !o->update_all) {
				req.freeze_installed =
				        cfg.update_modifier == MENV_UPDATE_FREEZE_INSTALLED;
				req.update_deps = cfg.update_modifier == MENV_UPDATE_DEPS;
				req.update_all = cfg.update_modifier == MENV_UPDATE_ALL;
				req.satisfied_skip_solve =
				        req.satisfied_skip_solve ||
				        cfg.update_modifier == MENV_UPDATE_SATISFIED_SKIP;
			}
			switch (o->kind) {
			case K_INSTALL:
			case K_ENV_UPDATE:
				req.install = specs;
				req.ninstall = nspecs;
				break;
			case K_UPDATE:
				/* the newest allowed by each spec (the solver keeps a constrained
				 * update within its constraint) */
				req.update = specs;
				req.nupdate = nspecs;
				req.update_all = req.update_all || o->all;
				break;
			case K_REMOVE:
				req.remove = specs;
				req.nremove = nspecs;
				break;
			}
			rc = menv_solver_solve_request(solver, &req, &t, &err);
			if (rc == MENV_EUNSAT && !o->quiet)
				fprintf(stderr, "%s", menv_solver_problems(solver));
			if (rc)
				goto out;
		}
	}
	if (o->kind == K_ENV_UPDATE && o->prune)
		prune(specs, nspecs, inst, ninst, &t, &unlink, &nunlink);
	else {
		unlink = menv_xcalloc(t.nunlink + 1, sizeof(*unlink));
		for (size_t i = 0; i < t.nunlink; i++)
			unlink[nunlink++] = t.unlink[i];
	}
	if (!remove_env &&
	    menv_cli_relink_noarch_python(solver, inst, ninst, &t.link, &t.nlink, &unlink, &nunlink,
	                                  &relinked.v, &relinked.n))
		toposort(t.link, t.nlink);

	if (o->json && o->dry_run)
		print_json(prefix, t.link, t.nlink, unlink, nunlink, true, NULL);
	else if (!o->json)
		print_plan(prefix, t.link, t.nlink, unlink, nunlink);
	if (ef && ef->pip.n && !o->json)
		printf("  pip (after the conda packages): %zu line%s of the 'pip:' section\n\n",
		       ef->pip.n, ef->pip.n == 1 ? "" : "s");
	if (o->dry_run) {
		if (!o->json)
			printf("Dry run: nothing was changed.\n");
		goto out;
	}
	if (!t.nlink && !nunlink) {
		rc = env_update_pip(&cfg, prefix, ef, -1, o->quiet, &err);
		if (!rc && o->json)
			print_json(prefix, t.link, t.nlink, unlink, nunlink, false, NULL);
		goto out;
	}
	/* every download, extraction and hash check before the first unlink (BR-032) */
	if (t.nlink) {
		if (!o->quiet)
			fprintf(stderr, "Fetching packages into %s\n", cfg.pkgs_dir);
		struct menv_fetch_opts fo;
		struct menv_cli_progress prog;
		menv_fetch_opts_from_config(&fo, &cfg);
		fo.cancel = (volatile int *)&menv_cli_cancel;
		menv_cli_progress_init(&prog, &fo, o->quiet || o->json);
		bool lines_off = o->quiet || o->json || fo.progress;
		rc = menv_pkgcache_fetch_opts(cfg.pkgs_dir, (struct menv_record *const *)t.link,
		                              t.nlink, &fo, menv_cli_on_fetch, &lines_off, &err);
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < nspecs; i++)
		menv_strvec_push_owned(&requested, menv_matchspec_str(specs[i]));
	cmdline = menv_cli_cmdline();
	if (o->json)
		ev.messages = json_array();
	struct menv_install_opts io = {
	        .pkgs_dir = cfg.pkgs_dir,
	        .requested = &requested,
	        .cmdline = cmdline,
	        .remove_specs = o->kind == K_REMOVE,
	        .cancel = (volatile int *)&menv_cli_cancel,
	        .no_wait = o->no_wait,
	        .locked = lock_fd >= 0,
	        .cb = menv_cli_env_event,
	        .ud = &ev,
	};
	menv_cli_link_settings(&cfg, &io);
	struct menv_link_stats st;
	/* the revision a failed pip step puts the environment back to */
	struct menv_revision *revs = NULL;
	size_t nrevs = 0;
	if (menv_history_load(prefix, &revs, &nrevs, NULL))
		nrevs = 0;
	menv_history_free(revs, nrevs);
	if (remove_env)
		rc = menv_env_remove(prefix, &io, &st, &err);
	else
		rc = menv_env_apply(prefix, t.link, t.nlink, unlink, nunlink, &io, &st, &err);
	if (!rc && !remove_env)
		rc = env_update_pip(&cfg, prefix, ef, nrevs ? (long)nrevs - 1 : -1, o->quiet, &err);
	if (rc)
		goto out;
	if (remove_env)
		menv_cli_envreg_unregister(prefix); /* ~/.conda/environments.txt */
	if (o->json) {
		print_json(prefix, t.link, t.nlink, unlink, nunlink, false, ev.messages);
	} else {
		if (remove_env)
			printf("Removed %s: %zu packages\n", prefix, st.unlinked);
		else
			printf("Updated %s: %zu packages removed, %zu linked, %zu files (%zu "
			       "reflinked, %zu hardlinked, %zu softlinked, %zu copied, %zu "
			       "relocated, "
			       "%zu .pyc)\n",
			       prefix, st.unlinked, st.packages, st.files, st.reflinks,
			       st.hardlinks, st.softlinks, st.copies, st.replaced, st.pyc);
		if (st.clobbered)
			printf("warning: %zu files were provided by more than one package; the "
			       "later package's copy was kept\n",
			       st.clobbered);
	}
	/* the changed environment still builds and runs the sample CUDA op */
	if (!rc && !o->dry_run && !o->no_smoke && !remove_env && t.nlink &&
	    menv_cli_wants_smoke(&cfg, prefix)) {
		menv_env_unlock(lock_fd);
		lock_fd = -1;
		fflush(stdout);
		json_t *report = NULL; /* stdout already holds the install's JSON */
		exit_code = menv_cli_smoke(prefix, o->json, false, false, o->json ? &report : NULL);
		json_decref(report);
	}
out:
	if (rc) {
		if (o->json)
			menv_cli_print_json_error(&err, solver);
		exit_code = menv_cli_fail(&err);
	}
	menv_env_unlock(lock_fd);
	json_decref(ev.messages);
	free(unlink);
	menv_transaction_release(&t);
	menv_solver_free(solver);
	owned_recs_release(&owned);
	owned_recs_release(&relinked);
	menv_cli_channels_release(&ch);
	for (size_t i = 0; i < npins; i++)
		menv_matchspec_free(pins[i]);
	free(pins);
	for (size_t i = 0; i < nspecs; i++)
		menv_matchspec_free(specs[i]);
	free(specs);
	free(instj);
	for (size_t i = 0; i < nhist; i++) /* menv-solve */
		menv_matchspec_free(hist[i]);
	free(hist);
	menv_strvec_clear(&hist_strs);
	menv_strvec_clear(&inst_names);
	menv_prefix_records_free(inst, ninst);
	menv_strvec_clear(&spec_strs);
	menv_strvec_clear(&requested);
	menv_strvec_clear(&o->channels);
	menv_strvec_clear(&o->specs);
	menv_envfile_free(ef);
	menv_config_release(&cfg);
	if (once) {
		remove(once); /* `unlink` is a local here */
		free(once);
	}
	free(prefix);
	free(cmdline);
	return exit_code;
}

static int run_kind(enum kind k, int argc, char **argv)
{
	struct chg_opts o = {.kind = k};
	int rc = parse(argc, argv, &o);
	if (rc) {
		menv_strvec_clear(&o.channels);
		menv_strvec_clear(&o.specs);
		return rc > 0 ? 0 : MENV_EXIT_USAGE;
	}
	if ((o.all && k != K_UPDATE && k != K_REMOVE) || (o.prune && k != K_ENV_UPDATE) ||
	    (o.has_revision && k != K_INSTALL) || (o.file && k != K_ENV_UPDATE && k != K_INSTALL)) {
		fprintf(stderr, "%s", usages[k]);
		menv_strvec_clear(&o.channels);
		menv_strvec_clear(&o.specs);
		return MENV_EXIT_USAGE;
	}
	return change(&o);
}

int menv_cmd_install(int argc, char **argv)
{
	return run_kind(K_INSTALL, argc, argv);
}

int menv_cmd_remove(int argc, char **argv)
{
	return run_kind(K_REMOVE, argc, argv);
}

int menv_cmd_update(int argc, char **argv)
{
	return run_kind(K_UPDATE, argc, argv);
}

int menv_cmd_env_update(int argc, char **argv)
{
	return run_kind(K_ENV_UPDATE, argc, argv);
}

/* ---------------------------------------------------------------------------------------- */
/* list --revisions                                                                          */

/* Splits "name-version-build" (of a label) into name and version-build. */
static void split_dist(const char *label, char **name, char **ver, char **vb)
{
	const char *d = dist_of_label(label);
	const char *b = strrchr(d, '-');
	const char *v = b ? b : d;
	while (v > d && v[-1] != '-')
		v--;
	if (!b || v == d) {
		*name = menv_xstrdup(d);
		*ver = menv_xstrdup("");
		*vb = menv_xstrdup("");
		return;
	}
	*name = menv_xstrndup(d, (size_t)(v - 1 - d));
	*ver = menv_xstrndup(v, (size_t)(b - v));
	*vb = menv_xstrdup(v);
}

int menv_cli_list_revisions(const char *prefix, bool json)
{
	struct menv_error err = {0};
	struct menv_revision *revs = NULL;
	size_t n = 0;
	json_t *all = json ? json_array() : NULL;

	if (menv_history_load(prefix, &revs, &n, &err)) {
		json_decref(all);
		return menv_cli_fail(&err);
	}
	for (size_t i = 0; i < n; i++) {
		json_t *inst = json_array(), *rem = json_array(), *up = json_array(),
		       *down = json_array();
		const struct menv_revision *r = &revs[i];
		if (!json)
			printf("%s  (rev %zu)\n", r->date, i);
		for (size_t k = 0; k < r->removed.n; k++) {
			char *nm, *ver, *vb;
			split_dist(r->removed.v[k], &nm, &ver, &vb);
			bool changed = false;
			for (size_t m = 0; m < r->added.n && !changed; m++) {
				char *nm2, *ver2, *vb2;
				split_dist(r->added.v[m], &nm2, &ver2, &vb2);
				if (!strcmp(nm, nm2)) {
					changed = true;
					char *s = menv_xasprintf("%s-%s -> %s", nm, vb, vb2);
					json_array_append_new(cmp_versions(ver2, ver) >= 0 ? up
					                                                   : down,
					                      json_string(s));
					if (!json)
						printf("     %s  {%s -> %s}\n", nm, vb, vb2);
					free(s);
				}
				free(nm2);
				free(ver2);
				free(vb2);
			}
			if (!changed) {
				json_array_append_new(rem, json_string(r->removed.v[k]));
				if (!json)
					printf("    -%s\n", dist_of_label(r->removed.v[k]));
			}
			free(nm);
			free(ver);
			free(vb);
		}
		for (size_t k = 0; k < r->added.n; k++) {
			char *nm, *ver, *vb;
			split_dist(r->added.v[k], &nm, &ver, &vb);
			bool changed = false;
			for (size_t m = 0; m < r->removed.n && !changed; m++) {
				char *nm2, *ver2, *vb2;
				split_dist(r->removed.v[m], &nm2, &ver2, &vb2);
				changed = !strcmp(nm, nm2);
				free(nm2);
				free(ver2);
				free(vb2);
			}
			if (!changed) {
				json_array_append_new(inst, json_string(r->added.v[k]));
				if (!json)
					printf("    +%s\n", dist_of_label(r->added.v[k]));
			}
			free(nm);
			free(ver);
			free(vb);
		}
		if (json) {
			json_t *o = json_pack("{s:I, s:s, s:o, s:o, s:o, s:o}", "rev",
			                      (json_int_t)i, "date", r->date, "install", inst,
			                      "remove", rem, "upgrade", up, "downgrade", down);
			if (r->cmd)
				json_object_set_new(o, "cmd", json_string(r->cmd));
			json_array_append_new(all, o);
		} else {
			printf("\n");
			json_decref(inst);
			json_decref(rem);
			json_decref(up);
			json_decref(down);
		}
	}
	if (json) {
		char *s = json_dumps(all, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(all);
	}
	menv_history_free(revs, n);
	return 0;
}
