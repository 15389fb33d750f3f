"""Running the fidelity cases of test/ptx/spec.py as SPIR-V on the CPU, the results files
(build/fidelity/*.json) tools/fidelity_table.py reads, and the cases each target is
expected to reject (EXPECTED_UNSUPPORTED)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from ptx import spec

import zmlir
from support import REPO

RESULTS = REPO / "build" / "fidelity"


def merge_results(name: str, cases: dict[str, object]) -> None:
    """Adds `cases` to build/fidelity/`name`.json (other test modules write there too)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    old.update(cases)
    path.write_text(json.dumps(old, indent=1, sort_keys=True))


def run_case(device, c: spec.Case, ins: list[np.ndarray], shared_bytes: int = 0,
             target: str = "spirv") -> np.ndarray:
    """Case `c` compiled for `target` and run on `device` over inputs `ins`: its output.
    `device` is the OpenCL device for SPIR-V, a HostDevice for the host target."""
    module = zmlir.compile_module(spec.ptx(c), target, filename=f"{c.name}.ptx")
    if target == "spirv":
        from zmlir.runtime.backends.opencl.device import KernelArg

        program, pointer = device.load_spirv(module.binary), KernelArg.ptr
    else:
        program, pointer = device.load(module.binary), np.uint64
    n = len(ins[0])
    out = np.zeros(n, dtype=spec.output_dtype(c))
    arrays = [out, *ins, *([ins[0]] * (3 - len(ins)))]
    addresses = []
    try:
        for a in arrays:
            addr = device.alloc(a.nbytes)
            device.copy_to_device(addr, a)
            addresses.append(addr)
        device.launch(program.kernel("k"), grid=(n // spec.BLOCK, 1, 1), block=(spec.BLOCK, 1, 1),
                      args=[*(pointer(x) for x in addresses), np.uint32(n)],
                      shared_bytes=shared_bytes,
                      shared_window=module.kernels["k"].static_shared_bytes)
        return device.copy_into(addresses[0], out)
    finally:
        for addr in addresses:
            device.free(addr)


# The fidelity cases each target rejects, with the start of the diagnostic it rejects them
# with (after `file:line:col: error: `). A case rejected that is not listed here fails the
# fidelity tests, and so does a listed case that compiles: then remove it from the list.
EXPECTED_UNSUPPORTED: dict[str, dict[str, str]] = {
    "spirv": {
        # A work-group barrier must be reached by every thread at the same instruction.
        "bar_arrive_sync": "unsupported 'bar.arrive' on target 'spirv'",
        "sreg_envreg": "unsupported special register '%envreg0' on target 'spirv'",
    },
    "nvptx": {},
    "amdgpu": {
        "sreg_envreg": "unsupported special register '%envreg0' on target 'amdgpu'",
    },
    "host": {
        "sreg_envreg": "unsupported special register '%envreg0' on target 'host'",
    },
}

_LOCATION = re.compile(r"^.*?: error: ")


def expected_unsupported(target: str) -> dict[str, str]:
    """EXPECTED_UNSUPPORTED for `target` ("spirv", "nvptx:sm_90", "amdgpu:gfx942", ...)."""
    return EXPECTED_UNSUPPORTED[target.split(":")[0]]


def rejection_problem(target: str, name: str, err: zmlir.CompileError | None) -> str | None:
    """What is wrong with case `name` compiling for `target` (err: its CompileError, None
    when it compiled), against EXPECTED_UNSUPPORTED: None when nothing is."""
    expected = expected_unsupported(target).get(name)
    if err is None:
        return None if expected is None else (
            f"{name}: compiles for {target} now; remove it from EXPECTED_UNSUPPORTED "
            "(test/support/fidelity.py)")
    message = _LOCATION.sub("", str(err).splitlines()[0])
    if expected is None:
        return f"{name}: {err}"
    if not message.startswith(expected):
        return f"{name}: rejected with '{message}', expected '{expected}'"
    return None


def expected_rejection(target: str, c: spec.Case) -> str | None:
    """For a test that runs case `c` on `target`: None when the case is expected to compile;
    when it is in EXPECTED_UNSUPPORTED, the first line of the diagnostic it is still rejected
    with (the test then skips it). Fails the test when the list is out of date."""
    if c.name not in expected_unsupported(target):
        return None
    try:
        zmlir.compile_module(spec.ptx(c), target, filename=f"{c.name}.ptx")
    except zmlir.CompileError as err:
        problem = rejection_problem(target, c.name, err)
        if problem:
            pytest.fail(problem)
        return str(err).splitlines()[0]
    pytest.fail(rejection_problem(target, c.name, None) or "")
