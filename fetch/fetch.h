/*
 * fetch.h - getting conda artifacts from channels into the package cache.
 *
 * Owns channel transfers (libcurl: file://, http://, https://), checksums (OpenSSL),
 * package archives (libarchive + zstd: `.tar.bz2` and `.conda`, CEP-35), the package cache
 * layout (conda's pkgs_dirs: `<pkgs>/<fn>`, extracted `<pkgs>/<dist>/` with
 * `info/repodata_record.json`, `urls.txt`) and channel indexing (`menv index`, like
 * conda-index). Never writes into a prefix.
 */
#ifndef MENV_FETCH_H
#define MENV_FETCH_H

#include "specs.h"

/* ---------------------------------------------------------------------------------------- */
/* Checksums                                                                                 */

struct menv_hashes {
	char sha256[65]; /* lowercase hex, NUL-terminated */
	char md5[33];
	int64_t size;    /* bytes */
};

/* Hashes a file (sha256 and md5 in one pass). Errors: MENV_ENOTFOUND, MENV_EIO. */
int menv_hash_file(const char *path, struct menv_hashes *out, struct menv_error *err);
/* Hashes a memory block. */
void menv_hash_mem(const void *data, size_t len, struct menv_hashes *out);

/* ---------------------------------------------------------------------------------------- */
/* Transfers                                                                                 */

/* Downloads `url` (file://, http://, https://) into `out` (appended).
 * Errors: MENV_ENOTFOUND (404, or a missing file:// path), MENV_ENET (any other failure,
 * with curl's message and the URL), MENV_EINTR. */
int menv_fetch_url(const char *url, struct menv_buf *out, struct menv_error *err);

/* Fetches `<channel>/<subdir>/repodata.json` into `out`. A missing `noarch` subdir gives an
 * empty repodata (`{}`) like conda; a missing platform subdir is MENV_ENOTFOUND naming the
 * channel. Other errors as menv_fetch_url. */
int menv_fetch_repodata(const struct menv_channel *ch, const char *subdir, struct menv_buf *out,
			struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Archives (CEP-35)                                                                         */

/* Extracts a `.conda` (ZIP holding `info-*.tar.zst` and `pkg-*.tar.zst`) or `.tar.bz2`
 * (whatever its real compression: some are gzip) into the existing directory `dest`.
 * Safe against hostile archives: refuses absolute paths, `..` components, entries written
 * through a symlink, hard links and symlinks whose target leaves `dest`, devices and FIFOs.
 * On error `dest` may hold a partial extraction: callers extract into a temporary directory.
 * Errors: MENV_EPARSE (corrupt or truncated archive, naming it), MENV_EUNSAFE (naming the
 * entry), MENV_EIO. */
int menv_archive_extract(const char *archive, const char *dest, struct menv_error *err);

/* Reads one member (e.g. "info/index.json") of a package archive into `out` without
 * extracting the rest. Errors: MENV_ENOTFOUND when the member is missing, MENV_EPARSE,
 * MENV_EIO. */
int menv_archive_read_member(const char *archive, const char *member, struct menv_buf *out,
			     struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Package cache                                                                             */

/* Progress events of menv_pkgcache_fetch, called from worker threads (serialised by the
 * library: never two at once). `done_bytes`/`total_bytes` are bytes of package files. */
enum menv_fetch_event { MENV_FETCH_CACHED, MENV_FETCH_DOWNLOADED, MENV_FETCH_EXTRACTED };
typedef void (*menv_fetch_cb)(void *ud, enum menv_fetch_event ev, const struct menv_record *r);

/* Makes every record available extracted in the package cache `pkgs_dir`:
 *   - `<pkgs>/<dist>/info/repodata_record.json` present with the same sha256 (or md5): kept;
 *   - else `<pkgs>/<fn>` present with the right hash: extracted;
 *   - else downloaded from r->url to `<pkgs>/<fn>.partial` while hashing, verified against
 *     the record's sha256 (md5 when only md5 is known) and size, then renamed into place.
 * Extraction goes into a temporary directory in `pkgs_dir` renamed to `<pkgs>/<dist>` when
 * complete, so the cache never holds a half-extracted or unverified package. Runs `threads`
 * workers (>= 1). The cache is locked (flock on `<pkgs>/.menv.lock`) while this runs; a busy
 * lock is waited for. Stops at the first failure (other workers finish their file).
 * Errors: MENV_ECHECKSUM (naming the package and both hashes), MENV_ENET, MENV_EPARSE,
 * MENV_EUNSAFE, MENV_EIO, MENV_EINTR (when *cancel became non-zero). */
int menv_pkgcache_fetch(const char *pkgs_dir, struct menv_record *const *recs, size_t n,
			int threads, menv_fetch_cb cb, void *ud, volatile int *cancel,
			struct menv_error *err);

/* The extracted directory of a record in the cache ("<pkgs>/<dist>"). Caller frees. */
char *menv_pkgcache_dir(const char *pkgs_dir, const struct menv_record *r);

/* ---------------------------------------------------------------------------------------- */
/* Channel index (conda-index)                                                               */

struct menv_index_stats {
	size_t packages; /* package files indexed */
	size_t subdirs;  /* repodata.json files written */
};

/* Indexes a channel directory: for each subdir folder of `dir` (and `noarch`, always
 * written), reads `info/index.json` of every `*.conda` and `*.tar.bz2`, adds md5, sha256 and
 * size of the file, and writes `<subdir>/repodata.json` (repodata_version 1, "info.subdir",
 * "packages" and "packages.conda") atomically. Files that are not valid packages are
 * an error naming the file. Errors: MENV_ENOTFOUND, MENV_EPARSE, MENV_EIO. */
int menv_index_channel(const char *dir, struct menv_index_stats *stats, struct menv_error *err);

#endif
