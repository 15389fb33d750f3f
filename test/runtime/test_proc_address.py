"""cuGetProcAddress finds every public entry point of CUDA 13: ours, or a stub
answering CUDA_ERROR_NOT_SUPPORTED (nvidia_exports.txt), never NOT_FOUND."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from zmlir.runtime.cuda import api, proc_address

# Entry points of CUDA 13.1 .. 13.5 that cuda-bindings 13.5 looks up at import
# (the H200's 13.0 driver exports none of them): once NOT_FOUND, which
# cuda.bindings turns into FunctionNotFoundError.
LATER_CUDA_13 = ("cuMemcpyWithAttributesAsync", "cuKernelGetParamCount", "cuFuncGetParamCount",
                 "cuGraphNodeGetParams", "cuLogicalEndpointCreate", "cuDevSmResourceSplit",
                 "cuStreamBeginRecaptureToGraph", "cuTensorMapSetAllocationClass",
                 "cuFabricCpyBatchAsync", "cuEventCreateFromEGLSync")


@pytest.mark.parametrize("name", LATER_CUDA_13)
def test_later_cuda_13_names_resolve_to_a_stub(name: str) -> None:
    assert proc_address.resolve(name, 13050) == name
    assert name in api.unimplemented_names()  # a C stub: CUDA_ERROR_NOT_SUPPORTED, logged


def _headers() -> list[Path]:
    """CUDA's driver API headers: $CUDA_HOME's, /usr/local/cuda's or nvcc's."""
    roots = [Path(os.environ["CUDA_HOME"])] if os.environ.get("CUDA_HOME") else []
    roots.append(Path("/usr/local/cuda"))
    if shutil.which("nvcc"):
        roots.append(Path(shutil.which("nvcc") or "").resolve().parent.parent)
    include = next((r / "include" for r in roots if (r / "include" / "cuda.h").exists()), None)
    if include is None:
        pytest.skip("CUDA's headers (cuda.h) are not installed")
    return [include / h for h in ("cuda.h", "cudaEGL.h", "cudaVDPAU.h", "cudaProfiler.h")
            if (include / h).exists()]


def test_every_function_of_the_toolkits_headers_resolves() -> None:
    names = {n for h in _headers()
             for n in re.findall(r"CUresult CUDAAPI (\w+)\(", h.read_text())}
    assert len(names) > 400
    assert sorted(n for n in names if proc_address.resolve(n) is None) == []


_FAST_ADDRESSES = """
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
assert lib.cuInit(0) == 0
found = {}
for pair in sys.argv[2:]:
    name, target = pair.split("=")
    pfn = ctypes.c_void_p()
    code = lib.cuGetProcAddress_v2(name.encode(), ctypes.byref(pfn), 13000, 0, None)
    found[name] = [code, pfn.value or 0,
                   ctypes.cast(getattr(lib, target), ctypes.c_void_p).value or 0]
print(json.dumps(found))
"""


def test_c_fast_path_functions_resolve_to_their_exports(libdir: str) -> None:
    """Each of fastpath.c's functions: cuGetProcAddress gives its exported
    address (a missing one once gave NULL with CUDA_SUCCESS, which cudart
    turns into cudaErrorCallRequiresNewerDriver)."""
    import json
    import subprocess
    import sys

    # At CUDA 13.0 some names are their _v2 (cuCtxSynchronize: cuCtxSynchronize_v2).
    pairs = [f"{n}={proc_address.resolve(n, 13000)}" for n in api.C_FAST_PATH]
    result = subprocess.run([sys.executable, "-c", _FAST_ADDRESSES, libdir, *pairs],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert {n: v for n, v in found.items() if v[0] != 0 or v[1] == 0 or v[1] != v[2]} == {}
