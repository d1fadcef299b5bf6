"""The operator as a PyTorch custom operator (torch.ops.menv_ops.bias_gelu) with autograd.

Builds torch/menv_ops_torch.cpp (schemas, CPU kernels from the float64 C reference) with
torch.utils.cpp_extension, plus, where PyTorch sees a CUDA device, menv_ops_torch_cuda.cpp
and src/bias_gelu.cu for the GPU's own compute capability plus PTX; registers autograd (with
torch.library where this PyTorch has register_autograd, else a torch.autograd.Function) and
fake implementations, then checks on the GPU or else the CPU: float32 forward and backward
(through autograd) against a float64 reference, torch.autograd.gradcheck in float64,
torch.library.opcheck where it exists, and bfloat16. Each limit is ||B|| / ||ref|| for B
the elementwise rounding-error bound of the kernel's arithmetic (tests/bounds.h, transcribed
below; the CPU kernels, float64 then rounded once, are within the same bounds). Usage:
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


# ---- tests/bounds.h in torch (float64 tensors): bounds on |computed - exact| per element ----
U32, U64, UBF16 = 2.0**-24, 2.0**-53, 2.0**-8
TANH_ULPS, MARGIN, G2 = 2.0, 2.0, 0.80
K0 = (2 / math.pi) ** 0.5


def bnd_tanh(z, u):
    a = K0 * (z + 0.044715 * z**3)
    return TANH_ULPS * u + 7 * u * a.abs() * (1 - torch.tanh(a) ** 2)


def bnd_fwd(z, u, uo=0.0):
    t = torch.tanh(K0 * (z + 0.044715 * z**3))
    y = 0.5 * z * (1 + t)
    e = 1.13 * u * z.abs() + 0.5 * z.abs() * (bnd_tanh(z, u) + u * (1 + t)) + u * y.abs()
    return MARGIN * (e + uo * (y.abs() + e))


def bnd_dx(dy, z, u):
    t = torch.tanh(K0 * (z + 0.044715 * z**3))
    dt, m = bnd_tanh(z, u), 1 + 3 * 0.044715 * z * z
    B = 0.5 * z * (1 - t * t) * K0 * m
    g = 0.5 * (1 + t) + B
    dB = 0.5 * z.abs() * K0 * m * (2 * t.abs() * dt + u) + 8 * u * B.abs()
    bg = MARGIN * (0.5 * (dt + u * (1 + t)) + dB + u * g.abs() + G2 * u * z.abs())
    return dy.abs() * bg + MARGIN * u * (dy * g).abs()


def gamma(d, u):
    return d * u / (1 - d * u)


def dbias_depth(rows, cols):
    """depth of the CUDA kernel's dbias sums (bias_gelu.cu row_blocks, bounds.h); the CPU
    kernel sums in float64 and rounds once, which this bound (>= u |dbias|) covers"""
    rb = min(-(-rows // 64), max(1, (1 << 18) // cols), 1024)
    return -(-rows // (8 * rb)) + 8 + rb


def limit(bound, ref):
    return float(bound.norm() / ref.norm())


def rand(*shape, dtype=torch.float32, lo=-1.0, hi=1.0):
    return (torch.rand(*shape, generator=gen, device=dev, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


# The large case is the GPU's: 1024 rows of 4096 make the CUDA kernel's dbias reduction run
# over 16 row blocks (dbias_depth). The CPU kernel is the float64 reference, one loop with no
# blocks, for which 64 rows of the same width check the same code: 1024x4096 there cost about
# 60 s of CPU per smoke check with Debian's libtorch (its float64 elementwise ops, about 40 per
# element in the bounds, at 60 ns an element) for nothing more.
LARGE = (1024, 4096) if gpu else (64, 4096)
for shape in [(4, 33, 257), LARGE]:
    x = rand(*shape, lo=-4, hi=4).requires_grad_()
    b = rand(shape[-1]).requires_grad_()
    dy = rand(*shape)
    y = bias_gelu(x, b)
    xd = x.detach().double().requires_grad_()
    bd = b.detach().double().requires_grad_()
    yr = reference(xd, bd)
    name = "x".join(map(str, shape))
    z = (xd + bd).detach()
    e, lim = rel(y.detach(), yr.detach()), limit(bnd_fwd(z, U32) + bnd_fwd(z, U64), yr.detach())
    check(e <= lim, "f32 forward %s rel err" % name, e, lim)
    y.backward(dy)
    yr.backward(dy.double())
    rows, cols = z.numel() // shape[-1], shape[-1]
    bx = bnd_dx(dy.double(), z, U32) + bnd_dx(dy.double(), z, U64)
    sabs = xd.grad.abs().reshape(rows, cols).sum(0)
    bb = bx.reshape(rows, cols).sum(0) + \
        MARGIN * (gamma(dbias_depth(rows, cols), U32) + gamma(rows, U64)) * sabs
    e, lim = rel(x.grad, xd.grad), limit(bx, xd.grad)
    check(e <= lim, "f32 autograd backward dx %s rel err" % name, e, lim)
    e, lim = rel(b.grad, bd.grad), limit(bb, bd.grad)
    check(e <= lim, "f32 autograd backward dbias %s rel err" % name, e, lim)

# gradcheck compares each Jacobian entry with a central difference of step eps and passes
# when |analytic - numerical| <= atol + rtol |numerical|. The difference's error in float64,
# |z| <= 5: truncation eps^2 max|gelu^(3)| / 6 = 1.3e-13, the two evaluations' rounding
# 2 x 5.3 2^-53 |z| / 2 eps = 2.9e-9, x +- eps rounded: 2^-53 |x| max|gelu'| / eps = 5e-10,
# the analytic side 1e-15: below 3.5e-9 < atol 1e-8 (bounds.h bnd_fd, bnd_fwd)
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
    z = x.double() + b.double()
    ref = reference(x, b)
    e, lim = rel(ops.bias_gelu(x, b), ref), limit(bnd_fwd(z, U32, UBF16), ref)
    check(e <= lim, "bf16 forward 256x1024 rel err", e, lim)

print("[ops] %s torch tests: %d failed" % ("FAIL" if failures else "PASS", failures))
sys.exit(1 if failures else 0)
