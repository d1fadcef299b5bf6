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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct lock_opts {
	const char *file, *out;
	struct menv_strvec platforms, virtuals, cli_channels;
	struct menv_strvec declared; /* the file's virtual-packages:, then --virtual-package */
	bool override_channels, check, quiet;
};

#define USAGE                                                                                      \
	"usage: menv lock -f environment.yml [--platform P]... [--virtual-package "                \
	"[P:]NAME=VERSION[=BUILD]]...\n                 [-c CHANNEL]... [--override-channels] "    \
	"[--lockfile FILE] [--check] [-q]\n"

int menv_cmd_lock(int argc, char **argv)
{
	struct lock_opts o = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_envfile *ef = NULL;
	struct menv_lockfile *lf = NULL, *old = NULL;
	struct menv_buf src = MENV_BUF_INIT, out = MENV_BUF_INIT;
	int rc = 0, code = 0;

	struct menv_cli_args a = {0};
	static char platform_opt[] = "--platform";
	for (int i = 1; i < argc; i++) /* -p is --platform here, as in conda-lock */
		if (!strcmp(argv[i], "-p"))
			argv[i] = platform_opt;
	if ((rc = menv_cli_parse(argc, argv, "fQVcOlGqh", USAGE, 0, 0, &a)))
		return MENV_CLI_EXIT(rc);
	o.file = a.file;
	o.out = a.lockfile;
	o.platforms = a.platforms;
	o.virtuals = a.virtuals;
	o.cli_channels = a.channels;
	o.override_channels = a.override_channels;
	o.check = a.check;
	o.quiet = a.quiet;
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

	if (o.check) {
		rc = menv_lockfile_load(o.out, &old, &err);
		if (rc)
			goto out;
		size_t stale = 0;
		for (size_t i = 0; i < o.platforms.n; i++) {
			char *h = menv_lock_content_hash(&src, o.platforms.v[i], &o.cli_channels,
			                                 &o.virtuals);
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
		}
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
		menv_lock_virtuals(o.platforms.v[i], &o.declared, &virt);
		if (!o.quiet)
			fprintf(stderr, "Solving %s for %s\n", o.file, o.platforms.v[i]);
		menv_strvec_push(&lf->platforms, o.platforms.v[i]);
		struct menv_cli_draw d;
		struct menv_txn_callbacks cb;
		size_t count = 0;
		menv_cli_draw_init(&d, &cb, o.quiet, false, false);
		rc = menv_lock_solve_platform(&cfg, ef, &o.cli_channels, o.override_channels,
		                              o.platforms.v[i], &virt, &cb, lf, &count, &err);
		if (!rc && !o.quiet)
			fprintf(stderr, "  %s: %zu package%s\n", o.platforms.v[i], count,
			        MENV_CLI_S(count));
		if (!rc) {
			char *h = menv_lock_content_hash(&src, o.platforms.v[i], &o.cli_channels,
			                                 &o.virtuals);
			json_object_set_new(lf->content_hash, o.platforms.v[i], json_string(h));
			free(h);
		}
		menv_strvec_clear(&virt);
	}
	if (rc)
		goto out;
	if (ef->pip.n)
		fprintf(stderr,
		        "menv: warning: the 'pip:' section (%zu line%s) is not locked by "
		        "'menv lock'; create the environment and use 'menv export' to lock its pip "
		        "packages\n",
		        ef->pip.n, MENV_CLI_S(ef->pip.n));
	rc = menv_lockfile_write_conda_lock(lf, &out, &err);
	if (rc)
		goto out;
	menv_buf_redact(&out); /* no credentials or tokens in the lockfile */
	if (!strcmp(o.out, "-"))
		fwrite(out.buf, 1, out.len, stdout);
	else
		rc = menv_write_file_atomic(o.out, out.buf, out.len, &err);
	if (!rc && !o.quiet && strcmp(o.out, "-"))
		fprintf(stderr, "Wrote %s: %zu package%s for %zu platform%s\n", o.out, lf->npkgs,
		        MENV_CLI_S(lf->npkgs), o.platforms.n, MENV_CLI_S(o.platforms.n));
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
