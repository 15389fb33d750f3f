"""PTX scopes in the import (importer/scoping.py): body variables hoisted to
module scope under names of their own, repeated `.extern` declarations."""

from __future__ import annotations

import re

import pytest

from zmlir.compiler import compile_module
from zmlir.diagnostics import CompileError

HEADER = ".version 7.0\n.target sm_80\n.address_size 64\n"
KERNEL = """
.visible .entry {name}(.param .u64 out)
{{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b8 buf[{size}];
  mov.u32 %r1, %tid.x;
  st.shared.u32 [buf+4], %r1;
  ld.shared.u32 %r2, [buf+4];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r2;
  ret;
}}
"""


def _imported(text: str, **kwargs: object) -> str:
    module = compile_module(text, emit="ptx-mlir", filename="m.ptx", **kwargs)  # type: ignore
    return str(module.stages["ptx-mlir"])


@pytest.mark.parametrize("stream_min", [1 << 40, 0])  # whole, and streamed (which falls back)
def test_same_body_variable_in_two_kernels(stream_min: int) -> None:
    # ptxas takes it: each body's `buf` is its own. Hoisted, the second is
    # renamed, and only that kernel's references follow.
    text = (HEADER + ".global .align 4 .u32 buf;\n" + KERNEL.format(name="k1", size=64)
            + KERNEL.format(name="k2", size=128))
    mlir = _imported(text, stream_min=stream_min)
    variables = dict(re.findall(r"ptx\.var @(\w+) \{[^}]*count = (\d+)", mlir))
    assert variables == {"buf_k1": "64", "buf_k2": "128"}
    assert "ptx.var @buf {" in mlir  # the module's own, untouched
    k1, k2 = mlir.split("func.func")[1:3]
    assert set(re.findall(r"addr_of @(\w+)", k1)) == {"buf_k1"}
    assert set(re.findall(r"addr_of @(\w+)", k2)) == {"buf_k2"}
    compile_module(text, target="spirv", filename="m.ptx")  # and it lowers


def test_repeated_extern_declaration_is_one_variable() -> None:
    text = (HEADER + ".extern .shared .align 16 .b8 smem[];\n"
            ".extern .shared .align 16 .b8 smem[];\n" + KERNEL.format(name="k", size=16))
    mlir = _imported(text)
    assert mlir.count("ptx.var @smem ") == 1
    compile_module(text, target="spirv", filename="m.ptx")


def test_conflicting_declarations_are_an_error() -> None:
    text = (HEADER + ".extern .shared .align 16 .b8 smem[];\n"
            ".extern .shared .align 16 .b32 smem[];\n" + KERNEL.format(name="k", size=16))
    with pytest.raises(CompileError, match=r"m\.ptx:5:1: error: inconsistent redefinition "
                                           r"of variable 'smem' \(first declared at line 4\)"):
        _imported(text)


def test_a_variable_defined_twice_is_an_error() -> None:
    text = HEADER + ".global .u32 twice = 1;\n.global .u32 twice = 2;\n"
    with pytest.raises(CompileError, match=r"m\.ptx:5:1: error: duplicate definition of "
                                           r"variable 'twice' \(first defined at line 4\)"):
        _imported(text)


# Two blocks of one kernel each declare the label `W` and a `%r1` that hides
# the kernel's own (nvcc pastes inline asm like this once per use: CUTLASS's
# `LAB_WAIT:` loops). The first loop runs 3 times (+1), the second 4 (+10),
# and after the blocks `%r1` is the kernel's 5 again: 3 + 40 + 5.
BLOCK_SCOPES = HEADER + """
.visible .entry scoped(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  .reg .pred %p<2>;
  mov.u32 %r1, 5;
  mov.u32 %r2, 0;
  {
    .reg .b32 %r1;
    mov.u32 %r1, 0;
  W:
    add.u32 %r2, %r2, 1;
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 3;
    @%p1 bra W;
  }
  {
    .reg .pred p;
    .reg .b32 %r1;
    mov.u32 %r1, 0;
  W:
    add.u32 %r2, %r2, 10;
    add.u32 %r1, %r1, 1;
    setp.lt.u32 p, %r1, 4;
    @p bra W;
  }
  add.u32 %r2, %r2, %r1;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r2;
  ret;
}
"""


def test_blocks_scope_their_labels_and_registers(device) -> None:
    import numpy as np

    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.backends.opencl.device import KernelArg

    backend = OpenCLBackend(device)
    module = compile_module(BLOCK_SCOPES, "spirv", filename="m.ptx")
    kernel = backend.kernel(device.load_spirv(module.binary), "scoped")
    out = device.alloc(4)
    try:
        backend.launch(kernel, module.kernels["scoped"], (1, 1, 1), (1, 1, 1),
                       [KernelArg.ptr(out)], 0)
        got = device.copy_into(out, np.empty(1, np.uint32))
    finally:
        device.free(out)
    assert int(got[0]) == 3 + 40 + 5


def test_a_label_twice_in_one_block_is_an_error() -> None:
    text = BLOCK_SCOPES.replace("  W:\n    add.u32 %r2, %r2, 10;",
                                "  W:\n  W:\n    add.u32 %r2, %r2, 10;")
    with pytest.raises(CompileError, match=r"m\.ptx:26:3: error: duplicate label 'W'$"):
        _imported(text)
