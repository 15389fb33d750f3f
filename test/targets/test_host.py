"""The host target end to end: our CUDA kernels, compiled by nvcc to PTX and by
zmlir for the host CPU through LLVM's x86-64 backend, run as fibers of the
host runtime (no OpenCL underneath) and compared with numpy bit for bit."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from support import tool
from support.cuda_cases import case_id, case_sizes, run_launch

import zmlir
from zmlir.targets.host.runner import HostDevice, HostLaunchError, runtime_path


@pytest.fixture(scope="module")
def host():
    if not runtime_path().exists():
        pytest.skip(f"the host runtime is not built ({runtime_path()})")
    return HostDevice()


@pytest.fixture(scope="module")
def compiled(nvcc_ptx):
    """source name -> (compiled module, loaded program), built once each."""
    cache: dict[str, tuple[zmlir.CompiledModule, object]] = {}

    def get(source: str):
        if source not in cache:
            module = zmlir.compile_module(nvcc_ptx(source), "host", filename=source)
            cache[source] = (module, HostDevice().load(module.binary))
        return cache[source]

    return get


@pytest.mark.parametrize("case, size", case_sizes(),
                         ids=[case_id(c, s) for c, s in case_sizes()])
def test_kernel_matches_numpy(case, size, host, compiled) -> None:
    module, program = compiled(case.source.name)
    info = module.kernels[case.kernel]
    assert info.static_shared_bytes == case.static_shared_bytes
    launch = case.launch_for(size)
    outputs = run_launch(host, program.kernel(case.kernel), launch,
                         shared_window=info.static_shared_bytes)
    launch.check(outputs)


def _warp_reference(values: np.ndarray, block: int) -> dict[str, np.ndarray]:
    """What each thread of warp_ops gets, warp by warp (lanes of a partial
    warp see only their warp's live lanes)."""
    out = {name: np.empty_like(values) for name in ("ballots", "xors", "ups", "idxs")}
    starts = [b + w for b in range(0, len(values), block) for w in range(0, block, 32)]
    for start in starts:
        end = min(start + 32, (start // block + 1) * block)
        warp = values[start:end]
        bits = sum(1 << lane for lane, v in enumerate(warp) if v & 1)
        for lane in range(len(warp)):
            out["ballots"][start + lane] = np.uint32(bits).view(np.int32)
            out["xors"][start + lane] = warp[lane ^ 1] if (lane ^ 1) < len(warp) else warp[lane]
            out["ups"][start + lane] = warp[lane - 3] if lane >= 3 else warp[lane]
            out["idxs"][start + lane] = warp[(lane * 7) % 32] if len(warp) == 32 else 0
    return out


@pytest.mark.parametrize("block", [64, 40])
def test_warp_collectives(block, host, compiled) -> None:
    _, program = compiled("warp_ops.cu")
    blocks = 3
    n = block * blocks
    values = np.random.default_rng(block).integers(-1000, 1000, n, dtype=np.int32)
    buffers = {name: host.alloc(values.nbytes)
               for name in ("in", "ballots", "xors", "ups", "idxs")}
    host.copy_to_device(buffers["in"], values)
    args = [np.uint64(buffers[name]) for name in ("in", "ballots", "xors", "ups", "idxs")]
    host.launch(program.kernel("warp_ops"), grid=(blocks, 1, 1), block=(block, 1, 1),
                args=[*args, np.int32(n)])
    expected = _warp_reference(values, block)
    for name, reference in expected.items():
        got = host.copy_into(buffers[name], np.empty_like(values))
        if name == "idxs" and block % 32:
            continue  # lanes past a partial warp's end: undefined in CUDA
        np.testing.assert_array_equal(got, reference, err_msg=name)


def test_trap_fails_the_launch(host, compiled) -> None:
    _, program = compiled("warp_ops.cu")
    out = host.alloc(64 * 4)
    with pytest.raises(HostLaunchError, match="trapped"):
        host.launch(program.kernel("trap_one"), grid=(2, 1, 1), block=(32, 1, 1),
                    args=[np.uint64(out), np.int32(37)])
    # Without the trapping thread the same kernel completes.
    host.launch(program.kernel("trap_one"), grid=(2, 1, 1), block=(32, 1, 1),
                args=[np.uint64(out), np.int32(-1)])
    np.testing.assert_array_equal(host.copy_into(out, np.empty(64, np.int32)), np.arange(64))


def test_binary_is_an_x86_64_shared_library(nvcc_ptx, tmp_path) -> None:
    readelf = tool("llvm-readelf")
    if readelf is None:
        pytest.skip("llvm-readelf is not installed")
    module = zmlir.compile_module(nvcc_ptx("vector_add.cu"), "host")
    assert module.binary[:4] == b"\x7fELF"
    path = tmp_path / "vector_add.so"
    path.write_bytes(module.binary)
    header = subprocess.run([readelf, "-h", "--dyn-syms", path], capture_output=True,
                            text=True, check=True).stdout
    assert "DYN (Shared object file)" in header and "X86-64" in header
    assert "vector_add.zmlir_entry" in header
