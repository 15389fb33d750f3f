"""Running the fidelity cases of test/ptx/spec.py as SPIR-V on the CPU, and the
results files (build/fidelity/*.json) tools/fidelity_table.py reads."""

from __future__ import annotations

import json

import numpy as np
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


def run_spirv(device, c: spec.Case, ins: list[np.ndarray], shared_bytes: int = 0) -> np.ndarray:
    """Case `c` compiled to SPIR-V and run on `device` over inputs `ins`: its output."""
    from zmlir.runtime.launcher import KernelArg

    module = zmlir.compile_module(spec.ptx(c), "spirv", filename=f"{c.name}.ptx")
    program = device.load_spirv(module.binary)
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
                      args=[*(KernelArg.ptr(x) for x in addresses), np.uint32(n)],
                      shared_bytes=shared_bytes,
                      shared_window=module.kernels["k"].static_shared_bytes)
        return device.copy_into(addresses[0], out)
    finally:
        for addr in addresses:
            device.free(addr)

