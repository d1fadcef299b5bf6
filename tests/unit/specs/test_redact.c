/*
 * test_redact.c - menv_url_redact / menv_text_redact against conda's answers
 * (conda/common/url.py: remove_auth(mask_anaconda_token(url)), run on each input), for every
 * shape of authority: several '@', "%40", "user@" without a password, tokens, IPv6 hosts.
 * Where menv deliberately differs from conda the row says why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "specs.h"

static const struct {
	const char *in, *want;
} rows[] = {
        /* conda: 'http://host/chan' (a first-'@' split would print "t-pw@host") */
        {"http://alice:s3cr@t-pw@host/chan", "http://host/chan"},
        {"http://user1:pass2@another.url:8080/t/tk-1234/chuck/linux-64/repodata.json",
         "http://another.url:8080/t/<TOKEN>/chuck/linux-64/repodata.json"},
        {"https://alice%40corp.com:p%40ss@host.example/chan/noarch",
         "https://host.example/chan/noarch"},
        {"https://bob@host.example/chan", "https://host.example/chan"},
        {"https://host.example/t/tk-123-456/conda-forge/linux-64",
         "https://host.example/t/<TOKEN>/conda-forge/linux-64"},
        {"oci://dave:PW@registry.local:5000/team", "oci://registry.local:5000/team"},
        {"file:///srv/chan/noarch/repodata.json", "file:///srv/chan/noarch/repodata.json"},
        {"https://user:password@anaconda.com", "https://anaconda.com"},
        /* conda drops the brackets ('http://::1:8080/chan', no longer a URL): menv keeps them */
        {"http://u:pw@[::1]:8080/chan", "http://[::1]:8080/chan"},
        {"http://[2001:db8::1]/t/tok-9/chan", "http://[2001:db8::1]/t/<TOKEN>/chan"},
        /* conda masks the first token only ('.../t/<TOKEN>/path/t/tk-2/x'): menv masks each */
        {"https://host/api/t/tk-1/path/t/tk-2/x", "https://host/api/t/<TOKEN>/path/t/<TOKEN>/x"},
        /* conda masks [A-Za-z0-9-]* only and would print "_x.y": menv masks the segment */
        {"https://host/t/tk_1.x.y/chan", "https://host/t/<TOKEN>/chan"},
        /* a password holding '?' or '#' is still part of what is removed */
        {"http://u:p?w#d@host/c", "http://host/c"},
        /* ssh: the login name stays (pip's "git+ssh://git@github.com/..."), a password not */
        {"git+ssh://git@github.com/org/repo.git", "git+ssh://git@github.com/org/repo.git"},
        {"ssh://u:pw@host/x", "ssh://host/x"},
        {"git+https://ghp_TOKEN@github.com/org/repo.git", "git+https://github.com/org/repo.git"},
        /* a raw '/', '#', '?' or ' ' in the password (should have been %-encoded): the
         * userinfo still ends at the LAST '@', and nothing of the password is left (conda's
         * urlparse would keep "usr:S3c/ret@..." or cut the host at the '#') */
        {"http://usr:S3c/ret@127.0.0.1:8080/chan", "http://127.0.0.1:8080/chan"},
        {"http://usr:S3c#ret@127.0.0.1:8080/chan/linux-64/repodata.json",
         "http://127.0.0.1:8080/chan/linux-64/repodata.json"},
        {"http://usr:S3c?ret@127.0.0.1:8080/chan", "http://127.0.0.1:8080/chan"},
        {"http://usr:S3c ret@127.0.0.1:8080/chan", "http://127.0.0.1:8080/chan"},
        {"http://usr:a/b?c#d e@f@host/t/tk-1/chan", "http://host/t/<TOKEN>/chan"},
        /* a well-formed host before the first '/': the '@' is in the path (RFC 3986), and the
         * URL is kept whole, as records and lockfiles must hold it */
        {"http://tok/en@host/chan", "http://tok/en@host/chan"},
        {"http://127.0.0.1:18777/sub@x", "http://127.0.0.1:18777/sub@x"},
        {"file:///tmp/chan/sub@x/noarch/a-1-0.tar.bz2",
         "file:///tmp/chan/sub@x/noarch/a-1-0.tar.bz2"},
        {"https://host.example/path@x/pkg-1.0.tar.gz",
         "https://host.example/path@x/pkg-1.0.tar.gz"},
        /* an authority that is no host: the userinfo ends at the first '@' a host follows */
        {"git+https://tok:KQZ/WVJ@github.com/org/priv@v2", "git+https://github.com/org/priv@v2"},
        {"http://u:p/w@[::1]:8080/chan", "http://[::1]:8080/chan"},
        /* pip's VCS revision after a well-formed host is no userinfo; before it, it is */
        {"git+https://github.com/dateutil/dateutil@9eaa5de5",
         "git+https://github.com/dateutil/dateutil@9eaa5de5"},
        {"git+https://u:pw@github.com/org/repo.git@v1.0#egg=x",
         "git+https://github.com/org/repo.git@v1.0#egg=x"},
        {"git+https://u:S3c/ret@github.com/org/repo.git", "git+https://github.com/org/repo.git"},
        /* a query is removed (issue 22: a lock URL's "?token=" reached conda-meta, exports and
         * output; conda keeps it, and refuses such an explicit line): the fragment after it
         * stays, a '?' in the fragment or in a password is no query */
        {"https://host/c/noarch/x-1-0.conda?token=SECRET", "https://host/c/noarch/x-1-0.conda"},
        {"https://u:pw@host/c/noarch/x-1-0.conda?a=1&sig=S#0123abcd",
         "https://host/c/noarch/x-1-0.conda#0123abcd"},
        {"https://host/t/tk-1/c/x-1-0.conda?token=S", "https://host/t/<TOKEN>/c/x-1-0.conda"},
        {"http://host:8080?token=S", "http://host:8080"},
        {"http://host/c?", "http://host/c"},
        {"http://host/c#frag?not-a-query", "http://host/c#frag?not-a-query"},
        {"no url here", "no url here"},
        {"", ""},
};

static void test_url_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		char *r = menv_url_redact(rows[i].in);
		assert_string_equal(r, rows[i].want);
		free(r);
		assert_int_equal(menv_text_needs_redaction(rows[i].in),
		                 strcmp(rows[i].in, rows[i].want) != 0);
	}
}

/* Every URL inside a text, with the words around it kept byte for byte. */
static void test_text(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
	} t[] = {
	        {"menv create -n e -c http://alice:s3cr@t-pw@h:1/t/CANARY/chan "
	         "--index-url=http://bob:"
	         "PW@h/simple x",
	         "menv create -n e -c http://h:1/t/<TOKEN>/chan --index-url=http://h/simple x"},
	        {"{\"url\": \"https://u:p@host\", \"b\": 'oci://d:P@r/team'}",
	         "{\"url\": \"https://host\", \"b\": 'oci://r/team'}"},
	        {"http://u:p@h/c::numpy >=1\n+http://u:p@h/c/linux-64::x-1-0",
	         "http://h/c::numpy >=1\n+http://h/c/linux-64::x-1-0"},
	        {"trailing ://", "trailing ://"},
	        {"://u:p@h", "://h"},
	        {"a: b:/ c:/d :", "a: b:/ c:/d :"},
	        {"x:y://u:p@h :/ :", "x:y://h :/ :"},
	        {":", ":"},
	        /* a quote before the URL: it ends at the closing quote, so a password holding a
	         * space (or any byte but that quote) is masked whole */
	        {"invalid channel 'http://usr:S3c ret@127.0.0.1:9/chan': no", "invalid channel "
	                                                                      "'http://127.0.0.1:9/"
	                                                                      "chan': no"},
	        {"\"message\": \"cannot download 'http://usr:S3c/ret@h:9/chan/x.json': 404\"",
	         "\"message\": \"cannot download 'http://h:9/chan/x.json': 404\""},
	        {"a \"http://u:p w`x@h/c\" b `http://u:p'q@h/d` c",
	         "a \"http://h/c\" b `http://h/d` c"},
	        /* a quote that is not closed on its line: the URL ends at the space as before */
	        {"'http://u:p@h/c x@y\nz'", "'http://h/c x@y\nz'"},
	        /* unquoted, a space cuts the password: an authority that is no host goes on to
	         * the next '@' of the line */
	        {"menv create -c http://usr:S3c ret@h:9/c python",
	         "menv create -c http://h:9/c python"},
	        /* unquoted, a space ends the URL: the '@' of the next word is not its userinfo */
	        {"see http://h/c or mail me@example.org", "see http://h/c or mail me@example.org"},
	        {"::://u:p@h", "::://h"},
	        /* a query inside a message: removed up to the URL's end */
	        {"md5 mismatch for 'x.conda' from 'https://h/c/x.conda?token=SECRET': expected",
	         "md5 mismatch for 'x.conda' from 'https://h/c/x.conda': expected"},
	        {"get https://h/c/x.conda?token=S ok", "get https://h/c/x.conda ok"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		char *r = menv_text_redact(t[i].in);
		assert_string_equal(r, t[i].want);
		free(r);
	}
}

/* CPU seconds of redacting n lines of a --json plan (two URLs with a password per line) */
static double redact_seconds(size_t n)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct timespec t0, t1;
	double best = 1e9;

	menv_buf_init(&b);
	for (size_t i = 0; i < n; i++)
		menv_buf_addf(&b,
		              "{\"url\": \"https://u:pw@h/c/linux-64/p%zu-1.0-0.tar.bz2\", "
		              "\"channel\": \"https://u:pw@h/c\", \"a\": 1},\n",
		              i);
	for (int run = 0; run < 3; run++) {
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		char *r = menv_text_redact(b.buf);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		assert_null(strstr(r, "pw@"));
		free(r);
		double s =
		        (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (s < best)
			best = s;
	}
	menv_buf_release(&b);
	return best;
}

/* Redaction is linear in the text: 8 times the lines take about 8 times as long, not 64 (a
 * strstr loop rescanned the rest of the text for each URL under ASan: cli.linear's 100,000
 * entry lock ran past 300 s there). The bound leaves room for noise and caches. */
static void test_text_linear(void **state)
{
	(void)state;
	double small = redact_seconds(2000), large = redact_seconds(16000);
	print_message("redacting 2,000 lines: %.4f s, 16,000 lines: %.4f s (x%.1f)\n", small, large,
	              large / small);
	assert_true(large < 24 * small + 0.01);
}

/* proxy_servers values: with a scheme as menv_url_redact; without one ("user:pw@host:port",
 * which requests' prepend_scheme_if_needed and curl take as http://) the userinfo goes too */
static void test_proxy(void **state)
{
	static const struct {
		const char *in, *want;
	} p[] = {
	        {"http://puser:PPW@proxy.corp:3128", "http://proxy.corp:3128"},
	        {"puser:PPW@proxy.corp:3128", "proxy.corp:3128"},
	        {"puser:P@W@proxy.corp:3128", "proxy.corp:3128"},
	        {"puser@proxy.corp", "proxy.corp"},
	        {"proxy.corp:3128", "proxy.corp:3128"},
	        {"socks5h://u:p@127.0.0.1:1080", "socks5h://127.0.0.1:1080"},
	        {"", ""},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(p) / sizeof(*p); i++) {
		char *got = menv_proxy_redact(p[i].in);
		assert_string_equal(got, p[i].want);
		free(got);
	}
	json_t *j = json_pack("{s:s, s:s, s:i}", "http", "u:S3c@h:1", "https", "https://u:S3c@h:2",
	                      "ftp", 3);
	menv_proxy_json_redact(j);
	char *dump = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(dump, "{\"ftp\":3,\"http\":\"h:1\",\"https\":\"https://h:2\"}");
	free(dump);
	json_decref(j);
}

/* menv_url_basename / menv_url_folder: the file name and folder of a URL's path, never its
 * query or fragment (a lock's "?token=", a signed URL's "?sig=", a "#md5") */
static void test_url_basename(void **state)
{
	static const struct {
		const char *url, *name, *folder;
	} u[] = {
	        {"https://h/c/noarch/aa-1.0-0.tar.bz2?token=CANARY7x9", "aa-1.0-0.tar.bz2",
	         "noarch"},
	        {"https://h/c/linux-64/x-1-0.conda?sig=a/b#md5", "x-1-0.conda", "linux-64"},
	        {"https://h/c/linux-64/x-1-0.conda#sha256:ab/cd", "x-1-0.conda", "linux-64"},
	        {"file:///srv/c/noarch/x-1-0.conda", "x-1-0.conda", "noarch"},
	        {"https://h/c/noarch/", "", "noarch"},
	        {"x-1-0.conda?t=1", "x-1-0.conda", NULL},
	        {"/x-1-0.conda", "x-1-0.conda", NULL},
	        {"https://h//x.conda", "x.conda", NULL},
	        {"https://h/x.conda", "x.conda", NULL},
	        {"http://127.0.0.1:8080/x-1-0.conda?t=/a/b", "x-1-0.conda", NULL},
	        {"https://user:pw@h/x.conda", "x.conda", NULL},
	        {"file:///x.conda", "x.conda", NULL},
	        {"https://h/noarch/x.conda", "x.conda", "noarch"},
	        {"", "", NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(u) / sizeof(*u); i++) {
		char *got = menv_url_filename(u[i].url);
		assert_string_equal(got, u[i].name);
		free(got);
		size_t off = 0, len = 0;
		bool has = menv_url_folder(u[i].url, &off, &len);
		assert_int_equal(has, u[i].folder != NULL);
		if (has) {
			assert_int_equal(len, strlen(u[i].folder));
			assert_memory_equal(u[i].url + off, u[i].folder, len);
		}
	}
}

/* menv_url_path_climbs: a path that leaves where it seems to lie once a client or a server
 * normalizes or decodes it (cli.attack13_lock_credentials_climb) */
static void test_url_path_climbs(void **state)
{
	static const char *climbs[] = {
	        "/../other/x.conda",
	        "/./x.conda",
	        "/%2e%2e/o/x.conda",
	        "/%2E%2e/o/x.conda",
	        "/.%2e/o/x.conda",
	        "/..;/o/x.conda",
	        "/..;a=b/o/x",
	        "/a%2F..%2Fo/x.conda",
	        "/a%2f..%2fo/x",
	        "/..%5Co/x.conda",
	        "/a\\..\\o/x",
	        "/x/../../o/x.conda",
	        "/noarch/..",
	        "/noarch/.",
	        "..",
	        "/%2e",
	};
	static const char *plain[] = {
	        "/noarch/x-1.0-0.conda",
	        "",
	        "/",
	        "//noarch/x.conda",
	        "/.../x.conda",
	        "/..x/y",
	        "/x../y",
	        "/noarch/x-1.0-0.conda?p=/../a",
	        "/noarch/x.conda#/../a",
	        "/a;b/x",
	        "/%2e%2e%2e/x",
	        "/%2",
	        "/%",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(climbs) / sizeof(*climbs); i++)
		if (!menv_url_path_climbs(climbs[i]))
			fail_msg("'%s' climbs", climbs[i]);
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++)
		if (menv_url_path_climbs(plain[i]))
			fail_msg("'%s' does not climb", plain[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_url_rows),     cmocka_unit_test(test_text),
	        cmocka_unit_test(test_text_linear),  cmocka_unit_test(test_proxy),
	        cmocka_unit_test(test_url_basename), cmocka_unit_test(test_url_path_climbs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
