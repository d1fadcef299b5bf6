/*
 * example.c - a second front end to libmenv, in the spirit of libgit2's examples/: it
 * creates an environment from an environment file and then installs one more package into
 * it through the transaction engine alone (envs.h), drawing its own one-line progress. It
 * shares no code with cli/: if it can do this, so can any other program.
 *
 *   menv-example CHANNEL ENVFILE PREFIX PACKAGE
 *
 * CHANNEL comes before the file's channels and replaces the configured ones
 * (--override-channels); the smoke check is off. Prints
 * one line per stage and the packages of the environment at the end; exit 0, or 1 with the
 * library's error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envs.h"

struct counts {
	size_t status, fetched, linked, warnings;
	int64_t bytes;
};

static void on_event(void *ud, enum menv_env_event ev, const char *msg)
{
	struct counts *c = ud;
	switch (ev) {
	case MENV_ENV_STATUS: c->status++; break;
	case MENV_ENV_LINK: c->linked++; break;
	case MENV_ENV_WARNING:
	case MENV_ENV_CLOBBER:
		c->warnings++;
		fprintf(stderr, "example: warning: %s\n", msg);
		break;
	default: break;
	}
}

static void on_fetch(void *ud, enum menv_fetch_event ev, const struct menv_record *r)
{
	struct counts *c = ud;
	(void)ev;
	(void)r;
	c->fetched++;
}

static void on_progress(void *ud, int64_t done, int64_t total, size_t finished, size_t n,
                        const struct menv_fetch_item *running, size_t nrunning)
{
	struct counts *c = ud;
	(void)total;
	(void)finished;
	(void)n;
	(void)running;
	(void)nrunning;
	c->bytes = done;
}

/* One transaction: prepare, show the plan's size, commit. */
static int run(struct menv_txn_opts *o, const char *what, struct menv_error *err)
{
	struct menv_txn *t = NULL;
	struct counts c = {0};
	int rc;

	o->cb = (struct menv_txn_callbacks){
	        .event = on_event, .fetch = on_fetch, .progress = on_progress, .ud = &c};
	rc = menv_txn_new(o, &t, err);
	if (!rc)
		rc = menv_txn_prepare(t, err);
	if (!rc) {
		const struct menv_txn_plan *p = menv_txn_plan(t);
		printf("example: %s: plan of %zu to link, %zu to unlink\n", what, p->nlink,
		       p->nunlink);
		rc = menv_txn_commit(t, err);
	}
	if (!rc) {
		const struct menv_txn_result *r = menv_txn_result(t);
		printf("example: %s: %zu packages linked, %zu files, %zu from the package cache "
		       "callback, %zu status lines\n",
		       what, r->stats.packages, r->stats.files, c.fetched, c.status);
	}
	menv_txn_free(t);
	return rc;
}

int main(int argc, char **argv)
{
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_envfile *ef = NULL;
	struct menv_strvec channels = MENV_STRVEC_INIT, specs = MENV_STRVEC_INIT;
	struct menv_prefix_record *recs = NULL;
	size_t n = 0;
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: menv-example CHANNEL ENVFILE PREFIX PACKAGE\n");
		return 2;
	}
	menv_strvec_push(&channels, argv[1]);
	menv_strvec_push(&specs, argv[4]);
	rc = menv_config_load(&cfg, &err);
	if (!rc)
		rc = menv_envfile_load(argv[2], &ef, &err);
	struct menv_txn_opts create = {
	        .kind = MENV_TXN_CREATE,
	        .cfg = &cfg,
	        .prefix = argv[3],
	        .envfile = ef,
	        .channels = &channels,
	        .override_channels = true,
	        .cmdline = "menv-example create",
	};
	if (!rc)
		rc = run(&create, "create", &err);
	struct menv_txn_opts install = {
	        .kind = MENV_TXN_INSTALL,
	        .cfg = &cfg,
	        .prefix = argv[3],
	        .specs = &specs,
	        .channels = &channels,
	        .override_channels = true,
	        .cmdline = "menv-example install",
	};
	if (!rc)
		rc = run(&install, "install", &err);
	if (!rc)
		rc = menv_prefix_records_load(argv[3], &recs, &n, &err);
	for (size_t i = 0; !rc && i < n; i++)
		printf("%s %s %s\n", recs[i].name, recs[i].version, recs[i].build);
	if (rc)
		fprintf(stderr, "example: error: %s\n", err.msg);
	menv_prefix_records_free(recs, n);
	menv_envfile_free(ef);
	menv_strvec_clear(&channels);
	menv_strvec_clear(&specs);
	menv_config_release(&cfg);
	return rc ? 1 : 0;
}
