/*
 * doctor.c - `menv doctor` (conda has `conda doctor`): what is wrong with an environment,
 * and with --fix what can be repaired. It reads every JSON record of conda-meta/ on its own (a
 * corrupt one is a finding naming the file, not an error that stops everything), checks
 * each file a PrefixRecord lists against paths_data (present, same size, same sha256 as
 * sha256_in_prefix or the package's sha256), reports symbolic links whose target leaves the
 * prefix, registry lines whose environment is gone, and the CUDA toolchain the environment
 * holds (nvcc, the host g++ nvcc must accept, the driver's CUDA version).
 *
 * --fix, under the prefix lock and the package cache's users lock: a corrupt record whose
 * package the cache holds is set aside as `<file>.corrupt` (conda and menv read only *.json)
 * and the package linked again, one change under an intent record (intent.c: a kill puts the
 * record back unless the relink committed), so `remove` and every other command work again;
 * without the package the record stays and the problem is reported again; the packages with
 * missing or changed files are unlinked and linked again from the package cache (fetched
 * again from their URL when the cache lost them), as one journaled transaction.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "prefix.h"
#include "registry.h"
#include "smoke.h"
#include "solver.h"
#include "txn.h"
#include "txnpriv.h"
#include "intent.h"
#include "link.h"

static void add(struct menv_doctor_report *r, enum menv_doctor_kind kind, const char *package,
                const char *path, char *text)
{
	/* doubled at 8, 16, 32, ... findings: a copy per finding is quadratic (ASan's realloc
	 * always copies; cli.attack12_doctor_linear) */
	if (r->n == 0 || (r->n >= 8 && !(r->n & (r->n - 1))))
		r->findings =
		        menv_xrealloc(r->findings, (r->n ? 2 * r->n : 8) * sizeof(*r->findings));
	r->findings[r->n++] = (struct menv_doctor_finding){kind, menv_xstrdup(package),
	                                                   menv_xstrdup(path), text, false};
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A .pyc or .pyo: python rewrites one whose source is newer (or whose interpreter differs),
 * so its bytes are no sign of damage; conda 26's doctor skips them alike
 * (health_checks/altered_files.py, excluded_files_check). */
static bool bytecode(const char *rel)
{
	size_t n = strlen(rel);
	return n >= 4 && (!strcmp(rel + n - 4, ".pyc") || !strcmp(rel + n - 4, ".pyo"));
}

/* Each file of one record against its paths_data. */
static void check_files(const char *prefix, json_t *rec, const char *dist,
                        struct menv_doctor_report *r)
{
	size_t i;
	json_t *p, *paths = json_object_get(json_object_get(rec, "paths_data"), "paths");
	json_t *files = json_object_get(rec, "files");
	/* conda's paths_data names a linked file by its package path (noarch python's
	 * `site-packages/...`); `files`, one entry per path in the same order, by the prefix's */
	bool aligned = json_array_size(files) == json_array_size(paths);
	json_array_foreach(paths, i, p)
	{
		const char *rel =
		        aligned ? json_string_value(json_array_get(files, i)) : jstr(p, "_path");
		const char *type = jstr(p, "path_type");
		const char *want = jstr(p, "sha256_in_prefix") ? jstr(p, "sha256_in_prefix")
		                                               : jstr(p, "sha256");
		json_t *size = json_object_get(p, "size_in_bytes");
		struct stat sb;
		if (!rel)
			continue;
		char *path = menv_xasprintf("%s/%s", prefix, rel);
		r->files++;
		if (lstat(path, &sb) != 0) {
			/* a .pyc recorded without a size was never written (its python could not
			 * compile the .py; conda records it so): nothing is missing */
			if (type && !strcmp(type, "pyc_file") && !json_is_integer(size)) {
				free(path);
				continue;
			}
			add(r, MENV_DOCTOR_MISSING_FILE, dist, rel,
			    menv_xasprintf("'%s' of %s is missing", rel, dist));
		} else if (S_ISLNK(sb.st_mode)) {
			char target[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
			ssize_t n = readlink(path, target, sizeof(target) - 1);
			if (n > 0 && realpath(path, real) && realpath(prefix, root)) {
				size_t rl = strlen(root);
				target[n] = '\0';
				if (strncmp(real, root, rl) || (real[rl] && real[rl] != '/'))
					add(r, MENV_DOCTOR_LINK_OUT, dist, rel,
					    menv_xasprintf(
					            "'%s' of %s links out of the prefix, to '%s'",
					            rel, dist, target));
			}
		} else if (S_ISREG(sb.st_mode) && (!type || strcmp(type, "softlink")) &&
		           !bytecode(rel)) {
			struct menv_hashes h;
			bool bad = json_is_integer(size) &&
			           (int64_t)sb.st_size != (int64_t)json_integer_value(size) &&
			           !jstr(p, "sha256_in_prefix");
			if (!bad && want && menv_hash_file(path, &h, NULL) == 0)
				bad = strcmp(h.sha256, want) != 0;
			if (bad)
				add(r, MENV_DOCTOR_CHANGED_FILE, dist, rel,
				    menv_xasprintf("'%s' of %s was changed (its sha256 is not the "
				                   "record's)",
				                   rel, dist));
		}
		free(path);
	}
}

/* The first (or the last) line that `exe arg` prints on stdout into `out` ("" when none).
 * The program starts from an argv array, never through a shell: the prefix is only a path
 * here, whatever characters it holds. stdin and stderr are /dev/null. It runs as a child of
 * its own group that dies with menv and stops on a cancel (menv_child_fork). Returns 0, or
 * MENV_EINTR (err set) when a SIGINT/SIGTERM stopped it. */
static int run_line(const char *exe, const char *arg, bool last, char *out, size_t len,
                    struct menv_error *err)
{
	char *argv[] = {(char *)exe, (char *)arg, NULL};
	struct menv_buf b = MENV_BUF_INIT;
	int pfd[2], status = 0, rc;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return 0;
	pid = menv_child_fork();
	if (pid == 0) {
		int in = open("/dev/null", O_RDWR);
		if (in >= 0) {
			dup2(in, 0);
			dup2(in, 2);
		}
		dup2(pfd[1], 1);
		execve(exe, argv, environ);
		_exit(127);
	}
	close(pfd[1]);
	rc = pid < 0 ? 0 : menv_child_wait(pid, pfd[0], &b, 1u << 16, NULL, &status);
	close(pfd[0]);
	if (rc == MENV_EINTR) {
		menv_buf_release(&b);
		return menv_error_set(err, MENV_EINTR, "interrupted while running '%s %s'", exe,
		                      arg);
	}
	for (const char *p = b.buf; p && p < b.buf + b.len;) {
		const char *e = memchr(p, '\n', (size_t)(b.buf + b.len - p));
		size_t n = e ? (size_t)(e - p) : (size_t)(b.buf + b.len - p);
		if (!out[0] || last)
			snprintf(out, len, "%.*s", (int)n, p);
		p += n + 1;
	}
	menv_buf_release(&b);
	return 0;
}

/* The CUDA toolchain in two lines each: nvcc, its host compiler, the driver. */
static int toolchain(const char *prefix, struct menv_doctor_report *r, struct menv_error *err)
{
	char nvcc[PATH_MAX], cxx[PATH_MAX], line[256], gxx[64] = "";
	int nmaj = 0, nmin = 0, gmaj = 0;
	snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", prefix);
	snprintf(cxx, sizeof(cxx), "%s/bin/g++", prefix);
	if (access(nvcc, X_OK) != 0)
		return 0; /* no CUDA compiler: nothing to say */
	/* "Build cuda_11.8.r11.8/..." */
	if (run_line(nvcc, "--version", true, line, sizeof(line), err))
		return MENV_EINTR;
	const char *v = strstr(line, "cuda_");
	if (v)
		sscanf(v, "cuda_%d.%d", &nmaj, &nmin);
	add(r, MENV_DOCTOR_TOOLCHAIN, "nvcc", nvcc,
	    menv_xasprintf("nvcc %d.%d: %s\n    it compiles for sm_35 to sm_%s", nmaj, nmin, nvcc,
	                   nmaj > 11 || (nmaj == 11 && nmin >= 8) ? "90" : "86 (no Hopper)"));
	if (access(cxx, X_OK) == 0) {
		if (run_line(cxx, "-dumpfullversion", false, gxx, sizeof(gxx), err))
			return MENV_EINTR;
		gmaj = atoi(gxx);
	}
	/* the newest GCC each CUDA accepts (CUDA's installation guide) */
	int max = nmaj < 11                ? 9
	          : nmaj == 11             ? (nmin >= 4 ? 11 : 10)
	          : nmaj == 12 && nmin < 4 ? 12
	                                   : 13;
	add(r, MENV_DOCTOR_TOOLCHAIN, "g++", cxx,
	    gmaj ? menv_xasprintf("host compiler g++ %s: %s\n    nvcc %d.%d accepts g++ %d or "
	                          "older: %s",
	                          gxx, cxx, nmaj, nmin, max, gmaj <= max ? "fine" : "too new")
	         : menv_xasprintf("no g++ in the environment: nvcc would use the system's\n    "
	                          "add gxx_linux-64=%d (nvcc %d.%d accepts g++ %d or older)",
	                          max, nmaj, nmin, max));
	struct menv_virtual virt[8];
	size_t nv = menv_virtual_detect(virt, 8);
	const char *drv = NULL;
	for (size_t i = 0; i < nv; i++)
		if (!strcmp(virt[i].name, "__cuda"))
			drv = virt[i].version;
	int dmaj = 0, dmin = 0;
	if (drv)
		sscanf(drv, "%d.%d", &dmaj, &dmin);
	add(r, MENV_DOCTOR_TOOLCHAIN, "driver", "",
	    drv ? menv_xasprintf("driver: CUDA %s (__cuda)\n    %s", drv,
	                         dmaj * 100 + dmin >= nmaj * 100 + nmin
	                                 ? "runs what this nvcc builds"
	                                 : "older than the toolkit: kernels may fail to load")
	        : menv_xasprintf("driver: none found (no __cuda)\n    kernels build here; they "
	                         "run where a driver of CUDA %d.%d or newer is",
	                         nmaj, nmin));
	return 0;
}

/* The smoke check's own first check (menv_smoke_host_compiler), as a problem: doctor and
 * the smoke check give one verdict on the host compiler nvcc gets. */
static int host_compiler(const char *prefix, struct menv_doctor_report *r, struct menv_error *err)
{
	char nvcc[PATH_MAX], *problem = NULL;
	struct menv_error e = {0};

	snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", prefix);
	if (access(nvcc, X_OK) != 0)
		return 0;
	if (menv_smoke_host_compiler(prefix, &problem, &e) == MENV_EINTR || menv_cancelled())
		return menv_error_set(err, MENV_EINTR,
		                      "interrupted while probing the host compiler "
		                      "of '%s'",
		                      prefix);
	if (problem)
		add(r, MENV_DOCTOR_HOST_COMPILER, "nvcc", "bin/nvcc", problem);
	return 0;
}

/* The packages `dists` linked again from the package cache (their repodata_record.json),
 * as one journaled transaction under the caller's prefix lock; a dist the cache lacks gets
 * a finding saying its files are untracked. */
static int relink_from_cache(const struct menv_config *cfg, const char *prefix,
                             const struct menv_strvec *dists, struct menv_doctor_report *r,
                             struct menv_error *err)
{
	struct menv_record *recs = menv_xcalloc(dists->n + 1, sizeof(*recs));
	const struct menv_record **link = menv_xcalloc(dists->n + 1, sizeof(*link));
	struct menv_strvec requested = MENV_STRVEC_INIT;
	size_t n = 0;
	int rc = 0;

	for (size_t i = 0; i < dists->n; i++) {
		if (menv_record_from_cache(&cfg->pkgs_dirs, dists->v[i], &recs[n]))
			link[n] = &recs[n], n++;
		else
			add(r, MENV_DOCTOR_CORRUPT_RECORD, dists->v[i], "",
			    menv_xasprintf("%s is not in the package cache: its record stays as it "
			                   "is; install it again (--force-reinstall)",
			                   dists->v[i]));
	}
	if (n) {
		struct menv_install_opts io = {
		        .pkgs_dir = cfg->pkgs_dir,
		        .requested = &requested,
		        .cmdline = "menv doctor --fix (records set aside, packages linked again)",
		        .locked = true,
		};
		menv_install_opts_link_settings(cfg, &io);
		/* set aside and relinked as one change: a kill before the relink's commit puts
		 * the records back (intent.c), never leaves files no record owns */
		struct menv_strvec relinked = MENV_STRVEC_INIT;
		struct menv_strset relinked_set =
		        MENV_STRSET_INIT; /* hashed: one lookup a finding */
		for (size_t i = 0; i < n; i++) {
			menv_strvec_push_owned(&relinked,
			                       menv_xasprintf("%s-%s-%s", link[i]->name,
			                                      link[i]->version, link[i]->build));
			menv_strset_add(&relinked_set, relinked.v[relinked.n - 1]);
		}
		rc = menv_intent_doctor_begin(prefix, &relinked, err);
		for (size_t i = 0; !rc && i < relinked.n; i++) {
			char *path = menv_xasprintf("%s/conda-meta/%s.json", prefix, relinked.v[i]);
			char *aside = menv_xasprintf("%s.corrupt", path);
			menv_crash_point();
			if (rename(path, aside) < 0)
				rc = menv_error_sys(err, MENV_EIO, "cannot set '%s' aside", path);
			free(path);
			free(aside);
		}
		if (!rc)
			rc = menv_env_apply(prefix, link, n, NULL, 0, &io, NULL, err);
		menv_crash_point();
		/* done, or failed and rolled back: the intent settles the records either way */
		char *said = NULL;
		struct menv_error ignored = {0};
		menv_cancel_block(true); /* Ctrl-C or not, the records settle here, not later */
		menv_env_intent_recover(prefix, NULL, NULL, &said, &ignored);
		menv_cancel_block(false);
		free(said);
		for (size_t i = 0; !rc && i < r->n; i++) {
			struct menv_doctor_finding *f = &r->findings[i];
			size_t pl = strlen(f->package);
			char *dist = pl > 5 ? menv_xstrndup(f->package, pl - 5) : NULL;
			if (f->kind == MENV_DOCTOR_CORRUPT_RECORD && dist &&
			    menv_strset_has(&relinked_set, dist))
				f->fixed = true;
			free(dist);
		}
		menv_strvec_clear(&relinked);
		menv_strset_clear(&relinked_set);
		/* a Ctrl-C while the packages were linked again: the repair settled, and says so */
		if (!rc)
			rc = menv_intent_late_cancel("its packages were linked again", "repair",
			                             prefix, err);
	}
	for (size_t i = 0; i < n; i++)
		menv_record_release(&recs[i]);
	free(recs);
	free(link);
	return rc;
}

/* Whether registry line `line` is about `prefix` (trailing slashes aside). */
static bool same_prefix(const char *line, const char *prefix)
{
	size_t a = strlen(line), b = strlen(prefix);
	while (a > 1 && line[a - 1] == '/')
		a--;
	while (b > 1 && prefix[b - 1] == '/')
		b--;
	return a == b && !strncmp(line, prefix, a);
}

static bool has_meta(const char *prefix, const char *name)
{
	char *p = menv_xasprintf("%s/conda-meta/%s", prefix, name);
	bool r = access(p, F_OK) == 0;
	free(p);
	return r;
}

int menv_env_doctor(const struct menv_config *cfg, const char *prefix, bool fix, bool all_envs,
                    struct menv_doctor_report *r, struct menv_error *err)
{
	char *meta = menv_xasprintf("%s/conda-meta", prefix);
	struct menv_strvec damaged = MENV_STRVEC_INIT, reg = MENV_STRVEC_INIT;
	struct menv_strset damaged_set = MENV_STRSET_INIT; /* damaged, hashed: linear */
	struct menv_strvec setaside = MENV_STRVEC_INIT;    /* dists of the records set aside */
	DIR *d = opendir(meta);
	struct dirent *de;
	int rc = 0, fd = -1, users = -1;

	memset(r, 0, sizeof(*r));
	/* an interrupted env remove: --fix finishes it; the check names it (its records may
	 * already be gone, so "0 problems" would be wrong) */
	if (d && has_meta(prefix, ".menv-removing")) {
		rc = fix ? menv_txn_recover(prefix, NULL, err)
		         : menv_error_set(err, MENV_ENOTFOUND,
		                          "'%s' is an interrupted removal: 'menv env remove -p %s' "
		                          "or 'menv doctor --fix -p %s' finishes it",
		                          prefix, prefix, prefix);
		closedir(d);
		goto out;
	}
	if (!d) {
		rc = menv_error_set(err, MENV_ENOTFOUND, "'%s' is not a conda environment", prefix);
		goto out;
	}
	if (fix && (rc = menv_env_lock(prefix, false, NULL, NULL, &fd, err)) != 0)
		goto out;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.')
			continue;
		char *path = menv_xasprintf("%s/%s", meta, de->d_name);
		struct menv_error je = {0};
		json_t *j = menv_json_load_file(path, 0, &je);
		r->packages++;
		if (!json_is_object(j) || !jstr(j, "name") || !jstr(j, "version") ||
		    !jstr(j, "build")) {
			add(r, MENV_DOCTOR_CORRUPT_RECORD, de->d_name, path,
			    j ? menv_xasprintf(
			                "%s: not a package record (no name, version or build)",
			                path)
			      : menv_xstrdup(je.msg));
			if (fix) /* set aside and linked again below, under the intent record */
				menv_strvec_push_owned(&setaside, menv_xstrndup(de->d_name, l - 5));
		} else {
			size_t before = r->n;
			char *dist = menv_xasprintf("%s-%s-%s", jstr(j, "name"), jstr(j, "version"),
			                            jstr(j, "build"));
			check_files(prefix, j, dist, r);
			for (size_t i = before; i < r->n; i++)
				if (r->findings[i].kind != MENV_DOCTOR_LINK_OUT && jstr(j, "name"))
					menv_strvec_push_unique(&damaged, &damaged_set,
					                        jstr(j, "name"));
			free(dist);
		}
		json_decref(j);
		free(path);
	}
	closedir(d);
	/* registry lines whose environment is gone: every line, or the prefix's own */
	if (menv_envreg_load(&reg, NULL) == 0)
		for (size_t i = 0; i < reg.n; i++) {
			if (!all_envs && !same_prefix(reg.v[i], prefix))
				continue;
			char *m = menv_xasprintf("%s/conda-meta", reg.v[i]);
			if (access(m, F_OK) != 0)
				add(r,
				    same_prefix(reg.v[i], prefix) ? MENV_DOCTOR_STALE_REGISTRY
				                                  : MENV_DOCTOR_STALE_OTHER,
				    "", reg.v[i],
				    menv_xasprintf(
				            "the registry names '%s', which is no environment "
				            "any more",
				            reg.v[i]));
			free(m);
		}
	if ((rc = toolchain(prefix, r, err)) != 0)
		goto out;
	struct menv_strvec cuda = MENV_STRVEC_INIT;
	menv_env_cuda_home_check(prefix, &cuda);
	for (size_t i = 0; i < cuda.n; i++)
		add(r, MENV_DOCTOR_CUDA_HOME, "", "", menv_xstrdup(cuda.v[i]));
	menv_strvec_clear(&cuda);
	if ((rc = host_compiler(prefix, r, err)) != 0)
		goto out;
	/* every relink holds the package cache's users lock, as a transaction does: a `menv
	 * clean` meanwhile never removes a package the repair is about to link */
	if (fix && (damaged.n || setaside.n) && cfg->pkgs_dir_writable &&
	    (rc = menv_pkgcache_use(cfg->pkgs_dir, false, NULL, NULL, NULL, &users, err)) != 0)
		goto out;
	menv_test_gate("MENV_TEST_GATE_RELINK");
	/* a corrupt record: its package is linked again from the cache, which writes its
	 * record anew; without the package in the cache the record stays as it is (the
	 * problem remains, and the next doctor says so again) */
	if (fix && setaside.n && !rc)
		rc = relink_from_cache(cfg, prefix, &setaside, r, err);
	if (fix && damaged.n && !rc) {
		size_t repaired = 0;
		rc = menv_txn_repair(cfg, prefix, &damaged, &repaired, err);
		for (size_t i = 0; !rc && i < r->n; i++)
			if (r->findings[i].kind == MENV_DOCTOR_MISSING_FILE ||
			    r->findings[i].kind == MENV_DOCTOR_CHANGED_FILE)
				r->findings[i].fixed = true;
	}
	menv_pkgcache_unuse(users);
	for (size_t i = 0; fix && i < r->n; i++)
		if (r->findings[i].kind == MENV_DOCTOR_STALE_REGISTRY ||
		    r->findings[i].kind == MENV_DOCTOR_STALE_OTHER)
			r->findings[i].fixed = menv_envreg_remove(r->findings[i].path, NULL) == 0;
out:
	menv_env_unlock(fd);
	menv_strvec_clear(&damaged);
	menv_strset_clear(&damaged_set);
	menv_strvec_clear(&reg);
	menv_strvec_clear(&setaside);
	free(meta);
	return rc;
}

json_t *menv_doctor_report_json(const struct menv_doctor_report *r, const char *prefix, int *faults,
                                struct menv_buf *text)
{
	static const char *const kinds[] = {
	        "corrupt-record", "missing-file",         "changed-file",
	        "link-out",       "stale-registry",       "toolchain",
	        "cuda-home",      "stale-registry-other", "host-compiler"};
	json_t *j = json_array();
	size_t others = 0;

	*faults = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct menv_doctor_finding *f = &r->findings[i];
		bool note = f->kind == MENV_DOCTOR_TOOLCHAIN || f->kind == MENV_DOCTOR_STALE_OTHER;
		*faults += !note && !f->fixed;
		others += f->kind == MENV_DOCTOR_STALE_OTHER && !f->fixed;
		json_array_append_new(j, json_pack("{s:s,s:s,s:s,s:s,s:b}", "kind", kinds[f->kind],
		                                   "package", f->package, "path", f->path, "text",
		                                   f->text, "fixed", f->fixed));
		if (text)
			menv_buf_addf(text, "%s%s%s\n",
			              f->kind == MENV_DOCTOR_TOOLCHAIN     ? ""
			              : f->kind == MENV_DOCTOR_STALE_OTHER ? "note: "
			                                                   : "problem: ",
			              f->text, f->fixed ? " (fixed)" : "");
	}
	/* other environments' stale lines are no problem of this one: a note, and the cure */
	if (text && others)
		menv_buf_addf(
		        text,
		        "note: %zu registry line%s of other environments name%s what is "
		        "gone; `menv doctor --fix` takes %s out of ~/.conda/environments.txt\n",
		        others, others == 1 ? "" : "s", others == 1 ? "s" : "",
		        others == 1 ? "it" : "them");
	if (text)
		menv_buf_addf(text,
		              "%s: %zu package record%s, %zu file%s checked, %d problem%s left\n",
		              prefix, r->packages, r->packages == 1 ? "" : "s", r->files,
		              r->files == 1 ? "" : "s", *faults, *faults == 1 ? "" : "s");
	return json_pack("{s:s,s:o,s:i}", "prefix", prefix, "findings", j, "problems", *faults);
}

void menv_doctor_report_release(struct menv_doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->findings[i].package);
		free(r->findings[i].path);
		free(r->findings[i].text);
	}
	free(r->findings);
	memset(r, 0, sizeof(*r));
}
