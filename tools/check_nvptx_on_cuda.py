"""Runs zmlir's NVPTX output of our CUDA test kernels on a real NVIDIA GPU.

  prepare DIR   (any machine with nvcc and zmlir) writes, per test kernel,
                nvcc's PTX and zmlir's NVPTX recompilation of it, plus
                kernels.json with each kernel's shared-memory window size.
  run DIR [OUT] (a machine with the CUDA driver) loads both through the real
                driver (ctypes on libcuda.so.1), runs every size of every case
                and compares with the numpy references; writes OUT/results.json.
"""

from __future__ import annotations

import ctypes
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test"))

from support.cuda_cases import CASES, Buffer, Launch  # noqa: E402

ARCH = "sm_90"


def prepare(out: Path) -> None:
    import subprocess

    import zmlir

    out.mkdir(parents=True, exist_ok=True)
    meta = {}
    for case in CASES.values():
        nvcc_ptx = out / f"{case.name}.nvcc.ptx"
        subprocess.run(["nvcc", "-ptx", f"-arch={ARCH}", str(case.source), "-o", str(nvcc_ptx)],
                       check=True)
        module = zmlir.compile_module(nvcc_ptx.read_text(), f"nvptx:{ARCH}",
                                      filename=nvcc_ptx.name)
        (out / f"{case.name}.zmlir.ptx").write_bytes(module.binary)
        meta[case.name] = {"kernel": case.kernel,
                           "static_shared_bytes": module.kernels[case.kernel].static_shared_bytes}
    (out / "kernels.json").write_text(json.dumps(meta, indent=1))
    print(f"prepared {len(meta)} kernels in {out}")


class Driver:
    """The few CUDA driver calls a launch needs, through ctypes."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.check(self.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        name = ctypes.create_string_buffer(256)
        self.lib.cuDeviceGetName(name, 256, dev)
        self.name = name.value.decode()
        self.ctx = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev),
                   "cuDevicePrimaryCtxRetain")
        self.check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def check(self, code: int, api: str) -> None:
        if code != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorName(code, ctypes.byref(text))
            raise RuntimeError(f"{api} failed: {text.value.decode() if text.value else code}")

    def load(self, ptx: bytes, kernel: str) -> tuple[ctypes.c_void_p, ctypes.c_void_p]:
        module, func = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), ptx + b"\0"),
                   "cuModuleLoadData")
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(func), module, kernel.encode()),
                   "cuModuleGetFunction")
        return module, func

    def run(self, func: ctypes.c_void_p, launch: Launch, shared: int) -> dict[str, np.ndarray]:
        lib = self.lib
        pointers: dict[str, ctypes.c_uint64] = {}
        values = []
        try:
            for arg in launch.args:
                if isinstance(arg, Buffer):
                    ptr = ctypes.c_uint64()
                    self.check(lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(
                        max(arg.data.nbytes, 1))), "cuMemAlloc")
                    data = np.ascontiguousarray(arg.data)
                    self.check(lib.cuMemcpyHtoD_v2(ptr, data.ctypes.data_as(ctypes.c_void_p),
                                                   ctypes.c_size_t(data.nbytes)), "cuMemcpyHtoD")
                    pointers[arg.name] = ptr
                    values.append(ptr)
                else:
                    raw = np.array(arg.value)
                    values.append((ctypes.c_char * raw.nbytes).from_buffer_copy(raw.tobytes()))
            params = (ctypes.c_void_p * len(values))(
                *[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
            (gx, gy, gz), (bx, by, bz) = launch.grid, launch.block
            self.check(lib.cuLaunchKernel(func, gx, gy, gz, bx, by, bz, shared, None, params,
                                          None), "cuLaunchKernel")
            self.check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
            outputs = {}
            for buffer in launch.outputs:
                host = np.empty_like(buffer.data)
                self.check(lib.cuMemcpyDtoH_v2(host.ctypes.data_as(ctypes.c_void_p),
                                               pointers[buffer.name],
                                               ctypes.c_size_t(host.nbytes)), "cuMemcpyDtoH")
                outputs[buffer.name] = host
            return outputs
        finally:
            for ptr in pointers.values():
                lib.cuMemFree_v2(ptr)


def run(directory: Path, out: Path) -> int:
    meta = json.loads((directory / "kernels.json").read_text())
    driver = Driver()
    print(f"device: {driver.name}")
    results = []
    failures = 0
    for name, info in meta.items():
        case = CASES[name]
        for flavour in ("nvcc", "zmlir"):
            ptx = (directory / f"{name}.{flavour}.ptx").read_bytes()
            try:
                _, func = driver.load(ptx, info["kernel"])
            except RuntimeError as err:
                results.append({"case": name, "ptx": flavour, "status": f"load: {err}"})
                failures += 1
                continue
            for size in case.sizes:
                launch = case.launch_for(size)
                # zmlir kernels reach all shared memory through one dynamic
                # window: static + dynamic bytes; nvcc's declare their own.
                shared = launch.shared_bytes + (info["static_shared_bytes"]
                                                if flavour == "zmlir" else 0)
                start = time.perf_counter()
                try:
                    launch.check(driver.run(func, launch, shared))
                    status = "match"
                except (AssertionError, RuntimeError) as err:
                    status = f"MISMATCH: {str(err).splitlines()[0]}"
                    failures += 1
                results.append({"case": name, "ptx": flavour, "size": repr(size),
                                "status": status,
                                "ms": round((time.perf_counter() - start) * 1000, 2)})
                print(f"{name:14s} {flavour:6s} {size!s:18s} {status}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"device": driver.name, "results": results},
                                                 indent=1))
    matched = sum(r["status"] == "match" for r in results)
    print(f"{matched}/{len(results)} launches matched numpy")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        prepare(Path(sys.argv[2]))
        sys.exit(0)
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        sys.exit(run(Path(sys.argv[2]), Path(sys.argv[3] if len(sys.argv) > 3 else ".")))
    print(__doc__)
    sys.exit(2)
