/*
 * testhooks.c - the hooks tests use to stop a command at a chosen point, shared by every
 * library (envs/ journals and multi-step commands, fetch/ cache cleaning): crash points
 * (MENV_TEST_CRASH_AFTER) and gates (a FIFO named by a variable). Without the variables they
 * do nothing.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "specs.h"

/* The test hook MENV_TEST_CRASH_AFTER=N: the process kills itself with SIGKILL when it is
 * about to make its N-th change (N >= 1), so that tests can interrupt a command at any point
 * deterministically. The count is the process's: the changes of every journal of a command
 * and the steps of commands made of several (rename, env remove, clean) are numbered in one
 * sequence. */
static long crash_after;
static int crash_sig = SIGKILL;

static void crash_init(void)
{
	const char *v = getenv("MENV_TEST_CRASH_AFTER");
	const char *s = getenv("MENV_TEST_CRASH_SIGNAL"); /* "INT": Ctrl-C there instead */
	crash_after = v ? strtol(v, NULL, 10) : 0;
	if (s && !strcmp(s, "INT"))
		crash_sig = SIGINT;
}

void menv_crash_point(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	static long n;
	pthread_once(&once, crash_init);
	/* linking threads (linkpool.c) count here too: one count, one kill */
	if (crash_after > 0 && __atomic_add_fetch(&n, 1, __ATOMIC_SEQ_CST) == crash_after)
		kill(getpid(), crash_sig);
}

void menv_test_gate(const char *name)
{
	const char *path = getenv(name);
	char buf[64];
	if (!path || !*path)
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
}
