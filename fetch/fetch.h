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
	int64_t size; /* bytes */
};

/* Hashes a file (sha256 and md5 in one pass), polling the cancel flag (menv_cancel_flag_set)
 * every 64 KiB: a large package is not hashed to its end after Ctrl-C. Errors:
 * MENV_ENOTFOUND, MENV_EIO, MENV_EINTR. */
int menv_hash_file(const char *path, struct menv_hashes *out, struct menv_error *err);
/* Hashes a memory block. */
void menv_hash_mem(const void *data, size_t len, struct menv_hashes *out);

/* ---------------------------------------------------------------------------------------- */
/* Transfers                                                                                 */

/* How transfers run. Every transfer goes through one libcurl multi handle per call, with up
 * to `threads` at once; a failed attempt (timeout, refused or dropped connection, HTTP 408,
 * 429, 5xx, a body shorter than announced) is retried up to `max_retries` times, waiting
 * backoff_factor * 2^(k-1) seconds before retry k, continuing with a Range request where the
 * bytes received so far can be kept. Credentials in URLs and ~/.netrc ($NETRC) are used;
 * URLs in messages are redacted (menv_url_redact). Strings are borrowed. */
/* One running transfer, as the progress callback sees it. */
struct menv_fetch_item {
	const char *name;    /* the file's name (last part of the URL, credentials never shown) */
	int64_t done, total; /* bytes held so far; the whole file's size, 0 when unknown */
};

struct menv_fetch_opts {
	int threads;            /* parallel transfers, >= 1 (download_threads) */
	int max_retries;        /* retries after the first attempt (remote_max_retries) */
	double backoff_factor;  /* seconds (remote_backoff_factor) */
	double connect_timeout; /* seconds (remote_connect_timeout_secs) */
	double read_timeout;    /* seconds without a byte that fail an attempt */
	bool ssl_verify;        /* false: accept any certificate */
	const char *ca_bundle;  /* CA file or directory, NULL: the system's */
	const char *client_cert, *client_key; /* PEM files or NULL */
	const char *proxy_http, *proxy_https; /* NULL: libcurl's http_proxy/https_proxy */
	/* repodata */
	const char *cache_dir; /* <pkgs>/cache; NULL: repodata is not cached */
	long repodata_ttl;     /* local_repodata_ttl: 1 max-age, 0 always check, N seconds */
	bool offline;          /* only the cache (and file:// URLs) */
	/* with offline: a non-file subdir with no cached repodata reads as empty (`{}`, the
	 * request's offline_empty set), as conda's RepodataFetch.fetch_latest returns {} for it;
	 * false (default): MENV_ENOTFOUND naming its URL */
	bool offline_uncached_empty;
	bool use_zst; /* try repodata.json.zst first */
	/* Largest repodata accepted, in bytes once decompressed (repodata_max_bytes); <= 0:
	 * MENV_REPODATA_MAX_BYTES_DEFAULT (2 GiB). A .zst that inflates beyond it stops there. */
	int64_t repodata_max_bytes;
	/* true: a subdir whose bytes lie in a file (a file:// channel's repodata.json, or the
	 * cache entry) is not read into memory: the request's `path` names that file and its
	 * `json` stays empty; a download streams (checked) into a temporary file in the cache,
	 * renamed over the entry when good and removed when not. false (default): `json` holds
	 * the bytes, `path` is NULL. */
	bool repodata_as_file;
	volatile int *cancel; /* non-zero (Ctrl-C) stops all transfers: MENV_EINTR; or NULL */
	/* packages: every package cache to look in, in order (conda's pkgs_dirs; the one
	 * written may be among them), or NULL: only the one written. Borrowed. */
	const struct menv_strvec *pkgs_dirs;
	/* packages: the channels the user gave a token or user:password to
	 * (menv_channel_credentials), or NULL. A record whose own channel has none, and whose
	 * URL (a lock's, an explicit file's: written without credentials) lies under one of
	 * these, is downloaded with that channel's credentials, in memory
	 * (menv_channel_credentials_for). Borrowed. */
	const struct menv_channel *const *creds;
	size_t ncreds;
	/* n bools parallel to the records of menv_pkgcache_fetch_opts, or NULL: true where this
	 * process found the package extracted and intact in the cache written moments before
	 * (menv_pkgcache_has_each's `here`): its files are not stat'ed again there (its
	 * info/repodata_record.json is still read and compared). Borrowed. */
	const bool *intact;
	/* true: a package file is checked against every hash its record gives (md5 and sha256),
	 * not only the sha256: the records are a lockfile's, whose hashes a person may have
	 * edited (issue 22). Costs an md5 of each download. An extracted entry whose record
	 * lacks one of them cannot vouch for it: its file is verified again (or downloaded). */
	bool all_hashes;
	/* the records are a lock's (their name, version and build the lock's word, not a
	 * channel's): a package extracted for one whose info/index.json names another package
	 * gets no info/repodata_record.json, so that the cache never vouches for it (the
	 * create's completion, menv_lockrecs_complete, reads index.json and refuses it). */
	bool lock_records;
	/* Progress of a batch of transfers, about every 100 ms and once at its end, on the
	 * calling thread (NULL: none): bytes held so far, the expected total in bytes (0 when
	 * unknown), transfers finished and in all, and the transfers running now (`running`,
	 * `nrunning`: borrowed for the call only). */
	void (*progress)(void *ud, int64_t done, int64_t total, size_t finished, size_t n,
	                 const struct menv_fetch_item *running, size_t nrunning);
	void *progress_ud;
	/* Told once, before menv_pkgcache_fetch waits for the package cache lock another
	 * process holds ("waiting for the package cache lock held by pid N"); or NULL. */
	void (*lock_waiting)(void *ud, const char *msg);
	void *lock_waiting_ud;
};

/* Defaults as conda's: 5 threads, 3 retries, backoff 1 s, connect 9.15 s, read 60 s,
 * verification on, ttl 1, zst on, no cache. */
void menv_fetch_opts_init(struct menv_fetch_opts *o);
/* The settings of `cfg` (borrowed: cfg must outlive o); cache_dir stays NULL. */
void menv_fetch_opts_from_config(struct menv_fetch_opts *o, const struct menv_config *cfg);

/* Downloads `url` (file://, http://, https://) into `out` (appended) with default options.
 * Errors: MENV_ENOTFOUND (404, 410, or a missing file:// path), MENV_ENET (any other
 * failure after the retries, with curl's message and the URL), MENV_EINTR. */
int menv_fetch_url(const char *url, struct menv_buf *out, struct menv_error *err);
/* sizes.c: the size in bytes of each of `n` files at `urls` (file://, http(s)://; credentials
 * in a URL are used, never shown), learned without downloading them: a HEAD request's
 * Content-Length (a file://'s size), o->threads at a time, without retries. sizes[i] is set
 * to the size, or left as it is when the server names none or the request fails (the
 * download will say why). For the plan of a lockfile install whose entries carry no size
 * (conda-lock v1, explicit). Never fails; stops early when o->cancel is set. */
void menv_fetch_sizes(const char *const *urls, int64_t *sizes, size_t n,
                      const struct menv_fetch_opts *o);
/* As menv_fetch_url with options (o may be NULL for the defaults). */
int menv_fetch_url_opts(const char *url, const struct menv_fetch_opts *o, struct menv_buf *out,
                        struct menv_error *err);

/* Fetches `<channel>/<subdir>/repodata.json` into `out` with default options and no cache.
 * A missing `noarch` subdir gives an empty repodata (`{}`); a missing platform subdir is
 * MENV_ENOTFOUND naming the channel, the subdir and the URL. Other errors as menv_fetch_url. */
int menv_fetch_repodata(const struct menv_channel *ch, const char *subdir, struct menv_buf *out,
                        struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Repodata with a cache (conda's layout and HTTP semantics; CEP-36 and its .zst)            */

/* One channel subdir to load. */
struct menv_repodata_req {
	const struct menv_channel *channel; /* in, borrowed */
	const char *subdir;                 /* in, borrowed */
	struct menv_buf json;               /* out: the repodata.json bytes */
	char *url;             /* out: the repodata URL the bytes stand for, redacted (owned) */
	int rc;                /* out: 0 or a MENV_E* code for this subdir */
	struct menv_error err; /* out: details when rc != 0 */
	bool from_cache;       /* out: served from the cache without asking the server */
	bool not_modified;     /* out: the server answered 304 to a conditional request */
	bool zst;              /* out: the bytes travelled as repodata.json.zst */
	bool missing;          /* out: the subdir does not exist (404) */
	bool offline_empty; /* out: offline, nothing cached: read as `{}` (o->offline_uncached_empty) */
	char *path; /* out, with o->repodata_as_file: the file holding the bytes (owned), else NULL */
};

/* Loads several channel subdirs at once, transfers in parallel. With o->cache_dir each
 * subdir is cached as conda does: `<cache>/<first 8 hex of md5(subdir URL + "/")>.json` (the
 * decompressed JSON) and `<same>.info.json` (url, etag, mod, cache_control, size, mtime_ns,
 * refresh_ns, has_zst). A cached copy is used without a request while fresh (o->repodata_ttl:
 * 1 = Cache-Control max-age, 0 = never, N = N seconds), else revalidated with If-None-Match /
 * If-Modified-Since (304 keeps it). o->offline uses the cache alone (MENV_ENOTFOUND when
 * there is none, or `{}` with offline_empty set under o->offline_uncached_empty). repodata.json.zst is tried first (o->use_zst) and decompressed while it
 * streams; any 4xx but 416 for it (conda/gateways/repodata/zstd.py: a bucket answers 403 for
 * a missing key) falls back to repodata.json and is remembered for 14 days; a subdir without
 * repodata.json is read from repodata.json.bz2 (and over file:// from its .zst, then .bz2),
 * decompressed in memory. New bytes
 * are checked to be one JSON object (RFC 8259, a streaming check while they arrive: no tree is
 * built) before the cache entry is replaced (atomically: the JSON first, then its state); a
 * failure leaves the previous entry as it was. Decompressed bytes beyond
 * o->repodata_max_bytes stop the transfer: MENV_EUNSUPPORTED naming the URL and the limit.
 * A file:// channel's repodata.json is never copied into the cache; with o->repodata_as_file
 * it is not even read (only stat'ed: its reader, libsolv's, checks it), else it is read and
 * checked as downloads are.
 * Missing subdirs (404, missing = true): with both subdirs of a channel requested, one missing
 * gives `{}` (a noarch-only channel works, as in conda) and both missing is MENV_ENOTFOUND
 * "channel '<name>' not found" naming the URL; a platform subdir requested without its noarch
 * is MENV_ENOTFOUND naming the subdir and the URL; a lone noarch gives `{}`. Returns 0 when every request succeeded, else the first failure's code
 * (each request holds its own rc and err; `err` gets the first). Truncated or corrupt .zst and
 * malformed JSON are MENV_EPARSE naming the URL (and the byte offset). Release each request
 * with menv_repodata_req_release(). */
int menv_fetch_repodata_many(struct menv_repodata_req *reqs, size_t n,
                             const struct menv_fetch_opts *o, struct menv_error *err);
void menv_repodata_req_release(struct menv_repodata_req *r);

/* The cache file name conda uses for a subdir URL ("<8 hex>.json"). Caller frees. */
char *menv_repodata_cache_name(const char *subdir_url);

/* ---------------------------------------------------------------------------------------- */
/* Sharded repodata (CEP-16)                                                                 */

/* Loads only the repodata reachable from `roots` (package names) from channel subdirs that
 * serve `repodata_shards.msgpack.zst`: the index (kept in `<cache>/<8 hex>.shards.msgpack.zst`
 * for offline runs and failing servers), then the shards of the root names, then recursively
 * of every name in their records' `depends` (across all the given subdirs, in parallel rounds;
 * "python" also reaches "pip", as conda's add_pip_as_python_dependency does). Shards are content-addressed: each is
 * checked against its sha256 and cached as `<cache>/shards/<sha256>.msgpack.zst`.
 * Each request's `json` receives a repodata.json document (info.subdir, info.base_url when
 * the index sets one, packages, packages.conda) holding exactly the records of the reached
 * names, equal to the full repodata.json filtered to those names.
 * A subdir without a shard index gets rc MENV_ENOTFOUND and missing = true (the caller falls
 * back to full repodata). Errors: MENV_ENET, MENV_ECHECKSUM (a shard's hash), MENV_EPARSE
 * (msgpack or zstd), MENV_EINTR, as per request; returns the first. */
int menv_fetch_repodata_sharded(struct menv_repodata_req *reqs, size_t n,
                                const struct menv_strvec *roots, const struct menv_fetch_opts *o,
                                struct menv_error *err);

/* Decodes one msgpack document (CEP-16's encoding) into JSON: maps, arrays, strings,
 * integers, floats, booleans, nil; binary strings become lowercase hex strings (sha256, md5).
 * Errors: MENV_EPARSE naming `src` and the byte offset. `*out` is a new reference. */
int menv_msgpack_to_json(const void *data, size_t len, const char *src, json_t **out,
                         struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Archives (CEP-35)                                                                         */

/* Extracts a `.conda` (ZIP holding `info-*.tar.zst` and `pkg-*.tar.zst`) or `.tar.bz2`
 * (whatever its real compression: some are gzip) into the existing directory `dest`.
 * Safe against hostile archives: refuses absolute paths, `..` components, entries written
 * through a symlink, hard links and symlinks whose target leaves `dest`, devices and FIFOs.
 * On error `dest` may hold a partial extraction: callers extract into a temporary directory.
 * A `.tar.bz2` of 1.8 MB or more is decoded by `lbzip2` (on every core) when it is on PATH,
 * by libarchive's bzip2 otherwise; the tar reader and its checks are the same either way.
 * The cancel flag (menv_cancel_flag_set) is polled between data blocks and entries.
 * Errors: MENV_EPARSE (corrupt or truncated archive, naming it; lbzip2's own message when it
 * failed), MENV_EUNSAFE (naming the entry), MENV_EIO, MENV_EINTR (interrupted). */
int menv_archive_extract(const char *archive, const char *dest, struct menv_error *err);

/* Reads one member (e.g. "info/index.json") of a package archive into `out` without
 * extracting the rest. Errors: MENV_ENOTFOUND when the member is missing, MENV_EPARSE,
 * MENV_EIO. */
int menv_archive_read_member(const char *archive, const char *member, struct menv_buf *out,
                             struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Package cache                                                                             */

/* Progress events of menv_pkgcache_fetch, called from worker threads (serialised by the
 * library: never two at once). */
enum menv_fetch_event { MENV_FETCH_CACHED, MENV_FETCH_DOWNLOADED, MENV_FETCH_EXTRACTED };
typedef void (*menv_fetch_cb)(void *ud, enum menv_fetch_event ev, const struct menv_record *r);

/* Makes every record available extracted in a package cache, writing only into `pkgs_dir`
 * (the first writable entry of pkgs_dirs, as conda's first_writable):
 *   - an entry of o->pkgs_dirs other than `pkgs_dir` holds `<dist>/` (menv_pkgcache_has),
 *     the entries in their order: used where it is, nothing written there (a read-only
 *     cache: no lock, no urls.txt, no repodata_record.json completed);
 *   - `<pkgs>/<dist>/` holds it (menv_pkgcache_has; an entry left by conda or micromamba
 *     counts as well): kept, and a hash or size the record has and its repodata_record.json
 *     lacks is added there (best effort);
 *   - else `<pkgs>/<fn>`, or `<fn>` in another entry of o->pkgs_dirs, present with the right
 *     hash: extracted into `pkgs_dir` (a stale file is left alone until a verified download
 *     replaces it; with o->all_hashes a `<pkgs>/<fn>` that one of the record's hashes names
 *     and the other not fails the fetch: MENV_ECHECKSUM, nothing changed);
 *   - else downloaded from r->url (with the credentials of r->channel, if any) to
 *     `<pkgs>/<fn>.partial` while hashing, verified against the record's sha256 (md5 when only
 *     md5 is known; both with o->all_hashes) and size, then renamed into place. A `.partial` left by an interrupted run
 *     is continued with a Range request when the record's size or hash is known (and fetched
 *     again from byte 0 if the result does not verify).
 * All downloads run through one libcurl multi handle, `threads` at a time, with the retries
 * of menv_fetch_opts; extraction runs on `threads` worker threads as files arrive. Extraction
 * goes into a temporary directory in `pkgs_dir` renamed to `<pkgs>/<dist>` when complete, so
 * the cache never holds a half-extracted or unverified package. The cache is locked (flock on
 * `<pkgs>/.menv.lock`) while this runs; a busy lock is waited for. Stops at the first failure
 * (transfers in flight are abandoned and their partial files removed).
 * Errors: MENV_ECHECKSUM (naming the package and both hashes), MENV_ENOTFOUND (404, naming the
 * URL), MENV_ENET, MENV_EPARSE, MENV_EUNSAFE, MENV_EIO (e.g. a full disk, naming the file),
 * MENV_EINTR (when *cancel became non-zero). */
int menv_pkgcache_fetch(const char *pkgs_dir, struct menv_record *const *recs, size_t n,
                        int threads, menv_fetch_cb cb, void *ud, volatile int *cancel,
                        struct menv_error *err);
/* As menv_pkgcache_fetch with transfer options (o->threads and o->cancel are used; o may be
 * NULL for the defaults). */
int menv_pkgcache_fetch_opts(const char *pkgs_dir, struct menv_record *const *recs, size_t n,
                             const struct menv_fetch_opts *o, menv_fetch_cb cb, void *ud,
                             struct menv_error *err);

/* The package cache's users lock (flock on `<pkgs>/.menv-users.lock`, made with the cache
 * folder when missing): a transaction holds it shared from before its fetch until its
 * packages are linked, `menv clean` exclusive while it decides what is unused and removes
 * it, so a clean never takes a package from under a create or install that is about to
 * link it. A busy lock calls `waiting` once (may be NULL; the message names the holder's pid
 * when known) and waits. Release with
 * menv_pkgcache_unuse(`*fd`). Errors: MENV_EIO, MENV_EINTR (when *cancel became non-zero). */
int menv_pkgcache_use(const char *pkgs_dir, bool exclusive, volatile int *cancel,
                      void (*waiting)(void *ud, const char *msg), void *ud, int *fd,
                      struct menv_error *err);
void menv_pkgcache_unuse(int fd);
/* The cache lock (`<pkgs>/.menv.lock`, the one menv_pkgcache_fetch and clean hold) taken
 * without waiting, for a short write into the cache (the .pyc of noarch python packages,
 * envs/pyccache.c): 0 with `*fd` holding it (close it to release), MENV_ELOCKED when another
 * process holds it, MENV_EIO when it cannot be opened. Never creates `pkgs_dir`. */
int menv_pkgcache_trylock(const char *pkgs_dir, int *fd, struct menv_error *err);

/* The id of a process that holds a flock(2) on the file open as `fd` (the lock files of the
 * package cache and of environments), as /proc/locks (Linux, proc(5)) names the holders of
 * its inode; else, when `pid_in_file` (the holders take it exclusively and write their pid
 * with menv_flock_note_pid), the number the file starts with. 0 when unknown. */
long menv_flock_holder(int fd, bool pid_in_file);
/* Writes this process's id ("4242\n") into the lock file `fd` it holds exclusively (best
 * effort: it only names the holder to those who wait). */
void menv_flock_note_pid(int fd);

/* What menv_pkgcache_clean removes (conda clean's options). */
enum {
	MENV_CLEAN_TARBALLS = 1, /* package files: <pkgs>/<fn> */
	MENV_CLEAN_PACKAGES = 2, /* extracted packages (with info/index.json) not in `keep` */
	MENV_CLEAN_INDEX = 4,    /* cached repodata, its state files, .solv and shards */
	MENV_CLEAN_TEMP = 8,     /* <fn>.partial, *.tmp-XXXXXX extractions and writes, a package's
	                          * .menv-pyc/.tmp-XXXXXX (--locks) */
};
struct menv_clean_stats {
	size_t removed; /* files and directories removed (or, dry run, to remove) */
	int64_t bytes;  /* disk space they took, in bytes */
};
/* Called for each removed path with the bytes it took on disk. */
typedef void (*menv_clean_cb)(void *ud, const char *path, int64_t bytes);

/* Removes from the package cache, holding its lock (so no menv process is fetching or
 * extracting meanwhile), what `what` selects. `keep` lists the extracted package dirs
 * ("<dist>") still used by an environment; they are never removed. With `dry_run` nothing
 * is removed, but cb and stats report what would be. A missing cache is not an error.
 * A kill at any moment leaves each entry whole or gone: a folder is renamed to a temporary
 * name (`.<name>.tmp-XXXXXX`, which the next fetch or clean removes) before it is removed.
 * Errors: MENV_EIO, MENV_EINTR (while waiting for the lock). */
int menv_pkgcache_clean(const char *pkgs_dir, unsigned what, const struct menv_strvec *keep,
                        bool dry_run, menv_clean_cb cb, void *ud, struct menv_clean_stats *st,
                        struct menv_error *err);

/* The extracted directory of a record in the cache ("<pkgs>/<dist>"). Caller frees. */
char *menv_pkgcache_dir(const char *pkgs_dir, const struct menv_record *r);
/* The URL a record's package is downloaded from: its url with its channel's token and
 * user:password, else (a lock's URL, written without them) those of the channel of o->creds
 * it lies under (`o` may be NULL). Holds credentials: for the transfer only, never printed
 * or stored. Caller frees. */
char *menv_pkgcache_url(const struct menv_record *r, const struct menv_fetch_opts *o);
/* Where a record is extracted among the package caches `dirs` (pkgs_dirs, in order; NULL:
 * none): "<dir>/<dist>" of the first that holds it (menv_pkgcache_has), else that path in
 * `pkgs_dir` (the cache written, taken unchecked when no entry follows it), as
 * menv_pkgcache_fetch_opts chose. Conda links from the first pkgs_dirs entry that has the
 * package. Caller frees. Reads only. */
char *menv_pkgcache_locate(const char *pkgs_dir, const struct menv_strvec *dirs,
                           const struct menv_record *r);
/* For each of the `n` records `recs`: whether `pkgs_dir` or any entry of `dirs` (may be
 * NULL) holds it (menv_pkgcache_has), into has[i] (`has` holds n bools). Each cache folder is
 * listed once, and only the records whose `<dist>` it lists are checked there: a plan of
 * 100,000 records that no cache holds costs one readdir a cache, not 100,000 failed opens.
 * A folder that cannot be listed but may be searched (no read permission) has each record
 * checked. With `here` (n bools, may be NULL): here[i] true where `pkgs_dir` itself is the
 * folder found holding record i (for menv_fetch_opts.intact). The records of a folder are
 * checked on up to 4 threads (as many as there are CPUs). `all`: every hash a record has
 * must be in the entry's record too (a lockfile's, as menv_fetch_opts.all_hashes; an entry
 * without one is a miss, its file verified again). Reads only. */
void menv_pkgcache_has_each(const char *pkgs_dir, const struct menv_strvec *dirs,
                            const struct menv_record *const *recs, size_t n, bool all, bool *has,
                            bool *here);

/* The JSON of a package's metadata file `path` (info/paths.json, info/repodata_record.json),
 * parsed once per process and handed out again while the file keeps its identity (device,
 * inode, size, mtime, ctime: one stat): a file rewritten or changed is parsed again. Returns a
 * new reference that the caller must treat as read-only (json_copy before changing it), or
 * NULL with err set as menv_json_load_file sets it (err may be NULL). Thread-safe. */
json_t *menv_pkgmeta_load(const char *path, struct menv_error *err);
/* The parse of `path` that menv_pkgmeta_load last handed out in this process (its stat
 * then said the file was the one parsed), without a stat now; NULL when none is kept or menv
 * has written the file since (menv_pkgmeta_forget). For a file this process checked a moment
 * ago under the package cache's users lock (menv_pkgcache_use): a lock create's completion
 * of the records the cache check and the fetch have just read. New reference, read-only.
 * Thread-safe. */
json_t *menv_pkgmeta_kept(const char *path);
/* Forgets what menv_pkgmeta_load parsed of `path`: called after menv writes that file. */
void menv_pkgmeta_forget(const char *path);
/* Drops every cached file of menv_pkgmeta_load (references handed out stay valid). */
void menv_pkgmeta_clear(void);
/* The lstat of one file of an extracted package, as the cache's check saw it. */
struct menv_pkgfile_st {
	bool have; /* false: not stat'ed (not a hardlink entry, or the stat failed) */
	mode_t mode;
	struct timespec atim, mtim;
};
/* Keeps `v` (n entries, one per entry of paths.json's "paths", in order; taken over, freed
 * here) beside the parse `json` of `path` that menv_pkgmeta_load handed out, so that the link
 * need not stat each file again; dropped when the parse is not the one kept. Thread-safe. */
void menv_pkgmeta_keep_stats(const char *path, json_t *json, struct menv_pkgfile_st *v, size_t n);
/* A copy of the stats kept beside the parse `json` of `path` (n entries into *n), or NULL
 * when none are (another parse, or none kept). Caller frees. Thread-safe. */
struct menv_pkgfile_st *menv_pkgmeta_stats(const char *path, json_t *json, size_t *n);

/* One entry of an extracted package's info/paths.json in its compact form (pathscache.c):
 * the strings belong to the menv_paths they came from; NULL where the key is absent. */
struct menv_pathent {
	const char *path;        /* "_path" */
	const char *path_type;   /* "path_type" */
	const char *sha256;      /* "sha256" */
	const char *placeholder; /* "prefix_placeholder" */
	const char *file_mode;   /* "file_mode" */
	int64_t size;            /* "size_in_bytes", -1 when absent */
	int no_link;             /* "no_link": -1 absent, 0 false, 1 true */
};
struct menv_paths;
struct menv_paths_entries {
	size_t n;
	const struct menv_pathent *e;
};
/* The entries of `<pkgdir>/info/paths.json` (out->n, out->e, valid while the returned
 * reference is held; menv_paths_unref), read from the compact file `<pkgdir>/.menv-paths`
 * when it was made from paths.json as it is now (identity: device, inode, size, mtime,
 * ctime; length and checksum whole), else parsed from paths.json (menv_pkgmeta_load) and,
 * where a compact file is (damaged or stale), that one written again (a temporary file
 * renamed into place; best effort: a read-only cache keeps the old). Kept per process while paths.json keeps its identity. NULL
 * when there is no paths.json, it does not parse, or it holds a key or a value the compact
 * layout does not (the caller reads the JSON then), and under MENV_TEST_NO_PATHS_CACHE (a
 * test hook). Thread-safe. */
struct menv_paths *menv_paths_load(const char *pkgdir, struct menv_paths_entries *out);
void menv_paths_unref(struct menv_paths *p);
/* menv_paths_load of a package menv has just extracted into `pkgdir`: its compact file is
 * written (where paths.json fits the layout), with the name, version and build of the
 * package's info/index.json and that file's identity (device, inode, size, mtime, ctime). */
struct menv_paths *menv_paths_made(const char *pkgdir);
/* The name, version and build of the package extracted in `pkgdir` as its info/index.json
 * gives them (conda's package format, index.json), from the compact file where menv read
 * them when it wrote it: true with out[0..2] (the caller frees each) only while index.json
 * still has the identity it had then (one stat; a file rewritten, replaced or changed in
 * place has another, as has a compact file of another folder copied here). False, out
 * untouched, where none is kept (a folder another tool extracted, no paths.json, one the
 * layout cannot hold, an old compact file not yet written again) or index.json changed
 * since: the caller reads index.json itself. Thread-safe. */
bool menv_paths_index_ident(const char *pkgdir, char *out[3]);
/* menv_pkgmeta_keep_stats and menv_pkgmeta_stats for a compact list (one per entry;
 * `v` taken over; the copy returned is the caller's, NULL when none was kept). */
void menv_paths_keep_stats(struct menv_paths *p, struct menv_pkgfile_st *v);
struct menv_pkgfile_st *menv_paths_stats(struct menv_paths *p);
/* Drops every list menv_paths_load keeps (references handed out stay valid). */
void menv_paths_clear(void);
/* Whether an extracted package still holds what its info/paths.json lists: every file of
 * path_type hardlink there, of the listed size and a regular file when a size is listed
 * (conda's safety check reads the same fields). A file changed through a hard link in some
 * prefix, or deleted, makes the entry damaged: it is extracted or fetched again. Packages
 * without paths.json (old formats) are trusted. Each stat is kept for the link. */
bool menv_pkgcache_intact(const char *dir);

/* Whether `<pkgs>/<dist>/` holds the record, judged as conda and micromamba judge their own
 * cache entries (conda's pkgs_dirs layout, so their caches can be read): its
 * info/repodata_record.json and the record must agree on each of sha256, md5 and size that
 * both carry, and share at least one hash (an older conda's entry has md5 and size but no
 * sha256). A record without any hash accepts an entry with its URL. Any disagreement, a
 * missing or unreadable repodata_record.json, or no shared hash: false (the package is to be
 * fetched again). Reads only. */
bool menv_pkgcache_has(const char *pkgs_dir, const struct menv_record *r);

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
 * an error naming the file, and so is a package whose version conda's VersionOrder refuses
 * (menv_version_parse; conda cannot load a repodata.json holding one): every index is made
 * before any is written, so on an error nothing is written. Errors: MENV_ENOTFOUND,
 * MENV_EPARSE, MENV_EIO. */
int menv_index_channel(const char *dir, struct menv_index_stats *stats, struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* OCI registries as channels (the proposed CEP "OCI Registries as conda Channels", layout v1;
 * OCI Distribution Spec v1.1 API)                                                            */

/* A channel `oci://[user:password@]HOST[:PORT]/PATH`: repodata of a subdir is the artifact
 * `PATH/<subdir>/mrepodata.json:latest` (layers application/vnd.conda.repodata.v1+json and
 * optionally ...+json+zst), a package `PATH/<subdir>/<repo>:<tag>` (menv_oci_package_names)
 * with a layer application/vnd.conda.package.v2 (.conda) or .v1 (.tar.bz2). Repodata and
 * packages of such channels travel through menv_fetch_repodata_many / menv_fetch_packages like
 * HTTP ones; every blob is checked against its sha256 digest before anything is kept. The
 * "v0" layout of conda-oci-mirror, rattler and mamba (`<subdir>/repodata.json:latest`,
 * menv_oci_package_names_v0) is read where the CEP's names are missing. */
struct menv_oci; /* a session with one registry: its tokens */

/* Whether `url` starts with "oci://". */
bool menv_oci_is_url(const char *url);
/* The repository path of an oci:// URL (after the host, no leading '/'); borrowed. */
const char *menv_oci_path(const char *url);
/* Opens a session with the registry of `url` (only scheme, credentials and host are used):
 * https, or http on a loopback host. `o` (borrowed, may be NULL) gives retries, timeouts and
 * TLS settings. Free with menv_oci_free(). Errors: MENV_EPARSE for a URL without a host. */
int menv_oci_new(const char *url, const struct menv_fetch_opts *o, struct menv_oci **out,
                 struct menv_error *err);
void menv_oci_free(struct menv_oci *s);
/* "http[s]://host[:port]" of the session's registry; borrowed. */
const char *menv_oci_registry(const struct menv_oci *s);
/* The CEP's repository name ("c<name>") and tag ("<version>-<build>" with `_` -> `__`,
 * `+` -> `_P`, `!` -> `_N`) of a package; both "h<sha256>" of themselves when the name is
 * over 64 or the tag over 128 characters. Both owned by the caller. */
void menv_oci_package_names(const char *name, const char *version, const char *build, char **repo,
                            char **tag);
/* The same in the layout of conda-oci-mirror, rattler and mamba (the CEP's "v0"): the name
 * itself ("zzz" before a leading '_'), the tag "<version>-<build>" with `+` -> `__p__`,
 * `!` -> `__e__`, `=` -> `__eq__`. Read only: menv pushes the CEP's layout. */
void menv_oci_package_names_v0(const char *name, const char *version, const char *build,
                               char **repo, char **tag);
/* Fetches the OCI image manifest `repo:tag` (repo is the full path), answering the
 * registry's Bearer or Basic challenge. `*out` is owned (json_decref). Errors:
 * MENV_ENOTFOUND (404), MENV_ENET (another status, naming the registry, the artifact and the
 * status; a 401/403 says to check the credentials; or no connection), MENV_EPARSE (the body
 * is no manifest). */
int menv_oci_manifest(struct menv_oci *s, const char *repo, const char *tag, json_t **out,
                      struct menv_error *err);
/* The first layer of `manifest` with `media_type` and a well-formed sha256 digest: its blob
 * URL, its digest's hex and its size (owned strings). Returns 0 or MENV_ENOTFOUND. */
int menv_oci_layer(struct menv_oci *s, const json_t *manifest, const char *repo,
                   const char *media_type, char **blob_url, char **digest, int64_t *size);
/* The "Authorization: ..." header that pulls from `repo` (found by an earlier request of
 * this session), or NULL when none was asked for; borrowed from the session. */
const char *menv_oci_auth(struct menv_oci *s, const char *repo);
/* Finds the package blob behind `url` (`oci://.../<subdir>/<fn>`) of the package `name`
 * `version` `build` (the CEP's names, else the "v0" names of menv_oci_package_names_v0): its
 * manifest's .conda (v2) or .tar.bz2 (v1) layer, as a blob URL, the
 * Authorization header line to send with it (or NULL) and the layer's sha256 digest (hex), all
 * owned. Errors: those of menv_oci_manifest; MENV_ENOTFOUND for a manifest without the
 * layer. */
int menv_oci_package_blob(const char *url, const char *name, const char *version, const char *build,
                          const struct menv_fetch_opts *o, char **blob_url, char **auth,
                          char **digest, struct menv_error *err);
/* Uploads `len` bytes as a blob of `repo` (skipped when the registry has it), writing its
 * "sha256:<hex>" into `digest`. Errors: MENV_ENET naming the registry and the status. */
int menv_oci_push_blob(struct menv_oci *s, const char *repo, const void *data, size_t len,
                       char digest[72], struct menv_error *err);
/* Puts `manifest` as `repo:tag` (its blobs must be pushed). Errors as menv_oci_push_blob. */
int menv_oci_push_manifest(struct menv_oci *s, const char *repo, const char *tag,
                           const json_t *manifest, struct menv_error *err);
/* A new manifest (owned) whose config is the empty blob "{}" with `config_digest` (push it
 * first) and annotation org.conda.oci.schema = "1"; layers are added with
 * menv_oci_manifest_add_layer (`title`, may be NULL, as org.opencontainers.image.title). */
json_t *menv_oci_manifest_new(const char *config_digest);
void menv_oci_manifest_add_layer(json_t *manifest, const char *media_type, const char *digest,
                                 size_t size, const char *title);

/* ---------------------------------------------------------------------------------------- */
/* Mirrors (`menv mirror`)                                                                    */

struct menv_mirror_stats {
	size_t packages; /* package files copied */
	size_t subdirs;  /* subdir indexes written or pushed */
	int64_t bytes;   /* bytes of the package files */
	char dest[4096]; /* where they went, as it may be shown: oci://user:password@ redacted
	                  * (menv_url_redact) */
};

/* Copies the package files of `recs` (each with url, fn, subdir, and sha256 or md5) to `dest`:
 * a folder (a path or file:// URL) laid out as a channel, `<subdir>/<fn>` and
 * `<subdir>/repodata.json` (conda-index's records: each package's info/index.json with md5,
 * sha256 and size; noarch always), or an `oci://HOST/PATH` channel (see the OCI section). The
 * files are downloaded into a staging package cache under $TMPDIR, one per subdir (a file name
 * may be in two subdirs with other bytes), verified as menv_pkgcache_fetch does (`cb` sees
 * them), hashed again while copied, and the index comes last: a folder's repodata.json is
 * written (atomically) after all its packages, a registry gets every package manifest before
 * `<subdir>/mrepodata.json:latest`, so a half copy never looks complete. A record whose
 * <subdir>/<fn> another has with the same hash is copied once; with another hash the two are
 * refused (MENV_EPARSE naming both URLs, before any download), as is a subdir that is no
 * folder name. Errors: those of menv_pkgcache_fetch_opts, MENV_ECHECKSUM, MENV_EIO, and
 * MENV_ENET naming the registry and what it answered. */
int menv_mirror_records(struct menv_record *const *recs, size_t n, const char *dest,
                        const struct menv_fetch_opts *o, menv_fetch_cb cb, void *ud,
                        struct menv_mirror_stats *st, struct menv_error *err);
/* Mirrors a whole channel: every package of its `subdirs` and of noarch (their repodata
 * fetched as menv_fetch_repodata_many does), as menv_mirror_records. */
int menv_mirror_channel(const struct menv_channel *c, const char *const *subdirs, size_t nsub,
                        const char *dest, const struct menv_fetch_opts *o, menv_fetch_cb cb,
                        void *ud, struct menv_mirror_stats *st, struct menv_error *err);
/* The conda packages of `lf` for `platforms` (all when nplatforms is 0), one record per URL,
 * as an owned array of `*n` records (release each, then free the array). Errors: MENV_EPARSE
 * for an entry without a URL or name/version/build. */
int menv_mirror_lock_records(const struct menv_lockfile *lf, const char *const *platforms,
                             size_t nplatforms, struct menv_record **out, size_t *n,
                             struct menv_error *err);
/* Mirrors the packages of the lockfile at `path` for `platforms` (all when nplatforms is 0):
 * menv_lockfile_load, menv_mirror_lock_records, then menv_mirror_records. Errors: those of
 * the three. */
int menv_mirror_lock(const char *path, const char *const *platforms, size_t nplatforms,
                     const char *dest, const struct menv_fetch_opts *o, menv_fetch_cb cb, void *ud,
                     struct menv_mirror_stats *st, struct menv_error *err);

#endif
