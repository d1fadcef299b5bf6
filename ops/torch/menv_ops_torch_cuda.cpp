/*
 * menv_ops_torch_cuda.cpp - the CUDA kernels of the PyTorch custom operator (the schemas and
 * CPU kernels are in menv_ops_torch.cpp): TORCH_LIBRARY_IMPL(menv_ops, CUDA) calling the C
 * API on PyTorch's current stream. Built only against a CUDA build of PyTorch.
 */
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "menv_ops.h"

namespace {

void ck(int r, const char *what)
{
	TORCH_CHECK(r == 0, what, ": ", menv_ops_strerror(r));
}

void check_args(const at::Tensor &x, const at::Tensor &bias)
{
	TORCH_CHECK(x.is_cuda() && bias.is_cuda(), "menv_ops: tensors must be on a CUDA device");
	TORCH_CHECK(bias.dim() == 1 && x.dim() >= 1 && x.size(-1) == bias.size(0),
		    "menv_ops: bias must be 1-D with x.size(-1) elements");
	TORCH_CHECK(x.scalar_type() == bias.scalar_type(), "menv_ops: x and bias dtypes differ");
}

at::Tensor bias_gelu(const at::Tensor &x, const at::Tensor &bias)
{
	check_args(x, bias);
	c10::cuda::CUDAGuard guard(x.device());
	at::Tensor xc = x.contiguous(), bc = bias.contiguous(), y = at::empty_like(xc);
	const int64_t cols = bc.numel(), rows = cols ? xc.numel() / cols : 0;
	menv_ops_stream s = c10::cuda::getCurrentCUDAStream().stream();
	switch (xc.scalar_type()) {
	case at::kFloat:
		ck(menv_ops_bias_gelu_fwd_f32(xc.data_ptr<float>(), bc.data_ptr<float>(),
					      y.data_ptr<float>(), rows, cols, s), "bias_gelu");
		break;
	case at::kDouble:
		ck(menv_ops_bias_gelu_fwd_f64(xc.data_ptr<double>(), bc.data_ptr<double>(),
					      y.data_ptr<double>(), rows, cols, s), "bias_gelu");
		break;
	case at::kBFloat16:
		ck(menv_ops_bias_gelu_fwd_bf16(
			   reinterpret_cast<const menv_ops_bf16 *>(xc.data_ptr<at::BFloat16>()),
			   reinterpret_cast<const menv_ops_bf16 *>(bc.data_ptr<at::BFloat16>()),
			   reinterpret_cast<menv_ops_bf16 *>(y.data_ptr<at::BFloat16>()), rows,
			   cols, s), "bias_gelu");
		break;
	default:
		TORCH_CHECK(false, "menv_ops: unsupported dtype ", xc.scalar_type());
	}
	return y;
}

std::tuple<at::Tensor, at::Tensor> bias_gelu_backward(const at::Tensor &dy, const at::Tensor &x,
						      const at::Tensor &bias)
{
	check_args(x, bias);
	TORCH_CHECK(dy.sizes() == x.sizes() && dy.scalar_type() == x.scalar_type(),
		    "menv_ops: dy must match x");
	c10::cuda::CUDAGuard guard(x.device());
	at::Tensor dyc = dy.contiguous(), xc = x.contiguous(), bc = bias.contiguous();
	at::Tensor dx = at::empty_like(xc), db = at::empty_like(bc);
	const int64_t cols = bc.numel(), rows = cols ? xc.numel() / cols : 0;
	const size_t wb = menv_ops_bias_gelu_bwd_workspace(rows, cols, (int)xc.element_size());
	at::Tensor ws = at::empty({ (int64_t)(wb ? wb : 1) }, xc.options().dtype(at::kByte));
	menv_ops_stream s = c10::cuda::getCurrentCUDAStream().stream();
	switch (xc.scalar_type()) {
	case at::kFloat:
		ck(menv_ops_bias_gelu_bwd_f32(dyc.data_ptr<float>(), xc.data_ptr<float>(),
					      bc.data_ptr<float>(), dx.data_ptr<float>(),
					      db.data_ptr<float>(), ws.data_ptr(), wb, rows, cols, s),
		   "bias_gelu_backward");
		break;
	case at::kDouble:
		ck(menv_ops_bias_gelu_bwd_f64(dyc.data_ptr<double>(), xc.data_ptr<double>(),
					      bc.data_ptr<double>(), dx.data_ptr<double>(),
					      db.data_ptr<double>(), ws.data_ptr(), wb, rows, cols,
					      s), "bias_gelu_backward");
		break;
	case at::kBFloat16: {
		using B = menv_ops_bf16;
		ck(menv_ops_bias_gelu_bwd_bf16(
			   reinterpret_cast<const B *>(dyc.data_ptr<at::BFloat16>()),
			   reinterpret_cast<const B *>(xc.data_ptr<at::BFloat16>()),
			   reinterpret_cast<const B *>(bc.data_ptr<at::BFloat16>()),
			   reinterpret_cast<B *>(dx.data_ptr<at::BFloat16>()),
			   reinterpret_cast<B *>(db.data_ptr<at::BFloat16>()), ws.data_ptr(), wb,
			   rows, cols, s), "bias_gelu_backward");
		break;
	}
	default:
		TORCH_CHECK(false, "menv_ops: unsupported dtype ", xc.scalar_type());
	}
	return { dx, db };
}

} // namespace

TORCH_LIBRARY_IMPL(menv_ops, CUDA, m)
{
	m.impl("bias_gelu", &bias_gelu);
	m.impl("bias_gelu_backward", &bias_gelu_backward);
}
