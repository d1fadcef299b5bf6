/*
 * bias_gelu.cu - CUDA kernels of the fused bias-add + GELU (tanh approximation) operator and
 * the C API of menv_ops.h around them.
 *
 * Memory-bound by design: forward reads x once and writes y once (8 bytes an element in
 * float32); backward reads dy and x and writes dx (12 bytes) and reduces dbias on the way,
 * keeping per-thread sums in registers, then per block in shared memory, then per column
 * over the row blocks in a second small kernel: no atomics, so results are deterministic.
 * Each thread moves 16 bytes per access (float4, double2, 8 x bfloat16) when `cols` and the
 * pointers allow, and keeps four independent accesses in flight.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdint.h>

#include "menv_ops.h"

#define STR2(x) #x
#define STR(x) STR2(x)
#if !defined(MENV_OPS_TARGETS) && defined(MENV_OPS_TARGETS_ID) /* a token: sm_90+compute_90 */
#define MENV_OPS_TARGETS STR(MENV_OPS_TARGETS_ID)
#endif
#ifndef MENV_OPS_TARGETS
#define MENV_OPS_TARGETS "unknown targets"
#endif

namespace {

constexpr int kThreads = 256;  /* forward block */
constexpr int kUnroll = 4;     /* independent 16-byte accesses per thread in flight */
constexpr int kBwdX = 32;      /* backward block: 32 column packs ... */
constexpr int kBwdY = 8;       /* ... by 8 rows */

template <typename T> struct Tr;
template <> struct Tr<float> {
	using C = float;
	__device__ static C ld(float v) { return v; }
	__device__ static float st(C v) { return v; }
};
template <> struct Tr<double> {
	using C = double;
	__device__ static C ld(double v) { return v; }
	__device__ static double st(C v) { return v; }
};
template <> struct Tr<__nv_bfloat16> {
	using C = float;
	__device__ static C ld(__nv_bfloat16 v) { return __bfloat162float(v); }
	__device__ static __nv_bfloat16 st(C v) { return __float2bfloat16_rn(v); }
};

__device__ __forceinline__ float gelu(float z)
{
	const float u = 0.7978845608028654f * (z + 0.044715f * z * z * z);
	return 0.5f * z * (1.0f + tanhf(u));
}
__device__ __forceinline__ double gelu(double z)
{
	const double u = 0.79788456080286535588 * (z + 0.044715 * z * z * z);
	return 0.5 * z * (1.0 + tanh(u));
}
__device__ __forceinline__ float gelu_grad(float z)
{
	const float t = tanhf(0.7978845608028654f * (z + 0.044715f * z * z * z));
	return 0.5f * (1.0f + t) +
	       0.5f * z * (1.0f - t * t) * 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * z * z);
}
__device__ __forceinline__ double gelu_grad(double z)
{
	const double t = tanh(0.79788456080286535588 * (z + 0.044715 * z * z * z));
	return 0.5 * (1.0 + t) +
	       0.5 * z * (1.0 - t * t) * 0.79788456080286535588 * (1.0 + 3.0 * 0.044715 * z * z);
}

/* V elements moved as one access (16 bytes when V = 16 / sizeof(T)). */
template <typename T, int V> struct alignas(sizeof(T) * V) Pack {
	T v[V];
};

template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
fwd_kernel(const T *__restrict__ x, const T *__restrict__ bias, T *__restrict__ y, int64_t n,
	   int64_t cpk)
{
	using P = Pack<T, V>;
	const P *xp = reinterpret_cast<const P *>(x);
	const P *bp = reinterpret_cast<const P *>(bias);
	P *yp = reinterpret_cast<P *>(y);
	const int64_t stride = (int64_t)gridDim.x * blockDim.x;
	int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	/* the column pack of element pack i, kept up to date without a division per step */
	const int64_t step = stride % cpk;
	int64_t c = i % cpk;

	for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
		P a[kUnroll], b[kUnroll];
#pragma unroll
		for (int u = 0; u < kUnroll; u++) {
			a[u] = xp[i + u * stride];
			b[u] = bp[c];
			c += step;
			c -= c >= cpk ? cpk : 0;
		}
#pragma unroll
		for (int u = 0; u < kUnroll; u++) {
			P o;
#pragma unroll
			for (int k = 0; k < V; k++)
				o.v[k] = Tr<T>::st(gelu(Tr<T>::ld(a[u].v[k]) + Tr<T>::ld(b[u].v[k])));
			yp[i + u * stride] = o;
		}
	}
	for (; i < n; i += stride) {
		const P a = xp[i], b = bp[c];
		P o;
#pragma unroll
		for (int k = 0; k < V; k++)
			o.v[k] = Tr<T>::st(gelu(Tr<T>::ld(a.v[k]) + Tr<T>::ld(b.v[k])));
		yp[i] = o;
		c += step;
		c -= c >= cpk ? cpk : 0;
	}
}

template <typename T, int V>
__global__ void __launch_bounds__(kBwdX *kBwdY)
bwd_kernel(const T *__restrict__ dy, const T *__restrict__ x, const T *__restrict__ bias,
	   T *__restrict__ dx, typename Tr<T>::C *__restrict__ partial, int64_t rows, int64_t cpk,
	   int64_t cols)
{
	using C = typename Tr<T>::C;
	using P = Pack<T, V>;
	__shared__ C sh[kBwdY][kBwdX * V];
	const P *dyp = reinterpret_cast<const P *>(dy);
	const P *xp = reinterpret_cast<const P *>(x);
	P *dxp = reinterpret_cast<P *>(dx);
	const int64_t cp = (int64_t)blockIdx.x * kBwdX + threadIdx.x;
	C acc[V];
#pragma unroll
	for (int k = 0; k < V; k++)
		acc[k] = C(0);

	if (cp < cpk) {
		const P bb = reinterpret_cast<const P *>(bias)[cp];
		C bv[V];
#pragma unroll
		for (int k = 0; k < V; k++)
			bv[k] = Tr<T>::ld(bb.v[k]);
		const int64_t rs = (int64_t)gridDim.y * kBwdY;
		int64_t r = (int64_t)blockIdx.y * kBwdY + threadIdx.y;
		for (; r + (kUnroll - 1) * rs < rows; r += kUnroll * rs) {
			P d[kUnroll], xx[kUnroll];
#pragma unroll
			for (int u = 0; u < kUnroll; u++) {
				d[u] = dyp[(r + u * rs) * cpk + cp];
				xx[u] = xp[(r + u * rs) * cpk + cp];
			}
#pragma unroll
			for (int u = 0; u < kUnroll; u++) {
				P o;
#pragma unroll
				for (int k = 0; k < V; k++) {
					const C g = Tr<T>::ld(d[u].v[k]) *
						    gelu_grad(Tr<T>::ld(xx[u].v[k]) + bv[k]);
					o.v[k] = Tr<T>::st(g);
					acc[k] += g;
				}
				dxp[(r + u * rs) * cpk + cp] = o;
			}
		}
		for (; r < rows; r += rs) {
			const P d = dyp[r * cpk + cp], xx = xp[r * cpk + cp];
			P o;
#pragma unroll
			for (int k = 0; k < V; k++) {
				const C g = Tr<T>::ld(d.v[k]) * gelu_grad(Tr<T>::ld(xx.v[k]) + bv[k]);
				o.v[k] = Tr<T>::st(g);
				acc[k] += g;
			}
			dxp[r * cpk + cp] = o;
		}
	}
#pragma unroll
	for (int k = 0; k < V; k++)
		sh[threadIdx.y][threadIdx.x * V + k] = acc[k];
	__syncthreads();
	if (threadIdx.y == 0 && cp < cpk) {
#pragma unroll
		for (int k = 0; k < V; k++) {
			C s = C(0);
#pragma unroll
			for (int j = 0; j < kBwdY; j++)
				s += sh[j][threadIdx.x * V + k];
			partial[(int64_t)blockIdx.y * cols + cp * V + k] = s;
		}
	}
}

template <typename T>
__global__ void dbias_kernel(const typename Tr<T>::C *__restrict__ partial, T *__restrict__ dbias,
			     int nrb, int64_t cols)
{
	const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= cols)
		return;
	typename Tr<T>::C s = 0;
	for (int b = 0; b < nrb; b++)
		s += partial[(int64_t)b * cols + c];
	dbias[c] = Tr<T>::st(s);
}

bool aligned16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

/* rows x cols is valid and non-empty: 1; empty: 0; invalid: -1. */
int check_size(int64_t rows, int64_t cols)
{
	if (rows < 0 || cols < 0)
		return -1;
	if (rows == 0 || cols == 0)
		return 0;
	if (rows > INT64_MAX / 16 / cols)
		return -1;
	return 1;
}

/* Row blocks of the backward grid: at least 64 rows (8 per thread) each, and no more than
 * 2^18 / cols of them, so the partial sums stay small next to the tensors. */
int64_t row_blocks(int64_t rows, int64_t cols)
{
	int64_t rb = (rows + 63) / 64, cap = ((int64_t)1 << 18) / cols;
	if (cap < 1)
		cap = 1;
	if (rb > cap)
		rb = cap;
	if (rb > 1024)
		rb = 1024;
	return rb < 1 ? 1 : rb;
}

int launched(void)
{
	cudaError_t e = cudaGetLastError();
	return e == cudaSuccess ? MENV_OPS_OK : (int)e;
}

template <typename T, int V>
int fwd_launch(const T *x, const T *bias, T *y, int64_t rows, int64_t cols, cudaStream_t s)
{
	const int64_t n = rows * cols / V, cpk = cols / V;
	int64_t blocks = (n + (int64_t)kThreads * kUnroll - 1) / ((int64_t)kThreads * kUnroll);
	if (blocks > INT32_MAX)
		blocks = INT32_MAX;
	fwd_kernel<T, V><<<(unsigned)blocks, kThreads, 0, s>>>(x, bias, y, n, cpk);
	return launched();
}

template <typename T>
int fwd(const T *x, const T *bias, T *y, int64_t rows, int64_t cols, menv_ops_stream stream)
{
	constexpr int V = 16 / sizeof(T);
	const int ok = check_size(rows, cols);
	if (ok < 0)
		return MENV_OPS_EINVAL;
	if (ok == 0)
		return MENV_OPS_OK;
	if (!x || !bias || !y)
		return MENV_OPS_EINVAL;
	cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
	if (cols % V == 0 && aligned16(x) && aligned16(bias) && aligned16(y))
		return fwd_launch<T, V>(x, bias, y, rows, cols, s);
	return fwd_launch<T, 1>(x, bias, y, rows, cols, s);
}

template <typename T, int V>
int bwd_launch(const T *dy, const T *x, const T *bias, T *dx, T *dbias,
	       typename Tr<T>::C *partial, int64_t rows, int64_t cols, cudaStream_t s)
{
	const int64_t cpk = cols / V, rb = row_blocks(rows, cols);
	const dim3 grid((unsigned)((cpk + kBwdX - 1) / kBwdX), (unsigned)rb);
	bwd_kernel<T, V><<<grid, dim3(kBwdX, kBwdY), 0, s>>>(dy, x, bias, dx, partial, rows, cpk,
							      cols);
	int e = launched();
	if (e)
		return e;
	dbias_kernel<T><<<(unsigned)((cols + 255) / 256), 256, 0, s>>>(partial, dbias, (int)rb,
									 cols);
	return launched();
}

template <typename T>
int bwd(const T *dy, const T *x, const T *bias, T *dx, T *dbias, void *ws, size_t ws_bytes,
	int64_t rows, int64_t cols, menv_ops_stream stream)
{
	constexpr int V = 16 / sizeof(T);
	const int ok = check_size(rows, cols);
	if (ok < 0)
		return MENV_OPS_EINVAL;
	if (ok == 0)
		return MENV_OPS_OK;
	if (!dy || !x || !bias || !dx || !dbias || !ws)
		return MENV_OPS_EINVAL;
	if (ws_bytes < menv_ops_bias_gelu_bwd_workspace(rows, cols, (int)sizeof(T)))
		return MENV_OPS_EINVAL;
	auto *partial = static_cast<typename Tr<T>::C *>(ws);
	cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
	if (cols % V == 0 && aligned16(dy) && aligned16(x) && aligned16(bias) && aligned16(dx))
		return bwd_launch<T, V>(dy, x, bias, dx, dbias, partial, rows, cols, s);
	return bwd_launch<T, 1>(dy, x, bias, dx, dbias, partial, rows, cols, s);
}

} // namespace

extern "C" {

size_t menv_ops_bias_gelu_bwd_workspace(int64_t rows, int64_t cols, int elem_size)
{
	if (check_size(rows, cols) <= 0 || (elem_size != 2 && elem_size != 4 && elem_size != 8))
		return 0;
	const size_t acc = elem_size == 8 ? sizeof(double) : sizeof(float);
	return (size_t)row_blocks(rows, cols) * (size_t)cols * acc;
}

int menv_ops_bias_gelu_fwd_f32(const float *x, const float *bias, float *y, int64_t rows,
			       int64_t cols, menv_ops_stream stream)
{
	return fwd<float>(x, bias, y, rows, cols, stream);
}

int menv_ops_bias_gelu_fwd_f64(const double *x, const double *bias, double *y, int64_t rows,
			       int64_t cols, menv_ops_stream stream)
{
	return fwd<double>(x, bias, y, rows, cols, stream);
}

int menv_ops_bias_gelu_fwd_bf16(const menv_ops_bf16 *x, const menv_ops_bf16 *bias,
				menv_ops_bf16 *y, int64_t rows, int64_t cols,
				menv_ops_stream stream)
{
	return fwd<__nv_bfloat16>(reinterpret_cast<const __nv_bfloat16 *>(x),
				  reinterpret_cast<const __nv_bfloat16 *>(bias),
				  reinterpret_cast<__nv_bfloat16 *>(y), rows, cols, stream);
}

int menv_ops_bias_gelu_bwd_f32(const float *dy, const float *x, const float *bias, float *dx,
			       float *dbias, void *workspace, size_t workspace_bytes,
			       int64_t rows, int64_t cols, menv_ops_stream stream)
{
	return bwd<float>(dy, x, bias, dx, dbias, workspace, workspace_bytes, rows, cols, stream);
}

int menv_ops_bias_gelu_bwd_f64(const double *dy, const double *x, const double *bias,
			       double *dx, double *dbias, void *workspace,
			       size_t workspace_bytes, int64_t rows, int64_t cols,
			       menv_ops_stream stream)
{
	return bwd<double>(dy, x, bias, dx, dbias, workspace, workspace_bytes, rows, cols,
			   stream);
}

int menv_ops_bias_gelu_bwd_bf16(const menv_ops_bf16 *dy, const menv_ops_bf16 *x,
				const menv_ops_bf16 *bias, menv_ops_bf16 *dx,
				menv_ops_bf16 *dbias, void *workspace, size_t workspace_bytes,
				int64_t rows, int64_t cols, menv_ops_stream stream)
{
	using B = __nv_bfloat16;
	return bwd<B>(reinterpret_cast<const B *>(dy), reinterpret_cast<const B *>(x),
		      reinterpret_cast<const B *>(bias), reinterpret_cast<B *>(dx),
		      reinterpret_cast<B *>(dbias), workspace, workspace_bytes, rows, cols, stream);
}

const char *menv_ops_strerror(int code)
{
	if (code == MENV_OPS_OK)
		return "success";
	if (code == MENV_OPS_EINVAL)
		return "invalid argument (NULL pointer, negative or too large size, small workspace)";
	if (code > 0)
		return cudaGetErrorString(static_cast<cudaError_t>(code));
	return "unknown error";
}

const char *menv_ops_build_info(void)
{
	return "nvcc " STR(__CUDACC_VER_MAJOR__) "." STR(__CUDACC_VER_MINOR__) "." STR(
		__CUDACC_VER_BUILD__) ", host g++ " STR(__GNUC__) "." STR(__GNUC_MINOR__) "." STR(
		__GNUC_PATCHLEVEL__) ", targets " MENV_OPS_TARGETS;
}

} // extern "C"
