/*
 * extract_bench.c - `menv-bench-extract ARCHIVE DEST`: menv's extraction of one package
 * (menv_archive_extract: lbzip2 on PATH for a large `.tar.bz2`, libarchive's bzip2 with
 * MENV_TEST_NO_LBZIP2=1) as a process of its own, for bench/run to time. DEST is created.
 * Exit 0, or 1 with the one-line error on stderr.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "fetch.h"

int main(int argc, char **argv)
{
	struct menv_error err = {0};

	if (argc != 3) {
		fprintf(stderr, "usage: menv-bench-extract ARCHIVE DEST\n");
		return 2;
	}
	mkdir(argv[2], 0755);
	if (menv_archive_extract(argv[1], argv[2], &err)) {
		fprintf(stderr, "menv-bench-extract: %s\n", err.msg);
		return 1;
	}
	return 0;
}
