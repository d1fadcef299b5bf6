/*
 * transfer.c - channel transfers with libcurl's easy interface: file://, http:// and https://
 * URLs, redirects followed (to http/https only), HTTP errors turned into MENV_ENOTFOUND (404,
 * 410, a missing file) or MENV_ENET. One easy handle per transfer, so worker threads of the
 * package cache can each run their own; curl_global_init runs once (pthread_once).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

struct stream {
	menv_fetch_sink sink;
	void *ud;
	volatile int *cancel;
	int sink_errno; /* non-zero when the sink failed */
};

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
	struct stream *s = ud;
	size_t len = size * nmemb;

	if (s->cancel && *s->cancel)
		return 0;
	if (len && s->sink(s->ud, data, len) < 0) {
		s->sink_errno = errno ? errno : EIO;
		return 0;
	}
	return len;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct stream *s = ud;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return s->cancel && *s->cancel ? 1 : 0;
}

int menv_fetch_stream(const char *url, menv_fetch_sink sink, void *ud, volatile int *cancel,
		      struct menv_error *err)
{
	struct stream s = { sink, ud, cancel, 0 };
	char errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode res;
	CURL *c = NULL;
	int rc = 0;

	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return menv_error_set(err, MENV_ENET, "cannot initialise libcurl: %s",
				      curl_easy_strerror(curl_init_rc));
	c = curl_easy_init();
	if (!c)
		return menv_error_set(err, MENV_ENET, "cannot initialise libcurl for '%s'", url);

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	/* a stalled transfer (under 1 byte/s for a minute) fails instead of hanging */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "menv/" MENV_VERSION);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "file,http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_FILE | CURLPROTO_HTTP |
						      CURLPROTO_HTTPS));
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &s);

	res = curl_easy_perform(c);
	if (res == CURLE_OK)
		goto out;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if ((cancel && *cancel) || res == CURLE_ABORTED_BY_CALLBACK) {
		rc = menv_error_set(err, MENV_EINTR, "download of '%s' interrupted", url);
	} else if (res == CURLE_WRITE_ERROR && s.sink_errno) {
		errno = s.sink_errno;
		rc = menv_error_sys(err, MENV_EIO, "cannot store the download of '%s'", url);
	} else if (res == CURLE_HTTP_RETURNED_ERROR && (status == 404 || status == 410)) {
		rc = menv_error_set(err, MENV_ENOTFOUND, "'%s' not found (HTTP %ld)", url, status);
	} else if (res == CURLE_HTTP_RETURNED_ERROR) {
		rc = menv_error_set(err, MENV_ENET, "cannot download '%s': HTTP %ld", url, status);
	} else if (res == CURLE_FILE_COULDNT_READ_FILE) {
		rc = menv_error_set(err, MENV_ENOTFOUND, "'%s' not found", url);
	} else {
		rc = menv_error_set(err, MENV_ENET, "cannot download '%s': %s", url,
				    errbuf[0] ? errbuf : curl_easy_strerror(res));
	}
out:
	curl_easy_cleanup(c);
	return rc;
}

static int buf_sink(void *ud, const void *data, size_t len)
{
	menv_buf_add(ud, data, len);
	return 0;
}

int menv_fetch_url(const char *url, struct menv_buf *out, struct menv_error *err)
{
	size_t start = out->len;
	int rc;

	menv_buf_grow(out, 0);
	rc = menv_fetch_stream(url, buf_sink, out, NULL, err);
	if (rc) {
		out->len = start;
		out->buf[start] = '\0';
	}
	return rc;
}

int menv_fetch_repodata(const struct menv_channel *ch, const char *subdir, struct menv_buf *out,
			struct menv_error *err)
{
	const char *base = ch->base_url ? ch->base_url : "";
	size_t blen = strlen(base);
	char *url;
	int rc;

	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	url = menv_xasprintf("%.*s/%s/repodata.json", (int)blen, base, subdir);
	rc = menv_fetch_url(url, out, err);
	if (rc == MENV_ENOTFOUND && !strcmp(subdir, "noarch")) {
		menv_buf_adds(out, "{}");
		rc = 0;
		if (err)
			err->code = 0, err->sys_errno = 0, err->msg[0] = '\0';
	} else if (rc == MENV_ENOTFOUND) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
				    "channel '%s' has no repodata for '%s' (%s)",
				    ch->name ? ch->name : base, subdir, url);
	}
	free(url);
	return rc;
}
