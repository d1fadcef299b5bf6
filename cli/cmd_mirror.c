/*
 * cmd_mirror.c - `menv mirror`: copies a channel (for the platforms named, and noarch), or the
 * packages a lockfile names, to a folder a web server can serve or to an oci:// registry
 * channel (fetch/mirror.c does the work).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

#define USAGE                                                                                      \
	"usage: menv mirror (-c CHANNEL | -f LOCKFILE) [--platform SUBDIR]... DEST\n"              \
	"  DEST: a folder (or file:// URL) written as a channel, or oci://HOST/PATH\n"

int menv_cmd_mirror(int argc, char **argv)
{
	struct menv_cli_args a = {0};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_fetch_opts fo;
	struct menv_channel **creds = NULL;
	size_t ncreds = 0;
	struct menv_mirror_stats st = {0};
	int rc;

	if ((rc = menv_cli_parse(argc, argv, "fcQqh", USAGE, 1, 1, &a)))
		return MENV_CLI_EXIT(rc);
	if ((a.file != NULL) == (a.channels.n > 0) || a.channels.n > 1) {
		fputs(USAGE, stderr);
		menv_cli_args_release(&a);
		return MENV_EXIT_USAGE;
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	menv_fetch_opts_from_config(&fo, &cfg);
	fo.cancel = MENV_CLI_CANCEL;
	/* a lock's URLs (without credentials) get those of the channel they lie under */
	menv_channel_credentials(&cfg, NULL, NULL, &creds, &ncreds);
	fo.creds = (const struct menv_channel *const *)creds;
	fo.ncreds = ncreds;
	if (a.file) {
		rc = menv_mirror_lock(a.file, (const char *const *)a.platforms.v, a.platforms.n,
		                      a.args.v[0], &fo, NULL, NULL, &st, &err);
	} else {
		if (!a.platforms.n)
			menv_strvec_push(&a.platforms, cfg.subdir);
		struct menv_channel *c = NULL;
		rc = menv_channel_parse(a.channels.v[0], &cfg, &c, &err);
		if (!rc)
			rc = menv_mirror_channel(c, (const char *const *)a.platforms.v,
			                         a.platforms.n, a.args.v[0], &fo, NULL, NULL, &st,
			                         &err);
		menv_channel_free(c);
	}
	if (!rc && !a.quiet)
		printf("mirrored %zu package%s (%.1f MB) and %zu subdir index%s to %s\n",
		       st.packages, MENV_CLI_S(st.packages), (double)st.bytes / 1e6, st.subdirs,
		       st.subdirs == 1 ? "" : "es", st.dest);
out:
	menv_channels_free(creds, ncreds);
	menv_config_release(&cfg);
	menv_cli_args_release(&a);
	return rc ? menv_cli_fail(&err) : 0;
}
