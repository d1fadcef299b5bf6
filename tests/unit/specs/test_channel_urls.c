/*
 * Channel resolution against conda's behaviour: every row of
 * ../shared/conformance/channel_urls.tsv (input, context, canonical name, subdir URLs with
 * credentials). The contexts (default, ctxA, ctxB, ctxC) are the .condarc settings and
 * environment variables described in conformance/README.md; the hosts that are conda's own
 * defaults are taken from menv_config_defaults() rather than written here.
 * Also: tokens and credentials never appear in names, base URLs or redacted URLs, and the
 * configuration keys of the fetch issue parse from files and environment variables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "skip77.h"

#include "specs.h"

#define TSV MENV_SHARED "/conformance/channel_urls.tsv"

static char *origin_of(const char *url)
{
	const char *p = strstr(url, "://");
	const char *end = p ? p + 3 + strcspn(p + 3, "/") : url + strlen(url);
	return menv_xstrndup(url, (size_t)(end - url));
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Builds the configuration of one context of the TSV. */
static void context_config(const char *ctx, struct menv_config *cfg)
{
	struct menv_error err = {0};
	char path[256];
	char *def_origin, *def_alias, *rc = NULL;

	menv_config_defaults(cfg);
	free(cfg->subdir);
	cfg->subdir = menv_xstrdup("linux-64");
	def_origin = origin_of(cfg->default_channels.v[0]);
	def_alias = menv_xstrdup(cfg->channel_alias);
	if (!strcmp(ctx, "ctxA")) {
		rc = menv_xasprintf(
		        "custom_channels:\n"
		        "  darwin: https://some.url.somewhere/stuff\n"
		        "  chuck: http://user1:pass2@another.url:8080/t/tk-1234/with/path\n"
		        "  pkgs/anaconda: http://192.168.0.15:8080\n"
		        "migrated_custom_channels:\n"
		        "  darwin: s3://just/cant\n"
		        "  chuck: file:///var/lib/repo/\n"
		        "  pkgs/anaconda: %s\n"
		        "migrated_channel_aliases:\n"
		        "  - %s\n"
		        "channel_alias: ftp://new.url:8082\n"
		        "default_channels:\n"
		        "  - http://192.168.0.15:8080/pkgs/anaconda\n"
		        "  - http://192.168.0.15:8080/pkgs/pro\n"
		        "  - http://192.168.0.15:8080/pkgs/msys2\n",
		        def_origin, def_alias);
	} else if (!strcmp(ctx, "ctxB")) {
		rc = menv_xasprintf(
		        "custom_channels:\n"
		        "  chuck: http://user1:pass2@another.url:8080/with/path/t/tk-1234\n"
		        "  chuck/subchan: "
		        "http://user33:pass44@another.url:8080/with/path/t/tk-1234\n"
		        "channel_alias: ftp://nm:ps@new.url:8082/t/zyx-wvut/\n"
		        "default_channels:\n"
		        "  - http://192.168.0.15:8080/pkgs/anaconda\n"
		        "  - donald/label/main\n"
		        "  - http://us:pw@192.168.0.15:8080/t/tkn-123/pkgs/r\n");
	}
	if (rc) {
		snprintf(path, sizeof(path), "%s/condarc-%s-%d.yml", MENV_TEST_TMP, ctx,
		         (int)getpid());
		write_text(path, rc);
		assert_int_equal(menv_config_apply_file(cfg, path, &err), 0);
		unlink(path);
	} else if (!strcmp(ctx, "ctxC")) {
		/* environment variables, through the same code path as menv_config_load */
		char *mig = menv_xasprintf("%s,http://10.2.3.4:7070/conda", def_alias);
		char home[256];
		snprintf(home, sizeof(home), "%s/home-ctxc", MENV_TEST_TMP);
		mkdir(home, 0755); /* HOME must be a directory (menv_home) */
		setenv("HOME", home, 1);
		setenv("CONDA_CHANNEL_ALIAS", "https://10.2.3.4:8080/conda/t/tk-123-45", 1);
		setenv("CONDA_MIGRATED_CHANNEL_ALIASES", mig, 1);
		unsetenv("CONDARC");
		unsetenv("MENVRC");
		menv_config_release(cfg);
		assert_int_equal(menv_config_load(cfg, &err), 0);
		free(cfg->subdir);
		cfg->subdir = menv_xstrdup("linux-64");
		unsetenv("CONDA_CHANNEL_ALIAS");
		unsetenv("CONDA_MIGRATED_CHANNEL_ALIASES");
		setenv("HOME", "/home", 1);
		free(mig);
	}
	free(rc);
	free(def_origin);
	free(def_alias);
}

static char *field(char **line)
{
	char *s = *line, *tab = strchr(s, '\t');

	if (tab) {
		*tab = '\0';
		*line = tab + 1;
	} else {
		s[strcspn(s, "\n")] = '\0';
		*line = s + strlen(s);
	}
	return s;
}

/* The "/cwd" of the TSV is the test's working directory, "/" here. */
static char *expected_text(const char *s)
{
	struct menv_buf b = MENV_BUF_INIT;
	const char *p;

	menv_buf_init(&b);
	while ((p = strstr(s, "file:///cwd"))) {
		menv_buf_add(&b, s, (size_t)(p - s));
		menv_buf_adds(&b, "file://");
		s = p + strlen("file:///cwd");
	}
	menv_buf_adds(&b, s);
	return menv_buf_detach(&b);
}

static void test_channel_urls_tsv(void **state)
{
	FILE *f = fopen(TSV, "r");
	char line[4096];
	int rows = 0, failed = 0;

	(void)state;
	if (!f)
		menv_skip();
	setenv("HOME", "/home", 1);
	assert_int_equal(chdir("/"), 0);
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		char *input = field(&p), *ctx = field(&p), *canon = field(&p), *urls = field(&p);
		struct menv_config cfg;
		struct menv_error err = {0};
		struct menv_channel **v = NULL;
		struct menv_strvec got = MENV_STRVEC_INIT;
		struct menv_buf joined = MENV_BUF_INIT;
		char *want_urls = expected_text(urls), *want_canon = expected_text(canon);
		const char *got_canon;
		size_t n = 0;
		int rc;

		if (!*input)
			continue;
		rows++;
		context_config(ctx, &cfg);
		if (!strncmp(input, "spec:", 5)) {
			struct menv_matchspec *ms = NULL;
			rc = menv_matchspec_parse(input + 5, &ms, &err);
			if (!rc && ms->channel)
				rc = menv_channel_resolve_spec(ms->channel, ms->subdir, &cfg, &v,
				                               &n, &err);
			menv_matchspec_free(ms);
		} else {
			rc = menv_channel_resolve(input, &cfg, &v, &n, &err);
		}
		menv_buf_init(&joined);
		for (size_t i = 0; !rc && i < n; i++)
			menv_channel_urls(v[i], cfg.subdir, true, &got);
		for (size_t i = 0; i < got.n; i++)
			menv_buf_addf(&joined, "%s%s", i ? " " : "", got.v[i]);
		got_canon = rc ? "ERROR" : n ? v[0]->name : input;
		if (strcmp(got_canon, want_canon) || strcmp(joined.buf, want_urls)) {
			failed++;
			fprintf(stderr,
			        "row %d [%s] %s\n  canonical: want '%s' got '%s'\n"
			        "  urls: want '%s'\n        got  '%s'%s%s\n",
			        rows, ctx, input, want_canon, got_canon, want_urls, joined.buf,
			        rc ? "\n  error: " : "", rc ? err.msg : "");
		}
		/* what may be printed never holds credentials */
		for (size_t i = 0; !rc && i < n; i++) {
			if (v[i]->token)
				assert_null(strstr(v[i]->base_url, v[i]->token));
			if (v[i]->token)
				assert_null(strstr(v[i]->name, v[i]->token));
			if (v[i]->auth)
				assert_null(strstr(v[i]->base_url, v[i]->auth));
		}
		menv_channels_free(v, n);
		menv_strvec_clear(&got);
		menv_buf_release(&joined);
		free(want_urls);
		free(want_canon);
		menv_config_release(&cfg);
	}
	fclose(f);
	fprintf(stderr, "channel_urls.tsv: %d rows, %d failed\n", rows, failed);
	assert_true(rows >= 80);
	assert_int_equal(failed, 0);
}

static void test_redact(void **state)
{
	(void)state;
	char *r = menv_url_redact("http://user1:pass2@another.url:8080/t/tk-1234/chuck/linux-64/"
	                          "repodata.json");
	assert_string_equal(r, "http://another.url:8080/t/<TOKEN>/chuck/linux-64/"
	                       "repodata.json");
	free(r);
	r = menv_url_redact("file:///srv/chan/noarch/repodata.json");
	assert_string_equal(r, "file:///srv/chan/noarch/repodata.json");
	free(r);
}

static void test_token_channel(void **state)
{
	struct menv_config cfg;
	struct menv_channel *c = NULL;
	struct menv_error err = {0};
	char *u;

	(void)state;
	menv_config_defaults(&cfg);
	free(cfg.channel_alias);
	cfg.channel_alias = menv_xstrdup("http://127.0.0.1:8765/conda");
	assert_int_equal(menv_channel_parse("http://u:p@127.0.0.1:8765/conda/t/sekrit-1/forge/",
	                                    &cfg, &c, &err),
	                 0);
	assert_string_equal(c->name, "forge");
	assert_string_equal(c->base_url, "http://127.0.0.1:8765/conda/forge");
	assert_string_equal(c->token, "sekrit-1");
	assert_string_equal(c->auth, "u:p");
	u = menv_channel_subdir_url(c, "noarch", true);
	assert_string_equal(u, "http://u:p@127.0.0.1:8765/conda/t/sekrit-1/forge/noarch");
	free(u);
	u = menv_channel_subdir_url(c, "noarch", false);
	assert_string_equal(u, "http://127.0.0.1:8765/conda/forge/noarch");
	free(u);
	menv_channel_free(c);
	/* "defaults" must be expanded first */
	assert_int_equal(menv_channel_parse("defaults", &cfg, &c, &err), MENV_EPARSE);
	menv_config_release(&cfg);
}

static void test_fetch_settings(void **state)
{
	struct menv_config cfg;
	struct menv_error err = {0};
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/condarc-fetch-%d.yml", MENV_TEST_TMP, (int)getpid());
	write_text(path, "remote_max_retries: 5\n"
	                 "remote_backoff_factor: 0.25\n"
	                 "remote_connect_timeout_secs: 2.5\n"
	                 "remote_read_timeout_secs: 7\n"
	                 "local_repodata_ttl: 600\n"
	                 "offline: true\n"
	                 "ssl_verify: /etc/ssl/my-ca.pem\n"
	                 "client_ssl_cert: /etc/ssl/me.pem\n"
	                 "proxy_servers:\n  http: http://proxy.local:3128\n"
	                 "  https: http://proxy.local:3129\n"
	                 "download_threads: 12\n"
	                 "envs_dirs: [/srv/envs]\n"
	                 "unknown_key: {a: 1}\n");
	menv_config_defaults(&cfg);
	assert_int_equal(cfg.remote_max_retries, 3);
	assert_int_equal(cfg.local_repodata_ttl, 1);
	assert_true(cfg.ssl_verify);
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), 0);
	assert_int_equal(cfg.remote_max_retries, 5);
	assert_true(cfg.remote_backoff_factor == 0.25);
	assert_true(cfg.remote_connect_timeout_secs == 2.5);
	assert_true(cfg.remote_read_timeout_secs == 7.0);
	assert_int_equal(cfg.local_repodata_ttl, 600);
	assert_true(cfg.offline);
	assert_true(cfg.ssl_verify);
	assert_string_equal(cfg.ssl_ca_bundle, "/etc/ssl/my-ca.pem");
	assert_string_equal(cfg.client_ssl_cert, "/etc/ssl/me.pem");
	assert_string_equal(cfg.proxy_http, "http://proxy.local:3128");
	assert_string_equal(cfg.proxy_https, "http://proxy.local:3129");
	assert_int_equal(cfg.download_threads, 12);
	assert_string_equal(cfg.envs_dir, "/srv/envs");
	write_text(path, "ssl_verify: false\nlocal_repodata_ttl: false\n");
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), 0);
	assert_false(cfg.ssl_verify);
	assert_null(cfg.ssl_ca_bundle);
	assert_int_equal(cfg.local_repodata_ttl, 0);
	write_text(path, "remote_max_retries: lots\n");
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, ":1:"));
	assert_non_null(strstr(err.msg, "remote_max_retries"));
	/* one document a file, as conda's YAML reader takes: a second one is no settings
	 * ignored */
	write_text(path, "ssl_verify: true\n---\nssl_verify: false\n");
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, ":2:1: a second YAML document (---) in one settings file"));
	write_text(path, "ssl_verify: true\n...\n]\n");
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, ":3:1: did not find expected <document start>"));
	menv_config_release(&cfg);
	unlink(path);

	/* environment variables override files: MENV_ before CONDA_ */
	char home[256];
	snprintf(home, sizeof(home), "%s/home-env", MENV_TEST_TMP);
	mkdir(home, 0755); /* HOME must be a directory (menv_home) */
	setenv("HOME", home, 1);
	setenv("CONDA_REMOTE_MAX_RETRIES", "7", 1);
	setenv("MENV_REMOTE_MAX_RETRIES", "2", 1);
	setenv("CONDA_OFFLINE", "true", 1);
	setenv("CONDA_CHANNELS", "conda-forge, bioconda", 1);
	assert_int_equal(menv_config_load(&cfg, &err), 0);
	assert_int_equal(cfg.remote_max_retries, 2);
	assert_true(cfg.offline);
	assert_int_equal(cfg.channels.n, 2);
	assert_string_equal(cfg.channels.v[1], "bioconda");
	menv_config_release(&cfg);
	setenv("CONDA_DOWNLOAD_THREADS", "0", 1);
	assert_int_equal(menv_config_load(&cfg, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, "$CONDA_DOWNLOAD_THREADS"));
	menv_config_release(&cfg);
	unsetenv("CONDA_DOWNLOAD_THREADS");
	unsetenv("CONDA_REMOTE_MAX_RETRIES");
	unsetenv("MENV_REMOTE_MAX_RETRIES");
	unsetenv("CONDA_OFFLINE");
	unsetenv("CONDA_CHANNELS");
}

/* mamba 2's mirrored_channels: name -> ordered mirrors, on the channel by canonical name or
 * base URL; a later file replaces a named channel's list and keeps the others */
static void test_mirrored_channels(void **state)
{
	struct menv_config cfg;
	struct menv_error err = {0};
	struct menv_channel *c = NULL;
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/condarc-mirrors-%d.yml", MENV_TEST_TMP, (int)getpid());
	write_text(path, "mirrored_channels:\n"
	                 "  conda-forge:\n"
	                 "    - https://mirror.example/conda-forge/\n"
	                 "    - oci://registry.example/channel-mirrors/conda-forge\n"
	                 "  https://private.example/team: [file:///srv/team]\n");
	menv_config_defaults(&cfg);
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), 0);
	assert_int_equal(cfg.mirrored_channel_names.n, 3);
	assert_int_equal(menv_channel_parse("conda-forge", &cfg, &c, &err), 0);
	assert_string_equal(c->base_url, "https://conda.anaconda.org/conda-forge");
	assert_int_equal(c->mirrors.n, 2);
	assert_string_equal(c->mirrors.v[0], "https://mirror.example/conda-forge");
	assert_string_equal(c->mirrors.v[1], "oci://registry.example/channel-mirrors/conda-forge");
	struct menv_channel *d = menv_channel_dup(c);
	assert_int_equal(d->mirrors.n, 2);
	menv_channel_free(d);
	menv_channel_free(c);
	assert_int_equal(menv_channel_parse("https://private.example/team", &cfg, &c, &err), 0);
	assert_int_equal(c->mirrors.n, 1);
	assert_string_equal(c->mirrors.v[0], "file:///srv/team");
	menv_channel_free(c);
	assert_int_equal(menv_channel_parse("bioconda", &cfg, &c, &err), 0);
	assert_int_equal(c->mirrors.n, 0);
	menv_channel_free(c);
	write_text(path, "mirrored_channels:\n  conda-forge: [http://other.example/cf]\n");
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), 0);
	assert_int_equal(menv_channel_parse("conda-forge", &cfg, &c, &err), 0);
	assert_int_equal(c->mirrors.n, 1);
	assert_string_equal(c->mirrors.v[0], "http://other.example/cf");
	menv_channel_free(c);
	assert_int_equal(cfg.mirrored_channel_names.n, 2); /* the team entry stays */
	write_text(path, "mirrored_channels:\n  conda-forge: https://not-a-list\n");
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, ":2:"));
	assert_non_null(strstr(err.msg, "list of mirror URLs"));
	menv_config_release(&cfg);
	unlink(path);
}

/* pkgs_dirs as conda reads it: a list in .condarc (~ expanded, duplicates dropped),
 * CONDA_PKGS_DIRS comma-separated over it, and pkgs_dir the first writable entry. */
static void test_pkgs_dirs(void **state)
{
	(void)state;
	struct menv_config cfg;
	struct menv_error err = {0};
	char home[256], rc[512], text[2048];

	snprintf(home, sizeof(home), "%s/home-pkgs", MENV_TEST_TMP);
	snprintf(rc, sizeof(rc), "%s/pkgsrc", MENV_TEST_TMP);
	mkdir(home, 0755); /* HOME must be a directory (menv_home) */
	setenv("HOME", home, 1);
	setenv("MENVRC", rc, 1);
	unsetenv("CONDARC");
	unsetenv("CONDA_PKGS_DIRS");
	/* <tmp>/afile/pkgs cannot be made (a file is in the way): the next entry is written */
	char ro[512], ro2[512];
	snprintf(ro, sizeof(ro), "%s/afile/pkgs", MENV_TEST_TMP);
	snprintf(ro2, sizeof(ro2), "%s/afile/b", MENV_TEST_TMP);
	snprintf(text, sizeof(text), "%s/afile", MENV_TEST_TMP);
	write_text(text, "not a directory\n");
	snprintf(text, sizeof(text), "pkgs_dirs:\n  - %s\n  - ~/cache/\n  - %s\n", ro, ro);
	write_text(rc, text);
	assert_int_equal(menv_config_load(&cfg, &err), 0);
	assert_int_equal(cfg.pkgs_dirs.n, 2);
	assert_string_equal(cfg.pkgs_dirs.v[0], ro);
	char *want = menv_xasprintf("%s/cache", home);
	assert_string_equal(cfg.pkgs_dirs.v[1], want);
	assert_string_equal(cfg.pkgs_dir, want);
	assert_true(cfg.pkgs_dir_writable);
	free(want);
	menv_config_release(&cfg);

	/* the variable wins over the file; none writable: the first, marked so */
	snprintf(text, sizeof(text), "%s,%s", ro, ro2);
	setenv("CONDA_PKGS_DIRS", text, 1);
	assert_int_equal(menv_config_load(&cfg, &err), 0);
	assert_int_equal(cfg.pkgs_dirs.n, 2);
	assert_string_equal(cfg.pkgs_dirs.v[1], ro2);
	assert_string_equal(cfg.pkgs_dir, ro);
	assert_false(cfg.pkgs_dir_writable);
	menv_config_release(&cfg);

	/* the default: [<root>/pkgs] */
	unsetenv("CONDA_PKGS_DIRS");
	write_text(rc, "");
	setenv("MENV_ROOT_PREFIX", home, 1);
	assert_int_equal(menv_config_load(&cfg, &err), 0);
	want = menv_xasprintf("%s/pkgs", home);
	assert_int_equal(cfg.pkgs_dirs.n, 1);
	assert_string_equal(cfg.pkgs_dirs.v[0], want);
	assert_string_equal(cfg.pkgs_dir, want);
	free(want);
	menv_config_release(&cfg);
	unsetenv("MENV_ROOT_PREFIX");
	unsetenv("MENVRC");
	unlink(rc);
}

/* custom_channels with 50,000 entries: read, merged and resolved in O(n log n); it was
 * quadratic (a linear search per entry read, again per channel resolved): 48 s for this test
 * on a loaded 2-core machine, 0.4 s now. The result is asserted, not the time. */
static void test_many_custom_channels(void **state)
{
	(void)state;
	enum { N = 50000 };
	struct menv_config cfg;
	struct menv_error err = {0};
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_channel **out = NULL;
	size_t n = 0;
	char path[512];

	snprintf(path, sizeof(path), "%s/many-custom.condarc", MENV_TEST_TMP);
	menv_buf_adds(&b, "custom_channels:\n");
	for (int i = 0; i < N; i++)
		menv_buf_addf(&b, "  c%05d: https://h%05d.example.org/x\n", i, i);
	/* a key given twice: its first place, its last value (a dict's update) */
	menv_buf_adds(&b, "  c00007: https://moved.example.org/y\n");
	write_text(path, b.buf);
	menv_config_defaults(&cfg);
	assert_int_equal(menv_config_apply_file(&cfg, path, &err), 0);
	/* pkgs/pro (a default) and the N names, each once */
	assert_int_equal(cfg.custom_channel_names.n, N + 1);
	assert_int_equal(cfg.custom_channel_urls.n, N + 1);
	assert_string_equal(cfg.custom_channel_names.v[8], "c00007");
	assert_string_equal(cfg.custom_channel_urls.v[8], "https://moved.example.org/y");
	assert_string_equal(cfg.custom_channel_names.v[N], "c49999");

	assert_int_equal(menv_channel_resolve("c49999/label/dev", &cfg, &out, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0]->base_url, "https://h49999.example.org/x/c49999/label/dev");
	assert_string_equal(out[0]->name, "c49999/label/dev");
	menv_channels_free(out, n);
	assert_int_equal(menv_channel_resolve("c00007", &cfg, &out, &n, &err), 0);
	assert_string_equal(out[0]->base_url, "https://moved.example.org/y/c00007");
	menv_channels_free(out, n);
	menv_config_release(&cfg);
	menv_buf_release(&b);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_many_custom_channels), cmocka_unit_test(test_pkgs_dirs),
	        cmocka_unit_test(test_channel_urls_tsv),     cmocka_unit_test(test_redact),
	        cmocka_unit_test(test_token_channel),        cmocka_unit_test(test_fetch_settings),
	        cmocka_unit_test(test_mirrored_channels),
	};
	char mk[512];

	snprintf(mk, sizeof(mk), "mkdir -p '%s'", MENV_TEST_TMP);
	if (system(mk) != 0)
		return 1;
	return menv_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
