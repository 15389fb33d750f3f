"""add/sub/min/max on .u16x2/.s16x2 (two 16-bit lanes of a 32-bit register,
PTX ISA 8.0; CCCL's reductions use them, as in CuPy's CUB module) give the
lane-wise results numpy computes. Prints PASS."""
import ctypes

import numpy as np
from cuda_driver import primary_context

OPS = ["min.s16x2", "min.u16x2", "max.s16x2", "max.u16x2", "add.s16x2", "add.u16x2",
       "sub.s16x2", "sub.u16x2", "min.relu.s16x2", "max.relu.s16x2"]
BODY = "\n".join(f"  {op} %r3, %r1, %r2; st.global.u32 [%rd4+{4 * k}], %r3;"
                 for k, op in enumerate(OPS))
PTX = f"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry packed(.param .u64 out, .param .u64 a, .param .u64 b)
{{
  .reg .b32 %r<5>; .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [a]; ld.param.u64 %rd3, [b];
  mov.u32 %r4, %tid.x;
  mul.wide.u32 %rd5, %r4, 4; add.s64 %rd6, %rd2, %rd5; add.s64 %rd7, %rd3, %rd5;
  ld.global.u32 %r1, [%rd6]; ld.global.u32 %r2, [%rd7];
  mul.wide.u32 %rd8, %r4, {4 * len(OPS)}; add.s64 %rd4, %rd1, %rd8;
{BODY}
  ret;
}}
""".encode()


def lanes(x: np.ndarray, signed: bool) -> np.ndarray:
    return x.view(np.int16 if signed else np.uint16).reshape(-1, 2).astype(np.int64)


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    columns = []
    for op in OPS:
        name, *mods = op.split(".")
        signed = mods[-1] == "s16x2"
        x, y = lanes(a, signed), lanes(b, signed)
        r = {"min": np.minimum, "max": np.maximum, "add": np.add, "sub": np.subtract}[name](x, y)
        if "relu" in mods:
            r = np.maximum(r, 0)
        columns.append((r & 0xFFFF).astype(np.uint16).reshape(-1).view(np.uint32))
    return np.stack(columns, axis=1)


n = 256
rng = np.random.default_rng(7)
edges = np.array([0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x8001, 0x7FFE], np.uint32)
a = rng.integers(0, 2**32, n, dtype=np.uint32)
b = rng.integers(0, 2**32, n, dtype=np.uint32)
a[:49] = (edges[:, None] | (edges[None, :] << 16)).reshape(-1)
b[:49] = (edges[None, :] | (edges[:, None] << 16)).reshape(-1)

cuda = primary_context()
module, fn = ctypes.c_void_p(), ctypes.c_void_p()
assert cuda.cuModuleLoadData(ctypes.byref(module), PTX) == 0
assert cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"packed") == 0
out = np.zeros((n, len(OPS)), np.uint32)
pointers = [ctypes.c_uint64() for _ in range(3)]
for p, host in zip(pointers, (out, a, b), strict=True):
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), host.nbytes) == 0
    assert cuda.cuMemcpyHtoD_v2(p, host.ctypes.data_as(ctypes.c_void_p), host.nbytes) == 0
args = (ctypes.c_void_p * 3)(*[ctypes.cast(ctypes.byref(p), ctypes.c_void_p) for p in pointers])
assert cuda.cuLaunchKernel(fn, 1, 1, 1, n, 1, 1, 0, None, args, None) == 0
assert cuda.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), pointers[0], out.nbytes) == 0
want = expected(a, b)
for k, op in enumerate(OPS):
    bad = np.nonzero(out[:, k] != want[:, k])[0]
    assert bad.size == 0, f"{op}: {a[bad[0]]:#x}, {b[bad[0]]:#x} -> {out[bad[0], k]:#x}, " \
                          f"want {want[bad[0], k]:#x}"
print("PASS", flush=True)
