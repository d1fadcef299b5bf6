/*
 * solve_bench.c - `menv-bench-solve`: loading and solving speed on real repodata.
 *
 * For each real repodata snapshot of shared/corpus (and 10x / 100x sets made from the largest
 * one by renaming every package and dependency per copy and shifting versions, so the graph
 * keeps its real shape), prints: JSON load with jansson into PackageRecords, libsolv's conda
 * reader (first load, writing the .solv cache), .solv load, one solve, and each phase's peak
 * memory (each phase runs in a child process; peak = the child's max RSS).
 *
 *   menv-bench-solve [SHARED_DIR]      # default: the shared/ beside the source tree
 */
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "solver.h"

struct snap {
	const char *label;
	char *path;
	const char *request; /* a name in the snapshot */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum phase { P_JSON, P_READER, P_SOLV, P_SOLVE };

/* Runs one phase in a child; returns seconds (via a pipe) and the child's peak RSS in KiB. */
static int run_phase(const struct snap *sn, enum phase ph, const char *solv, double *secs,
                     long *peak_kib)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		struct menv_error err = {0};
		static char name[] = "bench", url[] = "file:///bench";
		struct menv_channel ch = {.name = name, .base_url = url, .priority = 1};
		double t0 = now(), dt = -1;
		int rc = 0;
		if (ph == P_JSON) {
			struct menv_buf b = MENV_BUF_INIT;
			struct menv_repodata *rd = NULL;
			rc = menv_buf_read_file(&b, sn->path, &err);
			if (!rc)
				rc = menv_repodata_parse(b.buf, b.len, sn->path, &ch, "linux-64",
				                         &rd, &err);
			dt = now() - t0;
			menv_repodata_free(rd);
			menv_buf_release(&b);
		} else {
			struct menv_solver *s = menv_solver_new("linux-64", MENV_PRIORITY_STRICT);
			if (ph == P_READER)
				unlink(solv);
			rc = menv_solver_add_repodata_file(s, &ch, "linux-64", sn->path, solv,
			                                   &err);
			if (ph == P_SOLVE && !rc) {
				struct menv_matchspec *ms = NULL;
				const struct menv_record **recs = NULL;
				size_t n = 0;
				menv_solver_add_virtual(s, "__glibc", "2.36", "0");
				menv_solver_add_virtual(s, "__unix", "0", "0");
				menv_solver_add_virtual(s, "__linux", "6.1", "0");
				menv_solver_add_virtual(s, "__cuda", "12.4", "0");
				t0 = now();
				if (!menv_matchspec_parse(sn->request, &ms, &err))
					menv_solver_solve(s, &ms, 1, &recs, &n,
					                  &err); /* unsat is fine */
				free(recs);
				menv_matchspec_free(ms);
			}
			dt = now() - t0;
			menv_solver_free(s);
		}
		if (rc)
			fprintf(stderr, "bench: %s\n", err.msg);
		if (write(fds[1], &dt, sizeof(dt)) != sizeof(dt))
			_exit(2);
		_exit(rc ? 1 : 0);
	}
	close(fds[1]);
	int status;
	struct rusage ru;
	if (read(fds[0], secs, sizeof(*secs)) != sizeof(*secs))
		*secs = -1;
	close(fds[0]);
	wait4(pid, &status, 0, &ru);
	*peak_kib = ru.ru_maxrss;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* `spec` ("name rest") with "_c<i>" after its name (i > 0), as a new JSON string. */
static json_t *renamed(const char *spec, int i)
{
	if (!spec)
		return json_null();
	size_t n = strcspn(spec, " ");
	char *t = i ? menv_xasprintf("%.*s_c%d%s", (int)n, spec, i, spec + n) : strdup(spec);
	json_t *j = json_string(t);
	free(t);
	return j;
}

/* Writes `copies` renamed copies of a snapshot's records into one repodata.json: copy i
 * renames every package and every name in depends/constrains with "_c<i>" (none for copy 0),
 * so the graph keeps its real shape. Returns the new file's path or NULL. */
static char *make_scaled(const char *src, int copies, const char *dir)
{
	static const char *const secs[] = {"packages", "packages.conda"};
	static const char *const lists[] = {"depends", "constrains"};
	json_error_t jerr;
	json_t *d = json_load_file(src, 0, &jerr), *res;
	char *out = menv_xasprintf("%s/scaled-%dx.json", dir, copies);

	if (!d) {
		fprintf(stderr, "bench: %s: %s\n", src, jerr.text);
		free(out);
		return NULL;
	}
	json_t *info = json_object_get(d, "info");
	res = json_pack("{s:o, s:{}, s:{}}", "info", info ? json_incref(info) : json_object(),
	                "packages", "packages.conda");
	for (int i = 0; i < copies; i++)
		for (size_t k = 0; k < 2; k++) {
			json_t *recs = json_object_get(d, secs[k]), *r;
			const char *fn;
			json_object_foreach(recs, fn, r)
			{
				json_t *c = json_deep_copy(r);
				char *key;
				json_object_set_new(
				        c, "name",
				        renamed(json_string_value(json_object_get(c, "name")), i));
				for (size_t l = 0; l < 2; l++) {
					json_t *a = json_object_get(r, lists[l]), *v,
					       *na = json_array();
					size_t x;
					json_array_foreach(a, x, v) json_array_append_new(
					        na, renamed(json_string_value(v), i));
					json_object_set_new(c, lists[l], na);
				}
				key = menv_xasprintf("%s-c%d-%s",
				                     json_string_value(json_object_get(c, "name")),
				                     i, fn);
				json_object_set_new(json_object_get(res, secs[k]), key, c);
				free(key);
			}
		}
	int rc = json_dump_file(res, out, 0);
	json_decref(res);
	json_decref(d);
	if (rc) {
		free(out);
		return NULL;
	}
	return out;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

int main(int argc, char **argv)
{
	const char *shared = argc > 1 ? argv[1] : MENV_SHARED;
	char tmp[] = "/tmp/menv-bench-XXXXXX";
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	struct snap snaps[8];
	size_t n = 0;
	snaps[n++] = (struct snap){
	        "defaults r linux-64 (2013-18)",
	        menv_xasprintf("%s/corpus/repodata/conda/repodata/r_linux-64.json", shared),
	        "r-base"};
	snaps[n++] = (struct snap){
	        "conda-forge subchannel linux-64",
	        menv_xasprintf("%s/corpus/repodata/conda-subchannel-demo/linux-64/repodata.json",
	                       shared),
	        "python"};
	snaps[n++] = (struct snap){
	        "pytorch linux-64 (2023)",
	        menv_xasprintf("%s/corpus/repodata/rattler/channels/pytorch/linux-64/repodata.json",
	                       shared),
	        "pytorch"};
	snaps[n++] = (struct snap){
	        "conda-forge numpy subset",
	        menv_xasprintf("%s/corpus/repodata/mamba/conda-forge-numpy-linux-64.json", shared),
	        "numpy"};
	char *x10 = make_scaled(snaps[0].path, 10, tmp);
	char *x100 = make_scaled(snaps[0].path, 100, tmp);
	if (x10)
		snaps[n++] = (struct snap){"defaults r x10 (renamed copies)", x10, "r-base"};
	if (x100)
		snaps[n++] = (struct snap){"defaults r x100 (renamed copies)", x100, "r-base"};

	printf("%-34s %9s %9s %9s %9s %9s | %8s %8s %8s %8s\n", "repodata", "MB", "json s",
	       "reader s", "solv s", "solve s", "json MB", "read MB", "solv MB", "solve MB");
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(snaps[i].path, &st) < 0) {
			printf("%-34s missing\n", snaps[i].label);
			continue;
		}
		char *solv = menv_xasprintf("%s/bench-%zu.solv", tmp, i);
		double t[4];
		long kib[4];
		for (int ph = 0; ph < 4; ph++)
			if (run_phase(&snaps[i], (enum phase)ph, solv, &t[ph], &kib[ph]) < 0)
				t[ph] = -1;
		printf("%-34s %9.1f %9.3f %9.3f %9.3f %9.3f | %8.1f %8.1f %8.1f %8.1f\n",
		       snaps[i].label, (double)st.st_size / 1e6, t[0], t[1], t[2], t[3],
		       (double)kib[0] / 1024, (double)kib[1] / 1024, (double)kib[2] / 1024,
		       (double)kib[3] / 1024);
		free(solv);
	}
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
