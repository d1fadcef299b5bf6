/*
 * menv_ops.h - the sample custom operator: bias-add + GELU (tanh approximation), fused,
 * forward and backward, as a C API over CUDA kernels, plus a float64 CPU reference.
 *
 *   forward:   y[r,c]   = gelu(x[r,c] + bias[c])
 *   backward:  dx[r,c]  = dy[r,c] * gelu'(x[r,c] + bias[c]);   dbias[c] = sum_r dx[r,c]
 *   gelu(z)    = 0.5 z (1 + tanh(k0 (z + k1 z^3))),  k0 = sqrt(2/pi), k1 = 0.044715
 *
 * Tensors are row-major `rows x cols`; bias, dbias have `cols` elements. Device pointers.
 * Kernels read and write each element once (memory-bound): 16-byte vector accesses when
 * `cols` and the pointers allow it, scalar otherwise. Math is done in float for float32 and
 * bfloat16 tensors, in double for float64. dbias is reduced deterministically (per-block
 * partial sums in a caller-given workspace, then a second pass): same inputs, same bits.
 *
 * Return values: 0 on success; MENV_OPS_EINVAL for bad arguments (checked before any CUDA
 * call, so this works without a GPU); a positive value is a cudaError_t from the launch.
 * Launches are asynchronous on `stream` (NULL: the legacy default stream).
 */
#ifndef MENV_OPS_H
#define MENV_OPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	MENV_OPS_OK = 0,
	MENV_OPS_EINVAL = -1, /* a NULL pointer, negative size, size overflow, small workspace */
};

/* cudaStream_t without including cuda_runtime.h (it is `struct CUstream_st *`). */
typedef struct CUstream_st *menv_ops_stream;

/* bfloat16 values as their raw 16 bits (the top half of a float32). */
typedef uint16_t menv_ops_bf16;

int menv_ops_bias_gelu_fwd_f32(const float *x, const float *bias, float *y, int64_t rows,
			       int64_t cols, menv_ops_stream stream);
int menv_ops_bias_gelu_fwd_f64(const double *x, const double *bias, double *y, int64_t rows,
			       int64_t cols, menv_ops_stream stream);
int menv_ops_bias_gelu_fwd_bf16(const menv_ops_bf16 *x, const menv_ops_bf16 *bias,
				menv_ops_bf16 *y, int64_t rows, int64_t cols,
				menv_ops_stream stream);

/* Bytes of device workspace the backward pass needs for `rows x cols` of elements of
 * `elem_size` bytes (2, 4 or 8); 0 for an empty tensor or a bad size. */
size_t menv_ops_bias_gelu_bwd_workspace(int64_t rows, int64_t cols, int elem_size);

int menv_ops_bias_gelu_bwd_f32(const float *dy, const float *x, const float *bias, float *dx,
			       float *dbias, void *workspace, size_t workspace_bytes,
			       int64_t rows, int64_t cols, menv_ops_stream stream);
int menv_ops_bias_gelu_bwd_f64(const double *dy, const double *x, const double *bias,
			       double *dx, double *dbias, void *workspace,
			       size_t workspace_bytes, int64_t rows, int64_t cols,
			       menv_ops_stream stream);
int menv_ops_bias_gelu_bwd_bf16(const menv_ops_bf16 *dy, const menv_ops_bf16 *x,
				const menv_ops_bf16 *bias, menv_ops_bf16 *dx,
				menv_ops_bf16 *dbias, void *workspace, size_t workspace_bytes,
				int64_t rows, int64_t cols, menv_ops_stream stream);

/* A message for a return value (static storage). */
const char *menv_ops_strerror(int code);

/* How the library was built: "nvcc 11.8, host g++ 11.3.0, targets sm_80 sm_90 compute_90"
 * (static storage). */
const char *menv_ops_build_info(void);

/* ---- float64 CPU reference (reference.c; no CUDA) ---- */
double menv_ops_ref_gelu(double z);
double menv_ops_ref_gelu_grad(double z);
void menv_ops_ref_fwd(const double *x, const double *bias, double *y, int64_t rows, int64_t cols);
void menv_ops_ref_bwd(const double *dy, const double *x, const double *bias, double *dx,
		      double *dbias, int64_t rows, int64_t cols);
/* bfloat16 <-> float, round to nearest even (NaN stays NaN). */
menv_ops_bf16 menv_ops_f32_to_bf16(float f);
float menv_ops_bf16_to_f32(menv_ops_bf16 h);

#ifdef __cplusplus
}
#endif

#endif
