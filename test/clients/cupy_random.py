"""cupy.random's legacy RandomState, which calls NVIDIA's libcurand.so.10
(the nvidia-curand wheel) through its host API: each step checks the
statistics and that a seed repeats, and prints the first values (for a
comparison with a GPU's); prints "<step>: ok ..." or "<step>: FAIL ..."."""

from __future__ import annotations

import sys

import cupy as cp
import numpy as np

failed = 0
N = 1 << 16


def check(step: str, ok: bool, values: np.ndarray, detail: str) -> None:
    global failed
    failed += not ok
    first = " ".join(f"{v!r}" for v in values[:3].tolist())
    print(f"{step}: {'ok' if ok else 'FAIL'} {detail} first {first}", flush=True)


def draw(method: str, *args: object, dtype: object = None) -> np.ndarray:
    """`method`'s values from a fresh RandomState, on the host (the checks
    are NumPy's: no CuPy kernel beyond those of the draw)."""
    state = cp.random.RandomState(seed=20261202)
    kwargs = {"dtype": dtype} if dtype is not None else {}
    return cp.asnumpy(getattr(state, method)(*args, **kwargs))


for method, args, dtype, mean, var in (
        ("random_sample", (N,), np.float64, 0.5, 1 / 12),
        ("uniform", (0.0, 1.0, N), np.float32, 0.5, 1 / 12),
        ("standard_normal", (N,), np.float64, 0.0, 1.0),
        ("normal", (1.5, 2.0, N), np.float32, 1.5, 4.0),
        ("lognormal", (0.0, 0.5, N), np.float64, float(np.exp(0.125)),
         float((np.exp(0.25) - 1) * np.exp(0.25)))):
    a = draw(method, *args, dtype=dtype)
    b = draw(method, *args, dtype=dtype)
    m, v = float(a.mean()), float(a.var())
    ok = (a.dtype == dtype and bool((a == b).all()) and abs(m - mean) < 0.03 * max(1, abs(mean))
          and abs(v - var) < 0.05 * max(1, var))
    check(f"{method}_{np.dtype(dtype).name}", ok, a, f"mean {m:.4f} var {v:.4f}")

bits = cp.asnumpy(cp.random.RandomState(seed=7).tomaxint(size=N))  # curandGenerate's words
check("tomaxint", bool((bits >= 0).all()) and int(bits.max()) > 2**30, bits,
      f"max {int(bits.max())}")

print("PASSED" if not failed else f"FAILED {failed}")
sys.exit(1 if failed else 0)
