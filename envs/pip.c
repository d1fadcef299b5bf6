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
#include <ctype.h>
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

#include "child.h"
#include "fetch.h"
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

char *menv_pip_url_strip_auth(const char *url)
{
	const char *p = strstr(url, "://");
	if (!p)
		return menv_xstrdup(url);
	const char *host = p + 3, *end = host + strcspn(host, "/?#"), *at = NULL;
	for (const char *q = host; q < end; q++)
		if (*q == '@')
			at = q;
	if (!at)
		return menv_xstrdup(url);
	return menv_xasprintf("%.*s%s", (int)(host - url), url, at + 1);
}

char *menv_pip_option_strip_auth(const char *opt)
{
	const char *sp = strpbrk(opt, " =");
	if (!sp || !strstr(sp, "://"))
		return menv_xstrdup(opt);
	char *u = menv_pip_url_strip_auth(sp + 1 + strspn(sp + 1, " "));
	char *o = menv_xasprintf("%.*s %s", (int)(sp - opt), opt, u);
	free(u);
	return o;
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

/* "Name:" and "Version:" of a METADATA file (RFC 822 headers, up to the first blank line,
 * at most 64 KiB of them). Lines are read whole: a long line is never split into a second
 * header. */
static void read_metadata(const char *path, char **name, char **version)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, total = 0;
	ssize_t n;

	while (f && (n = getline(&line, &cap, f)) > 0 && (total += (size_t)n) < 65536) {
		if (line[0] == '\n' || line[0] == '\r')
			break;
		line[strcspn(line, "\r\n")] = '\0';
		if (!strncmp(line, "Name:", 5) && !*name)
			*name = menv_xstrdup(line + 5 + strspn(line + 5, " \t"));
		else if (!strncmp(line, "Version:", 8) && !*version)
			*version = menv_xstrdup(line + 8 + strspn(line + 8, " \t"));
	}
	free(line);
	if (f)
		fclose(f);
}

/* Why a METADATA's Name or Version cannot be written into a record or an export (NULL when
 * both can): PEP 508's name (letters, digits, '.', '_', '-'; starts and ends with a letter or
 * digit), PEP 440's version characters, at most 200 bytes each. */
static const char *metadata_problem(const char *name, const char *version)
{
	size_t nl = name ? strlen(name) : 0, vl = version ? strlen(version) : 0;

	if (!name || !nl)
		return "no Name";
	if (!version || !vl)
		return "no Version";
	if (nl > 200 ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                 "0123456789._-") != nl ||
	    !isalnum((unsigned char)name[0]) || !isalnum((unsigned char)name[nl - 1]))
		return "a Name that is not a PEP 508 name";
	if (vl > 200 || strspn(version, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                                "0123456789.+!_-") != vl)
		return "a Version that is not a PEP 440 version";
	return NULL;
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
	return menv_pip_list_checked(prefix, out, n, NULL, err);
}

int menv_pip_list_checked(const char *prefix, struct menv_pip_dist **out, size_t *n,
                          struct menv_strvec *warnings, struct menv_error *err)
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
			const char *why = metadata_problem(name, version);
			if (why && warnings) {
				char *shown = menv_utf8_escape(dir + strlen(prefix) + 1);
				menv_strvec_push_owned(
				        warnings,
				        menv_xasprintf("skipped '%s' (no conda package owns "
				                       "it): its METADATA has %s",
				                       shown, why));
				free(shown);
			}
			if (why) {
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
			if (json_string_value(json_object_get(m, "index")))
				p->index = menv_xstrdup(
				        json_string_value(json_object_get(m, "index")));
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

static int cmp_dist(const void *a, const void *b)
{
	const struct menv_pip_dist *x = *(const struct menv_pip_dist *const *)a,
	                           *y = *(const struct menv_pip_dist *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->version ? x->version : "", y->version ? y->version : "");
}

size_t menv_pip_dists_new(const struct menv_pip_dist *before, size_t nbefore,
                          const struct menv_pip_dist *after, size_t nafter)
{
	const struct menv_pip_dist **b = menv_xcalloc(nbefore + 1, sizeof(*b)),
	                           **a = menv_xcalloc(nafter + 1, sizeof(*a));
	size_t i = 0, k = 0, n = 0;
	for (size_t j = 0; j < nbefore; j++)
		b[j] = &before[j];
	for (size_t j = 0; j < nafter; j++)
		a[j] = &after[j];
	qsort(b, nbefore, sizeof(*b), cmp_dist);
	qsort(a, nafter, sizeof(*a), cmp_dist);
	while (k < nafter) {
		int c = i < nbefore ? cmp_dist(&b[i], &a[k]) : 1;
		if (c < 0) {
			i++;
		} else {
			n += c > 0; /* in after only: installed by the step */
			i += c == 0;
			k++;
		}
	}
	free(b);
	free(a);
	return n;
}

void menv_pip_dists_free(struct menv_pip_dist *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].editable);
		free(v[i].name);
		free(v[i].version);
		free(v[i].url);
		free(v[i].sha256);
		free(v[i].index);
	}
	free(v);
}

/* Runs argv (NULL-terminated) in `cwd` with stdout sent to stderr; returns its exit status,
 * or -1 when it could not run (errno). */
/* Runs pip's argv; `tmp` (menv's temporary folder, or NULL) is its TMPDIR, so that what pip
 * writes there (build folders, an uninstall's stash) goes with menv's folder, also when
 * menv is killed (specs/tmp.c sweeps a dead process's folders). */
static int run_child(char *const *argv, const char *cwd, volatile int *cancel, const char *tmp)
{
	int st = 0;

	/* pip must not outlive menv (killed, it would go on writing without the prefix lock):
	 * its own group, killed with menv and by Ctrl-C */
	pid_t pid = menv_child_fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
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
		if (tmp)
			setenv("TMPDIR", tmp, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	if (menv_child_wait(pid, -1, NULL, 0, cancel, &st) == MENV_EIO)
		return -1;
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

/* The index URL an option line names ("--index-url URL", "-i URL", "--index-url=URL"), or
 * NULL. Borrowed from `line`. */
static const char *index_option(const char *line, size_t *len)
{
	static const char *const opts[] = {"--index-url", "-i", NULL};
	for (size_t i = 0; opts[i]; i++) {
		size_t n = strlen(opts[i]);
		if (strncmp(line, opts[i], n) || (line[n] != ' ' && line[n] != '='))
			continue;
		const char *u = line + n + 1;
		u += strspn(u, " \t");
		*len = strcspn(u, " \t");
		return *len ? u : NULL;
	}
	return NULL;
}

/* Is `url` (a file:// wheel URL) inside one of the file:// indexes pip looked in? Those are
 * an index's wheels, as re-creatable as a file:// channel's packages; any other file:// URL
 * is a local path (a project folder, a wheel built here). */
static bool in_file_index(const char *url, const struct menv_strvec *indexes)
{
	for (size_t i = 0; i < indexes->n; i++) {
		const char *ix = indexes->v[i];
		size_t n = strlen(ix);
		while (n && ix[n - 1] == '/')
			n--;
		if (!strncmp(ix, "file://", 7) && !strncmp(url, ix, n) && url[n] == '/')
			return true;
	}
	return false;
}

/* Is this requirements-file line one that tells pip where to look (an index, find-links,
 * trusted hosts, pre-releases), as the re-download of hash_unfragmented needs it? -r, -c and
 * -e lines and requirements are not. */
static bool where_line(const char *line)
{
	static const char *const opts[] = {"--index-url",
	                                   "-i",
	                                   "--extra-index-url",
	                                   "--find-links",
	                                   "-f",
	                                   "--no-index",
	                                   "--trusted-host",
	                                   "--pre",
	                                   "--prefer-binary",
	                                   NULL};
	for (size_t i = 0; opts[i]; i++) {
		size_t n = strlen(opts[i]);
		if (!strncmp(line, opts[i], n) &&
		    (line[n] == '\0' || line[n] == ' ' || line[n] == '='))
			return true;
	}
	return false;
}

/* Gives every wheel of `byfile` (wheel file name -> {url, sha256}) that pip's log named
 * without a sha256 (an index whose links carry no #sha256= fragment, which PEP 503 allows)
 * the sha256 of its bytes: a file:// wheel is hashed where it lies; the others are fetched
 * again by the environment's own pip into `tmpdir` (`pip download --no-deps --only-binary
 * :all:` of NAME==VERSION with the request's options and index lines: the same index,
 * credentials and pip configuration, from pip's HTTP cache where it kept the response) and
 * hashed there, when the file pip saves has the name of the one it installed. Best effort: a
 * wheel that cannot be hashed keeps none (its lock entry then has `hash: {}`). */
static void hash_unfragmented(const char *prefix, const char *tmpdir, json_t *byfile,
                              const struct menv_pip_request *req)
{
	struct menv_strvec lines = MENV_STRVEC_INIT;
	struct menv_buf text = MENV_BUF_INIT;
	const char *fn;
	json_t *e;

	json_object_foreach(byfile, fn, e)
	{
		const char *url = json_string_value(json_object_get(e, "url"));
		if (!url || json_object_get(e, "sha256") || !strstr(fn, ".whl"))
			continue;
		if (!strncmp(url, "file://", 7)) {
			struct menv_hashes h;
			if (!strchr(url, '%') && menv_hash_file(url + 7, &h, NULL) == 0)
				json_object_set_new(e, "sha256", json_string(h.sha256));
			continue;
		}
		/* "name-version-tags.whl" -> "name==version" */
		const char *d1 = strchr(fn, '-');
		const char *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
		if (!d2)
			continue;
		char *line = menv_xasprintf("%.*s==%.*s", (int)(d1 - fn), fn, (int)(d2 - d1 - 1),
		                            d1 + 1);
		bool seen = false; /* two wheels of one version (other tags): one line */
		for (size_t i = 0; !seen && i < lines.n; i++)
			seen = !strcmp(lines.v[i], line);
		if (seen)
			free(line);
		else
			menv_strvec_push_owned(&lines, line);
	}
	if (!lines.n)
		goto out;
	for (size_t i = 0; i < req->requirements.n; i++)
		if (where_line(req->requirements.v[i]))
			menv_buf_addf(&text, "%s\n", req->requirements.v[i]);
	for (size_t i = 0; i < lines.n; i++)
		menv_buf_addf(&text, "%s\n", lines.v[i]);
	char *reqfile = menv_xasprintf("%s/download.txt", tmpdir);
	char *dest = menv_xasprintf("%s/wheels", tmpdir);
	char *python = menv_xasprintf("%s/bin/python", prefix);
	struct menv_strvec argv = MENV_STRVEC_INIT;
	if (menv_write_file_atomic(reqfile, text.buf, text.len, NULL) == 0) {
		menv_strvec_push(&argv, python);
		menv_strvec_push(&argv, "-m");
		menv_strvec_push(&argv, "pip");
		menv_strvec_push(&argv, "download");
		menv_strvec_push(&argv, "-q");
		menv_strvec_push(&argv, "--no-input");
		menv_strvec_push(&argv, "--disable-pip-version-check");
		menv_strvec_push(&argv, "--no-deps");
		menv_strvec_push(&argv, "--only-binary");
		menv_strvec_push(&argv, ":all:");
		menv_strvec_push(&argv, "-d");
		menv_strvec_push(&argv, dest);
		for (size_t i = 0; i < req->options.n; i++)
			menv_strvec_push(&argv, req->options.v[i]);
		menv_strvec_push(&argv, "-r");
		menv_strvec_push(&argv, reqfile);
		menv_strvec_push_owned(&argv, NULL);
		if (run_child(argv.v, req->cwd, req->cancel, tmpdir) == 0) {
			json_object_foreach(byfile, fn, e)
			{
				if (json_object_get(e, "sha256") || !json_object_get(e, "url"))
					continue;
				char *path = menv_xasprintf("%s/%s", dest, fn);
				struct menv_hashes h;
				if (menv_hash_file(path, &h, NULL) == 0)
					json_object_set_new(e, "sha256", json_string(h.sha256));
				free(path);
			}
		}
	}
	menv_remove_tree(dest);
	unlink(reqfile);
	menv_strvec_clear(&argv);
	free(python);
	free(dest);
	free(reqfile);
out:
	menv_buf_release(&text);
	menv_strvec_clear(&lines);
}

/* Records where each wheel came from, from pip's log ("Looking in indexes: URL, ...",
 * "Found link URL#sha256=...", "Downloading URL", "Added ... from URL#sha256=..."), in
 * <dist-info>/MENV_SOURCE of the installed distributions: {url, sha256, index}, each URL
 * without credentials (pip masks a password, menv drops the user too). A file:// URL is kept
 * when it lies in a file:// index. A wheel the log gives no sha256 for is hashed by menv
 * (hash_unfragmented, in `tmpdir`). Best effort: nothing is lost for the environment when
 * this fails. */
static void record_sources(const char *prefix, const char *tmpdir, const char *log,
                           const struct menv_pip_request *req)
{
	const struct menv_strvec *reqs = &req->requirements;
	FILE *f = fopen(log, "r");
	char line[8192];
	json_t *byfile = json_object(); /* wheel file name -> {url, sha256} */
	struct menv_strvec indexes = MENV_STRVEC_INIT;
	char *index = NULL; /* the first index, without credentials */

	/* the index the options name (a lock's install names no index in pip's log) */
	for (size_t i = 0; !index && i < req->options.n; i++) {
		const char *o = req->options.v[i];
		if ((!strcmp(o, "--index-url") || !strcmp(o, "-i")) && i + 1 < req->options.n)
			index = menv_pip_url_strip_auth(req->options.v[i + 1]);
	}
	for (size_t i = 0; !index && i < reqs->n; i++) {
		size_t n = 0;
		const char *u = index_option(reqs->v[i], &n);
		if (u) {
			char *raw = menv_xstrndup(u, n);
			index = menv_pip_url_strip_auth(raw);
			free(raw);
		}
	}
	/* "name @ URL --hash=sha256:HEX" lines (a lock's entries): pip verifies the hash and
	 * does not print it again */
	for (size_t i = 0; i < reqs->n; i++) {
		const char *at = strstr(reqs->v[i], " @ ");
		const char *h = strstr(reqs->v[i], "--hash=sha256:");
		if (!at || !h)
			continue;
		char *url = menv_xstrndup(at + 3, strcspn(at + 3, " "));
		char *base = menv_url_filename(url); /* no query or fragment */
		if (strlen(h + 14) >= 64 && strstr(url, "://")) {
			json_t *e = json_object();
			char *clean = menv_pip_url_strip_auth(url);
			json_object_set_new(e, "url", json_string(clean));
			free(clean);
			char *sha = menv_xstrndup(h + 14, 64);
			json_object_set_new(e, "sha256", json_string(sha));
			free(sha);
			json_object_set_new(byfile, base, e);
		}
		free(base);
		free(url);
	}

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		const char *li = strstr(line, "Looking in indexes: ");
		if (li) {
			const char *u = li + 20;
			while (*u) {
				size_t n = strcspn(u, ", ");
				if (n) {
					char *raw = menv_xstrndup(u, n);
					menv_strvec_push_owned(&indexes,
					                       menv_pip_url_strip_auth(raw));
					free(raw);
				}
				u += n;
				u += strspn(u, ", ");
			}
			if (!index && indexes.n)
				index = menv_xstrdup(indexes.v[0]);
			continue;
		}
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
		char *base = menv_url_filename(url); /* no query */
		if (strstr(base, ".whl") || strstr(base, ".tar.gz") || strstr(base, ".zip")) {
			json_t *e = json_object_get(byfile, base);
			if (!e) {
				e = json_object();
				json_object_set_new(byfile, base, e);
			}
			if (!json_object_get(e, "url") &&
			    (strncmp(url, "file://", 7) || in_file_index(url, &indexes))) {
				char *clean = menv_pip_url_strip_auth(url);
				json_object_set_new(e, "url", json_string(clean));
				free(clean);
			}
			if (sha && strlen(sha) == 64)
				json_object_set_new(e, "sha256", json_string(sha));
		}
		free(sha);
		free(base);
		free(url);
	}
	if (f)
		fclose(f);
	if (index) {
		const char *fn0;
		json_t *e0;
		json_object_foreach(byfile, fn0, e0) if (json_object_get(e0, "url"))
		        json_object_set_new(e0, "index", json_string(index));
	}
	free(index);
	menv_strvec_clear(&indexes);
	/* a wheel "name-version-..." belongs to the dist-info "name-version.dist-info" */
	struct menv_strvec sps = MENV_STRVEC_INIT;
	int rootfd = -1;
	site_packages(prefix, NULL, &sps);
	menv_beneath_root(prefix, &rootfd, NULL);
	json_t *installed = json_object(); /* wheel file name -> {url, sha256}, installed ones */
	json_t *where = json_object();     /* wheel file name -> its dist-info folder */
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
				json_object_set(installed, fn, e);
				json_object_set_new(where, fn, json_string(dir));
			}
			free(dir);
		}
		free(stem);
	}
	hash_unfragmented(prefix, tmpdir, installed, req);
	json_object_foreach(installed, fn, e)
	{
		const char *dir = json_string_value(json_object_get(where, fn));
		const char *d2 = strchr(strchr(fn, '-') + 1, '-'); /* checked above */
		char *stem = menv_xstrndup(fn, (size_t)(d2 - fn));
		char *path = menv_xasprintf("%s/MENV_SOURCE", dir);
		char *dump = json_dumps(e, JSON_SORT_KEYS);
		/* a new file: one there may be a hard link (into the package cache) */
		menv_beneath_unlink(rootfd, path, 0, NULL);
		if (dump && menv_beneath_write(rootfd, path, dump, strlen(dump), menv_file_mode(),
		                               O_EXCL, NULL) == 0)
			add_to_record(rootfd, dir, stem);
		free(dump);
		free(path);
		free(stem);
	}
	json_decref(installed);
	json_decref(where);
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

int menv_pip_no_python(const char *prefix, struct menv_error *err)
{
	return menv_error_set(err, MENV_ENOTFOUND,
	                      "the environment has no python to run pip with ('%s/bin/python'): "
	                      "add 'python' and 'pip' to the conda dependencies",
	                      prefix);
}

int menv_pip_install(const char *prefix, const struct menv_pip_request *req, struct menv_error *err)
{
	char *python = menv_xasprintf("%s/bin/python", prefix);
	char *dir = NULL, *reqfile = NULL, *log = NULL;
	struct menv_buf text = MENV_BUF_INIT;
	struct menv_strvec argv = MENV_STRVEC_INIT;
	int rc = 0;

	if (access(python, X_OK) != 0) {
		rc = menv_pip_no_python(prefix, err);
		goto out;
	}
	rc = menv_tmp_mkdir("pip", &dir, err); /* $TMPDIR, cleaned also after a kill */
	if (rc)
		goto out;
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
	int st = run_child(argv.v, req->cwd, req->cancel, dir);
	if (st < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot run '%s -m pip'", python);
	} else if ((req->cancel && *req->cancel) || menv_cancelled()) {
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
		record_sources(prefix, dir, log, req);
	}
out:
	if (reqfile)
		unlink(reqfile);
	if (log)
		unlink(log);
	if (dir)
		menv_remove_tree(dir); /* and what pip left in it */
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
	char *dir = NULL;
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
	rc = menv_tmp_mkdir("pip", &dir, err); /* pip's stash of what it removes */
	if (rc)
		goto out;
	int st = run_child(argv.v, NULL, NULL, dir);
	if (st != 0)
		rc = menv_error_set(err, MENV_EIO, "pip uninstall of %s%s failed (exit %d)",
		                    names->v[0], names->n > 1 ? ", ..." : "", st);
out:
	if (dir)
		menv_remove_tree(dir);
	free(dir);
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
