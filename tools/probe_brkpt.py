"""What NVIDIA's driver does with PTX `brkpt` when no debugger is attached.

  python3 tools/probe_brkpt.py [OUT.json]
      (a machine with an NVIDIA GPU; ctypes on libcuda.so.1, nothing of zmlir) runs each
      scenario below in a fresh process (a failed launch may leave its context unusable)
      and prints, or writes to OUT.json, what each driver call returned: the launch, the
      synchronisation after it, a copy back of what the kernel stored before and after the
      instruction, and whether a later call on the context still fails (a sticky error).

Scenarios: `brkpt` executed by every thread, by one thread of a block, not executed (under
a false predicate), and `trap` for comparison. zmlir lowers `brkpt` the way the measured
result says (TargetInfo::emitBreakpoint).
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
\t.reg .b64 %rd<4>;
\t.reg .b32 %r<4>;
\t.reg .pred %p<2>;
\tld.param.u64 %rd0, [out];
\tmov.u32 %r0, %tid.x;
\tmul.wide.u32 %rd1, %r0, 8;
\tadd.s64 %rd0, %rd0, %rd1;
\tst.global.u32 [%rd0], 1;
\tmembar.sys;
\tsetp.{cmp}.u32 %p0, %r0, 0;
\t@%p0 {inst};
\tst.global.u32 [%rd0+4], 2;
\tret;
}}
"""
SCENARIOS = {
    "brkpt_all": ("brkpt", "ge"),  # every thread
    "brkpt_one": ("brkpt", "eq"),  # thread 0 only
    "brkpt_none": ("brkpt", "gt"),  # ... under a predicate false for thread 0: a block of one
    "trap_all": ("trap", "ge"),
}
THREADS = {"brkpt_none": 1}


def _name(lib: ctypes.CDLL, code: int) -> str:
    if code == 0:
        return "CUDA_SUCCESS"
    text = ctypes.c_char_p()
    lib.cuGetErrorName(code, ctypes.byref(text))
    return text.value.decode() if text.value else str(code)


def scenario(name: str) -> dict[str, object]:
    inst, cmp = SCENARIOS[name]
    threads = THREADS.get(name, 64)
    lib = ctypes.CDLL("libcuda.so.1")
    r: dict[str, object] = {"instruction": inst, "threads": threads}
    lib.cuInit(0)
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    lib.cuDeviceGet(ctypes.byref(dev), 0)
    lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    lib.cuCtxSetCurrent(ctx)
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    ptx = KERNEL.format(cmp=cmp, inst=inst).encode() + b"\0"
    r["load"] = _name(lib, lib.cuModuleLoadData(ctypes.byref(module), ptx))
    lib.cuModuleGetFunction(ctypes.byref(func), module, b"k")
    buf = ctypes.c_uint64()
    lib.cuMemAlloc_v2(ctypes.byref(buf), ctypes.c_size_t(8 * threads))
    lib.cuMemsetD8_v2(buf, 0, ctypes.c_size_t(8 * threads))
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(buf), ctypes.c_void_p))
    r["launch"] = _name(lib, lib.cuLaunchKernel(func, 1, 1, 1, threads, 1, 1, 0, None, params,
                                                None))
    r["synchronize"] = _name(lib, lib.cuCtxSynchronize())
    host = (ctypes.c_uint32 * (2 * threads))()
    r["copy_back"] = _name(lib, lib.cuMemcpyDtoH_v2(host, buf, ctypes.c_size_t(8 * threads)))
    r["stored"] = [[host[2 * i], host[2 * i + 1]] for i in range(min(threads, 4))]
    other = ctypes.c_uint64()
    r["later_alloc"] = _name(lib, lib.cuMemAlloc_v2(ctypes.byref(other), ctypes.c_size_t(64)))
    r["later_synchronize"] = _name(lib, lib.cuCtxSynchronize())
    return r


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(scenario(sys.argv[2])))
        return
    results = {}
    for name in SCENARIOS:
        run = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                             text=True, timeout=60)
        try:
            results[name] = json.loads(run.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            results[name] = {"rc": run.returncode, "stdout": run.stdout, "stderr": run.stderr}
    text = json.dumps(results, indent=1)
    print(text)
    if len(sys.argv) == 2:
        with open(sys.argv[1], "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
