/* Input that must never crash menv nor take it long (issue 14): non-UTF-8 and non-ASCII text
 * reaching jansson, input-sized de-duplication, deep YAML and JSON nesting, aliases that
 * expand exponentially, and Ctrl-C during a long parse. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "specs.h"

/* this thread's CPU time in seconds: what a parse costs, whatever else the machine runs */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* conda-lock entries read straight from libyaml's events into the model (the usual entry:
 * no JSON object, strings held by the lockfile) give the model the general reader gives: the
 * same file with an anchor (which sends the whole file to menv_yaml_to_json) compared field
 * by field through menv_lockfile_to_json. Entries: the usual one, hashes in capitals, a
 * category, optional, a build given, dependencies null or missing or with "*" and "" specs
 * and an integer, a .tar.bz2, an unknown key, an integer version, a pip entry; the usual
 * entry after one read the general way (whose platform and subdir it must not share: they
 * were freed twice, attack3_lock_hash). */
static void test_conda_lock_fast_same(void **state)
{
	(void)state;
	static const char entries[] =
	        "- name: a\n  version: '1.0'\n  manager: conda\n  platform: linux-64\n"
	        "  dependencies: {b: '>=1', c: '*', d: '', e: 2}\n"
	        "  url: https://h/c/linux-64/a-1.0-h1_0.conda\n"
	        "  hash: {md5: 0123456789ABCDEF0123456789abcdef, sha256: "
	        "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef}\n"
	        "- name: b\n  version: 2.1\n  manager: conda\n  platform: linux-64\n"
	        "  dependencies:\n  url: https://h/c/noarch/b-2.1-py_0.tar.bz2\n"
	        "  hash: {md5: 00000000000000000000000000000002}\n  category: dev\n"
	        "  optional: true\n"
	        "- name: c\n  version: '3'\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://h/c/noarch/c-3-0.conda\n"
	        "  hash: {md5: 00000000000000000000000000000003, sha256: null}\n"
	        "  build: mybuild\n  optional: false\n"
	        "- name: d\n  version: 4\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://h/c/linux-64/d-4-0.conda\n"
	        "  hash: {md5: 00000000000000000000000000000004}\n"
	        "- name: e\n  version: '5'\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://h/c/linux-64/e-5-0.conda\n"
	        "  hash: {md5: 00000000000000000000000000000005}\n  license: MIT\n"
	        "- name: g\n  version: '7'\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://h/c/linux-64/g-7-0.conda\n"
	        "  hash: {md5: 00000000000000000000000000000007}\n"
	        "- name: f\n  version: '6'\n  manager: pip\n  platform: linux-64\n"
	        "  dependencies: {g: '>=1'}\n  url: https://p/f-6-py3-none-any.whl\n"
	        "  hash: {sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef}"
	        "\n"
	        /* keys in another order; keys sharing a known key's first letter; words that
	         * are null or booleans in YAML, and text that starts as they do */
	        "- url: https://h/c/linux-64/h-8-0.conda\n  hash: {md5: "
	        "00000000000000000000000000000008}"
	        "\n  platform: linux-64\n  manager: conda\n  version: '8'\n  name: h\n"
	        "  dependencies: {k: null, l: Null, m: 'true', n: nullable, o: Tr, p: ~}\n"
	        "  optional: True\n  category: fun\n"
	        "- name: i\n  version: '9'\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://h/c/linux-64/i-9-0.conda\n  hash: {md5: "
	        "00000000000000000000000000000009}"
	        "\n  nameplate: x\n  Build: y\n  optional: FALSE\n"
	        "- name: j\n  version: '10'\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://h/c/linux-64/j-10-0.conda\n"
	        "  hash: {md5: 0000000000000000000000000000000a}\n  category: NULL\n  optional: "
	        "tRUE\n";
	char *plain = menv_xasprintf("version: 1\nmetadata: {platforms: [linux-64]}\n"
	                             "package:\n%s",
	                             entries);
	char *anchored = menv_xasprintf("version: 1\nmetadata: &m {platforms: [linux-64]}\n"
	                                "package:\n%s",
	                                entries);
	struct menv_lockfile *a = NULL, *b = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_lockfile_parse(plain, strlen(plain), "l.yml", &a, &err), 0);
	assert_int_equal(menv_lockfile_parse(anchored, strlen(anchored), "l.yml", &b, &err), 0);
	assert_int_equal(a->npkgs, 10);
	assert_non_null(a->strs); /* the usual entries' strings held by the lockfile */
	assert_null(b->strs);     /* none: the general reader */
	json_t *ja = menv_lockfile_to_json(a), *jb = menv_lockfile_to_json(b);
	char *da = json_dumps(ja, JSON_SORT_KEYS), *db = json_dumps(jb, JSON_SORT_KEYS);
	assert_string_equal(da, db);
	/* and the values themselves */
	assert_string_equal(a->pkgs[0].md5, "0123456789abcdef0123456789abcdef");
	assert_string_equal(a->pkgs[0].build, "h1_0");
	assert_string_equal(a->pkgs[0].subdir, "linux-64");
	assert_int_equal(json_array_size(a->pkgs[0].depends), 4);
	assert_string_equal(json_string_value(json_array_get(a->pkgs[0].depends, 0)), "b >=1");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[0].depends, 1)), "c");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[0].depends, 3)), "e 2");
	assert_string_equal(a->pkgs[1].version, "2.1");
	assert_string_equal(a->pkgs[1].build, "py_0");
	assert_string_equal(a->pkgs[1].subdir, "noarch");
	assert_string_equal(a->pkgs[1].category, "dev");
	assert_true(a->pkgs[1].optional);
	assert_string_equal(a->pkgs[2].build, "mybuild");
	assert_null(a->pkgs[2].sha256);
	assert_string_equal(a->pkgs[3].version, "4");
	assert_non_null(json_object_get(a->pkgs[4].extra, "license"));
	assert_string_equal(a->pkgs[5].platform, "linux-64");
	assert_string_equal(a->pkgs[5].subdir, "linux-64");
	assert_int_equal(a->pkgs[6].manager, MENV_LOCK_PIP);
	assert_string_equal(a->pkgs[7].name, "h");
	assert_true(a->pkgs[7].optional);
	assert_string_equal(a->pkgs[7].category, "fun");
	assert_int_equal(json_array_size(a->pkgs[7].depends), 6);
	assert_string_equal(json_string_value(json_array_get(a->pkgs[7].depends, 0)), "k");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[7].depends, 2)), "m true");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[7].depends, 3)), "n nullable");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[7].depends, 4)), "o Tr");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[7].depends, 5)), "p");
	assert_string_equal(json_string_value(json_object_get(a->pkgs[8].extra, "nameplate")), "x");
	assert_string_equal(json_string_value(json_object_get(a->pkgs[8].extra, "Build")), "y");
	assert_false(a->pkgs[8].optional);
	assert_string_equal(a->pkgs[9].category, "main"); /* a null category */
	assert_false(a->pkgs[9].optional);                /* "tRUE" is text */
	free(da);
	free(db);
	json_decref(ja);
	json_decref(jb);
	menv_lockfile_free(a);
	menv_lockfile_free(b);
	free(plain);
	free(anchored);
}

/* A conda-lock file loaded as it streams (menv_lockfile_load of a regular file: never held
 * whole, each entry's `hash` and `dependencies` read as members, no JSON of them, and no copy
 * of a `dependencies` mapping that its depends give back: deps_map_implied) gives the model
 * and the conda-lock text the general reader gives (the same entries behind an anchor);
 * entries: dependencies in block style with quoted, plain, "*", leading-blank and integer
 * specs, a name holding '=', an empty mapping, a hash in block style, an unknown key whose
 * mapping holds a mapping (read as JSON after all). A bad entry's error is the one
 * menv_lockfile_parse gives of the bytes, FILE:LINE:COL. */
static void test_conda_lock_streamed_same(void **state)
{
	(void)state;
	static const char entries[] =
	        "- name: a\n  version: '1.0'\n  manager: conda\n  platform: linux-64\n"
	        "  dependencies:\n    b: '>=1,<2'\n    c: 1.0 py_0\n    d: '*'\n"
	        "  url: https://h/c/linux-64/a-1.0-h1_0.conda\n"
	        "  hash:\n    md5: 0123456789ABCDEF0123456789abcdef\n"
	        "- name: b\n  version: '2'\n  manager: conda\n  platform: linux-64\n"
	        "  dependencies: {c: ' >=1', x=y: '1', e: 3, f: , g: ''}\n"
	        "  url: https://h/c/linux-64/b-2-0.conda\n"
	        "  hash: {md5: 00000000000000000000000000000002}\n"
	        "- name: c\n  version: '3'\n  manager: conda\n  platform: linux-64\n"
	        "  dependencies: {}\n  url: https://h/c/noarch/c-3-0.tar.bz2\n"
	        "  hash: {md5: 00000000000000000000000000000003}\n"
	        "- name: d\n  version: '4'\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://h/c/linux-64/d-4-0.conda\n"
	        "  hash: {sha256: "
	        "0000000000000000000000000000000000000000000000000000000000000004}\n"
	        "  meta: {a: {b: [1, 2]}, c: d}\n";
	char *plain = menv_xasprintf("version: 1\nmetadata: {platforms: [linux-64]}\n"
	                             "package:\n%s",
	                             entries);
	char *anchored = menv_xasprintf("version: 1\nmetadata: &m {platforms: [linux-64]}\n"
	                                "package:\n%s",
	                                entries);
	char path[] = "/tmp/menv-test-lock-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, plain, strlen(plain)), (ssize_t)strlen(plain));
	close(fd);
	struct menv_lockfile *a = NULL, *b = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_lockfile_load(path, &a, &err), 0);
	assert_int_equal(menv_lockfile_parse(anchored, strlen(anchored), path, &b, &err), 0);
	assert_int_equal(a->npkgs, 4);
	assert_non_null(a->strs);
	assert_null(b->strs);
	json_t *ja = menv_lockfile_to_json(a), *jb = menv_lockfile_to_json(b);
	char *da = json_dumps(ja, JSON_SORT_KEYS), *db = json_dumps(jb, JSON_SORT_KEYS);
	assert_string_equal(da, db);
	struct menv_buf wa = MENV_BUF_INIT, wb = MENV_BUF_INIT;
	assert_int_equal(menv_lockfile_write_conda_lock(a, &wa, &err), 0);
	assert_int_equal(menv_lockfile_write_conda_lock(b, &wb, &err), 0);
	assert_string_equal(wa.buf, wb.buf);
	/* a's dependencies kept once (its depends), b's with the values as written */
	assert_true(a->pkgs[0].deps_map_implied);
	assert_null(a->pkgs[0].deps_map);
	assert_int_equal(json_array_size(a->pkgs[0].depends), 3);
	assert_string_equal(json_string_value(json_array_get(a->pkgs[0].depends, 1)), "c 1.0 py_0");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[0].depends, 2)), "d");
	assert_false(a->pkgs[1].deps_map_implied);
	assert_int_equal(json_integer_value(json_object_get(a->pkgs[1].deps_map, "e")), 3);
	assert_string_equal(json_string_value(json_array_get(a->pkgs[1].depends, 0)), "c  >=1");
	assert_string_equal(json_string_value(json_array_get(a->pkgs[1].depends, 3)), "f");
	assert_true(a->pkgs[2].deps_map_implied);
	assert_int_equal(json_array_size(a->pkgs[2].depends), 0);
	assert_string_equal(a->pkgs[0].md5, "0123456789abcdef0123456789abcdef");
	assert_string_equal(a->pkgs[2].subdir, "noarch");
	assert_int_equal(a->pkgs[2].line, 22);
	free(da);
	free(db);
	json_decref(ja);
	json_decref(jb);
	menv_buf_release(&wa);
	menv_buf_release(&wb);
	menv_lockfile_free(a);
	menv_lockfile_free(b);
	/* an error: the same message, with its line and column, loaded or parsed */
	static const char *const bad[] = {
	        "  dependencies: {c: [1]}\n  hash: {}\n", /* a list as a version */
	        "  dependencies:\n    c:\n      d: 1\n  hash: {}\n",
	        "  hash: {md5: '12'}\n",
	        "  hash:\n    md5: [1]\n",
	};
	static const char *const where[] = {"41:18: ", "42:5: ", "36: ", "36: "};
	for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++) {
		char *text = menv_xasprintf(
		        "%s- name: z\n  version: '9'\n  manager: conda\n"
		        "  platform: linux-64\n  url: https://h/c/noarch/z-9-0.conda\n"
		        "%s",
		        plain, bad[k]);
		fd = open(path, O_WRONLY | O_TRUNC);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
		close(fd);
		struct menv_error e1 = {0}, e2 = {0};
		assert_int_not_equal(menv_lockfile_load(path, &a, &e1), 0);
		assert_int_not_equal(menv_lockfile_parse(text, strlen(text), path, &b, &e2), 0);
		assert_null(a);
		assert_string_equal(e1.msg, e2.msg);
		char *at = menv_xasprintf("%s:%s", path, where[k]);
		assert_memory_equal(e1.msg, at, strlen(at));
		free(at);
		free(text);
	}
	unlink(path);
	free(plain);
	free(anchored);
}

/* A borrowing map (menv_strmap_borrowing) keeps the caller's key pointers, made room for all
 * its keys at once (its slots never move while it fills), and gives each key its value. */
static void test_strmap_borrowing(void **state)
{
	(void)state;
	enum { N = 5000 };
	char(*keys)[16] = calloc(N, sizeof(*keys));
	struct menv_strmap m;
	menv_strmap_borrowing(&m, N);
	struct menv_strmap_slot *slots = m.slots;
	size_t cap = m.cap;
	assert_true(cap >= 2 * N);
	for (size_t i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "p%zu", i);
		assert_true(menv_strmap_add(&m, keys[i], i));
	}
	assert_false(menv_strmap_add(&m, "p7", 99)); /* the first value kept */
	assert_true(m.slots == slots && m.cap == cap && m.n == N);
	for (size_t i = 0; i < N; i++) {
		size_t *v = menv_strmap_get(&m, keys[i]);
		assert_non_null(v);
		assert_int_equal(*v, i);
	}
	size_t own = 0;
	for (size_t i = 0; i < m.cap; i++)
		own += m.slots[i].key && m.slots[i].key >= keys[0] && m.slots[i].key < keys[N];
	assert_int_equal(own, N); /* every key is the caller's pointer, none a copy */
	assert_null(menv_strmap_get(&m, "q1"));
	menv_strmap_clear(&m);
	assert_false(m.borrowed);
	free(keys); /* after the clear: the map freed none of them (ASan would say) */
}

/* The message of a failing spec must be valid UTF-8 so that jansson takes it (the CLI's
 * --json error printed json_dumps(NULL) and crashed: issue 14). */
static void assert_json_message(const struct menv_error *err)
{
	assert_true(menv_utf8_valid(err->msg, strlen(err->msg), NULL));
	json_t *j = json_pack("{s:s}", "message", err->msg);
	assert_non_null(j);
	json_decref(j);
	assert_null(strchr(err->msg, '\n'));
}

static void test_non_ascii_spec(void **state)
{
	(void)state;
	struct menv_matchspec *ms = NULL;
	struct menv_error err = {0};

	assert_int_equal(menv_matchspec_parse("nümpy", &ms, &err), MENV_EPARSE);
	assert_null(ms);
	assert_string_equal(
	        err.msg, "invalid match spec 'nümpy': bad character 'ü' in the name at column 2");
	assert_json_message(&err);

	/* the column of the name's bad character, not of its first byte anywhere in the spec */
	assert_int_equal(menv_matchspec_parse("conda-forge::nu+py", &ms, &err), MENV_EPARSE);
	assert_string_equal(err.msg, "invalid match spec 'conda-forge::nu+py': bad character '+' "
	                             "in the name at column 16");
}

static void test_invalid_utf8_spec(void **state)
{
	(void)state;
	struct menv_matchspec *ms = NULL;
	struct menv_error err = {0};
	const char *bad[] = {"n\xffpy", "numpy 1.0 \xc3", "numpy[build=a\xed\xa0\x80]",
	                     "\xc0\xafnumpy", "numpy >=1\x1b[2J"};
	const char *want[] = {
	        "invalid match spec 'n\\xffpy': not valid UTF-8 at byte 2",
	        "invalid match spec 'numpy 1.0 \\xc3': not valid UTF-8 at byte 11",
	        "invalid match spec 'numpy[build=a\\xed\\xa0\\x80]': not valid UTF-8 at byte 14",
	        "invalid match spec '\\xc0\\xafnumpy': not valid UTF-8 at byte 1",
	        NULL,
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(menv_matchspec_parse(bad[i], &ms, &err), MENV_EPARSE);
		assert_null(ms);
		if (want[i])
			assert_string_equal(err.msg, want[i]);
		assert_json_message(&err);
	}
	/* a control character is escaped, never sent to the terminal raw */
	assert_non_null(strstr(err.msg, "\\x1b[2J"));
}

static void test_error_messages_are_utf8(void **state)
{
	(void)state;
	struct menv_error err = {0};
	char big[3000];

	menv_error_set(&err, MENV_EIO, "cannot open '%s'", "/tmp/caf\xe9\ttab\nline");
	assert_string_equal(err.msg, "cannot open '/tmp/caf\\xe9\\x09tab\\x0aline'");
	menv_error_prefix(&err, "while reading '%s'", "\xff");
	assert_string_equal(err.msg,
	                    "while reading '\\xff': cannot open '/tmp/caf\\xe9\\x09tab\\x0aline'");
	/* cut at a character boundary: 'é' (2 bytes) never half kept */
	memset(big, 'a', sizeof(big));
	for (size_t i = 2040; i + 1 < sizeof(big); i += 2)
		big[i] = '\xc3', big[i + 1] = '\xa9';
	big[sizeof(big) - 1] = '\0';
	menv_error_set(&err, MENV_EPARSE, "%s", big);
	assert_true(strlen(err.msg) <= sizeof(err.msg) - 1);
	assert_true(strlen(err.msg) >= sizeof(err.msg) - 2);
	assert_json_message(&err);

	json_t *j = menv_json_str("caf\xe9");
	assert_string_equal(json_string_value(j), "caf\\xe9");
	json_decref(j);
	j = menv_json_str("café");
	assert_string_equal(json_string_value(j), "café");
	json_decref(j);
}

static void test_utf8_seq(void **state)
{
	(void)state;
	assert_int_equal(menv_utf8_seq("a", 1), 1);
	assert_int_equal(menv_utf8_seq("\xc3\xbc", 2), 2);
	assert_int_equal(menv_utf8_seq("\xe2\x82\xac", 3), 3);
	assert_int_equal(menv_utf8_seq("\xf0\x9f\x90\x8d", 4), 4);
	assert_int_equal(menv_utf8_seq("\xc3", 1), 0);             /* cut */
	assert_int_equal(menv_utf8_seq("\xe0\x80\xaf", 3), 0);     /* overlong */
	assert_int_equal(menv_utf8_seq("\xed\xa0\x80", 3), 0);     /* surrogate */
	assert_int_equal(menv_utf8_seq("\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
	assert_int_equal(menv_utf8_seq("\x80", 1), 0);
	size_t bad = 0;
	assert_false(menv_utf8_valid("ab\xffz", 4, &bad));
	assert_int_equal(bad, 2);
}

/* menv_utf8_fit shortens in the middle by columns and never cuts inside a character */
static void test_utf8_fit(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t w;
		const char *out;
	} cases[] = {
	        {"file:///srv/channels/main", 80, "file:///srv/channels/main"},
	        {"file:///srv/channels/main", 20, "file:///...nels/main"},
	        {"abcdefghijklmnopqrstuvwxyz", 7, "abcdefghijklmnopqrstuvwxyz"}, /* w < 8 */
	        /* ü is 2 bytes of 1 column: 10 columns into 8 -> 2 + "..." + 3 */
	        {"\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc",
	         8, "\xc3\xbc\xc3\xbc...\xc3\xbc\xc3\xbc\xc3\xbc"},
	        /* 環 is 3 bytes of 2 columns: 12 columns into 10 -> 2 + "..." + 4 (a wide one
	         * that does not fit is left out) */
	        {"\xe7\x92\xb0\xe7\x92\xb0\xe7\x92\xb0\xe7\x92\xb0\xe7\x92\xb0\xe7\x92\xb0", 10,
	         "\xe7\x92\xb0...\xe7\x92\xb0\xe7\x92\xb0"},
	        /* a byte that is not UTF-8 counts as one column of one byte */
	        {"ab\xff\xfe"
	         "cdefghij\xff",
	         8, "ab...ij\xff"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *f = menv_utf8_fit(cases[i].in, cases[i].w);
		assert_string_equal(f, cases[i].out);
		if (strcmp(f, cases[i].in))
			assert_true(menv_utf8_width(f) <= cases[i].w);
		free(f);
	}
}

/* Widths and table cells (the plan's rows): ASCII, then wide, combining and bad bytes after
 * ASCII; a cell padded to columns, one right-aligned as printf's "%*s" */
static void test_utf8_width_cells(void **state)
{
	(void)state;
	assert_int_equal(menv_utf8_width(""), 0);
	assert_int_equal(menv_utf8_width("abc def\t~"), 9);
	assert_int_equal(menv_utf8_width("ab\xe7\x92\xb0"
	                                 "c"),
	                 5); /* wide: 2 */
	assert_int_equal(menv_utf8_width("a\xcc\x81"
	                                 "b"),
	                 2); /* combining: 0 */
	assert_int_equal(menv_utf8_width("ab\xff\xfe"
	                                 "c"),
	                 5);                                       /* bad bytes: 1 each */
	assert_int_equal(menv_utf8_width("\xc3\xbc\xc3\xbcx"), 3); /* not ASCII first */
	size_t bad = 0;
	assert_false(menv_utf8_valid("abcdefgh\xc3", 9, &bad)); /* cut after ASCII */
	assert_int_equal(bad, 8);
	assert_true(menv_utf8_valid("abc\xe2\x82\xac", 6, NULL));
	assert_false(menv_utf8_valid("abc\xff"
	                             "defghijklmnop",
	                             17, &bad)); /* within 8 */
	assert_int_equal(bad, 3);
	assert_false(menv_utf8_valid("0123456789abcdef\xe2\x82"
	                             "x",
	                             19, &bad));
	assert_int_equal(bad, 16);
	assert_true(menv_utf8_valid("0123456789abcdef\xe2\x82\xac"
	                            "0123456789",
	                            29, NULL));
	static const char *const cells[] = {"", "x", "1.0", "file:///nonexistent",
	                                    "a-quite-long-cell-of-forty-one-characters!"};
	for (size_t i = 0; i < sizeof(cells) / sizeof(*cells); i++)
		for (size_t w = 0; w < 50; w += 7) {
			struct menv_buf b = MENV_BUF_INIT;
			char want[128];
			menv_buf_add_padded(&b, cells[i], w);
			snprintf(want, sizeof(want), "%-*s", (int)w, cells[i]);
			assert_string_equal(b.buf, want);
			menv_buf_reset(&b);
			menv_buf_add_right(&b, cells[i], w);
			snprintf(want, sizeof(want), "%*s", (int)w, cells[i]);
			assert_string_equal(b.buf, want);
			menv_buf_release(&b);
		}
	struct menv_buf b = MENV_BUF_INIT; /* 2 columns of 3 bytes: one blank */
	menv_buf_add_padded(&b, "\xe7\x92\xb0", 3);
	assert_string_equal(b.buf, "\xe7\x92\xb0 ");
	menv_buf_release(&b);
}

static void test_explicit_invalid_utf8(void **state)
{
	(void)state;
	const char text[] = "@EXPLICIT\nhttps://x/linux-64/zlib-1.3-h\xff_0.conda\n";
	struct menv_lockfile *lf = NULL;
	struct menv_error err = {0};
	assert_int_equal(menv_lockfile_parse(text, sizeof(text) - 1, "x.txt", &lf, &err),
	                 MENV_EPARSE);
	assert_string_equal(err.msg, "x.txt:2:30: not valid UTF-8");
}

/* An empty add (NULL, 0) leaves the buffer as it was: the sparse load's walk key added an
 * empty list of records as (NULL, 0), and memcpy may not be given NULL (UBSan, solver.sparse_same
 * in CI's sanitizer build). */
static void test_buf_empty_add(void **state)
{
	(void)state;
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_add(&b, NULL, 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.buf, "");
	menv_buf_adds(&b, "ab");
	menv_buf_add(&b, NULL, 0);
	assert_int_equal(b.len, 2);
	assert_string_equal(b.buf, "ab");
	menv_buf_release(&b);
}

static void test_strset(void **state)
{
	(void)state;
	struct menv_strset s = MENV_STRSET_INIT;
	struct menv_strvec v = MENV_STRVEC_INIT;
	char k[32];

	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof(k), "pkg%d", i % 1000);
		menv_strvec_push_unique(&v, &s, k);
	}
	assert_int_equal(v.n, 1000);
	assert_int_equal(s.n, 1000);
	assert_string_equal(v.v[999], "pkg999");
	assert_true(menv_strset_has(&s, "pkg0"));
	assert_false(menv_strset_has(&s, "pkg1000"));
	assert_false(menv_strset_add(&s, "pkg5"));
	assert_true(menv_strset_add(&s, ""));
	assert_true(menv_strset_has(&s, ""));
	menv_strset_clear(&s);
	assert_false(menv_strset_has(&s, "pkg0"));
	menv_strvec_clear(&v);
}

/* Text of `n` nested flow sequences ("[[[...]]]"), or block mappings when `block`. */
static char *nested(size_t n, const char *head, bool json)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, head);
	for (size_t i = 0; i < n; i++)
		menv_buf_adds(&b, json ? "{\"a\":" : "[");
	menv_buf_adds(&b, "1");
	for (size_t i = 0; i < n; i++)
		menv_buf_adds(&b, json ? "}" : "]");
	menv_buf_adds(&b, json ? "}\n" : "\n");
	return menv_buf_detach(&b);
}

static void test_deep_yaml(void **state)
{
	(void)state;
	struct menv_error err = {0};
	char *y = nested(100000, "name: x\ndependencies: ", false);
	struct menv_envfile *ef = NULL;

	double t0 = now();
	assert_int_equal(menv_envfile_parse(y, strlen(y), "deep.yml", &ef, &err), MENV_EPARSE);
	assert_true(now() - t0 < 10.0); /* it took over a minute */
	/* the root mapping is level 1: the 256th "[" (column 15 + 255) is level 257 */
	assert_string_equal(err.msg, "deep.yml:2:270: nested deeper than 256 levels");
	free(y);

	/* 256 levels are fine for YAML itself (the envfile then wants strings) */
	y = nested(255, "name: x\ndependencies: ", false);
	assert_int_equal(menv_envfile_parse(y, strlen(y), "ok.yml", &ef, &err), MENV_EPARSE);
	assert_string_equal(err.msg,
	                    "ok.yml:2:16: a dependency must be a string or a 'pip:' section");
	free(y);

	/* lockfiles and .condarc go through the same reader */
	y = nested(100000, "version: 6\nenvironments: {}\npackages: ", false);
	struct menv_lockfile *lf = NULL;
	t0 = now();
	assert_int_equal(menv_lockfile_parse(y, strlen(y), "pixi.lock", &lf, &err), MENV_EPARSE);
	assert_true(now() - t0 < 10.0); /* it took over a minute */
	assert_string_equal(err.msg, "pixi.lock:3:266: nested deeper than 256 levels");
	free(y);

	char path[] = MENV_TEST_TMP "/condarc-XXXXXX";
	char *dir = menv_xstrdup(MENV_TEST_TMP);
	char *cmd = menv_xasprintf("mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	y = nested(5000, "channels: ", false);
	assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
	close(fd);
	struct menv_config cfg;
	menv_config_defaults(&cfg);
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), MENV_EPARSE);
	char *want = menv_xasprintf("%s:1:266: nested deeper than 256 levels", path);
	assert_string_equal(err.msg, want);
	menv_config_release(&cfg);
	unlink(path);
	free(want);
	free(y);
	free(cmd);
	free(dir);
}

static void test_deep_json(void **state)
{
	(void)state;
	struct menv_error err = {0};
	json_t *j = NULL;
	char *s = nested(100000, "{\"packages\":", true);

	assert_int_equal(menv_json_parse(s, strlen(s), 0, "deep.json", &j, &err), MENV_EPARSE);
	assert_null(j);
	/* the 257th bracket: the outer '{' is level 1, then 255 '{"a":' of 5 bytes each */
	assert_string_equal(err.msg, "deep.json:1:1288: nested deeper than 256 levels");
	struct menv_repodata *rd = NULL;
	assert_int_equal(
	        menv_repodata_parse(s, strlen(s), "repodata.json", NULL, "linux-64", &rd, &err),
	        MENV_EPARSE);
	assert_string_equal(err.msg, "repodata.json:1:1288: nested deeper than 256 levels");
	free(s);

	/* brackets inside strings do not count */
	s = menv_xstrdup("{\"a\": \"[[[[{{{{\\\"[[[\", \"b\": [[1]]}");
	assert_int_equal(menv_json_parse(s, strlen(s), 0, "ok.json", &j, &err), 0);
	assert_string_equal(json_string_value(json_object_get(j, "a")), "[[[[{{{{\"[[[");
	json_decref(j);
	free(s);

	/* jansson's own errors keep their position */
	s = menv_xstrdup("{\n  \"a\": [1,,2]\n}");
	assert_int_equal(menv_json_parse(s, strlen(s), 0, "bad.json", &j, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, "bad.json:2:"));
	free(s);
}

static void test_billion_laughs(void **state)
{
	(void)state;
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_lockfile *lf = NULL;
	struct menv_error err = {0};

	menv_buf_adds(&b, "version: 1\nmetadata: {}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 12; i++)
		menv_buf_addf(&b, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i,
		              i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	menv_buf_adds(&b, "package: []\n");
	double t0 = now();
	assert_int_equal(menv_lockfile_parse(b.buf, b.len, "laughs.yml", &lf, &err), MENV_EPARSE);
	assert_true(now() - t0 < 10.0);
	assert_non_null(strstr(err.msg, "aliases expand to more values than the file holds"));
	menv_buf_release(&b);

	/* an alias into its own collection would be a cycle: refused as undefined */
	const char *cyc = "version: 1\nmetadata: &m {a: *m}\npackage: []\n";
	assert_int_equal(menv_lockfile_parse(cyc, strlen(cyc), "cycle.yml", &lf, &err),
	                 MENV_EPARSE);
	assert_string_equal(err.msg, "cycle.yml:2:18: found undefined alias");
	/* a plain alias still works */
	const char *ok = "version: 1\nmetadata: {platforms: &p [linux-64]}\nx: *p\npackage: []\n";
	assert_int_equal(menv_lockfile_parse(ok, strlen(ok), "ok.yml", &lf, &err), 0);
	assert_string_equal(lf->platforms.v[0], "linux-64");
	menv_lockfile_free(lf);
}

/* environment.yml text of n dependencies and as many unknown top-level keys */
static char *big_envfile(int n, size_t *len)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, "name: big\ndependencies:\n");
	for (int i = 0; i < n; i++)
		menv_buf_addf(&b, "  - pkg%d >=1.0\n", i);
	for (int i = 0; i < n; i++)
		menv_buf_addf(&b, "key%d: 1\n", i);
	*len = b.len;
	return menv_buf_detach(&b);
}

/* conda-lock v1 text of n entries, each of its own platform */
static char *big_condalock(int n, size_t *len)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, "version: 1\nmetadata: {}\npackage:\n");
	for (int i = 0; i < n; i++)
		menv_buf_addf(&b,
		              "- {name: p%d, version: '1', manager: conda, platform: plat%d, "
		              "url: 'https://x/linux-64/p%d-1-h_0.conda', hash: {md5: "
		              "00000000000000000000000000000000}}\n",
		              i, i, i);
	*len = b.len;
	return menv_buf_detach(&b);
}

/* CPU seconds of parsing n entries; checks the count and the last entry */
static double parse_cost(bool lock, int n)
{
	size_t len = 0;
	char *text = lock ? big_condalock(n, &len) : big_envfile(n, &len);
	char last[32];
	struct menv_error err = {0};
	double t0 = now(), t;
	if (lock) {
		struct menv_lockfile *lf = NULL;
		assert_int_equal(menv_lockfile_parse(text, len, "conda-lock.yml", &lf, &err), 0);
		t = now() - t0;
		assert_int_equal(lf->npkgs, n);
		assert_int_equal(lf->platforms.n, n);
		snprintf(last, sizeof(last), "plat%d", n - 1);
		assert_string_equal(lf->platforms.v[n - 1], last);
		menv_lockfile_free(lf);
	} else {
		struct menv_envfile *ef = NULL;
		assert_int_equal(menv_envfile_parse(text, len, "big.yml", &ef, &err), 0);
		t = now() - t0;
		assert_int_equal(ef->deps.n, n);
		assert_int_equal(ef->unknown.n, n);
		snprintf(last, sizeof(last), "pkg%d >=1.0", n - 1);
		assert_string_equal(ef->deps.v[n - 1], last);
		menv_envfile_free(ef);
	}
	free(text);
	return t;
}

/* 200,000 dependencies and as many top-level environment.yml keys, 50,000 conda-lock entries
 * each of its own platform, are read in linear time: the quadratic scans took minutes (40,000
 * specs took 8 s, so 200,000 would take over 3 minutes). The bound is this thread's CPU time,
 * so a loaded machine cannot fail it; it leaves room for sanitizer builds (measured on
 * 2026-12-01: 0.9 s and 1.4 s in the release build). A CPU-time ratio of 4n to n entries was
 * tried instead and rejected: allocator and cache effects moved it between 5 and 16. */
static void test_large_inputs_linear(void **state)
{
	(void)state;
	enum { N = 200000 };
	double t = parse_cost(false, N);
	print_message("environment.yml: %d entries %.3f s (CPU)\n", N, t);
	assert_true(t < 30.0);
	t = parse_cost(true, N / 4);
	print_message("conda-lock: %d entries %.3f s (CPU)\n", N / 4, t);
	assert_true(t < 30.0);
}

/* Ctrl-C during a long parse: the flag the signal handler sets stops it soon. "Soon" is
 * measured against the parse's own pace, not a fixed time: the parsing thread's CPU time from
 * the flag's setting to the parse's return (the rest of one chunk or 4,096 entries, then
 * freeing what was read) must stay under ten times its CPU time before the flag plus 50 ms.
 * A parse that ran to the end would take the whole input's time, over 40 times the first
 * 100 ms. A fixed 0.5 s bound failed CI's sanitizer build (0.53 s there, 0.14 s in release):
 * under ASan freeing the conda-lock entries read costs three times reading them (measured on
 * 2026-12-02: 0.30 s after the flag, 0.10 s before; release 0.13 s and 0.10 s). */
static volatile int cancel;
static clockid_t parser_clock;
static double cpu_at_start, cpu_at_cancel;

static double cpu(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *raise_later(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	cpu_at_cancel = cpu(parser_clock);
	cancel = 1;
	return NULL;
}

static void test_cancel(void **state)
{
	(void)state;
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	pthread_t th;

	menv_buf_adds(&b, "{\"packages\": {");
	for (int i = 0; i < 3000000; i++)
		menv_buf_addf(&b,
		              "%s\"p%d-1-0.tar.bz2\": {\"name\": \"p%d\", \"version\": \"1\", "
		              "\"build\": \"0\", \"depends\": [\"a\", \"b\"]}",
		              i ? "," : "", i, i);
	menv_buf_adds(&b, "}}");

	menv_cancel_flag_set(&cancel);
	pthread_getcpuclockid(pthread_self(), &parser_clock);
	struct menv_repodata *rd = NULL;
	cancel = 0;
	cpu_at_start = cpu(parser_clock);
	pthread_create(&th, NULL, raise_later, NULL);
	int rc = menv_repodata_parse(b.buf, b.len, "repodata.json", NULL, "linux-64", &rd, &err);
	double t = cpu(parser_clock) - cpu_at_cancel;
	pthread_join(th, NULL);
	assert_int_equal(rc, MENV_EINTR);
	assert_string_equal(err.msg, "repodata.json: reading interrupted");
	print_message("interrupted %.3f s (CPU) after the flag, %.3f s before\n", t,
	              cpu_at_cancel - cpu_at_start);
	assert_true(t < 10 * (cpu_at_cancel - cpu_at_start) + 0.05);

	/* YAML: a conda-lock file as big */
	menv_buf_reset(&b);
	menv_buf_adds(&b, "version: 1\nmetadata: {}\npackage:\n");
	for (int i = 0; i < 1500000; i++)
		menv_buf_addf(
		        &b, "- {name: p%d, version: '1', manager: conda, platform: linux-64}\n", i);
	struct menv_lockfile *lf = NULL;
	cancel = 0;
	cpu_at_start = cpu(parser_clock);
	pthread_create(&th, NULL, raise_later, NULL);
	rc = menv_lockfile_parse(b.buf, b.len, "conda-lock.yml", &lf, &err);
	t = cpu(parser_clock) - cpu_at_cancel;
	pthread_join(th, NULL);
	assert_int_equal(rc, MENV_EINTR);
	assert_string_equal(err.msg, "conda-lock.yml: reading interrupted");
	print_message("interrupted %.3f s (CPU) after the flag, %.3f s before\n", t,
	              cpu_at_cancel - cpu_at_start);
	assert_true(t < 10 * (cpu_at_cancel - cpu_at_start) + 0.05);

	/* reading the file itself stops too */
	cancel = 1;
	struct menv_buf f = MENV_BUF_INIT;
	assert_int_equal(menv_buf_read_file(&f, "/proc/self/status", &err), MENV_EINTR);
	assert_string_equal(err.msg, "reading '/proc/self/status' interrupted");
	assert_int_equal(f.len, 0);
	menv_buf_release(&f);

	/* cleared: the same parse is not interrupted */
	cancel = 0;
	const char *small = "{\"packages\": {\"a-1-0.tar.bz2\": {\"name\": \"a\", \"version\": "
	                    "\"1\", \"build\": \"0\"}}}";
	assert_int_equal(
	        menv_repodata_parse(small, strlen(small), "r.json", NULL, "linux-64", &rd, &err),
	        0);
	assert_int_equal(rd->n, 1);
	menv_repodata_free(rd);
	menv_cancel_flag_set(NULL);
	menv_buf_release(&b);
}

/* Inputs the fuzzers of tests/fuzz found crashing menv (each is also replayed there) */
static void test_fuzz_finds(void **state)
{
	(void)state;
	struct menv_matchspec *ms = NULL;
	struct menv_error err = {0};

	/* a URL whose file name is only the extension: the stem length underflowed */
	assert_int_equal(menv_matchspec_parse("https://conda./.conda", &ms, &err), MENV_EPARSE);
	assert_string_equal(err.msg, "invalid package file name in 'https://conda./.conda'");
	assert_int_equal(menv_matchspec_parse("/.tar.bz2", &ms, &err), MENV_EPARSE);
	assert_string_equal(err.msg, "invalid package file name in '/.tar.bz2'");
	assert_int_equal(menv_matchspec_parse("/x/a-1-0.conda", &ms, &err), 0);
	assert_string_equal(ms->name, "a");
	menv_matchspec_free(ms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_non_ascii_spec),
	        cmocka_unit_test(test_invalid_utf8_spec),
	        cmocka_unit_test(test_error_messages_are_utf8),
	        cmocka_unit_test(test_utf8_seq),
	        cmocka_unit_test(test_utf8_fit),
	        cmocka_unit_test(test_explicit_invalid_utf8),
	        cmocka_unit_test(test_strset),
	        cmocka_unit_test(test_buf_empty_add),
	        cmocka_unit_test(test_deep_yaml),
	        cmocka_unit_test(test_deep_json),
	        cmocka_unit_test(test_billion_laughs),
	        cmocka_unit_test(test_large_inputs_linear),
	        cmocka_unit_test(test_strmap_borrowing),
	        cmocka_unit_test(test_conda_lock_fast_same),
	        cmocka_unit_test(test_utf8_width_cells),
	        cmocka_unit_test(test_conda_lock_streamed_same),
	        cmocka_unit_test(test_cancel),
	        cmocka_unit_test(test_fuzz_finds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
