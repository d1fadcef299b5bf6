/* libFuzzer harness: repodata.json (specs/record.c), each record's dependencies read as
 * MatchSpecs the way the solver reads them. */
#include <stdint.h>
#include <stdlib.h>

#include "specs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char name[] = "fuzz", base[] = "file:///fuzz/channel", scheme[] = "file",
	            loc[] = "/fuzz/channel";
	struct menv_channel ch = {
	        .name = name, .base_url = base, .scheme = scheme, .location = loc};
	struct menv_repodata *rd = NULL;
	struct menv_error err = {0};

	if (menv_repodata_parse((const char *)data, size, "repodata.json", &ch, "linux-64", &rd,
	                        &err))
		return 0;
	for (size_t i = 0; i < rd->n && i < 64; i++) {
		free(menv_record_dist(&rd->recs[i]));
		size_t k;
		json_t *d;
		json_array_foreach(menv_record_depends(&rd->recs[i]), k, d)
		{
			struct menv_matchspec *ms = NULL;
			if (json_is_string(d) &&
			    !menv_matchspec_parse(json_string_value(d), &ms, &err))
				menv_matchspec_free(ms);
		}
		(void)menv_record_constrains(&rd->recs[i]);
	}
	menv_repodata_free(rd);
	return 0;
}
