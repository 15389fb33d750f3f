"""Golden outputs of the PTX fidelity kernels (test/ptx/) from a real NVIDIA GPU.

  python3 tools/capture_golden.py OUTDIR [--nvptx DIR]
      (a machine with numpy and the CUDA driver; nothing of zmlir is imported) runs every
      kernel of test/ptx/kernels/ on its generated inputs through the CUDA driver (ctypes on
      libcuda.so.1) and writes OUTDIR/<case>.npz (inputs in0.., output `out`, compressed).
      With --nvptx DIR it also runs zmlir's NVPTX translation of each kernel, DIR/<case>.ptx,
      on the same inputs and compares it with the golden output bit for bit (.approx cases
      within their stated bound); the verdicts go to OUTDIR/nvptx.json. A kernel that loses
      the CUDA context (an illegal address, ...) is recorded (OUTDIR/golden-failed.json, or
      an `error:` verdict) and the capture restarts itself for the rest (`--resume`).

  python3 tools/capture_golden.py ... --only NAME,NAME,...
      the same for the named cases alone (e.g. the ones added since the last capture).

  python3 tools/capture_golden.py --prepare-nvptx DIR
      (this repository, with zmlir built) writes zmlir's NVPTX (sm_90) output of every kernel
      to DIR/<case>.ptx, or DIR/<case>.error with the compiler's message, and
      DIR/kernels.json with the shared-memory window each needs at launch (zmlir reaches a
      kernel's .shared variables through one dynamic window; nvcc-style PTX declares them).

Copy OUTDIR/*.npz to test/ptx/golden/ to make test/fidelity/test_ptx_fidelity.py compare against them.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test"))

from check_nvptx_on_cuda import Driver as CudaDriver  # noqa: E402
from ptx import spec  # noqa: E402


class Driver(CudaDriver):
    """The ctypes driver of check_nvptx_on_cuda.py, running one test kernel."""

    def run(self, ptx: bytes, ins: list[np.ndarray], out_dtype: type,
            shared_bytes: int = 0) -> np.ndarray:
        lib = self.lib
        module, func = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(lib.cuModuleLoadData(ctypes.byref(module), ptx + b"\0"), "cuModuleLoadData")
        try:
            self.check(lib.cuModuleGetFunction(ctypes.byref(func), module, b"k"),
                       "cuModuleGetFunction")
            n = len(ins[0])
            out = np.zeros(n, dtype=out_dtype)
            arrays = [out] + list(ins) + [ins[0]] * (3 - len(ins))
            ptrs = []
            try:
                for a in arrays:
                    p = ctypes.c_uint64()
                    self.check(lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(a.nbytes)),
                               "cuMemAlloc")
                    ptrs.append(p)
                    data = np.ascontiguousarray(a)
                    self.check(lib.cuMemcpyHtoD_v2(p, data.ctypes.data_as(ctypes.c_void_p),
                                                   ctypes.c_size_t(data.nbytes)), "cuMemcpyHtoD")
                count = ctypes.c_uint32(n)
                values = [*ptrs, count]
                params = (ctypes.c_void_p * len(values))(
                    *[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
                self.check(lib.cuLaunchKernel(func, n // spec.BLOCK, 1, 1, spec.BLOCK, 1, 1,
                                              shared_bytes, None, params, None),
                           "cuLaunchKernel")
                self.check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
                self.check(lib.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), ptrs[0],
                                               ctypes.c_size_t(out.nbytes)), "cuMemcpyDtoH")
                return out
            finally:
                for p in ptrs:
                    lib.cuMemFree_v2(p)
        finally:
            lib.cuModuleUnload(module)


# Errors after which the CUDA context is unusable: the capture restarts itself (a fresh
# process and context) and goes on after the case that caused it.
STICKY = ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_MISALIGNED_ADDRESS",
          "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_HARDWARE_STACK_ERROR",
          "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_ASSERT",
          "CUDA_ERROR_LAUNCH_TIMEOUT")


def capture(outdir: Path, nvptx: Path | None, resume: bool = False) -> int:
    driver = Driver()
    print(f"device: {driver.name}", flush=True)
    outdir.mkdir(parents=True, exist_ok=True)
    state_path = outdir / "capture-state.json"
    state: dict[str, dict[str, object]] = {"failed": {}, "cases": {}}
    if resume and state_path.exists():
        state = json.loads(state_path.read_text())
    windows: dict[str, int] = {}
    if nvptx is not None and (nvptx / "kernels.json").exists():
        windows = json.loads((nvptx / "kernels.json").read_text())

    def restart_after(err: RuntimeError) -> None:
        if any(name in str(err) for name in STICKY):
            state_path.write_text(json.dumps(state))
            print("the CUDA context is lost: restarting for the remaining cases", flush=True)
            args = [sys.executable, *sys.argv]  # the same command (--only too), resumed
            os.execv(sys.executable, args + ([] if "--resume" in args else ["--resume"]))

    for c in spec.CASES:
        if c.name in state["failed"] or c.name in state["cases"] or (
                resume and nvptx is None and (outdir / f"{c.name}.npz").exists()):
            continue
        ins = spec.inputs(c)
        ptx = (spec.KERNELS / f"{c.name}.ptx").read_bytes()
        try:
            golden = driver.run(ptx, ins, spec.output_dtype(c))
        except RuntimeError as err:
            print(f"{c.name:28s} golden FAILED: {err}", flush=True)
            state["failed"][c.name] = str(err)
            restart_after(err)
            continue
        np.savez_compressed(outdir / f"{c.name}.npz", out=golden,
                            **{f"in{i}": a for i, a in enumerate(ins)})
        line = f"{c.name:28s} captured {len(golden)}"
        if nvptx is not None:
            ours = nvptx / f"{c.name}.ptx"
            error = None
            failed = nvptx / f"{c.name}.error"
            if not ours.exists():
                message = failed.read_text().strip() if failed.exists() else ""
                status, ndiff = ("unsupported", 0) if "unsupported" in message or not message \
                    else (f"error: compile: {message.splitlines()[0]}", -1)
            else:
                try:
                    got = driver.run(ours.read_bytes(), ins, spec.output_dtype(c),
                                     windows.get(c.name, 0))
                    status, ndiff = spec.compare(c, got, golden)
                except RuntimeError as err:
                    status, ndiff, error = f"error: {err}", -1, err
            state["cases"][c.name] = {"family": c.family, "status": status,
                                      "differing": ndiff, "n": len(golden)}
            line += f"  nvptx: {status}" + (f" ({ndiff} differ)" if ndiff > 0 else "")
            if error is not None:
                print(line, flush=True)
                restart_after(error)
                continue
        print(line, flush=True)
    failures = len(state["failed"]) + sum(
        v["status"] not in ("pass", "within-ulp", "unsupported")  # type: ignore[index]
        for v in state["cases"].values())
    if nvptx is not None:
        verdicts = {"device": driver.name, "cases": state["cases"]}
        (outdir / "nvptx.json").write_text(json.dumps(verdicts, indent=1))
    if state["failed"]:
        (outdir / "golden-failed.json").write_text(json.dumps(state["failed"], indent=1))
    print(f"{len(spec.CASES) - len(state['failed'])} of {len(spec.CASES)} cases captured; "
          f"{failures} failures", flush=True)
    return 1 if failures else 0


def prepare_nvptx(directory: Path) -> None:
    import zmlir

    directory.mkdir(parents=True, exist_ok=True)
    windows = {}
    for c in spec.CASES:
        try:
            module = zmlir.compile_module(spec.ptx(c), "nvptx:sm_90", filename=f"{c.name}.ptx")
            (directory / f"{c.name}.ptx").write_bytes(module.binary)
            windows[c.name] = module.kernels["k"].static_shared_bytes
        except Exception as err:
            (directory / f"{c.name}.error").write_text(str(err))
    (directory / "kernels.json").write_text(json.dumps(windows, indent=1, sort_keys=True))
    failed = len(spec.CASES) - len(windows)
    print(f"prepared {len(windows)} kernels in {directory} ({failed} rejected, see *.error)")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--only" in args[:-1]:  # --only NAME,NAME,...: just these cases
        at = args.index("--only")
        only = set(args[at + 1].split(","))
        unknown = only - {c.name for c in spec.CASES}
        if unknown:
            sys.exit(f"unknown cases: {', '.join(sorted(unknown))}")
        spec.CASES[:] = [c for c in spec.CASES if c.name in only]
        del args[at:at + 2]
    if len(args) == 2 and args[0] == "--prepare-nvptx":
        prepare_nvptx(Path(args[1]))
        sys.exit(0)
    resume = args[-1:] == ["--resume"]
    args = args[:-1] if resume else args
    if len(args) in (1, 3) and not args[0].startswith("-"):
        nv = Path(args[2]) if len(args) == 3 and args[1] == "--nvptx" else None
        sys.exit(capture(Path(args[0]), nv, resume))
    print(__doc__)
    sys.exit(2)
