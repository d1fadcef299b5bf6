/* Lockfiles that rattler refuses are refused by menv too, for the same reason (rattler's
 * lock_parse_fails v7 inputs, rebuilt here with a plain package URL where rattler's hold a
 * source package), and rattler's own conda-lock versions 2-3 are read as rattler reads them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "specs.h"

#define PKG "https://x.invalid/conda-forge/linux-64/zlib-1.3.1-hb9d3cd8_2.conda"

/* A v7 lock with `platforms` (YAML lines, indented 2) and the default environment's
 * `packages` mapping (lines indented 6) put in. Caller frees. */
static char *v7(const char *platforms, const char *env_packages)
{
	return menv_xasprintf("version: 7\n"
	                      "platforms:\n%s"
	                      "environments:\n"
	                      "  default:\n"
	                      "    channels:\n"
	                      "      - url: https://x.invalid/conda-forge/\n"
	                      "    packages:\n%s"
	                      "packages:\n"
	                      "  - conda: " PKG "\n"
	                      "    sha256: "
	                      "9653f1bf3766164d0e65fa723cabbc54f02e38a7d7e4e8fd4c6bd4e4fd1d3b41\n",
	                      platforms, env_packages);
}

static int parse(const char *text, struct menv_lockfile **lf, struct menv_error *err)
{
	return menv_lockfile_parse(text, strlen(text), "pixi.lock", lf, err);
}

static void test_v7_valid(void **state)
{
	(void)state;
	char *t = v7("  - name: linux-64\n  - name: cuda_12-x\n    subdir: linux-64\n",
	             "      linux-64:\n        - conda: " PKG "\n"
	             "      cuda_12-x:\n        - conda: " PKG "\n");
	struct menv_lockfile *lf = NULL;
	struct menv_error err = {0};
	if (parse(t, &lf, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(lf->platforms.n, 2);
	assert_string_equal(lf->platforms.v[1], "cuda_12-x");
	assert_int_equal(lf->npkgs, 2);
	assert_string_equal(lf->pkgs[1].name, "zlib");
	menv_lockfile_free(lf);
	free(t);
}

static void expect_refused(const char *platforms, const char *env_packages, const char *want)
{
	char *t = v7(platforms, env_packages);
	struct menv_lockfile *lf = NULL;
	struct menv_error err = {0};
	assert_int_equal(parse(t, &lf, &err), MENV_EPARSE);
	assert_null(lf);
	assert_string_equal(err.msg, want);
	free(t);
}

static void test_v7_refused(void **state)
{
	(void)state;
	const char *use = "      linux-64:\n        - conda: " PKG "\n";

	/* duplicate_platform_definition: one name listed twice */
	expect_refused("  - name: DUPLICATE\n    subdir: linux-64\n"
	               "  - name: DUPLICATE\n    subdir: osx-64\n",
	               "      DUPLICATE:\n        - conda: " PKG "\n",
	               "pixi.lock:5: the platform 'DUPLICATE' is listed twice");
	/* duplicate_platform_use: one platform twice in an environment's packages */
	expect_refused("  - name: DUPLICATE\n    subdir: linux-64\n",
	               "      DUPLICATE:\n        - conda: " PKG "\n"
	               "      DUPLICATE:\n        - conda: " PKG "\n",
	               "pixi.lock:12:7: duplicate key 'DUPLICATE'");
	/* invalid_platform_name */
	expect_refused("  - name: linux 64 foobar\n    subdir: linux-64\n", use,
	               "pixi.lock:3: 'linux 64 foobar' is not a valid platform name (letters, "
	               "digits, '_' and '-')");
	/* invalid_platform_subdir */
	expect_refused("  - name: linux-64\n    subdir: linux-XX\n", use,
	               "pixi.lock:3: platform 'linux-64': 'linux-XX' is not a known platform "
	               "subdir");
	/* a name that is no subdir, with no subdir given */
	expect_refused("  - name: linux-64-foobar\n", use,
	               "pixi.lock:3: platform 'linux-64-foobar': 'linux-64-foobar' is not a known "
	               "platform subdir");
	/* missing_platform: an environment uses a platform that is not listed */
	expect_refused("  - name: linux-64\n", "      UNKNOWN:\n        - conda: " PKG "\n",
	               "pixi.lock:9: environment 'default' uses the platform 'UNKNOWN', which "
	               "'platforms' does not list");
}

/* rattler's conda-lock v3 (its test resource robostack-turtlesim-conda-lock.yml, shortened):
 * dependencies as a list, build and subdir given, `pypi` for pip */
static const char v3[] =
        "version: 3\n"
        "metadata:\n"
        "  content_hash:\n"
        "    linux-64: c3966519f924c1bb939575751347ce8bb8bfa39fcad33745cb1d712dd269ee2d\n"
        "  channels:\n"
        "  - url: https://x.invalid/conda-forge/\n"
        "    used_env_vars: []\n"
        "  platforms:\n"
        "  - linux-64\n"
        "  sources: []\n"
        "  time_metadata: null\n"
        "package:\n"
        "- platform: linux-64\n"
        "  name: _openmp_mutex\n"
        "  version: '4.5'\n"
        "  category: main\n"
        "  manager: conda\n"
        "  dependencies:\n"
        "  - libgomp >=7.5.0\n"
        "  - _libgcc_mutex ==0.1 conda_forge\n"
        "  url: https://x.invalid/conda-forge/linux-64/_openmp_mutex-4.5-2_gnu.tar.bz2\n"
        "  hash:\n"
        "    md5: 73aaf86a425cc6e73fcf236a5a46396d\n"
        "    sha256: fbe2c5e56a653bebb982eda4876a9178aedfc2b545f25d0ce9c4c0b508253d22\n"
        "  build: 2_gnu\n"
        "  arch: x86_64\n"
        "  subdir: linux-64\n"
        "  build_number: 16\n"
        "  constrains:\n"
        "  - openmp_impl 9999\n"
        "- platform: linux-64\n"
        "  name: aiosignal\n"
        "  version: 1.3.1\n"
        "  category: main\n"
        "  manager: conda\n"
        "  dependencies:\n"
        "  - frozenlist >=1.1.0\n"
        "  url: https://x.invalid/conda-forge/noarch/aiosignal-1.3.1-pyhd8ed1ab_0.tar.bz2\n"
        "  hash:\n"
        "    md5: d1e1eb7e21a9e2c74279d87dafb68156\n"
        "  build: pyhd8ed1ab_0\n"
        "  subdir: linux-64\n"
        "  noarch: python\n"
        "- platform: linux-64\n"
        "  name: requests\n"
        "  version: 2.31.0\n"
        "  manager: pypi\n"
        "  dependencies: []\n"
        "  url: https://x.invalid/pypi/requests-2.31.0-py3-none-any.whl\n"
        "  hash:\n"
        "    sha256: 58cd2187c01e70e6e26505bca751777aa9f2ee0b7f4300988b709f44e013003f\n";

static void test_conda_lock_v3(void **state)
{
	(void)state;
	struct menv_lockfile *lf = NULL, *again = NULL;
	struct menv_error err = {0};

	if (menv_lockfile_parse(v3, sizeof(v3) - 1, "v3.yml", &lf, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(lf->format, MENV_LOCK_CONDA_LOCK);
	assert_int_equal(lf->version, 3);
	assert_int_equal(lf->npkgs, 3);
	const struct menv_lock_package *p = &lf->pkgs[0];
	assert_string_equal(p->name, "_openmp_mutex");
	assert_string_equal(p->build, "2_gnu");
	assert_string_equal(p->subdir, "linux-64");
	assert_int_equal(json_array_size(p->depends), 2);
	assert_string_equal(json_string_value(json_array_get(p->depends, 1)),
	                    "_libgcc_mutex ==0.1 conda_forge");
	assert_string_equal(p->md5, "73aaf86a425cc6e73fcf236a5a46396d");
	assert_int_equal(json_integer_value(json_object_get(p->extra, "build_number")), 16);
	/* the subdir the entry states wins over the URL's (as rattler) */
	assert_string_equal(lf->pkgs[1].subdir, "linux-64");
	assert_null(lf->pkgs[1].sha256);
	assert_int_equal(lf->pkgs[2].manager, MENV_LOCK_PIP);
	assert_string_equal(lf->channels.v[0], "https://x.invalid/conda-forge/");

	const struct menv_lock_package **sel = NULL;
	size_t n = 0;
	assert_int_equal(menv_lockfile_select(lf, NULL, "linux-64", &sel, &n, &err), 0);
	assert_int_equal(n, 3);
	free(sel);

	/* written back as conda-lock v1 and read again: the same dependencies */
	struct menv_buf b = MENV_BUF_INIT;
	assert_int_equal(menv_lockfile_write_conda_lock(lf, &b, &err), 0);
	if (menv_lockfile_parse(b.buf, b.len, "written.yml", &again, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(again->version, 1);
	assert_string_equal(json_string_value(json_array_get(again->pkgs[0].depends, 0)),
	                    "libgomp >=7.5.0");
	assert_string_equal(again->pkgs[0].build, "2_gnu");
	menv_buf_release(&b);
	menv_lockfile_free(again);
	menv_lockfile_free(lf);

	/* version 4 without `environments` is no conda-lock file */
	const char v4[] = "version: 4\nmetadata: {}\npackage: []\n";
	assert_int_equal(menv_lockfile_parse(v4, sizeof(v4) - 1, "v4.yml", &lf, &err),
	                 MENV_EUNSUPPORTED);
	assert_string_equal(err.msg, "v4.yml: conda-lock version 4 is not supported (menv reads "
	                             "versions 1 to 3)");
}

/* conda-lock v1 is read from libyaml's events, an entry at a time (yaml_stream.c); a file that
 * reader leaves alone (an anchor) is read the general way to the same model, and every error
 * is the one the general reader gives, in its order: a YAML error anywhere first, then the
 * header's, then the first bad entry's (issue 22) */
#define ENTRY(n, dep)                                                                              \
	"- name: " n "\n  version: '1.0'\n  manager: conda\n  platform: linux-64\n"                \
	"  dependencies: {" dep "}\n  url: https://x.invalid/c/linux-64/" n "-1.0-0.conda\n"       \
	"  hash: {md5: 0123456789ABCDEF0123456789abcdef}\n  extra_key: [1, {k: v}]\n"

static json_t *model(const char *text, const char *src, struct menv_error *err)
{
	struct menv_lockfile *lf = NULL;
	if (menv_lockfile_parse(text, strlen(text), src, &lf, err))
		return NULL;
	json_t *j = menv_lockfile_to_json(lf);
	menv_lockfile_free(lf);
	return j;
}

static void test_conda_lock_streamed(void **state)
{
	(void)state;
	struct menv_error err = {0};
	/* the metadata after the entries: its platforms still come first */
	const char *streamed = "version: 1\npackage:\n" ENTRY("a", "b: '>=1'")
	        ENTRY("b", "") "metadata:\n  platforms: [osx-64]\n  channels: [{url: c}]\n";
	const char *general = "version: 1\npackage:\n" ENTRY("a", "b: &v '>=1'")
	        ENTRY("b", "") "metadata:\n  platforms: [osx-64]\n  channels: [{url: c}]\n";
	json_t *s = model(streamed, "s.yml", &err), *g = model(general, "g.yml", &err);
	if (!s || !g)
		fail_msg("%s", err.msg);
	assert_true(json_equal(s, g));
	json_t *pk = json_object_get(s, "packages");
	assert_int_equal(json_array_size(pk), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(s, "platforms"), 1)),
	                    "linux-64");
	json_t *a = json_array_get(pk, 0);
	assert_string_equal(json_string_value(json_object_get(a, "md5")),
	                    "0123456789abcdef0123456789abcdef");
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "depends"), 0)),
	                    "b >=1");
	assert_string_equal(
	        json_string_value(json_object_get(
	                json_array_get(json_object_get(json_object_get(a, "extra"), "extra_key"),
	                               1),
	                "k")),
	        "v");
	json_decref(s);
	json_decref(g);

	static const struct {
		const char *text, *msg;
	} bad[] = {
	        /* the first bad entry, after good ones, with the line where it starts */
	        {"package:\n" ENTRY("a", "") ENTRY("b", "") "- {name: c, version: '1'}\n",
	         "e.yml:18: package entry 3 ('c') lacks 'manager'"},
	        /* the header's error before an entry's */
	        {"package:\n- {name: c}\nversion: x\n", "e.yml: 'version' must be an integer"},
	        /* a YAML error after a bad entry wins, with its line */
	        {"package:\n- {name: c}\n- [\n", "e.yml:4:1: did not find expected node content "
	                                         "while parsing a flow node"},
	        /* a duplicate key in a later entry, with its line */
	        {"package:\n" ENTRY("a", "") "- {name: c, name: d}\n",
	         "e.yml:10:13: duplicate key 'name'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_null(model(bad[i].text, "e.yml", &err));
		assert_string_equal(err.msg, bad[i].msg);
	}
}

/* A lockfile is one YAML document: a second one after it, or a `---` then garbage, is
 * refused with its FILE:LINE:COL by the streaming conda-lock reader, the general one (an
 * anchor sends the file there) and pixi's, never ignored */
static void test_one_document(void **state)
{
	(void)state;
	struct menv_error err = {0};
	static const struct {
		const char *text, *msg;
	} bad[] = {
	        {"version: 1\npackage:\n" ENTRY("a", "") "---\n: [garbage\n",
	         "c.yml:11:1: a second YAML document (---) in one file"},
	        {"version: 1\npackage:\n" ENTRY("a", "") "--- x\n",
	         "c.yml:11:1: a second YAML document (---) in one file"},
	        {"version: 1\npackage:\n" ENTRY("a", "") "...\n[garbage\n",
	         "c.yml:12:1: did not find expected <document start>"},
	        {"version: 1\npackage:\n" ENTRY("a", "") "...\n]\n",
	         "c.yml:12:1: did not find expected <document start>"},
	        {"version: &v 1\npackage:\n" ENTRY("a", "") "---\n: [garbage\n",
	         "c.yml:11:1: a second YAML document (---) in one file"},
	        {"version: &v 1\npackage:\n" ENTRY("a", "") "...\n]\n",
	         "c.yml:12:1: did not find expected <document start>"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_null(model(bad[i].text, "c.yml", &err));
		assert_string_equal(err.msg, bad[i].msg);
	}
	char *t = v7("  - name: linux-64\n", "      linux-64:\n        - conda: " PKG "\n");
	char *two = menv_xasprintf("%s---\n- [\n", t);
	struct menv_lockfile *lf = NULL;
	assert_int_equal(parse(two, &lf, &err), MENV_EPARSE);
	assert_string_equal(err.msg, "pixi.lock:14:1: a second YAML document (---) in one file");
	/* the same file without it is read */
	assert_int_equal(parse(t, &lf, &err), 0);
	menv_lockfile_free(lf);
	free(two);
	free(t);
}

#define MAMBA_HEAD                                                                                 \
	"{\n  \"lockVersion\": \"1.0\",\n  \"platform\": \"linux-64\",\n"                          \
	"  \"channels\": [\"conda-forge\"],\n"                                                     \
	"  \"channelInfo\": {\"conda-forge\": [{\"url\": \"https://x.invalid/cf\"}]},\n"
#define MAMBA_PKG(fn, name)                                                                        \
	"    \"" fn "\": {\n      \"name\": \"" name                                               \
	"\", \"version\": \"1.0\", \"build\": \"0\",\n"                                            \
	"      \"subdir\": \"linux-64\", \"channel\": \"conda-forge\"\n    }"

/* Every lockfile's entry errors say the entry's line: pixi's and micromamba's JSON lock's
 * (found again in the file, as their readers hold parsed documents), and conda-lock's read by
 * the general reader (an anchor), which had one only where the streaming reader had seen the
 * entry first */
static void test_entry_lines(void **state)
{
	(void)state;
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	static const struct {
		const char *src, *text, *msg;
	} bad[] = {
	        /* micromamba's JSON: the entry's key */
	        {"m.json",
	         MAMBA_HEAD "  \"packages\": {\n" MAMBA_PKG(
	                 "a-1.0-0.conda", "a") ",\n"
	                                       "    \"b-1.0-0.conda\": {\"name\": \"b\"}\n  }\n}\n",
	         "m.json:11: package 'b-1.0-0.conda' lacks 'version'"},
	        {"m.json",
	         MAMBA_HEAD "  \"packages\": {},\n  \"pipPackages\": {\n"
	                    "    \"x.whl\": {\"name\": \"x\"}\n  }\n}\n",
	         "m.json:8: pip package 'x.whl' lacks a name, version or url"},
	        /* a control character, found after the entries were read */
	        {"m.json",
	         MAMBA_HEAD "  \"packages\": {\n" MAMBA_PKG("a-1.0-0.conda", "a") ",\n" MAMBA_PKG(
	                 "b-1.0-0.conda", "b\\u001b[31m") "\n  }\n}\n",
	         "m.json:11: package entry 2 ('b\\x1b[31m'): its name holds a control character"},
	        /* pixi: a package entry, a reference, the entry a reference finds */
	        {"pixi.lock",
	         "version: 6\nenvironments:\n  default:\n    channels: []\n    packages: {}\n"
	         "packages:\n- conda: " PKG "\n- name: x\n",
	         "pixi.lock:8: package entry 2 has no 'conda', 'pypi' or 'conda_source' key"},
	        {"pixi.lock",
	         "version: 6\nenvironments:\n  default:\n    channels: []\n    packages:\n"
	         "      linux-64:\n      - conda: " PKG
	         "\n      - conda: https://x.invalid/y.conda\n"
	         "packages:\n- conda: " PKG "\n",
	         "pixi.lock:8: environment 'default', platform 'linux-64' refers to "
	         "'https://x.invalid/y.conda', which is not in 'packages'"},
	        {"pixi.lock",
	         "version: 6\nenvironments:\n  default:\n    channels: []\n    packages:\n"
	         "      linux-64:\n      - conda: https://x.invalid/y.conda\n"
	         "packages:\n- conda: " PKG "\n- conda: https://x.invalid/y.conda\n",
	         "pixi.lock:10: environment 'default', platform 'linux-64': 'y.conda' is not a "
	         "conda package file name (name-version-build)"},
	        /* conda-lock through the general reader */
	        {"c.yml", "version: &v 1\npackage:\n" ENTRY("a", "") ENTRY("b", "") "- {name: c}\n",
	         "c.yml:19: package entry 3 ('c') lacks 'version'"},
	        {"c.yml",
	         "version: &v 1\npackage:\n" ENTRY(
	                 "a", "") "- name: \"b\\e\"\n"
	                          "  version: '1.0'\n  manager: conda\n  platform: linux-64\n"
	                          "  url: https://x.invalid/c/linux-64/b-1.0-0.conda\n  hash: "
	                          "{md5: 0123456789abcdef0123456789abcdef}\n",
	         "c.yml:11: package entry 2 ('b\\x1b'): its name holds a control character"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(menv_lockfile_parse(bad[i].text, strlen(bad[i].text), bad[i].src,
		                                     &lf, &err),
		                 MENV_EPARSE);
		assert_string_equal(err.msg, bad[i].msg);
	}
	/* the good JSON lock is read */
	const char *good =
	        MAMBA_HEAD "  \"packages\": {\n" MAMBA_PKG("a-1.0-0.conda", "a") "\n  }\n}\n";
	if (menv_lockfile_parse(good, strlen(good), "m.json", &lf, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(lf->pkgs[0].url, "https://x.invalid/cf/linux-64/a-1.0-0.conda");
	menv_lockfile_free(lf);
}

/* Issue 22, "Types": a conda-lock value that was read as something else is refused with its
 * FILE:LINE:COL, by the streaming reader and the general one (an anchor) alike: a
 * `dependencies` value that is a mapping, a list or a boolean (read as "any version"), a
 * `platform` that is not a string (`platform: 64`: the entry left out silently; conda-lock's
 * model takes strings only), an item `- ~` (a line, no column) */
static void test_conda_lock_value_types(void **state)
{
	(void)state;
	struct menv_error err = {0};
	static const struct {
		const char *text, *msg;
	} bad[] = {
	        {"package:\n" ENTRY("a", "") ENTRY("b", "x: {y: 1}"),
	         "e.yml:14:18: package entry 2 ('b'): the dependency 'x' is a mapping, not a "
	         "version (\"VERSION[ BUILD]\", \"*\" or nothing)"},
	        {"package:\n" ENTRY("a", "x: '>=1', z: [1]"),
	         "e.yml:6:28: package entry 1 ('a'): the dependency 'z' is a list, not a "
	         "version (\"VERSION[ BUILD]\", \"*\" or nothing)"},
	        {"package:\n" ENTRY("a", "x: true"),
	         "e.yml:6:18: package entry 1 ('a'): the dependency 'x' is a boolean, not a "
	         "version (\"VERSION[ BUILD]\", \"*\" or nothing)"},
	        {"package:\n- name: a\n  version: '1.0'\n  manager: conda\n  platform: 64\n"
	         "  url: https://x.invalid/c/linux-64/a-1.0-0.conda\n  hash: {md5: "
	         "0123456789abcdef0123456789abcdef}\n",
	         "e.yml:5:3: package entry 1 ('a'): its platform 64 is not a string (a platform "
	         "name such as \"linux-64\")"},
	        {"package:\n" ENTRY("a", "") "-   ~\n",
	         "e.yml:10:5: package entry 2 is not a mapping"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		for (int anchor = 0; anchor < 2; anchor++) {
			/* an anchor on the first line sends the file to the general reader */
			char *t = menv_xasprintf(
			        "%s%s", anchor ? "version: &v 1\n" : "version: 1\n", bad[i].text);
			char *want = menv_xstrdup(bad[i].msg);
			assert_null(model(t, "e.yml", &err));
			/* one line more before the entries */
			char *colon = strchr(want, ':');
			size_t line = strtoul(colon + 1, NULL, 10) + 1;
			char *rest = strchr(colon + 1, ':');
			char *exp = menv_xasprintf("e.yml:%zu%s", line, rest);
			assert_string_equal(err.msg, exp);
			free(exp);
			free(want);
			free(t);
		}
	}
	/* a number or a string is a version, null any: read */
	const char *good = "version: 1\npackage:\n" ENTRY("a", "x: 1, y: '>=2', z: ~, w: '*'");
	json_t *m = model(good, "e.yml", &err);
	if (!m)
		fail_msg("%s", err.msg);
	json_t *deps =
	        json_object_get(json_array_get(json_object_get(m, "packages"), 0), "depends");
	assert_string_equal(json_string_value(json_array_get(deps, 0)), "x 1");
	assert_string_equal(json_string_value(json_array_get(deps, 1)), "y >=2");
	assert_string_equal(json_string_value(json_array_get(deps, 2)), "z");
	assert_string_equal(json_string_value(json_array_get(deps, 3)), "w");
	json_decref(m);
}

/* Every entry keeps the line where it starts (menv_lock_package.line), for the plan's errors:
 * explicit (a conda line, a pip line), conda-lock streamed and read the general way, pixi (the
 * `packages` item its reference found); and a control character in an explicit or pixi
 * entry names that line, as conda-lock's did */
static void test_entry_line_kept(void **state)
{
	(void)state;
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	const char *ex =
	        "# platform: linux-64\n@EXPLICIT\n\n"
	        "https://x.invalid/c/linux-64/a-1.0-0.conda#0123456789abcdef0123456789abcdef\n"
	        "# pip p @ https://x.invalid/p-1.0-py3-none-any.whl\n";
	if (menv_lockfile_parse(ex, strlen(ex), "ex.txt", &lf, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(lf->npkgs, 2);
	assert_int_equal(lf->pkgs[0].line, 4);
	assert_int_equal(lf->pkgs[1].line, 5);
	menv_lockfile_free(lf);
	for (int anchor = 0; anchor < 2; anchor++) {
		char *t = menv_xasprintf("version: %s1\npackage:\n" ENTRY("a", "") ENTRY("b", ""),
		                         anchor ? "&v " : "");
		if (menv_lockfile_parse(t, strlen(t), "c.yml", &lf, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(lf->pkgs[0].line, 3);
		assert_int_equal(lf->pkgs[1].line, 11);
		menv_lockfile_free(lf);
		free(t);
	}
	const char *px =
	        "version: 6\nenvironments:\n  default:\n    channels: []\n    packages:\n"
	        "      linux-64:\n      - conda: https://x.invalid/c/linux-64/b-1.0-0.conda\n"
	        "packages:\n- conda: " PKG
	        "\n- conda: https://x.invalid/c/linux-64/b-1.0-0.conda\n";
	if (menv_lockfile_parse(px, strlen(px), "pixi.lock", &lf, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(lf->npkgs, 1);
	assert_int_equal(lf->pkgs[0].line, 10);
	menv_lockfile_free(lf);

	static const struct {
		const char *src, *text, *msg;
	} bad[] = {
	        {"ex.txt", "@EXPLICIT\n\nhttps://x.invalid/c\x01/linux-64/a-1.0-0.conda\n",
	         "ex.txt:3: package entry 1 ('a'): its url holds a control character"},
	        {"ex.txt",
	         "@EXPLICIT\nhttps://x.invalid/c/linux-64/a-1.0-0.conda\n"
	         "# pip p\x1b @ https://x.invalid/p.whl\n",
	         "ex.txt:3: package entry 2 ('p\\x1b'): its name holds a control character"},
	        /* a tab and a DEL inside a line, the DEL among the file's last 7 bytes (the
	         * explicit reader's check of the whole file goes 8 bytes a step) */
	        {"ex.txt",
	         "@EXPLICIT\nhttps://x.invalid/c/linux-64/a-1.0-0.conda\n"
	         "https://x.invalid/c\t/linux-64/b-1.0-0.conda\n",
	         "ex.txt:3: package entry 2 ('b'): its url holds a control character"},
	        {"ex.txt", "@EXPLICIT\nhttps://x.invalid/c/linux-64/a-1.0-0\x7f.conda",
	         "ex.txt:2: package entry 1 ('a'): its build holds a control character"},
	        {"pixi.lock",
	         "version: 6\nenvironments:\n  default:\n    channels: []\n    packages:\n"
	         "      linux-64:\n      - conda: https://x.invalid/c/linux-64/b-1.0-0.conda\n"
	         "packages:\n- conda: " PKG
	         "\n- conda: https://x.invalid/c/linux-64/b-1.0-0.conda\n"
	         "  name: \"b\\e\"\n",
	         "pixi.lock:10: package entry 1 ('b\\x1b'): its name holds a control character"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(menv_lockfile_parse(bad[i].text, strlen(bad[i].text), bad[i].src,
		                                     &lf, &err),
		                 MENV_EPARSE);
		assert_string_equal(err.msg, bad[i].msg);
	}
}

/* YAML merge keys in a lock (conda-lock reads its file with a YAML 1.1 loader): an entry's
 * keys merged from an anchor are its own (menv kept a key named "<<", and the entry lacked
 * 'manager'); its own keys win; a merge of something else is refused with FILE:LINE:COL */
static void test_merge_keys(void **state)
{
	(void)state;
	struct menv_error err = {0};
	const char *t =
	        "version: 1\npackage:\n"
	        "- &a\n  name: a\n  version: '1.0'\n  manager: conda\n  platform: linux-64\n"
	        "  url: https://x.invalid/c/linux-64/a-1.0-0.conda\n  hash: {md5: "
	        "0123456789abcdef0123456789abcdef}\n"
	        "- <<: *a\n  name: b\n  url: https://x.invalid/c/linux-64/b-1.0-0.conda\n"
	        "- {<<: [{name: c, platform: osx-64}, {platform: linux-64, version: '1.0'}],"
	        " manager: conda, hash: {md5: 0123456789abcdef0123456789abcdef}, url: "
	        "https://x.invalid/c/osx-64/c-1.0-0.conda}\n";
	json_t *m = model(t, "m.yml", &err);
	if (!m)
		fail_msg("%s", err.msg);
	json_t *pk = json_object_get(m, "packages");
	assert_int_equal(json_array_size(pk), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(pk, 1), "name")), "b");
	assert_string_equal(json_string_value(json_object_get(json_array_get(pk, 1), "platform")),
	                    "linux-64");
	assert_string_equal(json_string_value(json_object_get(json_array_get(pk, 2), "platform")),
	                    "osx-64");
	assert_string_equal(json_string_value(json_object_get(json_array_get(pk, 2), "version")),
	                    "1.0");
	assert_null(json_object_get(json_object_get(json_array_get(pk, 1), "extra"), "<<"));
	json_decref(m);
	/* no anchor: the streaming reader hands the entry to the general one */
	const char *inl = "version: 1\npackage:\n"
	                  "- <<: {manager: conda, platform: linux-64, hash: {md5: "
	                  "0123456789abcdef0123456789abcdef}}\n  name: a\n"
	                  "  version: '1.0'\n  url: https://x.invalid/c/linux-64/a-1.0-0.conda\n";
	m = model(inl, "m.yml", &err);
	if (!m)
		fail_msg("%s", err.msg);
	json_decref(m);
	assert_null(model("version: 1\npackage:\n- name: a\n  <<: 3\n", "m.yml", &err));
	assert_string_equal(err.msg,
	                    "m.yml:4:7: a merge key ('<<') takes a mapping or a list of mappings");
	assert_null(model("version: 1\npackage:\n- name: a\n  <<: [{x: 1}, y]\n", "m.yml", &err));
	assert_string_equal(err.msg,
	                    "m.yml:4:16: a merge key ('<<') takes a mapping or a list of mappings");
	/* a quoted '<<' is a key like any other */
	const char *q = "version: 1\npackage:\n" ENTRY("a", "") "  '<<': {x: 1}\n";
	m = model(q, "m.yml", &err);
	if (!m)
		fail_msg("%s", err.msg);
	assert_non_null(json_object_get(
	        json_object_get(json_array_get(json_object_get(m, "packages"), 0), "extra"), "<<"));
	json_decref(m);
}

/* Issue 24: the streaming reader (yaml_stream.c) kept a merge key inside a lock entry (the
 * entry itself, its `hash`, its `dependencies`, any mapping of its members) as a key named
 * "<<", where the whole-file reader (menv_yaml_to_json) merges it as conda-lock's YAML 1.1
 * loader does. The same bytes through both readers: the streaming one hands every such file
 * to the general one (1) or gives its value; and a lock written with merges reads as the same
 * lock written out. */
static int keep_item(void *ud, json_t *json, const struct menv_yaml_members *m, size_t index,
                     size_t line)
{
	(void)index, (void)line;
	json_array_append_new(ud, json ? json : menv_yaml_members_json(m));
	return 0;
}

static void test_merge_keys_both_readers(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *merged; /* merged: menv_yaml_to_json's value, or its error */
	} cases[] = {
	        {"package:\n- name: a\n  <<: {x: 1}\n", "{\"package\":[{\"name\":\"a\",\"x\":1}]}"},
	        {"package:\n- <<: {x: 1}\n  name: a\n", "{\"package\":[{\"name\":\"a\",\"x\":1}]}"},
	        {"package:\n- {name: a, <<: {name: b, v: 1}}\n",
	         "{\"package\":[{\"name\":\"a\",\"v\":1}]}"},
	        {"package:\n- name: a\n  <<: [{x: 1}, {x: 2, y: 2}]\n",
	         "{\"package\":[{\"name\":\"a\",\"x\":1,\"y\":2}]}"},
	        {"package:\n- name: a\n  hash: {<<: {md5: m}, sha256: s}\n",
	         "{\"package\":[{\"name\":\"a\",\"hash\":{\"sha256\":\"s\",\"md5\":\"m\"}}]}"},
	        {"package:\n- name: a\n  dependencies:\n    <<: {b: '1'}\n    c: '2'\n",
	         "{\"package\":[{\"name\":\"a\",\"dependencies\":{\"c\":\"2\",\"b\":\"1\"}}]}"},
	        {"package:\n- name: a\n  extra: {k: [1], <<: {z: 2}}\n",
	         "{\"package\":[{\"name\":\"a\",\"extra\":{\"k\":[1],\"z\":2}}]}"},
	        {"package:\n- x: {a: {<<: {q: 1}}}\n", "{\"package\":[{\"x\":{\"a\":{\"q\":1}}}]}"},
	        {"top: {<<: {q: 1}}\npackage: []\n", "{\"top\":{\"q\":1},\"package\":[]}"},
	        {"package:\n- name: a\n  <<: 3\n",
	         "m.yml:3:7: a merge key ('<<') takes a mapping or a list of mappings"},
	        /* a quoted '<<' is a key like any other: both readers keep it */
	        {"package:\n- name: a\n  '<<': {x: 1}\n",
	         "{\"package\":[{\"name\":\"a\",\"<<\":{\"x\":1}}]}"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const char *y = cases[i].yaml;
		struct menv_error err = {0};
		json_t *whole = NULL, *streamed = NULL, *items = json_array();
		int rc = menv_yaml_to_json(y, strlen(y), "m.yml", &whole, &err);
		char *got = rc ? menv_xstrdup(err.msg) : json_dumps(whole, JSON_COMPACT);
		if (strcmp(got, cases[i].merged))
			fail_msg("case %zu: the whole-file reader gives %s", i, got);
		free(got);
		err = (struct menv_error){0};
		rc = menv_yaml_stream_json(y, strlen(y), "m.yml", "package", keep_item, items,
		                           &streamed, &err);
		if (rc == 0) {
			json_object_set(streamed, "package", items);
			if (!whole || !json_equal(streamed, whole)) {
				char *d = json_dumps(streamed, JSON_COMPACT);
				fail_msg("case %zu: the streaming reader gives %s, the whole-file "
				         "reader %s",
				         i, d, cases[i].merged);
			}
		} else {
			assert_int_equal(rc, 1); /* handed to the general reader */
		}
		json_decref(streamed);
		json_decref(items);
		json_decref(whole);
	}

	/* a lock whose entry merges keys, in itself and in its hash and dependencies, is the lock
	 * written out: a complete entry merging `category` and `optional` was read as a main,
	 * required package with an extra key "<<" */
	struct menv_error err = {0};
	const char *merged = "version: 1\npackage:\n"
	                     "- name: a\n  version: '1.0'\n  manager: conda\n  platform: linux-64\n"
	                     "  dependencies:\n    <<: {b: '>=1'}\n    c: ''\n"
	                     "  url: https://x.invalid/c/linux-64/a-1.0-0.conda\n"
	                     "  hash: {md5: 0123456789abcdef0123456789abcdef, <<: {sha256: "
	                     "9653f1bf3766164d0e65fa723cabbc54f02e38a7d7e4e8fd4c6bd4e4fd1d3b41}}\n"
	                     "  <<: {category: dev, optional: true}\n";
	const char *plain = "version: 1\npackage:\n"
	                    "- name: a\n  version: '1.0'\n  manager: conda\n  platform: linux-64\n"
	                    "  dependencies:\n    c: ''\n    b: '>=1'\n"
	                    "  url: https://x.invalid/c/linux-64/a-1.0-0.conda\n"
	                    "  hash: {md5: 0123456789abcdef0123456789abcdef, sha256: "
	                    "9653f1bf3766164d0e65fa723cabbc54f02e38a7d7e4e8fd4c6bd4e4fd1d3b41}\n"
	                    "  category: dev\n  optional: true\n";
	json_t *m = model(merged, "m.yml", &err);
	if (!m)
		fail_msg("%s", err.msg);
	json_t *p = model(plain, "m.yml", &err);
	if (!p)
		fail_msg("%s", err.msg);
	json_t *a = json_array_get(json_object_get(m, "packages"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "category")), "dev");
	assert_true(json_is_true(json_object_get(a, "optional")));
	assert_int_equal(json_object_size(json_object_get(a, "extra")), 0);
	assert_string_equal(json_string_value(json_object_get(a, "sha256")),
	                    "9653f1bf3766164d0e65fa723cabbc54f02e38a7d7e4e8fd4c6bd4e4fd1d3b41");
	assert_int_equal(json_array_size(json_object_get(a, "depends")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "depends"), 1)),
	                    "b >=1");
	if (!json_equal(m, p)) {
		char *dm = json_dumps(m, JSON_SORT_KEYS), *dp = json_dumps(p, JSON_SORT_KEYS);
		fail_msg("merged: %s\nplain: %s", dm, dp);
	}
	json_decref(m);
	json_decref(p);
}

/* Issue 22: a conda package of a format that requires its hash, or whose hash is an empty
 * string, is refused with FILE:LINE naming it (it was read as "no hash" and installed
 * unchecked): conda-lock's `hash: {}`, `md5: ""`, no `hash` at all (its model requires the
 * mapping and a conda package's md5; rattler takes either hash), through the streaming and
 * the general reader; an empty md5 or sha256 of pixi.lock and micromamba's JSON lock
 * (rattler refuses it). Where the format lets both hashes out they stay out: pixi.lock,
 * micromamba's JSON, an explicit line without #md5 (conda installs it unchecked), a conda-lock
 * pip entry (its model has both optional). */
static void test_missing_hashes(void **state)
{
	(void)state;
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
#define BARE(hash)                                                                                 \
	"- name: b\n  version: '1.0'\n  manager: conda\n  platform: linux-64\n"                    \
	"  url: https://x.invalid/c/linux-64/b-1.0-0.conda\n" hash
	static const struct {
		const char *entry, *msg;
	} bad[] = {
	        {BARE("  hash: {}\n"), "c.yml:11: no md5 or sha256 for b"},
	        {BARE("  hash: {md5: ''}\n"), "c.yml:11: no md5 or sha256 for b"},
	        {BARE("  hash: {md5: '', sha256: ''}\n"), "c.yml:11: no md5 or sha256 for b"},
	        {BARE("  hash: {md5: null, sha256: null}\n"), "c.yml:11: no md5 or sha256 for b"},
	        {BARE(""), "c.yml:11: no md5 or sha256 for b (the entry has no 'hash')"},
	        {BARE("  hash: abc\n"), "c.yml:11: no md5 or sha256 for b (its 'hash' is not a "
	                                "mapping)"},
	        {BARE("  hash: {md5: '', sha256: "
	              "9653f1bf3766164d0e65fa723cabbc54f02e38a7d7e4e8fd4c6bd4e4fd1d3b41}\n"),
	         "c.yml:11: the md5 of b is empty"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		for (int anchor = 0; anchor < 2; anchor++) {
			char *t = menv_xasprintf("version: %s1\npackage:\n" ENTRY("a", "") "%s",
			                         anchor ? "&v " : "", bad[i].entry);
			assert_int_equal(menv_lockfile_parse(t, strlen(t), "c.yml", &lf, &err),
			                 MENV_EPARSE);
			assert_string_equal(err.msg, bad[i].msg);
			free(t);
		}
	/* sha256 alone, and a pip entry without hashes, are read */
	const char *ok = "version: 1\npackage:\n" BARE(
	        "  hash: {sha256: "
	        "9653f1bf3766164d0e65fa723cabbc54f02e38a7d7e4e8fd4c6bd4e4fd1d3b41}"
	        "\n") "- name: p\n"
	              "  version: '1'\n  manager: pip\n  platform: linux-64\n"
	              "  url: https://x.invalid/p-1-py3-none-any.whl\n  hash: {}\n";
	if (menv_lockfile_parse(ok, strlen(ok), "c.yml", &lf, &err))
		fail_msg("%s", err.msg);
	assert_null(lf->pkgs[0].md5);
	assert_null(lf->pkgs[1].sha256);
	menv_lockfile_free(lf);
#undef BARE
	/* pixi.lock: no hash is its model's choice; an empty one is refused */
	static const char pixi[] = "version: 6\nenvironments:\n  default:\n    channels: []\n"
	                           "    packages:\n      linux-64:\n      - conda: " PKG "\n"
	                           "packages:\n- conda: " PKG "\n%s";
	char *t = menv_xasprintf(pixi, "");
	if (menv_lockfile_parse(t, strlen(t), "pixi.lock", &lf, &err))
		fail_msg("%s", err.msg);
	assert_null(lf->pkgs[0].md5);
	assert_null(lf->pkgs[0].sha256);
	menv_lockfile_free(lf);
	free(t);
	t = menv_xasprintf(pixi, "  md5: ''\n");
	assert_int_equal(menv_lockfile_parse(t, strlen(t), "pixi.lock", &lf, &err), MENV_EPARSE);
	assert_string_equal(err.msg, "pixi.lock:9: no md5 or sha256 for zlib");
	free(t);
	/* micromamba's JSON lock likewise */
	const char *mj =
	        MAMBA_HEAD "  \"packages\": {\n" MAMBA_PKG("a-1.0-0.conda", "a") "\n  }\n}\n";
	if (menv_lockfile_parse(mj, strlen(mj), "m.json", &lf, &err))
		fail_msg("%s", err.msg);
	assert_null(lf->pkgs[0].md5);
	menv_lockfile_free(lf);
	const char *mje = MAMBA_HEAD
	        "  \"packages\": {\n    \"a-1.0-0.conda\": {\n      \"name\": \"a\", \"version\": "
	        "\"1.0\", \"build\": \"0\",\n      \"subdir\": \"linux-64\", \"channel\": "
	        "\"conda-forge\", \"hash\": {\"md5\": \"\"}\n    }\n  }\n}\n";
	assert_int_equal(menv_lockfile_parse(mje, strlen(mje), "m.json", &lf, &err), MENV_EPARSE);
	assert_string_equal(err.msg, "m.json:7: no md5 or sha256 for a");
	/* explicit: a line without #md5 is read without a hash (conda installs it) */
	const char *ex = "@EXPLICIT\nhttps://x.invalid/c/linux-64/b-1.0-0.conda\n";
	if (menv_lockfile_parse(ex, strlen(ex), "e.txt", &lf, &err))
		fail_msg("%s", err.msg);
	assert_null(lf->pkgs[0].md5);
	assert_null(lf->pkgs[0].sha256);
	menv_lockfile_free(lf);
}

/* A file's format read in pieces is the format of its whole text: the line that decides may
 * come after the first MiB, or straddle two pieces */
static void test_detect_file(void **state)
{
	(void)state;
	static const struct {
		const char *head, *tail;
		enum menv_lock_format want;
	} cases[] = {
	        {"# platform: linux-64\n", "@EXPLICIT\nhttps://x/linux-64/a-1-0.conda\n",
	         MENV_LOCK_EXPLICIT},
	        {"version: 1\npackage: []\n", "dependencies:\n  - a\n", MENV_LOCK_NONE},
	        {"version: 1\npackage: []\n", "metadata: {}", MENV_LOCK_CONDA_LOCK},
	        {"\xef\xbb\xbf{\"x\": \"", "\", \"lockVersion\": 1}", MENV_LOCK_MAMBA_JSON},
	};
	char path[] = "/tmp/menv-test-detect-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		for (size_t pad = (1u << 20) - 40; pad < (1u << 20) + 40; pad += 7) {
			struct menv_buf b = MENV_BUF_INIT;
			struct menv_error err = {0};
			enum menv_lock_format f;
			menv_buf_adds(&b, cases[i].head);
			bool json = cases[i].head[3] == '{';
			while (b.len < pad)
				menv_buf_adds(&b, json ? "y" : "# a comment line\n");
			menv_buf_adds(&b, cases[i].tail);
			FILE *fp = fopen(path, "wb");
			assert_non_null(fp);
			assert_int_equal(fwrite(b.buf, 1, b.len, fp), b.len);
			fclose(fp);
			assert_int_equal(menv_lockfile_detect_file(path, &f, &err), 0);
			assert_int_equal(f, cases[i].want);
			assert_int_equal(menv_lockfile_detect(b.buf, b.len), cases[i].want);
			menv_buf_release(&b);
		}
	}
	unlink(path);
	enum menv_lock_format f;
	struct menv_error err = {0};
	assert_int_equal(menv_lockfile_detect_file(path, &f, &err), MENV_ENOTFOUND);
	assert_int_equal(f, MENV_LOCK_NONE);
}

/* A hash in an entry's URL fragment (conda's explicit forms "#<md5>", "#sha256:<hex>",
 * "#<sha256>"; pip's "#sha256=") is one more hash of the entry: one that disagrees with the
 * entry's own is refused with the entry's line (it was dropped with the fragment), one the
 * entry lacks becomes its hash, and a conda URL's fragment that is no hash is refused as
 * conda refuses it. An explicit line's URL with a query is refused as conda 26.7.1 refuses it
 * ("ParseError: Could not parse explicit URL"), without showing the query. */
#define MD5A "0123456789abcdef0123456789abcdef"
#define MD5B "fedcba9876543210fedcba9876543210"
#define SHAA "9653f1bf3766164d0e65fa723cabbc54f02e38a7d7e4e8fd4c6bd4e4fd1d3b41"
#define SHAB "0000000000000000000000000000000000000000000000000000000000000001"
#define FRAG(url_tail, hash)                                                                       \
	"version: 1\npackage:\n- name: b\n  version: '1.0'\n  manager: conda\n"                    \
	"  platform: linux-64\n  url: https://x.invalid/c/linux-64/b-1.0-0.conda" url_tail "\n"    \
	"  hash: " hash "\n"

static void test_url_fragment_hashes(void **state)
{
	(void)state;
	struct menv_error err = {0};
	struct menv_lockfile *lf = NULL;
	static const struct {
		const char *text, *src, *msg;
	} bad[] = {
	        {FRAG("#" MD5B, "{md5: " MD5A "}"), "c.yml",
	         "c.yml:3: package entry 1 ('b'): the md5 in its url's fragment (" MD5B
	         ") is not its md5 (" MD5A ")"},
	        {FRAG("?x=1#" MD5B, "{md5: " MD5A ", sha256: " SHAA "}"), "c.yml",
	         "c.yml:3: package entry 1 ('b'): the md5 in its url's fragment (" MD5B
	         ") is not its md5 (" MD5A ")"},
	        {FRAG("#sha256:" SHAB, "{md5: " MD5A ", sha256: " SHAA "}"), "c.yml",
	         "c.yml:3: package entry 1 ('b'): the sha256 in its url's fragment (" SHAB
	         ") is not its sha256 (" SHAA ")"},
	        {FRAG("#" SHAB, "{sha256: " SHAA "}"), "c.yml",
	         "c.yml:3: package entry 1 ('b'): the sha256 in its url's fragment (" SHAB
	         ") is not its sha256 (" SHAA ")"},
	        {FRAG("#abc", "{md5: " MD5A "}"), "c.yml",
	         "c.yml:3: package entry 1 ('b'): its url's fragment '#abc' is neither an md5 "
	         "nor a 'sha256:' hash"},
	        {FRAG("#sha256:" MD5A, "{md5: " MD5A "}"), "c.yml",
	         "c.yml:3: package entry 1 ('b'): its url's fragment '#sha256:" MD5A
	         "' is neither an md5 nor a 'sha256:' hash"},
	        /* pixi: the entry's md5 key against the URL's */
	        {"version: 6\nenvironments:\n  default:\n    channels: []\n    packages:\n"
	         "      linux-64:\n      - conda: " PKG "#" MD5B "\npackages:\n- conda: " PKG
	         "#" MD5B "\n  md5: " MD5A "\n",
	         "pixi.lock",
	         "pixi.lock:9: package entry 1 ('zlib'): the md5 in its url's fragment (" MD5B
	         ") is not its md5 (" MD5A ")"},
	        /* a pip entry's PEP 503 fragment against its sha256 */
	        {"version: 1\npackage:\n- name: p\n  version: '1'\n  manager: pip\n"
	         "  platform: linux-64\n  url: https://x.invalid/p-1-py3-none-any.whl#sha256=" SHAB
	         "\n  hash: {sha256: " SHAA "}\n",
	         "c.yml",
	         "c.yml:3: package entry 1 ('p'): the sha256 in its url's fragment (" SHAB
	         ") is not its sha256 (" SHAA ")"},
	        /* explicit: a query (conda refuses the line), not shown */
	        {"@EXPLICIT\nhttps://x.invalid/c/linux-64/b-1.0-0.conda?token=SECRET#" MD5A "\n",
	         "e.txt",
	         "e.txt:2: the URL 'https://x.invalid/c/linux-64/b-1.0-0.conda' has a query (not "
	         "shown): an explicit lockfile's URL takes none (conda cannot read it either); a "
	         "channel's token or password goes in its URL in .condarc, or in ~/.netrc"},
	        {"@EXPLICIT\nhttps://x.invalid/c/linux-64/b-1.0-0.conda#sha256:" MD5A "\n", "e.txt",
	         "e.txt:2: '#sha256:" MD5A "' is neither an md5 nor a 'sha256:' hash"},
	        {"@EXPLICIT\nhttps://x.invalid/c/linux-64/b-1.0-0.conda#" MD5A "#sha256:" SHAA "\n",
	         "e.txt",
	         "e.txt:2: '#" MD5A "#sha256:" SHAA "' is neither an md5 nor a 'sha256:' hash"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int rc = menv_lockfile_parse(bad[i].text, strlen(bad[i].text), bad[i].src, &lf,
		                             &err);
		if (rc != MENV_EPARSE)
			fail_msg("case %zu: %d (%s)", i, rc, rc ? err.msg : "read");
		assert_null(lf);
		assert_string_equal(err.msg, bad[i].msg);
	}
	/* the same hash (any case) is read; a hash the entry lacks comes from the fragment */
	static const struct {
		const char *text, *md5, *sha256;
	} ok[] = {
	        {FRAG("#0123456789ABCDEF0123456789ABCDEF", "{md5: " MD5A ", sha256: " SHAA "}"),
	         MD5A, SHAA},
	        {FRAG("#" MD5B, "{sha256: " SHAA "}"), MD5B, SHAA},
	        {FRAG("#sha256:" SHAA, "{md5: " MD5A "}"), MD5A, SHAA},
	        {FRAG("", "{md5: " MD5A "}"), MD5A, NULL},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		if (menv_lockfile_parse(ok[i].text, strlen(ok[i].text), "c.yml", &lf, &err))
			fail_msg("%zu: %s", i, err.msg);
		assert_string_equal(lf->pkgs[0].md5, ok[i].md5);
		if (ok[i].sha256)
			assert_string_equal(lf->pkgs[0].sha256, ok[i].sha256);
		else
			assert_null(lf->pkgs[0].sha256);
		menv_lockfile_free(lf);
	}
	/* a pip URL's other fragments name no sha256 */
	const char *pip = "version: 1\npackage:\n- name: p\n  version: '1'\n  manager: pip\n"
	                  "  platform: linux-64\n  url: https://x.invalid/p-1.tar.gz#egg=p\n"
	                  "  hash: {sha256: " SHAA "}\n";
	if (menv_lockfile_parse(pip, strlen(pip), "c.yml", &lf, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(lf->pkgs[0].sha256, SHAA);
	menv_lockfile_free(lf);
}
#undef FRAG

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_v7_valid),
	        cmocka_unit_test(test_v7_refused),
	        cmocka_unit_test(test_conda_lock_v3),
	        cmocka_unit_test(test_conda_lock_streamed),
	        cmocka_unit_test(test_detect_file),
	        cmocka_unit_test(test_one_document),
	        cmocka_unit_test(test_entry_lines),
	        cmocka_unit_test(test_conda_lock_value_types),
	        cmocka_unit_test(test_entry_line_kept),
	        cmocka_unit_test(test_merge_keys),
	        cmocka_unit_test(test_merge_keys_both_readers),
	        cmocka_unit_test(test_missing_hashes),
	        cmocka_unit_test(test_url_fragment_hashes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
