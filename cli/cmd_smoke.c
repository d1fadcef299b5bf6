/*
 * cmd_smoke.c - `menv smoke (-n NAME | -p PREFIX) [--json] [--keep] [-v]`: builds and tests
 * the sample CUDA custom-op package (ops/) with the environment's own toolchain (envs/smoke.c)
 * and draws each step's verdict. Exit 0 when no step failed (a missing GPU is a skip, not a
 * failure), 1 when one did; the result goes to conda-meta/menv-smoke-check.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "envs.h"
#include "solver.h"

struct draw {
	bool json, verbose;
};

static const char *verdict_word(enum menv_smoke_verdict v)
{
	return v == MENV_SMOKE_PASS ? "pass" : v == MENV_SMOKE_SKIP ? "skip" : "FAIL";
}

static void on_event(void *ctx, enum menv_smoke_event ev, const struct menv_smoke_step *st,
                     const char *line)
{
	struct draw *d = ctx;
	FILE *f = d->json ? stderr : stdout;

	switch (ev) {
	case MENV_SMOKE_STEP_BEGIN:
		if (d->verbose)
			fprintf(f, "  %s ...\n", st->name);
		break;
	case MENV_SMOKE_STEP_END:
		fprintf(f, "  %-10s  %s  %s (%.1f s)\n", st->name, verdict_word(st->verdict),
		        st->summary, st->seconds);
		break;
	case MENV_SMOKE_LINE:
		/* failures always; every check and the timings with -v */
		if (d->verbose || !strncmp(line, "FAIL", 4) || !strncmp(line, "PERF", 4))
			fprintf(f, "      %s\n", line);
		break;
	case MENV_SMOKE_HINT: fprintf(f, "  hint: %s\n", line); break;
	}
	fflush(f);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: menv smoke (-n NAME | -p PREFIX) [--json] [--keep] [-v]\n\n"
	        "Builds menv's sample CUDA custom operator (ops/) with the environment's nvcc\n"
	        "and host compiler and runs its tests (host, GPU, python, torch).\n"
	        "  --keep     keep the temporary build directory\n"
	        "  --json     print the result as JSON on stdout\n"
	        "  -v         show every check\n"
	        "The sources come from $MENV_OPS_DIR, else %s.\n",
	        MENV_OPS_DIR);
}

int menv_cli_smoke(const char *prefix, bool json, bool verbose, bool keep, json_t **report)
{
	struct menv_error err = {0};
	struct menv_smoke_result res;
	struct menv_virtual virt[8];
	struct draw d = {json, verbose};
	struct menv_smoke_opts o = {.cb = on_event,
	                            .ctx = &d,
	                            .keep_build = keep,
	                            .cancel = (volatile int *)&menv_cli_cancel};
	int rc;

	size_t nv = menv_virtual_detect(virt, 8);
	for (size_t i = 0; i < nv; i++)
		if (!strcmp(virt[i].name, "__cuda"))
			o.cuda_driver = virt[i].version;

	FILE *f = d.json ? stderr : stdout;
	fprintf(f, "Smoke check of %s (ops/ built with the environment's toolchain)\n", prefix);
	rc = menv_smoke_run(prefix, &o, &res, &err);
	if (rc)
		return menv_cli_fail(&err);
	if (menv_smoke_write_record(prefix, &res, &err))
		fprintf(stderr, "menv: warning: %s\n", err.msg);
	if (report)
		*report = menv_smoke_result_json(&res);
	else if (d.json) {
		json_t *j = menv_smoke_result_json(&res);
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s\n", s);
		free(s);
		json_decref(j);
	}
	const char *gpu_note = "";
	for (size_t i = 0; i < res.n_steps; i++)
		if (!strcmp(res.steps[i].name, "GPU tests") &&
		    res.steps[i].verdict == MENV_SMOKE_SKIP)
			gpu_note = res.steps[i].summary;
	if (res.passed)
		fprintf(f, "Smoke check passed%s%s%s; log: %s\n", gpu_note[0] ? " (" : "", gpu_note,
		        gpu_note[0] ? ")" : "", res.log_path);
	else
		fprintf(stderr,
		        "menv: error: smoke check failed (the environment is kept); log: %s%s%s\n",
		        res.log_path, res.build_dir[0] ? "; build directory kept: " : "",
		        res.build_dir);
	return res.passed ? MENV_EXIT_OK : MENV_EXIT_FAIL;
}

bool menv_cli_wants_smoke(const struct menv_config *cfg, const char *prefix)
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

int menv_cmd_smoke(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'},
	        {"prefix", required_argument, NULL, 'p'},
	        {"json", no_argument, NULL, 'j'},
	        {"keep", no_argument, NULL, 'k'},
	        {"verbose", no_argument, NULL, 'v'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct draw d = {0};
	struct {
		bool keep_build;
	} o = {false};
	const char *name = NULL, *path = NULL;
	char *prefix = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:p:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'p': path = optarg; break;
		case 'j': d.json = true; break;
		case 'k': o.keep_build = true; break;
		case 'v': d.verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return MENV_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return MENV_EXIT_USAGE;
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		return menv_cli_fail(&err);
	prefix = menv_cli_prefix(&cfg, name, path, &err);
	if (!prefix) {
		menv_config_release(&cfg);
		return menv_cli_fail(&err);
	}
	rc = menv_cli_smoke(prefix, d.json, d.verbose, o.keep_build, NULL);
	free(prefix);
	menv_config_release(&cfg);
	return rc;
}
