/*
 * oci.c - OCI registries as conda channels: `oci://HOST[:PORT]/PATH` read and written as the
 * proposed CEP "OCI Registries as conda Channels" (conda/ceps, layout v1) lays them out, over
 * the OCI Distribution API v2.
 *
 * A subdir's repodata is the artifact `PATH/<subdir>/mrepodata.json:latest` (a JSON layer,
 * optionally a .zst one); a package is `PATH/<subdir>/c<name>:<version>-<build>` (version and
 * build with `_` -> `__`, `+` -> `_P`, `!` -> `_N`; names over 64 and tags over 128
 * characters hashed as `h<sha256>`, both at once) whose package layer has the media type
 * application/vnd.conda.package.v2 (.conda) or .v1 (.tar.bz2). This file does the small
 * requests (manifests, tokens, uploads) itself, one at a time; blobs are downloaded by the
 * transfer engine with the Authorization header found here, so that they share the cache,
 * retries, Range resumes and progress of HTTP channels.
 *
 * Authentication follows the registry's challenge: a 401 with `WWW-Authenticate: Bearer
 * realm=..,service=..` asks the realm for a token of scope `repository:<repo>:<actions>`
 * (anonymous, or with the URL's user:password / ~/.netrc as Basic credentials), one with
 * `Basic` gets those credentials. Tokens are kept per repository and actions for the session.
 * The registry is reached over https; a loopback host (127.0.0.0/8, localhost, [::1]) that
 * does not speak TLS is reached over plain http, as docker does for local registries.
 * Credentials go to a token realm only over https or on the registry's own host.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <openssl/evp.h>

#include "internal.h"

#define OCI_MANIFEST   "application/vnd.oci.image.manifest.v1+json"
#define OCI_EMPTY      "application/vnd.oci.empty.v1+json"
#define OCI_MAX_TOKENS 64

struct token {
	char *scope;  /* "repo:actions" */
	char *header; /* "Authorization: ..." */
};

struct menv_oci {
	char *registry; /* "http[s]://host[:port]" */
	char *shown;    /* "oci://host[:port]" */
	char *userpwd;  /* "user:password" from the URL, or NULL */
	char *host;     /* "host[:port]" */
	const struct menv_fetch_opts *o;
	struct token tokens[OCI_MAX_TOKENS];
	size_t ntokens;
};

bool menv_oci_is_url(const char *url)
{
	return url && !strncmp(url, "oci://", 6);
}

const char *menv_oci_path(const char *url)
{
	const char *p = menv_oci_is_url(url) ? url + 6 : url;
	const char *slash = strchr(p, '/');
	return slash ? slash + 1 : "";
}

/* "host[:port]" names this machine: localhost, 127.0.0.0/8 or [::1]. */
static bool is_loopback(const char *hostport)
{
	struct in_addr a;
	char host[256];
	size_t n;

	if (!strncmp(hostport, "[::1]", 5) && (hostport[5] == '\0' || hostport[5] == ':'))
		return true;
	n = strcspn(hostport, ":");
	if (n >= sizeof(host))
		return false;
	memcpy(host, hostport, n);
	host[n] = '\0';
	if (!strcasecmp(host, "localhost"))
		return true;
	return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* Whether the registry answers a TLS handshake (any certificate: trust is checked later, by
 * the real requests). */
static bool speaks_tls(const struct menv_oci *s)
{
	char *url = menv_xasprintf("%s/v2/", s->registry);
	CURL *c = curl_easy_init();
	CURLcode res;

	if (!c) {
		free(url);
		return false;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	res = curl_easy_perform(c);
	curl_easy_cleanup(c);
	free(url);
	return res == CURLE_OK;
}

int menv_oci_new(const char *url, const struct menv_fetch_opts *o, struct menv_oci **out,
                 struct menv_error *err)
{
	const char *p, *end, *at;
	struct menv_oci *s;
	char *hostport;
	bool loopback;

	*out = NULL;
	if (!menv_oci_is_url(url))
		return menv_error_set(err, MENV_EPARSE, "'%s' is not an oci:// URL", url);
	p = url + 6;
	end = p + strcspn(p, "/");
	at = NULL; /* the LAST '@' ends the userinfo: a password may hold '@' */
	for (const char *q = p; q < end; q++)
		if (*q == '@')
			at = q;
	hostport = menv_xstrndup(at ? at + 1 : p, (size_t)(end - (at ? at + 1 : p)));
	if (!hostport[0]) {
		free(hostport);
		return menv_error_set(err, MENV_EPARSE, "no registry host in '%s'", url);
	}
	s = menv_xcalloc(1, sizeof(*s));
	s->o = o;
	if (at)
		s->userpwd = menv_xstrndup(p, (size_t)(at - p));
	loopback = is_loopback(hostport);
	s->registry = menv_xasprintf("https://%s", hostport);
	s->shown = menv_xasprintf("oci://%s", hostport);
	s->host = hostport;
	if (loopback && !speaks_tls(s))
		memmove(s->registry + 4, s->registry + 5, strlen(s->registry + 5) + 1);
	*out = s;
	return 0;
}

void menv_oci_free(struct menv_oci *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ntokens; i++)
		free(s->tokens[i].scope), free(s->tokens[i].header);
	free(s->registry);
	free(s->shown);
	free(s->userpwd);
	free(s->host);
	free(s);
}

/* ---------------------------------------------------------------------------------------- */
/* Names (the CEP's encoding)                                                                */

static char *hashed(const char *s)
{
	struct menv_hashes h;
	menv_hash_mem(s, strlen(s), &h);
	return menv_xasprintf("h%s", h.sha256);
}

static void encode_part(struct menv_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '_')
			menv_buf_adds(b, "__");
		else if (*s == '+')
			menv_buf_adds(b, "_P");
		else if (*s == '!')
			menv_buf_adds(b, "_N");
		else
			menv_buf_add(b, s, 1);
	}
}

void menv_oci_package_names(const char *name, const char *version, const char *build, char **repo,
                            char **tag)
{
	struct menv_buf t = MENV_BUF_INIT;
	char *r = menv_xasprintf("c%s", name);

	menv_buf_init(&t);
	encode_part(&t, version);
	menv_buf_adds(&t, "-");
	encode_part(&t, build);
	if (strlen(r) > 64 || t.len > 128) {
		char *hr = hashed(r), *ht = hashed(t.buf);
		free(r);
		r = hr;
		menv_buf_reset(&t);
		menv_buf_adds(&t, ht);
		free(ht);
	}
	*repo = r;
	*tag = menv_xstrdup(t.buf);
	menv_buf_release(&t);
}

static void encode_part_v0(struct menv_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '+')
			menv_buf_adds(b, "__p__");
		else if (*s == '!')
			menv_buf_adds(b, "__e__");
		else if (*s == '=')
			menv_buf_adds(b, "__eq__");
		else
			menv_buf_add(b, s, 1);
	}
}

void menv_oci_package_names_v0(const char *name, const char *version, const char *build,
                               char **repo, char **tag)
{
	struct menv_buf t = MENV_BUF_INIT;

	menv_buf_init(&t);
	encode_part_v0(&t, version);
	menv_buf_adds(&t, "-");
	encode_part_v0(&t, build);
	*repo = menv_xasprintf("%s%s", name[0] == '_' ? "zzz" : "", name);
	*tag = menv_xstrdup(t.buf);
	menv_buf_release(&t);
}

/* ---------------------------------------------------------------------------------------- */
/* Requests                                                                                  */

struct resp {
	long status;
	struct menv_buf body;
	char *www_auth, *location, *content_type;
};

static void resp_release(struct resp *r)
{
	menv_buf_release(&r->body);
	free(r->www_auth);
	free(r->location);
	free(r->content_type);
	memset(r, 0, sizeof(*r));
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct resp *r = ud;
	size_t n = size * nmemb;
	if (r->body.len + n > 64 * 1024 * 1024)
		return 0; /* no manifest or token is that large */
	menv_buf_add(&r->body, data, n);
	return n;
}

static void keep_header(char **dst, const char *v, size_t n)
{
	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	free(*dst);
	*dst = menv_xstrndup(v, n);
}

static size_t on_hdr(char *data, size_t size, size_t nmemb, void *ud)
{
	struct resp *r = ud;
	size_t n = size * nmemb;
	static const struct {
		const char *name;
		size_t off;
	} keep[] = {
	        {"www-authenticate:", offsetof(struct resp, www_auth)},
	        {"location:", offsetof(struct resp, location)},
	        {"content-type:", offsetof(struct resp, content_type)},
	};

	if (n >= 5 && !strncmp(data, "HTTP/", 5)) {
		free(r->www_auth), r->www_auth = NULL;
		free(r->location), r->location = NULL;
		free(r->content_type), r->content_type = NULL;
	}
	for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++) {
		size_t k = strlen(keep[i].name);
		if (n > k && !strncasecmp(data, keep[i].name, k))
			keep_header((char **)((char *)r + keep[i].off), data + k, n - k);
	}
	return n;
}

/* One request, retried on connection failures and 5xx/429 as the transfer engine does. */
static int http(struct menv_oci *s, const char *method, const char *url, const char *auth,
                const char *const *hdrs, const void *body, size_t len, struct resp *r,
                struct menv_error *err)
{
	int tries = s->o ? s->o->max_retries : 3;
	double backoff = s->o ? s->o->backoff_factor : 1.0;
	const char *netrc = getenv("NETRC");
	char *shown = menv_url_redact(url);
	int rc = 0;

	for (int attempt = 0;; attempt++) {
		CURL *c = curl_easy_init();
		struct curl_slist *h = NULL;
		char ebuf[CURL_ERROR_SIZE] = "";
		CURLcode res;

		if (!c) {
			rc = menv_error_set(err, MENV_ENET, "cannot initialise libcurl");
			break;
		}
		resp_release(r);
		menv_buf_init(&r->body);
		for (size_t i = 0; hdrs && hdrs[i]; i++)
			h = curl_slist_append(h, hdrs[i]);
		if (auth)
			h = curl_slist_append(h, auth);
		h = curl_slist_append(h, "Expect:");
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(c, CURLOPT_NOBODY, !strcmp(method, "HEAD") ? 1L : 0L);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_USERAGENT, "menv");
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_hdr);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
		                 (long)(s->o && s->o->connect_timeout > 0
		                                ? s->o->connect_timeout * 1000
		                                : 9150));
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
		                 (long)(s->o && s->o->read_timeout > 0 ? s->o->read_timeout * 4000
		                                                       : 240000));
#if LIBCURL_VERSION_NUM >= 0x075500
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
		curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
		if (netrc && *netrc)
			curl_easy_setopt(c, CURLOPT_NETRC_FILE, netrc);
		if (s->o && !s->o->ssl_verify) {
			curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
			curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
		} else if (s->o && s->o->ca_bundle) {
			curl_easy_setopt(c, CURLOPT_CAINFO, s->o->ca_bundle);
		}
		if (body) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		}
		res = curl_easy_perform(c);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		bool again = res != CURLE_OK || r->status == 429 || r->status >= 500;
		if (again && attempt < tries) {
			double wait = backoff * (double)(1 << attempt);
			struct timespec ts = {(time_t)wait,
			                      (long)((wait - (double)(time_t)wait) * 1e9)};
			nanosleep(&ts, NULL);
			continue;
		}
		if (res != CURLE_OK)
			rc = menv_error_set(err, MENV_ENET, "cannot reach '%s': %s", shown,
			                    ebuf[0] ? ebuf : curl_easy_strerror(res));
		break;
	}
	free(shown);
	return rc;
}

/* The value of `key` in a challenge's parameters (key="value"), or NULL. Caller frees. */
static char *challenge_param(const char *ch, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = ch; (p = strstr(p, key)); p += k) {
		if ((p != ch && p[-1] != ' ' && p[-1] != ',') || p[k] != '=')
			continue;
		const char *v = p + k + 1;
		if (*v == '"') {
			const char *e = strchr(v + 1, '"');
			return e ? menv_xstrndup(v + 1, (size_t)(e - v - 1)) : NULL;
		}
		return menv_xstrndup(v, strcspn(v, ", "));
	}
	return NULL;
}

static char *basic_header(const char *userpwd)
{
	size_t n = strlen(userpwd);
	unsigned char *b = menv_xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock(b, (const unsigned char *)userpwd, (int)n);
	char *h = menv_xasprintf("Authorization: Basic %s", b);
	free(b);
	return h;
}

/* Answers a 401 challenge for `scope`: a new Authorization header in *out (owned), or NULL
 * when the challenge cannot be met. Errors: MENV_ENET naming the channel. */
static int meet_challenge(struct menv_oci *s, const char *www, const char *scope, char **out,
                          struct menv_error *err)
{
	*out = NULL;
	if (!www)
		return 0;
	if (!strncasecmp(www, "Basic", 5)) {
		if (s->userpwd)
			*out = basic_header(s->userpwd);
		return 0;
	}
	if (strncasecmp(www, "Bearer", 6))
		return 0;
	char *realm = challenge_param(www, "realm"), *service = challenge_param(www, "service");
	struct resp r = {0};
	json_t *j = NULL;
	int rc = 0;

	if (!realm || strncmp(realm, "http", 4)) {
		rc = menv_error_set(err, MENV_ENET, "'%s' asked for a token without a realm",
		                    s->shown);
		goto out;
	}
	CURL *c = curl_easy_init();
	char *esc_scope = curl_easy_escape(c, scope, 0);
	char *esc_service = service ? curl_easy_escape(c, service, 0) : NULL;
	char *url =
	        menv_xasprintf("%s%cscope=%s%s%s", realm, strchr(realm, '?') ? '&' : '?', esc_scope,
	                       esc_service ? "&service=" : "", esc_service ? esc_service : "");
	curl_free(esc_scope);
	curl_free(esc_service);
	curl_easy_cleanup(c);
	/* credentials only to a realm over https or on the registry's own host */
	char *realm_host = menv_xstrndup(realm + strcspn(realm, "/") + 2,
	                                 strcspn(realm + strcspn(realm, "/") + 2, "/?"));
	bool trusted = !strncmp(realm, "https://", 8) || !strcmp(realm_host, s->host) ||
	               (is_loopback(realm_host) && is_loopback(s->host));
	char *auth = s->userpwd && trusted ? basic_header(s->userpwd) : NULL;
	free(realm_host);
	rc = http(s, "GET", url, auth, NULL, NULL, 0, &r, err);
	free(auth);
	free(url);
	if (rc)
		goto out;
	if (r.status != 200) {
		rc = menv_error_set(err, MENV_ENET,
		                    "'%s': the token service answered HTTP %ld for '%s'%s",
		                    s->shown, r.status, scope,
		                    r.status == 401 || r.status == 403
		                            ? " (check the credentials in the URL or ~/.netrc)"
		                            : "");
		goto out;
	}
	j = json_loadb(r.body.buf, r.body.len, 0, NULL);
	const char *tok = json_string_value(json_object_get(j, "token"));
	if (!tok)
		tok = json_string_value(json_object_get(j, "access_token"));
	if (!tok || !*tok) {
		rc = menv_error_set(err, MENV_ENET, "'%s': the token service answered no token",
		                    s->shown);
		goto out;
	}
	*out = menv_xasprintf("Authorization: Bearer %s", tok);
out:
	json_decref(j);
	resp_release(&r);
	free(realm);
	free(service);
	return rc;
}

static const char *cached_auth(struct menv_oci *s, const char *scope)
{
	for (size_t i = 0; i < s->ntokens; i++)
		if (!strcmp(s->tokens[i].scope, scope))
			return s->tokens[i].header;
	return NULL;
}

static const char *cache_auth(struct menv_oci *s, const char *scope, char *header)
{
	if (s->ntokens == OCI_MAX_TOKENS) {
		free(s->tokens[0].scope), free(s->tokens[0].header);
		memmove(s->tokens, s->tokens + 1, sizeof(*s->tokens) * (OCI_MAX_TOKENS - 1));
		s->ntokens--;
	}
	s->tokens[s->ntokens].scope = menv_xstrdup(scope);
	s->tokens[s->ntokens].header = header;
	return s->tokens[s->ntokens++].header;
}

/* A request to `repo` with the authorization its scope needs (`actions`: "pull" or
 * "pull,push"), meeting one 401 challenge. The response's status is left for the caller. */
static int request(struct menv_oci *s, const char *repo, const char *actions, const char *method,
                   const char *url, const char *const *hdrs, const void *body, size_t len,
                   struct resp *r, struct menv_error *err)
{
	char *scope = menv_xasprintf("repository:%s:%s", repo, actions);
	const char *auth = cached_auth(s, scope);
	int rc;

	rc = http(s, method, url, auth, hdrs, body, len, r, err);
	if (!rc && r->status == 401) {
		char *h = NULL;
		rc = meet_challenge(s, r->www_auth, scope, &h, err);
		if (!rc && h) {
			auth = cache_auth(s, scope, h);
			rc = http(s, method, url, auth, hdrs, body, len, r, err);
		}
	}
	free(scope);
	return rc;
}

/* One line for a status that is not the one expected. */
static int status_error(struct menv_oci *s, const char *what, long status, struct menv_error *err)
{
	const char *hint = status == 401 || status == 403
	                           ? " (check the credentials in the URL or ~/.netrc)"
	                           : "";
	return menv_error_set(err, status == 404 ? MENV_ENOTFOUND : MENV_ENET,
	                      "oci registry '%s' answered HTTP %ld for '%s'%s", s->shown, status,
	                      what, hint);
}

const char *menv_oci_registry(const struct menv_oci *s)
{
	return s->registry;
}

int menv_oci_manifest(struct menv_oci *s, const char *repo, const char *tag, json_t **out,
                      struct menv_error *err)
{
	static const char *const hdrs[] = {"Accept: " OCI_MANIFEST, NULL};
	char *url = menv_xasprintf("%s/v2/%s/manifests/%s", s->registry, repo, tag);
	char *what = menv_xasprintf("%s:%s", repo, tag);
	struct resp r = {0};
	json_t *j = NULL;
	int rc;

	*out = NULL;
	rc = request(s, repo, "pull", "GET", url, hdrs, NULL, 0, &r, err);
	if (rc)
		goto out;
	if (r.status != 200) {
		rc = status_error(s, what, r.status, err);
		goto out;
	}
	j = json_loadb(r.body.buf, r.body.len, 0, NULL);
	if (!json_is_object(j) || !json_is_array(json_object_get(j, "layers"))) {
		rc = menv_error_set(err, MENV_EPARSE,
		                    "oci registry '%s' answered something that is not an OCI "
		                    "manifest for '%s'",
		                    s->shown, what);
		goto out;
	}
	*out = j;
	j = NULL;
out:
	json_decref(j);
	resp_release(&r);
	free(url);
	free(what);
	return rc;
}

int menv_oci_layer(struct menv_oci *s, const json_t *manifest, const char *repo,
                   const char *media_type, char **blob_url, char **digest, int64_t *size)
{
	json_t *layers = json_object_get(manifest, "layers"), *l;
	size_t i;

	json_array_foreach(layers, i, l)
	{
		const char *mt = json_string_value(json_object_get(l, "mediaType"));
		const char *d = json_string_value(json_object_get(l, "digest"));
		if (!mt || !d || strcmp(mt, media_type) || strncmp(d, "sha256:", 7) ||
		    strlen(d) != 71 || strspn(d + 7, "0123456789abcdef") != 64)
			continue;
		*blob_url = menv_xasprintf("%s/v2/%s/blobs/%s", s->registry, repo, d);
		*digest = menv_xstrdup(d + 7);
		*size = (int64_t)json_integer_value(json_object_get(l, "size"));
		return 0;
	}
	return MENV_ENOTFOUND;
}

const char *menv_oci_auth(struct menv_oci *s, const char *repo)
{
	char *scope = menv_xasprintf("repository:%s:pull", repo);
	const char *a = cached_auth(s, scope);
	free(scope);
	return a;
}

/* ---------------------------------------------------------------------------------------- */
/* Push                                                                                      */

int menv_oci_push_blob(struct menv_oci *s, const char *repo, const void *data, size_t len,
                       char digest[72], struct menv_error *err)
{
	static const char *const octet[] = {"Content-Type: application/octet-stream", NULL};
	struct menv_hashes h;
	struct resp r = {0};
	char *url = NULL, *put = NULL;
	int rc;

	menv_hash_mem(data, len, &h);
	snprintf(digest, 72, "sha256:%s", h.sha256);
	url = menv_xasprintf("%s/v2/%s/blobs/%s", s->registry, repo, digest);
	rc = request(s, repo, "pull,push", "HEAD", url, NULL, NULL, 0, &r, err);
	if (rc || r.status == 200)
		goto out; /* there already */
	free(url);
	url = menv_xasprintf("%s/v2/%s/blobs/uploads/", s->registry, repo);
	rc = request(s, repo, "pull,push", "POST", url, NULL, "", 0, &r, err);
	if (rc)
		goto out;
	if (r.status != 202 || !r.location) {
		rc = status_error(s, repo, r.status, err);
		goto out;
	}
	if (!strncmp(r.location, "http", 4))
		put = menv_xasprintf("%s%cdigest=%s", r.location,
		                     strchr(r.location, '?') ? '&' : '?', digest);
	else
		put = menv_xasprintf("%s%s%cdigest=%s", s->registry, r.location,
		                     strchr(r.location, '?') ? '&' : '?', digest);
	/* an upload URL on another host (or port, or scheme) gets the blob, never the
	 * registry's credentials or token */
	size_t rl = strlen(s->registry);
	if (!strncmp(put, s->registry, rl) && (put[rl] == '/' || put[rl] == '?'))
		rc = request(s, repo, "pull,push", "PUT", put, octet, data, len, &r, err);
	else
		rc = http(s, "PUT", put, NULL, octet, data, len, &r, err);
	if (!rc && r.status != 201)
		rc = status_error(s, repo, r.status, err);
out:
	resp_release(&r);
	free(url);
	free(put);
	return rc;
}

int menv_oci_push_manifest(struct menv_oci *s, const char *repo, const char *tag,
                           const json_t *manifest, struct menv_error *err)
{
	static const char *const ct[] = {"Content-Type: " OCI_MANIFEST, NULL};
	char *text = json_dumps(manifest, JSON_COMPACT | JSON_SORT_KEYS);
	char *url = menv_xasprintf("%s/v2/%s/manifests/%s", s->registry, repo, tag);
	struct resp r = {0};
	int rc;

	rc = request(s, repo, "pull,push", "PUT", url, ct, text, strlen(text), &r, err);
	if (!rc && r.status != 201) {
		char *what = menv_xasprintf("%s:%s", repo, tag);
		rc = status_error(s, what, r.status, err);
		free(what);
	}
	resp_release(&r);
	free(url);
	free(text);
	return rc;
}

json_t *menv_oci_manifest_new(const char *config_digest)
{
	return json_pack("{s:i, s:s, s:{s:s, s:s, s:i}, s:[], s:{s:s}}", "schemaVersion", 2,
	                 "mediaType", OCI_MANIFEST, "config", "mediaType", OCI_EMPTY, "digest",
	                 config_digest, "size", 2, "layers", "annotations", "org.conda.oci.schema",
	                 "1");
}

void menv_oci_manifest_add_layer(json_t *manifest, const char *media_type, const char *digest,
                                 size_t size, const char *title)
{
	json_t *l = json_pack("{s:s, s:s, s:I}", "mediaType", media_type, "digest", digest, "size",
	                      (json_int_t)size);
	if (title)
		json_object_set_new(l, "annotations",
		                    json_pack("{s:s}", "org.opencontainers.image.title", title));
	json_array_append_new(json_object_get(manifest, "layers"), l);
}

/* ---------------------------------------------------------------------------------------- */
/* Packages                                                                                  */

int menv_oci_package_blob(const char *url, const char *name, const char *version, const char *build,
                          const struct menv_fetch_opts *o, char **blob_url, char **auth,
                          char **digest, struct menv_error *err)
{
	size_t fl;
	const char *fn = menv_url_basename(url, &fl); /* no query or fragment */
	const char *slash = fn > url && fn[-1] == '/' ? fn - 1 : NULL;
	bool v1 = fl > 8 && !memcmp(fn + fl - 8, ".tar.bz2", 8);
	struct menv_oci *s = NULL;
	json_t *m = NULL;
	char *dir = NULL, *prepo = NULL, *tag = NULL, *repo = NULL, *what = NULL;
	int64_t size;
	int rc;

	*blob_url = *auth = *digest = NULL;
	if (!slash || !name || !version || !build)
		return menv_error_set(err, MENV_EPARSE, "no package in the oci URL '%s'", url);
	dir = menv_xstrndup(url, (size_t)(slash - url));
	menv_oci_package_names(name, version, build, &prepo, &tag);
	repo = menv_xasprintf("%s/%s", menv_oci_path(dir), prepo);
	what = menv_xasprintf("%s:%s", repo, tag);
	rc = menv_oci_new(url, o, &s, err);
	if (!rc)
		rc = menv_oci_manifest(s, repo, tag, &m, err);
	if (rc == MENV_ENOTFOUND) {
		/* the layout of conda-oci-mirror, rattler and mamba (the CEP's "v0") */
		struct menv_error e0;
		free(prepo), free(tag), free(repo), free(what);
		menv_oci_package_names_v0(name, version, build, &prepo, &tag);
		repo = menv_xasprintf("%s/%s", menv_oci_path(dir), prepo);
		what = menv_xasprintf("%s:%s", repo, tag);
		if (menv_oci_manifest(s, repo, tag, &m, &e0) == 0)
			rc = 0;
	}
	if (rc)
		goto out;
	rc = menv_oci_layer(s, m, repo,
	                    v1 ? "application/vnd.conda.package.v1"
	                       : "application/vnd.conda.package.v2",
	                    blob_url, digest, &size);
	if (rc) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "oci registry '%s': '%s' has no %s package layer", s->shown,
		                    what, v1 ? ".tar.bz2" : ".conda");
		goto out;
	}
	if (menv_oci_auth(s, repo))
		*auth = menv_xstrdup(menv_oci_auth(s, repo));
out:
	json_decref(m);
	menv_oci_free(s);
	free(dir);
	free(prepo);
	free(tag);
	free(repo);
	free(what);
	return rc;
}
