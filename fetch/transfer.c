/*
 * transfer.c - the transfer engine: every download of menv (file://, http://, https://) runs
 * here, through one libcurl multi handle per call with at most `threads` transfers at once.
 *
 * A transfer that fails in a way that may pass (timeout, refused or dropped connection, HTTP
 * 408/429/5xx, a body shorter than announced) is retried with exponential backoff; when its
 * sink kept the bytes received so far, the retry asks for the rest with a Range request, and
 * a server that answers 200 instead makes the sink start over. Response headers (ETag,
 * Last-Modified, Cache-Control) are kept for the repodata cache. URLs may hold credentials
 * (user:pass@, /t/<token>): messages only ever show the redacted form.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "internal.h"

#ifndef MENV_VERSION
#define MENV_VERSION "0"
#endif

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

void menv_fetch_opts_init(struct menv_fetch_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threads = 5;
	o->max_retries = 3;
	o->backoff_factor = 1.0;
	o->connect_timeout = 9.15;
	o->read_timeout = 60.0;
	o->ssl_verify = true;
	o->repodata_ttl = 1;
	o->use_zst = true;
	o->repodata_max_bytes = MENV_REPODATA_MAX_BYTES_DEFAULT;
}

void menv_fetch_opts_from_config(struct menv_fetch_opts *o, const struct menv_config *cfg)
{
	menv_fetch_opts_init(o);
	o->threads = cfg->download_threads > 0 ? cfg->download_threads : 1;
	o->max_retries = cfg->remote_max_retries;
	o->backoff_factor = cfg->remote_backoff_factor;
	o->connect_timeout = cfg->remote_connect_timeout_secs;
	o->read_timeout = cfg->remote_read_timeout_secs;
	o->ssl_verify = cfg->ssl_verify;
	o->ca_bundle = cfg->ssl_ca_bundle;
	o->client_cert = cfg->client_ssl_cert;
	o->client_key = cfg->client_ssl_cert_key;
	o->proxy_http = cfg->proxy_http;
	o->proxy_https = cfg->proxy_https;
	o->repodata_ttl = cfg->local_repodata_ttl;
	o->offline = cfg->offline;
	o->use_zst = cfg->repodata_use_zst;
	o->pkgs_dirs = &cfg->pkgs_dirs;
	if (cfg->repodata_max_bytes > 0)
		o->repodata_max_bytes = cfg->repodata_max_bytes;
}

void menv_xfer_init(struct menv_xfer *x, const char *url)
{
	memset(x, 0, sizeof(*x));
	x->url = menv_xstrdup(url);
	x->shown = menv_url_redact(url);
	x->name = menv_url_filename(x->shown);
	x->content_length = -1;
}

void menv_xfer_release(struct menv_xfer *x)
{
	free(x->url);
	free(x->shown);
	free(x->name);
	free(x->etag);
	free(x->last_modified);
	free(x->cache_control);
	memset(x, 0, sizeof(*x));
}

/* ---------------------------------------------------------------------------------------- */
/* One transfer's state                                                                      */

enum { WAITING, RUNNING, FINISHED };

struct job {
	struct menv_xfer *x;
	CURL *h;
	struct curl_slist *hdrs;
	char errbuf[CURL_ERROR_SIZE];
	char range[48];
	int state;
	double not_before;   /* monotonic seconds: start of the next attempt */
	bool ranged;         /* this attempt asked for bytes offset- */
	int64_t range_start; /* the offset asked for */
	bool body_checked;   /* the final response's headers were looked at */
	int sink_errno;      /* the sink failed */
	int range_error;     /* a 206 with an unexpected Content-Range */
	int64_t content_range_start;
	bool scheme_http;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set_header(char **dst, const char *v, size_t n)
{
	while (n > 0 && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	free(*dst);
	*dst = menv_xstrndup(v, n);
}

static bool header_is(const char *line, size_t n, const char *name, const char **val, size_t *vlen)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
		return false;
	*val = line + k + 1;
	*vlen = n - k - 1;
	return true;
}

/* Before the first body byte of the final response: a 200 after a Range request (or after an
 * earlier attempt's bytes) makes the sink start over; a 206 must continue where we are. */
static int check_body_start(struct job *j)
{
	struct menv_xfer *x = j->x;
	long status = 0;

	j->body_checked = true;
	curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &status);
	if (status == 206 && j->ranged) {
		if (j->content_range_start != j->range_start) {
			j->range_error = 1;
			return -1;
		}
		x->resumed_at = j->range_start;
		return 0;
	}
	if (x->offset > 0) {
		if (!x->restart) {
			j->range_error = 1;
			return -1;
		}
		if (x->restart(x->ud) < 0) {
			j->sink_errno = errno ? errno : EIO;
			return -1;
		}
		x->offset = 0;
	}
	return 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
	struct job *j = ud;
	struct menv_xfer *x = j->x;
	size_t n = size * nmemb;
	const char *v;
	size_t vl;

	if (n >= 5 && !strncmp(data, "HTTP/", 5)) {
		/* a new response (after a redirect or a 100): forget the previous headers */
		free(x->etag), x->etag = NULL;
		free(x->last_modified), x->last_modified = NULL;
		free(x->cache_control), x->cache_control = NULL;
		j->content_range_start = -1;
	} else if (header_is(data, n, "ETag", &v, &vl)) {
		set_header(&x->etag, v, vl);
	} else if (header_is(data, n, "Last-Modified", &v, &vl)) {
		set_header(&x->last_modified, v, vl);
	} else if (header_is(data, n, "Cache-Control", &v, &vl)) {
		set_header(&x->cache_control, v, vl);
	} else if (header_is(data, n, "Content-Range", &v, &vl)) {
		char tmp[96];
		long long a;
		snprintf(tmp, sizeof(tmp), "%.*s", (int)(vl < 95 ? vl : 95), v);
		if (sscanf(tmp, " bytes %lld-", &a) == 1)
			j->content_range_start = a;
	}
	return n;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct job *j = ud;
	struct menv_xfer *x = j->x;
	size_t len = size * nmemb;

	if (!j->body_checked && check_body_start(j) < 0)
		return 0;
	if (!x->sink)
		return len; /* a HEAD request keeps nothing */
	if (len && x->sink(x->ud, data, len) < 0) {
		j->sink_errno = errno ? errno : EIO;
		return 0;
	}
	x->offset += (int64_t)len;
	return len;
}

/* Percent-decodes s[0..n) as curl decodes a URL's userinfo ("%40" is '@'; a '%' without two
 * hex digits stays). Caller frees. */
static char *pct_decode(const char *s, size_t n)
{
	char *out = menv_xmalloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char hex[3] = {s[i + 1], s[i + 2], '\0'};
			*o++ = (char)strtol(hex, NULL, 16);
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* Gives curl `url` without its userinfo, and the userinfo as CURLOPT_USERNAME/PASSWORD
 * (percent-decoded; cleared when the URL has none). The LAST '@' of the authority ends the
 * userinfo, as Python's urlparse (conda) and browsers take it, so a password holding a raw
 * '@' works: curl's own parser stopped at the first one ("bad URL"). The password's copy is
 * wiped before it is freed; curl keeps its own. */
static void set_url(CURL *c, const char *url)
{
	const char *s = strstr(url, "://"), *auth, *end, *at = NULL, *colon;

	curl_easy_setopt(c, CURLOPT_USERNAME, NULL);
	curl_easy_setopt(c, CURLOPT_PASSWORD, NULL);
	if (!s) {
		curl_easy_setopt(c, CURLOPT_URL, url);
		return;
	}
	auth = s + 3;
	end = auth + strcspn(auth, "/?#");
	for (const char *q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	if (!at) {
		curl_easy_setopt(c, CURLOPT_URL, url);
		return;
	}
	colon = memchr(auth, ':', (size_t)(at - auth));
	char *user = pct_decode(auth, (size_t)((colon ? colon : at) - auth));
	char *pass = colon ? pct_decode(colon + 1, (size_t)(at - colon - 1)) : NULL;
	char *bare = menv_xasprintf("%.*s%s", (int)(auth - url), url, at + 1);
	curl_easy_setopt(c, CURLOPT_URL, bare);
	curl_easy_setopt(c, CURLOPT_USERNAME, user);
	if (pass) {
		curl_easy_setopt(c, CURLOPT_PASSWORD, pass);
		explicit_bzero(pass, strlen(pass));
	}
	free(bare);
	free(user);
	free(pass);
}

static void setup_handle(struct job *j, const struct menv_fetch_opts *o)
{
	CURL *c = j->h;
	struct menv_xfer *x = j->x;
	const char *netrc = getenv("NETRC");

	set_url(c, x->url);
	curl_easy_setopt(c, CURLOPT_PRIVATE, j);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, j->errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	                 (long)(o->connect_timeout > 0 ? o->connect_timeout * 1000 : 9150));
	/* a stalled transfer (no byte for read_timeout seconds) fails, then is retried */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
	                 (long)(o->read_timeout >= 1 ? ceil(o->read_timeout) : 1));
	curl_easy_setopt(c, CURLOPT_USERAGENT, "menv/" MENV_VERSION);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "file,http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS,
	                 (long)(CURLPROTO_FILE | CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, j);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, j);
	curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
	if (x->head)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (netrc && *netrc)
		curl_easy_setopt(c, CURLOPT_NETRC_FILE, netrc);
	if (!o->ssl_verify) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (o->ca_bundle) {
		size_t n = strlen(o->ca_bundle);
		if (n && o->ca_bundle[n - 1] == '/')
			curl_easy_setopt(c, CURLOPT_CAPATH, o->ca_bundle);
		else
			curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_bundle);
	}
	if (o->client_cert)
		curl_easy_setopt(c, CURLOPT_SSLCERT, o->client_cert);
	if (o->client_key)
		curl_easy_setopt(c, CURLOPT_SSLKEY, o->client_key);
	if (!strncmp(x->url, "http://", 7) && o->proxy_http)
		curl_easy_setopt(c, CURLOPT_PROXY, o->proxy_http);
	if (!strncmp(x->url, "https://", 8) && o->proxy_https)
		curl_easy_setopt(c, CURLOPT_PROXY, o->proxy_https);
	j->scheme_http = !strncmp(x->url, "http://", 7) || !strncmp(x->url, "https://", 8);
}

/* Prepares the next attempt: Range when bytes are kept, conditional headers. */
static void prepare_attempt(struct job *j)
{
	struct menv_xfer *x = j->x;
	char *h;

	curl_slist_free_all(j->hdrs);
	j->hdrs = NULL;
	set_url(j->h, x->url); /* a `done` callback may have moved it */
	j->scheme_http = !strncmp(x->url, "http://", 7) || !strncmp(x->url, "https://", 8);
	j->ranged = x->offset > 0 && j->scheme_http;
	j->range_start = x->offset;
	j->body_checked = false;
	j->sink_errno = 0;
	j->range_error = 0;
	j->content_range_start = -1;
	j->errbuf[0] = '\0';
	if (j->ranged) {
		snprintf(j->range, sizeof(j->range), "%lld-", (long long)x->offset);
		curl_easy_setopt(j->h, CURLOPT_RANGE, j->range);
	} else {
		curl_easy_setopt(j->h, CURLOPT_RANGE, NULL);
	}
	if (x->if_none_match && !j->ranged) {
		h = menv_xasprintf("If-None-Match: %s", x->if_none_match);
		j->hdrs = curl_slist_append(j->hdrs, h);
		free(h);
	}
	if (x->if_modified_since && !j->ranged) {
		h = menv_xasprintf("If-Modified-Since: %s", x->if_modified_since);
		j->hdrs = curl_slist_append(j->hdrs, h);
		free(h);
	}
	if (x->authorization)
		j->hdrs = curl_slist_append(j->hdrs, x->authorization);
	curl_easy_setopt(j->h, CURLOPT_HTTPHEADER, j->hdrs);
	x->attempts++;
}

static bool retryable(CURLcode res, long status)
{
	switch (res) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_COULDNT_CONNECT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR: return true;
	case CURLE_HTTP_RETURNED_ERROR: return status == 408 || status == 429 || status >= 500;
	default: return false;
	}
}

/* curl's text of a failed attempt, safe to print: the proxy it names ("Unsupported proxy
 * syntax in 'user:password@host'") as menv_proxy_redact shows it, and any URL's credentials
 * (menv_text_redact). Caller frees. */
static char *why_text(const struct job *j, const struct menv_fetch_opts *o, CURLcode res)
{
	const char *raw = j->errbuf[0] ? j->errbuf : curl_easy_strerror(res);
	const char *proxy = !strncmp(j->x->url, "http://", 7)    ? o->proxy_http
	                    : !strncmp(j->x->url, "https://", 8) ? o->proxy_https
	                                                         : NULL;
	const char *at = proxy && *proxy ? strstr(raw, proxy) : NULL;
	char *text;
	if (at) {
		char *shown = menv_proxy_redact(proxy);
		text = menv_xasprintf("%.*s%s%s", (int)(at - raw), raw, shown, at + strlen(proxy));
		free(shown);
	} else {
		text = menv_xstrdup(raw);
	}
	char *out = menv_text_redact(text);
	free(text);
	return out;
}

/* Turns a finished attempt into x->rc/x->err. */
static void classify(struct job *j, const struct menv_fetch_opts *o, CURLcode res, long status)
{
	struct menv_xfer *x = j->x;
	const char *u = x->shown;

	x->status = status;
	if (res == CURLE_OK) {
		x->rc = 0;
		return;
	}
	char *why_owned = why_text(j, o, res);
	const char *why = why_owned;
	if (res == CURLE_WRITE_ERROR && j->sink_errno) {
		errno = j->sink_errno;
		x->rc = menv_error_sys(&x->err, MENV_EIO, "cannot store the download of '%s'", u);
	} else if (res == CURLE_HTTP_RETURNED_ERROR && (status == 404 || status == 410)) {
		x->rc = menv_error_set(&x->err, MENV_ENOTFOUND, "'%s' not found (HTTP %ld)", u,
		                       status);
	} else if (res == CURLE_HTTP_RETURNED_ERROR && (status == 401 || status == 403)) {
		x->rc = menv_error_set(&x->err, MENV_ENET,
		                       "cannot download '%s': HTTP %ld (check "
		                       "the channel's token or credentials, or ~/.netrc)",
		                       u, status);
	} else if (res == CURLE_HTTP_RETURNED_ERROR) {
		x->rc = menv_error_set(&x->err, MENV_ENET, "cannot download '%s': HTTP %ld", u,
		                       status);
	} else if (res == CURLE_FILE_COULDNT_READ_FILE) {
		x->rc = menv_error_set(&x->err, MENV_ENOTFOUND, "'%s' not found", u);
	} else if (res == CURLE_PEER_FAILED_VERIFICATION || res == CURLE_SSL_CACERT_BADFILE) {
		x->rc = menv_error_set(&x->err, MENV_ENET,
		                       "cannot download '%s': TLS certificate "
		                       "not trusted (%s); set ssl_verify to the CA bundle to trust",
		                       u, why);
	} else if (res == CURLE_COULDNT_RESOLVE_HOST || res == CURLE_COULDNT_RESOLVE_PROXY) {
		x->rc = menv_error_set(&x->err, MENV_ENET,
		                       "cannot download '%s': host not found "
		                       "(%s)",
		                       u, why);
	} else if (res == CURLE_OPERATION_TIMEDOUT) {
		x->rc = menv_error_set(&x->err, MENV_ENET,
		                       "cannot download '%s': timed out after "
		                       "%d attempts (%s)",
		                       u, x->attempts, why);
	} else if (res == CURLE_WRITE_ERROR && j->range_error) {
		x->rc = menv_error_set(&x->err, MENV_ENET,
		                       "cannot download '%s': the server "
		                       "answered a range request with other bytes",
		                       u);
	} else if (x->attempts > 1) {
		x->rc = menv_error_set(&x->err, MENV_ENET, "cannot download '%s' (%d attempts): %s",
		                       u, x->attempts, why);
	} else {
		x->rc = menv_error_set(&x->err, MENV_ENET, "cannot download '%s': %s", u, why);
	}
	free(why_owned);
}

/* ---------------------------------------------------------------------------------------- */
/* The engine                                                                                */

/* A transfer's whole size in bytes for progress: the expected size, else (no size known
 * beforehand, e.g. an explicit lock) the running response's Content-Length or a finished
 * transfer's bytes; 0 while unknown. */
static int64_t progress_size(const struct job *j)
{
	curl_off_t cl = -1;
	if (j->x->expected)
		return j->x->expected;
	if (j->state == FINISHED)
		return j->x->offset;
	if (j->state == RUNNING && j->h &&
	    curl_easy_getinfo(j->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK && cl > 0)
		return (j->ranged ? j->range_start : 0) + (int64_t)cl;
	return 0;
}

static void report_progress(const struct menv_fetch_opts *o, const struct job *jobs, size_t n,
                            size_t finished)
{
	int64_t done = 0, total = 0;
	struct menv_fetch_item *items = menv_xcalloc(n + 1, sizeof(*items));
	size_t nitems = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t size = progress_size(&jobs[i]);
		done += jobs[i].x->offset;
		total += size;
		if (jobs[i].state == RUNNING) {
			items[nitems++] = (struct menv_fetch_item){
			        .name = jobs[i].x->name ? jobs[i].x->name : "",
			        .done = jobs[i].x->offset,
			        .total = size,
			};
		}
	}
	o->progress(o->progress_ud, done, total, finished, n, items, nitems);
	free(items);
}

/* Puts a job that ran back in line, to start again at `not_before` (monotonic seconds):
 * `again` (indexes into jobs, ascending) gets its index in order. The jobs that ran and
 * wait again are few (retries, restarts), the others are taken in order from a cursor, so
 * starting the next job never scans the finished ones. */
static void wait_again(struct job *j, double not_before, const struct job *jobs, size_t *again,
                       size_t *nagain)
{
	size_t i = (size_t)(j - jobs), k = *nagain;

	j->state = WAITING;
	j->not_before = not_before;
	while (k > 0 && again[k - 1] > i)
		k--;
	memmove(again + k + 1, again + k, (*nagain - k) * sizeof(*again));
	again[k] = i;
	(*nagain)++;
}

int menv_xfer_run(struct menv_xfer *const *xs, size_t n, const struct menv_fetch_opts *o_in,
                  volatile int *stop, bool all_or_nothing, struct menv_error *err)
{
	struct menv_fetch_opts dflt;
	const struct menv_fetch_opts *o = o_in;
	struct job *jobs = NULL;
	CURLM *m = NULL;
	size_t running = 0, finished = 0, first_fail = (size_t)-1;
	size_t fresh = 0;     /* jobs[fresh..n) never started yet */
	size_t *again = NULL; /* indexes of the jobs waiting to run again, ascending */
	size_t nagain = 0;
	int limit, rc = 0;
	bool aborting = false;
	double last_progress = 0;
	const char *abort_why = NULL;
	int abort_code = MENV_EINTR;

	if (!o) {
		menv_fetch_opts_init(&dflt);
		o = &dflt;
	}
	if (n == 0)
		return 0;
	pthread_once(&curl_once, curl_init);
	m = curl_init_rc == CURLE_OK ? curl_multi_init() : NULL;
	if (!m) {
		/* libcurl cannot be loaded or set up: every transfer ends with that error (callers
		 * that read only x->rc and x->err, as the repodata rounds do, see it too) */
		struct menv_error e = {0};
		rc = curl_init_rc != CURLE_OK
		             ? menv_error_set(&e, MENV_ENET, "cannot initialise libcurl: %s",
		                              curl_easy_strerror(curl_init_rc))
		             : menv_error_set(&e, MENV_ENET, "cannot initialise libcurl");
		for (size_t i = 0; i < n; i++)
			xs[i]->rc = rc, xs[i]->attempts = 0, xs[i]->err = e;
		if (err)
			*err = e;
		return rc;
	}
	limit = o->threads > 0 ? o->threads : 1;
	jobs = menv_xcalloc(n, sizeof(*jobs));
	again = menv_xcalloc(n, sizeof(*again));
	curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)limit);
	curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)limit * 2);
	for (size_t i = 0; i < n; i++) {
		jobs[i].x = xs[i];
		jobs[i].state = WAITING;
		xs[i]->rc = 0;
		xs[i]->attempts = 0;
		xs[i]->err.code = 0, xs[i]->err.msg[0] = '\0';
	}

	while (finished < n) {
		double t = now_s(), next_wake = t + 0.1;
		CURLMsg *msg;
		int left;

		if (!aborting && o->cancel && *o->cancel) {
			aborting = true, abort_code = MENV_EINTR, abort_why = "interrupted";
		} else if (!aborting && stop && *stop) {
			aborting = true, abort_code = MENV_EINTR, abort_why = "cancelled";
		}
		if (aborting) {
			for (size_t i = 0; i < n; i++) {
				struct job *j = &jobs[i];
				if (j->state == FINISHED)
					continue;
				if (j->state == RUNNING)
					curl_multi_remove_handle(m, j->h), running--;
				j->state = FINISHED;
				finished++;
				j->x->rc = menv_error_set(&j->x->err, abort_code,
				                          "download of '%s' %s", j->x->shown,
				                          abort_why);
			}
			break;
		}
		/* start what may start: the waiting jobs that ran before first (lowest index
		 * first, as their order in `xs`), then the next ones never started */
		while (running < (size_t)limit) {
			struct job *j = NULL;
			size_t k = nagain;
			for (size_t a = 0; a < nagain; a++) {
				struct job *w = &jobs[again[a]];
				if (w->not_before <= t) {
					k = a;
					break;
				}
				if (w->not_before < next_wake)
					next_wake = w->not_before;
			}
			if (k < nagain) {
				j = &jobs[again[k]];
				memmove(again + k, again + k + 1,
				        (nagain - k - 1) * sizeof(*again));
				nagain--;
			} else if (fresh < n) {
				j = &jobs[fresh++];
			} else {
				break;
			}
			if (!j->h) {
				j->h = curl_easy_init();
				if (!j->h) {
					rc = menv_error_set(err, MENV_ENET,
					                    "cannot initialise libcurl "
					                    "for '%s'",
					                    j->x->shown);
					goto out;
				}
				setup_handle(j, o);
			}
			prepare_attempt(j);
			curl_multi_add_handle(m, j->h);
			j->state = RUNNING;
			running++;
		}
		int still = 0;
		curl_multi_perform(m, &still);
		while ((msg = curl_multi_info_read(m, &left))) {
			struct job *j = NULL;
			CURLcode res;
			long status = 0;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&j);
			res = msg->data.result;
			curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &status);
			curl_off_t cl = -1;
			if (curl_easy_getinfo(j->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) ==
			    CURLE_OK)
				j->x->content_length = cl;
			curl_multi_remove_handle(m, j->h);
			running--;
			/* a ranged request the server could not satisfy: start over at once */
			if (res == CURLE_HTTP_RETURNED_ERROR && status == 416 && j->ranged &&
			    j->x->restart && j->x->restart(j->x->ud) == 0) {
				j->x->offset = 0;
				wait_again(j, 0, jobs, again, &nagain);
				continue;
			}
			if (res != CURLE_OK && retryable(res, status) && !j->sink_errno &&
			    j->x->attempts <= o->max_retries) {
				double wait =
				        o->backoff_factor * pow(2.0, (double)(j->x->attempts - 1));
				/* bytes already kept are only worth keeping when a retry can
				 * continue after them */
				if (j->x->offset > 0 && !j->x->restart && !j->scheme_http)
					j->x->offset = 0;
				wait_again(j, now_s() + (wait > 0 ? wait : 0), jobs, again,
				           &nagain);
				continue;
			}
			classify(j, o, res, status);
			if (j->x->done && j->x->done(j->x->ud, j->x) == 1) {
				/* run again from byte 0 */
				if (j->x->restart)
					j->x->restart(j->x->ud);
				j->x->offset = 0;
				j->x->rc = 0;
				wait_again(j, 0, jobs, again, &nagain);
				continue;
			}
			j->state = FINISHED;
			finished++;
			/* its handle is not needed any more: n finished transfers hold no memory */
			curl_easy_cleanup(j->h);
			j->h = NULL;
			curl_slist_free_all(j->hdrs);
			j->hdrs = NULL;
			if (j->x->rc && first_fail == (size_t)-1) {
				first_fail = (size_t)(j - jobs);
				if (all_or_nothing) {
					aborting = true;
					abort_code = MENV_EINTR;
					abort_why = "cancelled after another failure";
				}
			}
		}
		if (o->progress && now_s() - last_progress >= 0.1) {
			report_progress(o, jobs, n, finished);
			last_progress = now_s();
		}
		if (finished >= n || aborting)
			continue;
		/* a slot is free and a job may start now: no waiting */
		bool ready = running < (size_t)limit && fresh < n;
		for (size_t a = 0; a < nagain && running < (size_t)limit && !ready; a++)
			ready = jobs[again[a]].not_before <= now_s();
		if (ready)
			continue;
		double wait_s = next_wake - now_s();
		int timeout_ms = wait_s <= 0 ? 0 : (int)(wait_s * 1000) + 1;
		if (timeout_ms > 100)
			timeout_ms = 100;
		if (running)
			curl_multi_poll(m, NULL, 0, timeout_ms, NULL);
		else if (timeout_ms > 0) {
			struct timespec ts = {0, (long)timeout_ms * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	if (o->progress)
		report_progress(o, jobs, n, finished);
	if (first_fail != (size_t)-1) {
		rc = xs[first_fail]->rc;
		if (err)
			*err = xs[first_fail]->err;
	} else {
		for (size_t i = 0; i < n && !rc; i++) {
			if (xs[i]->rc) {
				rc = xs[i]->rc;
				if (err)
					*err = xs[i]->err;
			}
		}
	}
out:
	for (size_t i = 0; jobs && i < n; i++) {
		if (jobs[i].h) {
			if (jobs[i].state == RUNNING)
				curl_multi_remove_handle(m, jobs[i].h);
			curl_easy_cleanup(jobs[i].h);
		}
		curl_slist_free_all(jobs[i].hdrs);
	}
	free(jobs);
	free(again);
	if (m)
		curl_multi_cleanup(m);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Simple transfers                                                                          */

int menv_fetch_stream(const char *url, menv_fetch_sink sink, void *ud, volatile int *cancel,
                      struct menv_error *err)
{
	struct menv_fetch_opts o;
	struct menv_xfer x, *xp = &x;
	int rc;

	menv_fetch_opts_init(&o);
	o.cancel = cancel;
	o.max_retries = 0; /* the sink cannot start over */
	menv_xfer_init(&x, url);
	x.sink = sink;
	x.ud = ud;
	rc = menv_xfer_run(&xp, 1, &o, NULL, true, err);
	menv_xfer_release(&x);
	return rc;
}

struct bufsink {
	struct menv_buf *b;
	size_t start;
};

static int buf_sink(void *ud, const void *data, size_t len)
{
	struct bufsink *s = ud;
	menv_buf_add(s->b, data, len);
	return 0;
}

static int buf_restart(void *ud)
{
	struct bufsink *s = ud;
	s->b->len = s->start;
	s->b->buf[s->start] = '\0';
	return 0;
}

int menv_fetch_url_opts(const char *url, const struct menv_fetch_opts *o, struct menv_buf *out,
                        struct menv_error *err)
{
	struct bufsink s = {out, 0};
	struct menv_xfer x, *xp = &x;
	int rc;

	menv_buf_grow(out, 0);
	s.start = out->len;
	menv_xfer_init(&x, url);
	x.sink = buf_sink;
	x.ud = &s;
	x.restart = buf_restart;
	rc = menv_xfer_run(&xp, 1, o, NULL, true, err);
	if (rc)
		buf_restart(&s);
	menv_xfer_release(&x);
	return rc;
}

int menv_fetch_url(const char *url, struct menv_buf *out, struct menv_error *err)
{
	return menv_fetch_url_opts(url, NULL, out, err);
}

char *menv_fetch_subdir_file_url(const struct menv_channel *ch, const char *subdir,
                                 const char *file, bool cred)
{
	char *sub, *url;

	if (ch->location && (ch->scheme || ch->cname)) {
		sub = menv_channel_subdir_url(ch, subdir, cred);
	} else {
		const char *base = ch->base_url ? ch->base_url : "";
		size_t blen = strlen(base);
		while (blen > 0 && base[blen - 1] == '/')
			blen--;
		sub = menv_xasprintf("%.*s/%s", (int)blen, base, subdir);
	}
	url = file ? menv_xasprintf("%s/%s", sub, file) : menv_xstrdup(sub);
	free(sub);
	return url;
}
