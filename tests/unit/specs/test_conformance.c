/*
 * Conformance with conda, data-driven: every row of shared/conformance/{version_order,
 * version_parse, version_spec, match_spec, match_spec_records}.tsv, and of the project's own
 * tests/conformance/version_{parse,order}_conda.tsv (conda 26.7.1's VersionOrder answers, one
 * group per rule of its parser; made by tests/conformance/conda_versions.py, where a refused
 * version's message must also give conda's reason). Prints per-file pass counts; a row may only
 * be excused in tests/conformance/known-differences.tsv (file, first column, reason) where its
 * note says conda itself is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "specs.h"

#define MAXF 8

struct row {
	char *f[MAXF];
	int n;
	int line;
};

/* Writes code point `c` as UTF-8 at `d`; returns the byte count. */
static size_t put_utf8(char *d, unsigned long c)
{
	if (c < 0x80) {
		d[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		d[0] = (char)(0xc0 | c >> 6);
		d[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	d[0] = (char)(0xe0 | c >> 12);
	d[1] = (char)(0x80 | ((c >> 6) & 0x3f));
	d[2] = (char)(0x80 | (c & 0x3f));
	return 3;
}

/* Reads a TSV (header skipped), unescaping \t \n \\ and \uXXXX (the project's files write
 * characters outside printable ASCII so); fields are not trimmed. `name` is a file of
 * shared/conformance, or a path when it holds a '/'. */
static struct row *read_tsv(const char *name, size_t *nrows)
{
	char *path = strchr(name, '/') ? menv_xstrdup(name)
	                               : menv_xasprintf("%s/conformance/%s", MENV_SHARED, name);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	if (menv_buf_read_file(&b, path, &err))
		fail_msg("%s", err.msg);
	free(path);
	struct row *rows = menv_xcalloc(b.len / 4 + 2, sizeof(*rows));
	size_t n = 0;
	int line = 0;
	char *save = NULL;
	for (char *l = strtok_r(b.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (line++ == 0)
			continue;
		struct row *r = &rows[n++];
		r->line = line;
		char *p = l;
		while (r->n < MAXF) {
			char *tab = strchr(p, '\t');
			size_t len = tab ? (size_t)(tab - p) : strlen(p);
			char *f = menv_xmalloc(len + 1), *d = f;
			for (size_t i = 0; i < len; i++) {
				if (p[i] == '\\' && i + 5 < len && p[i + 1] == 'u') {
					char hex[5] = {p[i + 2], p[i + 3], p[i + 4], p[i + 5], 0};
					d += put_utf8(d, strtoul(hex, NULL, 16));
					i += 5;
				} else if (p[i] == '\\' && i + 1 < len) {
					i++;
					*d++ = p[i] == 't' ? '\t' : p[i] == 'n' ? '\n' : p[i];
				} else
					*d++ = p[i];
			}
			*d = '\0';
			r->f[r->n++] = f;
			if (!tab)
				break;
			p = tab + 1;
		}
	}
	menv_buf_release(&b);
	*nrows = n;
	return rows;
}

static void free_rows(struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < rows[i].n; k++)
			free(rows[i].f[k]);
	free(rows);
}

/* known differences: "file<TAB>first column<TAB>reason" */
static bool excused(const char *file, const char *key)
{
	static struct row *kd;
	static size_t nkd;
	if (!kd) {
		char *path =
		        menv_xasprintf("%s/tests/conformance/known-differences.tsv", MENV_SOURCE);
		FILE *f = fopen(path, "r");
		free(path);
		kd = menv_xcalloc(64, sizeof(*kd));
		char line[2048];
		while (f && fgets(line, sizeof(line), f) && nkd < 64) {
			if (line[0] == '#' || line[0] == '\n')
				continue;
			line[strcspn(line, "\n")] = '\0';
			char *t1 = strchr(line, '\t');
			char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
			if (!t1 || !t2)
				continue;
			kd[nkd].f[0] = menv_xstrndup(line, (size_t)(t1 - line));
			kd[nkd].f[1] = menv_xstrndup(t1 + 1, (size_t)(t2 - t1 - 1));
			kd[nkd].n = 2;
			nkd++;
		}
		if (f)
			fclose(f);
	}
	for (size_t i = 0; i < nkd; i++)
		if (!strcmp(kd[i].f[0], file) && !strcmp(kd[i].f[1], key))
			return true;
	return false;
}

struct tally {
	const char *file;
	size_t pass, fail, excused;
};

static void report(struct tally *t, bool ok, const struct row *r, const char *what)
{
	if (ok) {
		t->pass++;
		return;
	}
	if (excused(t->file, r->f[0])) {
		t->excused++;
		return;
	}
	t->fail++;
	printf("  FAIL %s:%d '%s': %s\n", t->file, r->line, r->f[0], what);
}

static void done(struct tally *t)
{
	printf("%s: %zu passed, %zu failed, %zu known differences\n", t->file, t->pass, t->fail,
	       t->excused);
	if (t->fail)
		fail_msg("%s: %zu rows differ from conda", t->file, t->fail);
}

static void version_order_rows(const char *file, const char *label)
{
	size_t n;
	struct row *rows = read_tsv(file, &n);
	struct tally t = {label, 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[i];
		struct menv_version *a = NULL, *b = NULL;
		struct menv_error err = {0};
		char what[4096] = "";
		bool ok = false;
		if (menv_version_parse(r->f[0], &a, &err) ||
		    menv_version_parse(r->f[2], &b, &err)) {
			snprintf(what, sizeof(what), "%s", err.msg);
		} else {
			int c = menv_version_cmp(a, b);
			char got = c < 0 ? '<' : c > 0 ? '>' : '=';
			ok = got == r->f[1][0];
			snprintf(what, sizeof(what), "want %s, got %c", r->f[1], got);
		}
		report(&t, ok, r, what);
		menv_version_free(a);
		menv_version_free(b);
	}
	free_rows(rows, n);
	done(&t);
}

static void test_version_order(void **state)
{
	(void)state;
	version_order_rows("version_order.tsv", "version_order.tsv");
}

static void test_version_order_conda(void **state)
{
	(void)state;
	version_order_rows(MENV_SOURCE "/tests/conformance/version_order_conda.tsv",
	                   "version_order_conda.tsv");
}

/* Rows "version, validity, normalised[, conda's reason]": with `has_reason` (the project's file),
 * menv's message must give it too (case aside), or name the character where conda says
 * "invalid character(s)". */
static void version_parse_rows(const char *file, const char *label, bool has_reason)
{
	size_t n;
	struct row *rows = read_tsv(file, &n);
	struct tally t = {label, 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[i];
		struct menv_version *v = NULL;
		struct menv_error err = {0};
		char what[4096] = "";
		int rc = menv_version_parse(r->f[0], &v, &err);
		bool want_ok = !strcmp(r->f[1], "valid");
		bool ok = want_ok ? rc == 0 && !strcmp(menv_version_str(v), r->f[2]) : rc != 0;
		const char *reason = has_reason && r->n > 3 && !want_ok ? r->f[3] : "";
		if (ok && *reason)
			ok = !strcmp(reason, "invalid character(s)")
			             ? strstr(err.msg, ": invalid character '") != NULL
			             : strcasestr(err.msg, reason) != NULL;
		snprintf(what, sizeof(what), "want %s %s%s%s, got %s", r->f[1], r->f[2],
		         *reason ? " " : "", reason, rc ? err.msg : menv_version_str(v));
		report(&t, ok, r, what);
		menv_version_free(v);
	}
	free_rows(rows, n);
	done(&t);
}

static void test_version_parse(void **state)
{
	(void)state;
	version_parse_rows("version_parse.tsv", "version_parse.tsv", false);
}

static void test_version_parse_conda(void **state)
{
	(void)state;
	version_parse_rows(MENV_SOURCE "/tests/conformance/version_parse_conda.tsv",
	                   "version_parse_conda.tsv", true);
}

static void test_version_spec(void **state)
{
	(void)state;
	size_t n;
	struct row *rows = read_tsv("version_spec.tsv", &n);
	struct tally t = {"version_spec.tsv", 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[i];
		struct menv_version_spec *vs = NULL;
		struct menv_error err = {0};
		char what[4096] = "";
		int rc = menv_version_spec_parse(r->f[0], &vs, &err);
		bool ok;
		if (!strcmp(r->f[2], "error")) {
			/* conda rejects the spec, or raises when matching this version */
			ok = rc != 0 || menv_version_spec_eval(vs, r->f[1]) < 0;
			snprintf(what, sizeof(what), "want an error, the spec was accepted");
		} else if (rc) {
			ok = false;
			snprintf(what, sizeof(what), "%s", err.msg);
		} else {
			bool m = menv_version_spec_match(vs, r->f[1]);
			ok = m == !strcmp(r->f[2], "true");
			snprintf(what, sizeof(what), "version '%s': want %s", r->f[1], r->f[2]);
		}
		report(&t, ok, r, what);
		menv_version_spec_free(vs);
	}
	free_rows(rows, n);
	done(&t);
}

static const char *ms_field(const struct menv_matchspec *ms, const char *key)
{
	if (!strcmp(key, "name"))
		return ms->name;
	if (!strcmp(key, "version"))
		return ms->version;
	if (!strcmp(key, "build"))
		return ms->build;
	if (!strcmp(key, "build_number"))
		return ms->build_number;
	if (!strcmp(key, "channel"))
		return ms->channel;
	if (!strcmp(key, "subdir"))
		return ms->subdir;
	if (!strcmp(key, "md5"))
		return ms->md5;
	if (!strcmp(key, "sha256"))
		return ms->sha256;
	if (!strcmp(key, "fn"))
		return ms->fn;
	if (!strcmp(key, "url"))
		return ms->url;
	if (!strcmp(key, "track_features"))
		return ms->track_features;
	if (!strcmp(key, "license"))
		return ms->license;
	if (!strcmp(key, "license_family"))
		return ms->license_family;
	return NULL;
}

/* Two version constraints mean the same when they agree on a set of probe versions made
 * from the numbers in both. */
static bool same_version_semantics(const char *a, const char *b)
{
	struct menv_version_spec *va = NULL, *vb = NULL;
	struct menv_error err;
	if (menv_version_spec_parse(a, &va, &err) || menv_version_spec_parse(b, &vb, &err)) {
		menv_version_spec_free(va);
		menv_version_spec_free(vb);
		return false;
	}
	static const char *base[] = {"0",          "1",      "1.0",   "1.6",  "1.7",  "1.7.0",
	                             "1.7.1",      "1.8",    "1.8.1", "1.9",  "1.10", "2",
	                             "2.0",        "2.1",    "3.9",   "3.10", "1.7a", "1.7dev",
	                             "1.7.1post1", "1.17.3", "10.0"};
	bool same = true;
	for (size_t i = 0; same && i < sizeof(base) / sizeof(*base); i++)
		same = menv_version_spec_match(va, base[i]) == menv_version_spec_match(vb, base[i]);
	/* versions appearing in the specs, and their neighbours */
	char buf[256];
	const char *srcs[] = {a, b};
	for (int k = 0; same && k < 2; k++) {
		const char *p = srcs[k];
		while (same && *p) {
			size_t l = strspn(p, "0123456789.abcdefghijklmnopqrstuvwxyz_+!");
			if (l && l < 200) {
				memcpy(buf, p, l);
				buf[l] = '\0';
				const char *probes[3];
				char b1[260], b2[260];
				snprintf(b1, sizeof(b1), "%s.1", buf);
				snprintf(b2, sizeof(b2), "%s1", buf);
				probes[0] = buf, probes[1] = b1, probes[2] = b2;
				for (int j = 0; j < 3; j++)
					same = same &&
					       menv_version_spec_match(va, probes[j]) ==
					               menv_version_spec_match(vb, probes[j]);
				p += l;
			} else
				p += l ? l : 1;
		}
	}
	menv_version_spec_free(va);
	menv_version_spec_free(vb);
	return same;
}

static bool same_feature_set(const char *a, const char *b)
{
	json_t *ra = json_pack("{s:s,s:s,s:s}", "name", "x", "version", "1", "track_features", b);
	char *spec = menv_xasprintf("x[track_features='%s']", a);
	struct menv_matchspec *ms = NULL;
	struct menv_error err;
	bool same = !menv_matchspec_parse(spec, &ms, &err) && menv_matchspec_match_json(ms, ra);
	menv_matchspec_free(ms);
	free(spec);
	json_decref(ra);
	return same;
}

static void test_match_spec(void **state)
{
	(void)state;
	size_t n;
	struct row *rows = read_tsv("match_spec.tsv", &n);
	struct tally t = {"match_spec.tsv", 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[i];
		struct menv_matchspec *ms = NULL;
		struct menv_error err = {0};
		char what[4096] = "";
		int rc = menv_matchspec_parse(r->f[0], &ms, &err);
		bool ok = true;
		if (!strcmp(r->f[1], "ERROR")) {
			ok = rc != 0;
			snprintf(what, sizeof(what), "want an error, the spec was accepted");
		} else if (rc) {
			ok = false;
			snprintf(what, sizeof(what), "%s", err.msg);
		} else {
			json_error_t jerr;
			json_t *want = json_loads(r->f[1], 0, &jerr);
			const char *key;
			json_t *v;
			json_object_foreach(want, key, v)
			{
				char num[32];
				const char *w = json_is_string(v) ? json_string_value(v) : NULL;
				if (json_is_integer(v)) {
					snprintf(num, sizeof(num), "%lld",
					         (long long)json_integer_value(v));
					w = num;
				}
				if (!strcmp(key, "features") || !strcmp(key, "namespace") ||
				    !strcmp(key, "optional") || !strcmp(key, "target"))
					continue;
				const char *g = ms_field(ms, key);
				char *joined = NULL;
				if (json_is_array(v)) { /* track_features: a set */
					struct menv_buf jb = MENV_BUF_INIT;
					size_t k;
					json_t *e;
					json_array_foreach(v, k, e)
					{
						menv_buf_adds(&jb, k ? " " : "");
						menv_buf_adds(&jb, json_string_value(e));
					}
					w = joined = menv_buf_detach(&jb);
				}
				bool same;
				if (!strcmp(key, "version") && w && !strcmp(w, "*") && !g)
					same = true; /* `*` and no constraint mean the same */
				else if (!strcmp(key, "version"))
					same = g && w && same_version_semantics(g, w);
				else if (!strcmp(key, "track_features"))
					same = g && w && same_feature_set(g, w);
				else if (!strcmp(key, "url") && w && g) {
					/* path specs resolve against the current directory; the rows were
					 * made in /cwd */
					char cwd[4096], *want_url;
					if (!getcwd(cwd, sizeof(cwd)))
						strcpy(cwd, "/");
					want_url = !strncmp(w, "file:///cwd/", 12)
					                   ? menv_xasprintf("file://%s/%s", cwd,
					                                    w + 12)
					                   : menv_xstrdup(w);
					same = !strcmp(g, want_url);
					free(want_url);
				} else if (!strcmp(key, "license") ||
				           !strcmp(key, "license_family"))
					same = g && w &&
					       !strcasecmp(g, w); /* matched case-insensitively */
				else if (!strcmp(key, "channel") || !strcmp(key, "subdir"))
					continue; /* resolved channels: checked in channel_urls */
				else
					same = g && w && !strcmp(g, w);
				if (!same) {
					ok = false;
					snprintf(what, sizeof(what), "%s: want '%s', got '%s'", key,
					         w ? w : "?", g ? g : "(unset)");
				}
				free(joined);
				if (!ok)
					break;
			}
			/* fields conda leaves unset must be unset here too */
			static const char *keys[] = {"version", "build", "build_number", "md5"};
			for (size_t k = 0; ok && k < 4; k++)
				if (!json_object_get(want, keys[k]) && ms_field(ms, keys[k]) &&
				    strcmp(ms_field(ms, keys[k]), "*")) {
					ok = false;
					snprintf(what, sizeof(what), "%s: want unset, got '%s'",
					         keys[k], ms_field(ms, keys[k]));
				}
			json_decref(want);
		}
		report(&t, ok, r, what);
		menv_matchspec_free(ms);
	}
	free_rows(rows, n);
	done(&t);
}

static void test_match_spec_records(void **state)
{
	(void)state;
	size_t n;
	struct row *rows = read_tsv("match_spec_records.tsv", &n);
	struct tally t = {"match_spec_records.tsv", 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[i];
		struct menv_matchspec *ms = NULL;
		struct menv_error err = {0};
		char what[4096] = "";
		bool ok;
		json_error_t jerr;
		json_t *rec = json_loads(r->f[1], 0, &jerr);
		int rc = menv_matchspec_parse(r->f[0], &ms, &err);
		if (!strcmp(r->f[2], "error")) {
			ok = rc != 0;
			snprintf(what, sizeof(what), "want an error");
		} else if (rc) {
			ok = false;
			snprintf(what, sizeof(what), "%s", err.msg);
		} else {
			bool m = menv_matchspec_match_json(ms, rec);
			ok = m == !strcmp(r->f[2], "true");
			snprintf(what, sizeof(what), "record %s: want %s", r->f[1], r->f[2]);
		}
		report(&t, ok, r, what);
		json_decref(rec);
		menv_matchspec_free(ms);
	}
	free_rows(rows, n);
	done(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_version_order),
	        cmocka_unit_test(test_version_parse),
	        cmocka_unit_test(test_version_spec),
	        cmocka_unit_test(test_match_spec),
	        cmocka_unit_test(test_match_spec_records),
	        cmocka_unit_test(test_version_order_conda),
	        cmocka_unit_test(test_version_parse_conda),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
