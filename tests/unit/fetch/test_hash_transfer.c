/*
 * test_hash_transfer.c - checksums (against sha256sum/md5sum of corpus files) and transfers:
 * file:// URLs, repodata fetching rules, and HTTP status handling against a small loopback
 * server run in a thread of the test.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static void test_hash_file_corpus(void **state)
{
	struct menv_hashes h;
	struct menv_error err = {0};

	(void)state;
	assert_int_equal(menv_hash_file(ZLIB_CONDA, &h, &err), 0);
	assert_string_equal(h.sha256, ZLIB_CONDA_SHA256);
	assert_string_equal(h.md5, ZLIB_CONDA_MD5);
	assert_int_equal(h.size, ZLIB_CONDA_SIZE);

	assert_int_equal(menv_hash_file(ZLIB_TARBZ2, &h, &err), 0);
	assert_string_equal(h.sha256, ZLIB_TARBZ2_SHA256);
	assert_string_equal(h.md5, ZLIB_TARBZ2_MD5);
	assert_int_equal(h.size, ZLIB_TARBZ2_SIZE);
}

static void test_hash_file_missing(void **state)
{
	struct menv_hashes h;
	struct menv_error err = {0};

	(void)state;
	assert_int_equal(menv_hash_file(CORPUS "/no-such-file.conda", &h, &err), MENV_ENOTFOUND);
	assert_int_equal(err.code, MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'" CORPUS "/no-such-file.conda'"));
}

static void test_hash_mem(void **state)
{
	struct menv_hashes h;

	(void)state;
	/* FIPS 180-2 and RFC 1321 test vectors */
	menv_hash_mem("abc", 3, &h);
	assert_string_equal(h.sha256,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_string_equal(h.md5, "900150983cd24fb0d6963f7d28e17f72");
	assert_int_equal(h.size, 3);
	menv_hash_mem("", 0, &h);
	assert_string_equal(h.sha256,
	                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_string_equal(h.md5, "d41d8cd98f00b204e9800998ecf8427e");
	assert_int_equal(h.size, 0);
}

static void test_fetch_file_url(void **state)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	struct menv_hashes h;

	(void)state;
	menv_buf_init(&b);
	menv_buf_adds(&b, "prefix:");
	assert_int_equal(menv_fetch_url("file://" ZLIB_CONDA, &b, &err), 0);
	assert_int_equal(b.len, 7 + ZLIB_CONDA_SIZE);
	assert_memory_equal(b.buf, "prefix:", 7);
	menv_hash_mem(b.buf + 7, b.len - 7, &h);
	assert_string_equal(h.sha256, ZLIB_CONDA_SHA256);

	/* a missing file is MENV_ENOTFOUND and leaves the buffer as it was */
	assert_int_equal(menv_fetch_url("file://" CORPUS "/nothing-here.json", &b, &err),
	                 MENV_ENOTFOUND);
	assert_int_equal(b.len, 7 + ZLIB_CONDA_SIZE);
	assert_non_null(strstr(err.msg, "nothing-here.json"));

	/* unsupported schemes are refused as transfer errors */
	assert_int_equal(menv_fetch_url("ftp://127.0.0.1/x", &b, &err), MENV_ENET);
	assert_non_null(strstr(err.msg, "'ftp://127.0.0.1/x'"));
	menv_buf_release(&b);
}

/* menv_fetch_sizes of file:// URLs: the sizes curl's file:// HEAD reports, whether a URL is
 * measured with fstat (folders listed once) or handed to curl (a host, "..", a folder) */
static void test_fetch_sizes_file(void **state)
{
	char *dir = tu_mkdtemp();
	char *pkgs = tu_path("%s/linux-64", dir);
	char *empty = tu_path("%s/empty-1-0.conda", pkgs);
	const char *const urls[] = {
	        "file://" ZLIB_CONDA,                                   /* a file */
	        "file://" ZLIB_DIR "/zlib-1.2.11-h7b6447c_3.tar%2Ebz2", /* %XX decoded */
	        "file://" ZLIB_DIR "/missing-1-0.conda",                /* listed folder lacks it */
	        "file://" ZLIB_DIR "/../linux-64/zlib-1.2.11-h7b6447c_3.conda", /* curl */
	        "file://localhost" ZLIB_CONDA,                                  /* curl */
	        "file:///nonexistent-folder/x-1-0.conda",                       /* no folder */
	        NULL,                                                           /* an empty file */
	        NULL,                                                           /* a folder: curl */
	        "file://" ZLIB_CONDA "#md5", /* curl drops the fragment */
	};
	const int64_t want[] = {
	        ZLIB_CONDA_SIZE, ZLIB_TARBZ2_SIZE, -1, ZLIB_CONDA_SIZE, ZLIB_CONDA_SIZE, -1, -1, -1,
	        ZLIB_CONDA_SIZE};
	const size_t n = sizeof(urls) / sizeof(urls[0]);
	const char *u[sizeof(urls) / sizeof(urls[0])];
	int64_t sizes[sizeof(urls) / sizeof(urls[0])];
	char *e = tu_path("file://%s", empty), *f = tu_path("file://%s", pkgs);
	struct menv_fetch_opts o;

	(void)state;
	tu_mkdirs(pkgs);
	tu_write(empty, "", 0);
	for (size_t i = 0; i < n; i++) {
		u[i] = urls[i] ? urls[i] : i == 6 ? e : f;
		sizes[i] = -1;
	}
	menv_fetch_opts_init(&o);
	menv_fetch_sizes(u, sizes, n, &o);
	for (size_t i = 0; i < n; i++) {
		print_message("%s\n", u[i]);
		assert_int_equal(sizes[i], want[i]);
	}
	tu_rmtree(dir);
	free(e);
	free(f);
	free(empty);
	free(pkgs);
	free(dir);
}

static void test_fetch_repodata_file(void **state)
{
	char *dir = tu_mkdtemp();
	char *base = tu_path("file://%s/", dir); /* trailing slash tolerated */
	char *sub = tu_path("%s/linux-64", dir);
	char *rd = tu_path("%s/repodata.json", sub);
	struct menv_channel ch = {.name = (char *)"local-test", .base_url = base};
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	static const char body[] = "{\"info\":{\"subdir\":\"linux-64\"},\"packages\":{}}";

	(void)state;
	menv_buf_init(&b);
	tu_mkdirs(sub);
	tu_write(rd, body, strlen(body));
	assert_int_equal(menv_fetch_repodata(&ch, "linux-64", &b, &err), 0);
	assert_string_equal(b.buf, body);

	/* noarch missing: like conda, an empty repodata */
	menv_buf_reset(&b);
	assert_int_equal(menv_fetch_repodata(&ch, "noarch", &b, &err), 0);
	assert_string_equal(b.buf, "{}");

	/* a missing platform subdir names the channel, the subdir and the URL */
	menv_buf_reset(&b);
	assert_int_equal(menv_fetch_repodata(&ch, "osx-arm64", &b, &err), MENV_ENOTFOUND);
	assert_int_equal(err.code, MENV_ENOTFOUND);
	char *want = tu_path("channel 'local-test' has no repodata for 'osx-arm64' "
	                     "(file://%s/osx-arm64/repodata.json)",
	                     dir);
	assert_string_equal(err.msg, want);
	assert_int_equal(b.len, 0);

	free(want);
	menv_buf_release(&b);
	tu_rmtree(dir);
	free(rd);
	free(sub);
	free(base);
	free(dir);
}

/* ---- a loopback HTTP server: /ok, /redirect (302 to /ok), /missing (404), /boom (500) ---- */

struct server {
	int fd;
	int port;
	pthread_t tid;
};

static void *serve(void *arg)
{
	struct server *s = arg;

	for (;;) {
		char req[4096], path[256] = "", resp[512];
		size_t got = 0;
		int c = accept(s->fd, NULL, NULL);

		if (c < 0)
			break;
		while (got < sizeof(req) - 1) {
			ssize_t r = read(c, req + got, sizeof(req) - 1 - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			req[got] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[got] = '\0';
		sscanf(req, "GET %255s", path);
		if (!strcmp(path, "/ok"))
			snprintf(resp, sizeof(resp),
			         "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
			         "Connection: close\r\n\r\nhello");
		else if (!strcmp(path, "/redirect"))
			snprintf(resp, sizeof(resp),
			         "HTTP/1.1 302 Found\r\nLocation: /ok\r\n"
			         "Content-Length: 0\r\nConnection: close\r\n\r\n");
		else if (!strcmp(path, "/boom"))
			snprintf(resp, sizeof(resp),
			         "HTTP/1.1 500 Internal Server Error\r\n"
			         "Content-Length: 4\r\nConnection: close\r\n\r\nboom");
		else
			snprintf(resp, sizeof(resp),
			         "HTTP/1.1 404 Not Found\r\n"
			         "Content-Length: 4\r\nConnection: close\r\n\r\nnope");
		if (write(c, resp, strlen(resp)) < 0)
			perror("write");
		close(c);
	}
	return NULL;
}

static int server_setup(void **state)
{
	struct server *s = calloc(1, sizeof(*s));
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);

	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->fd, 16) < 0 || getsockname(s->fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	s->port = ntohs(a.sin_port);
	if (pthread_create(&s->tid, NULL, serve, s) != 0)
		return -1;
	*state = s;
	return 0;
}

static int server_teardown(void **state)
{
	struct server *s = *state;

	shutdown(s->fd, SHUT_RDWR); /* accept() returns an error: the thread ends */
	pthread_join(s->tid, NULL);
	close(s->fd);
	free(s);
	return 0;
}

static void test_fetch_http(void **state)
{
	struct server *s = *state;
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	char url[128];

	menv_buf_init(&b);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", s->port);
	assert_int_equal(menv_fetch_url(url, &b, &err), 0);
	assert_string_equal(b.buf, "hello");

	menv_buf_reset(&b);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/redirect", s->port);
	assert_int_equal(menv_fetch_url(url, &b, &err), 0);
	assert_string_equal(b.buf, "hello");

	menv_buf_reset(&b);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/missing", s->port);
	assert_int_equal(menv_fetch_url(url, &b, &err), MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, url));
	assert_non_null(strstr(err.msg, "404"));
	assert_int_equal(b.len, 0);

	/* a 500 is retried (quickly here), then reported */
	struct menv_fetch_opts fast;
	menv_fetch_opts_init(&fast);
	fast.backoff_factor = 0.01;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/boom", s->port);
	assert_int_equal(menv_fetch_url_opts(url, &fast, &b, &err), MENV_ENET);
	assert_non_null(strstr(err.msg, url));
	assert_non_null(strstr(err.msg, "HTTP 500"));
	assert_int_equal(b.len, 0);

	/* a platform subdir answering 404 over HTTP */
	char base[64];
	snprintf(base, sizeof(base), "http://127.0.0.1:%d/chan", s->port);
	struct menv_channel ch = {.name = (char *)"http-test", .base_url = base};
	assert_int_equal(menv_fetch_repodata(&ch, "linux-64", &b, &err), MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "channel 'http-test' has no repodata for 'linux-64'"));
	assert_int_equal(menv_fetch_repodata(&ch, "noarch", &b, &err), 0);
	assert_string_equal(b.buf, "{}");
	menv_buf_release(&b);
}

static void test_fetch_refused(void **state)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);
	char url[128];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	/* a port that was just free: nothing listens there */
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", ntohs(a.sin_port));
	menv_buf_init(&b);
	struct menv_fetch_opts fast;
	menv_fetch_opts_init(&fast);
	fast.backoff_factor = 0.01;
	assert_int_equal(menv_fetch_url_opts(url, &fast, &b, &err), MENV_ENET);
	assert_int_equal(err.code, MENV_ENET);
	assert_non_null(strstr(err.msg, url));
	menv_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_hash_file_corpus),
	        cmocka_unit_test(test_hash_file_missing),
	        cmocka_unit_test(test_hash_mem),
	        cmocka_unit_test(test_fetch_file_url),
	        cmocka_unit_test(test_fetch_sizes_file),
	        cmocka_unit_test(test_fetch_repodata_file),
	        cmocka_unit_test_setup_teardown(test_fetch_http, server_setup, server_teardown),
	        cmocka_unit_test(test_fetch_refused),
	};
	/* the loopback server must not be reached through a proxy from the environment */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
