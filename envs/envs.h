/*
 * envs.h - prefixes: linking packages from the package cache, prefix replacement,
 * `conda-meta/` PrefixRecords and history (CEP-32, CEP-34).
 *
 * A new environment is built in a temporary directory beside its target and renamed into
 * place when complete, so a failed or interrupted create leaves nothing behind. Never
 * touches the network.
 */
#ifndef MENV_ENVS_H
#define MENV_ENVS_H

#include "specs.h"

/* The conda placeholder prefix that packages built by conda-build carry. */
#define MENV_PLACEHOLDER "/opt/anaconda1anaconda2anaconda3"

struct menv_link_stats {
	size_t packages;     /* packages linked */
	size_t files;        /* files, links and directories created */
	size_t hardlinks;    /* files hardlinked from the package cache */
	size_t copies;       /* files copied (no hardlink possible, or prefix replaced) */
	size_t replaced;     /* files whose prefix placeholder was replaced */
	size_t clobbered;    /* files of one package overwritten by a later package */
};

struct menv_install_opts {
	const char *pkgs_dir;              /* the package cache holding the extracted packages */
	const struct menv_strvec *requested; /* MatchSpecs the user asked for (history, records) */
	const char *cmdline;               /* the command line for conda-meta/history */
	volatile int *cancel;              /* set non-zero (by a signal handler) to stop */
};

/* Creates a new environment at `prefix` holding `recs` (ordered dependencies first; each
 * already extracted in opts->pkgs_dir). `prefix` must not exist, or be an empty directory.
 * Links each file of `info/paths.json` (fallback `info/files` + `info/has_prefix`) by
 * hardlink, or copy when hardlinking fails or the file needs its prefix replaced (text and
 * binary mode, CEP-34); softlinks are recreated. noarch python packages go to the
 * environment python's site-packages and bin. Writes `conda-meta/<dist>.json` PrefixRecords
 * (conda's fields) and `conda-meta/history`. Everything is
 * built in `<parent>/.<name>.menv-tmp-XXXXXX` and renamed to `prefix` at the end; on any
 * error the temporary tree is removed and `prefix` is as before.
 * Errors: MENV_EEXIST (prefix not empty), MENV_EUNSUPPORTED (e.g. binary placeholder shorter
 * than the new prefix), MENV_EUNSAFE (a path leaving the prefix), MENV_EIO, MENV_EINTR. */
int menv_env_create(const char *prefix, const struct menv_record *const *recs, size_t n,
		    const struct menv_install_opts *opts, struct menv_link_stats *stats,
		    struct menv_error *err);

/* An installed package (a parsed conda-meta/<dist>.json). */
struct menv_prefix_record {
	json_t *json;                       /* the whole record (owned reference) */
	const char *name, *version, *build; /* borrowed from json */
	int64_t build_number;
	const char *channel, *subdir, *url; /* borrowed, may be NULL */
};

/* Reads every `conda-meta/<dist>.json` of `prefix`, sorted by name. `*out` is a new array of
 * `*n` records; free with menv_prefix_records_free(). A prefix without conda-meta/ is
 * MENV_ENOTFOUND; an unreadable record is MENV_EPARSE naming the file. */
int menv_prefix_records_load(const char *prefix, struct menv_prefix_record **out, size_t *n,
			     struct menv_error *err);
void menv_prefix_records_free(struct menv_prefix_record *recs, size_t n);

/* Replaces every occurrence of `placeholder` with `prefix` in `data` (CEP-34).
 * Text mode: plain substitution, `out` receives the new bytes.
 * Binary mode: inside each NUL-terminated string holding the placeholder, the tail is shifted
 * and the string padded with NULs so the file keeps its length.
 * Errors: MENV_EUNSUPPORTED in binary mode when `prefix` is longer than `placeholder`. */
int menv_prefix_replace(const char *data, size_t len, const char *placeholder,
			const char *prefix, bool binary, struct menv_buf *out,
			struct menv_error *err);

#endif
