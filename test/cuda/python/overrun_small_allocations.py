"""A kernel that writes a little past small allocations' ends (as numba's
test_dispatcher_cpointer_arguments does): harmless on NVIDIA's driver, whose
memory comes in granules; the process must go on. Prints PASS."""
import ctypes

from cuda_driver import primary_context

PTX = b"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry over(.param .u64 out)
{
  .reg .b32 %r<2>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r1;
  ret;
}
"""
cuda = primary_context()
module, fn = ctypes.c_void_p(), ctypes.c_void_p()
assert cuda.cuModuleLoadData(ctypes.byref(module), PTX) == 0
assert cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"over") == 0
for _round in range(20):
    pointers = []
    for _ in range(50):
        p = ctypes.c_uint64()
        assert cuda.cuMemAlloc_v2(ctypes.byref(p), 40) == 0
        pointers.append(p)
        args = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(p), ctypes.c_void_p))
        assert cuda.cuLaunchKernel(fn, 1, 1, 1, 16, 1, 1, 0, None, args, None) == 0
    assert cuda.cuCtxSynchronize() == 0
    for p in pointers:
        assert cuda.cuMemFree_v2(p) == 0
print("PASS", flush=True)
