/*
 * load_driver.c - a second, minimal front end of fetch/ and solver/ for the tests: loads a
 * channel's <subdir> and noarch repodata the way menv's CLI does (repodata cache in
 * <pkgs>/cache, repodata kept in its file, a .solv beside the cache entry), with Ctrl-C and
 * SIGTERM setting the cancel flag both modules take, shows the solver's warnings and solves.
 *
 *   load_driver CHANNEL PKGS_DIR SUBDIR SPEC...
 *
 * stdout: one "name=version=build" line per record to link; stderr: "warning: ..." lines and
 * the error. Exit 0, 1 (an error), 130 (interrupted), as menv.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fetch.h"
#include "solver.h"

static volatile int cancel_flag;

static void on_signal(int sig)
{
	(void)sig;
	cancel_flag = 1;
}

static int fail(const struct menv_error *err)
{
	fprintf(stderr, "load_driver: error: %s\n", err->msg);
	return err->code == MENV_EINTR ? 130 : 1;
}

int main(int argc, char **argv)
{
	struct menv_config cfg;
	struct menv_channel *ch = NULL;
	struct menv_error err = {0};
	struct menv_fetch_opts o;
	struct menv_repodata_req r[2];
	struct sigaction sa;
	int rc = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: load_driver CHANNEL PKGS_DIR SUBDIR SPEC...\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	menv_config_defaults(&cfg);
	if (menv_channel_parse(argv[1], &cfg, &ch, &err))
		return fail(&err);
	char *cache = menv_xasprintf("%s/cache", argv[2]);
	mkdir(argv[2], 0755);
	mkdir(cache, 0755);
	menv_fetch_opts_from_config(&o, &cfg);
	o.cache_dir = cache;
	o.cancel = &cancel_flag;
	o.repodata_as_file = true;
	memset(r, 0, sizeof(r));
	r[0].channel = r[1].channel = ch;
	r[0].subdir = argv[3];
	r[1].subdir = "noarch";
	if (menv_fetch_repodata_many(r, 2, &o, &err))
		return fail(&err);

	struct menv_solver *s = menv_solver_new(argv[3], MENV_PRIORITY_STRICT);
	menv_solver_set_cancel(s, &cancel_flag);
	for (int i = 0; i < 2 && !rc; i++) {
		if (!r[i].path)
			continue; /* a missing noarch: nothing to add */
		char *url = menv_channel_subdir_url(ch, r[i].subdir, true);
		char *name = menv_repodata_cache_name(url);
		char *solv = menv_xasprintf("%s/%.*s.solv", cache, (int)(strlen(name) - 5), name);
		rc = menv_solver_add_repodata_file(s, ch, r[i].subdir, r[i].path, solv, &err);
		free(solv);
		free(name);
		free(url);
	}
	const struct menv_strvec *w = menv_solver_warnings(s);
	size_t nw = w->n;
	for (size_t i = 0; i < nw; i++)
		fprintf(stderr, "warning: %s\n", w->v[i]);
	if (!rc) {
		struct menv_matchspec **specs = menv_xcalloc((size_t)argc, sizeof(*specs));
		const struct menv_record **out = NULL;
		size_t n = 0, ns = 0;
		for (int i = 4; i < argc && !rc; i++)
			rc = menv_matchspec_parse(argv[i], &specs[ns++], &err);
		if (!rc)
			rc = menv_solver_solve(s, specs, ns, &out, &n, &err);
		for (size_t i = 0; !rc && i < n; i++)
			printf("%s=%s=%s\n", out[i]->name, out[i]->version, out[i]->build);
		/* a sparse load's warnings come with the solve */
		for (size_t i = nw; i < w->n; i++)
			fprintf(stderr, "warning: %s\n", w->v[i]);
		free(out);
		for (size_t i = 0; i < ns; i++)
			menv_matchspec_free(specs[i]);
		free(specs);
	}
	if (!rc && cancel_flag)
		rc = menv_error_set(&err, MENV_EINTR, "interrupted");
	int code = rc ? fail(&err) : 0;
	menv_solver_free(s);
	menv_repodata_req_release(&r[0]);
	menv_repodata_req_release(&r[1]);
	menv_channel_free(ch);
	menv_config_release(&cfg);
	free(cache);
	return code;
}
