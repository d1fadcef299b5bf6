"""Tests of the pybind11 module `menv_ops` with numpy.

Always: the float64 CPU reference (C) against numpy's float64 formula. With a GPU: float32
and float64 kernels against the reference (||out - ref|| / ||ref|| < 1e-6 in float32), and
the float64 backward against central differences of the float64 forward. Fresh random
inputs each run (MENV_OPS_SEED replays one). Prints "[ops] ..." lines; exit 0 when all pass.
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


seed = int(os.environ.get("MENV_OPS_SEED", "0")) or int.from_bytes(os.urandom(8), "little")
rng = np.random.default_rng(seed)
print("[ops] INFO python: numpy %s, %s; seed %d" % (np.__version__, menv_ops.build_info(), seed))

x = rng.uniform(-4, 4, (97, 131))
b = rng.uniform(-1, 1, 131)
dy = rng.uniform(-1, 1, (97, 131))
check(rel(menv_ops.reference(x, b), gelu(x + b)) < 1e-14, "C reference vs numpy forward",
      rel(menv_ops.reference(x, b), gelu(x + b)), 1e-14)
gx, gb = menv_ops.reference_backward(dy, x, b)
e = max(rel(gx, dy * gelu_grad(x + b)), rel(gb, (dy * gelu_grad(x + b)).sum(0)))
check(e < 1e-13, "C reference vs numpy backward", e, 1e-13)

if not menv_ops.cuda_available():
    print("[ops] SKIP python gpu: GPU run skipped: no CUDA driver or device found")
    sys.exit(1 if failures else 0)

for rows, cols in [(97, 131), (512, 1024)]:
    x32 = rng.uniform(-4, 4, (rows, cols)).astype(np.float32)
    b32 = rng.uniform(-1, 1, cols).astype(np.float32)
    g32 = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    xd, bd, gd = x32.astype(np.float64), b32.astype(np.float64), g32.astype(np.float64)
    y = menv_ops.bias_gelu(x32, b32)
    check(y.dtype == np.float32 and rel(y, gelu(xd + bd)) < 1e-6,
          "f32 forward %dx%d rel err" % (rows, cols), rel(y, gelu(xd + bd)), 1e-6)
    gx, gb = menv_ops.bias_gelu_backward(g32, x32, b32)
    rx = gd * gelu_grad(xd + bd)
    e = max(rel(gx, rx), rel(gb, rx.sum(0)))
    check(e < 1e-6, "f32 backward %dx%d rel err (dx, dbias)" % (rows, cols), e, 1e-6)

# float64: backward against central differences of the GPU forward
x = rng.uniform(-4, 4, (64, 48))
b = rng.uniform(-1, 1, 48)
dy = rng.uniform(-1, 1, (64, 48))
h = 1e-5
gx, gb = menv_ops.bias_gelu_backward(dy, x, b)
fx = dy * (menv_ops.bias_gelu(x + h, b) - menv_ops.bias_gelu(x - h, b)) / (2 * h)
fb = (dy * (menv_ops.bias_gelu(x, b + h) - menv_ops.bias_gelu(x, b - h)) / (2 * h)).sum(0)
e = max(rel(gx, fx), rel(gb, fb))
check(e < 1e-6, "f64 gradient check vs finite differences (dx, dbias)", e, 1e-6)
print("[ops] %s python tests: %d failed" % ("FAIL" if failures else "PASS", failures))
sys.exit(1 if failures else 0)
