/*
 * txnsmoke.c - stage 7 of the transaction (txn.c): the smoke check after a commit
 * (menv_txn_smoke) and the same check of an existing environment (menv_env_smoke), each with
 * its fingerprint (smokefp.c) made once: to leave out a check whose inputs are unchanged
 * since one that passed, and for the record after it. Whether an environment wants the check
 * at all: menv_env_wants_smoke. Nothing here prints: steps go to the callbacks.
 */
#include <stdio.h>
#include <string.h>

#include "prefix.h"
#include "smoke.h"
#include "txn.h"
#include "txnpriv.h"

bool menv_env_wants_smoke(const struct menv_config *cfg, const char *prefix)
{
	struct menv_prefix_record *recs = NULL;
	struct menv_error err;
	size_t n = 0;
	bool cuda = false;

	if (!cfg->smoke_check || menv_prefix_records_load(prefix, &recs, &n, &err))
		return false;
	for (size_t i = 0; i < n && !cuda; i++)
		cuda = !strcmp(recs[i].name, "cudatoolkit") || !strcmp(recs[i].name, "cuda-nvcc");
	menv_prefix_records_free(recs, n);
	return cuda;
}

/* so->cuda_driver, else the __cuda version menv_virtual_detect finds (in `virt`), or NULL */
static const char *smoke_driver(const struct menv_smoke_opts *so, struct menv_virtual virt[8])
{
	size_t nv = so->cuda_driver ? 0 : menv_virtual_detect(virt, 8);

	for (size_t i = 0; i < nv; i++)
		if (!strcmp(virt[i].name, "__cuda"))
			return virt[i].version;
	return so->cuda_driver;
}

/* The check's fingerprint as it starts (the inputs then: a change while it runs makes the
 * next one run), made once per check: for the unchanged test and for the record after it. */
struct smoke_fp {
	struct menv_smoke_opts o; /* the caller's, with the driver as smoke_driver finds it */
	struct menv_virtual virt[8];
	struct menv_strvec inputs;
	char fp[65];
	bool have; /* false where menv_smoke_fingerprint failed */
};

static void smoke_fp_make(const char *prefix, const struct menv_smoke_opts *so, struct smoke_fp *f)
{
	struct menv_error e = {0};

	f->o = *so;
	f->o.cuda_driver = smoke_driver(so, f->virt);
	f->inputs = (struct menv_strvec)MENV_STRVEC_INIT;
	f->have = !menv_smoke_fingerprint(prefix, menv_smoke_ops_dir(f->o.ops_dir),
	                                  f->o.cuda_driver, f->fp, &f->inputs, &e);
}

/* Whether the check can be left out: so->force is false and the fingerprint `f` equals that
 * of the last check, which passed. Then `res` says so (passed, unchanged, unchanged_since; no
 * steps) and nothing is run or written. False where `f` could not be made. */
static bool smoke_unchanged(const char *prefix, const struct smoke_fp *f,
                            struct menv_smoke_result *res)
{
	char since[32];

	if (f->o.force || !f->have || !menv_smoke_fingerprint_unchanged(prefix, f->fp, since))
		return false;
	memset(res, 0, sizeof(*res));
	res->passed = true;
	res->unchanged = true;
	snprintf(res->unchanged_since, sizeof(res->unchanged_since), "%s", since);
	return true;
}

/* menv_env_smoke with the fingerprint made */
static int smoke_fp_run(const char *prefix, const struct smoke_fp *f, struct menv_smoke_result *res,
                        bool *record_failed, struct menv_error *err)
{
	struct menv_error e2 = {0};
	int rc = menv_smoke_run(prefix, &f->o, res, err);

	if (!rc) {
		*record_failed = menv_smoke_write_record(prefix, res, &e2) != 0;
		if (f->have &&
		    menv_smoke_fingerprint_write(prefix, f->fp, &f->inputs, res->passed, &e2))
			*record_failed = true;
	}
	return rc;
}

int menv_env_smoke(const char *prefix, const struct menv_smoke_opts *so,
                   struct menv_smoke_result *res, bool *record_failed, struct menv_error *err)
{
	struct smoke_fp f;

	smoke_fp_make(prefix, so, &f);
	int rc = smoke_fp_run(prefix, &f, res, record_failed, err);
	menv_strvec_clear(&f.inputs);
	return rc;
}

int menv_txn_smoke(struct menv_txn *t, struct menv_error *err)
{
	const bool force = t->o.smoke_force;
	if (!t->committed || !t->o.smoke || t->plan.remove_env ||
	    (!force && !t->nlink && !t->pip.n && !menv_txn_is_create(t->o.kind)) ||
	    (!force && !menv_env_wants_smoke(t->o.cfg, t->o.prefix)))
		return 0;
	menv_env_unlock(t->lock_fd); /* the smoke check only reads the environment */
	t->lock_fd = -1;
	struct menv_smoke_opts so = {
	        .cb = t->o.cb.smoke,
	        .ctx = t->o.cb.ud,
	        .cancel = t->o.cancel,
	        .force = force,
	};
	struct smoke_fp f; /* one fingerprint (one toolchain probe) for the test and the record */
	int rc = 0;
	smoke_fp_make(t->o.prefix, &so, &f);
	if (smoke_unchanged(t->o.prefix, &f, &t->res.smoke)) {
		t->res.smoke_ran = true; /* a result: unchanged since a check that passed */
		t->res.smoke_record_failed = false;
		goto out;
	}
	if (t->o.cb.event)
		t->o.cb.event(t->o.cb.ud, MENV_ENV_SMOKE, t->o.prefix);
	rc = smoke_fp_run(t->o.prefix, &f, &t->res.smoke, &t->res.smoke_record_failed, err);
	t->res.smoke_ran = rc == 0;
out:
	menv_strvec_clear(&f.inputs);
	return rc;
}
