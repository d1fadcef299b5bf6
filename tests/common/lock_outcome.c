/* The outcome of a lockfile reading as one text (lock_outcome.h): shared by the unit test of
 * the conda-lock scanner and the lockfile fuzzer, so that both compare the same things. */
#include <stdlib.h>
#include <string.h>

#include "lock_outcome.h"

char *menv_test_lock_outcome(int rc, struct menv_lockfile *lf, const struct menv_error *e)
{
	if (rc) {
		menv_lockfile_free(lf);
		return menv_xasprintf("%d %s", rc, e->msg);
	}
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

char *menv_test_lock_differs(const char *data, size_t len, const char *src)
{
	struct menv_lockfile *a = NULL, *b = NULL;
	struct menv_error ea = {0}, eb = {0};
	int ra = menv_lockfile_parse(data, len, src, &a, &ea);
	int rb = menv_lockfile_parse_libyaml(data, len, src, &b, &eb);
	char *da = menv_test_lock_outcome(ra, a, &ea), *db = menv_test_lock_outcome(rb, b, &eb);
	char *why = NULL;
	if (strcmp(da, db))
		why = menv_xasprintf(
		        "the scanner's reading differs\n  scanner: %.2000s\n  libyaml: "
		        "%.2000s",
		        da, db);
	free(da);
	free(db);
	return why;
}
