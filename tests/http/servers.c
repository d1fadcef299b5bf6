/*
 * servers.c - nginx control and the fault-injecting server of the HTTP tests (servers.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "servers.h"

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static int free_port(void)
{
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static bool can_connect(int port)
{
	struct sockaddr_in a = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

const char *ngx_binary(void)
{
	static const char *const cands[] = {"/usr/sbin/nginx", "/usr/local/sbin/nginx",
	                                    "/usr/bin/nginx"};
	for (size_t i = 0; i < sizeof(cands) / sizeof(*cands); i++)
		if (access(cands[i], X_OK) == 0)
			return cands[i];
	return NULL;
}

int ngx_start(struct nginx *n, const char *dir, const char *root, const char *extra,
              const char *cert, const char *key)
{
	const char *bin = ngx_binary();
	char *conf, *text, *tmp;
	FILE *f;

	memset(n, 0, sizeof(*n));
	if (!bin)
		return -1;
	n->dir = strdup(dir);
	n->log = xasprintf("%s/access.log", dir);
	n->ssl = cert != NULL;
	tmp = xasprintf("%s/tmp", dir);
	mkdir(dir, 0755);
	mkdir(tmp, 0755);
	for (int attempt = 0; attempt < 5; attempt++) {
		n->port = free_port();
		conf = xasprintf("%s/nginx.conf", dir);
		text = xasprintf("daemon off;\nmaster_process off;\nworker_processes 1;\n"
		                 "error_log %s/error.log warn;\npid %s/nginx.pid;\n"
		                 "events { worker_connections 128; }\n"
		                 "http {\n"
		                 "  log_format menv '$request_method $uri $status \"$http_range\" "
		                 "\"$http_if_none_match\"';\n"
		                 "  access_log %s menv;\n"
		                 "  client_body_temp_path %s/body; proxy_temp_path %s/proxy;\n"
		                 "  fastcgi_temp_path %s/fcgi; uwsgi_temp_path %s/uwsgi; "
		                 "scgi_temp_path %s/scgi;\n"
		                 "  types { application/json json; application/octet-stream conda "
		                 "bz2 zst; }\n"
		                 "  default_type application/octet-stream;\n"
		                 "  keepalive_requests 10000;\n"
		                 "  server {\n"
		                 "    listen 127.0.0.1:%d%s;\n"
		                 "    server_name localhost;\n"
		                 "    root %s;\n"
		                 "%s%s%s%s%s"
		                 "%s\n"
		                 "  }\n"
		                 "}\n",
		                 dir, dir, n->log, tmp, tmp, tmp, tmp, tmp, n->port,
		                 cert ? " ssl" : "", root, cert ? "    ssl_certificate " : "",
		                 cert ? cert : "", cert ? ";\n    ssl_certificate_key " : "",
		                 cert ? key : "", cert ? ";\n" : "", extra ? extra : "");
		f = fopen(conf, "w");
		if (!f)
			return -1;
		fputs(text, f);
		fclose(f);
		free(text);
		n->pid = fork();
		if (n->pid == 0) {
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0);
			dup2(null, 1);
			execl(bin, bin, "-p", dir, "-c", conf, (char *)NULL);
			_exit(127);
		}
		free(conf);
		for (int i = 0; i < 100; i++) {
			int st;
			if (can_connect(n->port)) {
				free(tmp);
				return 0;
			}
			if (waitpid(n->pid, &st, WNOHANG) == n->pid)
				break; /* died: port taken? try another */
			sleep_ms(50);
		}
		kill(n->pid, SIGKILL);
		waitpid(n->pid, NULL, 0);
	}
	free(tmp);
	n->pid = 0;
	return -1;
}

void ngx_stop(struct nginx *n)
{
	if (n->pid > 0) {
		kill(n->pid, SIGTERM);
		waitpid(n->pid, NULL, 0);
	}
	free(n->dir);
	free(n->log);
	memset(n, 0, sizeof(*n));
}

static int count_once(const struct nginx *n, const char *needle)
{
	FILE *f = fopen(n->log, "r");
	char line[2048];
	int c = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!needle || strstr(line, needle))
			c++;
	fclose(f);
	return c;
}

/* nginx writes a request's log line after the client has its response: count until two
 * readings 30 ms apart agree (at most ~0.5 s) */
int ngx_count(const struct nginx *n, const char *needle)
{
	int c = count_once(n, needle);
	for (int i = 0; i < 16; i++) {
		usleep(30000);
		int again = count_once(n, needle);
		if (again == c)
			break;
		c = again;
	}
	return c;
}

/* ---------------------------------------------------------------------------------------- */
/* The fault server                                                                          */

static int send_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static int count_prefix_locked(struct faultsrv *s, const char *path)
{
	int c = 0;
	for (int i = 0; i < s->nreq; i++)
		c += !strcmp(s->paths[i], path);
	return c;
}

static void reply_status(int c, int code, const char *text)
{
	char *h = xasprintf("HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	                    code, text);
	send_all(c, h, strlen(h));
	free(h);
}

static void handle(struct faultsrv *s, int c)
{
	char req[4096];
	size_t got = 0;
	char path[256] = "", range[64] = "";
	const char *behaviours[] = {"/ok/",   "/flaky500/", "/cut/", "/stall/",
	                            "/liar/", "/wrong/",    "/slow/"};
	const char *b = NULL, *file;
	char *fpath = NULL, *data = NULL, *hdr = NULL;
	long long start = 0;
	size_t len = 0;
	int nth;
	FILE *f;

	while (got < sizeof(req) - 1) {
		ssize_t r = recv(c, req + got, sizeof(req) - 1 - got, 0);
		if (r <= 0)
			return;
		got += (size_t)r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	sscanf(req, "GET %255s", path);
	const char *rh = strcasestr(req, "\r\nRange: bytes=");
	if (rh)
		sscanf(rh + 15, "%63[0-9-]", range);
	pthread_mutex_lock(&s->lock);
	if (s->nreq < FS_MAX_REQ) {
		snprintf(s->paths[s->nreq], sizeof(s->paths[0]), "%s", path);
		snprintf(s->ranges[s->nreq], sizeof(s->ranges[0]), "%s", range);
		s->nreq++;
	}
	nth = count_prefix_locked(s, path); /* 1 for the first request of this path */
	pthread_mutex_unlock(&s->lock);

	for (size_t i = 0; i < sizeof(behaviours) / sizeof(*behaviours); i++)
		if (!strncmp(path, behaviours[i], strlen(behaviours[i])))
			b = behaviours[i];
	if (!b) {
		reply_status(c, 404, "Not Found");
		return;
	}
	file = path + strlen(b);
	fpath = xasprintf("%s/%s", s->root, file);
	f = fopen(fpath, "rb");
	if (!f) {
		reply_status(c, 404, "Not Found");
		goto out;
	}
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc(len + 1);
	if (fread(data, 1, len, f) != len)
		len = 0;
	fclose(f);

	if (!strcmp(b, "/flaky500/") && nth == 1) {
		reply_status(c, 500, "Internal Server Error");
		goto out;
	}
	if (!strcmp(b, "/wrong/") && len)
		data[len / 2] ^= 0x5a;
	if (range[0] && strcmp(b, "/liar/")) {
		start = atoll(range);
		if (start >= (long long)len) {
			reply_status(c, 416, "Range Not Satisfiable");
			goto out;
		}
		hdr = xasprintf("HTTP/1.1 206 Partial Content\r\nContent-Length: %zu\r\n"
		                "Content-Range: bytes %lld-%zu/%zu\r\nConnection: close\r\n\r\n",
		                len - (size_t)start, start, len - 1, len);
	} else {
		hdr = xasprintf("HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nAccept-Ranges: bytes\r\n"
		                "Connection: close\r\n\r\n",
		                !strcmp(b, "/liar/") ? len + 100 : len);
		start = 0;
	}
	if (send_all(c, hdr, strlen(hdr)) < 0)
		goto out;
	if (!strcmp(b, "/cut/") && nth == 1) {
		send_all(c, data, len / 2);
		goto out;
	}
	if (!strcmp(b, "/stall/") && nth == 1) {
		send_all(c, data, len < 16 ? len : 16);
		for (int waited = 0; waited < s->stall_ms && !s->stopping; waited += 50)
			sleep_ms(50);
		goto out;
	}
	if (!strcmp(b, "/slow/")) {
		for (size_t off = (size_t)start; off < len && !s->stopping; off += 1024) {
			size_t n = len - off < 1024 ? len - off : 1024;
			if (send_all(c, data + off, n) < 0)
				break;
			sleep_ms(50);
		}
		goto out;
	}
	send_all(c, data + start, len - (size_t)start);
out:
	free(hdr);
	free(data);
	free(fpath);
}

struct conn {
	struct faultsrv *s;
	int fd;
};

static void *conn_main(void *arg)
{
	struct conn *cn = arg;
	handle(cn->s, cn->fd);
	shutdown(cn->fd, SHUT_RDWR);
	close(cn->fd);
	free(cn);
	return NULL;
}

static void *serve(void *arg)
{
	struct faultsrv *s = arg;

	for (;;) {
		int c = accept(s->fd, NULL, NULL);
		pthread_t t;
		if (c < 0) {
			if (s->stopping)
				break;
			if (errno == EINTR)
				continue;
			break;
		}
		struct conn *cn = malloc(sizeof(*cn));
		cn->s = s;
		cn->fd = c;
		if (pthread_create(&t, NULL, conn_main, cn) == 0)
			pthread_detach(t);
		else
			conn_main(cn);
	}
	return NULL;
}

int fs_start(struct faultsrv *s, const char *root)
{
	struct sockaddr_in a = {0};
	socklen_t len = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->root = root;
	s->stall_ms = 3000;
	pthread_mutex_init(&s->lock, NULL);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->fd, 64) < 0 || getsockname(s->fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->tid, NULL, serve, s) == 0 ? 0 : -1;
}

void fs_stop(struct faultsrv *s)
{
	s->stopping = 1;
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->tid, NULL);
	close(s->fd);
	sleep_ms(100); /* let detached connection threads notice */
	pthread_mutex_destroy(&s->lock);
}

int fs_count(struct faultsrv *s, const char *needle)
{
	int c = 0;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->nreq; i++)
		c += !needle || strstr(s->paths[i], needle) != NULL;
	pthread_mutex_unlock(&s->lock);
	return c;
}
