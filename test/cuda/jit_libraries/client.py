"""A client of NVIDIA's JIT libraries as cuda.bindings is one: it loads the
library with dlopen (ctypes) and looks its functions up on that handle, asks
for a cubin for the device's architecture, loads it with cuModuleLoadData and
runs it. `client.py nvrtc|nvjitlink LIBRARY`; prints PASS.

nvrtc: NVRTC compiles a kernel for sm_XX. nvjitlink: nvJitLink links two PTX
units (a kernel calling a function of the other) into a cubin, with a register
ceiling (-maxrregcount) the kernel's NUM_REGS then keeps to."""

import ctypes
import sys
from pathlib import Path

KERNEL_PTX = b"""
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) twice(.param .b32 x);
.visible .entry fill(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x;
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1; call.uni (b), twice, (a);
    ld.param.b32 %r2, [b]; }
  add.s32 %r3, %r2, 1;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r3;
  ret;
}
"""
LIBRARY_PTX = b"""
.version 8.0
.target sm_80
.address_size 64
.visible .func (.param .b32 r) twice(.param .b32 x)
{
  .reg .b32 %v<3>;
  ld.param.b32 %v1, [x]; shl.b32 %v2, %v1, 1; st.param.b32 [r], %v2; ret;
}
"""
MAX_REGISTERS = 24  # below the driver's NUM_REGS without a ceiling (32)
SOURCE = b'extern "C" __global__ void fill(int *out) { out[threadIdx.x] = 2 * threadIdx.x + 1; }'

cuda = ctypes.CDLL("libcuda.so.1")


def check(result: int, what: str) -> None:
    if result != 0:
        print(f"{what} failed: {result}")
        sys.exit(1)


def nvrtc_cubin(path: str, arch: str) -> bytes:
    # NVRTC 13.0 from the wheel finds its builtins only if they are loaded
    # (cuda.pathfinder does the same).
    for builtins in sorted(Path(path).parent.glob("libnvrtc-builtins.so.*")):
        ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
        break
    nvrtc = ctypes.CDLL(path)
    prog = ctypes.c_void_p()
    check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), SOURCE, b"fill.cu", 0, None, None),
          "nvrtcCreateProgram")
    options = (ctypes.c_char_p * 1)(f"--gpu-architecture={arch}".encode())
    check(nvrtc.nvrtcCompileProgram(prog, 1, options), "nvrtcCompileProgram")
    size = ctypes.c_size_t()
    check(nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
    image = ctypes.create_string_buffer(size.value)
    check(nvrtc.nvrtcGetCUBIN(prog, image), "nvrtcGetCUBIN")
    return image.raw


def nvjitlink_cubin(path: str, arch: str) -> bytes:
    jitlink = ctypes.CDLL(path)
    handle = ctypes.c_void_p()
    options = (ctypes.c_char_p * 2)(f"-arch={arch}".encode(),
                                    f"-maxrregcount={MAX_REGISTERS}".encode())
    check(jitlink.nvJitLinkCreate(ctypes.byref(handle), 2, options), "nvJitLinkCreate")
    for text, name in ((KERNEL_PTX, b"kernel.ptx"), (LIBRARY_PTX, b"library.ptx")):
        check(jitlink.nvJitLinkAddData(handle, 2, text, len(text), name), "nvJitLinkAddData")
    check(jitlink.nvJitLinkComplete(handle), "nvJitLinkComplete")
    size = ctypes.c_size_t()
    check(jitlink.nvJitLinkGetLinkedCubinSize(handle, ctypes.byref(size)),
          "nvJitLinkGetLinkedCubinSize")
    image = ctypes.create_string_buffer(size.value)
    check(jitlink.nvJitLinkGetLinkedCubin(handle, image), "nvJitLinkGetLinkedCubin")
    check(jitlink.nvJitLinkDestroy(ctypes.byref(handle)), "nvJitLinkDestroy")
    return image.raw


def main() -> None:
    mode, path = sys.argv[1], sys.argv[2]
    check(cuda.cuInit(0), "cuInit")
    dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev), "cuDeviceGetAttribute")
    check(cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev), "cuDeviceGetAttribute")
    ctx = ctypes.c_void_p()
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    arch = f"sm_{major.value}{minor.value}"
    image = nvrtc_cubin(path, arch) if mode == "nvrtc" else nvjitlink_cubin(path, arch)
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(function), module, b"fill"), "cuModuleGetFunction")
    if mode == "nvjitlink":
        registers = ctypes.c_int()
        check(cuda.cuFuncGetAttribute(ctypes.byref(registers), 4, function), "cuFuncGetAttribute")
        if registers.value > MAX_REGISTERS:
            sys.exit(f"NUM_REGS {registers.value} above -maxrregcount={MAX_REGISTERS}")
    n = 64
    out = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(out), n * 4), "cuMemAlloc")
    args = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(out), ctypes.c_void_p))
    check(cuda.cuLaunchKernel(function, 1, 1, 1, n, 1, 1, 0, None, args, None), "cuLaunchKernel")
    host = (ctypes.c_int * n)()
    check(cuda.cuMemcpyDtoH_v2(host, out, n * 4), "cuMemcpyDtoH")
    bad = [(i, host[i]) for i in range(n) if host[i] != 2 * i + 1]
    print("PASS" if not bad else f"FAIL {bad[:4]}", flush=True)


main()
