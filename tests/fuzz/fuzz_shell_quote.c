/* libFuzzer harness: shell quoting for activation (envs/activate.c menv_shell_quote). The
 * quoted text is read back with each shell's quoting rules (POSIX '...' and \', fish '...'
 * with \' and \\) and must give the input's bytes again; anything else aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envs.h"
#include "specs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads back one quoted word; NULL when it is not one word of quoted runs. Caller frees. */
static char *unquote(enum menv_shell sh, const char *q)
{
	struct menv_buf b = MENV_BUF_INIT;
	while (*q) {
		if (*q == '\\' && q[1] == '\'' && sh != MENV_SHELL_FISH) {
			menv_buf_addch(&b, '\'');
			q += 2;
			continue;
		}
		if (*q != '\'')
			goto bad;
		for (q++; *q != '\''; q++) {
			if (!*q)
				goto bad;
			if (sh == MENV_SHELL_FISH && *q == '\\' && (q[1] == '\\' || q[1] == '\''))
				q++;
			menv_buf_addch(&b, *q);
		}
		q++;
	}
	return menv_buf_detach(&b);
bad:
	menv_buf_release(&b);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = menv_xstrndup((const char *)data, size);
	const enum menv_shell shells[] = {MENV_SHELL_POSIX, MENV_SHELL_BASH, MENV_SHELL_ZSH,
	                                  MENV_SHELL_FISH};

	for (size_t i = 0; i < sizeof(shells) / sizeof(*shells); i++) {
		struct menv_buf q = MENV_BUF_INIT;
		menv_shell_quote(shells[i], s, &q);
		char *back = unquote(shells[i], q.buf);
		if (!back || strcmp(back, s))
			abort();
		free(back);
		menv_buf_release(&q);
	}
	(void)menv_env_var_name_ok(s);
	(void)menv_env_var_reserved(s);
	free(s);
	return 0;
}
