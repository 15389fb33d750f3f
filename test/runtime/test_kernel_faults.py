"""A kernel's wild access on the CPU backend (runtime/cuda/faults.c): NVIDIA's
driver answers CUDA_ERROR_ILLEGAL_ADDRESS (700) from the next synchronising
call and the process lives on. A wild address lands on nothing, or on a page
mapped without access (a library's padding between its segments, a thread's
stack guard): NVIDIA's cuBLAS, given a matrix smaller than its arguments
said, read into libtbb's padding and Intel's crash handler killed the
process. A write to the host's read-only memory must leave it as it was;
a non-canonical address (a garbage pointer) has no page at all."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# The probes' start on our libcuda.so.1 (`lib`): a context current and the
# kernel KERNEL of PTX loaded (`fn`).
_LOAD_KERNEL = textwrap.dedent("""
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"KERNEL") == 0
""")

_WILD = textwrap.dedent("""
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
      ACCESS
      ret;
    }
    \\0'''
    ACCESS = {"read": b"ld.global.u32 %r2, [%rd4]; add.s64 %rd5, %rd2, %rd3; "
                      b"st.global.u32 [%rd5], %r2;",
              "write": b"add.u32 %r2, %r1, 7; st.global.u32 [%rd4], %r2;"}
    PTX = PTX.replace(b"ACCESS", ACCESS[sys.argv[3]])
""") + _LOAD_KERNEL.replace("KERNEL", "wild") + textwrap.dedent("""
    out = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(out), 4 * 64) == 0
    # An inaccessible page of the process's (mmap's PROT_NONE), as a library's
    # padding is; kept mapped, so that the fault is an access error.
    libc = ctypes.CDLL(None)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    PROT_NONE, PROT_READ, MAP_PRIVATE, MAP_ANONYMOUS = 0, 1, 0x02, 0x20
    protection = PROT_READ if sys.argv[2] == "read-only" else PROT_NONE
    page = libc.mmap(None, mmap.PAGESIZE, protection, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    target = {"inaccessible": page, "read-only": page, "unmapped": page - (1 << 40),
              "non-canonical": 0x8000_0000_0000_0000}[sys.argv[2]]
    values = [ctypes.c_uint64(target), ctypes.c_uint64(out.value)]
    params = (ctypes.c_void_p * 2)(*[ctypes.addressof(v) for v in values])
    launch = lib.cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None, params, None)
    sync = lib.cuCtxSynchronize()
    again = lib.cuMemAlloc_v2(ctypes.byref(out), 4)
    unchanged = protection == PROT_NONE or ctypes.string_at(page, mmap.PAGESIZE).count(0) == \
        mmap.PAGESIZE
    print(launch, sync, again, unchanged)
""")


@pytest.mark.parametrize("where, access", [
    ("inaccessible", "read"), ("unmapped", "read"), ("read-only", "write"),
    ("non-canonical", "read"), ("non-canonical", "write")])
def test_a_wild_access_is_illegal_address(libdir: str, where: str, access: str) -> None:
    result = subprocess.run([sys.executable, "-c", _WILD, libdir, where, access],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # The launch succeeds; the synchronisation and every call after answer
    # 700; a read-only page keeps its zeros.
    assert result.stdout.split() == ["0", "700", "700", "True"], result.stdout + result.stderr
    assert "illegally" in result.stderr, result.stderr


# A host that crashes after cuInit and a launch: its own failed assert
# (abort) or bad pointer (a read of address 0).
_HOST_CRASH = textwrap.dedent("""
    import ctypes, os, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    PTX = b'''.version 8.0
    .target sm_80
    .address_size 64
    .visible .entry k(.param .u64 out)
    {
      .reg .b64 %rd<3>;
      ld.param.u64 %rd1, [out];
      cvta.to.global.u64 %rd2, %rd1;
      st.global.u32 [%rd2], 7;
      ret;
    }
    \\0'''
""") + _LOAD_KERNEL.replace("KERNEL", "k") + textwrap.dedent("""
    out = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(out), 4) == 0
    value = ctypes.c_uint64(out.value)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(value))
    assert lib.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, params, None) == 0
    assert lib.cuCtxSynchronize() == 0
    print("crashing", flush=True)
    os.abort() if sys.argv[2] == "abort" else ctypes.string_at(0)
""")


@pytest.mark.parametrize("crash, signal_number", [("abort", 6), ("null read", 11)])
def test_a_host_crash_keeps_the_hosts_handlers(libdir: str, crash: str,
                                               signal_number: int) -> None:
    # Intel's OpenCL runtime installs LLVM's crash handler as it opens: a
    # CUDA program's own failed assert printed "PLEASE submit a bug report
    # to https://software.intel.com...". cuInit keeps the host's handlers
    # (here Python's faulthandler, which names the signal).
    result = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _HOST_CRASH, libdir,
                             crash], capture_output=True, text=True, timeout=300)
    assert result.stdout == "crashing\n", result.stdout + result.stderr
    assert result.returncode == -signal_number, result.stderr
    assert "PLEASE submit a bug report" not in result.stderr
    name = "Aborted" if crash == "abort" else "Segmentation fault"
    assert f"Fatal Python error: {name}" in result.stderr, result.stderr
