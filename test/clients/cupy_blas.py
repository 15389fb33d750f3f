"""cupy.dot / cupy.matmul and friends through our libcublas.so.13 (CuPy loads
libcublas by name), each checked against NumPy; prints "<step>: ok",
"<step>: FAIL ..." or "<step>: skipped" (named in CUPY_BLAS_SKIP)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import cupy as cp
import numpy as np

rng = np.random.default_rng(11)
failed = 0
SKIP = set(filter(None, os.environ.get("CUPY_BLAS_SKIP", "").split(",")))


def check(step: str, got: Callable[[], cp.ndarray], want: np.ndarray, tol: float) -> None:
    global failed
    if step in SKIP:
        print(f"{step}: skipped", flush=True)
        return
    try:
        have = cp.asnumpy(got())
    except Exception as error:  # a step's failure is reported; the next runs
        failed += 1
        print(f"{step}: FAIL {type(error).__name__}: {error}", flush=True)
        return
    scale = max(float(np.max(np.abs(want))), 1e-30)
    err = float(np.max(np.abs(have.astype(want.dtype) - want))) / scale
    ok = have.shape == want.shape and have.dtype == want.dtype and err <= tol
    failed += not ok
    print(f"{step}: {'ok' if ok else 'FAIL'} shape {have.shape} {have.dtype} "
          f"relative error {err:.2e}", flush=True)


def normal(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


a, b = normal(64, 48), normal(48, 40)
check("dot_f32", lambda: cp.dot(cp.asarray(a), cp.asarray(b)), a @ b, 1e-5)
# A transposed view: CuPy passes the transpose to the GEMM instead of copying.
check("dot_f32_transposed", lambda: cp.dot(cp.asarray(b).T, cp.asarray(a).T), b.T @ a.T, 1e-5)
x, y = normal(4, 16, 24, dtype=np.float64), normal(4, 24, 8, dtype=np.float64)
check("matmul_f64_batched", lambda: cp.matmul(cp.asarray(x), cp.asarray(y)), x @ y, 1e-12)
h, k = normal(32, 64, dtype=np.float16), normal(64, 16, dtype=np.float16)
want16 = (h.astype(np.float32) @ k.astype(np.float32)).astype(np.float16)
check("matmul_f16", lambda: cp.matmul(cp.asarray(h), cp.asarray(k)), want16, 2e-3)
c = (normal(24, 20) + 1j * normal(24, 20)).astype(np.complex64)
d = (normal(20, 12) + 1j * normal(20, 12)).astype(np.complex64)
check("matmul_c64", lambda: cp.matmul(cp.asarray(c), cp.asarray(d)), c @ d, 1e-5)
e = (normal(3, 10, 6, dtype=np.float64) + 1j * normal(3, 10, 6, dtype=np.float64))
f = (normal(3, 6, 4, dtype=np.float64) + 1j * normal(3, 6, 4, dtype=np.float64))
check("matmul_c128_batched", lambda: cp.matmul(cp.asarray(e), cp.asarray(f)), e @ f, 1e-12)
v = normal(48)
check("matvec_f32", lambda: cp.dot(cp.asarray(a), cp.asarray(v)), a @ v, 1e-5)
w = normal(48)
check("dot_vectors_f32", lambda: cp.dot(cp.asarray(v), cp.asarray(w)), np.asarray(v @ w), 1e-5)
z = (normal(40) + 1j * normal(40)).astype(np.complex128)
check("vdot_c128", lambda: cp.vdot(cp.asarray(z), cp.asarray(z[::-1].copy())),
      np.asarray(np.vdot(z, z[::-1])), 1e-12)
check("tensordot_f32", lambda: cp.tensordot(cp.asarray(x.astype(np.float32)),
                                            cp.asarray(y.astype(np.float32)), axes=([2], [1])),
      np.tensordot(x.astype(np.float32), y.astype(np.float32), axes=([2], [1])), 1e-5)
sys.exit(1 if failed else 0)
