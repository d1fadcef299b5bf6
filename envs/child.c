/*
 * child.c - starting and waiting for the programs a transaction runs (link scripts, the
 * environment's python compiling .pyc files, pip). DESIGN.md: children run in their own
 * process group, die with menv (PDEATHSIG) and are stopped by Ctrl-C. PR_SET_PDEATHSIG
 * alone reaches only the direct child: a link script's `sleep 60` is bash's child and would
 * outlive a killed menv. So each program gets a supervisor: a forked copy of menv (it never
 * execs) that holds PDEATHSIG, puts the program into a process group of its own and kills
 * that whole group when menv dies, asks it to stop, or the program exits. What the program
 * started outside its group (`setsid`, a daemon's double fork) reaches the supervisor when
 * its parent exits (PR_SET_CHILD_SUBREAPER) and is killed too: it outlived an interrupted
 * transaction, and held the program's output pipe open after the program had finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

/* the supervisor's state (a process of its own: these are its copies) */
static volatile pid_t group;
static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
	if (group > 0)
		kill(-group, SIGKILL);
}

static void set_handler(int sig, void (*fn)(int))
{
	struct sigaction sa = {0};
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* Kills every process left to the supervisor (its subreaper's orphans, out of the
 * program's group), and what each leaves when it dies, until none is: each one listed in
 * /proc/self/task/TID/children is killed (and its group) and one is reaped a turn; an
 * orphan is handed to the supervisor before its parent can be reaped, so none is missed.
 * Async-signal-safe calls only. */
static void kill_left(void)
{
	char path[64] = "/proc/self/task/", buf[4096];
	size_t n = strlen(path);
	char digits[24];
	size_t nd = 0;

	for (long tid = getpid(); tid > 0 && nd < sizeof(digits); tid /= 10)
		digits[nd++] = (char)('0' + tid % 10);
	while (nd && n < sizeof(path) - 16)
		path[n++] = digits[--nd];
	memcpy(path + n, "/children", sizeof("/children"));
	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return; /* no such file (a kernel without it): no wait for what lives on */
		ssize_t got = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		long pid = 0;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				pid = pid * 10 + (buf[i] - '0');
				continue;
			}
			if (pid > 0) {
				kill((pid_t)pid, SIGKILL);
				kill((pid_t)-pid, SIGKILL);
			}
			pid = 0;
		}
		if (pid > 0) {
			kill((pid_t)pid, SIGKILL);
			kill((pid_t)-pid, SIGKILL);
		}
		if (waitpid(-1, NULL, 0) < 0 && errno != EINTR)
			return; /* ECHILD: nothing left */
	}
}

static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};
#define NSTOP (sizeof(stop_signals) / sizeof(*stop_signals))

pid_t menv_child_fork(void)
{
	pid_t parent = getpid();
	pid_t sup = fork();
	sigset_t set;
	int st = 0;

	if (sup != 0)
		return sup;
	/* the supervisor: only async-signal-safe calls from here on */
	group = 0;
	stopping = 0;
	sigemptyset(&set);
	for (size_t i = 0; i < NSTOP; i++) {
		set_handler(stop_signals[i], on_stop);
		sigaddset(&set, stop_signals[i]);
	}
	set_handler(SIGPIPE, SIG_DFL);
	set_handler(SIGXFSZ, SIG_DFL); /* menv ignores it (EFBIG instead); its children do not */
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (getppid() != parent) /* menv died before PDEATHSIG was set */
		_exit(128 + SIGTERM);
	pid_t pid = fork();
	if (pid < 0)
		_exit(127);
	if (pid == 0) {
		setpgid(0, 0);
		for (size_t i = 0; i < NSTOP; i++)
			set_handler(stop_signals[i], SIG_DFL);
		return 0;
	}
	setpgid(pid, pid); /* both sides: whichever runs first */
	group = pid;
	/* the supervisor never execs: it lets go of every descriptor, or the program would
	 * never see the end of a pipe menv writes to it (compileall's list) */
	if (close_range(3, ~0U, 0) < 0)
		for (long fd = 3, max = sysconf(_SC_OPEN_MAX); fd < max && fd < 65536; fd++)
			close((int)fd);
	if (stopping)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			_exit(127);
	/* what the program left running in its group (a `sleep 60 &`) goes with it, and what
	 * it started out of its group (handed to the supervisor as it ended) */
	kill(-pid, SIGKILL);
	kill_left();
	if (WIFEXITED(st))
		_exit(WEXITSTATUS(st));
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
	set_handler(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	kill(getpid(), sig);
	_exit(128 + sig);
}

static bool asked_to_stop(volatile int *cancel)
{
	return (cancel && *cancel) || menv_cancelled();
}

int menv_child_wait(pid_t pid, int fd, struct menv_buf *out, size_t cap, volatile int *cancel,
                    int *status)
{
	bool stopped = false, reading = fd >= 0;
	char buf[4096];

	*status = 0;
	for (;;) {
		if (!stopped && asked_to_stop(cancel)) {
			kill(pid, SIGTERM); /* the supervisor kills the group */
			stopped = true;
			reading = false;
		}
		if (reading) {
			/* a timeout, not a blocking read: a signal between the check above and the
			 * read would not interrupt it */
			struct pollfd p = {.fd = fd, .events = POLLIN};
			if (poll(&p, 1, 100) <= 0)
				continue;
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n > 0 && out && out->len < cap)
				menv_buf_add(out, buf, (size_t)n);
			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				reading = false;
			continue;
		}
		pid_t w = waitpid(pid, status, stopped ? 0 : WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return MENV_EIO;
		if (w == 0)
			poll(NULL, 0, 50);
	}
	return stopped ? MENV_EINTR : 0;
}

char **menv_sh_argv_(const char *shell, const char *script, const char *name, char *const *args,
                     size_t nargs)
{
	char **argv = menv_xcalloc(nargs + 5, sizeof(char *));

	argv[0] = (char *)shell;
	argv[1] = (char *)"-c";
	argv[2] = (char *)script;
	argv[3] = (char *)name;
	for (size_t i = 0; i < nargs; i++)
		argv[4 + i] = args[i];
	return argv;
}
