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

#include <jansson.h>

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */

enum {
	MENV_OK = 0,
	MENV_EPARSE = -1,       /* malformed input: YAML, JSON, MatchSpec, archive metadata */
	MENV_ENOTFOUND = -2,    /* a file, channel, package or environment that does not exist */
	MENV_EUNSAT = -3,       /* the solver found no solution */
	MENV_ENET = -4,         /* a transfer failed */
	MENV_ECHECKSUM = -5,    /* a file's sha256/md5/size differs from its record */
	MENV_EIO = -6,          /* a system call failed (errno in menv_error.sys_errno) */
	MENV_ELOCKED = -7,      /* another process holds a lock */
	MENV_EUNSAFE = -8,      /* input that would write outside its target (hostile archive) */
	MENV_EEXIST = -9,       /* the target exists already */
	MENV_EUNSUPPORTED = -10, /* valid input that this version of menv cannot handle yet */
	MENV_EINTR = -11,       /* interrupted by a signal (Ctrl-C) */
	MENV_EUSAGE = -12,      /* wrong command-line use */
};

/* Details of the last failure. One per operation or thread; never global. */
struct menv_error {
	int code;        /* a MENV_E* code, 0 when no error was recorded */
	int sys_errno;   /* errno of the failing system call, or 0 */
	char msg[2048];  /* one line: lowercase, subject quoted, no full stop */
};

/* Records a failure: sets err->code = code and formats msg (printf-like). err may be NULL.
 * Returns `code` so callers can write `return menv_error_set(err, MENV_EIO, ...)`. */
int menv_error_set(struct menv_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* As menv_error_set, appending ": strerror(errno)" and keeping errno in sys_errno. */
int menv_error_sys(struct menv_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds context in front of an existing message ("while linking 'x': <old>"). Keeps the code.
 * Returns err->code. */
int menv_error_prefix(struct menv_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A short name for a code ("parse error", "not found", ...); static storage. */
const char *menv_error_name(int code);

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                   */

/* malloc/calloc/realloc/strdup that abort with a message on out-of-memory. Free with free(). */
void *menv_xmalloc(size_t n);
void *menv_xcalloc(size_t n, size_t size);
void *menv_xrealloc(void *p, size_t n);
char *menv_xstrdup(const char *s);             /* NULL in, NULL out */
char *menv_xstrndup(const char *s, size_t n);
char *menv_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable, always NUL-terminated byte string (git's strbuf). `buf` is never NULL after
 * _init. Release with menv_buf_release(); menv_buf_detach() hands the bytes to the caller. */
struct menv_buf {
	char *buf;
	size_t len;   /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated */
};
#define MENV_BUF_INIT { NULL, 0, 0 }
void menv_buf_init(struct menv_buf *b);
void menv_buf_release(struct menv_buf *b);
void menv_buf_reset(struct menv_buf *b);                  /* len = 0, keeps memory */
void menv_buf_grow(struct menv_buf *b, size_t extra);
void menv_buf_add(struct menv_buf *b, const void *data, size_t n);
void menv_buf_adds(struct menv_buf *b, const char *s);
void menv_buf_addch(struct menv_buf *b, char c);
void menv_buf_addf(struct menv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *menv_buf_detach(struct menv_buf *b);               /* caller frees; b is reset */

/* Reads a whole file into `out` (appended). Errors: MENV_ENOTFOUND, MENV_EIO. */
int menv_buf_read_file(struct menv_buf *out, const char *path, struct menv_error *err);
/* Writes `len` bytes to `path` atomically: a temporary file beside it, fsync, rename.
 * Errors: MENV_EIO. */
int menv_write_file_atomic(const char *path, const void *data, size_t len,
			   struct menv_error *err);

/* A vector of owned strings. */
struct menv_strvec {
	char **v;
	size_t n, alloc;
};
#define MENV_STRVEC_INIT { NULL, 0, 0 }
void menv_strvec_push(struct menv_strvec *sv, const char *s);  /* copies s */
void menv_strvec_push_owned(struct menv_strvec *sv, char *s);  /* takes s */
bool menv_strvec_contains(const struct menv_strvec *sv, const char *s);
void menv_strvec_clear(struct menv_strvec *sv);

/* ---------------------------------------------------------------------------------------- */
/* Platform                                                                                 */

/* The conda subdir of this machine ("linux-64", "linux-aarch64", ...); static storage. */
const char *menv_platform_subdir(void);

/* ---------------------------------------------------------------------------------------- */
/* Settings (.condarc keys, conda's search path plus $MENVRC)                                */

enum menv_channel_priority { MENV_PRIORITY_FLEXIBLE, MENV_PRIORITY_STRICT, MENV_PRIORITY_DISABLED };

struct menv_config {
	char *root_prefix;        /* $MENV_ROOT_PREFIX, default ~/.menv */
	char *pkgs_dir;           /* first of pkgs_dirs, default <root>/pkgs */
	char *envs_dir;           /* <root>/envs */
	char *channel_alias;      /* default https://conda.anaconda.org, no trailing slash */
	struct menv_strvec channels;          /* `channels:`; default ["defaults"] */
	struct menv_strvec default_channels;  /* what `defaults` expands to */
	enum menv_channel_priority channel_priority; /* default flexible, like conda */
	int download_threads;     /* default 5 */
	char *subdir;             /* platform subdir; $CONDA_SUBDIR overrides */
	struct menv_strvec files; /* the rc files that were read, in order */
};

/* Fills `cfg` from defaults, then each existing rc file of conda's search path
 * (/etc/conda/.condarc, /etc/conda/condarc, ~/.config/conda/.condarc, ~/.condarc,
 * $CONDARC, $MENVRC; later files override scalars and replace lists) and the environment
 * variables MENV_ROOT_PREFIX and CONDA_PKGS_DIRS. Unknown keys are ignored.
 * Errors: MENV_EPARSE naming the file, line and column. Release with menv_config_release(). */
int menv_config_load(struct menv_config *cfg, struct menv_error *err);
/* Applies one rc file (used by menv_config_load and tests). Errors: MENV_EPARSE, MENV_EIO. */
int menv_config_apply_file(struct menv_config *cfg, const char *path, struct menv_error *err);
void menv_config_defaults(struct menv_config *cfg);
void menv_config_release(struct menv_config *cfg);

/* ---------------------------------------------------------------------------------------- */
/* Channels (CEP-26 names and URLs)                                                          */

struct menv_channel {
	char *name;     /* canonical name as conda shows it: "conda-forge", or the URL for
			   file:// and URL channels outside the alias */
	char *base_url; /* scheme://.../name without trailing slash and without subdir */
	int priority;   /* higher wins; set by the caller from the channel order */
};

/* Resolves one channel string: a name ("conda-forge", "org/label/dev"), a URL
 * (http, https, file), or a filesystem path (absolute, ./relative, ~/...), using
 * cfg->channel_alias for names. "defaults" must be expanded by the caller
 * (menv_channels_expand). A trailing known subdir ("/linux-64") is dropped.
 * Errors: MENV_EPARSE for an empty or malformed string. Free with menv_channel_free(). */
int menv_channel_parse(const char *s, const struct menv_config *cfg, struct menv_channel **out,
		       struct menv_error *err);
void menv_channel_free(struct menv_channel *c);

/* Expands a user channel list in order: `defaults` becomes cfg->default_channels,
 * `nodefaults` is dropped (conda: an instruction, not a channel), duplicates are dropped.
 * `out` receives owned strings. */
void menv_channels_expand(const struct menv_strvec *in, const struct menv_config *cfg,
			  struct menv_strvec *out);

/* ---------------------------------------------------------------------------------------- */
/* MatchSpec (CEP-29)                                                                        */

struct menv_matchspec {
	char *channel;      /* "conda-forge", a URL or path; NULL when none */
	char *subdir;       /* from "chan/linux-64::" or [subdir=...]; NULL when none */
	char *name;         /* package name, "*" for any */
	char *version;      /* version constraint in conda syntax without blanks, NULL = any */
	char *build;        /* build string or glob, NULL = any */
	char *build_number; /* "3", ">=2", NULL = any */
	char *md5, *sha256, *fn, *url, *track_features, *license; /* bracket keys or NULL */
};

/* Parses one MatchSpec: `[channel[/subdir]::]name[ version[ build]]`, `name=ver[=build]`,
 * `name==ver`, `name>=1,<2`, blanks after operators and commas (`python > 3.10`,
 * `scipy >=1.10, <1.14`), and `[key=value, key='v a l']` brackets. Leading/trailing blanks
 * and a trailing `# comment` are ignored. `name=1.7` means `1.7.*` as in conda.
 * Errors: MENV_EPARSE with the spec quoted. Free with menv_matchspec_free(). */
int menv_matchspec_parse(const char *s, struct menv_matchspec **out, struct menv_error *err);
void menv_matchspec_free(struct menv_matchspec *ms);
/* The canonical string without channel: "name version build", blanks only as separators
 * (e.g. "polars >=1.0.0", "zlib 1.3.* h0_1"). Caller frees. Used for history and for the
 * solver's conda dependency strings. */
char *menv_matchspec_str(const struct menv_matchspec *ms);
/* As menv_matchspec_str with the "channel::" prefix where there is one. Caller frees. */
char *menv_matchspec_str_full(const struct menv_matchspec *ms);

/* ---------------------------------------------------------------------------------------- */
/* PackageRecord (repodata.json entries, CEP-36; repodata_record.json)                       */

struct menv_record {
	json_t *json;       /* the record as a JSON object (owned reference); unknown keys kept */
	const char *name, *version, *build; /* borrowed from json */
	int64_t build_number;
	const char *subdir; /* borrowed */
	const char *fn;     /* file name: "zlib-1.2.11-h7b6447c_3.conda" */
	const char *md5, *sha256; /* lowercase hex or NULL */
	int64_t size;       /* bytes of the package file, -1 if unknown */
	int64_t timestamp;  /* milliseconds since the epoch, 0 if unknown */
	char *url;          /* full URL of the package file (owned) */
	char *channel_url;  /* channel URL with subdir, as conda writes "channel" (owned) */
	const struct menv_channel *channel; /* borrowed from the caller's channel list */
	bool noarch_python; /* "noarch": "python" (or legacy "noarch_python": true) */
};

/* The distribution name "name-version-build" (file name without extension). Caller frees. */
char *menv_record_dist(const struct menv_record *r);
/* Fills a record from a JSON object (takes a new reference on obj). `fn` is the key of the
 * packages map, `base` the URL the file lives under (channel URL + subdir, or CEP-15
 * base_url). Missing name/version/build give MENV_EPARSE. `depends: null` is taken as []. */
int menv_record_from_json(struct menv_record *r, json_t *obj, const char *fn, const char *base,
			  const struct menv_channel *ch, struct menv_error *err);
void menv_record_release(struct menv_record *r);
/* The record's depends array (borrowed, always an array once parsed) and its constrains
 * array (borrowed, NULL when the record has none). */
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
};

/* Reads an environment file. `dependencies` may be missing, null or []; a `- pip:` mapping is
 * a section, not a spec; comments and unknown keys are ignored.
 * Errors: MENV_ENOTFOUND, MENV_EPARSE ("FILE:LINE:COL: ..."). Free with menv_envfile_free(). */
int menv_envfile_load(const char *path, struct menv_envfile **out, struct menv_error *err);
/* As _load, from bytes; `src` names them in messages. */
int menv_envfile_parse(const char *bytes, size_t len, const char *src, struct menv_envfile **out,
		       struct menv_error *err);
void menv_envfile_free(struct menv_envfile *ef);

#endif
