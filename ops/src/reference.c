/*
 * reference.c - the float64 CPU reference of bias-add + GELU (tanh approximation) that every
 * test compares the kernels with, and bfloat16 conversions. Plain C, no CUDA.
 */
#include <math.h>
#include <string.h>

#include "menv_ops.h"

#define K0 0.79788456080286535588 /* sqrt(2/pi) */
#define K1 0.044715

double menv_ops_ref_gelu(double z)
{
	return 0.5 * z * (1.0 + tanh(K0 * (z + K1 * z * z * z)));
}

double menv_ops_ref_gelu_grad(double z)
{
	double t = tanh(K0 * (z + K1 * z * z * z));
	return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * K0 * (1.0 + 3.0 * K1 * z * z);
}

void menv_ops_ref_fwd(const double *x, const double *bias, double *y, int64_t rows, int64_t cols)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < cols; c++)
			y[r * cols + c] = menv_ops_ref_gelu(x[r * cols + c] + bias[c]);
}

void menv_ops_ref_bwd(const double *dy, const double *x, const double *bias, double *dx,
		      double *dbias, int64_t rows, int64_t cols)
{
	for (int64_t c = 0; c < cols; c++)
		dbias[c] = 0.0;
	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < cols; c++) {
			int64_t i = r * cols + c;
			dx[i] = dy[i] * menv_ops_ref_gelu_grad(x[i] + bias[c]);
			dbias[c] += dx[i];
		}
}

menv_ops_bf16 menv_ops_f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
		return (menv_ops_bf16)((u >> 16) | 0x40u); /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (menv_ops_bf16)(u >> 16);
}

float menv_ops_bf16_to_f32(menv_ops_bf16 h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}
