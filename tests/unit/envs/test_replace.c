/* Prefix replacement (CEP-34): text mode substitutes, binary mode rewrites C strings in place
 * and pads with NULs so that offsets inside the file do not move. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envs.h"

#define PH "/opt/anaconda1anaconda2anaconda3"

static void test_text(void **state)
{
	(void)state;
	const char in[] = "#!" PH "/bin/python\nprefix=" PH "\nlib=" PH "/lib:" PH "/lib64\n";
	struct menv_buf out = MENV_BUF_INIT;
	struct menv_error err = {0};
	assert_int_equal(
	        menv_prefix_replace(in, sizeof(in) - 1, PH,
	                            "/home/u/.menv/envs/a-much-longer-prefix-than-the-placeholder",
	                            false, &out, &err),
	        0);
	assert_string_equal(
	        out.buf,
	        "#!/home/u/.menv/envs/a-much-longer-prefix-than-the-placeholder/bin/python\n"
	        "prefix=/home/u/.menv/envs/a-much-longer-prefix-than-the-placeholder\n"
	        "lib=/home/u/.menv/envs/a-much-longer-prefix-than-the-placeholder/lib:"
	        "/home/u/.menv/envs/a-much-longer-prefix-than-the-placeholder/lib64\n");
	menv_buf_release(&out);
}

static void test_binary(void **state)
{
	(void)state;
	/* two C strings, the first holding the placeholder twice and a newline before its NUL,
	 * then bytes that must not move */
	const char in[] = "\x7f"
	                  "ELF\0" PH "/lib:" PH "/x\nend\0TAIL" PH "\0\x01\x02";
	size_t len = sizeof(in) - 1;
	struct menv_buf out = MENV_BUF_INIT;
	struct menv_error err = {0};
	assert_int_equal(menv_prefix_replace(in, len, PH, "/e/p", true, &out, &err), 0);
	assert_int_equal(out.len, len);
	const char want[] = "\x7f"
	                    "ELF\0/e/p/lib:/e/p/x\nend";
	assert_memory_equal(out.buf, want, sizeof(want) - 1);
	/* the first string keeps its length: padded with NULs up to the original NUL */
	size_t first_end = 4 + 1 + strlen(PH "/lib:" PH "/x\nend");
	for (size_t i = sizeof(want) - 1; i <= first_end; i++)
		assert_int_equal(out.buf[i], '\0');
	assert_memory_equal(out.buf + first_end + 1, "TAIL/e/p", 8);
	assert_int_equal(out.buf[len - 2], '\x01');
	assert_int_equal(out.buf[len - 1], '\x02');
	menv_buf_release(&out);
}

static void test_binary_too_long(void **state)
{
	(void)state;
	const char in[] = "x\0" PH "/bin\0";
	struct menv_buf out = MENV_BUF_INIT;
	struct menv_error err = {0};
	char longp[80];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(menv_prefix_replace(in, sizeof(in) - 1, PH, longp, true, &out, &err),
	                 MENV_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "longer than the 32-byte placeholder"));
	menv_buf_release(&out);
}

static void test_no_placeholder(void **state)
{
	(void)state;
	const char in[] = "nothing to see\0here";
	struct menv_buf out = MENV_BUF_INIT;
	struct menv_error err = {0};
	assert_int_equal(menv_prefix_replace(in, sizeof(in) - 1, PH, "/p", true, &out, &err), 0);
	assert_int_equal(out.len, sizeof(in) - 1);
	assert_memory_equal(out.buf, in, sizeof(in) - 1);
	menv_buf_release(&out);
}

/* A shebang holding the placeholder that becomes too long (> 127 bytes) or holds a blank is
 * rewritten to `#!/usr/bin/env NAME ARGS` (conda, BR-027); other lines are replaced as usual. */
static void test_shebang(void **state)
{
	(void)state;
	const char in[] = "#!" PH "/bin/python3.9 -E -s\nroot = '" PH "'\n";
	struct menv_buf out = MENV_BUF_INIT;
	struct menv_error err = {0};
	assert_int_equal(menv_prefix_replace(in, sizeof(in) - 1, PH, "/tmp/env with space", false,
	                                     &out, &err),
	                 0);
	assert_string_equal(out.buf,
	                    "#!/usr/bin/env python3.9 -E -s\nroot = '/tmp/env with space'\n");
	menv_buf_release(&out);

	char longp[140];
	memset(longp, 'l', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(menv_prefix_replace(in, sizeof(in) - 1, PH, longp, false, &out, &err), 0);
	const char want[] = "#!/usr/bin/env python3.9 -E -s\nroot = '/lll";
	assert_memory_equal(out.buf, want, sizeof(want) - 1);
	menv_buf_release(&out);

	/* short and blank-free: direct; an env shebang and binary mode: untouched */
	assert_int_equal(menv_prefix_replace(in, sizeof(in) - 1, PH, "/e", false, &out, &err), 0);
	assert_string_equal(out.buf, "#!/e/bin/python3.9 -E -s\nroot = '/e'\n");
	menv_buf_release(&out);
	const char env[] = "#!/usr/bin/env python\n# " PH "\n";
	assert_int_equal(menv_prefix_replace(env, sizeof(env) - 1, PH, "/a b", false, &out, &err),
	                 0);
	assert_string_equal(out.buf, "#!/usr/bin/env python\n# /a b\n");
	menv_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_text),
	        cmocka_unit_test(test_binary),
	        cmocka_unit_test(test_binary_too_long),
	        cmocka_unit_test(test_no_placeholder),
	        cmocka_unit_test(test_shebang),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
