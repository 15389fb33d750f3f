"""The PTX linker (frontend/link.py): several translation units into one
module, as nvlink links relocatable device code."""

from __future__ import annotations

import re

import pytest

import zmlir
from zmlir.frontend.link import LinkError, link_ptx


def _unit(body: str, version: str = "8.0", target: str = "sm_80") -> str:
    return f".version {version}\n.target {target}\n.address_size 64\n{body}"


CALLER = _unit("""
.extern .func (.param .b32 r) scale(.param .b32 x);
.weak .global .align 4 .b32 shared_count = 3;
.weak .func (.param .b32 r) square(.param .b32 x)
{
\t.reg .b32 %v<3>;
\tld.param.b32 %v1, [x]; mul.lo.s32 %v2, %v1, %v1; st.param.b32 [r], %v2; ret;
}
.func (.param .b32 r) helper(.param .b32 x)
{
\t.reg .b32 %v<3>;
\tld.param.b32 %v1, [x]; add.s32 %v2, %v1, 1; st.param.b32 [r], %v2; ret;
}
.visible .entry k(.param .u64 out)
{
\t.reg .b32 %r<5>; .reg .b64 %rd<2>;
\tld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x;
\t{ .param .b32 a; .param .b32 b; st.param.b32 [a], %r1; call.uni (b), square, (a); ld.param.b32 %r2, [b]; }
\t{ .param .b32 a; .param .b32 b; st.param.b32 [a], %r2; call.uni (b), scale, (a); ld.param.b32 %r3, [b]; }
\t{ .param .b32 a; .param .b32 b; st.param.b32 [a], %r3; call.uni (b), helper, (a); ld.param.b32 %r4, [b]; }
\tst.global.u32 [%rd1], %r4;
\tret;
}
""")

LIBRARY = _unit("""
.weak .global .align 4 .b32 shared_count = 3;
.weak .func (.param .b32 r) square(.param .b32 x)
{
\t.reg .b32 %v<3>;
\tld.param.b32 %v1, [x]; mul.lo.s32 %v2, %v1, %v1; st.param.b32 [r], %v2; ret;
}
// helper here doubles: "helper" in a comment or string is not a reference.
.func (.param .b32 r) helper(.param .b32 x)
{
\t.reg .b32 %v<3>;
\tld.param.b32 %v1, [x]; shl.b32 %v2, %v1, 1; st.param.b32 [r], %v2; ret;
}
.visible .func (.param .b32 r) scale(.param .b32 x)
{
\t.reg .b32 %v<3>;
\tld.param.b32 %v1, [x];
\t{ .param .b32 a; .param .b32 b; st.param.b32 [a], %v1; call.uni (b), helper, (a); ld.param.b32 %v2, [b]; }
\tst.param.b32 [r], %v2; ret;
}
""", version="9.0", target="sm_90")


def _bodies(text: str, name: str) -> int:
    """How many definitions (with a body) of function `name` text holds."""
    return len(re.findall(rf"\.func\s*\([^)]*\)\s*{re.escape(name)}\s*\([^)]*\)\s*\{{", text))


def test_units_link_into_one_module() -> None:
    linked = link_ptx([(CALLER, "caller.ptx"), (LIBRARY, "library.ptx")]).text
    # The newest header of the units.
    assert linked.startswith(".version 9.0\n.target sm_90\n.address_size 64\n")
    # One .weak definition kept: the first; the other unit's is a declaration.
    assert _bodies(linked, "square") == 1
    assert linked.count(".extern .func (.param .b32 r) square(.param .b32 x);") == 1
    assert linked.count("shared_count = 3;") == 1
    assert ".extern .global .align 4 .b32 shared_count;" in linked
    # Each unit keeps its own helper: the second unit's is renamed, and so
    # are its calls, but not its comment.
    assert _bodies(linked, "helper") == 1 and _bodies(linked, "helper_u1") == 1
    assert "call.uni (b), helper_u1, (a);" in linked
    assert '"helper" in a comment' in linked
    # And the whole compiles, every call resolved.
    module = zmlir.compile_module(linked, "host", filename="linked.ptx")
    assert set(module.kernels) == {"k"}


def test_a_line_of_the_linked_text_names_its_unit() -> None:
    linked = link_ptx([(CALLER, "caller.ptx"), (LIBRARY, "library.ptx")])
    lines = linked.text.splitlines()
    for unit, text in (("caller.ptx", CALLER), ("library.ptx", LIBRARY)):
        index = text.splitlines().index(".visible .func (.param .b32 r) scale(.param .b32 x)"
                                        if unit == "library.ptx" else ".visible .entry k("
                                        ".param .u64 out)")
        line = lines.index(text.splitlines()[index]) + 1
        assert linked.origin(line) == (unit, index + 1)


def test_an_internal_name_yields_to_an_external_one_of_a_later_unit() -> None:
    first = _unit(".func f()\n{\n\tret;\n}\n.visible .entry a()\n{\n\tcall.uni f;\n\tret;\n}\n")
    second = _unit(".visible .func f()\n{\n\tret;\n}\n.visible .entry b()\n{\n\tcall.uni f;\n"
                   "\tret;\n}\n")
    linked = link_ptx([(first, "first.ptx"), (second, "second.ptx")]).text
    assert ".func f_u0()" in linked and "call.uni f_u0;" in linked
    assert ".visible .func f()" in linked and linked.count("call.uni f;") == 1


def test_two_visible_definitions_do_not_link() -> None:
    with pytest.raises(LinkError) as err:
        link_ptx([(LIBRARY, "a.ptx"), (LIBRARY, "b.ptx")])
    line = LIBRARY.splitlines().index(".visible .func (.param .b32 r) scale(.param .b32 x)") + 1
    assert str(err.value) == (f"b.ptx:{line}:1: error: Multiple definition of 'scale' in "
                              "'b.ptx', first defined in 'a.ptx'")


def test_an_undefined_reference_does_not_link() -> None:
    with pytest.raises(LinkError, match=r"caller.ptx:5:1: error: Undefined reference to 'scale' "
                                        r"in 'caller.ptx'"):
        link_ptx([(CALLER, "caller.ptx")])
    # A declaration nothing uses, or a function the driver provides, is no reference.
    unused = _unit(".extern .func (.param .b32 r) unused(.param .b32 x);\n"
                   ".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n"
                   ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n"
                   "\t{ .param .b64 f; .param .b64 a; .param .b32 r; st.param.b64 [f], 0; "
                   "st.param.b64 [a], 0; call.uni (r), vprintf, (f, a); ld.param.b32 %r1, [r]; }\n"
                   "\tret;\n}\n")
    link_ptx([(unused, "unused.ptx")])


def test_extern_shared_memory_is_no_undefined_reference() -> None:
    # numba's cuda.shared.array(0, ...): the launch's dynamic shared memory.
    dynamic = _unit(".extern .shared .align 4 .b8 _cudapy_smem_1[];\n"
                    ".visible .entry k()\n{\n\t.reg .b64 %rd<2>;\n"
                    "\tmov.u64 %rd1, _cudapy_smem_1;\n\tret;\n}\n")
    assert "_cudapy_smem_1[];" in link_ptx([(dynamic, "dynamic.ptx")]).text


def test_common_variables_must_agree() -> None:
    small = _unit(".common .global .align 4 .b8 pool[16];\n")
    large = _unit(".common .global .align 4 .b8 pool[64];\n")
    assert link_ptx([(small, "a.ptx"), (small, "b.ptx")]).text.count("pool[16];") == 2
    with pytest.raises(LinkError, match=r"'\.common' variable 'pool' declared differently"):
        link_ptx([(small, "a.ptx"), (large, "b.ptx")])


def test_file_indices_are_renumbered_per_unit() -> None:
    def with_file(name: str) -> str:
        return _unit(f'.file 1 "{name}.cu"\n.visible .entry {name}()\n{{\n\t.loc 1 7 3\n'
                     "\tret;\n}\n")
    linked = link_ptx([(with_file("a"), "a.ptx"), (with_file("b"), "b.ptx")]).text
    assert '.file 1 "a.cu"' in linked and '.file 2 "b.cu"' in linked
    assert linked.index(".loc 1 7 3") < linked.index('.file 2 "b.cu"') < linked.index(".loc 2 7 3")
    zmlir.compile_module(linked, "host", filename="linked.ptx")
