/*
 * menv_ops_py.cpp - the pybind11 module `menv_ops`: the operator for numpy arrays (copied
 * to the GPU and back; float32 and float64) and the float64 CPU reference.
 */
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "menv_ops.h"

namespace py = pybind11;

namespace {

void ck(int r, const char *what)
{
	if (r)
		throw std::runtime_error(std::string(what) + ": " + menv_ops_strerror(r));
}

template <typename T> using Arr = py::array_t<T, py::array::c_style | py::array::forcecast>;

/* a device copy of an array, freed on scope exit */
template <typename T> struct Dev {
	T *p = nullptr;
	size_t n;
	explicit Dev(size_t count, const T *host = nullptr) : n(count)
	{
		ck(cudaMalloc(&p, (n ? n : 1) * sizeof(T)), "cudaMalloc");
		if (host)
			ck(cudaMemcpy(p, host, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
		else
			ck(cudaMemset(p, 0xff, (n ? n : 1) * sizeof(T)), "cudaMemset"); /* NaN */
	}
	~Dev() { cudaFree(p); }
	void get(T *host) const
	{
		ck(cudaMemcpy(host, p, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
	}
};

void shape(const py::array &x, const py::array &b, int64_t *rows, int64_t *cols)
{
	if (x.ndim() != 2 || b.ndim() != 1 || x.shape(1) != b.shape(0))
		throw std::invalid_argument("expected x of shape (rows, cols) and bias of (cols,)");
	*rows = x.shape(0);
	*cols = x.shape(1);
}

int fwd(const float *x, const float *b, float *y, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_fwd_f32(x, b, y, r, c, nullptr);
}
int fwd(const double *x, const double *b, double *y, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_fwd_f64(x, b, y, r, c, nullptr);
}
int bwd(const float *dy, const float *x, const float *b, float *dx, float *db, void *w,
	size_t wb, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_bwd_f32(dy, x, b, dx, db, w, wb, r, c, nullptr);
}
int bwd(const double *dy, const double *x, const double *b, double *dx, double *db, void *w,
	size_t wb, int64_t r, int64_t c)
{
	return menv_ops_bias_gelu_bwd_f64(dy, x, b, dx, db, w, wb, r, c, nullptr);
}

template <typename T> py::array forward(Arr<T> x, Arr<T> b)
{
	int64_t rows, cols;
	shape(x, b, &rows, &cols);
	Arr<T> y({ rows, cols });
	Dev<T> dx(x.size(), x.data()), db(b.size(), b.data()), dy(y.size());
	ck(fwd(dx.p, db.p, dy.p, rows, cols), "bias_gelu");
	ck(cudaDeviceSynchronize(), "bias_gelu");
	dy.get(y.mutable_data());
	return std::move(y);
}

template <typename T> py::tuple backward(Arr<T> g, Arr<T> x, Arr<T> b)
{
	int64_t rows, cols;
	shape(x, b, &rows, &cols);
	if (g.ndim() != 2 || g.shape(0) != rows || g.shape(1) != cols)
		throw std::invalid_argument("dy must have the shape of x");
	Arr<T> gx({ rows, cols }), gb({ cols });
	const size_t wb = menv_ops_bias_gelu_bwd_workspace(rows, cols, (int)sizeof(T));
	Dev<T> d_g(g.size(), g.data()), d_x(x.size(), x.data()), d_b(b.size(), b.data());
	Dev<T> d_gx(gx.size()), d_gb(gb.size());
	Dev<unsigned char> ws(wb);
	ck(bwd(d_g.p, d_x.p, d_b.p, d_gx.p, d_gb.p, ws.p, wb, rows, cols), "bias_gelu_backward");
	ck(cudaDeviceSynchronize(), "bias_gelu_backward");
	d_gx.get(gx.mutable_data());
	d_gb.get(gb.mutable_data());
	return py::make_tuple(gx, gb);
}

bool cuda_available()
{
	int drv = 0, n = 0;
	return cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0 &&
	       cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

} // namespace

PYBIND11_MODULE(menv_ops, m)
{
	m.doc() = "menv's sample CUDA operator: fused bias-add + GELU (tanh approximation)";
	m.def("bias_gelu", &forward<float>, py::arg("x"), py::arg("bias"));
	m.def("bias_gelu", &forward<double>, py::arg("x"), py::arg("bias"));
	m.def("bias_gelu_backward", &backward<float>, py::arg("dy"), py::arg("x"), py::arg("bias"));
	m.def("bias_gelu_backward", &backward<double>, py::arg("dy"), py::arg("x"), py::arg("bias"));
	m.def("reference", [](Arr<double> x, Arr<double> b) {
		int64_t rows, cols;
		shape(x, b, &rows, &cols);
		Arr<double> y({ rows, cols });
		menv_ops_ref_fwd(x.data(), b.data(), y.mutable_data(), rows, cols);
		return y;
	});
	m.def("reference_backward", [](Arr<double> g, Arr<double> x, Arr<double> b) {
		int64_t rows, cols;
		shape(x, b, &rows, &cols);
		Arr<double> gx({ rows, cols }), gb({ cols });
		menv_ops_ref_bwd(g.data(), x.data(), b.data(), gx.mutable_data(), gb.mutable_data(),
				 rows, cols);
		return py::make_tuple(gx, gb);
	});
	m.def("cuda_available", &cuda_available);
	m.def("build_info", &menv_ops_build_info);
}
