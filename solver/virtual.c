/*
 * virtual.c - the virtual packages (CEP-30) of the target subdir: __unix, __linux, __glibc,
 * __osx, __win, __archspec and __cuda, with conda's CONDA_OVERRIDE_* variables. __cuda comes
 * only from the driver (libcuda's cuDriverGetVersion), never from a toolkit on disk.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "solver.h"

static void put(struct menv_virtual *v, const char *name, const char *version, const char *build)
{
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->version, sizeof(v->version), "%s", version);
	snprintf(v->build, sizeof(v->build), "%s", build);
}

/* The driver's CUDA version ("12.4"), or an empty string without a usable driver. */
static void cuda_driver_version(char *out, size_t n)
{
	typedef int (*init_fn)(unsigned int);
	typedef int (*ver_fn)(int *);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int v = 0;

	out[0] = '\0';
	if (!h)
		return;
	init_fn cu_init = (init_fn)(uintptr_t)dlsym(h, "cuInit");
	ver_fn cu_ver = (ver_fn)(uintptr_t)dlsym(h, "cuDriverGetVersion");
	if (cu_init && cu_ver && cu_init(0) == 0 && cu_ver(&v) == 0 && v > 0)
		snprintf(out, n, "%d.%d", v / 1000, (v % 1000) / 10);
	dlclose(h);
}

/* The leading dotted number of a kernel release ("6.1.0-18-amd64" -> "6.1.0"). */
static void kernel_version(char *out, size_t n)
{
	struct utsname u;
	size_t i = 0;

	out[0] = '\0';
	if (uname(&u) < 0)
		return;
	while (u.release[i] &&
	       (u.release[i] == '.' || (u.release[i] >= '0' && u.release[i] <= '9')) && i + 1 < n) {
		out[i] = u.release[i];
		i++;
	}
	while (i > 0 && out[i - 1] == '.')
		i--;
	out[i] = '\0';
}

static const char *archspec_level(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl"))
		return "x86_64_v4";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
	    __builtin_cpu_supports("fma"))
		return "x86_64_v3";
	if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt"))
		return "x86_64_v2";
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#else
	return "unknown";
#endif
}

/* Applies CONDA_OVERRIDE_<NAME>: returns 0 to keep `detected`, 1 to use `*value`, -1 to drop. */
static int override(const char *var, const char **value)
{
	const char *e = getenv(var);
	if (!e)
		return 0;
	if (!*e)
		return -1;
	*value = e;
	return 1;
}

/* The machine part of a subdir for a foreign target's __archspec ("osx-arm64" -> arm64). */
static const char *subdir_arch(const char *subdir)
{
	const char *dash = strchr(subdir, '-');
	const char *a = dash ? dash + 1 : "";
	if (!strcmp(a, "64"))
		return "x86_64";
	if (!strcmp(a, "32"))
		return "x86";
	return a; /* aarch64, arm64, ppc64le, s390x, ... */
}

size_t menv_virtual_detect_subdir(const char *subdir, struct menv_virtual *out, size_t max)
{
	char buf[64];
	const char *v;
	size_t n = 0;
	const char *host = menv_platform_subdir();
	bool linux_target = !strncmp(subdir, "linux-", 6);
	bool osx_target = !strncmp(subdir, "osx-", 4);
	bool win_target = !strncmp(subdir, "win-", 4);

	if ((linux_target || osx_target) && n < max)
		put(&out[n++], "__unix", "0", "0");
	if (linux_target) {
		/* the host's kernel and C library (this machine is Linux) */
		kernel_version(buf, sizeof(buf));
		v = buf;
		if (override("CONDA_OVERRIDE_LINUX", &v) >= 0 && *v && n < max)
			put(&out[n++], "__linux", v, "0");
		v = gnu_get_libc_version();
		if (override("CONDA_OVERRIDE_GLIBC", &v) >= 0 && *v && n < max)
			put(&out[n++], "__glibc", v, "0");
	}
	if (osx_target) {
		/* conda: CONDA_OVERRIDE_OSX, else the running macOS (none here) */
		v = "";
		if (override("CONDA_OVERRIDE_OSX", &v) >= 0 && *v && n < max)
			put(&out[n++], "__osx", v, "0");
	}
	if (win_target) {
		v = "0";
		if (override("CONDA_OVERRIDE_WIN", &v) >= 0 && *v && n < max)
			put(&out[n++], "__win", v, "0");
	}
	/* the host's microarchitecture for its own subdir, the target's machine otherwise */
	v = strcmp(subdir, host) ? subdir_arch(subdir) : archspec_level();
	if (strcmp(subdir, "noarch") && override("CONDA_OVERRIDE_ARCHSPEC", &v) >= 0 && *v &&
	    n < max)
		put(&out[n++], "__archspec", "1", v);
	v = NULL;
	int o = override("CONDA_OVERRIDE_CUDA", &v);
	if (o == 0) {
		cuda_driver_version(buf, sizeof(buf));
		v = buf;
	}
	if (o >= 0 && v && *v && n < max)
		put(&out[n++], "__cuda", v, "0");
	return n;
}

size_t menv_virtual_detect(struct menv_virtual *out, size_t max)
{
	return menv_virtual_detect_subdir(menv_platform_subdir(), out, max);
}
