/* libFuzzer harness: package archives (fetch/archive.c): the input is written to a temporary
 * `.conda` (when it starts with a zip signature) or `.tar.bz2` file; info/paths.json and
 * info/index.json are read from it and parsed as menv parses JSON, and the package is
 * extracted into a temporary directory that is removed again. */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch.h"
#include "specs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dir;

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(p);
	else
		unlink(p);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct menv_error err = {0};
	struct menv_buf b = MENV_BUF_INIT;

	if (!dir) {
		const char *tmp = getenv("TMPDIR");
		dir = menv_xasprintf("%s/menv-fuzz-archive-XXXXXX", tmp ? tmp : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	bool conda = size >= 2 && data[0] == 'P' && data[1] == 'K';
	char *pkg = menv_xasprintf("%s/x-1.0-0%s", dir, conda ? ".conda" : ".tar.bz2");
	char *dest = menv_xasprintf("%s/out", dir);
	if (menv_write_file_atomic(pkg, data, size, &err))
		abort();
	const char *members[] = {"info/paths.json", "info/index.json"};
	for (size_t i = 0; i < 2; i++) {
		menv_buf_reset(&b);
		if (menv_archive_read_member(pkg, members[i], &b, &err))
			continue;
		json_t *j = NULL;
		if (!menv_json_parse(b.buf, b.len, 0, members[i], &j, &err)) {
			size_t k;
			json_t *e;
			json_array_foreach(json_object_get(j, "paths"), k, e)
			{
				const char *p = json_string_value(json_object_get(e, "_path"));
				if (p)
					free(menv_utf8_escape(p));
			}
			json_decref(j);
		}
	}
	if (mkdir(dest, 0700) == 0)
		(void)menv_archive_extract(pkg, dest, &err);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(dir, 0700);
	menv_buf_release(&b);
	free(pkg);
	free(dest);
	return 0;
}
