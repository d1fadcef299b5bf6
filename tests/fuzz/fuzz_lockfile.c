/* libFuzzer harness: every lockfile format (specs/lockfile.c: conda-lock, explicit, pixi,
 * micromamba JSON), selecting its entries, and the writers on what was read; and the
 * conda-lock scanner (specs/lock_scan.c) against libyaml: menv_lockfile_parse and
 * menv_lockfile_parse_libyaml must give the same model or the same error (abort otherwise). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockfile.h"
#include "specs.h"

/* What a reading gave, as one text: "rc message", or the model (menv_lockfile_to_json, the raw
 * channels and platforms, each entry's line). Frees lf. */
static char *outcome(int rc, struct menv_lockfile *lf, const struct menv_error *e)
{
	if (rc)
		return menv_xasprintf("%d %s", rc, e->msg);
	json_t *j = menv_lockfile_to_json(lf), *lines = json_array();
	json_object_set(j, "channels_raw", lf->channels_raw);
	json_object_set(j, "platforms_raw", lf->platforms_raw);
	for (size_t i = 0; i < lf->npkgs; i++)
		json_array_append_new(lines, json_integer((json_int_t)lf->pkgs[i].line));
	json_object_set_new(j, "lines", lines);
	char *d = json_dumps(j, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(j);
	menv_lockfile_free(lf);
	return d ? d : menv_xstrdup("(not dumped)");
}

static void scanner_agrees(const char *data, size_t size)
{
	struct menv_lockfile *a = NULL, *b = NULL;
	struct menv_error ea = {0}, eb = {0};
	int ra = menv_lockfile_parse(data, size, "fuzz.lock", &a, &ea);
	int rb = menv_lockfile_parse_libyaml(data, size, "fuzz.lock", &b, &eb);
	char *da = outcome(ra, a, &ea), *db = outcome(rb, b, &eb);
	if (strcmp(da, db)) {
		fprintf(stderr, "the scanner's reading differs\n  scanner: %s\n  libyaml: %s\n", da,
		        db);
		abort();
	}
	free(da);
	free(db);
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
