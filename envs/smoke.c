/*
 * smoke.c - the smoke check: menv's sample CUDA custom-op package (ops/) built with an
 * environment's own nvcc and host compiler and tested, so that a broken GPU toolchain shows
 * at creation time with a diagnosis instead of hours later.
 *
 * Each step is one `/bin/sh -c` in a scrubbed environment that first sources the prefix's
 * activation scripts (activation proper lives in activate.c; this is the minimal part the
 * build needs: CC, CXX and friends). Output goes to the log; "[ops] ..." lines of the tests
 * are forwarded to the caller's callback. Never prints.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "smoke.h"

#define DEFAULT_TIMEOUT_S 1200

struct smoke {
	const char *prefix;
	const struct menv_smoke_opts *o;
	struct menv_smoke_result *res;
	char *src, *build, *root;
	struct menv_strvec env;
	FILE *log;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void emit(struct smoke *s, enum menv_smoke_event ev, const struct menv_smoke_step *st,
                 const char *line)
{
	if (s->o->cb)
		s->o->cb(s->o->ctx, ev, st, line);
}

static void hint(struct smoke *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hint(struct smoke *s, const char *fmt, ...)
{
	struct menv_smoke_result *r = s->res;
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < r->n_hints; i++)
		if (!strcmp(r->hints[i], buf))
			return;
	if (r->n_hints < MENV_SMOKE_MAX_HINTS)
		snprintf(r->hints[r->n_hints++], sizeof(r->hints[0]), "%s", buf);
	if (s->log)
		fprintf(s->log, "menv smoke: hint: %s\n", buf);
	emit(s, MENV_SMOKE_HINT, NULL, buf);
}

static void copy_str(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

/* ---- versions ---- */

static void major_minor(const char *v, int *maj, int *min)
{
	*maj = *min = 0;
	if (v)
		sscanf(v, "%d.%d", maj, min);
}

/* The newest GCC major that nvcc MAJ.MIN accepts (its crt/host_config.h check), 0 when not
 * known: CUDA 11.8 up to 11, 12.0-12.3 up to 12, later 12.x up to 13 (as the issue quotes
 * NVIDIA's installation guides); 13.0 up to 15, as its crt/host_config.h says. */
static int max_gcc_for(int maj, int min)
{
	if (maj == 11)
		return min == 0 ? 9 : min <= 3 ? 10 : 11;
	if (maj == 12)
		return min <= 3 ? 12 : 13;
	if (maj == 13)
		return 15;
	return 0;
}

/* ---- files ---- */

static int copy_file(const char *from, const char *to, mode_t mode, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int rc = menv_buf_read_file(&b, from, err);
	if (!rc) {
		int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
		if (fd < 0 || write(fd, b.buf, b.len) != (ssize_t)b.len)
			rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", to);
		if (fd >= 0 && close(fd) && !rc)
			rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", to);
	}
	menv_buf_release(&b);
	return rc;
}

/* Copies the source tree (regular files and directories; no build output, caches or VCS). */
static int copy_tree(const char *from, const char *to, int depth, struct menv_error *err)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (depth > 8)
		return menv_error_set(err, MENV_EUNSUPPORTED, "'%s' is nested too deeply", from);
	if (mkdir(to, 0755) && errno != EEXIST)
		return menv_error_sys(err, MENV_EIO, "cannot create '%s'", to);
	d = opendir(from);
	if (!d)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot read '%s'", from);
	while (!rc && (de = readdir(d))) {
		struct stat st;
		const char *n = de->d_name;
		if (n[0] == '.' || !strcmp(n, "__pycache__") ||
		    (depth == 0 && !strncmp(n, "build", 5)))
			continue;
		char *a = menv_xasprintf("%s/%s", from, n), *b = menv_xasprintf("%s/%s", to, n);
		if (lstat(a, &st))
			rc = menv_error_sys(err, MENV_EIO, "cannot stat '%s'", a);
		else if (S_ISDIR(st.st_mode))
			rc = copy_tree(a, b, depth + 1, err);
		else if (S_ISREG(st.st_mode))
			rc = copy_file(a, b, st.st_mode, err);
		free(a);
		free(b);
	}
	closedir(d);
	return rc;
}

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d) {
		unlink(path);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = menv_xasprintf("%s/%s", path, de->d_name);
		struct stat st;
		if (!lstat(p, &st) && S_ISDIR(st.st_mode))
			remove_tree(p);
		else
			unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(path);
}

/* ---- the child's environment ---- */

static void env_add(struct smoke *s, const char *k, const char *v)
{
	if (v)
		menv_strvec_push_owned(&s->env, menv_xasprintf("%s=%s", k, v));
}

/* LD_LIBRARY_PATH entries that hold the driver (containers often find libcuda.so.1 only
 * there); everything else in it is the machine's and is dropped. */
static void env_driver_libs(struct smoke *s)
{
	const char *l = getenv("LD_LIBRARY_PATH");
	struct menv_buf b = MENV_BUF_INIT;

	if (!l)
		return;
	char *dup = menv_xstrdup(l), *save = NULL;
	for (char *t = strtok_r(dup, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		char *f = menv_xasprintf("%s/libcuda.so.1", t);
		if (t[0] == '/' && !access(f, R_OK)) {
			if (b.len)
				menv_buf_addch(&b, ':');
			menv_buf_adds(&b, t);
		}
		free(f);
	}
	if (b.len)
		env_add(s, "LD_LIBRARY_PATH", b.buf);
	menv_buf_release(&b);
	free(dup);
}

static void env_build(struct smoke *s)
{
	static const char *const pass[] = {"HOME",
	                                   "USER",
	                                   "LOGNAME",
	                                   "CUDA_VISIBLE_DEVICES",
	                                   "MENV_OPS_ARCH",
	                                   "MENV_OPS_SEED",
	                                   "MENV_OPS_NO_TIMING",
	                                   "MENV_OPS_PERF_ROWS",
	                                   "MENV_OPS_PERF_COLS"};
	const char *base = strrchr(s->prefix, '/');
	char *path = menv_xasprintf("%s/bin:/usr/bin:/bin", s->prefix);

	env_add(s, "PATH", path);
	free(path);
	for (size_t i = 0; i < sizeof(pass) / sizeof(*pass); i++)
		env_add(s, pass[i], getenv(pass[i]));
	env_add(s, "LC_ALL", "C");
	env_add(s, "LANG", "C");
	env_add(s, "TERM", "dumb");
	env_add(s, "PYTHONUNBUFFERED", "1");
	env_add(s, "PYTHONDONTWRITEBYTECODE", "1");
	env_add(s, "CONDA_PREFIX", s->prefix);
	env_add(s, "CONDA_DEFAULT_ENV", base ? base + 1 : s->prefix);
	env_add(s, "CONDA_SHLVL", "1");
	env_add(s, "MENV_SMOKE_SRC", s->src);
	env_add(s, "MENV_SMOKE_BUILD", s->build);
	/* the compilers' and tests' temporaries go with the build folder, also after a kill */
	char *tmp = menv_xasprintf("%s/tmp", s->root);
	if (mkdir(tmp, 0700) == 0 || errno == EEXIST)
		env_add(s, "TMPDIR", tmp);
	free(tmp);
	env_driver_libs(s);
	menv_strvec_push_owned(&s->env, NULL); /* execve's terminator */
	s->env.n--;
}

/* ---- running one step ---- */

static void on_line(struct smoke *s, const char *line)
{
	if (s->log)
		fprintf(s->log, "%s\n", line);
	if (!strncmp(line, "[ops] ", 6))
		emit(s, MENV_SMOKE_LINE, NULL, line + 6);
}

/* Runs step `step` ("probe", "configure", "build" or "test" with `arg` the test set: its
 * positional parameters, never its text) of the one smoke script with /bin/sh, after the
 * activation prelude (the prefix's activate.d scripts), as a child of its own group that dies
 * with menv (menv_child_fork); its output (stdout and stderr) goes to the log and to `out`.
 * *status: exit code, or 128 + signal. A cancel (the option's flag or menv's) or the time
 * limit kill its whole group; a cancel returns MENV_EINTR. */
static int run_sh(struct smoke *s, const char *step, const char *arg, struct menv_buf *out,
                  int *status, struct menv_error *err)
{
	char *args[] = {(char *)step, (char *)arg};
	char **argv = menv_sh_argv(
	        "/bin/sh",
	        "for f in \"$CONDA_PREFIX\"/etc/conda/activate.d/*.sh; do\n"
	        "  [ -f \"$f\" ] && . \"$f\"\n"
	        "done\n"
	        "unset f\n"
	        "case $1 in\n"
	        "probe)\n"
	        "  echo \"nvcc_path=$(command -v nvcc)\"\n"
	        "  c=${CXX:-g++}\n"
	        "  echo \"cxx_path=$(command -v \"$c\")\"\n"
	        "  command -v nvcc >/dev/null && nvcc --version\n"
	        "  command -v \"$c\" >/dev/null && echo \"cxx_version=$(\"$c\" -dumpfullversion "
	        "2>/dev/null || \"$c\" -dumpversion)\"\n"
	        "  exit 0;;\n"
	        "configure) cd \"$MENV_SMOKE_SRC\" && exec ./configure \"$MENV_SMOKE_BUILD\";;\n"
	        "build)\n"
	        "  if command -v ninja >/dev/null; then exec ninja -C \"$MENV_SMOKE_BUILD\"; "
	        "else exec make -C \"$MENV_SMOKE_BUILD\"; fi;;\n"
	        "test) exec \"$MENV_SMOKE_SRC/run-tests\" \"$MENV_SMOKE_BUILD\" \"$2\";;\n"
	        "esac\n"
	        "exit 2\n",
	        "sh", args, arg ? 2 : 1);
	int fds[2], rc = 0, wst = 0;
	int limit = s->o->step_timeout_s > 0 ? s->o->step_timeout_s : DEFAULT_TIMEOUT_S;
	double start = now_s();
	bool stop = false;
	struct menv_buf line = MENV_BUF_INIT;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC)) {
		free(argv);
		return menv_error_sys(err, MENV_EIO, "cannot create a pipe");
	}
	if (s->log)
		fflush(s->log);
	pid = menv_child_fork(); /* its own group, killed with menv and by Ctrl-C */
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		free(argv);
		return menv_error_sys(err, MENV_EIO, "cannot fork");
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		if (chdir(s->root))
			_exit(126);
		signal(SIGPIPE, SIG_DFL);
		execve(argv[0], argv, s->env.v);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		char buf[4096];
		int pr = poll(&p, 1, 200);
		if ((s->o->cancel && *s->o->cancel) || menv_cancelled()) {
			rc = menv_error_set(err, MENV_EINTR, "smoke check interrupted");
			stop = true;
			break;
		}
		if (now_s() - start > limit) {
			on_line(s, "menv smoke: step timed out");
			menv_buf_adds(out, "menv smoke: step timed out\n");
			stop = true;
			break;
		}
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		menv_buf_add(out, buf, (size_t)n);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				on_line(s, line.buf);
				menv_buf_reset(&line);
			} else {
				menv_buf_addch(&line, buf[i]);
			}
		}
	}
	if (line.len)
		on_line(s, line.buf);
	close(fds[0]);
	/* the shell closed its output: it has two seconds to exit; then (and at once on a
	 * cancel or a time-out) the supervisor kills the step's whole group */
	for (int i = 0; !stop && i < 20 && waitpid(pid, &wst, WNOHANG) == 0; i++)
		usleep(100000);
	if (stop || waitpid(pid, &wst, WNOHANG) == 0) {
		kill(pid, SIGTERM);
		while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
			;
	}
	*status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + (WIFSIGNALED(wst) ? WTERMSIG(wst) : 0);
	if (now_s() - start > limit)
		*status = 124;
	menv_buf_release(&line);
	free(argv);
	return rc;
}

static struct menv_smoke_step *step_begin(struct smoke *s, const char *name)
{
	struct menv_smoke_result *r = s->res;
	struct menv_smoke_step *st =
	        &r->steps[r->n_steps < MENV_SMOKE_MAX_STEPS ? r->n_steps++ : r->n_steps - 1];
	memset(st, 0, sizeof(*st));
	st->name = name;
	st->seconds = now_s();
	if (s->log)
		fprintf(s->log, "==== %s\n", name);
	emit(s, MENV_SMOKE_STEP_BEGIN, st, NULL);
	return st;
}

static void step_end(struct smoke *s, struct menv_smoke_step *st, enum menv_smoke_verdict v,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void step_end(struct smoke *s, struct menv_smoke_step *st, enum menv_smoke_verdict v,
                     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->summary, sizeof(st->summary), fmt, ap);
	va_end(ap);
	st->verdict = v;
	st->seconds = now_s() - st->seconds;
	if (v == MENV_SMOKE_FAIL)
		s->res->passed = false;
	if (s->log)
		fprintf(s->log, "==== %s: %s: %s (%.1f s)\n", st->name,
		        v == MENV_SMOKE_PASS   ? "pass"
		        : v == MENV_SMOKE_SKIP ? "skip"
		                               : "FAIL",
		        st->summary, st->seconds);
	emit(s, MENV_SMOKE_STEP_END, st, NULL);
}

/* ---- reading outputs ---- */

/* The value after `key` up to the end of the line (or a blank when `word`), or NULL. */
static char *field(const char *text, const char *key, bool word)
{
	const char *p = strstr(text, key);
	if (!p)
		return NULL;
	p += strlen(key);
	size_t n = strcspn(p, word ? " \n\"" : "\n");
	return menv_xstrndup(p, n);
}

/* The last "[ops] SKIP ...: reason" line's reason. */
static void skip_reason(const char *out, char *dst, size_t n)
{
	const char *p = out, *last = NULL;
	while ((p = strstr(p, "[ops] SKIP ")))
		last = p++;
	if (!last) {
		snprintf(dst, n, "skipped");
		return;
	}
	const char *c = strstr(last, ": ");
	const char *e = strchr(last, '\n');
	if (!c || (e && c > e))
		c = last + 11;
	else
		c += 2;
	snprintf(dst, n, "%.*s", (int)(e ? e - c : (long)strlen(c)), c);
}

static int count(const char *out, const char *what)
{
	int n = 0;
	for (const char *p = out; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* The first "[ops] FAIL ..." line, for the summary. */
static void first_fail(const char *out, char *dst, size_t n)
{
	const char *p = strstr(out, "[ops] FAIL ");
	if (!p) {
		snprintf(dst, n, "see the log");
		return;
	}
	p += 11;
	snprintf(dst, n, "%.*s", (int)strcspn(p, "\n"), p);
}

static void read_perf(struct smoke *s, const char *out)
{
	struct menv_smoke_result *r = s->res;
	for (const char *p = out; (p = strstr(p, "[ops] PERF ")) && r->n_perf < MENV_SMOKE_MAX_PERF;
	     p++) {
		char what[64];
		double ms, gbs, pct, peak;
		if (sscanf(p,
		           "[ops] PERF %63[^:]: %lf ms median of %*d (min %*f), %lf GB/s = %lf%% "
		           "of "
		           "%lf GB/s peak",
		           what, &ms, &gbs, &pct, &peak) == 5) {
			copy_str(r->perf[r->n_perf].what, sizeof(r->perf[0].what), what);
			r->perf[r->n_perf].ms = ms;
			r->perf[r->n_perf].gbs = gbs;
			r->perf[r->n_perf].peak_gbs = peak;
			r->n_perf++;
		}
	}
}

/* Hints for the failures that GPU teams hit most, from a failed step's output. */
static void diagnose(struct smoke *s, const char *out)
{
	struct menv_smoke_result *r = s->res;
	int nmaj, nmin, gmaj = 0;
	char *p;

	major_minor(r->nvcc_version, &nmaj, &nmin);
	sscanf(r->cxx_version, "%d", &gmaj);
	if (strstr(out, "unsupported GNU version")) {
		int mx = max_gcc_for(nmaj, nmin);
		char table[160] = "";
		if (mx)
			snprintf(table, sizeof(table), "nvcc %d.%d accepts GCC up to %d", nmaj,
			         nmin, mx);
		hint(s,
		     "nvcc %s does not support the host compiler g++ %s ('%s', %s)%s%s "
		     "(CUDA 11.8: GCC <= 11; 12.0-12.3: <= 12; 12.4+: <= 13; 13.0: <= 15): install "
		     "a "
		     "supported one in the environment, e.g. gxx_linux-64=%d",
		     r->nvcc_version, r->cxx_version, r->cxx_path,
		     r->cxx_in_env ? "from the environment"
		                   : "from the system, not the environment",
		     table[0] ? "; " : "", table, mx ? mx : 11);
	}
	if (strstr(out, "no kernel image is available"))
		hint(s,
		     "no kernel image for this GPU%s%s%s: the code was built for %s; rebuild for "
		     "the "
		     "GPU's compute capability (MENV_OPS_ARCH) with a cudatoolkit that knows it",
		     r->gpu[0] ? " (" : "", r->gpu, r->gpu[0] ? ")" : "",
		     r->targets[0] ? r->targets : "other architectures");
	if (strstr(out, "driver version is insufficient") ||
	    strstr(out, "older than the toolkit") || strstr(out, "older than this toolkit") ||
	    strstr(out, "unsupported toolchain")) {
		hint(s,
		     "the driver (__cuda=%s) is older than cudatoolkit %s: install "
		     "cudatoolkit<=%s in the environment, or update the NVIDIA driver",
		     r->driver_cuda[0] ? r->driver_cuda : "?", r->nvcc_version,
		     r->driver_cuda[0] ? r->driver_cuda : "the driver's version");
	}
	if ((p = strstr(out, "fatal error: "))) {
		char hdr[256];
		if (sscanf(p, "fatal error: %255[^:]: No such file or directory", hdr) == 1) {
			if (!strncmp(hdr, "cuda", 4) || !strncmp(hdr, "crt/", 4) ||
			    !strncmp(hdr, "cub/", 4) || !strncmp(hdr, "thrust/", 7))
				hint(s,
				     "missing header '%s': the CUDA headers are not where nvcc %s "
				     "looks (its include/ next to bin/): reinstall cudatoolkit",
				     hdr, r->nvcc_version);
			else if (!strcmp(hdr, "Python.h"))
				hint(s,
				     "missing header 'Python.h': the environment's python has no "
				     "development headers");
			else
				hint(s,
				     "missing header '%s': install the package that provides it in "
				     "the environment",
				     hdr);
		}
	}
	if ((p = strstr(out, "cannot find -l"))) {
		char lib[128];
		if (sscanf(p, "cannot find -l%127s", lib) == 1)
			hint(s,
			     "the linker cannot find lib%s: the environment's cudatoolkit is "
			     "incomplete (lib/ should hold it): reinstall cudatoolkit",
			     lib);
	}
	if (strstr(out, "nvcc not found"))
		hint(s,
		     "nvcc not found in the environment: add cudatoolkit (menv install -p %s "
		     "cudatoolkit)",
		     s->prefix);
	if (strstr(out, "host C++ compiler"))
		hint(s, "no C++ compiler in the environment: add gxx_linux-64");
	(void)gmaj;
}

/* ---- the steps ---- */

/* The toolchain probe, in the step's scrubbed shell with the prefix's activation: which nvcc
 * and host compiler (CXX, else g++) a build gets, and their versions, into s->res. */
static int probe(struct smoke *s, struct menv_error *err)
{
	struct menv_smoke_result *r = s->res;
	struct menv_buf out = MENV_BUF_INIT;
	int status, rc;
	char *v;
	size_t plen = strlen(s->prefix);

	rc = run_sh(s, "probe", NULL, &out, &status, err);
	if (rc)
		goto out;
	v = field(out.buf, "nvcc_path=", false);
	copy_str(r->nvcc_path, sizeof(r->nvcc_path), v);
	free(v);
	v = field(out.buf, "cxx_path=", false);
	copy_str(r->cxx_path, sizeof(r->cxx_path), v);
	free(v);
	v = field(out.buf, "cxx_version=", true);
	copy_str(r->cxx_version, sizeof(r->cxx_version), v);
	free(v);
	v = field(out.buf, ", V", true); /* "Cuda compilation tools, release 11.8, V11.8.89" */
	copy_str(r->nvcc_version, sizeof(r->nvcc_version), v);
	free(v);
	r->cxx_in_env = r->cxx_path[0] && !strncmp(r->cxx_path, s->prefix, plen) &&
	                r->cxx_path[plen] == '/';
out:
	menv_buf_release(&out);
	return rc;
}

/* The verdict on the host compiler a probe found, shared with doctor
 * (menv_smoke_host_compiler): NULL when nvcc accepts it (or a version is not known), else
 * one line (new string) saying what to change. */
static char *host_compiler_problem(const struct menv_smoke_result *r)
{
	int nmaj, nmin, gmaj = 0;

	major_minor(r->nvcc_version, &nmaj, &nmin);
	int mx = max_gcc_for(nmaj, nmin);
	if (!r->nvcc_path[0] || !mx)
		return NULL;
	if (!r->cxx_path[0])
		return menv_xasprintf("nvcc %s finds no host C++ compiler ($CXX or g++): nvcc "
		                      "%d.%d accepts GCC up to %d; add gxx_linux-64=%d to the "
		                      "environment",
		                      r->nvcc_version, nmaj, nmin, mx, mx);
	if (sscanf(r->cxx_version, "%d", &gmaj) != 1 || gmaj <= mx)
		return NULL;
	return menv_xasprintf("nvcc %s does not support the host compiler g++ %s ('%s', %s): "
	                      "nvcc %d.%d accepts GCC up to %d; add gxx_linux-64=%d to the "
	                      "environment",
	                      r->nvcc_version, r->cxx_version, r->cxx_path,
	                      r->cxx_in_env ? "from the environment"
	                                    : "from the system, not the environment",
	                      nmaj, nmin, mx, mx);
}

static int step_toolchain(struct smoke *s, bool *stop, struct menv_error *err)
{
	struct menv_smoke_result *r = s->res;
	struct menv_smoke_step *st = step_begin(s, "toolchain");
	size_t plen = strlen(s->prefix);
	char *problem = NULL;
	int rc = probe(s, err);

	if (rc)
		goto out;
	if (!r->nvcc_path[0] || strncmp(r->nvcc_path, s->prefix, plen) ||
	    r->nvcc_path[plen] != '/') {
		if (r->nvcc_path[0])
			step_end(s, st, MENV_SMOKE_FAIL,
			         "nvcc comes from '%s', not the environment", r->nvcc_path);
		else
			step_end(s, st, MENV_SMOKE_FAIL, "nvcc not found in the environment");
		hint(s,
		     "nvcc not found in the environment: add cudatoolkit (menv install -p %s "
		     "cudatoolkit)",
		     s->prefix);
		*stop = true;
		goto out;
	}
	if (!r->cxx_path[0]) {
		step_end(s, st, MENV_SMOKE_FAIL, "no C++ compiler ($CXX or g++) found");
		hint(s, "no C++ compiler in the environment: add gxx_linux-64");
		*stop = true;
		goto out;
	}
	/* the host compiler nvcc would refuse: said here, as doctor says it, not later by
	 * nvcc's "unsupported GNU version" */
	if ((problem = host_compiler_problem(r))) {
		step_end(s, st, MENV_SMOKE_FAIL, "%s", problem);
		hint(s, "%s", problem);
		*stop = true;
		goto out;
	}
	int nmaj, nmin, dmaj, dmin;
	major_minor(r->nvcc_version, &nmaj, &nmin);
	if (r->driver_cuda[0]) {
		major_minor(r->driver_cuda, &dmaj, &dmin);
		if (dmaj * 100 + dmin < nmaj * 100 + nmin)
			hint(s,
			     "the driver supports CUDA %s (__cuda), older than cudatoolkit %s: "
			     "kernels may fail to load; install cudatoolkit<=%s or update the "
			     "driver",
			     r->driver_cuda, r->nvcc_version, r->driver_cuda);
	}
	step_end(s, st, MENV_SMOKE_PASS, "nvcc %s (environment), g++ %s (%s: %s)%s%s",
	         r->nvcc_version, r->cxx_version,
	         r->cxx_in_env ? "environment" : "system, not the environment", r->cxx_path,
	         r->driver_cuda[0] ? ", driver CUDA " : ", no CUDA driver",
	         r->driver_cuda[0] ? r->driver_cuda : "");
out:
	free(problem);
	return rc;
}

/* configure and build: fail means stop */
static int step_build(struct smoke *s, const char *name, bool *stop, struct menv_error *err)
{
	struct menv_smoke_result *r = s->res;
	struct menv_smoke_step *st = step_begin(s, name);
	struct menv_buf out = MENV_BUF_INIT;
	int status, rc = run_sh(s, name, NULL, &out, &status, err);

	if (rc)
		goto out;
	if (status) {
		const char *e = strstr(out.buf, "error");
		step_end(s, st, MENV_SMOKE_FAIL, "exit %d%s%.*s", status, e ? ": " : "",
		         e ? (int)strcspn(e, "\n") : 0, e ? e : "");
		diagnose(s, out.buf);
		*stop = true;
		goto out;
	}
	if (!strcmp(name, "configure")) {
		char *t = field(out.buf, "configure: targets ", false);
		copy_str(r->targets, sizeof(r->targets), t);
		char *paren = strstr(r->targets, " (");
		if (paren)
			*paren = '\0';
		step_end(s, st, MENV_SMOKE_PASS, "targets %s", t ? t : "?");
		free(t);
	} else {
		step_end(s, st, MENV_SMOKE_PASS, "ops library, tests%s built",
		         strstr(out.buf, "menv_ops.cpython") ? ", python module" : "");
	}
out:
	menv_buf_release(&out);
	return rc;
}

static int step_test(struct smoke *s, const char *name, const char *which, struct menv_error *err)
{
	struct menv_smoke_result *r = s->res;
	struct menv_smoke_step *st = step_begin(s, name);
	struct menv_buf out = MENV_BUF_INIT;
	char why[400];
	int status, rc = run_sh(s, "test", which, &out, &status, err);

	if (rc)
		goto out;
	if (!strcmp(which, "gpu")) {
		char *g = field(out.buf, "[ops] INFO gpu name=\"", false);
		if (g) {
			char *q = strchr(g, '"');
			if (q)
				*q = '\0';
			copy_str(r->gpu, sizeof(r->gpu), g);
			free(g);
			g = field(out.buf, " cc=", true);
			copy_str(r->compute_cap, sizeof(r->compute_cap), g);
			free(g);
		}
		read_perf(s, out.buf);
		r->gpu_ran = status != 77;
	}
	if (status == 77) {
		skip_reason(out.buf, why, sizeof(why));
		step_end(s, st, MENV_SMOKE_SKIP, "%s", why);
	} else if (status) {
		first_fail(out.buf, why, sizeof(why));
		step_end(s, st, MENV_SMOKE_FAIL, "%d failed: %s",
		         count(out.buf, "[ops] FAIL ") ? count(out.buf, "[ops] FAIL ") : 1, why);
		diagnose(s, out.buf);
	} else {
		int pass = count(out.buf, "[ops] PASS ");
		int skip = count(out.buf, "[ops] SKIP ");
		char perf[200] = "";
		if (!strcmp(which, "gpu") && r->n_perf)
			snprintf(perf, sizeof(perf), "; %s %.0f GB/s = %.0f%% of %.0f GB/s peak",
			         r->perf[0].what, r->perf[0].gbs,
			         100 * r->perf[0].gbs / r->perf[0].peak_gbs, r->perf[0].peak_gbs);
		if (skip) {
			skip_reason(out.buf, why, sizeof(why));
			step_end(s, st, MENV_SMOKE_PASS, "%d checks passed; %s%s", pass, why, perf);
		} else {
			step_end(s, st, MENV_SMOKE_PASS, "%d checks passed%s", pass, perf);
		}
	}
out:
	menv_buf_release(&out);
	return rc;
}

/* ---- entry points ---- */

const char *menv_smoke_ops_dir(const char *ops_dir)
{
	const char *e = getenv("MENV_OPS_DIR");
	return ops_dir ? ops_dir : e && *e ? e : MENV_OPS_DIR;
}

int menv_smoke_run(const char *prefix, const struct menv_smoke_opts *opts,
                   struct menv_smoke_result *res, struct menv_error *err)
{
	struct menv_smoke_opts dflt = {0};
	struct smoke s = {.prefix = prefix, .o = opts ? opts : &dflt, .res = res};
	const char *ops = menv_smoke_ops_dir(s.o->ops_dir);
	const char *tmp = s.o->tmp_dir ? s.o->tmp_dir : getenv("TMPDIR");
	struct stat st;
	bool stop = false;
	char *meta = NULL, *cfg = NULL;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	res->passed = true;
	copy_str(res->driver_cuda, sizeof(res->driver_cuda), s.o->cuda_driver);
	meta = menv_xasprintf("%s/conda-meta", prefix);
	if (stat(meta, &st) || !S_ISDIR(st.st_mode)) {
		rc = menv_error_set(err, MENV_ENOTFOUND, "'%s' is not a conda environment", prefix);
		goto out;
	}
	cfg = menv_xasprintf("%s/configure", ops);
	if (access(cfg, X_OK)) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "the ops/ sources are not at '%s' (set MENV_OPS_DIR)", ops);
		goto out;
	}
	if (s.o->tmp_dir) {
		s.root = menv_xasprintf("%s/menv-smoke-XXXXXX", tmp);
		if (!mkdtemp(s.root)) {
			rc = menv_error_sys(err, MENV_EIO, "cannot create '%s'", s.root);
			free(s.root);
			s.root = NULL;
			goto out;
		}
	} else if ((rc = menv_tmp_mkdir("smoke", &s.root, err)) != 0) {
		goto out; /* $TMPDIR, cleaned also after a kill */
	}
	copy_str(res->build_dir, sizeof(res->build_dir), s.root);
	s.src = menv_xasprintf("%s/ops", s.root);
	s.build = menv_xasprintf("%s/build", s.root);
	rc = copy_tree(ops, s.src, 0, err);
	if (rc) {
		menv_error_prefix(err, "while copying the ops/ sources");
		goto out;
	}
	snprintf(res->log_path, sizeof(res->log_path), "%s/smoke-check.log", meta);
	s.log = fopen(res->log_path, "we");
	if (!s.log) {
		snprintf(res->log_path, sizeof(res->log_path), "%s/smoke-check.log", s.root);
		s.log = fopen(res->log_path, "we");
	}
	if (!s.log) {
		rc = menv_error_sys(err, MENV_EIO, "cannot write '%s'", res->log_path);
		goto out;
	}
	fprintf(s.log, "menv smoke check of '%s' (ops sources '%s', built in '%s')\n", prefix, ops,
	        s.root);
	env_build(&s);

	rc = step_toolchain(&s, &stop, err);
	if (!rc && !stop)
		rc = step_build(&s, "configure", &stop, err);
	if (!rc && !stop)
		rc = step_build(&s, "build", &stop, err);
	if (!rc && !stop)
		rc = step_test(&s, "host tests", "host", err);
	if (!rc && !stop)
		rc = step_test(&s, "GPU tests", "gpu", err);
	if (!rc && !stop)
		rc = step_test(&s, "python", "python", err);
	if (!rc && !stop)
		rc = step_test(&s, "torch", "torch", err);
	if (rc)
		res->passed = false;
out:
	if (s.log)
		fclose(s.log);
	/* a passed check leaves nothing in TMPDIR, nor does an interrupted one */
	if (s.root && !s.o->keep_build &&
	    ((!rc && res->passed && strncmp(res->log_path, s.root, strlen(s.root))) ||
	     rc == MENV_EINTR)) {
		remove_tree(s.root);
		res->build_dir[0] = '\0';
	}
	menv_strvec_clear(&s.env);
	free(s.src);
	free(s.build);
	free(s.root);
	free(meta);
	free(cfg);
	return rc;
}

/* The toolchain probe on its own, outside a smoke check (no build folder, no log): `res`
 * (zeroed first) as probe() fills it, in the check's scrubbed shell with the prefix's
 * activation. One probe for menv_smoke_host_compiler and menv_smoke_probe_line. Errors:
 * those of probe() (MENV_EIO). */
static int probe_prefix(const char *prefix, struct menv_smoke_result *res, struct menv_error *err)
{
	struct menv_smoke_opts dflt = {0};
	struct smoke s = {.prefix = prefix, .o = &dflt, .res = res, .root = (char *)"/"};
	int rc;

	memset(res, 0, sizeof(*res));
	env_build(&s);
	rc = probe(&s, err);
	menv_strvec_clear(&s.env);
	return rc;
}

int menv_smoke_host_compiler(const char *prefix, char **problem, struct menv_error *err)
{
	struct menv_smoke_result res;
	int rc = probe_prefix(prefix, &res, err);

	*problem = rc ? NULL : host_compiler_problem(&res);
	return rc;
}

int menv_smoke_probe_line(const char *prefix, char **line, struct menv_error *err)
{
	struct menv_smoke_result res;
	int rc = probe_prefix(prefix, &res, err);

	*line = rc ? NULL
	           : menv_xasprintf("probe nvcc %s %s, c++ %s %s",
	                            res.nvcc_path[0] ? res.nvcc_path : "none",
	                            res.nvcc_version[0] ? res.nvcc_version : "-",
	                            res.cxx_path[0] ? res.cxx_path : "none",
	                            res.cxx_version[0] ? res.cxx_version : "-");
	return rc;
}

json_t *menv_smoke_result_json(const struct menv_smoke_result *r)
{
	json_t *j = json_object(), *steps = json_array(), *perf = json_array(),
	       *hints = json_array();
	static const char *const verdicts[] = {"passed", "failed", "skipped"};
	bool gpu_skipped = false;

	for (size_t i = 0; i < r->n_steps; i++) {
		const struct menv_smoke_step *st = &r->steps[i];
		json_array_append_new(steps, json_pack("{s:s, s:s, s:f, s:s}", "name", st->name,
		                                       "verdict", verdicts[st->verdict], "seconds",
		                                       st->seconds, "summary", st->summary));
		if (!strcmp(st->name, "GPU tests") && st->verdict == MENV_SMOKE_SKIP)
			gpu_skipped = true;
	}
	for (size_t i = 0; i < r->n_perf; i++)
		json_array_append_new(perf,
		                      json_pack("{s:s, s:f, s:f, s:f}", "what", r->perf[i].what,
		                                "ms", r->perf[i].ms, "gbs", r->perf[i].gbs,
		                                "peak_gbs", r->perf[i].peak_gbs));
	for (size_t i = 0; i < r->n_hints; i++)
		json_array_append_new(hints, json_string(r->hints[i]));
#define STR_OR_NULL(s) ((s)[0] ? json_string(s) : json_null())
	json_object_set_new(j, "status", json_string(r->passed ? "passed" : "failed"));
	if (r->unchanged) { /* not run: the last check's verdict stands */
		json_object_set_new(j, "unchanged_since", json_string(r->unchanged_since));
		json_decref(steps), json_decref(perf), json_decref(hints);
		return j;
	}
	json_object_set_new(j, "gpu", json_boolean(r->gpu_ran));
	json_object_set_new(j, "gpu_skipped", json_boolean(gpu_skipped));
	json_object_set_new(j, "nvcc_version", STR_OR_NULL(r->nvcc_version));
	json_object_set_new(j, "nvcc", STR_OR_NULL(r->nvcc_path));
	json_object_set_new(j, "cxx_version", STR_OR_NULL(r->cxx_version));
	json_object_set_new(j, "cxx", STR_OR_NULL(r->cxx_path));
	json_object_set_new(j, "cxx_from_environment", json_boolean(r->cxx_in_env));
	json_object_set_new(j, "driver_cuda", STR_OR_NULL(r->driver_cuda));
	json_object_set_new(j, "gpu_name", STR_OR_NULL(r->gpu));
	json_object_set_new(j, "compute_capability", STR_OR_NULL(r->compute_cap));
	json_object_set_new(j, "targets", STR_OR_NULL(r->targets));
	json_object_set_new(j, "steps", steps);
	json_object_set_new(j, "bandwidth", perf);
	json_object_set_new(j, "hints", hints);
	json_object_set_new(j, "log", STR_OR_NULL(r->log_path));
	json_object_set_new(j, "build_dir", STR_OR_NULL(r->build_dir));
	json_object_set_new(j, "timestamp", json_integer((json_int_t)time(NULL)));
#undef STR_OR_NULL
	return j;
}

int menv_smoke_write_record(const char *prefix, const struct menv_smoke_result *res,
                            struct menv_error *err)
{
	json_t *j = menv_smoke_result_json(res);
	char *dump = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *path = menv_xasprintf("%s/conda-meta/menv-smoke-check", prefix);
	int rc = menv_write_file_atomic(path, dump, strlen(dump), err);

	free(path);
	free(dump);
	json_decref(j);
	return rc;
}

char *menv_smoke_result_line(const struct menv_smoke_result *res)
{
	const char *gpu = "";
	if (res->unchanged)
		return menv_xasprintf("Smoke check: toolchain, ops/ sources and driver unchanged "
		                      "since %s, when it passed (--smoke-check runs it again)",
		                      res->unchanged_since);
	for (size_t i = 0; i < res->n_steps; i++)
		if (!strcmp(res->steps[i].name, "GPU tests") &&
		    res->steps[i].verdict == MENV_SMOKE_SKIP)
			gpu = res->steps[i].summary;
	if (res->passed)
		return menv_xasprintf("Smoke check passed%s%s%s; log: %s", gpu[0] ? " (" : "", gpu,
		                      gpu[0] ? ")" : "", res->log_path);
	return menv_xasprintf("smoke check failed (the environment is kept); log: %s%s%s",
	                      res->log_path, res->build_dir[0] ? "; build directory kept: " : "",
	                      res->build_dir);
}
