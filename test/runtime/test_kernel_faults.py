"""A kernel's wild read on the CPU backend (runtime/cuda/faults.c): NVIDIA's
driver answers CUDA_ERROR_ILLEGAL_ADDRESS (700) from the next synchronising
call and the process lives on. A wild address lands on nothing, or on a page
mapped without access (a library's padding between its segments, a thread's
stack guard): NVIDIA's cuBLAS, given a matrix smaller than its arguments
said, read into libtbb's padding and Intel's crash handler killed the
process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_READ = textwrap.dedent("""
    import ctypes, mmap, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    PTX = b'''.version 8.0
    .target sm_80
    .address_size 64
    .visible .entry wild(.param .u64 p, .param .u64 out)
    {
      .reg .b32 %r<3>;
      .reg .b64 %rd<6>;
      ld.param.u64 %rd1, [p];
      ld.param.u64 %rd2, [out];
      mov.u32 %r1, %tid.x;
      mul.wide.u32 %rd3, %r1, 4;
      add.s64 %rd4, %rd1, %rd3;
      ld.global.u32 %r2, [%rd4];
      add.s64 %rd5, %rd2, %rd3;
      st.global.u32 [%rd5], %r2;
      ret;
    }
    \\0'''
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"wild") == 0
    out = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(out), 4 * 64) == 0
    # An inaccessible page of the process's (mmap's PROT_NONE), as a library's
    # padding is; kept mapped, so that the fault is an access error.
    libc = ctypes.CDLL(None)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    PROT_NONE, MAP_PRIVATE, MAP_ANONYMOUS = 0, 0x02, 0x20
    page = libc.mmap(None, mmap.PAGESIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    target = page if sys.argv[2] == "inaccessible" else page - (1 << 40)
    values = [ctypes.c_uint64(target), ctypes.c_uint64(out.value)]
    params = (ctypes.c_void_p * 2)(*[ctypes.addressof(v) for v in values])
    launch = lib.cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None, params, None)
    sync = lib.cuCtxSynchronize()
    again = lib.cuMemAlloc_v2(ctypes.byref(out), 4)
    print(launch, sync, again)
""")


@pytest.mark.parametrize("where", ["inaccessible", "unmapped"])
def test_a_wild_read_is_illegal_address(libdir: str, where: str) -> None:
    result = subprocess.run([sys.executable, "-c", _READ, libdir, where], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # The launch succeeds; the synchronisation and every call after answer 700.
    assert result.stdout.split() == ["0", "700", "700"], result.stdout + result.stderr
    assert "unmapped address" in result.stderr or "accessed" in result.stderr, result.stderr
