"""pycuda's curandom under `zmlir run`: the XORWOW generator (cuRAND's
device code, curand_kernel.h, compiled through SourceModule; not cuRAND's
host library) and the MD5-based `rand`. Generator 0's sequence (subsequence
0 needs no skip-ahead) is checked value for value against XORWOW computed
here; the rest by their statistics."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

# curand_kernel.h from the nvidia-curand wheel (a toolkit may lack cuRAND).
import nvidia.cu13

_include = Path(next(iter(nvidia.cu13.__path__))) / "include"
os.environ.setdefault("PYCUDA_DEFAULT_NVCC_FLAGS", f"-I{_include}")

import pycuda.autoinit  # noqa: E402,F401
import pycuda.gpuarray as gpuarray  # noqa: E402
from pycuda import curandom  # noqa: E402

SEED = 1234567


def check(step: str, ok: bool, detail: object = "") -> None:
    print(f"{step}: {'ok' if ok else 'FAIL'} {detail}".rstrip(), flush=True)


def xorwow(seed: int, count: int) -> np.ndarray:
    """curand_init(seed, 0, 0) then `count` curand() calls (curand_kernel.h)."""
    m = 0xFFFFFFFF
    t0 = (1099087573 * ((seed & m) ^ 0xAAD26B49)) & m
    t1 = (2591861531 * ((seed >> 32) ^ 0xF7DCEFDD)) & m
    d = (6615241 + t1 + t0) & m
    v = [(123456789 + t0) & m, 362436069 ^ t0, (521288629 + t1) & m, 88675123 ^ t1,
         (5783321 + t0) & m]
    out = []
    for _ in range(count):
        t = v[0] ^ (v[0] >> 2)
        v = [v[1], v[2], v[3], v[4], (v[4] ^ ((v[4] << 4) & m)) ^ (t ^ ((t << 1) & m))]
        d = (d + 362437) & m
        out.append((v[4] + d) & m)
    return np.array(out, np.uint32)


check("curand_version", curandom.get_curand_version() >= (3, 2, 0),
      curandom.get_curand_version())


def seeds(n: int) -> gpuarray.GPUArray:
    return gpuarray.to_gpu(np.arange(SEED, SEED + n, dtype=np.int32))


gen = curandom.XORWOWRandomNumberGenerator(seed_getter=seeds)
generators = gen.block_count * gen.generators_per_block
raw = gen.gen_uniform((4 * generators,), np.uint32).get()
want = xorwow(SEED, 4)
check("xorwow_generator0", np.array_equal(raw[::generators], want),
      f"{raw[::generators].tolist()} vs {want.tolist()} ({generators} generators)")
distinct = len(np.unique(raw[:generators]))
check("xorwow_distinct", distinct > 0.999 * generators, f"{distinct}/{generators}")

u = gen.gen_uniform((200000,), np.float32).get()
check("xorwow_uniform", u.min() > 0 and u.max() <= 1 and abs(u.mean() - 0.5) < 0.01
      and abs(u.var() - 1 / 12) < 0.005, f"mean {u.mean():.4f} var {u.var():.4f}")
n = gen.gen_normal((200000,), np.float32).get()
check("xorwow_normal", abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01,
      f"mean {n.mean():.4f} std {n.std():.4f}")
ln = gen.gen_log_normal((200000,), np.float32, 0.0, 0.5).get()
check("xorwow_log_normal", ln.min() > 0 and abs(np.log(ln).mean()) < 0.01
      and abs(np.log(ln).std() - 0.5) < 0.01)
ud = gen.gen_uniform((100000,), np.float64).get()
check("xorwow_uniform_double", ud.min() > 0 and ud.max() <= 1 and abs(ud.mean() - 0.5) < 0.01)

r = curandom.rand((100000,)).get()
check("md5_rand", r.dtype == np.float32 and r.min() >= 0 and r.max() <= 1
      and abs(r.mean() - 0.5) < 0.01, f"mean {r.mean():.4f}")
