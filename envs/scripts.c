/*
 * scripts.c - running programs of the environment during a transaction: the link scripts
 * of packages (`pre-link`, `post-link`, `pre-unlink`, CEP-34 / conda-build's convention
 * `bin/.<name>-<action>.sh`) and the environment's python compiling the `.py` files of
 * noarch python packages (CEP-20). What these programs write is theirs: a link script runs
 * with the user's rights and can write anywhere (as with conda); menv only makes sure that
 * the directories compileall writes .pyc files into are real directories of the prefix.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link.h"
#include "prefix.h"

/* Reads fd to EOF into out (may be NULL: discarded). */
/* The umask the process started with. Libraries set it to 0 for an instant while they work
 * (libarchive does, from any thread), so children that create files (link scripts, pip,
 * compileall) get it back explicitly: what they create must not depend on timing. */
static mode_t start_umask = 022;

__attribute__((constructor)) static void save_umask(void)
{
	start_umask = umask(0);
	umask(start_umask);
}

void menv_child_umask(void)
{
	umask(start_umask);
}

static void drain(int fd, struct menv_buf *out)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out && out->len < (1u << 20))
			menv_buf_add(out, buf, (size_t)n);
	}
}

static int wait_child(pid_t pid)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return status;
}

int menv_run_link_script(const char *prefix, const char *script, const char *action,
                         const char *name, const char *version, int64_t build_number,
                         const char *dist, struct menv_buf *output, struct menv_error *err)
{
	static const char snippet[] =
	        "for __menv_f in \"$PREFIX\"/etc/conda/activate.d/*.sh; do "
	        "[ -f \"$__menv_f\" ] && . \"$__menv_f\"; done; unset __menv_f; . \"$0\"";
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return menv_error_sys(err, MENV_EIO, "cannot run the %s script of '%s'", action,
		                      dist);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return menv_error_sys(err, MENV_EIO, "cannot run the %s script of '%s'", action,
		                      dist);
	}
	if (pid == 0) {
		char num[32];
		int devnull = open("/dev/null", O_RDONLY);
		menv_child_umask();
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		snprintf(num, sizeof(num), "%lld", (long long)build_number);
		setenv("PREFIX", prefix, 1);
		setenv("CONDA_PREFIX", prefix, 1);
		setenv("PKG_NAME", name, 1);
		setenv("PKG_VERSION", version, 1);
		setenv("PKG_BUILDNUM", num, 1);
		setenv("LC_COLLATE", "C", 1); /* activate.d scripts in byte order */
		const char *path = getenv("PATH");
		char *np = menv_xasprintf("%s/bin%s%s", prefix, path ? ":" : "", path ? path : "");
		setenv("PATH", np, 1);
		execl("/bin/bash", "bash", "-c", snippet, script, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	drain(pfd[0], output);
	close(pfd[0]);
	int status = wait_child(pid);
	if (status < 0)
		return menv_error_sys(err, MENV_EIO, "cannot wait for the %s script of '%s'",
		                      action, dist);
	if (WIFSIGNALED(status))
		return menv_error_set(err, MENV_EIO, "%s script of '%s' was killed by signal %d",
		                      action, dist, WTERMSIG(status));
	if (WEXITSTATUS(status) == 127 && access("/bin/bash", X_OK) < 0)
		return menv_error_set(err, MENV_EIO,
		                      "cannot run the %s script of '%s': no /bin/bash", action,
		                      dist);
	if (WEXITSTATUS(status))
		return menv_error_set(err, MENV_EIO, "%s script of '%s' failed with exit status %d",
		                      action, dist, WEXITSTATUS(status));
	return 0;
}

/* "<dir>/__pycache__/<stem>.cpython-XY.pyc" for "<dir>/<stem>.py" (PEP 3147). */
static char *pyc_path(const char *py, const char *tag)
{
	const char *slash = strrchr(py, '/');
	const char *base = slash ? slash + 1 : py;
	int dirlen = slash ? (int)(slash - py) : 0;
	int stemlen = (int)(strlen(base) - 3);
	if (slash)
		return menv_xasprintf("%.*s/__pycache__/%.*s.%s.pyc", dirlen, py, stemlen, base,
		                      tag);
	return menv_xasprintf("__pycache__/%.*s.%s.pyc", stemlen, base, tag);
}

/* Starts `python -m compileall -i -` in the staging root and writes it `list` (newline-
 * separated relative paths). Returns its pid, or -1 when it could not be started. */
#define MENV_PYC_JOBS 4

static pid_t start_compileall(const struct menv_journal *t, const char *python, const char *prefix,
                              const struct menv_buf *list)
{
	int in[2];

	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		menv_child_umask();
		dup2(in[0], 0);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		if (chdir(t->root) < 0)
			_exit(126);
		unsetenv("PYTHONPYCACHEPREFIX");
		unsetenv("PYTHONHOME");
		unsetenv("PYTHONPATH");
		/* the file names inside the .pyc are the final prefix's, not the staging dir's
		 * (tracebacks point at real files): the list is relative, -p prepends */
		execl(python, python, "-Wi", "-m", "compileall", "-q", "-l", "-p", prefix, "-i",
		      "-", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &ign, &old);
	for (size_t off = 0; off < list->len;) {
		ssize_t w = write(in[1], list->buf + off, list->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(in[1]);
	sigaction(SIGPIPE, &old, NULL);
	return pid;
}

static bool compile_failed(int status)
{
	return status < 0 || !WIFEXITED(status) || WEXITSTATUS(status);
}

int menv_compile_pyc(struct menv_journal *t, const char *prefix, const char *pyver,
                     json_t *const *files, json_t *const *paths, size_t n,
                     const struct menv_install_opts *opts, struct menv_error *err)
{
	char *python = menv_xasprintf("%s/bin/python", t->root);
	char tag[32] = "cpython-";
	struct menv_strvec pycs = MENV_STRVEC_INIT;
	struct menv_buf list[MENV_PYC_JOBS];
	size_t *owner = NULL, nowner = 0;
	int rc = 0;

	for (size_t j = 0; j < MENV_PYC_JOBS; j++)
		menv_buf_init(&list[j]);

	if (!pyver || access(python, X_OK) < 0)
		goto out;
	for (const char *s = pyver, *dot = NULL; *s && strlen(tag) < sizeof(tag) - 1; s++) {
		if (*s == '.') {
			if (dot)
				break;
			dot = s;
			continue;
		}
		size_t l = strlen(tag);
		tag[l] = *s;
		tag[l + 1] = '\0';
	}
	for (size_t k = 0; k < n; k++) {
		size_t i;
		json_t *f;
		json_array_foreach(files[k], i, f)
		{
			const char *p = json_string_value(f);
			size_t l = p ? strlen(p) : 0;
			if (l < 4 || strcmp(p + l - 3, ".py"))
				continue;
			char *pyc = pyc_path(p, tag);
			/* compileall writes it: its directories must be real ones (python
			 * replaces the .pyc itself with a rename, never writing through a link
			 * there) */
			rc = menv_journal_mkparents(t, pyc, err);
			if (rc)
				menv_error_prefix(err, "cannot write '%s'", pyc);
			if (!rc)
				rc = menv_journal_created(t, pyc, err);
			if (rc) {
				free(pyc);
				goto out;
			}
			menv_strvec_push_owned(&pycs, pyc);
			owner = menv_xrealloc(owner, (nowner + 1) * sizeof(*owner));
			owner[nowner++] = k;
			menv_buf_adds(&list[0], p);
			menv_buf_addch(&list[0], '\n');
		}
	}
	if (!pycs.n)
		goto out;

	/* compileall's -j spreads the files of directories, not of a list: the list is dealt
	 * round-robin to one python per core (at most MENV_PYC_JOBS, and one per 64 files), each
	 * start costing about 0.05 s of CPU; the files stay the same, only who writes them */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t jobs = pycs.n / 64 + 1;
	if (jobs > (size_t)(cpus > 0 ? cpus : 1))
		jobs = (size_t)(cpus > 0 ? cpus : 1);
	if (jobs > MENV_PYC_JOBS)
		jobs = MENV_PYC_JOBS;
	if (jobs > 1) {
		struct menv_buf all = list[0];
		size_t line = 0;
		menv_buf_init(&list[0]);
		for (const char *q = all.buf, *e; q && *q; q = e + 1, line++) {
			e = strchr(q, '\n');
			menv_buf_add(&list[line % jobs], q, (size_t)(e - q) + 1);
		}
		menv_buf_release(&all);
	}
	pid_t pids[MENV_PYC_JOBS];
	size_t started = 0;
	for (; started < jobs; started++) {
		pids[started] = start_compileall(t, python, prefix, &list[started]);
		if (pids[started] < 0)
			break;
	}
	bool failed = false;
	for (size_t j = 0; j < started; j++)
		failed |= compile_failed(wait_child(pids[j]));
	if (started < jobs) {
		rc = menv_error_sys(err, MENV_EIO, "cannot run '%s'", python);
		goto out;
	}
	size_t made = 0;
	for (size_t k = 0; k < pycs.n; k++) {
		if (menv_beneath_exists(t->rootfd, pycs.v[k])) {
			json_t *pd = json_object();
			json_object_set_new(pd, "_path", json_string(pycs.v[k]));
			json_object_set_new(pd, "path_type", json_string("pyc_file"));
			json_array_append_new(paths[owner[k]], pd);
			json_array_append_new(files[owner[k]], json_string(pycs.v[k]));
			made++;
		} else {
			/* no .pyc: the __pycache__ made for it would outlive the package */
			char *dir = menv_xstrdup(pycs.v[k]);
			*strrchr(dir, '/') = '\0';
			menv_beneath_unlink(t->rootfd, dir, AT_REMOVEDIR, NULL);
			free(dir);
		}
	}
	if (failed && opts->cb) {
		char *msg = menv_xasprintf("could not compile every .py file with '%s' (%zu of %zu "
		                           ".pyc files written)",
		                           python, made, pycs.n);
		opts->cb(opts->ud, MENV_ENV_WARNING, msg);
		free(msg);
	}
out:
	menv_strvec_clear(&pycs);
	for (size_t j = 0; j < MENV_PYC_JOBS; j++)
		menv_buf_release(&list[j]);
	free(owner);
	free(python);
	return rc;
}
