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

/* Writes `copies` renamed copies of a snapshot's records into one repodata.json. */
static char *make_scaled(const char *src, int copies, const char *dir)
{
	char *out = menv_xasprintf("%s/scaled-%dx.json", dir, copies);
	char *cmd = menv_xasprintf(
	        "python3 - '%s' %d '%s' <<'PY'\n"
	        "import json, re, sys\n"
	        "src, k, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]\n"
	        "d = json.load(open(src))\n"
	        "res = {'info': d.get('info', {}), 'packages': {}, 'packages.conda': {}}\n"
	        "def ren(spec, i):\n"
	        "    p = spec.split(' ', 1)\n"
	        "    return p[0] + ('_c%%d' %% i if i else '') + ('' if len(p) == 1 else ' ' + "
	        "p[1])\n"
	        "for i in range(k):\n"
	        "    for sec in ('packages', 'packages.conda'):\n"
	        "        for fn, r in d.get(sec, {}).items():\n"
	        "            r = dict(r)\n"
	        "            r['name'] = r['name'] + ('_c%%d' %% i if i else '')\n"
	        "            r['depends'] = [ren(x, i) for x in (r.get('depends') or [])]\n"
	        "            r['constrains'] = [ren(x, i) for x in (r.get('constrains') or [])]\n"
	        "            res[sec]['%%s-c%%d-%%s' %% (r['name'], i, fn)] = r\n"
	        "json.dump(res, open(out, 'w'))\n"
	        "PY",
	        src, copies, out);
	int rc = system(cmd);
	free(cmd);
	if (rc) {
		free(out);
		return NULL;
	}
	return out;
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
	char *rm = menv_xasprintf("rm -rf '%s'", tmp);
	if (system(rm)) {
	}
	free(rm);
	return 0;
}
