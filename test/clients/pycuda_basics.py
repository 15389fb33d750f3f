"""pycuda under `zmlir run`: autoinit, SourceModule (nvcc --cubin), the
launch interfaces (stateless, prepared, legacy cuParamSet*/cuLaunchGrid),
gpuarray, ElementwiseKernel, ReductionKernel and cumath. Prints one line per
step, each checked against numpy; test_pycuda.py reads them."""

from __future__ import annotations

import os
import struct

import numpy as np
import pycuda.autoinit  # noqa: F401  (creates the context)
import pycuda.cumath as cumath
import pycuda.driver as drv
import pycuda.gpuarray as gpuarray
from pycuda.compiler import SourceModule
from pycuda.elementwise import ElementwiseKernel
from pycuda.reduction import ReductionKernel

rng = np.random.default_rng(7)


def check(step: str, ok: bool, detail: object = "") -> None:
    print(f"{step}: {'ok' if ok else 'FAIL'} {detail}".rstrip(), flush=True)


dev = drv.Context.get_device()
check("autoinit", dev.compute_capability() >= (3, 0) and drv.Context.get_current() is not None,
      f"{dev.name()} sm_{''.join(map(str, dev.compute_capability()))}")

# SourceModule: nvcc --cubin, which `zmlir run`'s nvcc answers with PTX.
mod = SourceModule("""
__global__ void multiply_them(float *dest, const float *a, const float *b)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  dest[i] = a[i] * b[i];
}
__global__ void axpb(float *y, float a, int b, int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * y[i] + b;
}
__constant__ float scale[4];
__global__ void scaled(float *y)
{
  y[threadIdx.x] *= scale[threadIdx.x % 4];
}
""")
multiply = mod.get_function("multiply_them")
a = rng.standard_normal(512).astype(np.float32)
b = rng.standard_normal(512).astype(np.float32)
dest = np.zeros_like(a)
multiply(drv.Out(dest), drv.In(a), drv.In(b), block=(128, 1, 1), grid=(4, 1))
check("sourcemodule", np.array_equal(dest, a * b), f"max|d|={np.abs(dest - a * b).max()}")

# prepared_call: the arguments packed by pycuda's own struct code (factors that
# multiply exactly, so that an FMA on the device rounds as numpy does).
axpb = mod.get_function("axpb").prepare("Pfii")
y = gpuarray.to_gpu(a)
axpb.prepared_call((2, 1), (300, 1, 1), y.gpudata, np.float32(0.25), np.int32(-3), np.int32(512))
check("prepared_call", np.array_equal(y.get(), np.float32(0.25) * a - 3))

# The legacy launch API: cuFuncSetBlockShape, cuParamSet*, cuLaunchGrid(Async).
f = mod.get_function("axpb")
y = gpuarray.to_gpu(a)
f._set_block_shape(64, 1, 1)
f._set_shared_size(0)
f._param_setv(0, struct.pack("P", int(y.gpudata)))
f._param_setf(8, 0.5)
f._param_seti(12, 7)
f._param_seti(16, 500)
f._param_set_size(20)
f._launch_grid(8, 1)
expect = a.copy()
expect[:500] = np.float32(0.5) * a[:500] + 7
check("legacy_launch_grid", np.array_equal(y.get(), expect))
stream = drv.Stream()
f._launch_grid_async(8, 1, stream)  # the same parameters again, on a stream
stream.synchronize()
expect[:500] = np.float32(0.5) * expect[:500] + 7
check("legacy_launch_grid_async", np.array_equal(y.get(), expect))

# Module globals: __constant__ through cuModuleGetGlobal.
scale_ptr, scale_size = mod.get_global("scale")
drv.memcpy_htod(scale_ptr, np.array([1, 2, 3, 4], np.float32))
ys = gpuarray.to_gpu(np.ones(32, np.float32))
mod.get_function("scaled")(ys, block=(32, 1, 1))
check("get_global", scale_size == 16 and np.array_equal(ys.get(), np.tile([1, 2, 3, 4], 8)))

# Context.attach / detach: cuCtxAttach and cuCtxDetach on the current context.
ctx = drv.Context.attach()
ok = drv.Context.get_current() == ctx
ctx.detach()
check("context_attach", ok and drv.Context.get_current() is not None)

# Managed memory attached to one stream (cuStreamAttachMemAsync), written by
# the host, updated by a kernel on that stream.
managed = drv.managed_empty(64, np.float32, mem_flags=drv.mem_attach_flags.GLOBAL)
managed[:] = np.arange(64)
stream = drv.Stream()
managed.base.attach(drv.mem_attach_flags.SINGLE, stream)
axpb.prepared_async_call((1, 1), (64, 1, 1), stream, managed.base, np.float32(2),
                         np.int32(1), np.int32(64))
stream.synchronize()
check("managed_attach", np.array_equal(managed, 2 * np.arange(64, dtype=np.float32) + 1))

# gpuarray: arithmetic, reductions, slicing and types (generated kernels).
x_host = rng.standard_normal(10000).astype(np.float32)
x = gpuarray.to_gpu(x_host)
z = (2 * x + 1) * x - x / 4
check("gpuarray_arith", np.allclose(z.get(), (2 * x_host + 1) * x_host - x_host / 4,
                                    rtol=1e-6, atol=1e-6))
check("gpuarray_sum", np.isclose(gpuarray.sum(x).get(), x_host.sum(dtype=np.float64),
                                 rtol=1e-4), float(gpuarray.sum(x).get()))
check("gpuarray_max", gpuarray.max(x).get() == x_host.max() and gpuarray.min(x).get() == x_host.min())
check("gpuarray_dot", np.isclose(gpuarray.dot(x, x).get(), np.dot(x_host.astype(np.float64), x_host),
                                 rtol=1e-4))
ints = gpuarray.arange(0, 1000, 1, dtype=np.int32)
check("gpuarray_int", gpuarray.sum(ints).get() == 499500 and
      np.array_equal((ints[10:20] * 3).get(), np.arange(10, 20) * 3))
check("gpuarray_astype", np.array_equal(x.astype(np.float64).get(), x_host.astype(np.float64)))
pitched = gpuarray.zeros((4, 8), np.uint16)  # rows of 16 bytes, 6 elements of each set
drv.memset_d2d16_async(pitched.gpudata, 16, 0xBEEF, 6, 3, drv.Stream())
want = np.zeros((4, 8), np.uint16)
want[:3, :6] = 0xBEEF
drv.Context.synchronize()
check("memset_d2d16_async", np.array_equal(pitched.get(), want))
filled = gpuarray.zeros(100, np.float64)
filled.fill(3.25)
check("gpuarray_fill", np.all(filled.get() == 3.25))

# ElementwiseKernel
lin_comb = ElementwiseKernel(
    "float a, float *x, float b, float *y, float *z", "z[i] = a*x[i] + b*y[i]", "lin_comb")
xa = gpuarray.to_gpu(a)
yb = gpuarray.to_gpu(b)
zc = gpuarray.empty_like(xa)
lin_comb(np.float32(3), xa, np.float32(-2), yb, zc)
check("elementwise", np.allclose(zc.get(), 3 * a - 2 * b, rtol=1e-6, atol=1e-6))

# ReductionKernel: a dot product in integers (exact) and in floats.
dot_i = ReductionKernel(np.int64, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
                        arguments="const int *x, const int *y")
xi = rng.integers(-1000, 1000, 100003).astype(np.int32)
yi = rng.integers(-1000, 1000, 100003).astype(np.int32)
got = int(dot_i(gpuarray.to_gpu(xi), gpuarray.to_gpu(yi)).get())
check("reduction_int", got == int(np.dot(xi.astype(np.int64), yi)), got)
max_abs = ReductionKernel(np.float32, neutral="0", reduce_expr="fmaxf(a, b)",
                          map_expr="fabsf(x[i])", arguments="const float *x")
check("reduction_float", max_abs(x).get() == np.abs(x_host).max())

# cumath
pos = gpuarray.to_gpu(np.abs(x_host) + 0.5)
results = {
    "sin": (cumath.sin(x).get(), np.sin(x_host)),
    "exp": (cumath.exp(x).get(), np.exp(x_host)),
    "log": (cumath.log(pos).get(), np.log(np.abs(x_host) + 0.5)),
    "sqrt": (cumath.sqrt(pos).get(), np.sqrt(np.abs(x_host) + 0.5)),
    "tanh": (cumath.tanh(x).get(), np.tanh(x_host)),
    "fabs": (cumath.fabs(x).get(), np.abs(x_host)),
}
bad = [name for name, (got_, want) in results.items()
       if not np.allclose(got_, want, rtol=2e-6, atol=1e-6)]
check("cumath", not bad, " ".join(bad))

# DynamicSourceModule: -rdc with NVIDIA's libcudadevrt.a linked through
# cuLink*, which links our stand-in; each block's thread 0 launches a grid
# (CUDA dynamic parallelism) that runs once its parent's grid has ended.
# The toolkit's library folder comes from the test (CUDA_LIBDIR): pycuda
# looks in nvcc's ../lib64 only, which a toolkit may not have.
from pycuda.compiler import DynamicSourceModule  # noqa: E402

dyn = DynamicSourceModule("""
__global__ void child(int *out, int base, double step)
{
  out[base + threadIdx.x] = base * 10 + (int)(threadIdx.x * step);
}
__global__ void parent(int *out)
{
  if (threadIdx.x == 0) child<<<1, 8>>>(out, blockIdx.x * 8, 2.0);
}
""", cuda_libdir=os.environ.get("CUDA_LIBDIR"))
launched = np.full(64, -1, np.int32)
dyn.get_function("parent")(drv.InOut(launched), block=(32, 1, 1), grid=(8, 1))
want = np.array([(i // 8) * 8 * 10 + (i % 8) * 2 for i in range(64)], np.int32)
check("dynamic_parallelism", np.array_equal(launched, want), launched[:10])
