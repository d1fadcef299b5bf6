/* conda-meta/'s JSON text (menv_json_python_dump): byte for byte what Python's
 * json.dump(obj, indent=2) writes, which conda writes (jansson's JSON_INDENT(2) |
 * JSON_ENSURE_ASCII, its \u escapes in lower case and DEL escaped): control characters,
 * quotes, backslashes, DEL, two- three- and four-byte UTF-8 (a surrogate pair), an embedded
 * NUL, empty and nested containers, integers, reals, booleans and null, keys in insertion
 * order, reals as repr(float) writes them. The expected texts are Python 3's
 * json.dumps(obj, indent=2). test_differential
 * compares the writer with jansson's dump and the escape fix it replaced (reference_dump,
 * pyjson.c as it was) on random values: strings of every kind of byte, nesting, integers at
 * their limits, reals, PrefixRecord-shaped paths_data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "envs.h"

/* pyjson.c before it wrote the text itself: jansson's dump, escapes fixed */
static char *reference_dump(json_t *v, size_t hint)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	struct menv_buf b = MENV_BUF_INIT;

	/* no DEL: the escapes' case fixed in place, no copy (a PrefixRecord of 10k files) */
	if (s && !strchr(s, 0x7f)) {
		for (char *p = strchr(s, '\\'); p; p = strchr(p, '\\')) {
			p++; /* the escaped character: a `\\` never starts another escape */
			if (*p == 'u')
				for (int k = 1; k < 5 && p[k]; k++)
					if (p[k] >= 'A' && p[k] <= 'F')
						p[k] = (char)(p[k] - 'A' + 'a');
			if (*p)
				p++;
		}
		return s;
	}

	menv_buf_grow(&b, hint ? hint : s ? strlen(s) + 16 : 16);
	for (const char *p = s ? s : "null"; *p; p++) {
		if (*p == 0x7f) {
			menv_buf_adds(&b, "\\u007f");
			continue;
		}
		menv_buf_addch(&b, *p);
		if (*p != '\\' || !p[1])
			continue;
		p++; /* the escaped character: a `\\` never starts another escape */
		menv_buf_addch(&b, *p);
		for (int k = *p == 'u' ? 1 : 5; k < 5 && p[1]; k++) {
			p++;
			menv_buf_addch(&b, *p >= 'A' && *p <= 'F' ? (char)(*p - 'A' + 'a') : *p);
		}
	}
	free(s);
	return menv_buf_detach(&b);
}

static unsigned long rnd_state = 12345;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005UL + 1442695040888963407UL;
	return (unsigned)((rnd_state >> 33) % n);
}

/* A random valid UTF-8 string: ASCII, controls, quotes, backslashes, slash, DEL, 2- 3- and
 * 4-byte sequences, NUL. */
static json_t *rnd_string(void)
{
	static const char *const atoms[] = {"a",
	                                    "Z",
	                                    "/",
	                                    "\\",
	                                    "\"",
	                                    "\x7f",
	                                    "\x01",
	                                    "\x1f",
	                                    "\n",
	                                    "\t",
	                                    "\b",
	                                    "\f",
	                                    "\r",
	                                    " ",
	                                    "~",
	                                    "\xc3\xa9",
	                                    "\xc2\x80",
	                                    "\xdf\xbf",
	                                    "\xe2\x82\xac",
	                                    "\xef\xbf\xbf",
	                                    "\xe0\xa0\x80",
	                                    "\xe2\x98\x83",
	                                    "\xf0\x9f\x98\x80",
	                                    "\xf4\x8f\xbf\xbf",
	                                    "\xf0\x90\x80\x80",
	                                    "@PLACEHOLDER@",
	                                    "lib/python3.12/site-packages/x.py",
	                                    "\0"};
	struct menv_buf b = MENV_BUF_INIT;
	unsigned n = rnd(12);
	for (unsigned i = 0; i < n; i++) {
		const char *a = atoms[rnd(sizeof(atoms) / sizeof(*atoms))];
		menv_buf_add(&b, a, *a ? strlen(a) : 1);
	}
	json_t *s = json_stringn(b.buf, b.len);
	menv_buf_release(&b);
	assert_non_null(s);
	return s;
}

static json_t *rnd_value(int depth)
{
	static const json_int_t ints[] = {0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN};
	unsigned k = rnd(depth > 4 ? 6 : 8);
	switch (k) {
	case 0: return rnd_string();
	case 1: return json_integer(ints[rnd(sizeof(ints) / sizeof(*ints))]);
	/* reals jansson's %.17g writes as Python's repr does (test_reals: the others) */
	case 2: return json_real((double)rnd(100000) / 8.0 - 3000.0);
	case 3: return json_boolean(rnd(2));
	case 4: return json_null();
	case 5: return json_integer((json_int_t)rnd(1u << 30) * (rnd(2) ? 1 : -1));
	case 6: {
		json_t *a = json_array();
		for (unsigned i = rnd(5); i > 0; i--)
			json_array_append_new(a, rnd_value(depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		for (unsigned i = rnd(5); i > 0; i--) {
			json_t *key = rnd_string();
			/* keys are C strings: no NUL */
			if (strlen(json_string_value(key)) == json_string_length(key))
				json_object_set_new(o, json_string_value(key),
				                    rnd_value(depth + 1));
			json_decref(key);
		}
		return o;
	}
	}
}

static void same_as_reference(json_t *v)
{
	char *want = reference_dump(v, 0);
	char *got = menv_json_python_dump(v, 0);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

static void test_differential(void **state)
{
	(void)state;
	for (int i = 0; i < 3000; i++) {
		json_t *v = rnd_value(0);
		same_as_reference(v);
		json_decref(v);
	}
	/* paths_data as a PrefixRecord holds it: every key PathDataV1 writes, present or not */
	json_t *rec = json_object(), *pd = json_object(), *paths = json_array(),
	       *files = json_array();
	for (int i = 0; i < 500; i++) {
		json_t *e = json_object(), *p = rnd_string();
		json_array_append(files, p);
		json_object_set_new(e, "_path", p);
		if (rnd(3) == 0) {
			json_object_set_new(e, "prefix_placeholder", rnd_string());
			json_object_set_new(e, "file_mode",
			                    json_string(rnd(2) ? "text" : "binary"));
		}
		if (rnd(5) == 0)
			json_object_set_new(e, "no_link", json_boolean(rnd(2)));
		json_object_set_new(e, "path_type", json_string(rnd(4) ? "hardlink" : "softlink"));
		if (rnd(4)) {
			json_object_set_new(e, "sha256",
			                    json_string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4"
			                                "649b934ca495991b7852b855"));
			json_object_set_new(e, "size_in_bytes", json_integer(rnd(1u << 30)));
		}
		json_array_append_new(paths, e);
	}
	json_object_set_new(pd, "paths_version", json_integer(1));
	json_object_set_new(pd, "paths", paths);
	json_object_set_new(rec, "files", files);
	json_object_set_new(rec, "paths_data", pd);
	same_as_reference(rec);
	json_decref(rec);
	/* a string jansson cannot dump (not UTF-8, made unchecked): "null" both ways */
	json_t *bad = json_array();
	json_array_append_new(bad, json_stringn_nocheck("a\xff", 2));
	same_as_reference(bad);
	json_decref(bad);
}

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

/* Reals as Python's repr(float) writes them, which json.dumps uses: the shortest digits that
 * read back, positional from 1e-4 to below 1e16, and at powers of two (2^-1019: the nearest
 * 16 digits do not read back, the next ones above do) where jansson's %.17g wrote
 * 0.10000000000000001, 10000000000000000.0 and 1.0000000000000001e-5. The texts are
 * Python 3.11's repr() of each value (zeros, extremes, subnormals, 2^k, random bits). */
static void test_reals(void **state)
{
	(void)state;
	static const struct {
		uint64_t bits;
		const char *want;
	} cases[] = {
	        {0x0000000000000000ULL, "0.0"},
	        {0x8000000000000000ULL, "-0.0"},
	        {0x3fb999999999999aULL, "0.1"},
	        {0xbfb999999999999aULL, "-0.1"},
	        {0x3fe0000000000000ULL, "0.5"},
	        {0x3ff0000000000000ULL, "1.0"},
	        {0x4059000000000000ULL, "100.0"},
	        {0x430c6bf526340000ULL, "1000000000000000.0"},
	        {0x4341c37937e08000ULL, "1e+16"},
	        {0x3ee4f8b588e368f1ULL, "1e-05"},
	        {0x3f1a36e2eb1c432dULL, "0.0001"},
	        {0x3f202e4b6ce5dc68ULL, "0.00012345"},
	        {0x4480f0cf064dd592ULL, "1e+22"},
	        {0x44b52d02c7e14af6ULL, "1e+23"},
	        {0x0000000000000001ULL, "5e-324"},
	        {0x0010000000000000ULL, "2.2250738585072014e-308"},
	        {0x7fefffffffffffffULL, "1.7976931348623157e+308"},
	        {0x419d6f3454800000ULL, "123456789.125"},
	        {0x7e41eb2d66005835ULL, "1.5e+300"},
	        {0x4340000000000000ULL, "9007199254740992.0"},
	        {0x43e0000000000000ULL, "9.223372036854776e+18"},
	        {0x43118b54f22aeb03ULL, "1234567890123456.8"},
	        {0x4341c37937e07fffULL, "9999999999999998.0"},
	        {0x4341c37937e07fffULL, "9999999999999998.0"},
	        {0x4341c37937e08001ULL, "1.0000000000000002e+16"},
	        {0x3fd5555555555555ULL, "0.3333333333333333"},
	        {0x3fe5555555555555ULL, "0.6666666666666666"},
	        {0xbe7ad7f29abcaf48ULL, "-1e-07"},
	        {0x400921f9f01b866eULL, "3.14159"},
	        {0x54b249ad2594c37dULL, "1e+100"},
	        {0x0060000000000000ULL, "7.120236347223045e-307"},
	        {0x0100000000000000ULL, "7.291122019556398e-304"},
	        {0x0420000000000000ULL, "8.209073602596753e-289"},
	        {0x0660000000000000ULL, "5.641232424577593e-278"},
	        {0x0d70000000000000ULL, "5.858190679279809e-244"},
	        {0x0e80000000000000ULL, "7.678447687145631e-239"},
	        {0x0eb0000000000000ULL, "6.142758149716505e-238"},
	        {0x0f50000000000000ULL, "6.290184345309701e-235"},
	        {0x97b750923ceb3ffdULL, "-1.996150245444706e-194"},
	        {0x216363698b529b4aULL, "7.581454333883296e-148"},
	        {0xea7b5bf55eb561a4ULL, "-8.57789382212775e+204"},
	        {0x795b929e9a9a80fdULL, "3.818526826307957e+276"},
	        {0x94b2b8fda02f34a6ULL, "-5.694946403451123e-209"},
	        {0x9b08923d10c67fd9ULL, "-1.8948713508859093e-178"},
	        {0xe8a8529f035efa25ULL, "-1.4204294611674214e+196"},
	        {0x781f9c58d6645fa9ULL, "4.1749440189827914e+270"},
	        {0x8d0038ec42650644ULL, "-4.64031489464657e-246"},
	        {0x311624273bfd1d33ULL, "3.132872124271458e-72"},
	        {0xb7970386fee29476ULL, "-6.604630556388117e-41"},
	        {0x8a7d43b578633074ULL, "-3.80666497140512e-258"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		double x;
		memcpy(&x, &cases[i].bits, sizeof(x));
		json_t *a = json_array();
		json_array_append_new(a, json_real(x));
		char *want = menv_xasprintf("[\n  %s\n]", cases[i].want);
		dumps_as(a, want);
		free(want);
	}
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
	        cmocka_unit_test(test_strings),      cmocka_unit_test(test_shapes),
	        cmocka_unit_test(test_deep),         cmocka_unit_test(test_reals),
	        cmocka_unit_test(test_differential),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
