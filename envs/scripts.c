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

#include "child.h"
#include "link.h"
#include "prefix.h"

/* Children that create files (link scripts, pip, compileall) get the umask the process
 * started with back explicitly (menv_umask: libraries set it to 0 for an instant while they
 * work): what they create must not depend on timing. */
void menv_child_umask(void)
{
	umask(menv_umask());
}

mode_t menv_start_umask(void)
{
	return menv_umask();
}

int menv_run_link_script(const char *prefix, const char *script, const char *action,
                         const char *name, const char *version, int64_t build_number,
                         const char *dist, struct menv_buf *output, struct menv_error *err)
{
	/* the script's path is $0, never part of the text */
	char **argv = menv_sh_argv("/bin/bash",
	                           "for __menv_f in \"$PREFIX\"/etc/conda/activate.d/*.sh; do "
	                           "[ -f \"$__menv_f\" ] && . \"$__menv_f\"; done; "
	                           "unset __menv_f; . \"$0\"",
	                           script, NULL, 0);
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		free(argv);
		return menv_error_sys(err, MENV_EIO, "cannot run the %s script of '%s'", action,
		                      dist);
	}
	pid = menv_child_fork(); /* its own group, killed with menv and by Ctrl-C */
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		free(argv);
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
		execv(argv[0], argv);
		_exit(127);
	}
	free(argv);
	close(pfd[1]);
	int status = 0;
	int rc = menv_child_wait(pid, pfd[0], output, 1u << 20, NULL, &status);
	close(pfd[0]);
	if (rc == MENV_EINTR)
		return menv_error_set(err, MENV_EINTR, "interrupted during the %s script of '%s'",
		                      action, dist);
	if (rc)
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

char *menv_pyc_path(const char *py, const char *pyver)
{
	/* conda's pyver_string: the version without its dots */
	char tag[32];
	size_t t = 0;
	for (const char *s = pyver; *s && t < sizeof(tag) - 1; s++)
		if (*s != '.')
			tag[t++] = *s;
	tag[t] = '\0';
	if (tag[0] == '2')
		return menv_xasprintf("%sc", py);
	const char *slash = strrchr(py, '/');
	const char *base = slash ? slash + 1 : py;
	const char *dot = strrchr(base, '.');
	int dirlen = slash ? (int)(slash - py) : 0;
	int stemlen = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
	const char *ext = dot && dot != base ? dot : "";
	if (slash)
		return menv_xasprintf("%.*s/__pycache__/%.*s.cpython-%s%sc", dirlen, py, stemlen,
		                      base, tag, ext);
	return menv_xasprintf("__pycache__/%.*s.cpython-%s%sc", stemlen, base, tag, ext);
}

#define MENV_PYC_JOBS 4

/* Starts `python -Wi -m compileall -q -l -i - [-j 0]` in the transaction's root and writes
 * it `list` (newline-separated relative paths). Returns its pid, or -1 when it could not be
 * started. */
static pid_t start_compileall(const struct menv_journal *t, const char *python, bool jobs,
                              const struct menv_buf *list)
{
	int in[2];

	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = menv_child_fork();
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
		/* the order of a frozenset constant in a .pyc follows the string hash (python
		 * 3.9: 36 of pip's, wheel's and ipython's 1150 .pyc): conda leaves the seed
		 * random, so its .pyc of such files change from run to run; a fixed seed gives
		 * one of them, every time */
		setenv("PYTHONHASHSEED", "0", 1);
		/* conda's command, from the prefix with relative paths: the file names inside the
		 * .pyc are prefix-relative, the same in every prefix (and in a staging dir) */
		if (jobs)
			execl(python, python, "-Wi", "-m", "compileall", "-q", "-l", "-i", "-",
			      "-j", "0", (char *)NULL);
		else
			execl(python, python, "-Wi", "-m", "compileall", "-q", "-l", "-i", "-",
			      (char *)NULL);
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

int menv_compile_pyc(struct menv_journal *t, const char *pyver, json_t *const *py,
                     json_t *const *pyc, size_t n, const struct menv_pyc_cache *cache,
                     const struct menv_install_opts *opts, size_t *written, struct menv_error *err)
{
	char *python = NULL;
	struct menv_strvec pycs = MENV_STRVEC_INIT;
	struct menv_buf list[MENV_PYC_JOBS];
	size_t *owner = NULL, nowner = 0, made = 0, ncompile = 0;
	size_t *first = menv_xcalloc(n + 1, sizeof(*first));
	char **src = NULL;     /* per .pyc: the package cache's copy linked, or NULL */
	int64_t *csize = NULL; /* its size */
	bool *keep = NULL;     /* per package: compiled here, to be kept in the cache */
	char ***pyck = NULL;   /* per package: its .pyc paths (into pycs) */
	int maj = 0, min = 0, rc = 0;

	for (size_t j = 0; j < MENV_PYC_JOBS; j++)
		menv_buf_init(&list[j]);
	if (!pyver || sscanf(pyver, "%d.%d", &maj, &min) != 2)
		goto out;
	/* conda's get_python_short_path: bin/python3.9 */
	python = menv_xasprintf("%s/bin/python%s", t->root, pyver);
	if (access(python, X_OK) < 0) {
		free(python);
		python = menv_xasprintf("%s/bin/python", t->root);
		if (access(python, X_OK) < 0)
			goto out;
	}
	for (size_t k = 0; k < n; k++) {
		size_t i;
		json_t *f;
		first[k] = pycs.n;
		json_array_foreach(py[k], i, f)
		{
			const char *p = json_string_value(f);
			if (!p) {
				rc = menv_error_set(err, MENV_EPARSE, "a .py path is not a string");
				goto out;
			}
			char *c = menv_pyc_path(p, pyver);
			/* compileall writes it: its directories must be real ones (python
			 * replaces the .pyc itself with a rename, never writing through a link
			 * there) */
			rc = menv_journal_mkparents(t, c, err);
			if (rc)
				menv_error_prefix(err, "cannot write '%s'", c);
			if (!rc)
				rc = menv_journal_created(t, c, err);
			if (rc) {
				free(c);
				goto out;
			}
			menv_strvec_push_owned(&pycs, c);
			owner = menv_xrealloc(owner, (nowner + 1) * sizeof(*owner));
			owner[nowner++] = k;
		}
	}
	first[n] = pycs.n;
	if (!pycs.n)
		goto out;

	/* the .pyc kept in the package cache for this python, linked as they are */
	src = menv_xcalloc(pycs.n, sizeof(*src));
	csize = menv_xcalloc(pycs.n, sizeof(*csize));
	keep = menv_xcalloc(n + 1, sizeof(*keep));
	unsigned char magic[4];
	bool known = cache && cache->pydir && menv_pyccache_magic(cache->pydir, magic);
	bool no_hardlink = false;
	for (size_t k = 0; k < n; k++) {
		keep[k] = !known || !cache->pkgs[k].cacheable ||
		          !menv_pyccache_find(cache->pkgs[k].pkgdir, magic, cache->site, t->rootfd,
		                              py[k], src + first[k], csize + first[k]);
		for (size_t j = first[k]; j < first[k + 1]; j++)
			if (src[j] && menv_pyccache_link(t->rootfd, src[j], pycs.v[j],
			                                 opts->link_mode, &no_hardlink) < 0) {
				/* compiled instead (python replaces what a failed copy left) */
				free(src[j]);
				src[j] = NULL;
			}
	}
	for (size_t j = 0; j < pycs.n; j++)
		if (!src[j]) {
			menv_buf_adds(&list[0], json_string_value(json_array_get(
			                                py[owner[j]], j - first[owner[j]])));
			menv_buf_addch(&list[0], '\n');
			ncompile++;
		}

	/* compileall's -j spreads the files of directories, not of a list: the list is dealt
	 * round-robin to one python per core (at most MENV_PYC_JOBS, and one per 64 files), each
	 * start costing about 0.05 s of CPU; the files stay the same, only who writes them */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t jobs = ncompile ? ncompile / 64 + 1 : 0;
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
	/* conda: "-j 0" when python is 3.6 or newer */
	bool j0 = maj >= 3 && min > 5;
	pid_t pids[MENV_PYC_JOBS];
	size_t started = 0;
	for (; started < jobs; started++) {
		pids[started] = start_compileall(t, python, j0, &list[started]);
		if (pids[started] < 0)
			break;
	}
	bool failed = false, stopped = false;
	for (size_t j = 0; j < started; j++) {
		int st = 0;
		int w = menv_child_wait(pids[j], -1, NULL, 0, NULL, &st);
		stopped |= w == MENV_EINTR;
		failed |= w != 0 || compile_failed(st);
	}
	if (stopped) {
		rc = menv_error_set(err, MENV_EINTR, "interrupted while compiling .pyc files");
		goto out;
	}
	if (started < jobs) {
		rc = menv_error_sys(err, MENV_EIO, "cannot run '%s'", python);
		goto out;
	}
	for (size_t k = 0; k < pycs.n; k++) {
		struct stat sb;
		json_t *pd = json_object();
		json_object_set_new(pd, "_path", json_string(pycs.v[k]));
		json_object_set_new(pd, "path_type", json_string("pyc_file"));
		if (src[k]) {
			json_object_set_new(pd, "size_in_bytes",
			                    json_integer((json_int_t)csize[k]));
			made++;
		} else if (menv_beneath_lstat(t->rootfd, pycs.v[k], &sb, NULL) == 0) {
			json_object_set_new(pd, "size_in_bytes",
			                    json_integer((json_int_t)sb.st_size));
			made++;
		} else if (strstr(pycs.v[k], "/__pycache__/")) {
			/* no .pyc: the __pycache__ made for it would outlive the package (conda
			 * still lists the .pyc, without a size) */
			char *dir = menv_xstrdup(pycs.v[k]);
			*strrchr(dir, '/') = '\0';
			menv_beneath_unlink(t->rootfd, dir, AT_REMOVEDIR, NULL);
			free(dir);
		}
		json_array_append_new(pyc[owner[k]], pd);
	}
	if (failed && opts->cb) {
		char *msg = menv_xasprintf("could not compile every .py file with '%s' (%zu of %zu "
		                           ".pyc files written)",
		                           python, made, pycs.n);
		opts->cb(opts->ud, MENV_ENV_WARNING, msg);
		free(msg);
	}
	/* what was compiled here, kept for the next prefix */
	if (cache && ncompile) {
		pyck = menv_xcalloc(n + 1, sizeof(*pyck));
		for (size_t k = 0; k < n; k++)
			pyck[k] = pycs.v + first[k];
		menv_pyccache_publish(cache, t->rootfd, py, (char *const *const *)pyck, keep, n);
	}
out:
	if (written)
		*written = made;
	for (size_t j = 0; src && j < pycs.n; j++)
		free(src[j]);
	free(src);
	free(csize);
	free(keep);
	free(pyck);
	free(first);
	menv_strvec_clear(&pycs);
	for (size_t j = 0; j < MENV_PYC_JOBS; j++)
		menv_buf_release(&list[j]);
	free(owner);
	free(python);
	return rc;
}
