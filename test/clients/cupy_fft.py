"""cupy.fft through our libcufft.so.12 (CuPy loads libcufft by name), each
transform checked against numpy.fft; prints "<step>: ok", "<step>: FAIL ..."
or "<step>: skipped" (named in CUPY_FFT_SKIP)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import cupy as cp
import numpy as np

rng = np.random.default_rng(5)
failed = 0
SKIP = set(filter(None, os.environ.get("CUPY_FFT_SKIP", "").split(",")))


def check(step: str, got: Callable[[], cp.ndarray], want: np.ndarray, tol: float) -> None:
    global failed
    if step in SKIP:
        print(f"{step}: skipped", flush=True)
        return
    have = cp.asnumpy(got())
    err = float(np.max(np.abs(have - want)) / max(np.max(np.abs(want)), 1e-30))
    ok = have.shape == want.shape and err <= tol
    failed += not ok
    print(f"{step}: {'ok' if ok else 'FAIL'} shape {have.shape} relative error {err:.2e}",
          flush=True)


x = (rng.standard_normal((4, 96)) + 1j * rng.standard_normal((4, 96))).astype(np.complex64)
check("fft_c64_batched", lambda: cp.fft.fft(cp.asarray(x)), np.fft.fft(x), 1e-5)
# norm="forward": the inverse unscaled, as cuFFT computes it (no CuPy kernel).
check("ifft_c64", lambda: cp.fft.ifft(cp.asarray(x), norm="forward"), np.fft.ifft(x, norm="forward"),
      1e-5)
z = x.astype(np.complex128)
check("fft2_c128", lambda: cp.fft.fft2(cp.asarray(z.reshape(8, 48))), np.fft.fft2(z.reshape(8, 48)),
      1e-12)
r = rng.standard_normal((3, 10, 12)).astype(np.float32)
check("rfftn_f32", lambda: cp.fft.rfftn(cp.asarray(r)), np.fft.rfftn(r), 1e-5)
spectrum = np.fft.rfft(r.astype(np.float64), axis=-1)
check("irfft_f64", lambda: cp.fft.irfft(cp.asarray(spectrum), n=12, axis=-1, norm="forward"),
      np.fft.irfft(spectrum, n=12, axis=-1, norm="forward"), 1e-12)
check("fft_axis0_strided", lambda: cp.fft.fft(cp.asarray(x), axis=0), np.fft.fft(x, axis=0), 1e-5)
sys.exit(1 if failed else 0)
