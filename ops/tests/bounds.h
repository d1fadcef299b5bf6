/*
 * bounds.h - rounding-error bounds of the bias-add + GELU arithmetic, from which the tests
 * derive every tolerance (test_gpu.cu, test_host.c; python/test_numpy.py and
 * torch/test_torch.py carry the same formulas in numpy/torch).
 *
 * A fixed limit (say 1e-3 relative) is either loose for one input or too tight for another:
 * a float32 directional finite difference divided by |<dx, v>|, a sum of random-sign terms
 * that may cancel to almost nothing, exceeded 1e-3 in 3 of 50 H200 runs of a correct kernel.
 * Here each checked quantity gets a bound B_i on |computed_i - exact_i| from the operations
 * that produce it (standard model fl(a op b) = (a op b)(1 + d), |d| <= u; Higham, "Accuracy
 * and Stability of Numerical Algorithms", 2nd ed., ch. 2-4), and a check passes when
 * ||out - ref||_2 <= ||B||_2 (reported as ||out - ref|| / ||ref|| against ||B|| / ||ref||):
 * exact for any correct kernel, and still far below the O(1) error of a wrong element,
 * column or formula.
 *
 * Precisions: u is the unit roundoff of the arithmetic (2^-24 float32, 2^-53 float64; the
 * bfloat16 kernels compute in float32), uo that of the stored output (2^-8 bfloat16, else 0:
 * float32 and float64 results are stored as computed). tanh in CUDA is within 2 ulp (tanhf)
 * and 1 ulp (tanh), glibc's within 2 ulp; for |t| < 1 an ulp is at most u, so
 * MENV_OPS_TANH_ULPS * u bounds it. Bounds are first order in u; BOUND_MARGIN (2) covers
 * the dropped O(u^2) terms many times over.
 *
 * All functions take and return doubles; none allocates or fails.
 */
#ifndef MENV_OPS_BOUNDS_H
#define MENV_OPS_BOUNDS_H

#include <math.h>
#include <stdint.h>

#define MENV_OPS_U_F32 (1.0 / 16777216.0)	   /* 2^-24 */
#define MENV_OPS_U_F64 (1.0 / 9007199254740992.0) /* 2^-53 */
#define MENV_OPS_U_BF16 (1.0 / 256.0)		   /* 2^-8: 8 significant bits */
#define MENV_OPS_TANH_ULPS 2.0
#define BOUND_MARGIN 2.0
/* maxima over the real line of |gelu'|, |gelu''|, |gelu'''| (1.1290 at z = 1.5, 0.7979 at
 * z = 0, 0.7767), sampled every 1e-3 on [-10, 10]; beyond that the tails decay to 1, 0, 0 */
#define MENV_OPS_G1 1.13
#define MENV_OPS_G2 0.80
#define MENV_OPS_G3 0.78

#define BND_K0 0.79788456080286535588
#define BND_K1 0.044715

/* |t^ - tanh(a)| for t^ = tanh(a^), a^ = fl(K0 (z + K1 z^3)): the library's ulps, plus a's
 * own error (K0, K1 rounded, z^3 two products, K1 z^3, +, K0 *: 7u relative, the terms of
 * z + K1 z^3 having one sign) times tanh'(a) = 1 - t^2 */
static inline double bnd_tanh(double z, double u)
{
	const double a = BND_K0 * (z + BND_K1 * z * z * z), t = tanh(a);
	return MENV_OPS_TANH_ULPS * u + 7 * u * fabs(a) * (1 - t * t);
}

/* |y^ - gelu(x + b)| for y^ the kernel's 0.5 z (1 + t) with z = fl(x + b) in precision u
 * (z's rounding costs max|gelu'| u |z|), then stored with output roundoff uo */
static inline double bnd_fwd(double z, double u, double uo)
{
	const double t = tanh(BND_K0 * (z + BND_K1 * z * z * z)), s = 1 + t, y = 0.5 * z * s;
	const double ds = bnd_tanh(z, u) + u * s; /* fl(1 + t^) */
	const double e = MENV_OPS_G1 * u * fabs(z) + 0.5 * fabs(z) * ds + u * fabs(y);
	return BOUND_MARGIN * (e + uo * (fabs(y) + e));
}

/* |g^ - gelu'(z)| for the kernel's g = 0.5 (1 + t) + 0.5 z (1 - t t) K0 (1 + 3 K1 z z):
 * 1 - t t loses 2|t| dt + u; B = 0.5 z q K0 m has 8u from its products, K0 and m; the sum
 * u |g|; z's rounding max|gelu''| u |z| */
static inline double bnd_grad(double z, double u)
{
	const double t = tanh(BND_K0 * (z + BND_K1 * z * z * z)), dt = bnd_tanh(z, u);
	const double s = 1 + t, q = 1 - t * t, m = 1 + 3 * BND_K1 * z * z;
	const double B = 0.5 * z * q * BND_K0 * m, g = 0.5 * s + B;
	const double ds = dt + u * s, dq = 2 * fabs(t) * dt + u;
	const double dB = 0.5 * fabs(z) * BND_K0 * m * dq + 8 * u * fabs(B);
	return BOUND_MARGIN * (0.5 * ds + dB + u * fabs(g) + MENV_OPS_G2 * u * fabs(z));
}

/* |dx^ - dy gelu'(z)| for dx = fl(dy g^) stored with uo; `dx` is dy gelu'(z) */
static inline double bnd_dx(double dy, double z, double dx, double u, double uo)
{
	const double e = fabs(dy) * bnd_grad(z, u) + BOUND_MARGIN * u * fabs(dx);
	return e + BOUND_MARGIN * uo * (fabs(dx) + e);
}

/* gamma_d = d u / (1 - d u): a sum whose every term passes through at most d roundings
 * (any summation tree of depth d) is within gamma_d * sum |terms| (Higham, 4.2) */
static inline double bnd_gamma(double d, double u)
{
	return d * u / (1 - d * u);
}

/* Depth of the backward kernel's dbias summation tree (bias_gelu.cu: each thread adds its
 * ceil(rows / (8 rb)) rows, 8 threads' sums are added in shared memory, then the rb row
 * blocks' partials): rb read back from the workspace size, which is rb * cols * acc bytes. */
static inline double bnd_dbias_depth(int64_t rows, int64_t cols, double ws_bytes, double acc)
{
	double rb = ws_bytes / ((double)cols * acc);
	if (rb < 1)
		rb = 1;
	return ceil((double)rows / (8 * rb)) + 8 + rb;
}

/* A central difference (f(z + h d) - f(z - h d)) / 2h of gelu, times dy, against
 * dy gelu'(z) d: truncation h^2 |d|^3 max|gelu'''| / 6 (Taylor with Lagrange remainder),
 * the two forward evaluations' errors / 2h, the perturbed inputs' rounding rho+ + rho-
 * (|z+- - (z +- h d)|) times max|gelu'| / 2h, and the difference and product in float64 */
static inline double bnd_fd(double dy, double z, double d, double h, double rho_p, double rho_m,
			    double u, double uo)
{
	const double fp = bnd_fwd(z + h * d, u, uo), fm = bnd_fwd(z - h * d, u, uo);
	const double ad = fabs(d);
	return fabs(dy) * (h * h * ad * ad * ad * MENV_OPS_G3 / 6 + (fp + fm) / (2 * h) +
			   MENV_OPS_G1 * (rho_p + rho_m) / (2 * h) +
			   BOUND_MARGIN * 4 * MENV_OPS_U_F64 * (MENV_OPS_G1 * ad + (fp + fm) / h));
}

#endif
