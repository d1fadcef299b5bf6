/*
 * smokefp.c - the smoke check's fingerprint: a sha256 over what the check depends on (the
 * packages of the toolchain it builds with and the nvcc and host compiler a build gets, the
 * ops/ sources it builds, the driver it runs on), stored beside conda-meta/menv-smoke-check,
 * so that a change that leaves all of them alone (installing one pure-Python package) does
 * not rebuild and rerun ops/ (a minute with the torch step) and reports "unchanged since
 * <date>" instead.
 *
 * The inputs are text lines, sorted, then hashed; the file keeps them too, so that a reader
 * can see what the last check was run against. Never prints. Also whether an environment
 * wants the check at all (menv_env_wants_smoke).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "link.h"
#include "prefix.h"
#include "smoke.h"
#include "txn.h"

#define FP_VERSION "menv-smoke-fingerprint 1"

/* Whether the check runs after a change of `prefix` (txn.h): smoke_check set and a CUDA
 * compiler in the environment. */
bool menv_env_wants_smoke(const struct menv_config *cfg, const char *prefix)
{
	struct menv_prefix_record *recs = NULL;
	struct menv_error err;
	size_t n = 0;
	bool cuda = false;

	if (!cfg->smoke_check || menv_prefix_records_load(prefix, &recs, &n, &err))
		return false;
	for (size_t i = 0; i < n && !cuda; i++)
		cuda = !strcmp(recs[i].name, "cudatoolkit") || !strcmp(recs[i].name, "cuda-nvcc");
	menv_prefix_records_free(recs, n);
	return cuda;
}

/* Packages whose change can change the check's verdict: nvcc and the CUDA toolkit, the host
 * compiler and its runtime, binutils and the sysroot, python and the modules the python and
 * torch steps import or build with. Everything else (ply, jupyter, ...) is not an input. */
static bool toolchain_pkg(const char *n)
{
	static const char *const exact[] = {
	        "cudatoolkit", "python", "numpy",    "pybind11", "pybind11-abi", "pybind11-global",
	        "pytorch",     "torch",  "libtorch", "ninja",    "setuptools",   "make"};
	static const char *const starts[] = {"cuda-",    "nvcc",      "libnvvm",   "gcc",
	                                     "gxx",      "libgcc",    "libstdcxx", "libgomp",
	                                     "binutils", "ld_impl",   "sysroot_",  "kernel-headers",
	                                     "pytorch-", "python_abi"};
	for (size_t i = 0; i < sizeof(exact) / sizeof(*exact); i++)
		if (!strcmp(n, exact[i]))
			return true;
	for (size_t i = 0; i < sizeof(starts) / sizeof(*starts); i++)
		if (!strncmp(n, starts[i], strlen(starts[i])))
			return true;
	return false;
}

/* pip's own installs of the same modules (a conda package's dist-info is covered by its
 * record already; listing it again is harmless): "numpy-1.24.2.dist-info" */
static bool toolchain_dist(const char *d)
{
	static const char *const names[] = {"numpy-", "pybind11-", "torch-", "ninja-",
	                                    "setuptools-"};
	size_t l = strlen(d);
	if (l < 10 || strcmp(d + l - 10, ".dist-info"))
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strncmp(d, names[i], strlen(names[i])))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *str_or(json_t *j, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : dflt;
}

/* "ops REL SHA256" for each file of the tree the smoke check copies (smoke.c copy_tree:
 * no dot files, __pycache__ or top-level build*) */
static int ops_lines(const char *dir, const char *rel, int depth, struct menv_strvec *out,
                     struct menv_error *err)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (depth > 8)
		return menv_error_set(err, MENV_EUNSUPPORTED, "'%s' is nested too deeply", dir);
	d = opendir(dir);
	if (!d)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot read '%s'", dir);
	while (!rc && (de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st;
		if (n[0] == '.' || !strcmp(n, "__pycache__") ||
		    (depth == 0 && !strncmp(n, "build", 5)))
			continue;
		char *a = menv_xasprintf("%s/%s", dir, n);
		char *r = rel ? menv_xasprintf("%s/%s", rel, n) : menv_xstrdup(n);
		if (lstat(a, &st)) {
			rc = menv_error_sys(err, MENV_EIO, "cannot stat '%s'", a);
		} else if (S_ISDIR(st.st_mode)) {
			rc = ops_lines(a, r, depth + 1, out, err);
		} else if (S_ISREG(st.st_mode)) {
			struct menv_buf b = MENV_BUF_INIT;
			char hex[65];
			rc = menv_buf_read_file(&b, a, err);
			if (!rc) {
				menv_sha256_hex(b.buf, b.len, hex);
				menv_strvec_push_owned(
				        out, menv_xasprintf("ops %s %s%s", r, hex,
				                            st.st_mode & 0111 ? " x" : ""));
			}
			menv_buf_release(&b);
		}
		free(a);
		free(r);
	}
	closedir(d);
	return rc;
}

int menv_smoke_fingerprint(const char *prefix, const char *ops_dir, const char *cuda_driver,
                           char out[65], struct menv_strvec *inputs, struct menv_error *err)
{
	struct menv_strvec lines = MENV_STRVEC_INIT;
	struct menv_prefix_record *recs = NULL;
	struct menv_buf all = MENV_BUF_INIT, drv = MENV_BUF_INIT;
	struct menv_error e2 = {0};
	size_t n = 0;
	int rc;

	rc = menv_prefix_records_load(prefix, &recs, &n, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!toolchain_pkg(recs[i].name))
			continue;
		json_t *j = recs[i].json;
		/* the package file's hash names the exact bytes; the url where there is none */
		const char *id = str_or(j, "sha256", str_or(j, "md5", str_or(j, "url", "-")));
		menv_strvec_push_owned(&lines, menv_xasprintf("pkg %s %s %s %s", recs[i].name,
		                                              recs[i].version, recs[i].build, id));
	}
	/* pip-installed modules: lib/python3.X/site-packages/NAME-VERSION.dist-info */
	char *lib = menv_xasprintf("%s/lib", prefix);
	DIR *d = opendir(lib);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "python", 6))
			continue;
		char *sp = menv_xasprintf("%s/%s/site-packages", lib, de->d_name);
		DIR *s = opendir(sp);
		struct dirent *se;
		while (s && (se = readdir(s)))
			if (toolchain_dist(se->d_name))
				menv_strvec_push_owned(
				        &lines,
				        menv_xasprintf("pip %s/%s", de->d_name, se->d_name));
		if (s)
			closedir(s);
		free(sp);
	}
	if (d)
		closedir(d);
	free(lib);
	char *probe = NULL;
	rc = menv_smoke_probe_line(prefix, &probe, err);
	if (rc)
		goto out;
	menv_strvec_push_owned(&lines, probe);
	rc = ops_lines(ops_dir, NULL, 0, &lines, err);
	if (rc) {
		menv_error_prefix(err, "while reading the ops/ sources");
		goto out;
	}
	/* the driver: its CUDA version (__cuda) and its own version line, where it has one */
	menv_strvec_push_owned(&lines,
	                       menv_xasprintf("driver cuda %s",
	                                      cuda_driver && *cuda_driver ? cuda_driver : "none"));
	if (!menv_buf_read_file(&drv, "/proc/driver/nvidia/version", &e2) && drv.len) {
		size_t l = strcspn(drv.buf, "\n");
		menv_strvec_push_owned(&lines, menv_xasprintf("driver %.*s", (int)l, drv.buf));
	}
	const char *arch = getenv("MENV_OPS_ARCH");
	if (arch && *arch)
		menv_strvec_push_owned(&lines, menv_xasprintf("env MENV_OPS_ARCH=%s", arch));
	qsort(lines.v, lines.n, sizeof(*lines.v), cmp_str);
	menv_buf_adds(&all, FP_VERSION "\n");
	for (size_t i = 0; i < lines.n; i++) {
		menv_buf_adds(&all, lines.v[i]);
		menv_buf_addch(&all, '\n');
		if (inputs)
			menv_strvec_push(inputs, lines.v[i]);
	}
	menv_sha256_hex(all.buf, all.len, out);
out:
	menv_prefix_records_free(recs, n);
	menv_strvec_clear(&lines);
	menv_buf_release(&all);
	menv_buf_release(&drv);
	return rc;
}

static char *fp_path(const char *prefix)
{
	return menv_xasprintf("%s/conda-meta/menv-smoke-fingerprint", prefix);
}

bool menv_smoke_fingerprint_unchanged(const char *prefix, const char *fp, char since[32])
{
	char *path = fp_path(prefix);
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	bool same = false;

	free(path);
	if (!j)
		return false;
	const char *f = json_string_value(json_object_get(j, "fingerprint"));
	const char *st = json_string_value(json_object_get(j, "status"));
	const char *date = json_string_value(json_object_get(j, "date"));
	same = f && st && date && !strcmp(f, fp) && !strcmp(st, "passed");
	if (same)
		snprintf(since, 32, "%s", date);
	json_decref(j);
	return same;
}

int menv_smoke_fingerprint_write(const char *prefix, const char *fp,
                                 const struct menv_strvec *inputs, bool passed,
                                 struct menv_error *err)
{
	json_t *j = json_object(), *in = json_array();
	time_t now = time(NULL);
	struct tm tm;
	char date[32];
	char *path = fp_path(prefix);

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
	for (size_t i = 0; inputs && i < inputs->n; i++)
		json_array_append_new(in, json_string(inputs->v[i]));
	json_object_set_new(j, "fingerprint", json_string(fp));
	json_object_set_new(j, "status", json_string(passed ? "passed" : "failed"));
	json_object_set_new(j, "date", json_string(date));
	json_object_set_new(j, "timestamp", json_integer((json_int_t)now));
	json_object_set_new(j, "inputs", in);
	char *dump = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int rc = menv_write_file_atomic(path, dump, strlen(dump), err);
	free(dump);
	free(path);
	json_decref(j);
	return rc;
}
