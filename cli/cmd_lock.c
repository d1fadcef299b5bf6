/*
 * cmd_lock.c - `menv lock`: solves an environment file for one or more platforms at once and
 * writes one multi-platform conda-lock.yml v1 (CEP-37); `--check` says whether an existing
 * lock still matches its source.
 *
 * Each platform is solved against that platform's subdir and noarch of the file's channels,
 * with the virtual packages declared for it: by default this machine's (without __cuda) for
 * its own platform and conda-lock's set for the others (__unix, __linux 5.10 and __glibc
 * 2.17 on linux, __osx 10.15 / 11.0, __win; __archspec for the architecture), replaced or
 * extended by the file's `virtual-packages:` list, then `--virtual-package NAME=VERSION` (all
 * platforms) or `PLATFORM:NAME=VERSION` (one), same syntax in both. There is never a default `__cuda`: a lock that needs CUDA must declare it
 * (`--virtual-package __cuda=11.8`).
 *
 * The content hash of a platform is sha256 over the source file's bytes, the platform, the
 * -c channels and the declared virtual packages (not the machine's detected ones, so that the
 * same lock checks as current on every machine), so `--check` notices any of them changing.
 * The `pip:` section is not resolved here (menv has no PyPI resolver): `menv export` of an
 * environment records the pip packages it really has.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fetch.h"
#include "solver.h"

struct lock_opts {
	const char *file, *out;
	struct menv_strvec platforms, virtuals, cli_channels;
	struct menv_strvec declared; /* the file's virtual-packages:, then --virtual-package */
	bool override_channels, check, quiet;
};

/* The default virtual packages of a platform, as "name=version[=build]" strings: this
 * machine's (menv_virtual_detect, CONDA_OVERRIDE_* applied) for its own platform, except
 * __cuda; conda-lock's defaults for the others. */
static void default_virtuals(const char *platform, struct menv_strvec *out)
{
	if (!strcmp(platform, menv_platform_subdir())) {
		struct menv_virtual v[16];
		size_t n = menv_virtual_detect(v, 16);
		for (size_t i = 0; i < n; i++)
			if (strcmp(v[i].name, "__cuda"))
				menv_strvec_push_owned(out,
				                       menv_xasprintf("%s=%s=%s", v[i].name,
				                                      v[i].version, v[i].build));
		return;
	}
	if (!strncmp(platform, "linux-", 6)) {
		menv_strvec_push(out, "__unix=0");
		menv_strvec_push(out, "__linux=5.10");
		menv_strvec_push(out, "__glibc=2.17");
	} else if (!strncmp(platform, "osx-", 4)) {
		menv_strvec_push(out, "__unix=0");
		menv_strvec_push(out,
		                 !strcmp(platform, "osx-arm64") ? "__osx=11.0" : "__osx=10.15");
	} else if (!strncmp(platform, "win-", 4)) {
		menv_strvec_push(out, "__win=0");
	}
	if (!strcmp(platform, "linux-64") || !strcmp(platform, "osx-64") ||
	    !strcmp(platform, "win-64"))
		menv_strvec_push(out, "__archspec=1=x86_64");
	else if (!strcmp(platform, "linux-aarch64") || !strcmp(platform, "osx-arm64"))
		menv_strvec_push(out, "__archspec=1=aarch64");
}

/* The virtual packages of `platform`: the defaults, then the declared ones (a declared name
 * replaces a default one; --virtual-package replaces the file's). */
static void virtuals_for(const struct lock_opts *o, const char *platform, struct menv_strvec *out)
{
	struct menv_strvec all = MENV_STRVEC_INIT;
	default_virtuals(platform, &all);
	for (size_t i = 0; i < o->declared.n; i++) {
		const char *v = o->declared.v[i];
		const char *colon = strchr(v, ':');
		if (colon && strncmp(v, "__", 2)) {
			if (strncmp(v, platform, (size_t)(colon - v)) || platform[colon - v])
				continue;
			v = colon + 1;
		}
		size_t nl = strcspn(v, "=");
		for (size_t k = 0; k < all.n; k++) {
			if (all.v[k] && !strncmp(all.v[k], v, nl) && all.v[k][nl] == '=') {
				free(all.v[k]);
				all.v[k] = NULL;
			}
		}
		menv_strvec_push(&all, v);
	}
	for (size_t k = 0; k < all.n; k++)
		if (all.v[k])
			menv_strvec_push(out, all.v[k]);
	menv_strvec_clear(&all);
}

static char *content_hash(const struct menv_buf *src, const char *platform,
                          const struct menv_strvec *channels, const struct menv_strvec *virt)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_hashes h;
	menv_buf_add(&b, src->buf, src->len);
	menv_buf_addf(&b, "\n--menv-lock--\nplatform %s\n", platform);
	for (size_t i = 0; i < channels->n; i++)
		menv_buf_addf(&b, "channel %s\n", channels->v[i]);
	for (size_t i = 0; i < virt->n; i++)
		menv_buf_addf(&b, "virtual %s\n", virt->v[i]);
	menv_hash_mem(b.buf, b.len, &h);
	menv_buf_release(&b);
	return menv_xstrdup(h.sha256);
}

/* Solves the file for one platform and appends its records to `lf`. */
static int lock_platform(const struct menv_config *cfg, const struct lock_opts *o,
                         const struct menv_envfile *ef, const char *platform,
                         const struct menv_strvec *virt, struct menv_lockfile *lf,
                         struct menv_error *err)
{
	struct menv_config pc = *cfg; /* shallow: only subdir differs; never released */
	struct menv_strvec specs_str = MENV_STRVEC_INIT;
	struct menv_matchspec **specs = NULL;
	struct menv_cli_channels ch = {0};
	struct menv_solver *solver = NULL;
	const struct menv_record **recs = NULL;
	size_t nspecs = 0, nrecs = 0;
	int rc = 0;

	pc.subdir = (char *)platform;
	for (size_t i = 0; i < ef->deps.n; i++)
		menv_strvec_push(&specs_str, ef->deps.v[i]);
	menv_cli_envfile_specs(ef, &o->cli_channels, &specs_str);
	specs = menv_xcalloc(specs_str.n + 1, sizeof(*specs));
	for (size_t i = 0; i < specs_str.n; i++) {
		rc = menv_matchspec_parse(specs_str.v[i], &specs[nspecs], err);
		if (rc) {
			menv_error_prefix(err, "%s", o->file);
			goto out;
		}
		nspecs++;
	}
	rc = menv_cli_load_channels(&pc, &o->cli_channels, &ef->channels, o->override_channels,
	                            specs, nspecs, o->quiet, &ch, err);
	if (rc)
		goto out;
	if (nspecs && !ch.nchans) {
		rc = menv_error_set(err, MENV_EUSAGE,
		                    "no channels: give -c CHANNEL or list "
		                    "channels in the environment file or .condarc");
		goto out;
	}
	if (!lf->channels.n)
		for (size_t i = 0; i < ch.nchans; i++)
			if (!menv_strvec_contains(&lf->channels, ch.chans[i]->name))
				menv_strvec_push(&lf->channels, ch.chans[i]->name);
	solver = menv_solver_new(platform, cfg->channel_priority);
	rc = menv_cli_channels_to_solver(&ch, solver, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < virt->n; i++) {
		char *v = menv_xstrdup(virt->v[i]);
		char *ver = strchr(v, '=');
		char *build = NULL;
		if (ver) {
			*ver++ = '\0';
			build = strchr(ver, '=');
			if (build)
				*build++ = '\0';
		}
		menv_solver_add_virtual(solver, v, ver ? ver : "0", build ? build : "0");
		free(v);
	}
	rc = menv_solver_solve(solver, specs, nspecs, &recs, &nrecs, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < nrecs; i++) {
		const struct menv_record *r = recs[i];
		struct menv_lock_package *p = menv_lockfile_add(lf);
		p->manager = MENV_LOCK_CONDA;
		p->name = menv_xstrdup(r->name);
		p->version = menv_xstrdup(r->version);
		p->build = menv_xstrdup(r->build);
		p->platform = menv_xstrdup(platform);
		p->subdir = menv_xstrdup(r->subdir);
		p->url = menv_xstrdup(r->url);
		p->md5 = menv_xstrdup(r->md5);
		p->sha256 = menv_xstrdup(r->sha256);
		p->size = r->size;
		json_t *d = menv_record_depends(r);
		p->depends = json_is_array(d) ? json_deep_copy(d) : json_array();
	}
	if (!o->quiet)
		fprintf(stderr, "  %s: %zu packages\n", platform, nrecs);
out:
	if (rc)
		menv_error_prefix(err, "platform '%s'", platform);
	free(recs);
	menv_solver_free(solver);
	menv_cli_channels_release(&ch);
	for (size_t i = 0; i < nspecs; i++)
		menv_matchspec_free(specs[i]);
	free(specs);
	menv_strvec_clear(&specs_str);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: menv lock -f environment.yml [--platform P]... [--virtual-package "
	           "[P:]NAME=VERSION[=BUILD]]...\n"
	           "                 [-c CHANNEL]... [--override-channels] [--lockfile FILE] "
	           "[--check] [-q]\n");
}

int menv_cmd_lock(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"file", required_argument, NULL, 'f'},
	        {"platform", required_argument, NULL, 'P'},
	        {"virtual-package", required_argument, NULL, 'V'},
	        {"channel", required_argument, NULL, 'c'},
	        {"override-channels", no_argument, NULL, 'O'},
	        {"lockfile", required_argument, NULL, 'l'},
	        {"check", no_argument, NULL, 'C'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct lock_opts o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_envfile *ef = NULL;
	struct menv_lockfile *lf = NULL, *old = NULL;
	struct menv_buf src = MENV_BUF_INIT, out = MENV_BUF_INIT;
	int c, rc = 0, code = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:p:c:l:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': o.file = optarg; break;
		case 'p':
		case 'P': menv_strvec_push(&o.platforms, optarg); break;
		case 'V': menv_strvec_push(&o.virtuals, optarg); break;
		case 'c': menv_strvec_push(&o.cli_channels, optarg); break;
		case 'O': o.override_channels = true; break;
		case 'l': o.out = optarg; break;
		case 'C': o.check = true; break;
		case 'q': o.quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return MENV_EXIT_USAGE;
		}
	}
	if (!o.file)
		o.file = "environment.yml";
	if (!o.out)
		o.out = "conda-lock.yml";
	for (size_t i = 0; i < o.virtuals.n; i++) {
		const char *v = o.virtuals.v[i];
		if (!menv_virtual_decl_ok(v)) {
			rc = menv_error_set(&err, MENV_EUSAGE,
			                    "--virtual-package '%s': expected "
			                    "[PLATFORM:]__NAME=VERSION[=BUILD]",
			                    v);
			goto out;
		}
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	rc = menv_buf_read_file(&src, o.file, &err);
	if (!rc)
		rc = menv_envfile_parse(src.buf, src.len, o.file, &ef, &err);
	if (rc)
		goto out;
	menv_cli_envfile_warnings(ef);
	/* the content hash covers the file's section through the source bytes */
	for (size_t i = 0; i < ef->virtual_packages.n; i++)
		menv_strvec_push(&o.declared, ef->virtual_packages.v[i]);
	for (size_t i = 0; i < o.virtuals.n; i++)
		menv_strvec_push(&o.declared, o.virtuals.v[i]);
	if (!o.platforms.n)
		menv_strvec_push(&o.platforms, cfg.subdir);
	for (size_t i = 0; i < o.platforms.n; i++) {
		if (!menv_subdir_known(o.platforms.v[i])) {
			rc = menv_error_set(&err, MENV_EUSAGE,
			                    "unknown platform '%s' (conda's subdirs: linux-64, "
			                    "linux-aarch64, osx-64, osx-arm64, win-64, ...)",
			                    o.platforms.v[i]);
			goto out;
		}
	}

	struct menv_strvec chans_for_hash = MENV_STRVEC_INIT;
	for (size_t i = 0; i < o.cli_channels.n; i++)
		menv_strvec_push(&chans_for_hash, o.cli_channels.v[i]);
	if (o.check) {
		rc = menv_lockfile_load(o.out, &old, &err);
		if (rc) {
			menv_strvec_clear(&chans_for_hash);
			goto out;
		}
		size_t stale = 0;
		for (size_t i = 0; i < o.platforms.n; i++) {
			struct menv_strvec virt = MENV_STRVEC_INIT;
			virtuals_for(&o, o.platforms.v[i], &virt);
			char *h =
			        content_hash(&src, o.platforms.v[i], &chans_for_hash, &o.virtuals);
			const char *have = json_string_value(
			        json_object_get(old->content_hash, o.platforms.v[i]));
			if (!have || strcmp(have, h)) {
				printf("%s: %s is out of date for %s (%s)\n", o.out, o.out,
				       o.platforms.v[i],
				       have ? "the source, channels or virtual "
				              "packages changed"
				            : "the platform is not locked");
				stale++;
			}
			free(h);
			menv_strvec_clear(&virt);
		}
		menv_strvec_clear(&chans_for_hash);
		if (!stale)
			printf("%s is up to date with %s for %zu platform%s\n", o.out, o.file,
			       o.platforms.n, o.platforms.n == 1 ? "" : "s");
		code = stale ? MENV_EXIT_FAIL : 0;
		goto out;
	}
	lf = menv_lockfile_new(MENV_LOCK_CONDA_LOCK);
	menv_strvec_push(&lf->sources, o.file);
	for (size_t i = 0; i < o.platforms.n && !rc; i++) {
		struct menv_strvec virt = MENV_STRVEC_INIT;
		virtuals_for(&o, o.platforms.v[i], &virt);
		if (!o.quiet)
			fprintf(stderr, "Solving %s for %s\n", o.file, o.platforms.v[i]);
		menv_strvec_push(&lf->platforms, o.platforms.v[i]);
		rc = lock_platform(&cfg, &o, ef, o.platforms.v[i], &virt, lf, &err);
		if (!rc) {
			char *h =
			        content_hash(&src, o.platforms.v[i], &chans_for_hash, &o.virtuals);
			json_object_set_new(lf->content_hash, o.platforms.v[i], json_string(h));
			free(h);
		}
		menv_strvec_clear(&virt);
	}
	menv_strvec_clear(&chans_for_hash);
	if (rc)
		goto out;
	if (ef->pip.n)
		fprintf(stderr,
		        "menv: warning: the 'pip:' section (%zu lines) is not locked by "
		        "'menv lock'; create the environment and use 'menv export' to lock its pip "
		        "packages\n",
		        ef->pip.n);
	menv_lockfile_write_conda_lock(lf, &out);
	if (!strcmp(o.out, "-"))
		fwrite(out.buf, 1, out.len, stdout);
	else
		rc = menv_write_file_atomic(o.out, out.buf, out.len, &err);
	if (!rc && !o.quiet && strcmp(o.out, "-"))
		fprintf(stderr, "Wrote %s: %zu packages for %zu platform%s\n", o.out, lf->npkgs,
		        o.platforms.n, o.platforms.n == 1 ? "" : "s");
out:
	if (rc)
		code = menv_cli_fail(&err);
	menv_lockfile_free(lf);
	menv_lockfile_free(old);
	menv_envfile_free(ef);
	menv_buf_release(&src);
	menv_buf_release(&out);
	menv_strvec_clear(&o.platforms);
	menv_strvec_clear(&o.virtuals);
	menv_strvec_clear(&o.declared);
	menv_strvec_clear(&o.cli_channels);
	menv_config_release(&cfg);
	return code;
}
