/* conda-meta/'s JSON text (menv_json_python_dump): byte for byte what Python's
 * json.dump(obj, indent=2) writes, which conda writes (jansson's JSON_INDENT(2) |
 * JSON_ENSURE_ASCII, its \u escapes in lower case and DEL escaped): control characters,
 * quotes, backslashes, DEL, two- three- and four-byte UTF-8 (a surrogate pair), an embedded
 * NUL, empty and nested containers, integers, reals, booleans and null, keys in insertion
 * order. The expected texts are Python 3's json.dumps(obj, indent=2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envs.h"

static void dumps_as(json_t *v, const char *want)
{
	char *got = menv_json_python_dump(v, 0);
	assert_string_equal(got, want);
	free(got);
	json_decref(v);
}

static void test_strings(void **state)
{
	(void)state;
	/* json.dumps(["a\"b\\c/d", "\b\f\n\r\t\x01\x1f\x7f", "é€😀", "a\0b", ""], indent=2) */
	json_t *a = json_array();
	json_array_append_new(a, json_string("a\"b\\c/d"));
	json_array_append_new(a, json_string("\b\f\n\r\t\x01\x1f\x7f"));
	json_array_append_new(a, json_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
	json_array_append_new(a, json_stringn("a\0b", 3));
	json_array_append_new(a, json_string(""));
	dumps_as(a, "[\n"
	            "  \"a\\\"b\\\\c/d\",\n"
	            "  \"\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\",\n"
	            "  \"\\u00e9\\u20ac\\ud83d\\ude00\",\n"
	            "  \"a\\u0000b\",\n"
	            "  \"\"\n"
	            "]");
}

static void test_shapes(void **state)
{
	(void)state;
	/* json.dumps({"z": 1, "a": {"k\u00e9": [True, False, None]}, "e": {}, "l": [],
	 *             "n": -9007199254740993, "r": 0.5, "x": [[{}], []]}, indent=2) */
	json_t *o = json_object(), *in = json_object(), *l = json_array(), *x = json_array(),
	       *x0 = json_array();
	json_object_set_new(o, "z", json_integer(1));
	json_array_append_new(l, json_true());
	json_array_append_new(l, json_false());
	json_array_append_new(l, json_null());
	json_object_set_new(in, "k\xc3\xa9", l);
	json_object_set_new(o, "a", in);
	json_object_set_new(o, "e", json_object());
	json_object_set_new(o, "l", json_array());
	json_object_set_new(o, "n", json_integer(-9007199254740993LL));
	json_object_set_new(o, "r", json_real(0.5));
	json_array_append_new(x0, json_object());
	json_array_append_new(x, x0);
	json_array_append_new(x, json_array());
	json_object_set_new(o, "x", x);
	dumps_as(o, "{\n"
	            "  \"z\": 1,\n"
	            "  \"a\": {\n"
	            "    \"k\\u00e9\": [\n"
	            "      true,\n"
	            "      false,\n"
	            "      null\n"
	            "    ]\n"
	            "  },\n"
	            "  \"e\": {},\n"
	            "  \"l\": [],\n"
	            "  \"n\": -9007199254740993,\n"
	            "  \"r\": 0.5,\n"
	            "  \"x\": [\n"
	            "    [\n"
	            "      {}\n"
	            "    ],\n"
	            "    []\n"
	            "  ]\n"
	            "}");
	dumps_as(json_object(), "{}");
	dumps_as(json_string("x"), "\"x\"");
}

/* 40 levels deep: two spaces a level, as Python indents. */
static void test_deep(void **state)
{
	(void)state;
	json_t *v = json_integer(7);
	for (int i = 0; i < 40; i++) {
		json_t *a = json_array();
		json_array_append_new(a, v);
		v = a;
	}
	char *got = menv_json_python_dump(v, 16);
	struct menv_buf want = MENV_BUF_INIT;
	for (int i = 0; i < 40; i++) {
		menv_buf_addf(&want, "%*s[\n", 2 * i, "");
	}
	menv_buf_addf(&want, "%*s7", 80, "");
	for (int i = 39; i >= 0; i--)
		menv_buf_addf(&want, "\n%*s]", 2 * i, "");
	assert_string_equal(got, want.buf);
	menv_buf_release(&want);
	free(got);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_strings),
	        cmocka_unit_test(test_shapes),
	        cmocka_unit_test(test_deep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
