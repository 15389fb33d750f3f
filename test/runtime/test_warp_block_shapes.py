"""A kernel whose warps are sub-groups in a block its warps are not rows of
(more than one row, a width no multiple of 32). One that reads %tid or
%ntid in y or z runs it as a one-dimensional work-group with CUDA's ids
(test/cuda/programs/warp_block_shapes.cu checks the results); one that reads
x alone has no such form and the driver refuses the launch, loudly: through
our libcuda.so.1, the fast path and the Python path alike, the answer is
CUDA_ERROR_NOT_SUPPORTED and the log says why, where a launch in rows would
give wrong lanes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_DRIVER = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    # out[tid.x] = the value of lane 16, after a shuffle: threadIdx.x alone.
    PTX = b'''.version 7.0
    .target sm_75
    .address_size 64
    .visible .entry k(.param .u64 p) {
      .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .pred %q;
      ld.param.u64 %rd1, [p];
      mov.u32 %r1, %tid.x;
      shfl.sync.idx.b32 %r2|%q, %r1, 16, 31, -1;
      mul.wide.u32 %rd2, %r1, 4;
      add.s64 %rd3, %rd1, %rd2;
      st.global.u32 [%rd3], %r2;
      ret; }'''
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 4 * 64) == 0
    params = (ctypes.c_void_p * 1)(ctypes.addressof(d))
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"k") == 0
    r = {}
    for block in ((32, 1, 1), (64, 2, 1), (16, 2, 1), (16, 2, 1), (8, 1, 4)):
        r.setdefault(str(block), []).append(
            lib.cuLaunchKernel(f, 1, 1, 1, *block, 0, None, params, None))
    r["sync"] = lib.cuCtxSynchronize()
    print(json.dumps(r))
""")


def test_a_kernel_reading_x_alone_is_refused_blocks_of_rows(libdir: str) -> None:
    result = subprocess.run([sys.executable, "-c", _DRIVER, libdir], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["(32, 1, 1)"] == [0] and r["(64, 2, 1)"] == [0] and r["sync"] == 0
    # CUDA_ERROR_NOT_SUPPORTED, every time (a second launch takes the fast path).
    assert r["(16, 2, 1)"] == [801, 801] and r["(8, 1, 4)"] == [801]
    assert "unsupported CUDA driver API: cuLaunchKernel" in result.stderr
    assert "reads threadIdx.x alone" in result.stderr
