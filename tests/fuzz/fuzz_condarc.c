/* libFuzzer harness: .condarc (specs/config.c, through a temporary file as menv reads it),
 * then resolving the channels it names (specs/channel.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "specs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *rc_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct menv_error err = {0};
	struct menv_config cfg;

	if (!rc_path) {
		const char *tmp = getenv("TMPDIR");
		rc_path = menv_xasprintf("%s/menv-fuzz-condarc-%d", tmp ? tmp : "/tmp",
		                         (int)getpid());
	}
	if (menv_write_file_atomic(rc_path, data, size, &err))
		abort();
	menv_config_defaults(&cfg);
	if (!menv_config_apply_file(&cfg, rc_path, &err)) {
		struct menv_strvec exp = MENV_STRVEC_INIT;
		menv_channels_expand(&cfg.channels, &cfg, &exp);
		for (size_t i = 0; i < exp.n && i < 16; i++) {
			struct menv_channel **ch = NULL;
			size_t n = 0;
			if (menv_channel_resolve(exp.v[i], &cfg, &ch, &n, &err))
				continue;
			for (size_t k = 0; k < n; k++) {
				struct menv_strvec urls = MENV_STRVEC_INIT;
				menv_channel_urls(ch[k], "linux-64", true, &urls);
				for (size_t u = 0; u < urls.n; u++)
					free(menv_url_redact(urls.v[u]));
				menv_strvec_clear(&urls);
			}
			menv_channels_free(ch, n);
		}
		menv_strvec_clear(&exp);
	}
	menv_config_release(&cfg);
	unlink(rc_path);
	return 0;
}
