"""The operator as a PyTorch custom operator (torch.ops.menv_ops.bias_gelu) with autograd.

Builds torch/menv_ops_torch.cpp (schemas, CPU kernels from the float64 C reference) with
torch.utils.cpp_extension, plus, where PyTorch sees a CUDA device, menv_ops_torch_cuda.cpp
and src/bias_gelu.cu for the GPU's own compute capability plus PTX; registers autograd (with
torch.library where this PyTorch has register_autograd, else a torch.autograd.Function) and
fake implementations, then checks on the GPU or else the CPU: float32 forward and backward
(through autograd) against a float64 reference (< 1e-6), torch.autograd.gradcheck in float64,
torch.library.opcheck where it exists, and bfloat16 (< 1e-2). Usage:
    python test_torch.py BUILD
"""
import math
import os
import sys
import time

import torch

failures = 0


def check(ok, what, value, limit):
    global failures
    print("[ops] %s torch %s: %.3g (limit %.3g)" % ("PASS" if ok else "FAIL", what, value, limit),
          flush=True)
    failures += not ok


def rel(out, ref):
    out = out.double()
    if not torch.isfinite(out).all():
        return float("inf")
    return float((out - ref).norm() / ref.norm())


here = os.path.dirname(os.path.abspath(__file__))
src = os.path.dirname(here)
build = os.path.join(os.path.abspath(sys.argv[1]), "torch")
os.makedirs(build, exist_ok=True)
gpu = torch.cuda.is_available()
sources = [os.path.join(here, "menv_ops_torch.cpp"), os.path.join(src, "src", "reference.c")]
cflags = ["-O2"]
if gpu:
    major, minor = torch.cuda.get_device_capability()
    os.environ["TORCH_CUDA_ARCH_LIST"] = "%d.%d+PTX" % (major, minor)
    sources += [os.path.join(here, "menv_ops_torch_cuda.cpp"),
                os.path.join(src, "src", "bias_gelu.cu")]
    cflags.append("-DMENV_OPS_WITH_CUDA")
    print("[ops] INFO torch %s (CUDA %s), %s sm_%d%d, building the extension" %
          (torch.__version__, torch.version.cuda, torch.cuda.get_device_name(), major, minor),
          flush=True)
else:
    major = 0
    print("[ops] INFO torch %s: no CUDA device (CUDA build: %s), building the CPU kernels" %
          (torch.__version__, torch.version.cuda or "no"), flush=True)
from torch.utils import cpp_extension  # noqa: E402

t0 = time.time()
cpp_extension.load(
    name="menv_ops_torch",
    sources=sources,
    extra_include_paths=[os.path.join(src, "include")],
    extra_cflags=cflags,
    extra_cuda_cflags=["-O3"] + (["-DMENV_OPS_TARGETS_ID=sm_%d%d+compute_%d%d" %
                                  (major, minor, major, minor)] if gpu else []),
    build_directory=build,
    is_python_module=False,
    verbose=False,
)
print("[ops] INFO torch extension built in %.1f s" % (time.time() - t0), flush=True)
ops = torch.ops.menv_ops


def setup_context(ctx, inputs, output):
    x, bias = inputs
    ctx.save_for_backward(x, bias)


def backward(ctx, dy):
    x, bias = ctx.saved_tensors
    dx, dbias = ops.bias_gelu_backward(dy.contiguous(), x, bias)
    return dx, dbias


if hasattr(torch.library, "register_autograd"):
    torch.library.register_autograd("menv_ops::bias_gelu", backward, setup_context=setup_context)
    bias_gelu = ops.bias_gelu
    how = "torch.library.register_autograd"
else:
    class BiasGelu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, bias):
            setup_context(ctx, (x, bias), None)
            return ops.bias_gelu(x, bias)

        backward = staticmethod(backward)

    bias_gelu = BiasGelu.apply
    how = "torch.autograd.Function"
print("[ops] INFO torch autograd through %s" % how, flush=True)

if hasattr(torch.library, "register_fake"):
    @torch.library.register_fake("menv_ops::bias_gelu")
    def _(x, bias):
        return torch.empty_like(x)

    @torch.library.register_fake("menv_ops::bias_gelu_backward")
    def _(dy, x, bias):
        return torch.empty_like(x), torch.empty_like(bias)


def reference(x, bias):
    z = x.double() + bias.double()
    return 0.5 * z * (1 + torch.tanh((2 / math.pi) ** 0.5 * (z + 0.044715 * z**3)))


seed = int(os.environ.get("MENV_OPS_SEED", "0")) or int.from_bytes(os.urandom(8), "little") >> 1
dev = "cuda" if gpu else "cpu"
gen = torch.Generator(device=dev).manual_seed(seed)
print("[ops] INFO torch seed %d, device %s" % (seed, dev))


def rand(*shape, dtype=torch.float32, lo=-1.0, hi=1.0):
    return (torch.rand(*shape, generator=gen, device=dev, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


for shape in [(4, 33, 257), (1024, 4096)]:
    x = rand(*shape, lo=-4, hi=4).requires_grad_()
    b = rand(shape[-1]).requires_grad_()
    dy = rand(*shape)
    y = bias_gelu(x, b)
    xd = x.detach().double().requires_grad_()
    bd = b.detach().double().requires_grad_()
    yr = reference(xd, bd)
    name = "x".join(map(str, shape))
    check(rel(y.detach(), yr.detach()) < 1e-6, "f32 forward %s rel err" % name,
          rel(y.detach(), yr.detach()), 1e-6)
    y.backward(dy)
    yr.backward(dy.double())
    e = max(rel(x.grad, xd.grad), rel(b.grad, bd.grad))
    check(e < 1e-6, "f32 autograd backward %s rel err (dx, dbias)" % name, e, 1e-6)

x = rand(8, 16, dtype=torch.float64, lo=-4, hi=4).requires_grad_()
b = rand(16, dtype=torch.float64).requires_grad_()
ok = torch.autograd.gradcheck(bias_gelu, (x, b), eps=1e-6, atol=1e-8, rtol=1e-6)
check(ok, "torch.autograd.gradcheck float64 8x16 on %s (eps 1e-6, atol 1e-8, rtol 1e-6)" % dev,
      0, 0)

if hasattr(torch.library, "opcheck"):
    try:
        torch.library.opcheck(ops.bias_gelu.default, (x, b))
        check(True, "torch.library.opcheck (schema, autograd registration, fake tensor, aot)", 0, 0)
    except Exception as exc:  # report, do not hide
        print("[ops] opcheck: %s" % str(exc).splitlines()[0])
        check(False, "torch.library.opcheck", 1, 0)

if major >= 8 or not gpu:
    x = rand(256, 1024, dtype=torch.bfloat16, lo=-4, hi=4)
    b = rand(1024, dtype=torch.bfloat16)
    e = rel(ops.bias_gelu(x, b), reference(x, b))
    check(e < 1e-2, "bf16 forward 256x1024 rel err", e, 1e-2)

print("[ops] %s torch tests: %d failed" % ("FAIL" if failures else "PASS", failures))
sys.exit(1 if failures else 0)
