"""Tests of the pybind11 module `menv_ops` with numpy.

Always: the float64 CPU reference (C) against numpy's float64 formula. With a GPU: float32
and float64 kernels against the reference, and the float64 backward against central
differences of the float64 forward. Every limit is ||B|| / ||ref|| for B the elementwise
rounding-error bound of the arithmetic checked, as in tests/bounds.h (whose comments give
the derivation; the functions below are its numpy transcription): about 1e-6 in float32.
Fresh random inputs each run (MENV_OPS_SEED replays one). Prints "[ops] ..." lines; exit 0
when all pass.
"""
import os
import sys

import numpy as np

import menv_ops

failures = 0


def check(ok, what, value, limit):
    global failures
    print("[ops] %s python %s: %.3g (limit %.3g)" % ("PASS" if ok else "FAIL", what, value, limit))
    failures += not ok


def rel(out, ref):
    out = np.asarray(out, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        return float("inf")
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


K0 = np.sqrt(2 / np.pi)


def gelu(z):
    return 0.5 * z * (1 + np.tanh(K0 * (z + 0.044715 * z**3)))


def gelu_grad(z):
    t = np.tanh(K0 * (z + 0.044715 * z**3))
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * K0 * (1 + 3 * 0.044715 * z * z)


# ---- tests/bounds.h in numpy: bounds on |computed - exact| of one element ----
U32, U64 = 2.0**-24, 2.0**-53
TANH_ULPS, MARGIN, G1, G2, G3 = 2.0, 2.0, 1.13, 0.80, 0.78


def bnd_tanh(z, u):
    a = K0 * (z + 0.044715 * z**3)
    return TANH_ULPS * u + 7 * u * np.abs(a) * (1 - np.tanh(a) ** 2)


def bnd_fwd(z, u, uo=0.0):
    t = np.tanh(K0 * (z + 0.044715 * z**3))
    y = 0.5 * z * (1 + t)
    ds = bnd_tanh(z, u) + u * (1 + t)
    e = G1 * u * np.abs(z) + 0.5 * np.abs(z) * ds + u * np.abs(y)
    return MARGIN * (e + uo * (np.abs(y) + e))


def bnd_grad(z, u):
    t = np.tanh(K0 * (z + 0.044715 * z**3))
    dt = bnd_tanh(z, u)
    m = 1 + 3 * 0.044715 * z * z
    B = 0.5 * z * (1 - t * t) * K0 * m
    g = 0.5 * (1 + t) + B
    dB = 0.5 * np.abs(z) * K0 * m * (2 * np.abs(t) * dt + u) + 8 * u * np.abs(B)
    return MARGIN * (0.5 * (dt + u * (1 + t)) + dB + u * np.abs(g) + G2 * u * np.abs(z))


def bnd_dx(dy, z, u):
    return np.abs(dy) * bnd_grad(z, u) + MARGIN * u * np.abs(dy * gelu_grad(z))


def gamma(d, u):
    return d * u / (1 - d * u)


def gpu_depth(rows, cols):
    """depth of the backward kernel's dbias sums (bias_gelu.cu row_blocks, bounds.h)"""
    rb = min(-(-rows // 64), max(1, (1 << 18) // cols), 1024)
    return -(-rows // (8 * rb)) + 8 + rb


def bnd_fd(dy, z, h, rho, u):
    """central difference of gelu along 1 (h) against dy gelu'(z); rho: inputs' rounding"""
    fp, fm = bnd_fwd(z + h, u), bnd_fwd(z - h, u)
    return np.abs(dy) * (h * h * G3 / 6 + (fp + fm) / (2 * h) + G1 * 2 * rho / (2 * h)
                         + MARGIN * 4 * U64 * (G1 + (fp + fm) / h))


def limit(bound, ref):
    return float(np.linalg.norm(bound) / np.linalg.norm(ref))


seed = int(os.environ.get("MENV_OPS_SEED", "0")) or int.from_bytes(os.urandom(8), "little")
rng = np.random.default_rng(seed)
print("[ops] INFO python: numpy %s, %s; seed %d" % (np.__version__, menv_ops.build_info(), seed))

x = rng.uniform(-4, 4, (97, 131))
b = rng.uniform(-1, 1, 131)
dy = rng.uniform(-1, 1, (97, 131))
# both are float64 evaluations of one formula: each within its bound, so 2 B apart at most
z = x + b
e, lim = rel(menv_ops.reference(x, b), gelu(z)), limit(2 * bnd_fwd(z, U64), gelu(z))
check(e <= lim, "C reference vs numpy forward rel err", e, lim)
gx, gb = menv_ops.reference_backward(dy, x, b)
rx = dy * gelu_grad(z)
bx = 2 * bnd_dx(dy, z, U64)
bb = bx.sum(0) + 2 * MARGIN * gamma(x.shape[0], U64) * np.abs(rx).sum(0)  # any summation order
e, lim = rel(gx, rx), limit(bx, rx)
check(e <= lim, "C reference vs numpy backward dx rel err", e, lim)
e, lim = rel(gb, rx.sum(0)), limit(bb, rx.sum(0))
check(e <= lim, "C reference vs numpy backward dbias rel err", e, lim)

if not menv_ops.cuda_available():
    print("[ops] SKIP python gpu: GPU run skipped: no CUDA driver or device found")
    sys.exit(1 if failures else 0)

for rows, cols in [(97, 131), (512, 1024)]:
    x32 = rng.uniform(-4, 4, (rows, cols)).astype(np.float32)
    b32 = rng.uniform(-1, 1, cols).astype(np.float32)
    g32 = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    xd, bd, gd = x32.astype(np.float64), b32.astype(np.float64), g32.astype(np.float64)
    z = xd + bd
    y = menv_ops.bias_gelu(x32, b32)
    e, lim = rel(y, gelu(z)), limit(bnd_fwd(z, U32) + bnd_fwd(z, U64), gelu(z))
    check(y.dtype == np.float32 and e <= lim, "f32 forward %dx%d rel err" % (rows, cols), e, lim)
    gx, gb = menv_ops.bias_gelu_backward(g32, x32, b32)
    rx = gd * gelu_grad(z)
    bx = bnd_dx(gd, z, U32) + bnd_dx(gd, z, U64)
    bb = bx.sum(0) + MARGIN * (gamma(gpu_depth(rows, cols), U32) + gamma(rows, U64)) * \
        np.abs(rx).sum(0)
    e, lim = rel(gx, rx), limit(bx, rx)
    check(e <= lim, "f32 backward dx %dx%d rel err" % (rows, cols), e, lim)
    e, lim = rel(gb, rx.sum(0)), limit(bb, rx.sum(0))
    check(e <= lim, "f32 backward dbias %dx%d rel err" % (rows, cols), e, lim)

# float64: backward against central differences of the GPU forward; limit: the difference's
# truncation and rounding (h = 1e-5: about 1e-10 each) plus the backward's bound
x = rng.uniform(-4, 4, (64, 48))
b = rng.uniform(-1, 1, 48)
dy = rng.uniform(-1, 1, (64, 48))
h = 1e-5
z = x + b
gx, gb = menv_ops.bias_gelu_backward(dy, x, b)
tx = dy * (menv_ops.bias_gelu(x + h, b) - menv_ops.bias_gelu(x - h, b)) / (2 * h)
tb = dy * (menv_ops.bias_gelu(x, b + h) - menv_ops.bias_gelu(x, b - h)) / (2 * h)
bx = bnd_dx(dy, z, U64)
bfx = bx + bnd_fd(dy, z, h, MARGIN * U64 * (np.abs(x) + h), U64)
bfb = (bx + bnd_fd(dy, z, h, MARGIN * U64 * (np.abs(b) + h), U64)).sum(0) + \
    MARGIN * (gamma(gpu_depth(64, 48), U64) + gamma(64, U64)) * np.abs(tb).sum(0)
e, lim = rel(gx, tx), limit(bfx, tx)
check(e <= lim, "f64 gradient check dx vs finite differences rel err", e, lim)
e, lim = rel(gb, tb.sum(0)), limit(bfb, tb.sum(0))
check(e <= lim, "f64 gradient check dbias vs finite differences rel err", e, lim)
print("[ops] %s python tests: %d failed" % ("FAIL" if failures else "PASS", failures))
sys.exit(1 if failures else 0)
