/*
 * link.h - internal interface between prefix.c (the environment transaction) and link.c
 * (linking one package). Not part of the public envs.h.
 */
#ifndef MENV_ENVS_LINK_H
#define MENV_ENVS_LINK_H

#include "envs.h"

struct menv_link_ctx {
	const char *prefix;        /* the final prefix path written into files */
	const char *staging;       /* where files are created now (renamed to prefix later) */
	const char *pkgdir;        /* the extracted package in the package cache */
	bool noarch_python;        /* remap site-packages/ and python-scripts/ */
	const char *site_packages; /* "lib/python3.X/site-packages" for noarch python */
};

/* Links the files of ctx->pkgdir into ctx->staging, appending prefix-relative paths to
 * `files` and paths_data entries to `paths` (both JSON arrays, borrowed).
 * Errors: MENV_EPARSE, MENV_EUNSAFE, MENV_EUNSUPPORTED, MENV_EIO. */
int menv_link_package(const struct menv_link_ctx *ctx, json_t *files, json_t *paths,
		      struct menv_link_stats *st, struct menv_error *err);

/* mkdir -p. Errors: MENV_EIO. */
int menv_mkdirs(const char *path, struct menv_error *err);

#endif
