/*
 * cudahome.c - which CUDA toolkit builds in an environment would see. Build tools read
 * CUDA_HOME (or CUDA_PATH) before PATH: torch.utils.cpp_extension, CMake's FindCUDAToolkit,
 * setup.py scripts. An environment that holds nvcc gets both set to its prefix by its CUDA
 * package's activation (the toolchain channel's cudatoolkit, conda-forge's cuda-nvcc); a value
 * that names another toolkit (the machine's /usr/local/cuda, left by a package without
 * activation scripts or set again by hand, or one of the environment's own variables) makes
 * those builds use the other nvcc and its headers. `menv doctor` reports each such value.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activate.h"
#include "registry.h"
#include "smoke.h"

static const char *const vars[] = {"CUDA_HOME", "CUDA_PATH"};

/* Whether `value` names the toolkit of `nvcc` (PREFIX/bin/nvcc): the prefix itself, or a
 * folder whose bin/nvcc is that same file. */
static bool same_toolkit(const char *value, const char *prefix, const char *nvcc)
{
	char a[PATH_MAX], b[PATH_MAX];
	if (realpath(value, a) && realpath(prefix, b) && !strcmp(a, b))
		return true;
	char *other = menv_xasprintf("%s/bin/nvcc", value);
	bool same = realpath(other, a) && realpath(nvcc, b) && !strcmp(a, b);
	free(other);
	return same;
}

void menv_env_cuda_home_check(const char *prefix, struct menv_strvec *problems)
{
	struct menv_strvec names = MENV_STRVEC_INIT, values = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	char *nvcc = menv_xasprintf("%s/bin/nvcc", prefix);
	const char *active = getenv("CONDA_PREFIX");

	if (access(nvcc, X_OK) != 0)
		goto out; /* no CUDA compiler: any toolkit is the builds' own choice */
	/* the calling environment, where this environment is the active one */
	for (size_t i = 0; active && *active && menv_env_same_prefix(active, prefix) && i < 2;
	     i++) {
		const char *v = getenv(vars[i]);
		if (v && *v && !same_toolkit(v, prefix, nvcc))
			menv_strvec_push_owned(
			        problems,
			        menv_xasprintf(
			                "%s=%s (this shell) is another CUDA toolkit than the "
			                "environment's nvcc (%s): builds that read it "
			                "(torch.utils.cpp_extension, CMake) would use that one; "
			                "fix: export %s=\"$CONDA_PREFIX\"",
			                vars[i], v, nvcc, vars[i]));
	}
	/* the environment's own variables (conda-meta/state), set on every activation */
	if (menv_env_state_vars_load(prefix, &names, &values, &err) == 0)
		for (size_t i = 0; i < names.n; i++) {
			if (strcmp(names.v[i], vars[0]) && strcmp(names.v[i], vars[1]))
				continue;
			if (*values.v[i] && !same_toolkit(values.v[i], prefix, nvcc))
				menv_strvec_push_owned(
				        problems,
				        menv_xasprintf(
				                "the environment's variable %s=%s "
				                "(conda-meta/state) is another CUDA toolkit than "
				                "its nvcc (%s); fix: menv env config vars unset "
				                "-p %s %s",
				                names.v[i], values.v[i], nvcc, prefix, names.v[i]));
		}
out:
	menv_strvec_clear(&names);
	menv_strvec_clear(&values);
	free(nvcc);
}
