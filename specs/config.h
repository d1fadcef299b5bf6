/*
 * config.h - settings: the .condarc keys menv reads, conda's search path plus $MENVRC, their
 * descriptions for `menv config`, and the .condarc editor (read-modify-write under a lock,
 * each value written back in its YAML style). Part of specs.h, which includes it here; include
 * specs.h, not this file.
 */

#ifndef MENV_SPECS_CONFIG_H
#define MENV_SPECS_CONFIG_H

#ifndef MENV_SPECS_H
#error "include specs.h, which includes config.h"
#endif

/* Settings (.condarc keys, conda's search path plus $MENVRC)                                */

enum menv_channel_priority { MENV_PRIORITY_FLEXIBLE, MENV_PRIORITY_STRICT, MENV_PRIORITY_DISABLED };
/* conda's update_modifier: how a change treats installed packages the request does not name */
enum menv_update_modifier {
	MENV_UPDATE_SPECS,            /* default: they stay unless the request needs them moved */
	MENV_UPDATE_FREEZE_INSTALLED, /* they never move */
	MENV_UPDATE_DEPS,             /* the requested names' dependencies update too */
	MENV_UPDATE_ALL,              /* everything updates */
	MENV_UPDATE_SATISFIED_SKIP,   /* specs_satisfied_skip_solve: no solve when installed
	                                 records already satisfy the request */
};

#define MENV_REPODATA_MAX_BYTES_DEFAULT ((int64_t)2 << 30)

struct menv_config {
	char *root_prefix; /* $MENV_ROOT_PREFIX, default ~/.menv */
	char *pkgs_dir;    /* the package cache written: after menv_config_load the first writable
			   entry of pkgs_dirs (conda's first_writable), else its first entry */
	struct menv_strvec pkgs_dirs; /* `pkgs_dirs` (CONDA_PKGS_DIRS=a,b), each expanded,
				         default [<root>/pkgs]: packages are looked up in each,
				         in order; only pkgs_dir is written */
	bool pkgs_dir_writable;       /* false: no entry of pkgs_dirs is writable (read-only
				         modes or mounts) and pkgs_dir is merely the first */
	struct menv_strvec envs_dirs; /* `envs_dirs` (CONDA_ENVS_DIRS=a:b or CONDA_ENVS_PATH),
				         each expanded, default [<root>/envs]: a name is looked
				         up in each, in order (conda's locate_prefix_by_name) */
	char *envs_dir;               /* where a named environment is created: after
				         menv_config_load the first writable entry of envs_dirs
				         (conda's first_writable_envs_dir), else its first */
	char *channel_alias;          /* default https://conda.anaconda.org, no trailing slash; may
				     hold credentials and a /t/<token> (never print it) */
	struct menv_strvec channels;  /* `channels:`; default ["defaults"] */
	struct menv_strvec default_channels;         /* what `defaults` expands to */
	enum menv_channel_priority channel_priority; /* default strict, like micromamba */
	struct menv_strvec pinned_packages; /* `pinned_packages:` MatchSpecs held in every solve
	                                       ($CONDA_PINNED_PACKAGES: '&'-separated) */
	enum menv_update_modifier update_modifier; /* `update_modifier:`, default update_specs */
	bool add_pip_as_python_dependency; /* python needs pip (conda's key), default true */
	struct menv_strvec aggressive_update_packages;      /* never pruned by a remove; default
	                                                  ca-certificates, certifi, openssl */
	bool always_copy, always_softlink, allow_softlinks; /* link methods (conda's keys) */
	bool changeps1;       /* `changeps1:` activation puts "(NAME) " into PS1; default true */
	bool smoke_check;     /* run the ops/ smoke check after creating or changing an
				     environment that holds a CUDA compiler; default true */
	int download_threads; /* parallel transfers, 1..64, default 5 (micromamba's) */
	char *subdir;         /* platform subdir; $CONDA_SUBDIR overrides */
	struct menv_strvec files; /* the rc files that were read, in order */

	/* `custom_channels:` (name -> URL of its location), as two parallel vectors. conda's
	 * default entry (pkgs/pro beside the default channels) comes first. */
	struct menv_strvec custom_channel_names, custom_channel_urls;
	/* `migrated_custom_channels:` (name -> former location) and
	 * `migrated_channel_aliases:` (former aliases), as conda. */
	struct menv_strvec migrated_custom_names, migrated_custom_urls;
	struct menv_strvec migrated_channel_aliases;
	/* `mirrored_channels:` (mamba 2: channel name -> ordered list of mirror URLs), flattened
	 * into parallel vectors: one (name, URL) pair per mirror, in order. A later rc file that
	 * names a channel replaces its list. */
	struct menv_strvec mirrored_channel_names, mirrored_channel_urls;

	/* Transfers (conda's keys and defaults) */
	int remote_max_retries;             /* retries after the first attempt, default 3 */
	double remote_backoff_factor;       /* seconds; retry k waits factor * 2^(k-1), default 1 */
	double remote_connect_timeout_secs; /* default 9.15 */
	double remote_read_timeout_secs;    /* no byte for this long fails the attempt, 60 */
	/* 1 (default): honour the server's Cache-Control max-age; 0: always revalidate;
	 * N > 1: treat cached repodata as fresh for N seconds (conda's local_repodata_ttl) */
	long local_repodata_ttl;
	bool offline;              /* `offline:`, $CONDA_OFFLINE, --offline: cache only */
	bool ssl_verify;           /* default true; false disables peer verification */
	char *ssl_ca_bundle;       /* `ssl_verify: <path>`: CA file or directory, or NULL */
	char *client_ssl_cert;     /* PEM certificate (may hold the key too), or NULL */
	char *client_ssl_cert_key; /* PEM key, or NULL */
	char *proxy_http;          /* proxy_servers: {http: URL}, or NULL (libcurl's env vars) */
	char *proxy_https;         /* proxy_servers: {https: URL}, or NULL */
	bool repodata_use_zst;     /* try repodata.json.zst first, default true */
	bool repodata_use_shards;  /* use repodata_shards.msgpack.zst where served, default true */

	/* largest repodata accepted, in bytes once decompressed (repodata_max_bytes; 2 GiB) */
	int64_t repodata_max_bytes;
};

/* Fills `cfg` from defaults, then each existing rc file of conda's search path
 * (/etc/conda/.condarc, /etc/conda/condarc, <root>/.condarc (menv_config_system_rc),
 * ~/.config/conda/.condarc, ~/.condarc, $CONDA_PREFIX/.condarc and condarc,
 * $CONDARC, $MENVRC; later files override scalars and replace lists and maps), then
 * environment variables: MENV_<KEY> or CONDA_<KEY> for each key below (MENV_ wins; lists
 * comma-separated, e.g. CONDA_CHANNELS=a,b), MENV_ROOT_PREFIX and CONDA_PKGS_DIRS.
 * Keys: channels, default_channels, channel_alias, custom_channels, migrated_custom_channels,
 * mirrored_channels (a mapping of channel names to lists of URLs),
 * migrated_channel_aliases, channel_priority, pkgs_dirs, envs_dirs, root_prefix,
 * download_threads (alias fetch_threads), remote_max_retries, remote_backoff_factor,
 * remote_connect_timeout_secs, remote_read_timeout_secs, local_repodata_ttl, offline,
 * ssl_verify (true, false or a CA bundle path), client_ssl_cert, client_ssl_cert_key,
 * proxy_servers ({http: URL, https: URL}), repodata_use_zst, repodata_use_shards,
 * repodata_max_bytes (bytes, e.g. MENV_REPODATA_MAX_BYTES=1000000).
 * Unknown keys are ignored. Errors: MENV_EPARSE naming the file (or variable), line and
 * column, MENV_ENOTFOUND/MENV_EPARSE when a setting needs an unusable HOME. After a failure
 * `cfg` holds nothing (it is released). Release with menv_config_release(). */
int menv_config_load(struct menv_config *cfg, struct menv_error *err);
/* Applies one rc file (used by menv_config_load and tests). Errors: MENV_EPARSE, MENV_EIO. */
int menv_config_apply_file(struct menv_config *cfg, const char *path, struct menv_error *err);
/* Applies the rc text `text` (len bytes, borrowed) as menv_config_apply_file applies the file
 * `path`, whose name its errors carry (FILE:LINE:COL). Errors: MENV_EPARSE. */
int menv_config_apply_text(struct menv_config *cfg, const char *path, const char *text, size_t len,
                           struct menv_error *err);

/* `menv config` (conda/cli/main_config.py; condarc.c). The settings menv knows, by conda's
 * names: a primitive (one value), a sequence (a list of strings) or a map (of strings). */
enum menv_param_kind { MENV_PARAM_PRIMITIVE, MENV_PARAM_SEQUENCE, MENV_PARAM_MAP };
struct menv_param {
	const char *name;
	enum menv_param_kind kind;
	const char *type; /* the element type(s) as conda names them: "bool", "int", "str" */
	const char *desc; /* one paragraph */
};
/* All of them, sorted by name (`*n` of them); static, never freed. */
const struct menv_param *menv_config_params(size_t *n);
/* One by name, or NULL. */
const struct menv_param *menv_config_param(const char *name);
/* The values `cfg` gives every setting of menv_config_params, as a new JSON object in that
 * order (lists of strings, maps of strings, booleans, integers, reals, strings or null;
 * credentials in channel_alias and proxy_servers hidden). */
json_t *menv_config_json(const struct menv_config *cfg);
/* conda config --show's text (format_dict): "key: value" with Python's True/False/None,
 * "key:" then "  - item" lines, "key: []", "key:" then "  k: v" lines, "key: {}". Appends. */
void menv_config_format_show(json_t *values, struct menv_buf *out);
/* conda config --get's lines for one key (print_config_item): "--set key value"; a list as
 * "--add key 'item'" lines, last item first, channels' first and last lines marked "   #
 * lowest priority" / "   # highest priority"; a map one line per entry as key.sub. */
void menv_config_format_get(const char *key, json_t *value, struct menv_buf *out);
/* conda config --describe's block for one setting: "# # name (type)", the description
 * wrapped at 70 columns, then its default (`dflt`, borrowed) as commented YAML. Appends. */
void menv_config_describe(const struct menv_param *p, json_t *dflt, struct menv_buf *out);
/* conda config's read-only views (conda/cli/main_config.py): SHOW, the values menv reads
 * (--show [KEY...]); SOURCES, each rc file's own settings by path, then "envvars" from the
 * MENV_* and CONDA_* variables of known settings (--show-sources); DESCRIBE, every setting's
 * type, description and default (--describe [KEY...]). `keys` (empty: all) must name known
 * settings. `*out`: a new reference, an object (an array of {name, parameter_type,
 * element_types, description, default_value} for DESCRIBE), NULL on error; `text` (may be
 * NULL) gets conda's text appended. Both are redacted (menv_json_redact, menv_buf_redact:
 * no user:password@ or /t/TOKEN/ of a channel is shown). Errors: MENV_EUSAGE "invalid configuration parameter
 * 'KEY'", and those of menv_config_load and menv_condarc_load. */
enum menv_config_view { MENV_CONFIG_SHOW, MENV_CONFIG_SOURCES, MENV_CONFIG_DESCRIBE };
int menv_config_view(enum menv_config_view view, const struct menv_strvec *keys, json_t **out,
                     struct menv_buf *text, struct menv_error *err);
/* The rc file `menv config` writes by default: $MENVRC when set, else ~/.condarc. Caller
 * frees. */
char *menv_config_user_rc(void);
/* The root prefix's rc file (`menv config --system`, read after /etc/conda's):
 * $MENV_ROOT_PREFIX/.condarc, else ~/.menv/.condarc. Caller frees. */
char *menv_config_system_rc(void);

/* One rc file as `menv config` edits it: its settings as an ordered JSON object (`doc`), the
 * comment lines at its top (`header`, kept on save). */
struct menv_condarc {
	char *path;
	json_t *doc;
	char *header;
	int lock; /* menv_condarc_load_locked's lock descriptor + 1; 0: none (so {0} is unlocked) */
	/* how each scalar of the file was written (plain and its text, or quoted): a save
	 * writes the values it still holds the same way, so each keeps its YAML type */
	struct menv_yaml_styles *styles;
};
/* Reads `path` (a missing or empty file is an empty mapping). Errors: MENV_EPARSE (with line
 * and column, or not a mapping), MENV_EIO. Release with menv_condarc_release. */
int menv_condarc_load(const char *path, struct menv_condarc *rc, struct menv_error *err);
/* menv_condarc_load under menv_file_lock(path), held until menv_condarc_release (after
 * menv_condarc_save): what every edit of the file uses, so that concurrent edits (16 parallel
 * `menv config --append channels chN`) all survive. Errors: those of both. */
int menv_condarc_load_locked(const char *path, struct menv_condarc *rc, struct menv_error *err);
/* Frees the settings and releases the lock of menv_condarc_load_locked. */
void menv_condarc_release(struct menv_condarc *rc);
/* The value at "key" or "key.sub" (borrowed), or NULL. */
json_t *menv_condarc_get(const struct menv_condarc *rc, const char *key);
/* --set KEY VALUE: a primitive (checked as menv reads it, then typed: true/false, integers)
 * or a map entry KEY.SUB. Errors: MENV_EUSAGE (unknown key, a list key, a bad value). */
int menv_condarc_set(struct menv_condarc *rc, const char *key, const char *value,
                     struct menv_error *err);
/* --prepend/--add (`prepend`) or --append KEY VALUE to a list (or the list KEY.SUB of a map);
 * `channels` starts as [defaults] when the file has none, as conda's. A value already there
 * moves, with a warning pushed to `warnings` (may be NULL). Errors: MENV_EUSAGE (unknown or
 * not a list key), MENV_EPARSE (the file's value is not a list). */
int menv_condarc_add(struct menv_condarc *rc, const char *key, const char *value, bool prepend,
                     struct menv_strvec *warnings, struct menv_error *err);
/* --remove KEY VALUE. Errors: MENV_EUSAGE, MENV_ENOTFOUND (the key, or the value in it). */
int menv_condarc_remove(struct menv_condarc *rc, const char *key, const char *value,
                        struct menv_error *err);
/* --remove-key KEY (or KEY.SUB). Errors: MENV_ENOTFOUND. */
int menv_condarc_remove_key(struct menv_condarc *rc, const char *key, struct menv_error *err);
/* Writes the file back (header, then the settings as block YAML; replaced with a rename).
 * A link is written through (its target replaced, as conda's open(path, "w")) and the file's
 * permission bits are kept (0644 for a new one). Errors: MENV_EIO, also when the file (or
 * what its link names) exists and is not a regular file (a device, a pipe). */
int menv_condarc_save(const struct menv_condarc *rc, struct menv_error *err);
/* The rc file `menv config --get` and the edits use: `file` when given, else with `system`
 * the root prefix's (menv_config_system_rc), else with `env` and an active environment
 * $CONDA_PREFIX/.condarc, else menv_config_user_rc. New string, caller frees. NULL when HOME
 * is unusable: `err` holds menv_home's error, prefixed "no .condarc to use (set MENVRC or use
 * --file FILE)". */
char *menv_config_rc_path(const char *file, bool system, bool env, struct menv_error *err);
/* conda config's edits of one rc file, in the order conda applies them (main_config.py). */
enum menv_config_edit {
	MENV_CONFIG_PREPEND,    /* --add, --prepend KEY VALUE */
	MENV_CONFIG_APPEND,     /* --append KEY VALUE */
	MENV_CONFIG_SET,        /* --set KEY VALUE */
	MENV_CONFIG_REMOVE,     /* --remove KEY VALUE */
	MENV_CONFIG_REMOVE_KEY, /* --remove-key KEY */
	MENV_CONFIG_NEDITS
};
/* conda config --json's answer to --get and the edits: {rc_path: `path`, success: true,
 * warnings: `warnings`' lines, get: `got` (borrowed)}. New reference. */
json_t *menv_config_get_json(const char *path, json_t *got, const struct menv_strvec *warnings);

/* conda config --get [KEY...] and the edits of one rc file (main_config.py execute_config):
 * reads `path`, under its lock (menv_condarc_load_locked) when `edits` holds an edit. With
 * `get` (NULL: no --get) the values of those keys (empty: every key of the file, sorted by
 * name; KEY.SUB names a map's entry) are set into `got` (an object, borrowed) and, when
 * `text` is not NULL, conda's --get lines (menv_config_format_get) appended to it, both
 * without credentials or tokens (menv_json_redact; the file keeps them); a key
 * whose setting menv does not know is skipped with "unknown key NAME" pushed to `warnings`,
 * one the file lacks is left out. Then edits[k] is applied for each k in enum order, each a
 * list of KEY VALUE pairs (KEY alone for MENV_CONFIG_REMOVE_KEY), with menv_condarc_add's
 * warnings pushed to `warnings` (every warning redacted), and the file saved when there
 * was an edit. Before an edit other than --remove-key the file's values are checked as
 * menv_config_load reads them. Errors: those of menv_condarc_load(_locked), MENV_EPARSE with
 * FILE:LINE:COL for a value of the wrong type (`channels: [{a: b}]`), the edits' and
 * menv_condarc_save's; a failed edit saves nothing. */
int menv_config_get_edit(const char *path, const struct menv_strvec *get,
                         const struct menv_strvec edits[MENV_CONFIG_NEDITS], json_t *got,
                         struct menv_buf *text, struct menv_strvec *warnings,
                         struct menv_error *err);
void menv_config_defaults(struct menv_config *cfg);
void menv_config_release(struct menv_config *cfg);

#endif /* MENV_SPECS_CONFIG_H */
