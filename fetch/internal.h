/*
 * internal.h - helpers shared by the files of fetch/ and by nothing else: incremental
 * checksums (hash.c), the transfer engine (transfer.c), helpers of repodata.c/shards.c and
 * the package cache's lock (pkgcache.c, pkgclean.c).
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
/* As menv_hasher_init, md5 left out unless `md5` (its digest stays ""): a download whose
 * record carries sha256 and md5 is checked by sha256 and records the record's md5. */
void menv_hasher_init_md5(struct menv_hasher *h, bool md5);
void menv_hasher_update(struct menv_hasher *h, const void *data, size_t len);
/* Writes the digests to `out` and releases the contexts. */
void menv_hasher_final(struct menv_hasher *h, struct menv_hashes *out);
/* Releases the contexts without a result (error paths); safe after _final. */
void menv_hasher_release(struct menv_hasher *h);

/* Receives downloaded bytes; returns 0, or -1 with errno set to stop the transfer. */
typedef int (*menv_fetch_sink)(void *ud, const void *data, size_t len);

/* One transfer of the engine (menv_xfer_run). The caller fills the "in" part after
 * menv_xfer_init and reads the "out" part after the run. */
struct menv_xfer {
	/* in */
	char *url;   /* owned; may hold credentials: never printed */
	char *shown; /* owned; the redacted URL used in messages */
	char *name;  /* owned; the URL's file name (menv_url_basename), shown in progress */
	menv_fetch_sink sink;
	void *ud;
	/* Drops everything the sink got (a server ignored the Range, or a fresh start).
	 * Returns 0 or -1 with errno. NULL: the sink keeps nothing between attempts. */
	int (*restart)(void *ud);
	int64_t offset;   /* bytes the sink holds already: continued with Range */
	int64_t expected; /* the whole file's size in bytes when known (progress), else 0 */
	const char *if_none_match, *if_modified_since; /* conditional request, or NULL */
	const char *authorization; /* a whole "Authorization: ..." header line (OCI), or NULL */
	bool head; /* HEAD: no body, only the headers (content_length); no sink needed */
	/* Called once the transfer ended (x->rc set). Returning 1 runs it again from byte 0
	 * (after restart); 0 keeps the result. May change x->rc/x->err. */
	int (*done)(void *ud, struct menv_xfer *x);
	/* out */
	long status; /* last HTTP status (200, 206, 304, ...), 0 for file:// */
	char *etag, *last_modified, *cache_control; /* response headers (owned) or NULL */
	int rc;                                     /* 0 or MENV_E* */
	struct menv_error err;
	int attempts;           /* attempts made */
	int64_t resumed_at;     /* offset of the last Range request that a 206 honoured, or 0 */
	int64_t content_length; /* the last response's Content-Length (file:// its size), -1 */
	/* private to transfer.c */
	void *priv;
};

void menv_xfer_init(struct menv_xfer *x, const char *url);
void menv_xfer_release(struct menv_xfer *x);

/* Runs the transfers through one curl multi handle, o->threads at a time, with retries and
 * backoff (see menv_fetch_opts). `stop` (may be NULL) is polled like o->cancel but gives
 * "cancelled" rather than "interrupted". With `all_or_nothing`, the first failure abandons
 * the other transfers (rc MENV_EINTR, "cancelled"). Returns 0 when all succeeded, else the
 * first failure's code with its message in `err`. */
int menv_xfer_run(struct menv_xfer *const *xs, size_t n, const struct menv_fetch_opts *o,
                  volatile int *stop, bool all_or_nothing, struct menv_error *err);

/* Downloads `url`, handing each block to `sink` (single transfer, default options).
 * `cancel` (may be NULL) is polled while the transfer runs; non-zero aborts it with
 * MENV_EINTR. A failing sink gives MENV_EIO with its errno. Other errors as menv_fetch_url. */
int menv_fetch_stream(const char *url, menv_fetch_sink sink, void *ud, volatile int *cancel,
                      struct menv_error *err);

/* The URL of `<channel>/<subdir>/<file>`: with credentials (token, auth) when `cred`. */
char *menv_fetch_subdir_file_url(const struct menv_channel *ch, const char *subdir,
                                 const char *file, bool cred);

/* Removes a file or a directory tree (not following symlinks); a missing path is fine.
 * Errors: MENV_EIO. */
int menv_fetch_rmtree(const char *path, struct menv_error *err);
/* mkdir -p (mode 0755 less the umask); existing directories are fine. Errors: MENV_EIO
 * "cannot create the directory 'DIR'" (err may be NULL). */
int menv_fetch_mkdir_p(const char *path, struct menv_error *err);

/* flock(LOCK_EX) on `<pkgs>/.menv.lock` (made when missing; one process at a time writes the
 * package cache) into `*fd`, waiting for it: `waiting` (may be NULL) is told once before that,
 * "waiting for the package cache lock held by pid N" (or the lock's path), and Ctrl-C
 * (`*cancel`, may be NULL) ends the wait. The holder's pid is written into the file. Close
 * `*fd` to release it. Errors: MENV_EIO, MENV_EINTR. */
int menv_pkgcache_lock(const char *pkgs, volatile int *cancel,
                       void (*waiting)(void *ud, const char *msg), void *ud, int *fd,
                       struct menv_error *err);

#endif
