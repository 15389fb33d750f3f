"""Half precision as numba's float16 uses it, run on the host target and
compared with numpy (f16) and bf16 bit patterns: `set` with a half result
(1.0 or 0.0 of its format), and cvt.rni.f16.f16 (hrint), whose rounding
constant is the type's own 2^(p-1), 1024 (2^23 is infinity in f16)."""

from __future__ import annotations

import numpy as np
import pytest

import zmlir
from zmlir.targets.host.runner import HostDevice, runtime_path

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a, .param .u64 b)
{
  .reg .b16 %h<7>; .reg .b32 %r<2>; .reg .b64 %rd<8>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [a]; ld.param.u64 %rd3, [b];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd4, %r1, 2; add.s64 %rd5, %rd2, %rd4; add.s64 %rd6, %rd3, %rd4;
  ld.global.b16 %h1, [%rd5]; ld.global.b16 %h2, [%rd6];
  set.eq.f16.f16 %h3, %h1, %h2;
  set.lt.bf16.bf16 %h4, %h1, %h2;
  setp.ne.u32 %p1, %r1, 0;
  set.ge.and.f16.f16 %h5, %h1, %h2, %p1;
  cvt.rni.f16.f16 %h6, %h1;
  mul.wide.u32 %rd4, %r1, 8; add.s64 %rd7, %rd1, %rd4;
  st.global.b16 [%rd7], %h3; st.global.b16 [%rd7+2], %h4; st.global.b16 [%rd7+4], %h5;
  st.global.b16 [%rd7+6], %h6;
  ret;
}
"""


def _bf16_bits(x: np.ndarray) -> np.ndarray:  # float32 -> bf16, exact for these values
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def test_set_and_rint_with_half_results() -> None:
    if not runtime_path().exists():
        pytest.skip(f"the host runtime is not built ({runtime_path()})")
    host = HostDevice()
    module = zmlir.compile_module(PTX, "host", filename="set_half.ptx")
    n = 32
    a = np.array([0, 1, 2, -3, 4, 5, np.nan, 7, 2.5, -3.5, 0.5, 1000.2, -1.4, 1e4, np.inf,
                  -0.25] * 2, dtype=np.float16)
    b = np.array([0, 2, 1, -3, 4, 4, np.nan, 8, 2.5, 3, 0.5, 1000, -1, 1e4, np.inf, 0] * 2,
                 dtype=np.float16)
    f16 = {"a": a.view(np.uint16), "b": b.view(np.uint16)}
    d_out, d_a, d_b = host.alloc(8 * n), host.alloc(2 * n), host.alloc(2 * n)
    host.copy_to_device(d_a, f16["a"])
    host.copy_to_device(d_b, f16["b"])
    host.launch(host.load(module.binary).kernel("k"), grid=(1, 1, 1), block=(n, 1, 1),
                args=[np.uint64(d_out), np.uint64(d_a), np.uint64(d_b)])
    got = host.copy_into(d_out, np.empty((n, 4), np.uint16))
    one16, one_bf16 = np.float16(1).view(np.uint16), _bf16_bits(np.ones(1))[0]
    # The same bits read as bf16 for the bf16 comparison.
    abf = (f16["a"].astype(np.uint32) << 16).view(np.float32)
    bbf = (f16["b"].astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got[:, 0], np.where(a == b, one16, 0))
    np.testing.assert_array_equal(got[:, 1], np.where(abf < bbf, one_bf16, 0))
    np.testing.assert_array_equal(got[:, 2], np.where((a >= b) & (np.arange(n) != 0), one16, 0))
    np.testing.assert_array_equal(got[:, 3], np.rint(a).view(np.uint16))
