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
