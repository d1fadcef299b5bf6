/* libFuzzer harness: every lockfile format (specs/lockfile.c: conda-lock, explicit, pixi,
 * micromamba JSON), selecting its entries, and the writers on what was read; and the
 * conda-lock scanner (specs/lock_scan.c) against libyaml: menv_lockfile_parse and
 * menv_lockfile_parse_libyaml must give the same model or the same error (abort otherwise). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock_outcome.h"
#include "lockfile.h"
#include "specs.h"

/* The scanner and libyaml give the same model or the same error (lock_outcome.c). */
static void scanner_agrees(const char *data, size_t size)
{
	char *why = menv_test_lock_differs(data, size, "fuzz.lock");
	if (why) {
		fprintf(stderr, "%s\n", why);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct menv_lockfile *lf = NULL, *again = NULL;
	struct menv_error err = {0};

	(void)menv_lockfile_detect((const char *)data, size);
	if (menv_lockfile_detect((const char *)data, size) == MENV_LOCK_CONDA_LOCK)
		scanner_agrees((const char *)data, size);
	if (menv_lockfile_parse((const char *)data, size, "fuzz.lock", &lf, &err))
		return 0;
	for (size_t i = 0; i < lf->platforms.n && i < 8; i++) {
		const struct menv_lock_package **v = NULL;
		size_t n = 0;
		if (!menv_lockfile_select(lf, NULL, lf->platforms.v[i], &v, &n, &err))
			free(v);
		struct menv_buf b = MENV_BUF_INIT;
		menv_lockfile_write_explicit(lf, lf->platforms.v[i], &b);
		menv_buf_release(&b);
	}
	json_t *j = menv_lockfile_to_json(lf);
	free(json_dumps(j, 0));
	json_decref(j);
	struct menv_buf b = MENV_BUF_INIT;
	if (!menv_lockfile_write_conda_lock(lf, &b, &err) &&
	    !menv_lockfile_parse(b.buf, b.len, "written.lock", &again, &err))
		menv_lockfile_free(again);
	menv_buf_release(&b);
	menv_lockfile_free(lf);
	return 0;
}
