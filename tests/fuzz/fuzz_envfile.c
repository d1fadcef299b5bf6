/* libFuzzer harness: environment.yml (specs/envfile.c), and writing it back. */
#include <stdint.h>
#include <stdlib.h>

#include "specs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct menv_envfile *ef = NULL, *again = NULL;
	struct menv_error err = {0};

	if (menv_envfile_parse((const char *)data, size, "environment.yml", &ef, &err))
		return 0;
	struct menv_buf b = MENV_BUF_INIT;
	/* what was read is UTF-8 (the parser checks), so the writer takes it */
	if (menv_envfile_write(ef, &b, &err))
		abort();
	if (!menv_envfile_parse(b.buf, b.len, "written.yml", &again, &err))
		menv_envfile_free(again);
	for (size_t i = 0; i < ef->virtual_packages.n; i++)
		(void)menv_virtual_decl_ok(ef->virtual_packages.v[i]);
	menv_buf_release(&b);
	menv_envfile_free(ef);
	return 0;
}
