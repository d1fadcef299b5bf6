/*
 * menv_ops_torch.cpp - the operator as a PyTorch custom operator: its schemas in namespace
 * `menv_ops` (TORCH_LIBRARY) and CPU kernels for them (TORCH_LIBRARY_IMPL(menv_ops, CPU)),
 * which compute in float64 with the C reference (src/reference.c) and return x's dtype, so
 * that the op, autograd and gradcheck work on every machine. The CUDA kernels are in
 * menv_ops_torch_cuda.cpp (built against a CUDA build of PyTorch only). Autograd is
 * registered from Python (test_torch.py). Built as a Python module (setup.py) or loaded with
 * torch.ops.load_library (cpp_extension.load); the module's one function tells which.
 *
 * Loaded as a library (the smoke check's cpp_extension.load, is_python_module=False) it needs
 * only ATen and torch/library.h: <torch/extension.h> (all of libtorch's C++ API and pybind11)
 * is included for the Python module alone (setup.py defines MENV_OPS_PYTHON_MODULE), which
 * makes the smoke check's compile about a third of the CPU time (37 s -> 13 s, g++ 11 -O2).
 */
#ifdef MENV_OPS_PYTHON_MODULE
#include <torch/extension.h>
#else
#include <ATen/ATen.h>
#include <torch/library.h>
#endif

#include "menv_ops.h"

namespace {

void check_args_cpu(const at::Tensor &x, const at::Tensor &bias)
{
	TORCH_CHECK(x.device().is_cpu() && bias.device().is_cpu(),
		    "menv_ops: tensors must be on the CPU");
	TORCH_CHECK(bias.dim() == 1 && x.dim() >= 1 && x.size(-1) == bias.size(0),
		    "menv_ops: bias must be 1-D with x.size(-1) elements");
	TORCH_CHECK(x.scalar_type() == bias.scalar_type(), "menv_ops: x and bias dtypes differ");
	TORCH_CHECK(at::isFloatingType(x.scalar_type()), "menv_ops: unsupported dtype ",
		    x.scalar_type());
}

at::Tensor bias_gelu_cpu(const at::Tensor &x, const at::Tensor &bias)
{
	check_args_cpu(x, bias);
	at::Tensor xd = x.to(at::kDouble).contiguous(), bd = bias.to(at::kDouble).contiguous();
	at::Tensor y = at::empty_like(xd);
	const int64_t cols = bd.numel(), rows = cols ? xd.numel() / cols : 0;
	menv_ops_ref_fwd(xd.data_ptr<double>(), bd.data_ptr<double>(), y.data_ptr<double>(), rows,
			 cols);
	return y.to(x.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> bias_gelu_backward_cpu(const at::Tensor &dy,
							  const at::Tensor &x,
							  const at::Tensor &bias)
{
	check_args_cpu(x, bias);
	TORCH_CHECK(dy.sizes() == x.sizes() && dy.scalar_type() == x.scalar_type(),
		    "menv_ops: dy must match x");
	at::Tensor dyd = dy.to(at::kDouble).contiguous(), xd = x.to(at::kDouble).contiguous(),
		   bd = bias.to(at::kDouble).contiguous();
	at::Tensor dx = at::empty_like(xd), db = at::empty_like(bd);
	const int64_t cols = bd.numel(), rows = cols ? xd.numel() / cols : 0;
	menv_ops_ref_bwd(dyd.data_ptr<double>(), xd.data_ptr<double>(), bd.data_ptr<double>(),
			 dx.data_ptr<double>(), db.data_ptr<double>(), rows, cols);
	return { dx.to(x.scalar_type()), db.to(bias.scalar_type()) };
}

} // namespace

TORCH_LIBRARY(menv_ops, m)
{
	m.def("bias_gelu(Tensor x, Tensor bias) -> Tensor");
	m.def("bias_gelu_backward(Tensor dy, Tensor x, Tensor bias) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(menv_ops, CPU, m)
{
	m.impl("bias_gelu", &bias_gelu_cpu);
	m.impl("bias_gelu_backward", &bias_gelu_backward_cpu);
}

#ifdef MENV_OPS_PYTHON_MODULE
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
	m.doc() = "menv's sample operator: importing this registers torch.ops.menv_ops";
	m.def("kernels", []() {
#ifdef MENV_OPS_WITH_CUDA
		return "cpu cuda";
#else
		return "cpu";
#endif
	});
}
#endif
