"""The control, synchronisation, atomic and special-register fidelity cases of test/ptx/spec.py
run as SPIR-V on the CPU and checked against numpy references written from the PTX ISA.

These cases have no H200 golden data until the next capture (tools/capture_golden.py); this
module checks them meanwhile, and keeps checking the semantics the golden data cannot show
(e.g. that a counted barrier over part of the CTA traps instead of waiting for all of it).
Results go to build/fidelity/spirv-cpu-reference.json for tools/fidelity_table.py."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
import pytest
from ptx import spec
from support.fidelity import expected_unsupported, merge_results, run_case

import zmlir

U32 = np.uint32
U64 = np.uint64
_results: dict[str, dict[str, object]] = {}


@pytest.fixture(scope="module", autouse=True)
def _write_results():
    yield
    merge_results("spirv-cpu-reference", _results)


# -- half-precision arithmetic as the PTX ISA defines it (round to nearest even) --------------


def _f16_add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """f16 add of 16-bit patterns; a NaN result is NVIDIA's canonical NaN 0x7fff."""
    a = x.astype(np.uint16).view(np.float16).astype(np.float32)
    b = y.astype(np.uint16).view(np.float16).astype(np.float32)
    with np.errstate(all="ignore"):
        s = a + b
        r = s.astype(np.float16).view(np.uint16).astype(U32)
    return np.where(np.isnan(s), U32(0x7FFF), r)


def _bf16_add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    a = (x.astype(U32) << U32(16)).view(np.float32)
    b = (y.astype(U32) << U32(16)).view(np.float32)
    with np.errstate(all="ignore"):
        s = a + b
    u = s.view(U32).astype(U64)
    r = ((u + U64(0x7FFF) + ((u >> U64(16)) & U64(1))) >> U64(16)).astype(U32)
    return np.where(np.isnan(s), U32(0x7FFF), r)


def _halves(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = v.astype(U32)
    return v & U32(0xFFFF), v >> U32(16)


def _pack(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return (lo.astype(U32) & U32(0xFFFF)) | (hi.astype(U32) << U32(16))


def _wide(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(U64) | (hi.astype(U64) << U64(32))


def _atom_half(add: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    def ref(a0: np.ndarray, a1: np.ndarray) -> np.ndarray:
        (l0, h0), (l1, h1) = _halves(a0), _halves(a1)
        return _wide(_pack(add(l0, l1), add(h0, h1)), a0)
    return ref


def _red_f16(a0: np.ndarray, a1: np.ndarray) -> np.ndarray:
    (l0, h0), (_, h1) = _halves(a0), _halves(a1)
    return _pack(l0, _f16_add(h0, h1))


def _red_bf16x2(a0: np.ndarray, a1: np.ndarray) -> np.ndarray:
    (l0, h0), (l1, h1) = _halves(a0), _halves(a1)
    return _pack(_bf16_add(l0, l1), _bf16_add(h0, h1))


def _shared_f16(a0: np.ndarray, a1: np.ndarray) -> np.ndarray:
    (l0, h0), (_, h1) = _halves(a0), _halves(a1)
    return _wide(_pack(l0, _f16_add(h0, h1)), h0)


def _cas_b16(a0: np.ndarray, a1: np.ndarray, a2: np.ndarray) -> np.ndarray:
    (l0, h0), (l1, h1) = _halves(a0), _halves(a1)
    compare = np.where(a2 & U32(1), h0, l1)
    word = np.where(h0 == compare, _pack(l0, h1), a0.astype(U32))
    return _wide(word, h0)


# -- block- and warp-level cases: i = 128 * block + tid, lane = i % 32 -------------------------


def _tid(n: int) -> np.ndarray:
    return np.arange(n) % spec.BLOCK


def _bar_named(a0: np.ndarray) -> np.ndarray:
    i = np.arange(len(a0))
    base = i - _tid(len(a0))
    return a0[base + ((_tid(len(a0)) ^ 1) ^ 32)]


def _per_block(v: np.ndarray, reduce: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    return np.repeat(reduce(v.reshape(-1, spec.BLOCK)), spec.BLOCK)


def _bar_red_popc(a0: np.ndarray) -> np.ndarray:
    return _per_block((a0 & U32(1)).astype(U32), lambda b: b.sum(axis=1)).astype(U32)


def _bar_red_and_or(a0: np.ndarray) -> np.ndarray:
    nonzero = (a0 & U32(0xFF)) != 0
    all_ = _per_block(nonzero, lambda b: b.all(axis=1))
    any_zero = _per_block(~nonzero, lambda b: b.any(axis=1))
    return (np.where(all_, U32(128 << 8), U32(0)) | all_.astype(U32)
            | (any_zero.astype(U32) << U32(1))).astype(U32)


def _ctz(m: np.ndarray) -> np.ndarray:
    m = m.astype(U64)
    return np.where(m == 0, 32, np.log2((m & (~m + U64(1))).astype(np.float64)).astype(np.int64))


def _elect_mask(a0: np.ndarray) -> np.ndarray:
    lane = np.arange(len(a0)) % 32
    mask = np.repeat(a0[::32], 32).astype(U64)
    member = (mask >> lane.astype(U64)) & U64(1)
    leader = _ctz(mask)
    d = leader.astype(U32) | np.where(lane == leader, U32(256), U32(0))
    return np.where(member == 1, d, U32(0xFFFFFFFF)).astype(U32)


def _elect_full(a0: np.ndarray) -> np.ndarray:
    lane = np.arange(len(a0)) % 32
    return ((lane << 1) | (lane == 0)).astype(U32)


def _brx_idx(a0: np.ndarray, a1: np.ndarray) -> np.ndarray:
    k = a0 & U32(3)
    d = np.select([k == 0, k == 1, k == 2], [U32(11), a1 ^ U32(22), a1 + U32(33)], a0)
    return (d + U32(1)).astype(U32)


def _call_recursive(a0: np.ndarray) -> np.ndarray:
    table = [math.factorial(max(k, 1)) & 0xFFFFFFFF for k in range(16)]
    return np.array(table, U32)[a0 & U32(15)]


def _call_indirect(a0: np.ndarray, a1: np.ndarray, a2: np.ndarray) -> np.ndarray:
    mix = ((a0.astype(U64) * U64(3)).astype(U32)) ^ a1
    return np.where(a2 & U32(1), mix, (a0 - a1).astype(U32)).astype(U32)


REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "atom_add_noftz_f16": _atom_half(_f16_add),
    "atom_add_noftz_bf16": _atom_half(_bf16_add),
    "atom_add_noftz_f16x2": _atom_half(_f16_add),
    "atom_add_noftz_bf16x2": _atom_half(_bf16_add),
    "red_add_noftz_f16": _red_f16,
    "red_add_noftz_bf16x2": _red_bf16x2,
    "atom_shared_add_noftz_f16": _shared_f16,
    "atom_cas_b16": _cas_b16,
    "bar_sync_named_counted": _bar_named,
    "bar_red_popc": _bar_red_popc,
    "bar_red_and_or": _bar_red_and_or,
    "elect_sync_mask": _elect_mask,
    "elect_sync_full": _elect_full,
    "sreg_warpid_smid": lambda a0: np.full(len(a0), 7, U32),
    # %clock64 does not go back; two %clock reads are less than 2^30 cycles apart.
    "sreg_clock": lambda a0: np.full(len(a0), 3, U32),
    # %globaltimer does not go back and is not 0 (a calibrated clock on SPIR-V).
    "sreg_globaltimer": lambda a0: np.full(len(a0), 3, U32),
    # {%dynamic_smem_size, %total_smem_size}: no dynamic shared memory, the 2048-byte sh.
    "sreg_smem_size": lambda a0: np.full(len(a0), 2048 << 32, U64),
    "brx_idx": _brx_idx,
    "call_recursive": _call_recursive,
    "call_indirect": _call_indirect,
}
# The block runs from atom_add_noftz_f16 to call_indirect in spec.CASES.
_INDEX = {c.name: i for i, c in enumerate(spec.CASES)}
BLOCK = {c.name for c in spec.CASES[_INDEX["atom_add_noftz_f16"]:_INDEX["call_indirect"] + 1]}
# The block's cases SPIR-V rejects, and the diagnostic that says why.
UNSUPPORTED_ON_SPIRV = {name: message for name, message in expected_unsupported("spirv").items()
                        if name in BLOCK}


def test_every_case_of_the_block_is_checked() -> None:
    assert set(REFERENCES) | set(UNSUPPORTED_ON_SPIRV) == BLOCK


@pytest.mark.parametrize("name", sorted(set(REFERENCES) - set(UNSUPPORTED_ON_SPIRV)))
def test_spirv_cpu_matches_reference(name: str, device) -> None:
    c = spec.case(name)
    ins = spec.inputs(c)
    got = run_case(device, c, ins)
    want = REFERENCES[name](*ins).astype(got.dtype)
    differ = np.flatnonzero(got != want)
    _results[name] = {"family": c.family, "status": "mismatch" if len(differ) else "pass",
                      "detail": f"{len(differ)} of {len(got)} differ" if len(differ) else ""}
    assert not len(differ), (f"{len(differ)} of {len(got)} differ; first at {differ[0]}: "
                             f"inputs {[hex(int(x[differ[0]])) for x in ins]}, got "
                             f"{int(got[differ[0]]):#x}, want {int(want[differ[0]]):#x}")


@pytest.mark.parametrize("dynamic", [4, 100, 4096])
def test_smem_size_counts_dynamic_shared(dynamic: int, device) -> None:
    """The launch's dynamic shared memory reaches %dynamic_smem_size, and with the static
    2048 bytes %total_smem_size (SPIR-V reads the window from the global work offset)."""
    c = spec.case("sreg_smem_size")
    got = run_case(device, c, spec.inputs(c), shared_bytes=dynamic)
    # %total_smem_size in whole 128-byte allocation units, as on the H200.
    total = -(-(2048 + dynamic) // 128) * 128
    assert set(got.tolist()) == {total << 32 | dynamic}


CLOCK_LOOP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<5>;
\t.reg .pred %p;
\tmov.u64 %rd1, %clock64;
\tld.param.u32 %r1, [n];
\tmov.u32 %r2, 0;
LOOP:
\tmad.lo.u32 %r2, %r2, 1664525, 1013904223;
\tsub.u32 %r1, %r1, 1;
\tsetp.ne.u32 %p, %r1, 0;
\t@%p bra LOOP;
\tmov.u64 %rd2, %clock64;
\tsub.u64 %rd2, %rd2, %rd1;
\tld.param.u64 %rd3, [out];
\tmov.u32 %r3, %tid.x;
\tmad.wide.u32 %rd4, %r3, 16, %rd3;
\tst.global.u64 [%rd4], %rd2;
\tcvt.u64.u32 %rd2, %r2;
\tst.global.u64 [%rd4+8], %rd2;
\tret;
}
"""


def test_clock64_counts(device) -> None:
    """%clock64 (cl_khr_kernel_clock's work-group clock on SPIR-V) advances over a loop of
    a million dependent multiply-adds: at least one tick per iteration would be 10^6."""
    from zmlir.runtime.backends.opencl.device import KernelArg

    module = zmlir.compile_module(CLOCK_LOOP, "spirv", filename="clock.ptx")
    program = device.load_spirv(module.binary)
    out = np.zeros(64, U64)
    addr = device.alloc(out.nbytes)
    try:
        device.launch(program.kernel("k"), grid=(1, 1, 1), block=(32, 1, 1),
                      args=[KernelArg.ptr(addr), np.uint32(1_000_000)],
                      shared_window=module.kernels["k"].static_shared_bytes)
        got = device.copy_into(addr, out)
    finally:
        device.free(addr)
    ticks = got[0::2]
    assert np.all(ticks > 100_000), ticks


@pytest.mark.parametrize("name", sorted(UNSUPPORTED_ON_SPIRV))
def test_spirv_rejects(name: str) -> None:
    with pytest.raises(zmlir.CompileError, match=re.escape(UNSUPPORTED_ON_SPIRV[name])) as err:
        zmlir.compile_module(spec.ptx(spec.case(name)), "spirv", filename=f"{name}.ptx")
    _results[name] = {"family": spec.case(name).family, "status": "unsupported",
                      "detail": str(err.value).splitlines()[0]}


PARTIAL_BARRIER = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out){reqntid}
{{
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<2>;
\tbar.sync 1, 64;
\tmov.u32 %r1, %tid.x;
\tld.param.u64 %rd1, [out];
\tst.global.u32 [%rd1], %r1;
\tret;
}}
"""


def test_partial_barrier_with_reqntid_is_a_compile_error() -> None:
    ptx = PARTIAL_BARRIER.format(reqntid=" .reqntid 128, 1, 1")
    with pytest.raises(zmlir.CompileError, match=r"partial.ptx:8:\d+: error: unsupported barrier over 64 "
                                                  r"of the CTA's 128 threads"):
        zmlir.compile_module(ptx, "spirv", filename="partial.ptx")


def test_whole_cta_count_with_reqntid_is_a_plain_barrier() -> None:
    ptx = PARTIAL_BARRIER.format(reqntid=" .reqntid 64, 1, 1")
    std = zmlir.compile_module(ptx, "spirv", filename="whole.ptx").stages["std-mlir"]
    assert "gpu.barrier" in std and "__zmlir_trap" not in std
