/*
 * specs.h - the conda data model shared by every menv module.
 *
 * Base types (errors, growable strings, string vectors), the package-level formats menv reads
 * and writes (PackageRecord / repodata.json, CEP-36; environment.yml, CEP-24; .condarc), and the
 * spec-level types (MatchSpec, CEP-29; Channel, CEP-26). Nothing here touches the network or a
 * prefix: callers hand in bytes or file paths to parse and get owned values back.
 *
 * Conventions (see shared/STYLE.md):
 *  - fallible functions return 0 or a negative MENV_E* code and fill `struct menv_error *err`;
 *  - `**out` results belong to the caller and are released with the matching _free();
 *  - `_free(NULL)` is a no-op; out of memory aborts inside menv_xmalloc().
 */
#ifndef MENV_SPECS_H
#define MENV_SPECS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */

enum {
	MENV_OK = 0,
	MENV_EPARSE = -1,        /* malformed input: YAML, JSON, MatchSpec, archive metadata */
	MENV_ENOTFOUND = -2,     /* a file, channel, package or environment that does not exist */
	MENV_EUNSAT = -3,        /* the solver found no solution */
	MENV_ENET = -4,          /* a transfer failed */
	MENV_ECHECKSUM = -5,     /* a file's sha256/md5/size differs from its record */
	MENV_EIO = -6,           /* a system call failed (errno in menv_error.sys_errno) */
	MENV_ELOCKED = -7,       /* another process holds a lock */
	MENV_EUNSAFE = -8,       /* input that would write outside its target (hostile archive) */
	MENV_EEXIST = -9,        /* the target exists already */
	MENV_EUNSUPPORTED = -10, /* valid input that this version of menv cannot handle yet */
	MENV_EINTR = -11,        /* interrupted by a signal (Ctrl-C) */
	MENV_EUSAGE = -12,       /* wrong command-line use */
};

/* Details of the last failure. One per operation or thread; never global. */
struct menv_error {
	int code;       /* a MENV_E* code, 0 when no error was recorded */
	int sys_errno;  /* errno of the failing system call, or 0 */
	char msg[2048]; /* one line: lowercase, subject quoted, no full stop */
};

/* Records a failure: sets err->code = code and formats msg (printf-like). err may be NULL.
 * Returns `code` so callers can write `return menv_error_set(err, MENV_EIO, ...)`. */
int menv_error_set(struct menv_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* As menv_error_set, appending ": strerror(errno)" and keeping errno in sys_errno. */
int menv_error_sys(struct menv_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Flushes `f` (a command's standard output) and says whether every write to it took: 0, or
 * MENV_EIO "cannot write standard output: STRERROR" when one failed (a file size limit, a
 * full disk, a closed pipe with SIGPIPE ignored; a descriptor closed or read-only, as
 * menv_std_fds_open leaves a closed one: "Bad file descriptor", found from the descriptor
 * where stdio dropped the errno), or "cannot write standard output (a write failed)" where
 * the reason is gone: with SIGXFSZ ignored (cli/main.c) such a write fails instead of killing
 * the process, and output cut short must not exit 0. */
int menv_error_stream(FILE *f, struct menv_error *err);
/* Gives each of the standard descriptors 0, 1 and 2 that is closed (a command run as
 * `menv ... >&-`) /dev/null opened for reading only, so that no file menv opens later gets
 * that number (printf would write a plan into a lock or an environment's file) while a write
 * to it still fails, with EBADF as on the closed descriptor: menv_error_stream then names the
 * reason. Call it first in main(). */
void menv_std_fds_open(void);
/* Adds context in front of an existing message ("while linking 'x': <old>"). Keeps the code.
 * Returns err->code. */
int menv_error_prefix(struct menv_error *err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* A short name for a code ("parse error", "not found", ...); static storage. */
const char *menv_error_name(int code);
/* Every `from` in err->msg becomes `to` (a temporary copy's path the name the user gave:
 * `-f /dev/stdin`), the message cut at its size. Nothing when err is NULL or from NULL or empty. */
void menv_error_rename(struct menv_error *err, const char *from, const char *to);

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                   */

/* malloc/calloc/realloc/strdup that abort with a message on out-of-memory. Free with free(). */
void *menv_xmalloc(size_t n);
void *menv_xcalloc(size_t n, size_t size);
void *menv_xrealloc(void *p, size_t n);
char *menv_xstrdup(const char *s); /* NULL in, NULL out */
char *menv_xstrndup(const char *s, size_t n);
char *menv_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Readies the heap for an input that grows with the user (a lock of 100,000 entries: 60-90
 * MB): big blocks from the heap and kept there (no mmap/munmap each), 128 MB reserved past
 * its end at each growth, and that room marked for transparent huge pages (madvise; a hint
 * the kernel may ignore), so its pages come 2 MB a fault instead of 4 kB: 100k explicit lock
 * dry run 16,800 -> ~300 page faults, ~0.65 -> ~0.2 s of CPU. Process-wide: called once, by
 * a command, before it reads such input. Nothing in sanitizer builds (MENV_SANITIZED). */
void menv_heap_for_large_input(void);

/* A growable, always NUL-terminated byte string (git's strbuf). `buf` is never NULL: an
 * empty buffer points at a shared "" (menv_buf_slop, never written) until its first growth.
 * Release with menv_buf_release(); menv_buf_detach() hands the bytes to the caller. */
struct menv_buf {
	char *buf;
	size_t len;   /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated; 0 while buf is menv_buf_slop */
};
extern char menv_buf_slop[];
#define MENV_BUF_INIT                                                                              \
	{                                                                                          \
		menv_buf_slop, 0, 0                                                                \
	}
void menv_buf_init(struct menv_buf *b);
void menv_buf_release(struct menv_buf *b);
void menv_buf_reset(struct menv_buf *b); /* len = 0, keeps memory */
void menv_buf_grow(struct menv_buf *b, size_t extra);
void menv_buf_add(struct menv_buf *b, const void *data, size_t n);
void menv_buf_adds(struct menv_buf *b, const char *s);
void menv_buf_addch(struct menv_buf *b, char c);
void menv_buf_addf(struct menv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *menv_buf_detach(struct menv_buf *b); /* caller frees; b is reset */

/* Reads a whole regular file into `out` (appended); /dev/null reads as empty. Anything else (a
 * FIFO, a directory, a socket, a device) is refused without waiting on it: MENV_EIO, "cannot
 * read 'PATH': not a regular file (a FIFO)". Errors: MENV_ENOTFOUND, MENV_EIO, MENV_EINTR (the
 * cancel flag, menv_cancel_flag_set, polled between reads of at most 8 MiB). */
int menv_buf_read_file(struct menv_buf *out, const char *path, struct menv_error *err);
/* menv_buf_read_file for a path the user names on the command line (-f environment.yml, a
 * lockfile): a pipe is read too (`-f /dev/stdin`, `-f <(...)`), waiting for its writer as cat
 * does (Ctrl-C interrupts: MENV_EINTR); a directory is still refused by read(2) (MENV_EIO). */
int menv_buf_read_stream(struct menv_buf *out, const char *path, struct menv_error *err);
/* The modes of what menv creates, as conda's (Python's open and os.makedirs, and
 * conda-package-streaming's extraction, mask by the umask): menv_umask() is the umask the
 * process started with (read once, before main: libraries set it to 0 for an instant while
 * they work), menv_file_mode() 0666 and menv_dir_mode() 0777 less it. Under umask 002 a
 * group-shared package cache or environment stays writable to the group; under 077 nothing
 * is readable to others. */
mode_t menv_umask(void);
mode_t menv_file_mode(void);
mode_t menv_dir_mode(void);
/* Opens (creating with menv_file_mode()) the lock file `path` for flock(2): read-write, else,
 * when the file is another user's that this one may not write (a shared package cache),
 * read-only (flock needs no write access; a holder's pid is then not written into it).
 * Returns the descriptor (O_CLOEXEC), or -1 with errno set. */
int menv_open_lockfile(const char *path);
/* Writes `len` bytes to `path` atomically: a temporary file beside it, fsync, rename (a link
 * at `path` is replaced, not followed). Errors: MENV_EIO, also when `path` is there and is
 * neither a regular file nor a link (a device, a pipe, a folder: left as it is). */
int menv_write_file_atomic(const char *path, const void *data, size_t len, struct menv_error *err);
/* (its mode: menv_file_mode()) The same with the file's permission bits `mode` (set before the rename, so the file never
 * has others). */
int menv_write_file_atomic_mode(const char *path, const void *data, size_t len, mode_t mode,
                                struct menv_error *err);

/* An exclusive lock for a read-modify-write of the shared file `path` (filelock.c): flock(2)
 * on the folder of its real path (links followed), waited for without a time limit (EINTR
 * retried). Take it before reading the file and release it after menv_write_file_atomic has
 * replaced it, so concurrent writers each see the others' changes. `*lock_fd` (-1 on error)
 * is released with menv_file_unlock (-1 is a no-op). Errors: MENV_ENOTFOUND (the folder does
 * not exist), MENV_EIO. */
int menv_file_lock(const char *path, int *lock_fd, struct menv_error *err);
void menv_file_unlock(int lock_fd);

/* A vector of owned strings. */
struct menv_strvec {
	char **v;
	size_t n, alloc;
};
#define MENV_STRVEC_INIT                                                                           \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}
void menv_strvec_push(struct menv_strvec *sv, const char *s); /* copies s */
void menv_strvec_push_owned(struct menv_strvec *sv, char *s); /* takes s */
bool menv_strvec_contains(const struct menv_strvec *sv, const char *s);
void menv_strvec_clear(struct menv_strvec *sv);

/* A set of owned strings, hashed: membership in O(1), so that de-duplicating n input
 * strings costs O(n) (menv_strvec_contains is a linear scan). Zero-initialise it
 * (MENV_STRSET_INIT); release with menv_strset_clear(). */
struct menv_strset {
	char **slots; /* open addressing, `cap` a power of two, NULL = empty */
	size_t n, cap;
};
#define MENV_STRSET_INIT                                                                           \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}
/* Adds a copy of `s`; true when it was not there yet. */
bool menv_strset_add(struct menv_strset *set, const char *s);
bool menv_strset_has(const struct menv_strset *set, const char *s);
void menv_strset_clear(struct menv_strset *set);
/* Pushes a copy of `s` onto `sv` unless `seen` has it (then adds it to `seen`): the linear
 * form of `if (!menv_strvec_contains(sv, s)) menv_strvec_push(sv, s)`, with `seen` holding
 * what `sv` holds. */
void menv_strvec_push_unique(struct menv_strvec *sv, struct menv_strset *seen, const char *s);

/* A map from strings to size_t values (an index into the caller's array), hashed: lookups
 * in O(1), so that matching n input strings against another list costs O(n + m) rather than
 * O(n * m) (strmap.c). Keys are copied (or borrowed: menv_strmap_borrowing); zero-initialise it (MENV_STRMAP_INIT) and release it
 * with menv_strmap_clear(). A value stays valid until the next put or add. */
struct menv_strmap_slot {
	char *key; /* owned (borrowed in a map made by menv_strmap_borrowing); NULL = empty */
	size_t val;
	size_t hash; /* the key's hash: growing rehashes no key, probes compare it first */
};
struct menv_strmap {
	struct menv_strmap_slot *slots; /* open addressing, `cap` a power of two */
	size_t n, cap;
	bool borrowed; /* keys are the caller's: neither copied nor freed */
};
#define MENV_STRMAP_INIT                                                                           \
	{                                                                                          \
		NULL, 0, 0, false                                                                  \
	}
/* An empty map with room for `n` keys made at once (no rehash while it fills) whose keys are
 * borrowed: put and add keep the caller's pointer, which must stay valid and unchanged until
 * menv_strmap_clear (100,000 names of a lock: no copy of each, no 14 rehashes). */
void menv_strmap_borrowing(struct menv_strmap *m, size_t n);
/* Sets key's value (replacing what it had); true when key was new. */
bool menv_strmap_put(struct menv_strmap *m, const char *key, size_t val);
/* Sets key's value only when key is new (the first value kept); true when it was. */
bool menv_strmap_add(struct menv_strmap *m, const char *key, size_t val);
/* A pointer to key's value (borrowed: valid until the next put or add; it may be written),
 * or NULL when key is absent (or NULL). */
size_t *menv_strmap_get(const struct menv_strmap *m, const char *key);
void menv_strmap_clear(struct menv_strmap *m);

/* Test hooks (testhooks.c). A point where MENV_TEST_CRASH_AFTER=N may SIGKILL the process:
 * the N-th call in the process (every journaled change calls it; multi-step commands and
 * clean call it between their steps). No-op without the variable. */
void menv_crash_point(void);
/* When the variable `name` names a file (a FIFO), reads it to its end (blocking until the
 * test writes and closes it). No-op without the variable. */
void menv_test_gate(const char *name);

/* Temporary files and folders (tmp.c): `$TMPDIR` when it is an absolute path, else /tmp. */
const char *menv_tmp_base(void);
/* Creates the folder `<base>/menv-<what>-<pid>-XXXXXX` (mkdtemp, mode 0700); `what` is lower
 * case letters and '_'. *out is the caller's (free it; remove the folder when done). The
 * process holds a shared flock on `<base>/.menv-<pid>.lock` from the first temporary on
 * until it exits or is killed; before that, what dead menv processes of this user left
 * (entries whose pid's lock nobody holds) is removed. Errors: MENV_EIO naming the path. */
int menv_tmp_mkdir(const char *what, char **out, struct menv_error *err);
/* The same for a file (mkostemp, mode 0600, O_CLOEXEC): *out its path, *fd open for writing
 * (the caller closes it and unlinks the file when done). */
int menv_tmp_mkfile(const char *what, char **out, int *fd, struct menv_error *err);
/* Removes what dead menv processes of this user left under menv_tmp_base(): every
 * `menv-<what>-<pid>-XXXXXX` and `.menv-<pid>.lock` whose lock no live process holds. */
void menv_tmp_sweep(void);

/* ---------------------------------------------------------------------------------------- */
/* Limits on input: cancellation, UTF-8, nesting                                            */

/* The deepest nesting of YAML or JSON collections the parsers of specs/ accept (conda's files
 * nest 5 deep at most); deeper input fails with MENV_EPARSE "FILE:LINE:COL: nested deeper
 * than 256 levels" before it costs time or stack. */
#define MENV_PARSE_MAX_DEPTH 256

/* Sets the process-wide cancel flag (e.g. the CLI's SIGINT/SIGTERM flag, set by its signal
 * handler; NULL: none, the default). Long parses (YAML, JSON, lockfiles, repodata) poll it and
 * fail with MENV_EINTR once *flag is non-zero. Set it once, before any parse. Borrowed: the
 * flag must outlive every parse. */
void menv_cancel_flag_set(volatile int *flag);
/* Whether the cancel flag is set and non-zero (and this thread is not inside a
 * menv_cancel_block section). */
bool menv_cancelled(void);
/* Starts (true) or ends (false) a section of the calling thread that Ctrl-C must not stop:
 * a rollback or a recovery reads its journal to the end whatever the flag says. Nests. */
void menv_cancel_block(bool block);

/* The length (1-4) of the valid UTF-8 sequence at `s` (`len` bytes available), or 0 when
 * the bytes there are not one (a stray continuation byte, an overlong form, a surrogate, a
 * cut sequence) (RFC 3629). */
size_t menv_utf8_seq(const char *s, size_t len);
/* Whether `len` bytes are valid UTF-8 (RFC 3629); if not, *bad (may be NULL) is the offset of
 * the first bad byte. jansson refuses strings that are not (json_string() returns NULL). */
bool menv_utf8_valid(const char *s, size_t len, size_t *bad);
/* The columns `s` takes on a terminal: each code point 1, East Asian Wide/Fullwidth ones 2
 * (CJK, Hangul, fullwidth forms, emoji), combining marks and zero-width ones 0, a byte that
 * is not UTF-8 1. What text tables pad by: "ümlaut" is 6 columns of 7 bytes, "環境" 4 of 6. */
size_t menv_utf8_width(const char *s);
/* `s` shortened in its middle to at most `w` columns ("file:///srv/...annels/main"), cut only
 * between whole UTF-8 characters (a wide one that does not fit is left out); `s` itself when
 * it fits or when `w` < 8. Caller frees. */
char *menv_utf8_fit(const char *s, size_t w);
/* Appends `s` and then blanks up to `width` columns (menv_utf8_width; none past it): a table
 * cell padded as printf's "%-*s" pads ASCII. */
void menv_buf_add_padded(struct menv_buf *b, const char *s, size_t width);
/* Appends blanks and then `s`, `width` bytes in all (none where `s` is longer): printf's "%*s"
 * without printf. */
void menv_buf_add_right(struct menv_buf *b, const char *s, size_t width);
/* A printable copy of `s` (NULL is ""): each byte that is not valid UTF-8, and each control
 * character (newline, escape, ...), becomes "\xNN"; the rest is kept. Caller frees. Every
 * menv_error message goes through it, so messages are one line of valid UTF-8. */
char *menv_utf8_escape(const char *s);
/* A JSON string for `s` that is never NULL: json_string(s) where `s` is valid UTF-8, else
 * json_string(menv_utf8_escape(s)); NULL gives json null. For text shown to people or
 * programs (messages, --json), never for data read back. New reference. */
json_t *menv_json_str(const char *s);
/* Parses JSON bytes (jansson, `flags` as json_loadb's, e.g. JSON_ALLOW_NUL) into a new
 * reference in *out, refusing nesting deeper than MENV_PARSE_MAX_DEPTH and polling the cancel
 * flag every 64 KiB. `src` names the bytes in messages. A number past jansson's range (an
 * integer past int64, a real past a double: Python's json, conda's reader, takes both) is
 * read as the nearest one it holds, INT64_MAX/INT64_MIN or +-1e308, never refused. Errors:
 * MENV_EPARSE "SRC:LINE:COL: ..." (jansson's message, or the depth), MENV_EINTR. */
int menv_json_parse(const char *bytes, size_t len, size_t flags, const char *src, json_t **out,
                    struct menv_error *err);
/* json_load_file through menv_json_parse: the file at `path` (read whole) parsed with its
 * depth limit and cancel polling, `flags` as json_loadb's. Returns a new reference, or NULL
 * with `err` (may be NULL) set: MENV_ENOTFOUND (no such file), MENV_EIO (naming the path),
 * MENV_EPARSE "PATH:LINE:COL: ...", MENV_EINTR. */
json_t *menv_json_load_file(const char *path, size_t flags, struct menv_error *err);

/* ---------------------------------------------------------------------------------------- */
/* Platform                                                                                 */

/* The conda subdir of this machine ("linux-64", "linux-aarch64", ...); static storage. */
const char *menv_platform_subdir(void);
/* Whether `subdir` is one of the platform subdirs conda knows (linux-64, osx-arm64, win-64,
 * noarch, ...; CEP-26's list as conda's context has it). */
bool menv_subdir_known(const char *subdir);

/* ---------------------------------------------------------------------------------------- */
/* Settings (.condarc keys, conda's search path plus $MENVRC): config.h                     */

#include "config.h"

/* ---------------------------------------------------------------------------------------- */
/* Channels (CEP-26 names and URLs)                                                          */

struct menv_channel {
	char *name;     /* canonical name as conda shows it (Channel.canonical_name):
			   "conda-forge", "defaults" for a member of default_channels, or the
			   URL (without credentials) for channels outside the alias */
	char *base_url; /* scheme://location/name without credentials, token, subdir or
			   trailing slash: safe to print, and the channel's identity */
	int priority;   /* higher wins; set by the caller from the channel order */
	/* conda's Channel parts (CEP-26): scheme://[auth@]location[/t/token]/cname/platform */
	char *scheme;   /* "https", "http", "file", ... */
	char *auth;     /* "user:password" from the URL or configuration, or NULL: never print */
	char *location; /* "host[:port][/path]", or a directory ("/srv") for file:// */
	char *token;    /* the "/t/<token>" of anaconda.org-style URLs, or NULL: never print */
	char *cname;    /* conda's Channel.name ("conda-forge/label/dev"), or NULL */
	char *platform; /* the subdir the input named ("linux-64"), or NULL */
	char *package_filename; /* the package file the input named, or NULL */
	/* mamba 2's mirrored_channels for this channel (by canonical name or base URL): the
	 * https://, http://, file:// or oci:// URLs fetches go to instead, tried in order on
	 * failure; empty when the channel has none (fetches go to base_url) */
	struct menv_strvec mirrors;
};

/* Resolves one channel string like conda's Channel(value) (CEP-26): a name with optional
 * labels ("conda-forge", "pkgs/main/label/dev") through custom_channels, default_channels and
 * channel_alias; a URL (any scheme; "/t/<token>" and "user:pass@" are split off into token
 * and auth; a subdir and package file name at the end are split off; migrated_custom_channels
 * and migrated_channel_aliases are mapped to their new locations); or a path (absolute,
 * ./relative, ~/..., made a file:// URL; an existing folder through links resolved to the
 * folder they lead to, so that records and locks name a stable location and never a link in
 * a temporary folder; a package file or subdir keeps its own name). Multichannels ("defaults", and "<unknown>") give one
 * channel per member, each with `name` set to the multichannel's name; "local" gives none.
 * `*out` is an owned array of `*n` owned channels (free with menv_channels_free).
 * Errors: MENV_EPARSE for an empty or malformed string. */
int menv_channel_resolve(const char *s, const struct menv_config *cfg, struct menv_channel ***out,
                         size_t *n, struct menv_error *err);
/* As menv_channel_resolve for the channel part of a MatchSpec (`channel[/subdir]::name`,
 * `[channel=..., subdir=...]`), as conda's MatchSpec stores it: a URL keeps its own channel,
 * a name goes through its canonical name (so "pkgs/main::x" means "defaults::x"); `subdir`
 * (may be NULL) replaces the channel's platform. Errors as menv_channel_resolve. */
int menv_channel_resolve_spec(const char *channel, const char *subdir,
                              const struct menv_config *cfg, struct menv_channel ***out, size_t *n,
                              struct menv_error *err);
void menv_channels_free(struct menv_channel **v, size_t n);
/* The channels the user gave a token or "user:password" to (credentials live where the user
 * put them and, for a download, in memory; issue 22): cfg's channels, default_channels,
 * custom_channels and channel_alias, then the strings of `a` and `b` (the request's -c
 * channels and an environment file's; either may be NULL), each resolved as
 * menv_channel_resolve does, those without credentials left out, the others kept once.
 * A string that does not resolve is skipped (the command that uses it reports it). For
 * menv_channel_credentials_for. `*out` is an owned array of `*n` channels (free with
 * menv_channels_free). Never fails. */
void menv_channel_credentials(const struct menv_config *cfg, const struct menv_strvec *a,
                              const struct menv_strvec *b, struct menv_channel ***out, size_t *n);
/* The channel of `creds` (menv_channel_credentials's) a package URL without credentials lies
 * under: same scheme and location, its base_url a prefix of the URL ending at a '/', the
 * longest such, the rest of its path not climbing out of it (menv_url_path_climbs: no
 * "/../", "%2e%2e", "%2F"); NULL when none does or `url` holds credentials or a query of its own (a
 * lock's or an explicit file's URLs hold none: menv writes none, and then gets them from
 * here). Borrowed. conda's Channel gives a URL under channel_alias or a custom channel their
 * token and user:password; menv does so for every channel the user configured. */
const struct menv_channel *
menv_channel_credentials_for(const char *url, const struct menv_channel *const *creds, size_t n);

/* Resolves one channel string to exactly one channel (as menv_channel_resolve); a
 * multichannel must be expanded by the caller first (menv_channels_expand) and is an error
 * here, except that a single-member one gives its member. A trailing known subdir
 * ("/linux-64") is kept in ->platform, not in base_url.
 * Errors: MENV_EPARSE for an empty or malformed string or a multichannel. Free with
 * menv_channel_free(). */
int menv_channel_parse(const char *s, const struct menv_config *cfg, struct menv_channel **out,
                       struct menv_error *err);
void menv_channel_free(struct menv_channel *c);
/* A deep copy. Free with menv_channel_free(). */
struct menv_channel *menv_channel_dup(const struct menv_channel *c);

/* The subdir URLs conda searches for a channel (Channel.urls): its platform, else `subdir`,
 * then "noarch" (once). With `with_credentials`, "user:pass@" and "/t/<token>" are included
 * (for transfers only: never print those). Owned strings are appended to `out`. */
void menv_channel_urls(const struct menv_channel *c, const char *subdir, bool with_credentials,
                       struct menv_strvec *out);
/* One subdir URL of a channel ("<base>/<subdir>"), with credentials or not. Caller frees. */
char *menv_channel_subdir_url(const struct menv_channel *c, const char *subdir,
                              bool with_credentials);
/* $HOME, checked (specs/home.c): *out borrows the environment's value when it is set, not
 * empty, absolute and a directory. Otherwise *out = NULL and MENV_ENOTFOUND or MENV_EPARSE
 * with one line naming HOME and what is wrong (`err` may be NULL). Whoever needs the home
 * directory asks here and never falls back to "/" or the current directory. */
int menv_home(const char **out, struct menv_error *err);

/* The one redaction of credentials (specs/redact.c): a copy of `url` safe to print or store,
 * as conda's remove_auth + mask_anaconda_token: the userinfo ("user:password@", "user@") is
 * removed, taking the LAST '@' of the URL (so "http://a:s3cr@t-pw@host/c" and a password with
 * a raw '/', '?', '#' or space, "http://u:S3c/r#t@host/c", give "http://host/c"); only a VCS
 * URL ("git+https://host/repo@rev", a scheme with '+') with a well-formed host[:port] keeps
 * its "@rev". Every "/t/<token>" path segment becomes "/t/<TOKEN>". The query ("?..." up to
 * the fragment or the end: a token, a signature) is removed, the fragment kept. An ssh URL
 * ("git+ssh://git@host/...") keeps a user name without a password (a login, not a secret).
 * The whole of `url` is one URL. A string without "://" comes back unchanged. Never fails;
 * caller frees. */
char *menv_url_redact(const char *url);
/* A proxy setting (a value of proxy_servers) safe to print: menv_url_redact, and a value
 * without a scheme ("user:password@host:port", which requests and curl take as http://) loses
 * its userinfo the same way. Never fails; caller frees. */
char *menv_proxy_redact(const char *proxy);
/* menv_proxy_redact applied in place to `j` (borrowed): a string, or each string value of an
 * object (proxy_servers' map); other values are left alone. */
void menv_proxy_json_redact(json_t *j);
/* obj[key] = menv_url_redact(url), for a record that goes to disk (the package cache's
 * repodata_record.json); a NULL url leaves obj as it is. */
void menv_json_set_url(json_t *obj, const char *key, const char *url);
/* menv_url_redact applied to every URL ("scheme://...") inside free text: command lines,
 * messages, pip options, JSON. A URL opened by a quote (' " `) ends at the quote that closes
 * it on its line (so a password holding a space is inside it); otherwise at whitespace, a
 * quote, '<', '>', '\\', '`' or a control byte, except that an authority that is no
 * host[:port] ("http://u:S3c ret@host") goes on to the next '@' of its line (within 256
 * bytes). Never fails; caller frees. */
char *menv_text_redact(const char *text);
/* Whether menv_text_redact(text) would change `text` (it holds credentials or a token). */
bool menv_text_needs_redaction(const char *text);
/* menv_text_redact applied in place to every string value inside `j` (borrowed; keys are
 * left alone). For JSON that goes to disk or stdout. */
void menv_json_redact(json_t *j);
/* menv_text_redact applied to the text in `b`, in place (an export before it is written). */
void menv_buf_redact(struct menv_buf *b);

/* The file name a URL names (specs/redact.c): its path's last component, without the query
 * and the fragment ("https://h/c/noarch/x-1-0.conda?token=T#md5" gives "x-1-0.conda"), as a
 * pointer into `url` (borrowed) and its length in *len (0 where the path ends in '/'). The one
 * way menv names a file after a URL (a download, the package cache, a mirror, a lock entry's
 * file and subdir): a query or a fragment (a token, a signature, a hash) never becomes part
 * of a file name. Never fails. */
const char *menv_url_basename(const char *url, size_t *len);
/* menv_url_basename as a new string. Caller frees. */
char *menv_url_filename(const char *url);
/* The path component before that file name ("linux-64" of ".../linux-64/x.conda?q"): its
 * offset and length in `url`; false where the path has none (no '/' before the file name,
 * or an empty component; the host of "https://h/x.conda" is no folder). */
bool menv_url_folder(const char *url, size_t *off, size_t *len);
/* Whether a URL path (what follows a channel's base in a package URL; the query and the
 * fragment are not looked at) may lead elsewhere once normalized: a dot segment ("." or "..",
 * also spelled with %2e, also before a ";" parameter) or a '/' or '\\' that some server reads
 * as one ('\\', %2f, %5c). libcurl removes dot segments before it sends a path, and servers
 * that decode do the same: "chan/../other/x.conda" is "other/x.conda". A URL whose tail
 * climbs is not under the channel it seems to be under (menv_channel_credentials_for,
 * menv_pkgcache_url). Never fails. */
bool menv_url_path_climbs(const char *path);

/* Expands a user channel list in order: `defaults` becomes cfg->default_channels,
 * `nodefaults` is dropped (conda: an instruction, not a channel), duplicates are dropped.
 * `out` receives owned strings. */
void menv_channels_expand(const struct menv_strvec *in, const struct menv_config *cfg,
                          struct menv_strvec *out);

/* ---------------------------------------------------------------------------------------- */
/* Versions (CEP-33) and version specs                                                      */

struct menv_version;      /* a parsed version (conda's VersionOrder) */
struct menv_version_spec; /* a parsed version constraint */

/* Parses a version. Errors: MENV_EPARSE quoting the text and saying what is wrong (invalid
 * characters, empty component, duplicated '!' or '+'). Free with menv_version_free(). */
int menv_version_parse(const char *s, struct menv_version **out, struct menv_error *err);
void menv_version_free(struct menv_version *v);
/* Orders two versions like conda: <0, 0 or >0. `1.1 == 1.1.0`, `1.0dev < 1.0a < 1.0 <
 * 1.0post`, epochs first, local versions last. */
int menv_version_cmp(const struct menv_version *a, const struct menv_version *b);
/* conda's VersionOrder.startswith: `1.7.1` starts with `1.7`, `1.70` does not. */
bool menv_version_startswith(const struct menv_version *v, const struct menv_version *prefix);
/* The normalised text (lower-cased, `-` as `_`), borrowed. */
const char *menv_version_str(const struct menv_version *v);

/* Parses a version spec: relations `==`, `!=`, `<`, `<=`, `>`, `>=`, `=` (starts with), `~=`,
 * globs (`1.7*`, `1.7.*`, `*.7.*`), regexes (`^...$`), `*`, joined by `,` (and) and `|` (or,
 * binding looser) with parentheses. Errors: MENV_EPARSE quoting the spec.
 * Free with menv_version_spec_free(). */
int menv_version_spec_parse(const char *s, struct menv_version_spec **out, struct menv_error *err);
void menv_version_spec_free(struct menv_version_spec *vs);
/* Does `version` (a record's version string) satisfy the spec? An unparsable version only
 * matches `*`, globs, regexes and exact `@` strings. */
bool menv_version_spec_match(const struct menv_version_spec *vs, const char *version);
/* As _match, but -1 where conda raises while matching (`~=1`: a one-component `~=` cannot
 * be evaluated for versions >= it); 1 match, 0 no match. */
int menv_version_spec_eval(const struct menv_version_spec *vs, const char *version);
bool menv_version_spec_match_parsed(const struct menv_version_spec *vs,
                                    const struct menv_version *v);

/* ---------------------------------------------------------------------------------------- */
/* MatchSpec (CEP-29)                                                                        */

struct menv_matchspec {
	char *channel;      /* "conda-forge", a URL or path; NULL when none */
	char *subdir;       /* from "chan/linux-64::" or [subdir=...]; NULL when none */
	char *name;         /* package name, "*" for any */
	char *version;      /* version constraint in conda syntax without blanks, NULL = any */
	char *build;        /* build string or glob, NULL = any */
	char *build_number; /* "3", ">=2", NULL = any */
	char *md5, *sha256, *fn, *url, *track_features, *license, *license_family;
	struct menv_version_spec *vspec; /* `version` compiled; NULL when any version */
};

/* Parses one MatchSpec: `[channel[/subdir]::]name[ version[ build]]`, `name=ver[=build]`,
 * `name==ver`, `name>=1,<2`, blanks after operators and commas (`python > 3.10`,
 * `scipy >=1.10, <1.14`), and `[key=value, key='v a l']` brackets. Leading/trailing blanks
 * and a trailing `# comment` are ignored. `name=1.7` means `1.7.*` as in conda.
 * Errors: MENV_EPARSE with the spec quoted. Free with menv_matchspec_free(). */
int menv_matchspec_parse(const char *s, struct menv_matchspec **out, struct menv_error *err);
void menv_matchspec_free(struct menv_matchspec *ms);
/* Does a record (a repodata/PrefixRecord JSON object, borrowed) satisfy every field of the
 * spec except channel? Name and build are globs (`*`), `^...$` regexes or exact strings;
 * license and license_family are case-insensitive globs; track_features compares as a set;
 * build_number takes an exact number or a relation (`>=3`); subdir, md5, sha256 and fn are
 * exact. Follows conda's MatchSpec.match (CEP-29). */
bool menv_matchspec_match_json(const struct menv_matchspec *ms, json_t *rec);
/* Does build number `have` satisfy a build_number field ("3", ">=3", "<2", "!=1")? */
bool menv_matchspec_build_number_ok(const char *spec, long long have);

/* The canonical string without channel: "name version build", blanks only as separators
 * (e.g. "polars >=1.0.0", "zlib 1.3.* h0_1"). Caller frees. Used for history and for the
 * solver's conda dependency strings. */
char *menv_matchspec_str(const struct menv_matchspec *ms);
/* As menv_matchspec_str with the "channel[/subdir]::" prefix where there is one and the
 * keys it leaves out in brackets ("numpy[subdir=noarch, md5=...]": subdir when there is no
 * channel, build_number, md5, sha256, fn, track_features). Caller frees. */
char *menv_matchspec_str_full(const struct menv_matchspec *ms);
/* The spec as conda's str(MatchSpec) writes it (conda 26's MatchSpec.__str__), the form of
 * conda-meta/history's spec lists and of a PrefixRecord's requested_spec: "python=3.9" for
 * `python 3.9*`, "python==3.9.2=h1_0", "numpy[version='>=1.19']", "foo[build=*py*]",
 * "chan/linux-64::foo=1", other fields in brackets in conda's FIELD_NAMES order. Caller
 * frees. */
char *menv_matchspec_conda_str(const struct menv_matchspec *ms);

/* ---------------------------------------------------------------------------------------- */
/* PackageRecord (repodata.json entries, CEP-36; repodata_record.json)                       */

struct menv_record {
	/* the record as a JSON object (owned reference); unknown keys kept. NULL in a light
	 * record: a lockfile's entry planned without JSON (envs/lockplan.c), whose strings and
	 * `url`/`channel_url` are borrowed from the lock and its owner (issue 22) */
	json_t *json;
	json_t *depends;                    /* a light record's depends array (borrowed), or NULL */
	const char *name, *version, *build; /* borrowed from json */
	int64_t build_number;
	const char *subdir;       /* borrowed */
	const char *fn;           /* file name: "zlib-1.2.11-h7b6447c_3.conda" */
	const char *md5, *sha256; /* lowercase hex or NULL */
	int64_t size;             /* bytes of the package file, -1 if unknown */
	int64_t timestamp;        /* milliseconds since the epoch, 0 if unknown */
	char *url;                /* full URL of the package file (owned) */
	char *channel_url;        /* channel URL with subdir, as conda writes "channel" (owned) */
	const struct menv_channel *channel; /* borrowed from the caller's channel list */
	bool noarch_python; /* "noarch": "python" (or legacy "noarch_python": true) */
	/* json is the package cache's info/repodata_record.json as this process read it, every
	 * key in its order, url and channel its own (a lock's record completed from it,
	 * envs/lockplan.c): the link takes it for the PrefixRecord without reading the file
	 * again */
	bool json_is_cached;
};

/* The distribution name "name-version-build" (file name without extension). Caller frees. */
char *menv_record_dist(const struct menv_record *r);
/* Fills a record from a JSON object (takes a new reference on obj). `fn` is the key of the
 * packages map, `base` the URL the file lives under (channel URL + subdir, or CEP-15
 * base_url). Missing name/version/build give MENV_EPARSE. `depends: null` is taken as []. */
int menv_record_from_json(struct menv_record *r, json_t *obj, const char *fn, const char *base,
                          const struct menv_channel *ch, struct menv_error *err);
void menv_record_release(struct menv_record *r);
/* A record in conda's --json shape (conda search --json, the plan's LINK): name, version,
 * build_string, build_number, channel (its name), base_url, subdir, platform, url, fn,
 * dist_name, and md5, sha256 and size when known; its URLs redacted (menv_url_redact). New
 * reference. */
json_t *menv_record_json(const struct menv_record *r);
/* The record's depends array (borrowed, always an array once parsed; a light record's may
 * be NULL: none) and its constrains array (borrowed, NULL when the record has none). */
json_t *menv_record_depends(const struct menv_record *r);
json_t *menv_record_constrains(const struct menv_record *r);

/* The records of one subdir of one channel. */
struct menv_repodata {
	const struct menv_channel *channel; /* borrowed */
	char *subdir;
	struct menv_record *recs;
	size_t n;
};

/* Parses repodata.json bytes (CEP-36, and `info.base_url` of CEP-15). Takes both "packages"
 * (.tar.bz2) and "packages.conda"; where both hold the same distribution only the .conda is
 * kept, as conda does. `src` names the file in error messages.
 * Errors: MENV_EPARSE with file, line and column. Free with menv_repodata_free(). */
int menv_repodata_parse(const char *bytes, size_t len, const char *src,
                        const struct menv_channel *ch, const char *subdir,
                        struct menv_repodata **out, struct menv_error *err);
void menv_repodata_free(struct menv_repodata *rd);

/* ---------------------------------------------------------------------------------------- */
/* environment.yml (CEP-24)                                                                  */

struct menv_envfile {
	char *path;                  /* the file read */
	char *name;                  /* `name:`, or NULL */
	char *prefix;                /* `prefix:`, or NULL */
	struct menv_strvec channels; /* `channels:` as written, including `nodefaults` */
	struct menv_strvec deps;     /* conda MatchSpec strings as written */
	struct menv_strvec pip;      /* the `pip:` section's requirements */
	bool has_pip_section;        /* a `pip:` mapping was present, even if empty */
	struct menv_strvec var_names, var_values; /* `variables:` in file order */
	/* menv's `virtual-packages:` list, "[PLATFORM:]__NAME=VERSION[=BUILD]" as written: what
	 * `menv lock` solves against besides --virtual-package (conda ignores the key) */
	struct menv_strvec virtual_packages;
	/* top-level keys that conda's environment.yml does not have, "LINE:KEY" (conda warns
	 * about them and ignores them; so does menv's CLI) */
	struct menv_strvec unknown;
	/* what conda warns about and reads anyway, "SRC:LINE:COL: ..." each (`dependencies: ~`,
	 * which conda 26.7 reads as none, warning that it will refuse it) */
	struct menv_strvec notes;
};

/* Reads an environment file. `dependencies` may be missing, null or []; a `- pip:` mapping is
 * a section, not a spec; comments are ignored and unknown keys listed in `unknown`.
 * Errors: MENV_ENOTFOUND, MENV_EPARSE ("FILE:LINE:COL: ..."). Free with menv_envfile_free(). */
int menv_envfile_load(const char *path, struct menv_envfile **out, struct menv_error *err);
/* As _load, from bytes; `src` names them in messages. */
int menv_envfile_parse(const char *bytes, size_t len, const char *src, struct menv_envfile **out,
                       struct menv_error *err);
void menv_envfile_free(struct menv_envfile *ef);
/* Is `decl` a declared virtual package, "[PLATFORM:]__NAME=VERSION[=BUILD]" (CEP-30 names;
 * the syntax of `menv lock --virtual-package` and `virtual-packages:`)? */
bool menv_virtual_decl_ok(const char *decl);

/* ---------------------------------------------------------------------------------------- */
/* Lockfiles: conda-lock.yml v1 (CEP-37), explicit (CEP-23), pixi.lock v4-v7, micromamba     */
/* JSON; writing conda-lock v1, explicit and environment.yml (CEP-24)                        */

/* The formats menv reads. Detection is by content, never by file name. */
enum menv_lock_format {
	MENV_LOCK_NONE = 0,   /* not a lockfile (e.g. an environment.yml) */
	MENV_LOCK_CONDA_LOCK, /* conda-lock.yml, `version: 1` (CEP-37); rattler's 2 and 3 */
	MENV_LOCK_EXPLICIT,   /* `@EXPLICIT` list of package URLs (CEP-23) */
	MENV_LOCK_PIXI,       /* pixi.lock / rattler_lock, `version: 4` to `7` */
	MENV_LOCK_MAMBA_JSON, /* micromamba's JSON lock (`"lockVersion": "1.0.x"`) */
};

enum menv_lock_manager { MENV_LOCK_CONDA = 0, MENV_LOCK_PIP = 1 };

/* One locked package for one platform (and, for pixi, one environment). Its strings belong to the lockfile: those of a parsed file may be held in the
 * lockfile's chunks (menv_lockfile_parse), and are read-only; the fields of an entry made by
 * menv_lockfile_add are NULL (category a static "main") and take malloc'd strings, freed by
 * menv_lockfile_free. */
struct menv_lock_package {
	enum menv_lock_manager manager;
	char *name; /* conda name, or the pip distribution name as written */
	char *version;
	char *build;        /* conda build string (from the entry or the file name); NULL for pip */
	char *platform;     /* the lock platform this entry belongs to ("linux-64") */
	char *subdir;       /* the package's own subdir ("noarch" for noarch packages), or NULL */
	char *url;          /* where the file is; NULL for a source package (see `source`) */
	char *md5, *sha256; /* lowercase hex, or NULL when the lock has none */
	int64_t size;       /* bytes, -1 when unknown */
	char *category;     /* conda-lock category, "main" by default */
	bool optional;      /* conda-lock `optional` */
	/* MatchSpec strings ("name spec") of the package's dependencies, an array (owned
	 * reference), or NULL when the lock does not say. conda-lock's {name: spec} mapping is
	 * turned into "name spec" strings. */
	json_t *depends;
	/* conda-lock's `dependencies` mapping exactly as written (owned reference, or NULL); kept
	 * so that re-writing a conda-lock file loses nothing. NULL too where `deps_map_implied`:
	 * the mapping is menv_lock_deps_map(depends) exactly (every value a plain version: a
	 * 100,000-entry lock keeps no second copy of its dependencies) */
	json_t *deps_map;
	bool deps_map_implied;
	/* The other record fields the lock carries (build_number, constrains, license, timestamp,
	 * noarch, track_features, purls, ...) and keys menv does not know, an object (owned
	 * reference; NULL when there are none: a 100,000-entry lock holds no 100,000 empty objects).
	 * Written back only into the same format. */
	json_t *extra;
	char *source; /* a package to build from source (pixi `conda_source`, a pypi path or
			      VCS URL), or NULL: such an entry cannot be installed from the lock */
	char *env;    /* pixi: the environment name; NULL for the other formats */
	/* the 1-based line where the entry starts in its file (explicit: its line; conda-lock:
	 * its `package` item; pixi: its `packages` item), 0 where unknown (micromamba's JSON),
	 * for messages about the entry after the file is read (the plan's) */
	size_t line;
};

/* A pixi environment: its channels and PyPI settings. */
struct menv_lock_env {
	char *name;
	struct menv_strvec channels;   /* channel URLs */
	struct menv_strvec indexes;    /* PyPI index URLs (the first is the index URL) */
	struct menv_strvec find_links; /* `find-links` paths or URLs */
};

/* A parsed lockfile: the union of what the formats hold. */
struct menv_lockfile {
	enum menv_lock_format format;
	int version;                  /* conda-lock 1; pixi 4..7; mamba JSON 1; explicit 0 */
	char *path;                   /* the file read, or NULL */
	struct menv_strvec channels;  /* conda-lock metadata.channels[].url (pixi: first env) */
	struct menv_strvec platforms; /* platforms the lock covers, in file order */
	struct menv_strvec sources;   /* conda-lock metadata.sources */
	json_t *content_hash;         /* {platform: hex} (conda-lock), an object, never NULL */
	/* conda-lock: metadata.channels as written ([{url, used_env_vars}]) and the metadata
	 * keys menv does not know (time_metadata, git_metadata, ...); pixi v7: `platforms` as
	 * written. Owned references, never NULL once parsed. */
	json_t *channels_raw, *metadata_extra, *platforms_raw;
	struct menv_lock_package *pkgs;
	size_t npkgs;
	struct menv_lock_env *envs; /* pixi environments (others: none) */
	size_t nenvs;
	size_t pkgs_alloc;           /* entries allocated at pkgs (menv_lockfile_add grows it) */
	struct menv_lock_strs *strs; /* the parsed entries' strings, in chunks (lockfile.c) */
};

/* Says which lockfile format `bytes` hold (MENV_LOCK_NONE for anything else, e.g. an
 * environment.yml or a plain spec list) by content: an `@EXPLICIT` line; a JSON object with
 * "lockVersion"; a YAML mapping with `version:` and `package:`/`metadata:` (conda-lock) or
 * `environments:` (pixi). Cheap; does not validate. */
enum menv_lock_format menv_lockfile_detect(const char *bytes, size_t len);
/* A short name of a format ("conda-lock", "explicit", "pixi", "mamba-json"); static. */
const char *menv_lock_format_name(enum menv_lock_format f);

/* Parses a lockfile of any format above. `src` names it in messages. conda-lock v1 entries
 * need name, version, manager, platform and url; a conda entry's build comes from its file
 * name. Explicit lines are `URL[#md5|#sha256:hex]`, with `# platform: P` and conda-lock's
 * `# pip name @ URL` lines; a line that is not a `.conda`/`.tar.bz2` URL is an error. pixi
 * entries (`conda:`/`pypi:`/`conda_source:` in v6-v7, `kind:` + `url:` in v4-v5) are
 * expanded per environment and platform (v7 platform names map to their subdir). rattler's
 * conda-lock versions 2 and 3 (dependencies as a list, `build:`/`subdir:` given, `pypi` for
 * pip) are read as rattler reads them. Refused as rattler refuses them: a YAML key given twice
 * in one mapping, and in v7 a platform listed twice, a platform name other than letters,
 * digits, '_' and '-', a platform whose subdir (`subdir:`, else its name) conda does not know,
 * and an environment using a platform `platforms:` does not list. Input is bounded as in
 * "Limits on input" (nesting, aliases, UTF-8 of explicit files, the cancel flag).
 * Errors: MENV_EPARSE ("SRC:LINE:COL: ..." for YAML/JSON, "SRC:LINE: ..." for explicit, or
 * naming the entry and the missing key), MENV_EUNSUPPORTED for a format version menv does not
 * read (e.g. conda-lock `version: 1000`, pixi v3, lockVersion 0.0.0), MENV_EINTR, or
 * MENV_EPARSE "not a lockfile". Free with menv_lockfile_free(). */
int menv_lockfile_parse(const char *bytes, size_t len, const char *src, struct menv_lockfile **out,
                        struct menv_error *err);
/* As _parse, reading `path`. Errors also MENV_ENOTFOUND, MENV_EIO. */
int menv_lockfile_load(const char *path, struct menv_lockfile **out, struct menv_error *err);
/* An empty lockfile of `format` (for writers). Free with menv_lockfile_free(). */
struct menv_lockfile *menv_lockfile_new(enum menv_lock_format format);
/* menv_lockfile_detect of the file at `path`, into *out. A regular file is read in 1 MiB
 * pieces (a 100,000-entry lock is 20 MB), anything else as menv_buf_read_file reads it.
 * Errors: menv_buf_read_file's (MENV_ENOTFOUND, MENV_EIO, a FIFO or folder refused),
 * MENV_EINTR; *out is then MENV_LOCK_NONE. */
int menv_lockfile_detect_file(const char *path, enum menv_lock_format *out, struct menv_error *err);
void menv_lockfile_free(struct menv_lockfile *lf);
/* Appends a package (fields zeroed, size -1, category "main", extra NULL); the pointer is
 * valid until the next append. */
struct menv_lock_package *menv_lockfile_add(struct menv_lockfile *lf);

/* The installable entries for `platform` (and pixi environment `env`; NULL means "default"),
 * in file order, as borrowed pointers (free the array only). Errors: MENV_ENOTFOUND naming
 * the platforms the lock has when it has no entry for `platform`, or the environments when
 * `env` does not exist; MENV_EUNSUPPORTED when an entry is a source package. An empty
 * environment or platform listed in the lock is not an error (*n = 0). */
int menv_lockfile_select(const struct menv_lockfile *lf, const char *env, const char *platform,
                         const struct menv_lock_package ***out, size_t *n, struct menv_error *err);

/* Writes conda-lock.yml v1 (CEP-37): the header comment, `version: 1`, metadata
 * (content_hash, channels, platforms, sources, then the unknown metadata keys kept from a
 * parsed conda-lock) and one `package:` entry per package (name, version, manager,
 * platform, dependencies, url, hash {md5, sha256}, build (conda entries), category,
 * optional; a conda-lock entry's unknown keys are kept): the fields and types of conda-lock's
 * v1 models (conda_lock/lockfile/v1/models.py: LockMeta, LockedDependency, HashModel), which
 * forbid other keys. Each scalar is written by libyaml's emitter. Appends to `out`. Errors:
 * MENV_EPARSE "cannot write package 'NAME' VERSION (MANAGER): 'S' is not valid UTF-8" (a
 * pip package read from a hostile dist-info): such a lock is refused, never written; `out`
 * then holds a part of it. */
int menv_lockfile_write_conda_lock(const struct menv_lockfile *lf, struct menv_buf *out,
                                   struct menv_error *err);
/* Writes an explicit file (CEP-23) of the conda packages for `platform` (NULL: the first):
 * `# platform: P`, `@EXPLICIT`, one `URL#sha256:hex` line each (`URL#md5` when only md5 is
 * known), then conda-lock's `# pip name @ URL` lines. Appends to `out`. */
void menv_lockfile_write_explicit(const struct menv_lockfile *lf, const char *platform,
                                  struct menv_buf *out);
/* The lockfile as one JSON document (the model above, for --json and for comparing two
 * lockfiles field by field). New reference. */
json_t *menv_lockfile_to_json(const struct menv_lockfile *lf);
/* A conda package's name, version and build from its file name ("x-1.0-h1_0.conda").
 * Errors: MENV_EPARSE when the name has no `.conda`/`.tar.bz2` or fewer than 3 parts. */
int menv_dist_split(const char *fn, char **name, char **version, char **build,
                    struct menv_error *err);

/* Writes an environment.yml (CEP-24, conda env export's layout): name, channels,
 * dependencies (a `- pip:` section when ef->pip is non-empty or has_pip_section), variables,
 * prefix; each scalar written by libyaml's emitter (plain, or double-quoted where YAML would
 * misread it). Appends to `out`. Errors: MENV_EPARSE "cannot write the environment file's
 * dependency: 'S' is not valid UTF-8" (or name, channel, pip dependency, variable, prefix):
 * such a file is refused, never written; `out` then holds a part of it. */
int menv_envfile_write(const struct menv_envfile *ef, struct menv_buf *out, struct menv_error *err);

#endif
