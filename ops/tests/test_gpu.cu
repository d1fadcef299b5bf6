/*
 * test_gpu.cu - the operator on the GPU against the float64 CPU reference.
 *
 * Exits 77 (skipped) when there is no CUDA driver or no device, 0 when every check passes,
 * 1 otherwise. Every CUDA call is checked. Each run draws fresh random inputs (the seed is
 * printed; MENV_OPS_SEED replays one), outputs are filled with NaN before each launch so a
 * value the kernel did not write cannot pass, and each case runs twice to check that the
 * results are bit-for-bit the same. Checks:
 *   - forward and backward in float32, float64 and (compute capability >= 8.0) bfloat16 on
 *     vectorised, scalar and misaligned shapes: ||out - ref|| / ||ref|| per output
 *     (limits: 1e-6 float32, 1e-12 float64, 1e-2 bfloat16);
 *   - backward against finite differences of the forward kernel (float64: per element and
 *     along a random direction; float32: along a random direction);
 *   - timing with CUDA events after warm-up, as achieved GB/s next to the peak memory
 *     bandwidth from the device's memory clock and bus width.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "menv_ops.h"

#ifndef MENV_OPS_TARGETS
#define MENV_OPS_TARGETS "unknown targets"
#endif

static int failures;
static unsigned long long rng;
static cudaDeviceProp prop;

static void cuda_fail(const char *call, cudaError_t e, int line)
{
	printf("[ops] FAIL gpu: %s: %s: %s (test_gpu.cu:%d; built for %s, device is sm_%d%d)\n",
	       call, cudaGetErrorName(e), cudaGetErrorString(e), line, MENV_OPS_TARGETS,
	       prop.major, prop.minor);
	exit(1);
}
#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess)                                                             \
			cuda_fail(#call, e_, __LINE__);                                            \
	} while (0)
#define OPS(call)                                                                                  \
	do {                                                                                       \
		int r_ = (call);                                                                   \
		if (r_ > 0)                                                                        \
			cuda_fail(#call, (cudaError_t)r_, __LINE__);                               \
		if (r_ < 0) {                                                                      \
			printf("[ops] FAIL gpu: %s: %s\n", #call, menv_ops_strerror(r_));          \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static double urand(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* host <-> device element types */
template <typename T> struct H;
template <> struct H<float> {
	static float from(double v) { return (float)v; }
	static double to(float v) { return v; }
	static constexpr const char *name = "f32";
	static constexpr double tol = 1e-6;
};
template <> struct H<double> {
	static double from(double v) { return v; }
	static double to(double v) { return v; }
	static constexpr const char *name = "f64";
	static constexpr double tol = 1e-12;
};
template <> struct H<uint16_t> {
	static uint16_t from(double v) { return menv_ops_f32_to_bf16((float)v); }
	static double to(uint16_t v) { return menv_ops_bf16_to_f32(v); }
	static constexpr const char *name = "bf16";
	static constexpr double tol = 1e-2;
};

static int fwd(const float *x, const float *b, float *y, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_fwd_f32(x, b, y, r, c, NULL);
}
static int fwd(const double *x, const double *b, double *y, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_fwd_f64(x, b, y, r, c, NULL);
}
static int fwd(const uint16_t *x, const uint16_t *b, uint16_t *y, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_fwd_bf16(x, b, y, r, c, NULL);
}
static int bwd(const float *dy, const float *x, const float *b, float *dx, float *db, void *ws,
	       size_t wsb, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_bwd_f32(dy, x, b, dx, db, ws, wsb, r, c, NULL);
}
static int bwd(const double *dy, const double *x, const double *b, double *dx, double *db,
	       void *ws, size_t wsb, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_bwd_f64(dy, x, b, dx, db, ws, wsb, r, c, NULL);
}
static int bwd(const uint16_t *dy, const uint16_t *x, const uint16_t *b, uint16_t *dx,
	       uint16_t *db, void *ws, size_t wsb, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_bwd_bf16(dy, x, b, dx, db, ws, wsb, r, c, NULL);
}

/* ||out - ref|| / ||ref||; +inf when out holds a NaN or Inf (an unwritten, poisoned value) */
template <typename T> static double rel_err(const std::vector<T> &out, const std::vector<double> &ref)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < ref.size(); i++) {
		double o = H<T>::to(out[i]);
		if (!isfinite(o))
			return INFINITY;
		num += (o - ref[i]) * (o - ref[i]);
		den += ref[i] * ref[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void check(bool ok, const char *what, double v, double limit)
{
	printf("[ops] %s gpu %s: %.3g (limit %.3g)\n", ok ? "PASS" : "FAIL", what, v, limit);
	fflush(stdout);
	if (!ok)
		failures++;
}

/* Device buffers of one case. `off` elements of offset make the pointers misaligned. */
template <typename T> struct Bufs {
	T *x, *b, *y, *dy, *dx, *db;
	void *ws;
	size_t wsb;
	int64_t n, cols;
	Bufs(int64_t rows, int64_t c, int off) : n(rows * c), cols(c)
	{
		T **p[] = { &x, &y, &dy, &dx };
		for (T **q : p) {
			CK(cudaMalloc(q, (n + off) * sizeof(T)));
			*q += off;
		}
		CK(cudaMalloc(&b, (c + off) * sizeof(T)));
		CK(cudaMalloc(&db, (c + off) * sizeof(T)));
		b += off;
		db += off;
		wsb = menv_ops_bias_gelu_bwd_workspace(rows, c, (int)sizeof(T));
		CK(cudaMalloc(&ws, wsb));
		this->off = off;
	}
	~Bufs()
	{
		for (T *q : { x, y, dy, dx, b, db })
			CK(cudaFree(q - off));
		CK(cudaFree(ws));
	}
	void poison()
	{
		CK(cudaMemset(y, 0xff, n * sizeof(T))); /* all-ones bits: NaN in each type */
		CK(cudaMemset(dx, 0xff, n * sizeof(T)));
		CK(cudaMemset(db, 0xff, cols * sizeof(T)));
		CK(cudaMemset(ws, 0xff, wsb));
	}
	int off;
};

template <typename T> static void down(T *d, const std::vector<T> &h)
{
	CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}
template <typename T> static void up(std::vector<T> &h, const T *d)
{
	CK(cudaMemcpy(h.data(), d, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

/* Random inputs in T, and the same values in double for the reference. */
template <typename T>
static void inputs(int64_t rows, int64_t cols, std::vector<T> &x, std::vector<T> &b,
		   std::vector<T> &dy, std::vector<double> &xd, std::vector<double> &bd,
		   std::vector<double> &dyd)
{
	int64_t n = rows * cols;
	/* x in [-4, 4]; a tensor of a few elements draws from [0.5, 4]: there the norm-wise
	 * error is an element's own, and in gelu's negative tail (z < -3) float32 cannot give
	 * 1e-6 relative to a tiny value: rounding x + bias alone costs more (condition ~35) */
	const double lo = n < 8 ? 0.5 : -4;
	x.resize(n), dy.resize(n), b.resize(cols), xd.resize(n), dyd.resize(n), bd.resize(cols);
	for (int64_t i = 0; i < n; i++) {
		x[i] = H<T>::from(lo + (4 - lo) * urand()), xd[i] = H<T>::to(x[i]);
		dy[i] = H<T>::from(2 * urand() - 1), dyd[i] = H<T>::to(dy[i]);
	}
	for (int64_t c = 0; c < cols; c++)
		b[c] = H<T>::from(2 * urand() - 1), bd[c] = H<T>::to(b[c]);
}

template <typename T> static void correctness(int64_t rows, int64_t cols, int off)
{
	std::vector<T> x, b, dy, y(rows * cols), dx(rows * cols), db(cols);
	std::vector<double> xd, bd, dyd, yr(rows * cols), dxr(rows * cols), dbr(cols);
	inputs(rows, cols, x, b, dy, xd, bd, dyd);
	menv_ops_ref_fwd(xd.data(), bd.data(), yr.data(), rows, cols);
	menv_ops_ref_bwd(dyd.data(), xd.data(), bd.data(), dxr.data(), dbr.data(), rows, cols);

	Bufs<T> d(rows, cols, off);
	down(d.x, x), down(d.b, b), down(d.dy, dy);
	std::vector<T> y1, dx1, db1;
	bool same = true;
	for (int run = 0; run < 2; run++) {
		d.poison();
		OPS(fwd(d.x, d.b, d.y, rows, cols));
		OPS(bwd(d.dy, d.x, d.b, d.dx, d.db, d.ws, d.wsb, rows, cols));
		CK(cudaDeviceSynchronize());
		up(y, d.y), up(dx, d.dx), up(db, d.db);
		if (run == 0)
			y1 = y, dx1 = dx, db1 = db;
		else
			same = !memcmp(y.data(), y1.data(), y.size() * sizeof(T)) &&
			       !memcmp(dx.data(), dx1.data(), dx.size() * sizeof(T)) &&
			       !memcmp(db.data(), db1.data(), db.size() * sizeof(T));
	}
	const char *path = off ? "misaligned" : (cols % (16 / sizeof(T)) ? "scalar" : "vector");
	char what[160];
	double e;
	snprintf(what, sizeof(what), "%s forward %lldx%lld (%s) rel err", H<T>::name,
		 (long long)rows, (long long)cols, path);
	e = rel_err(y, yr);
	check(e < H<T>::tol, what, e, H<T>::tol);
	snprintf(what, sizeof(what), "%s backward dx %lldx%lld (%s) rel err", H<T>::name,
		 (long long)rows, (long long)cols, path);
	e = rel_err(dx, dxr);
	check(e < H<T>::tol, what, e, H<T>::tol);
	snprintf(what, sizeof(what), "%s backward dbias %lldx%lld (%s) rel err", H<T>::name,
		 (long long)rows, (long long)cols, path);
	e = rel_err(db, dbr);
	check(e < H<T>::tol, what, e, H<T>::tol);
	snprintf(what, sizeof(what), "%s %lldx%lld deterministic (2 runs bit-equal), differing",
		 H<T>::name, (long long)rows, (long long)cols);
	check(same, what, same ? 0 : 1, 0);
}

/* The backward kernel against central differences of the forward kernel.
 * float64: per element (the op is elementwise in x and per column in bias, so two forward
 * launches perturbing every x, or every bias entry, give all partial derivatives) and along
 * a random direction; float32: along a random direction only (h = 1e-2). */
template <typename T> static void grad_check(int64_t rows, int64_t cols, double h, double tol)
{
	const int64_t n = rows * cols;
	std::vector<T> x, b, dy, y(n), dx(n), db(cols), xp(n), bp(cols);
	std::vector<double> xd, bd, dyd, vx(n), vb(cols);
	inputs(rows, cols, x, b, dy, xd, bd, dyd);
	for (auto &v : vx)
		v = 2 * urand() - 1;
	for (auto &v : vb)
		v = 2 * urand() - 1;
	Bufs<T> d(rows, cols, 0);
	down(d.x, x), down(d.b, b), down(d.dy, dy);
	d.poison();
	OPS(bwd(d.dy, d.x, d.b, d.dx, d.db, d.ws, d.wsb, rows, cols));
	CK(cudaDeviceSynchronize());
	up(dx, d.dx), up(db, d.db);

	/* forward at x + s*h*vx, b + s*h*vb: returns y in double */
	auto forward = [&](double s, const std::vector<double> &ux, const std::vector<double> &ub) {
		for (int64_t i = 0; i < n; i++)
			xp[i] = H<T>::from(xd[i] + s * h * ux[i]);
		for (int64_t c = 0; c < cols; c++)
			bp[c] = H<T>::from(bd[c] + s * h * ub[c]);
		down(d.x, xp), down(d.b, bp);
		d.poison();
		OPS(fwd(d.x, d.b, d.y, rows, cols));
		CK(cudaDeviceSynchronize());
		up(y, d.y);
		std::vector<double> out(n);
		for (int64_t i = 0; i < n; i++)
			out[i] = H<T>::to(y[i]);
		return out;
	};
	char what[160];
	if (sizeof(T) == 8) {
		std::vector<double> ones(n, 1.0), zc(cols, 0.0), zn(n, 0.0), onec(cols, 1.0);
		std::vector<double> p = forward(1, ones, zc), m = forward(-1, ones, zc), fd(n);
		std::vector<double> dxd(n), dbd(cols), fdb(cols, 0.0);
		for (int64_t i = 0; i < n; i++)
			fd[i] = dyd[i] * (p[i] - m[i]) / (2 * h), dxd[i] = H<T>::to(dx[i]);
		p = forward(1, zn, onec), m = forward(-1, zn, onec);
		for (int64_t i = 0; i < n; i++)
			fdb[i % cols] += dyd[i] * (p[i] - m[i]) / (2 * h);
		for (int64_t c = 0; c < cols; c++)
			dbd[c] = H<T>::to(db[c]);
		double e = rel_err(dxd, fd);
		snprintf(what, sizeof(what), "%s gradient check dx vs finite differences %lldx%lld, rel err",
			 H<T>::name, (long long)rows, (long long)cols);
		check(e < tol, what, e, tol);
		e = rel_err(dbd, fdb);
		snprintf(what, sizeof(what), "%s gradient check dbias vs finite differences, rel err",
			 H<T>::name);
		check(e < tol, what, e, tol);
	}
	/* directional: L = sum(dy * y); dL/dt along (vx, vb) = <dx, vx> + <dbias, vb> */
	double an = 0;
	for (int64_t i = 0; i < n; i++)
		an += H<T>::to(dx[i]) * vx[i];
	for (int64_t c = 0; c < cols; c++)
		an += H<T>::to(db[c]) * vb[c];
	std::vector<double> p = forward(1, vx, vb), m = forward(-1, vx, vb);
	double lp = 0, lm = 0;
	for (int64_t i = 0; i < n; i++)
		lp += dyd[i] * p[i], lm += dyd[i] * m[i];
	double fd = (lp - lm) / (2 * h), e = fabs(fd - an) / fabs(an);
	snprintf(what, sizeof(what),
		 "%s gradient check along a random direction (h=%g) %lldx%lld, rel err", H<T>::name,
		 h, (long long)rows, (long long)cols);
	check(e < tol, what, e, tol);
}

static double peak_gbs(void)
{
	int dev, clk_khz = 0, bus_bits = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrMemoryClockRate, dev));
	CK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
	return 2.0 * clk_khz * 1e3 * (bus_bits / 8.0) / 1e9; /* double data rate */
}

static double median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

template <typename T> static void perf(int64_t rows, int64_t cols, double peak)
{
	using C = typename std::conditional<sizeof(T) == 8, double, float>::type;
	const int64_t n = rows * cols;
	std::vector<T> x, b, dy, y(n), dx(n), db(cols);
	std::vector<double> xd, bd, dyd;
	inputs(rows, cols, x, b, dy, xd, bd, dyd);
	Bufs<T> d(rows, cols, 0);
	down(d.x, x), down(d.b, b), down(d.dy, dy);
	cudaEvent_t t0, t1;
	CK(cudaEventCreate(&t0));
	CK(cudaEventCreate(&t1));
	const int warm = 3, iters = 20;
	std::vector<float> tf, tb;
	for (int it = 0; it < warm + iters; it++) {
		float ms;
		d.poison(); /* also evicts the inputs from L2 (each tensor is larger than it) */
		CK(cudaEventRecord(t0));
		OPS(fwd(d.x, d.b, d.y, rows, cols));
		CK(cudaEventRecord(t1));
		CK(cudaEventSynchronize(t1));
		CK(cudaEventElapsedTime(&ms, t0, t1));
		if (it >= warm)
			tf.push_back(ms);
		CK(cudaEventRecord(t0));
		OPS(bwd(d.dy, d.x, d.b, d.dx, d.db, d.ws, d.wsb, rows, cols));
		CK(cudaEventRecord(t1));
		CK(cudaEventSynchronize(t1));
		CK(cudaEventElapsedTime(&ms, t0, t1));
		if (it >= warm)
			tb.push_back(ms);
	}
	CK(cudaEventDestroy(t0));
	CK(cudaEventDestroy(t1));
	const double bf = (2.0 * n + cols) * sizeof(T);
	const double bb = (3.0 * n + 2 * cols) * sizeof(T) + 2.0 * d.wsb; /* + partial sums */
	const double mf = median(tf), mb = median(tb);
	printf("[ops] PERF %s forward %lldx%lld: %.4f ms median of %d (min %.4f), %.1f GB/s = %.1f%% "
	       "of %.1f GB/s peak\n",
	       H<T>::name, (long long)rows, (long long)cols, mf, iters,
	       *std::min_element(tf.begin(), tf.end()), bf / mf / 1e6, 100 * bf / mf / 1e6 / peak,
	       peak);
	printf("[ops] PERF %s backward %lldx%lld: %.4f ms median of %d (min %.4f), %.1f GB/s = "
	       "%.1f%% of %.1f GB/s peak\n",
	       H<T>::name, (long long)rows, (long long)cols, mb, iters,
	       *std::min_element(tb.begin(), tb.end()), bb / mb / 1e6, 100 * bb / mb / 1e6 / peak,
	       peak);
	(void)sizeof(C);
	/* the timed outputs are checked too */
	up(y, d.y), up(dx, d.dx), up(db, d.db);
	std::vector<double> yr(n), dxr(n), dbr(cols);
	menv_ops_ref_fwd(xd.data(), bd.data(), yr.data(), rows, cols);
	menv_ops_ref_bwd(dyd.data(), xd.data(), bd.data(), dxr.data(), dbr.data(), rows, cols);
	char what[160];
	double e = std::max(rel_err(y, yr), std::max(rel_err(dx, dxr), rel_err(db, dbr)));
	snprintf(what, sizeof(what), "%s timed outputs %lldx%lld, max rel err of y, dx, dbias",
		 H<T>::name, (long long)rows, (long long)cols);
	check(e < H<T>::tol, what, e, H<T>::tol);
}

int main(void)
{
	int drv = 0, rt = 0, count = 0;
	const char *seed = getenv("MENV_OPS_SEED");
	rng = seed ? strtoull(seed, NULL, 0)
		   : ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid();
	printf("[ops] INFO build: %s; seed %llu\n", menv_ops_build_info(), rng);
	/* no CK here: without a driver these calls fail, and that is a skip, not a failure */
	if (cudaDriverGetVersion(&drv) != cudaSuccess)
		drv = 0;
	rt = CUDART_VERSION;
	if (drv == 0) {
		printf("[ops] SKIP gpu: GPU run skipped: no CUDA driver found\n");
		return 77;
	}
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e == cudaErrorInsufficientDriver) {
		printf("[ops] FAIL gpu: the driver supports CUDA %d.%d, older than this toolkit's "
		       "runtime %d.%d (%s): update the driver or use cudatoolkit<=%d.%d\n",
		       drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, cudaGetErrorString(e),
		       drv / 1000, drv % 1000 / 10);
		return 1;
	}
	if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
		printf("[ops] SKIP gpu: GPU run skipped: no CUDA device found (driver CUDA %d.%d)\n",
		       drv / 1000, drv % 1000 / 10);
		return 77;
	}
	CK(e);
	CK(cudaGetDeviceProperties(&prop, 0));
	const double peak = peak_gbs();
	printf("[ops] INFO gpu name=\"%s\" cc=%d.%d sms=%d memory_gib=%.1f l2_mib=%.1f driver=%d.%d "
	       "runtime=%d.%d peak_gbs=%.1f\n",
	       prop.name, prop.major, prop.minor, prop.multiProcessorCount,
	       prop.totalGlobalMem / 1073741824.0, prop.l2CacheSize / 1048576.0, drv / 1000,
	       drv % 1000 / 10, rt / 1000, rt % 1000 / 10, peak);
	fflush(stdout);

	static const int64_t shapes[][3] = { { 1, 1, 0 },	 { 7, 13, 0 },	   { 64, 96, 0 },
					     { 333, 1000, 0 }, { 1000, 333, 0 }, { 2048, 1024, 0 },
					     { 4099, 64, 0 },	 { 128, 256, 1 } };
	for (auto &s : shapes) {
		correctness<float>(s[0], s[1], (int)s[2]);
		correctness<double>(s[0], s[1], (int)s[2]);
		if (prop.major >= 8)
			correctness<uint16_t>(s[0], s[1], (int)s[2]);
	}
	if (prop.major < 8)
		printf("[ops] SKIP gpu bf16: compute capability %d.%d has no bfloat16 arithmetic\n",
		       prop.major, prop.minor);
	grad_check<double>(96, 80, 1e-5, 1e-6);
	grad_check<float>(96, 80, 1e-2, 1e-3);

	int64_t rows = 8192, cols = 8192;
	if (getenv("MENV_OPS_PERF_ROWS"))
		rows = atoll(getenv("MENV_OPS_PERF_ROWS"));
	if (getenv("MENV_OPS_PERF_COLS"))
		cols = atoll(getenv("MENV_OPS_PERF_COLS"));
	size_t free_b, total_b;
	CK(cudaMemGetInfo(&free_b, &total_b));
	while (rows > 64 && (double)rows * cols * 4 * 4 * 1.25 > (double)free_b)
		rows /= 2;
	perf<float>(rows, cols, peak);
	if (prop.major >= 8)
		perf<uint16_t>(rows, cols, peak);
	printf("[ops] %s gpu tests: %d failed\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
