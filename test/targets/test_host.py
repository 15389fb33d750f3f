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


def _as_i32(values: list[int]) -> np.ndarray:
    return (np.array(values, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def _partial_block_reference(values: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """What programs/warp_partial_blocks.cu's kernels give, as its main() has it."""
    collectives, sums = [], []
    for start in range(0, len(values), block):
        for base in range(0, 32 * ((block + 31) // 32), 32):
            w = [int(x) for x in values[start + base:start + min(base + 32, block)]]
            n, lanes = len(w), (1 << len(w)) - 1
            ballot = sum((x & 1) << lane for lane, x in enumerate(w))
            ors = 0
            for x in w:
                ors |= x
            every = int(all(x >= 0 for x in w))
            sums.append(sum(w))
            for lane in range(n):
                match = sum(int((x & 3) == (w[lane] & 3)) << k for k, x in enumerate(w))
                collectives += [lanes, ballot, every, 0, sum(w), min(w), ors, match, lanes, 1,
                                w[(lane + 1) % n], w[lane - 1] if lane else w[lane], lanes,
                                every + 2 * n]
        sums += [-1] * (32 - (block + 31) // 32)
    return _as_i32(collectives), _as_i32(sums)


@pytest.mark.parametrize("block", [32, 40, 63, 100])
def test_partial_warps(block, host, nvcc_ptx) -> None:
    """A short last warp: collectives hear only its lanes, __syncwarp waits
    for them (programs/warp_partial_blocks.cu, whose main() runs it on GPUs)."""
    module = zmlir.compile_module(nvcc_ptx("programs/warp_partial_blocks.cu"), "host")
    program = host.load(module.binary)
    grid, results = 3, 14
    values = np.array([(i * 7919) % 997 for i in range(block * grid)], np.int32)
    data, out, sums = (host.alloc(values.nbytes), host.alloc(values.nbytes * results),
                       host.alloc(grid * 32 * 4))
    host.copy_to_device(data, values)
    host.copy_to_device(sums, np.full(grid * 32, -1, np.int32))
    host.launch(program.kernel("_Z11collectivesPKiPi"), grid=(grid, 1, 1), block=(block, 1, 1),
                args=[np.uint64(data), np.uint64(out)])
    host.launch(program.kernel("_Z8tree_sumPKiPi"), grid=(grid, 1, 1), block=(block, 1, 1),
                args=[np.uint64(data), np.uint64(sums)], shared_bytes=block * 4)
    want_collectives, want_sums = _partial_block_reference(values, block)
    got = host.copy_into(out, np.empty(len(values) * results, np.int32))
    np.testing.assert_array_equal(got.reshape(-1, results), want_collectives.reshape(-1, results))
    np.testing.assert_array_equal(host.copy_into(sums, np.empty(grid * 32, np.int32)), want_sums)


def test_divergent_collectives(host, nvcc_ptx) -> None:
    """Collectives in branches and in device functions run with the lanes
    that reach them there, each call site on its own (programs/warp_divergence.cu)."""
    module = zmlir.compile_module(nvcc_ptx("programs/warp_divergence.cu"), "host")
    (kernel,) = module.kernels.values()
    values = np.array([(i * 40503) % 1009 for i in range(192)], np.int32)
    data, out = host.alloc(values.nbytes), host.alloc(values.nbytes * 8)
    host.copy_to_device(data, values)
    host.launch(host.load(module.binary).kernel(kernel.name), grid=(2, 1, 1), block=(96, 1, 1),
                args=[np.uint64(data), np.uint64(out)], shared_window=kernel.static_shared_bytes)
    want = []
    for base in range(0, len(values), 32):
        w = [int(x) for x in values[base:base + 32]]
        odd = sum((x & 1) << lane for lane, x in enumerate(w))
        segments = {}
        for width in (16, 8):  # shfl_down sums within segments of `width` lanes
            h, offset = w[:width], width // 2
            while offset:
                h = [h[i] + (h[i + offset] if i + offset < width else h[i]) for i in range(width)]
                offset //= 2
            segments[width] = h
        for lane in range(32):
            want += [sum(w) + w[1] if lane == 0 else -1,
                     sum(w) ^ odd if lane == 0 else -1,
                     segments[16][lane] if lane < 16 else w[lane ^ 1],
                     segments[8][lane] if lane < 8 else -1,
                     sum(w[trip] for trip in range(4) if lane % 4 >= trip),
                     w[lane ^ 3] * 2 if lane < 4 else -1,
                     1 + 2 * sum((w[k] & 1) == (w[lane] & 1) for k in range(1, 32, 2))
                     if lane & 1 else -1,
                     w[lane - 2] if 2 <= lane < 6 else -1]
    got = host.copy_into(out, np.empty(len(values) * 8, np.int32))
    np.testing.assert_array_equal(got.reshape(-1, 8), _as_i32(want).reshape(-1, 8))


def test_async_copy_zero_fill(host, nvcc_ptx) -> None:
    """cp.async as a synchronous copy (programs/async_copy.cu, whose main()
    checks every kernel on GPUs): the source size in a register, bytes past it
    zeros and a size of 0 reading nothing (its source is null), and the
    ignore-src predicate."""
    module = zmlir.compile_module(nvcc_ptx("programs/async_copy.cu"), "host")
    kernel = module.kernels["_Z13runtime_sizesPK4int4PS_PKi"]
    threads = 128
    src = np.random.default_rng(5).integers(1, 256, (threads, 16), dtype=np.uint8)
    sizes = np.arange(threads, dtype=np.int32) % 17
    d_src, d_out, d_sizes = host.alloc(src.nbytes), host.alloc(2 * src.nbytes), host.alloc(
        sizes.nbytes)
    host.copy_to_device(d_src, src)
    host.copy_to_device(d_sizes, sizes)
    host.launch(host.load(module.binary).kernel(kernel.name), grid=(1, 1, 1),
                block=(threads, 1, 1), args=[np.uint64(d_src), np.uint64(d_out),
                                             np.uint64(d_sizes)],
                shared_window=kernel.static_shared_bytes)
    got = host.copy_into(d_out, np.empty((2 * threads, 16), np.uint8))
    neighbour = (np.arange(threads) + 1) % threads
    want_sized = np.where(np.arange(16) < sizes[neighbour][:, None], src[neighbour], 0)
    want_ignored = np.where((np.arange(threads) % 3 == 0)[:, None], 0, src)
    np.testing.assert_array_equal(got[:threads], want_sized)
    np.testing.assert_array_equal(got[threads:], want_ignored)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_mbarrier_waits_let_the_other_fibers_run(host, nvcc_ptx, arch: str) -> None:
    """cuda::barrier and a block-scope cuda::pipeline (programs/mbarrier.cu,
    whose main() checks them on GPUs and on the CPU backend): a thread
    waiting at an mbarrier (sm_80's test_wait, sm_90's try_wait) yields to
    the block's other fibers until the phase completes."""
    module = zmlir.compile_module(nvcc_ptx("programs/mbarrier.cu", arch), "host")
    threads, tiles = 128, 7
    rng = np.random.default_rng(11)
    src = rng.integers(-50, 50, tiles * threads, dtype=np.int32)
    d_src, d_out = host.alloc(src.nbytes), host.alloc(threads * 4)
    host.copy_to_device(d_src, src)
    kernel = next(k for name, k in module.kernels.items() if "block_pipeline" in name)
    host.launch(host.load(module.binary).kernel(kernel.name), grid=(1, 1, 1),
                block=(threads, 1, 1), args=[np.uint64(d_src), np.uint64(d_out), np.int32(tiles)],
                shared_window=kernel.static_shared_bytes)
    want = np.zeros(threads, np.int64)
    for k in range(tiles):
        want = want * 3 + src[k * threads + (np.arange(threads) + k) % threads]
    got = host.copy_into(d_out, np.empty(threads, np.int32))
    np.testing.assert_array_equal(got, _as_i32(list(want)))


_ISSPACEP = """
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 r) classify(.param .b64 a)
{
    .reg .b64 %rd<2>; .reg .pred %p<4>; .reg .b32 %r<5>;
    ld.param.b64 %rd1, [a];
    isspacep.global %p1, %rd1; isspacep.shared %p2, %rd1; isspacep.local %p3, %rd1;
    selp.u32 %r1, 1, 0, %p1; selp.u32 %r2, 2, 0, %p2; selp.u32 %r3, 4, 0, %p3;
    or.b32 %r4, %r1, %r2; or.b32 %r4, %r4, %r3;
    st.param.b32 [r], %r4; ret;
}
.visible .entry k(.param .u64 out)
{
    .local .align 4 .b32 loc[4];
    .shared .align 4 .b32 sh[4];
    .reg .b64 %rd<6>; .reg .b32 %r<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd5, %rd1;
    mov.u64 %rd2, loc; cvta.local.u64 %rd2, %rd2; add.u64 %rd2, %rd2, 12;
    mov.u64 %rd3, sh; cvta.shared.u64 %rd3, %rd3; add.u64 %rd3, %rd3, 12;
    mov.u64 %rd4, out;
    { .param .b64 a; .param .b32 b; st.param.b64 [a], %rd1; call (b), classify, (a); ld.param.b32 %r1, [b]; }
    { .param .b64 a; .param .b32 b; st.param.b64 [a], %rd2; call (b), classify, (a); ld.param.b32 %r2, [b]; }
    { .param .b64 a; .param .b32 b; st.param.b64 [a], %rd3; call (b), classify, (a); ld.param.b32 %r3, [b]; }
    { .param .b64 a; .param .b32 b; st.param.b64 [a], %rd4; call (b), classify, (a); ld.param.b32 %r4, [b]; }
    st.global.u32 [%rd5], %r1; st.global.u32 [%rd5+4], %r2;
    st.global.u32 [%rd5+8], %r3; st.global.u32 [%rd5+12], %r4;
    ret;
}
"""


def test_isspacep_tells_global_shared_and_local(host) -> None:
    """isspacep in a device function: a global pointer is .global only, the
    last word of a .local array and of a .shared one are .local and .shared
    only, and a parameter's address (its copy) is .local."""
    module = zmlir.compile_module(_ISSPACEP, "host")
    kernel = module.kernels["k"]
    out = host.alloc(16)
    host.launch(host.load(module.binary).kernel("k"), grid=(2, 1, 1), block=(3, 1, 1),
                args=[np.uint64(out)], shared_window=kernel.static_shared_bytes)
    np.testing.assert_array_equal(host.copy_into(out, np.empty(4, np.int32)), [1, 4, 2, 4])


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


def test_device_heap_serves_every_fiber(host, compiled) -> None:
    """malloc and free from 2048 threads (fibers) on the host target: the
    module's own allocator over a heap laid out as the driver lays it out
    (zmlir/runtime/cuda/heap.py); distinct 16-byte aligned blocks that keep
    what each thread wrote, freed by other threads, then served again."""
    from zmlir.runtime.cuda import heap

    _, program = compiled("programs/device_heap.cu")
    size = 1 << 20
    base = host.alloc(heap.HEADER_BYTES + size)
    host.copy_to_device(base, np.array([heap.HEADER_BYTES, heap.HEADER_BYTES + size], np.uint64))
    host.copy_to_device(program.global_variable(heap.STATE_NAME), np.array([base], np.uint64))
    n = 2048
    blocks, bad = host.alloc(n * 8), host.alloc(4)
    host.copy_to_device(bad, np.zeros(1, np.int32))
    for _ in range(3):  # the second and third rounds take freed blocks
        host.launch(program.kernel("_Z8allocatePPh"), grid=(8, 1, 1),
                    block=(256, 1, 1), args=[np.uint64(blocks)])
        got = host.copy_into(blocks, np.empty(n, np.uint64))
        sizes = 1 + (np.arange(n, dtype=np.uint64) * 37) % 200  # request_bytes
        assert np.all(got != 0) and np.all(got % 16 == 0)
        order = np.argsort(got)
        assert np.all(got[order][1:] >= got[order][:-1] + sizes[order][:-1])
        first, end = base + heap.HEADER_BYTES, base + heap.HEADER_BYTES + size
        assert np.all((got >= first) & (got + sizes <= end))
        host.launch(program.kernel("_Z14check_and_freePPhjPi"), grid=(8, 1, 1),
                    block=(256, 1, 1), args=[np.uint64(blocks), np.uint32(n), np.uint64(bad)])
        assert host.copy_into(bad, np.empty(1, np.int32))[0] == 0
