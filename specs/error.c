/*
 * error.c - menv_error: the one place a failure's code and one-line message are kept.
 * Messages grow context as they rise ("while linking 'x': ..."); only the CLI prints them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "specs.h"

/* Makes a message one line of valid UTF-8 (jansson refuses anything else, and a terminal
 * must not get raw control bytes): bad bytes and control characters become "\xNN", cut at a
 * character boundary to fit; and without credentials or tokens (menv_text_redact): a message
 * quotes what the user gave (a channel, a spec, a .condarc value), and every error is shown
 * or written as its message, so this is where an error's text is redacted, whatever made
 * it. Idempotent. */
static void sanitize(char *msg, size_t cap)
{
	char *r = menv_text_redact(msg);
	char *e = menv_utf8_escape(r);
	free(r);
	size_t len = strlen(e), keep = 0;

	while (keep < len) {
		size_t n = menv_utf8_seq(e + keep, len - keep);
		if (keep + n > cap - 1)
			break;
		keep += n;
	}
	memcpy(msg, e, keep);
	msg[keep] = '\0';
	free(e);
}

__attribute__((format(printf, 4, 0))) static int vset(struct menv_error *err, int code, int sys,
                                                      const char *fmt, va_list ap)
{
	if (!err)
		return code;
	err->code = code;
	err->sys_errno = sys;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (sys) {
		size_t len = strlen(err->msg);
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(sys));
	}
	sanitize(err->msg, sizeof(err->msg));
	return code;
}

int menv_error_set(struct menv_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(err, code, 0, fmt, ap);
	va_end(ap);
	return code;
}

int menv_error_sys(struct menv_error *err, int code, const char *fmt, ...)
{
	int sys = errno;
	va_list ap;
	va_start(ap, fmt);
	vset(err, code, sys, fmt, ap);
	va_end(ap);
	return code;
}

void menv_error_rename(struct menv_error *err, const char *from, const char *to)
{
	char out[sizeof(err->msg)];
	size_t n = 0, fl = from ? strlen(from) : 0, tl;

	if (!err || !fl)
		return;
	tl = strlen(to);
	for (const char *p = err->msg; *p && n < sizeof(out) - 1;) {
		if (!strncmp(p, from, fl)) {
			size_t k = tl < sizeof(out) - 1 - n ? tl : sizeof(out) - 1 - n;
			memcpy(out + n, to, k);
			n += k;
			p += fl;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	memcpy(err->msg, out, n + 1);
	sanitize(err->msg, sizeof(err->msg));
}

int menv_error_prefix(struct menv_error *err, const char *fmt, ...)
{
	char head[1024], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return MENV_EIO;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	size_t hl = strlen(head);
	if (hl > sizeof(err->msg) - 3)
		hl = sizeof(err->msg) - 3;
	memcpy(err->msg, head, hl);
	memcpy(err->msg + hl, ": ", 2);
	size_t room = sizeof(err->msg) - hl - 3;
	size_t ol = strnlen(old, room);
	memcpy(err->msg + hl + 2, old, ol);
	err->msg[hl + 2 + ol] = '\0';
	sanitize(err->msg, sizeof(err->msg));
	return err->code;
}

int menv_error_stream(FILE *f, struct menv_error *err)
{
	errno = 0;
	bool flushed = fflush(f) == 0;
	if (flushed && !ferror(f))
		return 0;
	if (!flushed && errno)
		return menv_error_sys(err, MENV_EIO, "cannot write standard output");
	/* an earlier write failed and its errno is gone (stdio dropped what it held): the
	 * descriptor says why where it can — closed (EBADF), or open for reading only, as
	 * menv_std_fds_open leaves a closed one (EBADF too, as a write there gives) */
	int fl = fcntl(fileno(f), F_GETFL);
	if (fl == -1 || (fl & O_ACCMODE) == O_RDONLY) {
		if (fl != -1)
			errno = EBADF;
		return menv_error_sys(err, MENV_EIO, "cannot write standard output");
	}
	return menv_error_set(err, MENV_EIO, "cannot write standard output (a write failed)");
}

void menv_std_fds_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* the lowest free descriptor is fd: every lower one is open by now */
		int n = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (n == fd)
			fcntl(fd, F_SETFD, 0); /* children find it as menv did */
		else if (n >= 0)
			close(n);
	}
}

const char *menv_error_name(int code)
{
	switch (code) {
	case MENV_OK: return "ok";
	case MENV_EPARSE: return "parse error";
	case MENV_ENOTFOUND: return "not found";
	case MENV_EUNSAT: return "unsatisfiable";
	case MENV_ENET: return "network error";
	case MENV_ECHECKSUM: return "checksum mismatch";
	case MENV_EIO: return "i/o error";
	case MENV_ELOCKED: return "locked";
	case MENV_EUNSAFE: return "unsafe input";
	case MENV_EEXIST: return "exists";
	case MENV_EUNSUPPORTED: return "unsupported";
	case MENV_EINTR: return "interrupted";
	case MENV_EUSAGE: return "usage";
	default: return "error";
	}
}
