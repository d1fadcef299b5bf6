/*
 * lazylib.c - libcurl and libarchive, loaded on first use. menv does not link them: every
 * process would otherwise pay at start for loading and relocating them and the ~36 libraries
 * Debian's builds pull (GnuTLS, LDAP, Kerberos, libxml2, ICU, ...), about 45 ms of CPU here,
 * while most commands (a dry run from a local channel and a warm cache, list, activate, ...)
 * never transfer nor extract. Each function below has the name and prototype of the real one
 * (the headers check them), so the rest of fetch/ calls libcurl and libarchive as usual; the
 * first call opens the library by its soname (dlopen: the executable's RUNPATH applies, then
 * the system's search) and resolves every symbol once, thread-safely (pthread_once).
 *
 * When a library cannot be opened or lacks a symbol, the entry points fail as the real ones
 * do when out of resources (curl_global_init: CURLE_FAILED_INIT; curl_easy_init,
 * curl_multi_init, archive_read_new, archive_write_disk_new: NULL; curl_slist_append: NULL;
 * curl_easy_strerror and archive_error_string: the loader's message, e.g. "libcurl.so.4: cannot
 * open shared object file"). The others take a handle that only an entry point gives.
 */
#define CURL_DISABLE_TYPECHECK 1
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#if LIBCURL_VERSION_MAJOR < 7 || LIBCURL_VERSION_MAJOR > 8
#error "libcurl's soname is libcurl.so.4 for its versions 7 and 8 only"
#endif
#if ARCHIVE_VERSION_NUMBER < 3000000 || ARCHIVE_VERSION_NUMBER >= 4000000
#error "libarchive's soname is libarchive.so.13 for its versions 3.x only"
#endif

/* F(return type, name, (parameters), (arguments)) of the functions that return a value; V of
 * those that return nothing. The variadic ones are written out below. */
#define CURL_FUNCS(F, V)                                                                           \
	F(CURLcode, curl_global_init, (long flags), (flags))                                       \
	F(CURL *, curl_easy_init, (void), ())                                                      \
	F(CURLcode, curl_easy_perform, (CURL * c), (c))                                            \
	V(curl_easy_cleanup, (CURL * c), (c))                                                      \
	F(char *, curl_easy_escape, (CURL * c, const char *s, int n), (c, s, n))                   \
	V(curl_free, (void *p), (p))                                                               \
	F(struct curl_slist *, curl_slist_append, (struct curl_slist * l, const char *s), (l, s))  \
	V(curl_slist_free_all, (struct curl_slist * l), (l))                                       \
	F(CURLM *, curl_multi_init, (void), ())                                                    \
	F(CURLMcode, curl_multi_add_handle, (CURLM * m, CURL * c), (m, c))                         \
	F(CURLMcode, curl_multi_remove_handle, (CURLM * m, CURL * c), (m, c))                      \
	F(CURLMcode, curl_multi_perform, (CURLM * m, int *running), (m, running))                  \
	F(CURLMcode, curl_multi_cleanup, (CURLM * m), (m))                                         \
	F(CURLMsg *, curl_multi_info_read, (CURLM * m, int *left), (m, left))                      \
	F(CURLMcode, curl_multi_poll,                                                              \
	  (CURLM * m, struct curl_waitfd fds[], unsigned int nfds, int timeout_ms, int *ret),      \
	  (m, fds, nfds, timeout_ms, ret))

#define ARCHIVE_FUNCS(F, V)                                                                        \
	F(struct archive *, archive_read_new, (void), ())                                          \
	F(struct archive *, archive_write_disk_new, (void), ())                                    \
	F(int, archive_read_free, (struct archive * a), (a))                                       \
	F(int, archive_read_support_format_tar, (struct archive * a), (a))                         \
	F(int, archive_read_support_format_zip_seekable, (struct archive * a), (a))                \
	F(int, archive_read_support_filter_zstd, (struct archive * a), (a))                        \
	F(int, archive_read_support_filter_all, (struct archive * a), (a))                         \
	F(int, archive_read_open_fd, (struct archive * a, int fd, size_t block), (a, fd, block))   \
	F(int, archive_read_open,                                                                  \
	  (struct archive * a, void *data, archive_open_callback *o, archive_read_callback *r,     \
	   archive_close_callback *c),                                                             \
	  (a, data, o, r, c))                                                                      \
	F(int, archive_read_next_header, (struct archive * a, struct archive_entry * *e), (a, e))  \
	F(la_ssize_t, archive_read_data, (struct archive * a, void *buf, size_t n), (a, buf, n))   \
	F(int, archive_read_data_block,                                                            \
	  (struct archive * a, const void **buf, size_t *n, la_int64_t *off), (a, buf, n, off))    \
	F(int, archive_errno, (struct archive * a), (a))                                           \
	F(int, archive_write_header, (struct archive * a, struct archive_entry * e), (a, e))       \
	F(int, archive_write_free, (struct archive * a), (a))                                      \
	F(int, archive_write_finish_entry, (struct archive * a), (a))                              \
	F(int, archive_write_disk_set_options, (struct archive * a, int flags), (a, flags))        \
	F(la_ssize_t, archive_write_data_block,                                                    \
	  (struct archive * a, const void *buf, size_t n, la_int64_t off), (a, buf, n, off))       \
	F(int, archive_write_close, (struct archive * a), (a))                                     \
	F(__LA_MODE_T, archive_entry_filetype, (struct archive_entry * e), (e))                    \
	F(__LA_MODE_T, archive_entry_perm, (struct archive_entry * e), (e))                        \
	F(la_int64_t, archive_entry_size, (struct archive_entry * e), (e))                         \
	F(const char *, archive_entry_pathname, (struct archive_entry * e), (e))                   \
	F(const char *, archive_entry_pathname_utf8, (struct archive_entry * e), (e))              \
	F(const char *, archive_entry_symlink, (struct archive_entry * e), (e))                    \
	F(const char *, archive_entry_symlink_utf8, (struct archive_entry * e), (e))               \
	F(const char *, archive_entry_hardlink, (struct archive_entry * e), (e))                   \
	F(const char *, archive_entry_hardlink_utf8, (struct archive_entry * e), (e))              \
	V(archive_entry_set_pathname, (struct archive_entry * e, const char *s), (e, s))           \
	V(archive_entry_set_symlink, (struct archive_entry * e, const char *s), (e, s))            \
	V(archive_entry_set_hardlink, (struct archive_entry * e, const char *s), (e, s))           \
	V(archive_entry_set_size, (struct archive_entry * e, la_int64_t n), (e, n))                \
	V(archive_entry_set_perm, (struct archive_entry * e, __LA_MODE_T m), (e, m))               \
	V(archive_entry_set_filetype, (struct archive_entry * e, unsigned int t), (e, t))

#define FIELD(ret, name, params, args) ret(*name) params;
#define VFIELD(name, params, args)     void(*name) params;

static struct {
	CURL_FUNCS(FIELD, VFIELD)
	CURLcode (*curl_easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*curl_easy_getinfo)(CURL *, CURLINFO, ...);
	CURLMcode (*curl_multi_setopt)(CURLM *, CURLMoption, ...);
	const char *(*curl_easy_strerror)(CURLcode);
} cu;

static struct {
	ARCHIVE_FUNCS(FIELD, VFIELD)
	const char *(*archive_error_string)(struct archive *);
	void (*archive_set_error)(struct archive *, int, const char *, ...);
} ar;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT, ar_once = PTHREAD_ONCE_INIT;
static bool cu_ok, ar_ok;
static char lazy_err[256]; /* the first failure's message */
static pthread_mutex_t err_mu = PTHREAD_MUTEX_INITIALIZER;

static void *open_lib(const char *soname)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *e = dlerror();
		pthread_mutex_lock(&err_mu);
		if (!lazy_err[0])
			snprintf(lazy_err, sizeof lazy_err, "%s", e ? e : soname);
		pthread_mutex_unlock(&err_mu);
	}
	return h;
}

/* Resolves `name` in `h` into *slot; false (and the message kept) when it is missing. */
static bool sym(void *h, const char *name, void *slot)
{
	void *p = dlsym(h, name);

	if (!p) {
		pthread_mutex_lock(&err_mu);
		if (!lazy_err[0])
			snprintf(lazy_err, sizeof lazy_err, "%s", dlerror());
		pthread_mutex_unlock(&err_mu);
		return false;
	}
	memcpy(slot, &p, sizeof p); /* object to function pointer, as POSIX allows for dlsym */
	return true;
}

#define RESOLVE(ret, name, params, args) ok = sym(h, #name, &L.name) && ok;
#define VRESOLVE(name, params, args)     ok = sym(h, #name, &L.name) && ok;

static void cu_load(void)
{
	void *h = open_lib("libcurl.so.4");
	bool ok = h != NULL;

	if (!h)
		return;
#define L cu
	CURL_FUNCS(RESOLVE, VRESOLVE)
	ok = sym(h, "curl_easy_setopt", &cu.curl_easy_setopt) && ok;
	ok = sym(h, "curl_easy_getinfo", &cu.curl_easy_getinfo) && ok;
	ok = sym(h, "curl_multi_setopt", &cu.curl_multi_setopt) && ok;
	ok = sym(h, "curl_easy_strerror", &cu.curl_easy_strerror) && ok;
#undef L
	cu_ok = ok;
}

static void ar_load(void)
{
	void *h = open_lib("libarchive.so.13");
	bool ok = h != NULL;

	if (!h)
		return;
#define L ar
	ARCHIVE_FUNCS(RESOLVE, VRESOLVE)
	ok = sym(h, "archive_error_string", &ar.archive_error_string) && ok;
	ok = sym(h, "archive_set_error", &ar.archive_set_error) && ok;
#undef L
	ar_ok = ok;
}

static bool cu_ready(void)
{
	pthread_once(&cu_once, cu_load);
	return cu_ok;
}

static bool ar_ready(void)
{
	pthread_once(&ar_once, ar_load);
	return ar_ok;
}

/* A value-returning wrapper: the entry points' failure value (zero-filled: NULL, or a
 * status that the caller checks) when the library is missing; the rest are unreachable then. */
#define WRAP(ready, fail, ret, name, params, args)                                                 \
	ret name params                                                                            \
	{                                                                                          \
		if (!ready())                                                                      \
			return fail;                                                               \
		return L.name args;                                                                \
	}
#define VWRAP(ready, name, params, args)                                                           \
	void name params                                                                           \
	{                                                                                          \
		if (ready())                                                                       \
			L.name args;                                                               \
	}

/* Failure values: curl's own codes; libarchive's NULL, or ARCHIVE_FATAL for an int status. */
#define CU_F(ret, name, params, args) WRAP(cu_ready, cu_fail_##name, ret, name, params, args)
#define CU_V(name, params, args)      VWRAP(cu_ready, name, params, args)
#define AR_F(ret, name, params, args)                                                              \
	WRAP(ar_ready,                                                                             \
	     _Generic((ret)0, int                                                                  \
	              : ARCHIVE_FATAL, default                                                     \
	              : (ret)0),                                                                   \
	     ret, name, params, args)
#define AR_V(name, params, args) VWRAP(ar_ready, name, params, args)

#define cu_fail_curl_global_init         CURLE_FAILED_INIT
#define cu_fail_curl_easy_init           NULL
#define cu_fail_curl_easy_perform        CURLE_FAILED_INIT
#define cu_fail_curl_easy_escape         NULL
#define cu_fail_curl_slist_append        NULL
#define cu_fail_curl_multi_init          NULL
#define cu_fail_curl_multi_add_handle    CURLM_BAD_HANDLE
#define cu_fail_curl_multi_remove_handle CURLM_BAD_HANDLE
#define cu_fail_curl_multi_perform       CURLM_BAD_HANDLE
#define cu_fail_curl_multi_cleanup       CURLM_BAD_HANDLE
#define cu_fail_curl_multi_info_read     NULL
#define cu_fail_curl_multi_poll          CURLM_BAD_HANDLE

#define L cu
CURL_FUNCS(CU_F, CU_V)
#undef L
#define L ar
ARCHIVE_FUNCS(AR_F, AR_V)
#undef L

/* curl's variadic options take one argument whose type the option's number gives (curl.h's
 * CURLOPTTYPE_*): long below 10000, then object pointer, function pointer, curl_off_t, blob. */
#define SETOPT(fn, h, opt, ap)                                                                     \
	((opt) < CURLOPTTYPE_OBJECTPOINT ? fn(h, opt, va_arg(ap, long))                            \
	 : (opt) >= CURLOPTTYPE_FUNCTIONPOINT && (opt) < CURLOPTTYPE_OFF_T                         \
	         ? fn(h, opt, va_arg(ap, void (*)(void)))                                          \
	 : (opt) >= CURLOPTTYPE_OFF_T && (opt) < CURLOPTTYPE_BLOB                                  \
	         ? fn(h, opt, va_arg(ap, curl_off_t))                                              \
	         : fn(h, opt, va_arg(ap, void *)))

CURLcode curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
	va_list ap;
	CURLcode rc;

	if (!cu_ready())
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
	rc = SETOPT(cu.curl_easy_setopt, c, opt, ap);
	va_end(ap);
	return rc;
}

CURLMcode curl_multi_setopt(CURLM *m, CURLMoption opt, ...)
{
	va_list ap;
	CURLMcode rc;

	if (!cu_ready())
		return CURLM_BAD_HANDLE;
	va_start(ap, opt);
	rc = SETOPT(cu.curl_multi_setopt, m, opt, ap);
	va_end(ap);
	return rc;
}

/* every CURLINFO_* takes one pointer to where the answer goes */
CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	va_list ap;
	void *p;

	if (!cu_ready())
		return CURLE_FAILED_INIT;
	va_start(ap, info);
	p = va_arg(ap, void *);
	va_end(ap);
	return cu.curl_easy_getinfo(c, info, p);
}

const char *curl_easy_strerror(CURLcode rc)
{
	if (!cu_ready())
		return lazy_err[0] ? lazy_err : "libcurl could not be loaded";
	return cu.curl_easy_strerror(rc);
}

const char *archive_error_string(struct archive *a)
{
	if (!ar_ready())
		return lazy_err[0] ? lazy_err : "libarchive could not be loaded";
	return ar.archive_error_string(a);
}

void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!ar_ready())
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ar.archive_set_error(a, err, "%s", msg);
}
