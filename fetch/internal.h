/*
 * internal.h - helpers shared by the files of fetch/ and by nothing else: incremental
 * checksums (hash.c) and streaming transfers with cancellation (transfer.c).
 */
#ifndef MENV_FETCH_INTERNAL_H
#define MENV_FETCH_INTERNAL_H

#include "fetch.h"

/* sha256 + md5 + byte count computed incrementally (OpenSSL EVP). */
struct menv_hasher {
	void *sha256; /* EVP_MD_CTX * */
	void *md5;    /* EVP_MD_CTX *, NULL when the provider has no md5 */
	int64_t size;
};

void menv_hasher_init(struct menv_hasher *h);
void menv_hasher_update(struct menv_hasher *h, const void *data, size_t len);
/* Writes the digests to `out` and releases the contexts. */
void menv_hasher_final(struct menv_hasher *h, struct menv_hashes *out);
/* Releases the contexts without a result (error paths); safe after _final. */
void menv_hasher_release(struct menv_hasher *h);

/* Receives downloaded bytes; returns 0, or -1 with errno set to stop the transfer. */
typedef int (*menv_fetch_sink)(void *ud, const void *data, size_t len);

/* Downloads `url`, handing each block to `sink`. `cancel` (may be NULL) is polled while the
 * transfer runs; non-zero aborts it with MENV_EINTR. A failing sink gives MENV_EIO with its
 * errno. Other errors as menv_fetch_url. */
int menv_fetch_stream(const char *url, menv_fetch_sink sink, void *ud, volatile int *cancel,
		      struct menv_error *err);

/* Removes a file or a directory tree (not following symlinks); a missing path is fine.
 * Errors: MENV_EIO. */
int menv_fetch_rmtree(const char *path, struct menv_error *err);

#endif
