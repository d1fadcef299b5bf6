/*
 * testutil.h - helpers for the fetch/ unit tests: temporary directories, file utilities,
 * corpus paths and small archives built with libarchive's writer (hostile ones included).
 */
#ifndef MENV_FETCH_TESTUTIL_H
#define MENV_FETCH_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "fetch.h"

#define CORPUS      MENV_SHARED "/corpus/packages"
#define ZLIB_DIR    CORPUS "/conda/conda_format_repo/linux-64"
#define ZLIB_CONDA  ZLIB_DIR "/zlib-1.2.11-h7b6447c_3.conda"
#define ZLIB_TARBZ2 ZLIB_DIR "/zlib-1.2.11-h7b6447c_3.tar.bz2"
/* sha256sum / md5sum of the corpus files */
#define ZLIB_CONDA_SHA256  "f33afff2144e1d6c4cf2e3e184937db8bf825b4537df74662aea5ee207b6a31b"
#define ZLIB_CONDA_MD5     "cb23839f06da92ec92c6d2d2d5e0cb4a"
#define ZLIB_CONDA_SIZE    105917
#define ZLIB_TARBZ2_SHA256 "1f07873d6aa0cd18760a7b215d9956f7fa63c2f2761b03f293c659fe982923fa"
#define ZLIB_TARBZ2_MD5    "2e5b81671cc2b53177b94b258b1658b2"
#define ZLIB_TARBZ2_SIZE   122456
#define NANO_TARBZ2        CORPUS "/conda-index/nano-2.4.1-0.tar.bz2"
#define NANO_SHA256        "6b12fced5bc1711a253527b717a6b27eccb7a0b4ff6cf11a0619613ce01e72c3"
#define FLASK_TARBZ2       CORPUS "/conda-index/flask-0.11.1-py_0.tar.bz2"
#define FLASK_SHA256       "8353f3a4a4533ff0c6ce829b90980a01a577b3ac015ebd573fef308f2bfec5a8"
#define FLASK_MD5          "6b06127706cf0ba57c6e13258bb222e7"
#define SPARSE             CORPUS "/rattler/sparse"
#define SYMLINK_CONDA      SPARSE "/symlink-test-1.0.0-0.conda"
#define SYMLINK_SHA256     "e54149984578dc1c0c81fb1cd1f7a6ce869e2e6d85670a8a9cdc5bacdfdcfebf"
#define ZIP64_CONDA        SPARSE "/zip64-test-1.0.0-0.conda"
#define DOTSLASH_CONDA     SPARSE "/dotslash-test-1.0.0-0.conda"

/* A fresh directory under MENV_TEST_TMP (created with parents). Caller frees. */
char *tu_mkdtemp(void);
/* rm -rf that does not follow symlinks. */
void tu_rmtree(const char *path);
bool tu_exists(const char *path); /* lstat succeeds: dangling symlinks exist */
char *tu_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tu_mkdirs(const char *path);
void tu_copy(const char *from, const char *to);
void tu_write(const char *path, const void *data, size_t len);
/* Names in `dir` starting with `prefix` (hidden ones included). */
size_t tu_count_prefixed(const char *dir, const char *prefix);

/* One member of an archive made by the tests. */
enum tu_type { TU_FILE, TU_DIR, TU_SYMLINK, TU_HARDLINK, TU_FIFO, TU_CHARDEV };
struct tu_entry {
	const char *name;
	enum tu_type type;
	const char *arg; /* file contents, or the link target */
};

/* Writes a tar ("bzip2" or "zstd" filter) of `n` entries to `path`. */
void tu_write_tar(const char *path, const char *filter, const struct tu_entry *e, size_t n);
/* Writes a `.conda`: stored ZIP with metadata.json, info-<dist>.tar.zst and
 * pkg-<dist>.tar.zst (pkg omitted when npkg is 0). */
void tu_write_conda(const char *path, const char *dist, const struct tu_entry *info, size_t ninfo,
                    const struct tu_entry *pkg, size_t npkg);

#endif
