/*
 * redact_out.c - the CLI's last line of defence for secrets: stdout and stderr are replaced by
 * streams that pass every byte through menv_text_redact (specs/redact.c) before it reaches
 * file descriptors 1 and 2. Whatever a command draws (plans, progress, errors, --json, export
 * formats, mirror lines) cannot show "user:password@" or a "/t/<token>". The library's own
 * writers redact what goes to disk; this covers what goes to the terminal or a pipe.
 *
 * A URL split across two writes must not escape redaction: each stream holds back the last
 * word of a write (the bytes after its last whitespace, quote or control byte) until the next
 * write, and at exit. Children (pip, link scripts, `menv run`'s command) write to the file
 * descriptors directly and are not filtered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

struct sink {
	int fd;
	struct menv_buf held; /* the trailing word of the last write */
};

static struct sink sinks[2] = {{1, MENV_BUF_INIT}, {2, MENV_BUF_INIT}};

static bool word_end(unsigned char c)
{
	return c <= ' ' || c == 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' ||
	       c == '\\' || c == '`';
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w, n -= (size_t)w;
	}
	return 0;
}

/* Redacts and writes held + data[0, n). */
static int emit(struct sink *s, const char *data, size_t n)
{
	char *r;
	int rc;

	menv_buf_add(&s->held, data, n);
	if (memchr(s->held.buf, '\0', s->held.len)) { /* binary: no text to redact */
		rc = write_all(s->fd, s->held.buf, s->held.len);
	} else {
		r = menv_text_redact(s->held.buf);
		rc = write_all(s->fd, r, strlen(r));
		free(r);
	}
	menv_buf_reset(&s->held);
	return rc;
}

static ssize_t sink_write(void *cookie, const char *data, size_t n)
{
	struct sink *s = cookie;
	size_t cut = n;

	while (cut && !word_end((unsigned char)data[cut - 1]))
		cut--;
	if (emit(s, data, cut) < 0)
		return -1;
	menv_buf_add(&s->held, data + cut, n - cut);
	return (ssize_t)n;
}

static int sink_close(void *cookie)
{
	struct sink *s = cookie;
	int rc = emit(s, "", 0);
	menv_buf_release(&s->held);
	return rc;
}

static void flush_held(void)
{
	fflush(stdout);
	fflush(stderr);
	for (size_t i = 0; i < 2; i++)
		if (sinks[i].held.len)
			emit(&sinks[i], "", 0);
}

void menv_cli_redact_stdio(void)
{
	static const cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
	FILE *out = fopencookie(&sinks[0], "w", io);
	FILE *err = fopencookie(&sinks[1], "w", io);

	if (!out || !err) { /* keep the plain streams rather than lose output */
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		return;
	}
	for (size_t i = 0; i < 2; i++)
		menv_buf_init(&sinks[i].held);
	setvbuf(out, NULL, isatty(1) ? _IOLBF : _IOFBF, 1 << 16);
	setvbuf(err, NULL, _IOLBF, 1 << 16);
	stdout = out;
	stderr = err;
	atexit(flush_held);
}

void menv_cli_flush_held(void)
{
	flush_held();
}
