/*
 * sizes.c - what files weigh before they are downloaded: the plan of a lockfile install
 * shows each package's size and the total download, but conda-lock v1 and explicit locks
 * carry no size, so the transfer engine asks the servers (HEAD; for file:// curl reports the
 * file's size) before the plan is drawn.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void menv_fetch_sizes(const char *const *urls, int64_t *sizes, size_t n,
                      const struct menv_fetch_opts *o)
{
	struct menv_xfer *xs = menv_xcalloc(n + 1, sizeof(*xs));
	struct menv_xfer **ps = menv_xcalloc(n + 1, sizeof(*ps));
	struct menv_fetch_opts one = *o;
	struct menv_error err = {0};

	one.max_retries = 0; /* a size is a nicety: the download retries what fails */
	for (size_t i = 0; i < n; i++) {
		menv_xfer_init(&xs[i], urls[i]);
		xs[i].head = true;
		ps[i] = &xs[i];
	}
	menv_xfer_run(ps, n, &one, NULL, false, &err);
	for (size_t i = 0; i < n; i++) {
		if (xs[i].rc == 0 && xs[i].content_length > 0)
			sizes[i] = xs[i].content_length;
		menv_xfer_release(&xs[i]);
	}
	free(xs);
	free(ps);
}
