/* libFuzzer harness: MatchSpec, version and version-spec parsing and matching (specs/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "specs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = menv_xstrndup((const char *)data, size);
	struct menv_error err = {0};
	struct menv_matchspec *ms = NULL;
	struct menv_version *v = NULL;
	struct menv_version_spec *vs = NULL;

	if (!menv_matchspec_parse(s, &ms, &err)) {
		char *a = menv_matchspec_str(ms), *b = menv_matchspec_str_full(ms);
		json_t *rec = json_pack("{s:s, s:s, s:s, s:i, s:s, s:[s]}", "name", "numpy",
		                        "version", "1.26.4", "build", "py312h_0", "build_number", 0,
		                        "subdir", "linux-64", "depends", "python >=3.12");
		(void)menv_matchspec_match_json(ms, rec);
		json_decref(rec);
		struct menv_matchspec *again = NULL;
		if (!menv_matchspec_parse(b, &again, &err))
			menv_matchspec_free(again);
		free(a);
		free(b);
		menv_matchspec_free(ms);
	}
	if (!menv_version_parse(s, &v, &err)) {
		struct menv_version *one = NULL;
		if (!menv_version_parse("1.0", &one, &err)) {
			(void)menv_version_cmp(v, one);
			(void)menv_version_startswith(v, one);
			(void)menv_version_startswith(one, v);
			menv_version_free(one);
		}
		(void)menv_version_str(v);
	}
	if (!menv_version_spec_parse(s, &vs, &err)) {
		(void)menv_version_spec_match(vs, "1.0");
		(void)menv_version_spec_eval(vs, "2.0.0post1");
		(void)menv_version_spec_match(vs, s);
		if (v)
			(void)menv_version_spec_match_parsed(vs, v);
		menv_version_spec_free(vs);
	}
	(void)menv_matchspec_build_number_ok(s, 3);
	menv_version_free(v);
	free(s);
	return 0;
}
