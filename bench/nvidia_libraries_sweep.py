"""NVIDIA's cuFFT and cuBLAS (the wheels' libraries) on our driver, checked
against numpy in float64, over shapes our tests never tried.

Each case is one process, `zmlir run -- <checker> ...`, so that a crash or a
hang costs one case: nvidia_fft_check.cu runs one cufftExec* on an input this
script writes, nvidia_blas_check.cu one cuBLAS call. A case is wrong where an
element's error exceeds tol * max|reference| (the transform's or the
product's scale). Results go to bench/results/nvidia_libraries_sweep.json
(written after every case) and a markdown table next to it.

    .venv/bin/python bench/nvidia_libraries_sweep.py [--only fft|blas]
        [--filter SUBSTRING] [--jobs 2] [--timeout 900]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CU13 = ROOT / ".venv/lib/python3.11/site-packages/nvidia/cu13"
BUILD = Path(os.environ.get("SWEEP_BUILD", "/tmp/nvidia_sweep"))
RESULTS = Path(os.environ.get("SWEEP_RESULTS", ROOT / "bench/results/nvidia_libraries_sweep.json"))
ZMLIR = ROOT / ".venv/bin/zmlir"

POW2 = [2**k for k in range(1, 15)]
ODD = [3, 5, 7, 12, 100, 243, 1000, 1023, 4097]

REAL = {"r2c": np.float32, "d2z": np.float64}
HERM = {"c2r": np.complex64, "z2d": np.complex128}
COMPLEX = {"c2c": np.complex64, "z2z": np.complex128}
DOUBLE = {"z2z", "d2z", "z2d"}


HALF = {"16": np.float16, "bf": "bf16"}


def to16(x: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """x (real, or complex as interleaved pairs) as half or bfloat16 bits,
    and the values those bits hold, in float64."""
    flat = x.view(np.float64) if np.iscomplexobj(x) else x.astype(np.float64)
    if kind == "16":
        bits = flat.astype(np.float16)
        back = bits.astype(np.float64)
        bits = bits.view(np.uint16)
    else:
        u = flat.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        back = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    back = back.reshape(flat.shape)
    return bits, (back.view(np.complex128) if np.iscomplexobj(x) else back)


def from16(raw: np.ndarray, kind: str) -> np.ndarray:
    if kind == "16":
        return raw.view(np.float16).astype(np.float64)
    return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def build(name: str, lib: str) -> Path:
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / name
    src = ROOT / "bench" / f"{name}.cu"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["flock", "/tmp/zmlir-build.lock", "nvcc", "-arch=sm_75", f"-I{CU13}/include",
                        f"-L{CU13}/lib", "-Xlinker", f"-rpath={CU13}/lib", "-Xlinker",
                        "--disable-new-dtags", "-o", str(exe), str(src), f"-l:{lib}"], check=True)
    return exe


# ---------------------------------------------------------------- cuFFT cases


def fft_cases() -> list[dict]:
    cases = []
    for t in ("c2c", "r2c", "c2r", "z2z", "d2z", "z2d"):
        for n in POW2 + ODD:
            big = 4096 if n <= 256 else 1024 if n <= 4096 else 256
            if n == 2048:
                big = 2048
            for batch in (1, 7, big):
                cases.append({"lib": "fft", "type": t, "dims": [n], "batch": batch})
    for t in ("c2c",):
        for n in (64, 1000, 2048, 4097):
            cases.append({"lib": "fft", "type": t, "dims": [n], "batch": 7, "dir": 1})
    for t in ("c2c", "r2c", "c2r", "z2z"):
        for dims in ([64, 64], [100, 300], [7, 4097], [1024, 1024], [16, 16, 16], [5, 7, 9],
                     [32, 64, 128]):
            for batch in (1, 3):
                if batch == 3 and np.prod(dims) > 100000:
                    continue
                cases.append({"lib": "fft", "type": t, "dims": dims, "batch": batch})
    for t in ("c2c", "r2c", "c2r", "z2z", "d2z"):
        for n in (256, 1000, 2048):
            for batch in (7, 1024):
                cases.append({"lib": "fft", "type": t, "dims": [n], "batch": batch,
                              "stride": [2, 2 * n + 5, 3, 3 * n + 1]})
    for t in ("c2c", "r2c", "c2r", "z2z"):
        for n in (1000, 1024, 2048):
            for batch in (7, 1024):
                cases.append({"lib": "fft", "type": t, "dims": [n], "batch": batch, "inplace": 1})
    # Half and bfloat16 (cufftXt; powers of two only).
    for t in ("c2c16", "r2c16", "c2r16", "c2cbf", "r2cbf", "c2rbf"):
        for n in (2, 8, 64, 256, 1024, 2048, 4096, 16384, 1 << 16):
            for batch in ((1, 7, 1024) if n <= 4096 else (1, 3)):
                cases.append({"lib": "fft", "type": t, "dims": [n], "batch": batch})
        for dims in ([64, 64], [256, 512], [32, 32, 32]):
            cases.append({"lib": "fft", "type": t, "dims": dims, "batch": 2})
    # Larger: single transforms cuFFT splits into several kernels, batches of
    # tens of thousands, radices 3, 5, 7, 11, 13 and mixed ones, 2-D and 3-D.
    for t in ("c2c", "r2c", "c2r", "z2z", "d2z"):
        for n in (1 << 15, 1 << 16, 1 << 18, 1 << 20, 3 ** 10, 5 ** 7, 7 ** 6):
            cases.append({"lib": "fft", "type": t, "dims": [n], "batch": 1})
        for n in (11, 13, 17, 31, 96, 127, 384, 640, 1536, 3072, 6144, 10000):
            for batch in (3, 4096 if n <= 1536 else 512):
                cases.append({"lib": "fft", "type": t, "dims": [n], "batch": batch})
        for n, batch in ((16, 65536), (256, 16384), (1024, 8192), (4096, 2048)):
            cases.append({"lib": "fft", "type": t, "dims": [n], "batch": batch})
    for t in ("c2c", "r2c", "c2r", "z2z", "d2z", "z2d"):
        for dims in ([2048, 2048], [4096, 1024], [1024, 4096], [3, 65536], [96, 96, 96],
                     [128, 128, 128], [256, 256, 64], [1, 2048, 2048]):
            cases.append({"lib": "fft", "type": t, "dims": dims, "batch": 1})
    return cases


def fft_name(c: dict) -> str:
    s = f"{c['type']} {'x'.join(map(str, c['dims']))} b{c['batch']}"
    if c.get("dir") == 1:
        s += " inv"
    if c.get("stride"):
        s += " strided" + ",".join(map(str, c["stride"]))
    if c.get("inplace"):
        s += " inplace"
    return s


def fft_run(c: dict, exe: Path, work: Path, timeout: int) -> dict:
    t, dims, batch = c["type"], c["dims"], c["batch"]
    if t[3:] in HALF:
        return fft16_run(c, exe, work, timeout)
    rng = np.random.default_rng(zlib.crc32(fft_name(c).encode()))
    last = dims[-1]
    half = last // 2 + 1
    axes = tuple(range(1, len(dims) + 1))
    n_total = int(np.prod(dims))
    inplace = c.get("inplace", 0)
    stride = c.get("stride")
    if t in REAL:
        x = rng.standard_normal((batch, *dims))
        ref = np.fft.rfftn(x, axes=axes)
        x = x.astype(REAL[t])
    elif t in HERM:
        real = rng.standard_normal((batch, *dims))
        x = np.fft.rfftn(real, axes=axes)
        ref = real * n_total  # cuFFT does not normalise
        x = x.astype(HERM[t])
    else:
        x = rng.standard_normal((batch, *dims)) + 1j * rng.standard_normal((batch, *dims))
        ref = (np.fft.ifftn(x, axes=axes) * n_total if c.get("dir") == 1
               else np.fft.fftn(x, axes=axes))
        x = x.astype(COMPLEX[t])
    # The input buffer as the plan reads it.
    if stride:
        istride, idist, ostride, odist = stride
        flat = x.reshape(batch, -1)
        buf = np.zeros((batch - 1) * idist + (flat.shape[1] - 1) * istride + 1, x.dtype)
        for b in range(batch):
            buf[b * idist: b * idist + flat.shape[1] * istride: istride] = flat[b]
    elif inplace and t in REAL:  # rows padded to 2 * (last / 2 + 1) reals
        buf = np.zeros((batch, *dims[:-1], 2 * half), x.dtype)
        buf[..., :last] = x
    else:
        buf = x
    inp, out = work / "in.bin", work / "out.bin"
    buf.tofile(inp)
    args = [str(ZMLIR), "run", "--", str(exe), t, str(inp), str(out), str(c.get("dir", -1)),
            str(inplace), str(batch), str(len(dims)), *map(str, dims)]
    if stride:
        args += list(map(str, stride))
    start = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": round(time.time() - start, 1)}
    secs = round(time.time() - start, 1)
    if p.returncode != 0:
        return {"status": "error", "seconds": secs,
                "detail": (p.stdout + p.stderr).strip().splitlines()[-3:]}
    odt = {"c2c": np.complex64, "r2c": np.complex64, "c2r": np.float32, "z2z": np.complex128,
           "d2z": np.complex128, "z2d": np.float64}[t]
    y = np.fromfile(out, odt)
    oshape = ref.shape
    if stride:
        per = int(np.prod(oshape[1:]))
        y = np.stack([y[b * odist: b * odist + per * ostride: ostride] for b in range(batch)])
        y = y.reshape(oshape)
    elif inplace and t in HERM:  # output rows padded to 2 * (last / 2 + 1) reals
        y = y[: batch * int(np.prod(dims[:-1])) * 2 * half].reshape(
            batch, *dims[:-1], 2 * half)[..., :last]
    else:
        y = y[: ref.size].reshape(oshape)
    tol = 1e-10 if t in DOUBLE else 2e-5 * max(1.0, np.log2(n_total) / 4)
    scale = np.abs(ref).reshape(batch, -1).max(axis=1).reshape(batch, *[1] * len(dims))
    err = np.abs(y - ref) / scale
    bad = np.argwhere(err > tol)
    r = {"status": "ok" if len(bad) == 0 else "WRONG", "seconds": secs,
         "max_rel_err": float(err.max()), "bad": len(bad), "of": int(ref.size)}
    if len(bad):
        r["bad_batches"] = len(np.unique(bad[:, 0]))
        r["first_bad"] = bad[0].tolist()
        r["bad_last_index"] = np.unique(bad[:, -1])[:16].tolist()
    return r


# --------------------------------------------------------------- cuBLAS cases

BLAS_DT = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128,
           "h": np.float16, "bf": np.float32, "tf": np.float32}
ALPHA = {"c": 1.5 - 0.25j, "z": 1.5 - 0.25j}
BETA = {"c": 0.5 + 0.125j, "z": 0.5 + 0.125j}


def blas_cases() -> list[dict]:
    cases = []
    shapes = [(1, 1, 1), (3, 5, 7), (17, 33, 65), (64, 64, 64), (127, 129, 131), (256, 200, 1000),
              (1000, 3, 1000), (5, 1000, 777), (513, 257, 255), (1024, 1024, 1024)]
    for t in ("s", "d", "c", "z", "h", "bf", "tf"):
        for m, n, k in shapes:
            for ta, tb in (("n", "n"), ("t", "n"), ("n", "t"), ("t", "t")) + (
                    (("c", "n"),) if t in "cz" else ()):
                if m * n * k > 2e8 and (ta, tb) != ("n", "n") and t not in "sh":
                    continue
                cases.append({"op": "gemm", "type": t, "mnk": [m, n, k], "trans": ta + tb})
    for t in ("s", "d", "h"):
        for (m, n, k), batch in (((3, 5, 7), 1000), ((32, 32, 32), 100), ((100, 17, 64), 33),
                                 ((129, 65, 33), 7)):
            for tr in ("nn", "tn", "nt"):
                cases.append({"op": "gemm_batched", "type": t, "mnk": [m, n, k], "trans": tr,
                              "batch": batch})
    for t in ("s", "d"):
        for m, n in ((1, 1), (7, 5), (100, 1000), (1000, 100), (4097, 33), (33, 4097),
                     (2048, 2048)):
            for tr in "nt":
                cases.append({"op": "gemv", "type": t, "mnk": [m, n, 0], "trans": tr + "n"})
        for m, n in ((1, 1), (7, 5), (64, 64), (100, 300), (513, 129), (1000, 1000)):
            for tr in "nt":
                cases.append({"op": "trsm", "type": t, "mnk": [m, n, 0], "trans": tr + "n"})
        for n, k in ((1, 1), (7, 5), (64, 64), (129, 300), (1000, 100), (512, 1023)):
            for tr in "nt":
                cases.append({"op": "syrk", "type": t, "mnk": [0, n, k], "trans": tr + "n"})
        for n in (1, 7, 100, 1023, 4097, 100000, 1 << 20, 3000001):
            for op in ("dot", "nrm2", "iamax", "axpy"):
                cases.append({"op": op, "type": t, "mnk": [0, n, 0], "trans": "nn"})
    return cases


def blas_name(c: dict) -> str:
    s = f"{c['op']} {c['type']} {'x'.join(map(str, c['mnk']))} {c['trans']}"
    return s + (f" b{c['batch']}" if c.get("batch") else "")


def _mat(rng, rows, cols, ld, dt, count=1, stride=0):
    """Column-major matrices (rows x cols, leading dimension ld) in one buffer."""
    complex_ = np.issubdtype(dt, np.complexfloating)
    stride = stride or ld * cols
    buf = rng.standard_normal((count - 1) * stride + ld * cols)
    if complex_:
        buf = buf + 1j * rng.standard_normal(buf.size)
    buf = buf.astype(dt)
    mats = [buf[i * stride: i * stride + ld * cols].reshape(cols, ld).T[:rows].astype(
        np.complex128 if complex_ else np.float64) for i in range(count)]
    return buf, mats


def _op(x, t):
    return x if t == "n" else x.T if t == "t" else x.conj().T


def blas_run(c: dict, exe: Path, work: Path, timeout: int) -> dict:
    op, t, (m, n, k), tr = c["op"], c["type"], c["mnk"], c["trans"]
    rng = np.random.default_rng(zlib.crc32(blas_name(c).encode()))
    dt = BLAS_DT[t]
    alpha, beta = ALPHA.get(t, 1.5), BETA.get(t, 0.5)
    batch = c.get("batch", 1)
    lda = ldb = ldc = 1
    sa = sb = sc = 0
    a = b = cm = None
    if op in ("gemm", "gemm_batched"):
        ar, ac = (m, k) if tr[0] == "n" else (k, m)
        br, bc = (k, n) if tr[1] == "n" else (n, k)
        lda, ldb, ldc = ar + 3, br + 1, m + 2
        sa, sb, sc = (lda * ac + 5, ldb * bc + 1, ldc * n + 3) if op == "gemm_batched" else (0, 0, 0)
        a, am = _mat(rng, ar, ac, lda, dt, batch, sa)
        b, bm = _mat(rng, br, bc, ldb, dt, batch, sb)
        cdt = np.float32 if t in ("h", "bf", "tf") else dt
        cm, cms = _mat(rng, m, n, ldc, cdt, batch, sc)
        if t == "bf":  # bfloat16: the top half of each float, rounded to nearest even
            def bf16(x):
                u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
                u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
                return u
            a, b = bf16(a), bf16(b)
            am = [((a.astype(np.uint32) << 16).view(np.float32)[i * (sa or lda * ac):][: lda * ac]
                   .reshape(ac, lda).T[:ar]).astype(np.float64) for i in range(batch)]
            bm = [((b.astype(np.uint32) << 16).view(np.float32)[i * (sb or ldb * bc):][: ldb * bc]
                   .reshape(bc, ldb).T[:br]).astype(np.float64) for i in range(batch)]
        refs = [alpha * _op(am[i], tr[0]) @ _op(bm[i], tr[1]) + beta * cms[i] for i in range(batch)]
        scale_terms = [np.abs(_op(am[i], tr[0])) @ np.abs(_op(bm[i], tr[1])) + np.abs(cms[i])
                       for i in range(batch)]

        def read(y):
            st = sc or ldc * n
            return [y[i * st: i * st + ldc * n].reshape(n, ldc).T[:m] for i in range(batch)]
    elif op == "gemv":
        ar, ac = m, n
        lda = m + 3
        a, am = _mat(rng, m, n, lda, dt)
        xl, yl = (n, m) if tr[0] == "n" else (m, n)
        b, (xv,) = _mat(rng, xl, 1, xl, dt)
        cm, (yv,) = _mat(rng, yl, 1, yl, dt)
        refs = [alpha * _op(am[0], tr[0]) @ xv + beta * yv]
        scale_terms = [np.abs(_op(am[0], tr[0])) @ np.abs(xv) + np.abs(yv)]

        def read(y):
            return [y[:yl].reshape(yl, 1)]
    elif op == "trsm":
        lda, ldb = m + 1, m + 2
        a, (am,) = _mat(rng, m, m, lda, dt)
        # Well conditioned: unit-ish diagonal, small strictly-lower part.
        am_l = np.tril(am, -1) / max(1, m) + np.diag(1.0 + np.abs(np.diag(am)))
        cols = np.zeros((m, lda))  # column j at j * lda
        cols[:, :m] = am_l.T
        a = cols.reshape(-1).astype(dt)
        b, (bm,) = _mat(rng, m, n, ldb, dt)
        x = np.linalg.solve(_op(am_l, tr[0]), alpha * bm)
        refs = [x]
        scale_terms = [np.abs(x) + np.abs(bm)]

        def read(y):
            return [y[: ldb * n].reshape(n, ldb).T[:m]]
    elif op == "syrk":
        ar, ac = (n, k) if tr[0] == "n" else (k, n)
        lda, ldc = ar + 2, n + 1
        a, (am,) = _mat(rng, ar, ac, lda, dt)
        cm, (cv,) = _mat(rng, n, n, ldc, dt)
        full = alpha * _op(am, tr[0]) @ _op(am, tr[0]).T + beta * cv
        low = np.tril(np.ones((n, n), bool))
        refs = [np.where(low, full, cv)]  # the upper triangle stays as it was
        scale_terms = [np.abs(_op(am, tr[0])) @ np.abs(_op(am, tr[0])).T + np.abs(cv)]

        def read(y):
            return [y[: ldc * n].reshape(n, ldc).T[:n]]
    else:  # level 1 on n elements
        a, (av,) = _mat(rng, n, 1, n, dt)
        b, (bv,) = _mat(rng, n, 1, n, dt)
        if op == "axpy":
            cm = b
            refs = [alpha * av + bv]
            scale_terms = [np.abs(alpha * av) + np.abs(bv)]
        elif op == "dot":
            refs = [np.array([[np.sum(av * bv)]])]
            scale_terms = [np.array([[np.sum(np.abs(av * bv))]])]
        elif op == "nrm2":
            refs = [np.array([[np.linalg.norm(av)]])]
            scale_terms = [refs[0]]
        else:
            refs = [np.array([[float(np.argmax(np.abs(a.astype(np.float64))) + 1)]])]
            scale_terms = [np.array([[1.0]])]

        def read(y):
            if op == "iamax":
                return [np.array([[float(y.view(np.int32)[0])]])]
            return [y[: (n if op == "axpy" else 1)].reshape(-1, 1)]
    for name, buf in (("a", a), ("b", b), ("c", cm)):
        if buf is not None:
            buf.tofile(work / f"{name}.bin")
    args = [str(ZMLIR), "run", "--", str(exe), op, t, str(work), str(m), str(n), str(k), tr[0],
            tr[1], str(lda), str(ldb), str(ldc), str(batch), str(sa), str(sb), str(sc)]
    start = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": round(time.time() - start, 1)}
    secs = round(time.time() - start, 1)
    if p.returncode != 0:
        return {"status": "error", "seconds": secs,
                "detail": (p.stdout + p.stderr).strip().splitlines()[-3:]}
    odt = np.float32 if t in ("h", "bf", "tf") and op.startswith("gemm") else dt
    if op == "iamax":
        odt = np.int32
    outs = read(np.fromfile(work / "out.bin", odt).view(odt) if op != "iamax"
                else np.fromfile(work / "out.bin", np.uint8))
    # Tolerance relative to sum |a||b| (the rounding error's scale): fp16 and
    # bf16 inputs are exact in float32, their products are summed in float32.
    eps = {"s": 1e-5, "c": 1e-5, "h": 1e-5, "bf": 1e-5, "tf": 2e-3, "d": 1e-13, "z": 1e-13}[t]
    depth = max(k, m, n, 1)
    tol = eps * max(1.0, np.sqrt(depth))
    bad = 0
    worst = 0.0
    first = None
    for i, (y, ref, sc_) in enumerate(zip(outs, refs, scale_terms, strict=True)):
        err = np.abs(y - ref) / np.maximum(np.abs(sc_) * (abs(alpha) if op != "trsm" else 1), 1e-30)
        if op == "iamax":
            err = np.abs(y - ref)
            tol = 0.5
        worst = max(worst, float(err.max()))
        idx = np.argwhere(err > tol)
        if len(idx) and first is None:
            first = [i, *idx[0].tolist()]
        bad += len(idx)
    r = {"status": "ok" if bad == 0 else "WRONG", "seconds": secs, "max_rel_err": worst,
         "bad": bad, "of": int(sum(o.size for o in refs))}
    if first is not None:
        r["first_bad"] = first
    return r


def fft16_run(c: dict, exe: Path, work: Path, timeout: int) -> dict:
    """Half and bfloat16 transforms (cufftXtMakePlanMany), out of place."""
    t, dims, batch = c["type"], c["dims"], c["batch"]
    kind = t[3:]
    rng = np.random.default_rng(zlib.crc32(fft_name(c).encode()))
    axes = tuple(range(1, len(dims) + 1))
    n_total = int(np.prod(dims))
    if t.startswith("r2c"):
        bits, x = to16(rng.standard_normal((batch, *dims)), kind)
        ref = np.fft.rfftn(x, axes=axes)
    elif t.startswith("c2r"):
        h = np.fft.rfftn(rng.standard_normal((batch, *dims)), axes=axes) / np.sqrt(n_total)
        bits, h = to16(h, kind)
        # The real signal those rounded (Hermitian) values stand for.
        ref = np.fft.irfftn(h, s=dims, axes=axes) * n_total
    else:
        z = rng.standard_normal((batch, *dims)) + 1j * rng.standard_normal((batch, *dims))
        bits, z = to16(z, kind)
        ref = np.fft.fftn(z, axes=axes)
    inp, out = work / "in.bin", work / "out.bin"
    bits.tofile(inp)
    direction = "1" if t.startswith("c2r") else "-1"  # C2R: CUFFT_INVERSE
    args = [str(ZMLIR), "run", "--", str(exe), t, str(inp), str(out), direction, "0", str(batch),
            str(len(dims)), *map(str, dims)]
    start = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": round(time.time() - start, 1)}
    secs = round(time.time() - start, 1)
    if p.returncode != 0:
        return {"status": "error", "seconds": secs,
                "detail": (p.stdout + p.stderr).strip().splitlines()[-3:]}
    y = from16(np.fromfile(out, np.uint16), kind)
    if not t.startswith("c2r"):
        y = y.view(np.complex128)
    y = y[: ref.size].reshape(ref.shape)
    # Rounding to 11 (half) or 8 (bfloat16) bits at each of log2(n) stages.
    eps = 2.0 ** -11 if kind == "16" else 2.0 ** -8
    tol = 4 * eps * max(1.0, np.log2(n_total))
    scale = np.abs(ref).reshape(batch, -1).max(axis=1).reshape(batch, *[1] * len(dims))
    err = np.abs(y - ref) / scale
    bad = np.argwhere(err > tol)
    r = {"status": "ok" if len(bad) == 0 else "WRONG", "seconds": secs,
         "max_rel_err": float(err.max()), "bad": len(bad), "of": int(ref.size)}
    if len(bad):
        r["bad_batches"] = len(np.unique(bad[:, 0]))
        r["first_bad"] = bad[0].tolist()
    return r


# ------------------------------------------------------------------- driver


def load() -> dict:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {}


def table(results: dict) -> str:
    """The markdown summary: counts per library, operation and type, then
    every case that was not ok."""
    groups: dict[tuple, dict] = {}
    for r in results.values():
        if r["lib"] == "fft":
            kind = "1-D" if len(r["dims"]) == 1 else f"{len(r['dims'])}-D"
            if r.get("stride"):
                kind += " strided"
            if r.get("inplace"):
                kind += " in place"
            key = ("cuFFT", r["type"], kind)
        else:
            key = ("cuBLAS", r["op"], r["type"])
        g = groups.setdefault(key, {"ok": 0, "WRONG": 0, "error": 0, "timeout": 0,
                                    "harness-error": 0, "worst": 0.0})
        g[r["status"]] += 1
        if r["status"] == "ok":
            g["worst"] = max(g["worst"], r.get("max_rel_err", 0.0))
    lines = ["| library | operation | type / layout | ok | wrong | error | timeout | worst ok error |",
             "|---|---|---|---|---|---|---|---|"]
    for key in sorted(groups):
        g = groups[key]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {g['ok']} | {g['WRONG']} | "
                     f"{g['error'] + g['harness-error']} | {g['timeout']} | {g['worst']:.2g} |")
    lines += ["", "Cases not ok:", ""]
    lines += [f"- `{name}`: {r['status']}"
              + (f" {r['bad']} of {r['of']}" if r.get("bad") else "")
              + (f" ({'; '.join(r['detail']) if isinstance(r['detail'], list) else r['detail']})"
                 if r.get("detail") else "")
              for name, r in results.items() if r["status"] != "ok"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["fft", "blas"])
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--redo", action="store_true", help="run cases already in the results")
    ap.add_argument("--table", action="store_true", help="print the results' markdown table")
    ap.add_argument("--compute-capability", metavar="X.Y",
                    help="an experiment: the driver reports this capability (a sitecustomize "
                         "that sets zmlir.runtime.cuda.constants.COMPUTE_CAPABILITY)")
    a = ap.parse_args()
    if a.compute_capability:
        site = BUILD / "cc"
        site.mkdir(parents=True, exist_ok=True)
        (site / "sitecustomize.py").write_text(
            "import zmlir.runtime.cuda.constants as c\n"
            f"c.COMPUTE_CAPABILITY = {tuple(map(int, a.compute_capability.split('.')))}\n")
        os.environ["PYTHONPATH"] = str(site)
    if a.table:
        print(table(load()), end="")
        return 0
    cases = []
    if a.only in (None, "fft"):
        exe = build("nvidia_fft_check", "libcufft.so.12")
        cases += [(fft_name(c), c, exe, fft_run) for c in fft_cases()]
    if a.only in (None, "blas"):
        exe = build("nvidia_blas_check", "libcublas.so.13")
        cases += [(blas_name(c), {"lib": "blas", **c}, exe, blas_run) for c in blas_cases()]
    results = load()
    todo = [c for c in cases if a.filter in c[0] and (a.redo or c[0] not in results)]
    print(f"{len(todo)} cases to run", flush=True)

    def one(item):
        name, c, exe, fn = item
        with tempfile.TemporaryDirectory(dir="/tmp") as d:
            try:
                return name, c, fn(c, exe, Path(d), a.timeout)
            except Exception as err:
                return name, c, {"status": "harness-error", "seconds": 0, "detail": repr(err)}

    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for name, c, r in pool.map(one, todo):
            results = load()
            results[name] = {**{k: v for k, v in c.items() if k != "lib"}, "lib": c["lib"], **r}
            RESULTS.write_text(json.dumps(results, indent=1) + "\n")
            print(f"{name:40} {r['status']:8} {r.get('max_rel_err', '')!s:24} {r['seconds']}s"
                  + (f" bad {r['bad']}/{r['of']}" if r.get("bad") else "")
                  + (f" {r.get('detail')}" if r.get("detail") else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
