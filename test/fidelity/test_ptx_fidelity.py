"""PTX instruction fidelity: every kernel of test/ptx/ compiled for each target, and run as
SPIR-V on the CPU and for the host target against golden outputs captured on an NVIDIA H200
(tools/capture_golden.py). Bit-exact, except `.approx` cases, which must be within the bound
the PTX ISA states for the op (see each case's Tolerance) and NaNs, whose payloads are not
compared. Results also go to build/fidelity/*.json for tools/fidelity_table.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ptx import spec
from support.fidelity import expected_rejection, merge_results, rejection_problem, run_case

import zmlir

COMPILE_TARGETS = ("spirv", "nvptx:sm_90", "amdgpu:gfx1100", "amdgpu:gfx942", "host")
_results: dict[str, dict[str, dict[str, object]]] = {}
_binaries: dict[tuple[str, str], bytes] = {}  # (target, case) -> what test_compiles produced
# Each target's own validator, run on every output: spirv-val on the SPIR-V, ptxas on the
# PTX (what the CUDA driver would JIT; an unresolved libdevice call fails there).
VALIDATORS = {"spirv": ("spv", ["spirv-val"]),
              "nvptx:sm_90": ("ptx", ["ptxas", "-arch=sm_90", "-o", "/dev/null"])}


def _stale_shader_clock_rule(binary: bytes, message: str) -> bool:
    """spirv-val releases built on SPIR-V headers older than KhronosGroup/SPIRV-Headers#315
    (January 2023; Debian 12 ships SPIRV-Tools 2023.1 with them) still make ShaderClockKHR
    imply Shader and then apply Shader's rule that the WorkgroupSize built-in be a constant.
    The capability implies nothing (SPV_KHR_shader_clock; OpenCL's cl_khr_kernel_clock is
    it under Kernel), so exactly that message on a module declaring it is the stale rule."""
    words = np.frombuffer(binary[: len(binary) // 4 * 4], dtype="<u4")
    clock = bool(np.any((words[:-1] == (2 << 16 | 17)) & (words[1:] == 5055)))  # OpCapability
    return clock and "must be a constant for WorkgroupSize" in message


def _record(target: str, case: spec.Case, status: str, detail: str = "") -> None:
    _results.setdefault(target, {})[case.name] = {"family": case.family, "status": status,
                                                  "detail": detail}


@pytest.fixture(scope="module", autouse=True)
def _write_results():
    yield
    for target, cases in _results.items():
        merge_results(target.replace(":", "-"), cases)


def test_kernels_are_current() -> None:
    """test/ptx/kernels/ is what spec.py generates (run `python3 test/ptx/spec.py`)."""
    for c in spec.CASES:
        assert (spec.KERNELS / f"{c.name}.ptx").read_text() == spec.ptx(c), c.name


@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_compiles(target: str) -> None:
    """Every case compiles, except the target's EXPECTED_UNSUPPORTED, which are rejected with
    their listed diagnostic: a newly rejected case fails, and so does a listed one that
    compiles."""
    failures = []
    for c in spec.CASES:
        err = None
        try:
            module = zmlir.compile_module(spec.ptx(c), target, filename=f"{c.name}.ptx")
            _binaries[(target, c.name)] = module.binary
        except zmlir.CompileError as e:
            err = e
        problem = rejection_problem(target, c.name, err)
        if err is None:
            _record(target, c, "compiles")
        else:
            _record(target, c, "error" if problem else "unsupported", str(err).splitlines()[0])
        if problem:
            failures.append(problem)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("target", list(VALIDATORS))
def test_outputs_validate(target: str, tmp_path: Path) -> None:
    """Every output that compiled passes its target's validator (spirv-val, ptxas)."""
    ext, command = VALIDATORS[target]
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    failures = []
    for c in spec.CASES:
        binary = _binaries.get((target, c.name))
        if binary is None:
            try:
                binary = zmlir.compile_module(spec.ptx(c), target,
                                              filename=f"{c.name}.ptx").binary
            except zmlir.CompileError:
                continue  # test_compiles reports it
        path = tmp_path / f"{c.name}.{ext}"
        path.write_bytes(binary)
        run = subprocess.run([*command, str(path)], capture_output=True, text=True)
        if run.returncode != 0 and not (target == "spirv" and _stale_shader_clock_rule(
                binary, run.stderr + run.stdout)):
            message = (run.stderr or run.stdout).strip().splitlines()[0].replace(
                str(path), path.name)
            _record(target, c, "error", f"{command[0]}: {message}")
            failures.append(f"{c.name}: {command[0]}: {message}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", [c.name for c in spec.CASES])
def test_spirv_cpu_matches_h200(name: str, device) -> None:
    _matches_h200(name, device, "spirv")


@pytest.fixture(scope="module")
def host():
    from zmlir.targets.host.runner import HostDevice, runtime_path

    if not runtime_path().exists():
        pytest.skip(f"the host runtime is not built ({runtime_path()})")
    return HostDevice()


@pytest.mark.parametrize("name", [c.name for c in spec.CASES])
def test_host_cpu_matches_h200(name: str, host) -> None:
    """The host target, its threads fibers on this CPU, against the same golden data."""
    _matches_h200(name, host, "host")


def _matches_h200(name: str, device, target: str) -> None:
    """Case `name` compiled for `target` and run on `device` gives the H200's outputs."""
    c = spec.case(name)
    label = f"{target}-cpu"
    golden_path = spec.GOLDEN / f"{name}.npz"
    if not golden_path.exists():
        pytest.skip("no H200 golden data yet: run tools/capture_golden.py on an NVIDIA GPU "
                    "and copy the .npz files to test/ptx/golden/")
    golden = np.load(golden_path)
    ins = [golden[f"in{i}"] for i in range(len(c.inputs))]
    rejected = expected_rejection(target, c)
    if rejected:
        _record(label, c, "unsupported", rejected)
        pytest.skip(f"unsupported: {rejected}")
    try:
        got = run_case(device, c, ins, target=target)
    except zmlir.CompileError as err:
        _record(label, c, "error", str(err).splitlines()[0])
        raise
    except Exception as err:  # the runtime rejected what we produced
        _record(label, c, "error", f"{type(err).__name__}: {str(err).splitlines()[0]}")
        raise
    status, ndiff = spec.compare(c, got, golden["out"])
    detail = f"{ndiff} of {len(got)} differ, e.g. {_examples(c, ins, got, golden['out'])}" \
        if ndiff else ""
    _record(label, c, status, detail)
    assert status != "mismatch", f"{ndiff} of {len(got)} results differ from the H200: {detail}"


def _bits(a: np.ndarray, i: int) -> str:
    return f"{int(a[i:i + 1].view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])[0]):#x}"


def _examples(c: spec.Case, ins: list[np.ndarray], got: np.ndarray, want: np.ndarray) -> str:
    """The first two differing elements: inputs, ours, the H200's (register bits)."""
    differ = (got.view(np.uint8).reshape(len(got), -1)
              != want.view(np.uint8).reshape(len(want), -1)).any(axis=1)
    if c.output in ("f32", "f64"):
        differ &= ~(np.isnan(got) & np.isnan(want))
    rows = []
    for i in np.flatnonzero(differ)[:2]:
        args = ", ".join(_bits(a, i) for a in ins)
        rows.append(f"in ({args}): got {_bits(got, i)}, H200 {_bits(want, i)}")
    return "; ".join(rows)
