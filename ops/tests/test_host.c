/*
 * test_host.c - host-side tests of menv_ops, needing no GPU: the float64 reference against
 * known values and against finite differences of itself, bfloat16 rounding, and the C API's
 * argument checks (which return before any CUDA call). Prints "[ops] PASS|FAIL ..." lines;
 * exit 0 when all pass.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "menv_ops.h"

static int failures;

static void verdict(int ok, const char *what, double v, double limit)
{
	printf("[ops] %s host %s: %.3g (limit %.3g)\n", ok ? "PASS" : "FAIL", what, v, limit);
	if (!ok)
		failures++;
}

static unsigned long long rng;
static double urand(void) /* [0, 1) */
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static void test_known_values(void)
{
	/* values of 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) computed independently */
	static const double z[] = { 0.0, 1.0, -1.0, 3.0, -3.0, 0.5, -0.5, 10.0 };
	static const double g[] = { 0.0, 0.8411919906082768, -0.15880800939172324,
				    2.996362607918227, -0.0036373920817729943,
				    0.34571400982514394, -0.15428599017485606, 10.0 };
	double worst = 0;
	for (size_t i = 0; i < sizeof(z) / sizeof(*z); i++) {
		double e = fabs(menv_ops_ref_gelu(z[i]) - g[i]) / (fabs(g[i]) > 1e-300 ? fabs(g[i]) : 1);
		worst = e > worst ? e : worst;
	}
	verdict(worst < 1e-14, "gelu reference vs known values, max rel err", worst, 1e-14);

	/* saturation: no NaN or Inf for large |z| */
	int ok = 1;
	for (double v = 1; v < 1e30; v *= 10)
		ok &= isfinite(menv_ops_ref_gelu(v)) && isfinite(menv_ops_ref_gelu(-v)) &&
		      isfinite(menv_ops_ref_gelu_grad(v)) && isfinite(menv_ops_ref_gelu_grad(-v));
	ok &= fabs(menv_ops_ref_gelu_grad(40) - 1) < 1e-15 && fabs(menv_ops_ref_gelu_grad(-40)) < 1e-15;
	verdict(ok, "gelu reference finite and saturating for |z| up to 1e29", ok ? 0 : 1, 0);
}

static void test_grad_fd(void)
{
	/* d gelu / dz against a central difference, over [-8, 8] */
	double worst = 0;
	for (double z = -8; z <= 8; z += 1.0 / 64) {
		const double h = 1e-5;
		double fd = (menv_ops_ref_gelu(z + h) - menv_ops_ref_gelu(z - h)) / (2 * h);
		double e = fabs(fd - menv_ops_ref_gelu_grad(z)) / (1 + fabs(fd));
		worst = e > worst ? e : worst;
	}
	verdict(worst < 1e-8, "gelu' reference vs central difference, max err", worst, 1e-8);
}

/* the reference's backward against a finite difference of its forward, along a random
 * direction: L = sum(dy * y), dL = <dx, vx> + <dbias, vb> */
static void test_bwd_fd(void)
{
	const int64_t rows = 37, cols = 53, n = rows * cols;
	double *x = malloc(n * sizeof(double)), *dy = malloc(n * sizeof(double));
	double *vx = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
	double *dx = malloc(n * sizeof(double)), *xp = malloc(n * sizeof(double));
	double b[53], vb[53], db[53], bp[53];
	for (int64_t i = 0; i < n; i++) {
		x[i] = 6 * urand() - 3;
		dy[i] = 2 * urand() - 1;
		vx[i] = 2 * urand() - 1;
	}
	for (int64_t c = 0; c < cols; c++) {
		b[c] = 2 * urand() - 1;
		vb[c] = 2 * urand() - 1;
	}
	menv_ops_ref_bwd(dy, x, b, dx, db, rows, cols);
	double an = 0, l[2];
	for (int64_t i = 0; i < n; i++)
		an += dx[i] * vx[i];
	for (int64_t c = 0; c < cols; c++)
		an += db[c] * vb[c];
	const double h = 1e-6;
	for (int s = 0; s < 2; s++) {
		double sign = s ? -1 : 1;
		for (int64_t i = 0; i < n; i++)
			xp[i] = x[i] + sign * h * vx[i];
		for (int64_t c = 0; c < cols; c++)
			bp[c] = b[c] + sign * h * vb[c];
		menv_ops_ref_fwd(xp, bp, y, rows, cols);
		l[s] = 0;
		for (int64_t i = 0; i < n; i++)
			l[s] += dy[i] * y[i];
	}
	double fd = (l[0] - l[1]) / (2 * h), e = fabs(fd - an) / fabs(an);
	verdict(e < 1e-6, "reference backward vs directional finite difference, rel err", e, 1e-6);
	free(x), free(dy), free(vx), free(y), free(dx), free(xp);
}

static void test_bf16(void)
{
	int ok = menv_ops_f32_to_bf16(1.0f) == 0x3f80 && menv_ops_f32_to_bf16(-2.0f) == 0xc000 &&
		 menv_ops_bf16_to_f32(0x3f80) == 1.0f &&
		 menv_ops_f32_to_bf16(1.00390625f) == 0x3f80 && /* tie: to even */
		 menv_ops_f32_to_bf16(1.01171875f) == 0x3f82 && /* tie: to even (up) */
		 isnan(menv_ops_bf16_to_f32(menv_ops_f32_to_bf16(NAN)));
	double worst = 0;
	for (int i = 0; i < 10000; i++) {
		float f = (float)((urand() - 0.5) * 1e3);
		double e = fabs(menv_ops_bf16_to_f32(menv_ops_f32_to_bf16(f)) - f) / fabs(f);
		worst = e > worst ? e : worst;
	}
	ok &= worst <= 1.0 / 256;
	verdict(ok, "bfloat16 round to nearest even, max rel err", worst, 1.0 / 256);
}

static void test_api_checks(void)
{
	float a[8] = { 0 };
	int ok = 1;
	ok &= menv_ops_bias_gelu_fwd_f32(NULL, a, a, 2, 4, NULL) == MENV_OPS_EINVAL;
	ok &= menv_ops_bias_gelu_fwd_f32(a, a, a, -1, 4, NULL) == MENV_OPS_EINVAL;
	ok &= menv_ops_bias_gelu_fwd_f32(a, a, a, INT64_MAX / 2, 4, NULL) == MENV_OPS_EINVAL;
	ok &= menv_ops_bias_gelu_fwd_f32(NULL, NULL, NULL, 0, 4, NULL) == MENV_OPS_OK;
	ok &= menv_ops_bias_gelu_fwd_f64(NULL, NULL, NULL, 3, 0, NULL) == MENV_OPS_OK;
	ok &= menv_ops_bias_gelu_fwd_bf16(NULL, NULL, NULL, 1, 1, NULL) == MENV_OPS_EINVAL;
	size_t ws = menv_ops_bias_gelu_bwd_workspace(4096, 1024, 4);
	ok &= ws == 64 * 1024 * 4; /* 64 row blocks of 1024 float partial sums */
	ok &= menv_ops_bias_gelu_bwd_workspace(4096, 1024, 8) == 64 * 1024 * 8;
	ok &= menv_ops_bias_gelu_bwd_workspace(1, 1 << 20, 2) == (1 << 20) * 4;
	ok &= menv_ops_bias_gelu_bwd_workspace(4, 4, 3) == 0;
	ok &= menv_ops_bias_gelu_bwd_workspace(0, 4, 4) == 0;
	ok &= menv_ops_bias_gelu_bwd_f32(a, a, a, a, a, a, ws - 1, 4096, 1024, NULL) ==
	      MENV_OPS_EINVAL;
	ok &= menv_ops_bias_gelu_bwd_f32(a, a, a, a, a, NULL, ws, 4096, 1024, NULL) ==
	      MENV_OPS_EINVAL;
	ok &= menv_ops_bias_gelu_bwd_f64(NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL) ==
	      MENV_OPS_OK;
	ok &= strstr(menv_ops_strerror(MENV_OPS_EINVAL), "invalid") != NULL;
	ok &= strstr(menv_ops_build_info(), "nvcc ") != NULL;
	verdict(ok, "C API argument checks (no CUDA call)", ok ? 0 : 1, 0);
}

int main(void)
{
	const char *seed = getenv("MENV_OPS_SEED");
	rng = seed ? strtoull(seed, NULL, 0) : (unsigned long long)time(NULL) ^ 0x9e3779b97f4a7c15ULL;
	printf("[ops] INFO build: %s; seed %llu\n", menv_ops_build_info(), rng);
	test_known_values();
	test_grad_fd();
	test_bwd_fd();
	test_bf16();
	test_api_checks();
	printf("[ops] %s host tests: %d failed\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
