/*
 * smoke.h - checking an environment: the smoke check (the sample custom-op package of ops/
 * built and tested inside it, smoke.c) and `menv doctor` (what is wrong with it, and --fix,
 * doctor.c).
 */
#ifndef MENV_ENVS_SMOKE_H
#define MENV_ENVS_SMOKE_H

#include "specs.h"

/* Where menv finds the ops/ sources: $MENV_OPS_DIR, else this path, fixed at build time. */
#ifndef MENV_OPS_DIR
#define MENV_OPS_DIR "ops"
#endif

enum menv_smoke_verdict { MENV_SMOKE_PASS, MENV_SMOKE_FAIL, MENV_SMOKE_SKIP };

/* One step: "toolchain", "configure", "build", "host tests", "GPU tests", "python", "torch". */
struct menv_smoke_step {
	const char *name; /* static storage */
	enum menv_smoke_verdict verdict;
	double seconds;
	char summary[512]; /* one line: what passed, or why it failed or skipped */
};

enum menv_smoke_event {
	MENV_SMOKE_STEP_BEGIN, /* step: name set; line NULL */
	MENV_SMOKE_STEP_END,   /* step: verdict, seconds, summary set */
	MENV_SMOKE_LINE,       /* line: one "[ops] ..." line of a test (without the tag) */
	MENV_SMOKE_HINT,       /* line: a diagnosis, one or two sentences saying what to do */
};
/* Progress callback: the library never prints; the CLI draws these. Arguments are borrowed
 * for the call only. */
typedef void (*menv_smoke_cb)(void *ctx, enum menv_smoke_event ev,
                              const struct menv_smoke_step *step, const char *line);

struct menv_smoke_opts {
	const char *ops_dir;     /* sources; NULL: $MENV_OPS_DIR, else MENV_OPS_DIR */
	const char *cuda_driver; /* version of the __cuda virtual package, NULL without a driver */
	const char *tmp_dir;     /* parent of the build directory; NULL: $TMPDIR, else /tmp */
	bool keep_build;         /* keep the build directory even when every step passed */
	int step_timeout_s;      /* per step; 0: 1200 */
	bool force;              /* menv_txn_smoke: run even when the fingerprint is unchanged */
	menv_smoke_cb cb;        /* may be NULL */
	void *ctx;
	volatile int *cancel; /* set non-zero (by a signal handler) to stop: MENV_EINTR */
};

#define MENV_SMOKE_MAX_STEPS 8
#define MENV_SMOKE_MAX_PERF  4
#define MENV_SMOKE_MAX_HINTS 6

struct menv_smoke_result {
	bool passed;  /* no step failed (skipped steps do not fail the check) */
	bool gpu_ran; /* the GPU tests ran to a verdict (not skipped) */
	struct menv_smoke_step steps[MENV_SMOKE_MAX_STEPS];
	size_t n_steps;
	char nvcc_path[1024], nvcc_version[32]; /* "" when not found */
	char cxx_path[1024], cxx_version[32];
	bool cxx_in_env;                /* the host compiler lives in the prefix */
	char driver_cuda[32];           /* opts->cuda_driver, or "" */
	char gpu[128], compute_cap[16]; /* from the GPU tests, "" when none ran */
	char targets[128];              /* GPU code built: "sm_80 sm_90 compute_90" */
	struct {
		char what[64]; /* "f32 forward 8192x8192" */
		double ms, gbs, peak_gbs;
	} perf[MENV_SMOKE_MAX_PERF];
	size_t n_perf;
	char hints[MENV_SMOKE_MAX_HINTS][512];
	size_t n_hints;
	char log_path[1024];      /* the whole output of every step, kept */
	char build_dir[1024];     /* "" once removed (all passed and !keep_build) */
	bool unchanged;           /* not run: inputs unchanged since a passed check (no steps) */
	char unchanged_since[32]; /* that check's date, "2026-12-01 15:40:02 UTC" */
};

/* Runs the smoke check on the environment at `prefix`: copies the ops/ sources to a new
 * temporary directory and there, in a scrubbed environment (PATH=$PREFIX/bin:/usr/bin:/bin,
 * HOME, LC_ALL=C, CONDA_PREFIX; no CUDA_HOME, LIBRARY_PATH, CPATH; LD_LIBRARY_PATH only
 * where it holds the driver's libcuda.so.1) with the prefix's etc/conda/activate.d scripts (.sh)
 * sourced in lexical order (so CC/CXX come from the environment), runs: toolchain probe,
 * configure, build (ninja, else make), and the tests (host, GPU, python, torch; a test that
 * exits 77 is skipped, e.g. "GPU run skipped: no CUDA driver found"). Known failures get a
 * hint (nvcc missing, host compiler too new for nvcc, driver older than the toolkit, no
 * kernel image for this GPU, missing headers). The log is written to
 * `<prefix>/conda-meta/smoke-check.log` (or the build directory when the prefix is not
 * writable). A failing check is a result (res->passed false), not an error.
 * Errors: MENV_ENOTFOUND (no prefix, no ops sources), MENV_EIO, MENV_EINTR. */
int menv_smoke_run(const char *prefix, const struct menv_smoke_opts *opts,
                   struct menv_smoke_result *res, struct menv_error *err);

/* The result as JSON (status, steps, versions of nvcc/g++/driver, GPU, timings, GB/s,
 * hints, log). New reference. */
json_t *menv_smoke_result_json(const struct menv_smoke_result *res);
/* The line that ends a smoke check (new string, caller frees): "Smoke check: toolchain, ops/
 * sources and driver unchanged since DATE, when it passed (--smoke-check runs it again)";
 * "Smoke check passed[ (why the GPU tests were skipped)]; log: LOG"; or "smoke check failed
 * (the environment is kept); log: LOG[; build directory kept: DIR]". */
char *menv_smoke_result_line(const struct menv_smoke_result *res);

/* Where the smoke check reads the ops/ sources: `ops_dir` when not NULL, else $MENV_OPS_DIR
 * when set and not empty, else MENV_OPS_DIR (fixed at build time). Borrowed. */
const char *menv_smoke_ops_dir(const char *ops_dir);

/* The host-compiler check that the smoke check makes first and `menv doctor` reports, so
 * both give one verdict: in the smoke check's scrubbed shell with the prefix's activation
 * (PATH=$PREFIX/bin:/usr/bin:/bin), which nvcc and host compiler ($CXX, else g++) a build
 * gets and their versions; when nvcc's CUDA release refuses that GCC (CUDA 11.0: GCC <= 9,
 * 11.1-11.3: <= 10, 11.4-11.8: <= 11, 12.0-12.3: <= 12, later 12.x: <= 13, 13.x: <= 15) or
 * there is none, `*problem` is one line (new string) naming both and what to add, e.g.
 * "nvcc 11.8.89 does not support the host compiler g++ 12.2.0 ('/usr/bin/g++', from the
 * system, not the environment): nvcc 11.8 accepts GCC up to 11; add gxx_linux-64=11 to the
 * environment"; else NULL (also without nvcc). Errors: MENV_EIO (the probe could not run). */
int menv_smoke_host_compiler(const char *prefix, char **problem, struct menv_error *err);

/* The smoke check's toolchain probe (as menv_smoke_host_compiler runs it) as one line for
 * the fingerprint: "probe nvcc PATH VERSION, c++ PATH VERSION" ("none"/"-" where not found),
 * so that a host compiler from outside the package records (the system's g++, a $CXX an
 * activation script names) counts too. `*line` is new. Errors: MENV_EIO. */
int menv_smoke_probe_line(const char *prefix, char **line, struct menv_error *err);

/* The smoke check's fingerprint (smokefp.c): the lowercase hex sha256 (`out`, 65 bytes with
 * the NUL) of sorted text lines naming what the check depends on: the PrefixRecords of the
 * toolchain packages (nvcc/cudatoolkit/cuda-*, gcc/gxx/binutils/libgcc/libstdcxx/sysroot,
 * python, numpy, pybind11, pytorch, ninja, setuptools; name, version, build and the package
 * file's sha256), pip's dist-info folders of numpy, pybind11, torch, ninja, setuptools, the
 * nvcc and host compiler a build gets with their versions (menv_smoke_probe_line), the
 * sha256 of each ops/ source file under `ops_dir` (as the check copies them), the driver
 * (`cuda_driver`, the __cuda version or NULL, and /proc/driver/nvidia/version's first line)
 * and $MENV_OPS_ARCH. A pure package (ply) changes none of them. `inputs`, when not NULL,
 * receives those lines (copies). Errors: MENV_ENOTFOUND (no conda-meta/, no ops sources),
 * MENV_EPARSE (a record), MENV_EIO. */
int menv_smoke_fingerprint(const char *prefix, const char *ops_dir, const char *cuda_driver,
                           char out[65], struct menv_strvec *inputs, struct menv_error *err);

/* Whether `<prefix>/conda-meta/menv-smoke-fingerprint` holds `fp` for a check that passed;
 * then its date goes to `since` ("2026-12-01 15:40:02 UTC"). A missing or unreadable file
 * is false. */
bool menv_smoke_fingerprint_unchanged(const char *prefix, const char *fp, char since[32]);

/* Writes `<prefix>/conda-meta/menv-smoke-fingerprint` atomically: {fingerprint, status
 * ("passed"/"failed"), date (UTC), timestamp, inputs}. Errors: MENV_EIO. */
int menv_smoke_fingerprint_write(const char *prefix, const char *fp,
                                 const struct menv_strvec *inputs, bool passed,
                                 struct menv_error *err);

/* Writes menv_smoke_result_json() to `<prefix>/conda-meta/menv-smoke-check` atomically.
 * Errors: MENV_EIO. */
int menv_smoke_write_record(const char *prefix, const struct menv_smoke_result *res,
                            struct menv_error *err);

/* `menv doctor` (conda doctor): what is wrong with an environment. */
enum menv_doctor_kind {
	MENV_DOCTOR_CORRUPT_RECORD, /* a conda-meta/ JSON record that does not parse or names nothing */
	MENV_DOCTOR_MISSING_FILE,   /* a file a PrefixRecord lists is gone */
	MENV_DOCTOR_CHANGED_FILE,   /* its sha256 (or size) is not the record's */
	MENV_DOCTOR_LINK_OUT,       /* a symbolic link of a package resolves out of the prefix */
	MENV_DOCTOR_STALE_REGISTRY, /* ~/.conda/environments.txt names a prefix that is gone */
	MENV_DOCTOR_TOOLCHAIN,      /* two lines on nvcc, its host g++ or the driver (no fault) */
	MENV_DOCTOR_CUDA_HOME,      /* CUDA_HOME/CUDA_PATH name another toolkit than its nvcc */
	MENV_DOCTOR_STALE_OTHER,    /* a registry line of another environment that is gone (a
	                             * note, no fault of this one; --fix takes it out) */
	MENV_DOCTOR_HOST_COMPILER,  /* nvcc refuses the host compiler a build gets: the smoke
	                               check's verdict (menv_smoke_host_compiler) */
};
struct menv_doctor_finding {
	enum menv_doctor_kind kind;
	char *package; /* the dist or record file (owned, may be "") */
	char *path;    /* the file, relative to the prefix, or the record's or registry's path */
	char *text;    /* one line saying it (two for TOOLCHAIN), owned */
	bool fixed;    /* --fix repaired it */
};
struct menv_doctor_report {
	struct menv_doctor_finding *findings;
	size_t n;
	size_t packages, files; /* records read, files checked */
};
/* Checks `prefix`: every JSON record of conda-meta/ read on its own (a corrupt one is a
 * finding, not an error), each file of paths_data present with its size and sha256
 * (sha256_in_prefix where the prefix was written into it), package links that leave the
 * prefix, registry lines of gone environments (the one naming `prefix` a STALE_REGISTRY
 * fault; with `all_envs`, as for a doctor asked about no environment in particular, the
 * others too, as STALE_OTHER notes), and where the environment has nvcc its toolchain (nvcc,
 * the host g++ it accepts, the driver's CUDA from __cuda) and the CUDA_HOME/CUDA_PATH builds
 * would see (menv_env_cuda_home_check, CUDA_HOME faults). With `fix`, under the prefix lock: corrupt records set aside as
 * `<file>.corrupt` (so every command works again), packages with missing or changed files
 * prefix, registry lines of gone environments (with `all_envs`, every line, as for a doctor
 * asked about no environment in particular; else only the lines naming `prefix`), and where
 * the environment has nvcc its toolchain (nvcc, the host g++ it accepts, the driver's CUDA
 * from __cuda) and, as a problem, a host compiler nvcc refuses (menv_smoke_host_compiler,
 * the smoke check's own verdict). With `fix`, under the prefix lock: corrupt records set
 * aside as `<file>.corrupt` (so every command works again), packages with missing or changed files
 * linked again from the package cache in one journaled transaction, stale registry lines
 * taken out. Fill `r` (release with menv_doctor_report_release). Errors: MENV_ENOTFOUND (no
 * conda-meta/), those of menv_env_lock and of the relink. */
int menv_env_doctor(const struct menv_config *cfg, const char *prefix, bool fix, bool all_envs,
                    struct menv_doctor_report *r, struct menv_error *err);
void menv_doctor_report_release(struct menv_doctor_report *r);
/* What `r` (of `prefix`) says: `*faults` the findings that remain problems (TOOLCHAIN and
 * STALE_OTHER are notes, a fixed finding none), the report as a new JSON object {prefix,
 * findings: [{kind ("corrupt-record", "missing-file", "changed-file", "link-out",
 * "stale-registry", "toolchain", "cuda-home", "stale-registry-other", "host-compiler"),
 * package, path, text, fixed}], problems}, and, when `text` is not NULL, its lines appended:
 * each finding ("problem: " or "note: " before it, " (fixed)" after), one note counting the
 * stale registry lines of other environments with the hint to --fix, then "PREFIX: N
 * package records, M files checked, K problems left". */
json_t *menv_doctor_report_json(const struct menv_doctor_report *r, const char *prefix, int *faults,
                                struct menv_buf *text);
/* cudahome.c: where `prefix` holds an executable bin/nvcc, one line (appended to `problems`,
 * owned by it) for each CUDA_HOME or CUDA_PATH that names another toolkit than that nvcc
 * (neither the prefix nor a folder whose bin/nvcc is the same file): the calling process's
 * values when `prefix` is the active environment ($CONDA_PREFIX), and the environment's own
 * variables (conda-meta/state) always; each line ends with its fix. Unset or empty values
 * are no problem (builds then find nvcc on PATH). Never fails: an unreadable state file is
 * doctor's to report. */
void menv_env_cuda_home_check(const char *prefix, struct menv_strvec *problems);

/* installed.c: in an installed menv (P/bin/menv, menv_self_exe), sets MENV_OPS_DIR to
 * P/share/menv/ops when that holds the ops/ sources (an executable `configure`) and the
 * variable is unset or empty (the build tree's menv keeps the path fixed at build time). A
 * front end calls it once, before any command. */
void menv_installed_paths(void);

#endif
