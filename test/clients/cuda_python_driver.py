"""cuda.bindings' driver API under `zmlir run`: NVRTC compiles CUDA C++ to
PTX, cuModuleLoadData loads it, cuLaunchKernel runs it, cuMemcpy* move the
data, cuPointerGetAttributes describes device and host pointers; then the
runtime API (cuda.bindings.runtime, its own static cudart) on the same
device. Prints one checked line per result."""

from __future__ import annotations

from typing import Any

import numpy as np
from cuda.bindings import driver as cu
from cuda.bindings import nvrtc
from cuda.bindings import runtime as rt


def check(result: tuple[Any, ...]) -> Any:
    err, *rest = result
    if isinstance(err, cu.CUresult) and err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{err!r}: {cu.cuGetErrorName(err)[1]}")
    if isinstance(err, nvrtc.nvrtcResult) and err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(repr(err))
    if isinstance(err, rt.cudaError_t) and err != rt.cudaError_t.cudaSuccess:
        raise RuntimeError(repr(err))
    return rest[0] if len(rest) == 1 else rest


SRC = b"""
extern "C" __global__ void scale(const double *x, double *y, double a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
"""

check(cu.cuInit(0))
dev = check(cu.cuDeviceGet(0))
attr = cu.CUdevice_attribute
major = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
minor = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
check(cu.cuCtxSetCurrent(ctx))

prog = check(nvrtc.nvrtcCreateProgram(SRC, b"scale.cu", 0, [], []))
check(nvrtc.nvrtcCompileProgram(prog, 1, [f"--gpu-architecture=compute_{major}{minor}".encode()]))
ptx = b" " * check(nvrtc.nvrtcGetPTXSize(prog))
check(nvrtc.nvrtcGetPTX(prog, ptx))
module = check(cu.cuModuleLoadData(ptx))
kernel = check(cu.cuModuleGetFunction(module, b"scale"))

n = 3000
x = np.linspace(-1.0, 1.0, n)
y = np.zeros(n)
dx = check(cu.cuMemAlloc(x.nbytes))
dy = check(cu.cuMemAlloc(y.nbytes))
check(cu.cuMemcpyHtoD(dx, x.ctypes.data, x.nbytes))
check(cu.cuMemsetD8(dy, 0xFF, y.nbytes))
stream = check(cu.cuStreamCreate(0))
args = (np.array([int(dx)], dtype=np.uint64), np.array([int(dy)], dtype=np.uint64),
        np.array([3.0]), np.array([n], dtype=np.int32))
params = np.array([a.ctypes.data for a in args], dtype=np.uint64)
check(cu.cuLaunchKernel(kernel, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, params.ctypes.data,
                        0))
check(cu.cuStreamSynchronize(stream))
dz = check(cu.cuMemAlloc(y.nbytes))
check(cu.cuMemcpy(dz, dy, y.nbytes))
check(cu.cuMemcpyDtoH(y.ctypes.data, dz, y.nbytes))
print("scale", np.array_equal(y, 3.0 * x), flush=True)

pa = cu.CUpointer_attribute
attrs = [pa.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pa.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
         pa.CU_POINTER_ATTRIBUTE_IS_MANAGED, pa.CU_POINTER_ATTRIBUTE_RANGE_SIZE,
         pa.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR]
kind, ordinal, managed, size, start = check(cu.cuPointerGetAttributes(len(attrs), attrs,
                                                                      int(dy) + 8))
print("device pointer", kind, ordinal, bool(managed), size, int(start) == int(dy), flush=True)
host = check(cu.cuMemAllocHost(64))
print("host pointer", check(cu.cuPointerGetAttributes(1, attrs[:1], host))[0], flush=True)

for p in (dx, dy, dz):
    check(cu.cuMemFree(p))
check(cu.cuMemFreeHost(host))
check(cu.cuStreamDestroy(stream))
check(cu.cuModuleUnload(module))

# The runtime API: cuda.bindings' own cudart, on the primary context.
print("runtime devices", check(rt.cudaGetDeviceCount()), flush=True)
buffer = check(rt.cudaMalloc(x.nbytes))
check(rt.cudaMemcpy(buffer, x.ctypes.data, x.nbytes, rt.cudaMemcpyKind.cudaMemcpyHostToDevice))
back = np.empty_like(x)
check(rt.cudaMemcpy(back.ctypes.data, buffer, x.nbytes, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost))
check(rt.cudaDeviceSynchronize())
check(rt.cudaFree(buffer))
print("runtime round trip", np.array_equal(back, x), flush=True)
check(cu.cuDevicePrimaryCtxRelease(dev))
print("done", flush=True)
