/*
 * pip.c - the `pip:` part of an environment: running the environment's own
 * `python -m pip install` after the conda packages are linked, and finding the
 * distributions pip installed (the `*.dist-info` folders of site-packages that no
 * conda-meta record owns, BR-021) for `menv list` and every export.
 *
 * pip runs in the final prefix (after the staging directory was renamed into place), so
 * scripts get the right shebangs and compiled paths; when it fails the caller removes the
 * whole new prefix (menv_pip_rollback_prefix), following no link inside it. What pip itself
 * writes is pip's; the files menv adds to a dist-info (MENV_SOURCE, a RECORD line) are
 * written beneath the prefix and never through a link (beneath.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "link.h"
#include "prefix.h"

/* PEP 503 normalisation: lower case, runs of '-', '_', '.' as one '-'. Caller frees. */
char *menv_pip_normalize(const char *name)
{
	struct menv_buf b = MENV_BUF_INIT;
	bool sep = false;
	for (const char *p = name; *p; p++) {
		if (*p == '-' || *p == '_' || *p == '.') {
			sep = true;
			continue;
		}
		if (sep && b.len)
			menv_buf_addch(&b, '-');
		sep = false;
		menv_buf_addch(&b, (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p));
	}
	return menv_buf_detach(&b);
}

/* The site-packages folders of a prefix: lib/python<pyver>/site-packages, or every
 * lib/pythonX.Y/site-packages when pyver is NULL. */
static void site_packages(const char *prefix, const char *pyver, struct menv_strvec *out)
{
	char *lib = menv_xasprintf("%s/lib", prefix);
	DIR *d = opendir(lib);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "python", 6) || !de->d_name[6])
			continue;
		if (pyver && strcmp(de->d_name + 6, pyver))
			continue;
		char *sp = menv_xasprintf("%s/%s/site-packages", lib, de->d_name);
		struct stat st;
		if (stat(sp, &st) == 0 && S_ISDIR(st.st_mode))
			menv_strvec_push_owned(out, sp);
		else
			free(sp);
	}
	if (d)
		closedir(d);
	free(lib);
}

/* "Name:" and "Version:" of a METADATA file (RFC 822 headers, up to the first blank line). */
static void read_metadata(const char *path, char **name, char **version)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '\n' || line[0] == '\r')
			break;
		line[strcspn(line, "\r\n")] = '\0';
		if (!strncmp(line, "Name:", 5) && !*name)
			*name = menv_xstrdup(line + 5 + strspn(line + 5, " \t"));
		else if (!strncmp(line, "Version:", 8) && !*version)
			*version = menv_xstrdup(line + 8 + strspn(line + 8, " \t"));
	}
	if (f)
		fclose(f);
}

/* The editable installs of `setup.py develop` (pip -e with a setup.py project) in the
 * site-packages folder `sp`: each <name>.egg-link names the project folder on its first
 * line, whose <name>.egg-info/PKG-INFO has Name and Version. Appended to *v (of *n). */
static void egg_links(const char *sp, struct menv_pip_dist **v, size_t *n)
{
	DIR *d = opendir(sp);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 10 || strcmp(de->d_name + l - 9, ".egg-link"))
			continue;
		char *link = menv_xasprintf("%s/%s", sp, de->d_name), line[4096] = "";
		FILE *f = fopen(link, "r");
		if (f && fgets(line, sizeof(line), f))
			line[strcspn(line, "\r\n")] = '\0';
		if (f)
			fclose(f);
		free(link);
		char *stem = menv_xstrndup(de->d_name, l - 9), *want = menv_pip_normalize(stem);
		char *name = NULL, *version = NULL;
		DIR *pd = line[0] == '/' ? opendir(line) : NULL;
		struct dirent *pe;
		while (pd && !name && (pe = readdir(pd))) {
			size_t pl = strlen(pe->d_name);
			if (pl < 10 || strcmp(pe->d_name + pl - 9, ".egg-info"))
				continue;
			char *meta = menv_xasprintf("%s/%s/PKG-INFO", line, pe->d_name);
			read_metadata(meta, &name, &version);
			free(meta);
			char *got = name ? menv_pip_normalize(name) : NULL;
			if (!got || !version || strcmp(got, want)) {
				free(name);
				free(version);
				name = version = NULL;
			}
			free(got);
		}
		if (pd)
			closedir(pd);
		if (name && version) {
			*v = menv_xrealloc(*v, (*n + 1) * sizeof(**v));
			struct menv_pip_dist *p = &(*v)[(*n)++];
			memset(p, 0, sizeof(*p));
			p->name = menv_pip_normalize(name);
			p->version = version;
			p->local = true;
			p->editable = menv_xstrdup(line);
			version = NULL;
		}
		free(name);
		free(version);
		free(stem);
		free(want);
	}
	if (d)
		closedir(d);
}

int menv_pip_list(const char *prefix, struct menv_pip_dist **out, size_t *n, struct menv_error *err)
{
	struct menv_prefix_record *recs = NULL;
	size_t nrecs = 0;
	struct menv_strvec sps = MENV_STRVEC_INIT;
	struct menv_strset owned = MENV_STRSET_INIT; /* dist-info dirs that conda records own */
	struct menv_pip_dist *v = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	rc = menv_prefix_records_load(prefix, &recs, &nrecs, err);
	if (rc)
		return rc;
	/* every "<...>/site-packages/<x>.dist-info" folder a conda package ships */
	for (size_t i = 0; i < nrecs; i++) {
		size_t k;
		json_t *f;
		json_array_foreach(json_object_get(recs[i].json, "files"), k, f)
		{
			const char *s = json_string_value(f);
			const char *di = s ? strstr(s, ".dist-info/") : NULL;
			if (!di)
				continue;
			const char *start = di;
			while (start > s && start[-1] != '/')
				start--;
			char *name = menv_xstrndup(start, (size_t)(di + 10 - start));
			menv_strset_add(&owned, name);
			free(name);
		}
	}
	/* only the environment's python sees them (those of an earlier python stay on disk,
	 * as conda leaves them, but are not listed) */
	char pyver[32] = "";
	for (size_t i = 0; i < nrecs; i++) {
		if (strcmp(recs[i].name, "python"))
			continue;
		const char *pv = recs[i].version, *dot = strchr(pv, '.');
		const char *end = dot ? strchr(dot + 1, '.') : NULL;
		size_t len = end ? (size_t)(end - pv) : strlen(pv);
		snprintf(pyver, sizeof(pyver), "%.*s", (int)len, pv);
	}
	site_packages(prefix, pyver[0] ? pyver : NULL, &sps);
	for (size_t s = 0; s < sps.n; s++) {
		DIR *d = opendir(sps.v[s]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (l < 11 || strcmp(de->d_name + l - 10, ".dist-info") ||
			    menv_strset_has(&owned, de->d_name))
				continue;
			char *dir = menv_xasprintf("%s/%s", sps.v[s], de->d_name);
			char *meta = menv_xasprintf("%s/METADATA", dir);
			char *name = NULL, *version = NULL;
			read_metadata(meta, &name, &version);
			free(meta);
			if (!name || !version) {
				free(name);
				free(version);
				free(dir);
				continue;
			}
			v = menv_xrealloc(v, (*n + 1) * sizeof(*v));
			struct menv_pip_dist *p = &v[(*n)++];
			memset(p, 0, sizeof(*p));
			p->name = menv_pip_normalize(name);
			p->version = version;
			free(name);
			/* PEP 610: where a direct URL install came from, and its hash */
			char *du = menv_xasprintf("%s/direct_url.json", dir);
			json_t *j = menv_json_load_file(du, 0, NULL);
			const char *url = json_string_value(json_object_get(j, "url"));
			const char *h = json_string_value(
			        json_object_get(json_object_get(j, "archive_info"), "hash"));
			if (url && strncmp(url, "file://", 7) != 0)
				p->url = menv_xstrdup(url);
			p->local = url && !strncmp(url, "file://", 7);
			if (p->local && json_is_true(json_object_get(json_object_get(j, "dir_info"),
			                                             "editable")))
				p->editable = menv_xstrdup(url + 7);
			if (url && h && !strncmp(h, "sha256=", 7))
				p->sha256 = menv_xstrdup(h + 7);
			/* menv's record of where the wheel came from (menv_pip_install) */
			char *mr = menv_xasprintf("%s/MENV_SOURCE", dir);
			json_t *m = menv_json_load_file(mr, 0, NULL);
			if (!p->url && json_string_value(json_object_get(m, "url")))
				p->url = menv_xstrdup(json_string_value(json_object_get(m, "url")));
			if (!p->sha256 && json_string_value(json_object_get(m, "sha256")))
				p->sha256 = menv_xstrdup(
				        json_string_value(json_object_get(m, "sha256")));
			json_decref(m);
			free(mr);
			json_decref(j);
			free(du);
			free(dir);
		}
		if (d)
			closedir(d);
		egg_links(sps.v[s], &v, n);
	}
	*out = v;
	menv_strset_clear(&owned);
	menv_strvec_clear(&sps);
	menv_prefix_records_free(recs, nrecs);
	return 0;
}

void menv_pip_dists_free(struct menv_pip_dist *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].editable);
		free(v[i].name);
		free(v[i].version);
		free(v[i].url);
		free(v[i].sha256);
	}
	free(v);
}

/* Runs argv (NULL-terminated) in `cwd` with stdout sent to stderr; returns its exit status,
 * or -1 when it could not run (errno). */
static int run_child(char *const *argv, const char *cwd, volatile int *cancel)
{
	pid_t pid;
	int st = 0;

	pid_t parent = getpid();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* pip must not outlive menv (killed, it would go on writing without the prefix
		 * lock) */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		menv_child_umask();
		dup2(2, 1);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		if (cwd && chdir(cwd) != 0)
			_exit(127);
		setenv("PIP_NO_INPUT", "1", 1);
		setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1", 1);
		setenv("PYTHONNOUSERSITE", "1", 1);
		unsetenv("PYTHONPATH");
		unsetenv("PYTHONHOME");
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
		if (cancel && *cancel)
			kill(pid, SIGTERM);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Lists `<stem>.dist-info/MENV_SOURCE` in the dist-info's RECORD (PEP 376: every installed
 * file), so that `pip uninstall` removes it with the rest and leaves no half dist-info.
 * `distinfo` is prefix-relative; nothing is written through a link. */
static void add_to_record(int rootfd, const char *distinfo, const char *stem)
{
	char *path = menv_xasprintf("%s/RECORD", distinfo);
	char *line = menv_xasprintf("%s.dist-info/MENV_SOURCE,,", stem);
	struct menv_buf b = MENV_BUF_INIT;
	int fd = -1;
	char chunk[8192];
	ssize_t n = -1;
	struct stat st;
	/* appended in place only when it is pip's own file, not a hard link (of the cache) */
	if (menv_beneath_open(rootfd, path, O_RDWR | O_APPEND, 0, &fd, NULL) == 0 &&
	    fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1)
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			menv_buf_add(&b, chunk, (size_t)n);
	if (fd >= 0 && n == 0 && !(b.buf && strstr(b.buf, line))) {
		char *add = menv_xasprintf("%s%s\n", b.len && b.buf[b.len - 1] != '\n' ? "\n" : "",
		                           line);
		if (write(fd, add, strlen(add)) < 0) {
			/* best effort: pip uninstall then leaves MENV_SOURCE behind */
		}
		free(add);
	}
	if (fd >= 0)
		close(fd);
	menv_buf_release(&b);
	free(line);
	free(path);
}

/* Records where each wheel came from, from pip's log ("Processing /x/y.whl", "Downloading
 * URL", "Added ... from URL#sha256=..."), in <dist-info>/MENV_SOURCE of the installed
 * distributions. Best effort: nothing is lost for the environment when this fails. */
static void record_sources(const char *prefix, const char *log, const struct menv_strvec *reqs)
{
	FILE *f = fopen(log, "r");
	char line[8192];
	json_t *byfile = json_object(); /* wheel file name -> {url, sha256} */

	/* "name @ URL --hash=sha256:HEX" lines (a lock's entries): pip verifies the hash and
	 * does not print it again */
	for (size_t i = 0; i < reqs->n; i++) {
		const char *at = strstr(reqs->v[i], " @ ");
		const char *h = strstr(reqs->v[i], "--hash=sha256:");
		if (!at || !h)
			continue;
		char *url = menv_xstrndup(at + 3, strcspn(at + 3, " "));
		const char *base = strrchr(url, '/');
		base = base ? base + 1 : url;
		if (strlen(h + 14) >= 64 && strstr(url, "://")) {
			json_t *e = json_object();
			if (strncmp(url, "file://", 7))
				json_object_set_new(e, "url", json_string(url));
			char *sha = menv_xstrndup(h + 14, 64);
			json_object_set_new(e, "sha256", json_string(sha));
			free(sha);
			json_object_set_new(byfile, base, e);
		}
		free(url);
	}

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		const char *u = strstr(line, "http://");
		if (!u)
			u = strstr(line, "https://");
		if (!u)
			u = strstr(line, "file://");
		if (!u)
			continue;
		size_t ul = strcspn(u, " ()'\"");
		char *url = menv_xstrndup(u, ul);
		char *frag = strchr(url, '#');
		char *sha = NULL;
		if (frag) {
			if (!strncmp(frag, "#sha256=", 8))
				sha = menv_xstrndup(frag + 8, 64);
			*frag = '\0';
		}
		const char *base = strrchr(url, '/');
		base = base ? base + 1 : url;
		if (strstr(base, ".whl") || strstr(base, ".tar.gz") || strstr(base, ".zip")) {
			json_t *e = json_object_get(byfile, base);
			if (!e) {
				e = json_object();
				json_object_set_new(byfile, base, e);
			}
			if (!json_object_get(e, "url") && strncmp(url, "file://", 7))
				json_object_set_new(e, "url", json_string(url));
			if (sha && strlen(sha) == 64)
				json_object_set_new(e, "sha256", json_string(sha));
		}
		free(sha);
		free(url);
	}
	if (f)
		fclose(f);
	/* a wheel "name-version-..." belongs to the dist-info "name-version.dist-info" */
	struct menv_strvec sps = MENV_STRVEC_INIT;
	int rootfd = -1;
	site_packages(prefix, NULL, &sps);
	menv_beneath_root(prefix, &rootfd, NULL);
	const char *fn;
	json_t *e;
	json_object_foreach(byfile, fn, e)
	{
		const char *d1 = strchr(fn, '-');
		const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
		if (!d2 || !strstr(fn, ".whl"))
			continue;
		char *stem = menv_xstrndup(fn, (size_t)(d2 - fn));
		for (size_t s = 0; rootfd >= 0 && s < sps.n; s++) {
			char *dir = menv_xasprintf("%s/%s.dist-info", sps.v[s] + strlen(prefix) + 1,
			                           stem);
			struct stat st;
			if (menv_beneath_lstat(rootfd, dir, &st, NULL) == 0 &&
			    S_ISDIR(st.st_mode)) {
				char *path = menv_xasprintf("%s/MENV_SOURCE", dir);
				char *dump = json_dumps(e, JSON_SORT_KEYS);
				/* a new file: one there may be a hard link (into the package cache) */
				menv_beneath_unlink(rootfd, path, 0, NULL);
				if (dump && menv_beneath_write(rootfd, path, dump, strlen(dump),
				                               0644, O_EXCL, NULL) == 0)
					add_to_record(rootfd, dir, stem);
				free(dump);
				free(path);
			}
			free(dir);
		}
		free(stem);
	}
	if (rootfd >= 0)
		close(rootfd);
	menv_strvec_clear(&sps);
	json_decref(byfile);
}

/* pip reads `-r FILE` and `-c FILE` relative to the requirements file that names them, and
 * menv's lives in a temporary folder: a relative FILE is made absolute against `cwd` (the
 * environment file's folder), where conda's requirements file would be. Caller frees. */
static char *anchored_line(const char *line, const char *cwd)
{
	static const char *const opts[] = {"-r", "--requirement", "-c", "--constraint",
	                                   "-e", "--editable",    NULL};
	for (size_t i = 0; cwd && opts[i]; i++) {
		size_t n = strlen(opts[i]);
		if (strncmp(line, opts[i], n) || (line[n] != ' ' && line[n] != '='))
			continue;
		const char *path = line + n + 1;
		path += strspn(path, " \t");
		/* a VCS or URL editable (git+https://...) stays as written */
		if (!*path || *path == '/' || strstr(path, "://") || strchr(path, '+'))
			break;
		return menv_xasprintf("%s %s/%s", opts[i], cwd, path);
	}
	return menv_xstrdup(line);
}

bool menv_pip_cli_option(const char *line)
{
	static const char *const opts[] = {"--no-build-isolation",
	                                   "--no-deps",
	                                   "--use-pep517",
	                                   "--no-use-pep517",
	                                   "--no-cache-dir",
	                                   "--force-reinstall",
	                                   "--ignore-installed",
	                                   "--upgrade",
	                                   "-U",
	                                   NULL};
	for (size_t i = 0; opts[i]; i++)
		if (!strcmp(line, opts[i]))
			return true;
	return false;
}

int menv_pip_install(const char *prefix, const struct menv_pip_request *req, struct menv_error *err)
{
	char *python = menv_xasprintf("%s/bin/python", prefix);
	char tmpl[] = "/tmp/menv-pip-XXXXXX";
	char *dir = NULL, *reqfile = NULL, *log = NULL;
	struct menv_buf text = MENV_BUF_INIT;
	struct menv_strvec argv = MENV_STRVEC_INIT;
	int rc = 0;

	if (access(python, X_OK) != 0) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "the environment has no python to run pip "
		                    "with ('%s'): add 'python' and 'pip' to the conda dependencies",
		                    python);
		goto out;
	}
	dir = mkdtemp(tmpl) ? menv_xstrdup(tmpl) : NULL;
	if (!dir) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create a temporary directory");
		goto out;
	}
	reqfile = menv_xasprintf("%s/requirements.txt", dir);
	log = menv_xasprintf("%s/pip.log", dir);
	for (size_t i = 0; i < req->requirements.n; i++) {
		if (menv_pip_cli_option(req->requirements.v[i]))
			continue; /* pip refuses them in a requirements file: below, on its line */
		char *line = anchored_line(req->requirements.v[i], req->cwd);
		menv_buf_addf(&text, "%s\n", line);
		free(line);
	}
	rc = menv_write_file_atomic(reqfile, text.buf, text.len, err);
	if (rc)
		goto out;
	menv_strvec_push(&argv, python);
	menv_strvec_push(&argv, "-m");
	menv_strvec_push(&argv, "pip");
	menv_strvec_push(&argv, "install");
	menv_strvec_push(&argv, "--no-input");
	menv_strvec_push(&argv, "--disable-pip-version-check");
	menv_strvec_push(&argv, "--no-warn-script-location");
	menv_strvec_push(&argv, "--log");
	menv_strvec_push(&argv, log);
	/* an explicit prefix: the environment's own site-packages even where the python's
	 * default scheme points elsewhere (Debian's patched distutils: <prefix>/local/...) */
	menv_strvec_push(&argv, "--prefix");
	menv_strvec_push(&argv, prefix);
	if (req->no_deps)
		menv_strvec_push(&argv, "--no-deps");
	if (req->require_hashes)
		menv_strvec_push(&argv, "--require-hashes");
	if (req->quiet)
		menv_strvec_push(&argv, "-q");
	for (size_t i = 0; i < req->options.n; i++)
		menv_strvec_push(&argv, req->options.v[i]);
	for (size_t i = 0; i < req->requirements.n; i++)
		if (menv_pip_cli_option(req->requirements.v[i]) &&
		    !(req->no_deps && !strcmp(req->requirements.v[i], "--no-deps")))
			menv_strvec_push(&argv, req->requirements.v[i]);
	menv_strvec_push(&argv, "-r");
	menv_strvec_push(&argv, reqfile);
	menv_strvec_push_owned(&argv, NULL);
	int st = run_child(argv.v, req->cwd, req->cancel);
	if (st < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot run '%s -m pip'", python);
	} else if (req->cancel && *req->cancel) {
		rc = menv_error_set(err, MENV_EINTR, "interrupted while pip was installing");
	} else if (st != 0) {
		/* the requirements themselves, not the option lines (--index-url ...) */
		struct menv_buf what = MENV_BUF_INIT;
		size_t nreq = 0;
		for (size_t i = 0; i < req->requirements.n; i++) {
			const char *r = req->requirements.v[i];
			if (r[0] == '-' && strncmp(r, "-e", 2) && strncmp(r, "-r", 2))
				continue;
			if (nreq < 3)
				menv_buf_addf(&what, "%s%s", nreq ? ", " : "", r);
			nreq++;
		}
		rc = menv_error_set(err, MENV_EIO,
		                    "pip failed (exit %d) installing %zu requirement%s (%s%s)", st,
		                    nreq, nreq == 1 ? "" : "s", what.buf ? what.buf : "",
		                    nreq > 3 ? ", ..." : "");
		menv_buf_release(&what);
	} else {
		record_sources(prefix, log, &req->requirements);
	}
out:
	if (reqfile)
		unlink(reqfile);
	if (log)
		unlink(log);
	if (dir)
		rmdir(dir);
	free(dir);
	free(reqfile);
	free(log);
	free(python);
	menv_buf_release(&text);
	menv_strvec_clear(&argv);
	return rc;
}

int menv_pip_uninstall(const char *prefix, const struct menv_strvec *names, struct menv_error *err)
{
	char *python = menv_xasprintf("%s/bin/python", prefix);
	struct menv_strvec argv = MENV_STRVEC_INIT;
	int rc = 0;

	if (!names->n)
		goto out;
	menv_strvec_push(&argv, python);
	menv_strvec_push(&argv, "-m");
	menv_strvec_push(&argv, "pip");
	menv_strvec_push(&argv, "uninstall");
	menv_strvec_push(&argv, "--yes");
	menv_strvec_push(&argv, "--no-input");
	menv_strvec_push(&argv, "--disable-pip-version-check");
	menv_strvec_push(&argv, "-q");
	for (size_t i = 0; i < names->n; i++)
		menv_strvec_push(&argv, names->v[i]);
	menv_strvec_push_owned(&argv, NULL);
	int st = run_child(argv.v, NULL, NULL);
	if (st != 0)
		rc = menv_error_set(err, MENV_EIO, "pip uninstall of %s%s failed (exit %d)",
		                    names->v[0], names->n > 1 ? ", ..." : "", st);
out:
	menv_strvec_clear(&argv);
	free(python);
	return rc;
}

void menv_pip_rollback_prefix(const char *prefix)
{
	/* renamed aside first, so a half-removed prefix never stands under its own name */
	char *aside = menv_xasprintf("%s.menv-pip-failed-%ld", prefix, (long)getpid());
	if (rename(prefix, aside) == 0)
		menv_remove_tree(aside);
	else
		menv_remove_tree(prefix);
	free(aside);
}
