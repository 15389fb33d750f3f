"""A module's parts (zmlir/frontend/partition.py): which kernels compile
together, what each part's text holds, and that it keeps every line and
column of the module."""

from __future__ import annotations

from zmlir.frontend.partition import partition

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
MODULE = HEAD + """
// .globl counter
.visible .global .align 4 .u32 counter;
.const .align 4 .u32 scale;
.global .align 8 .u64 table[1] = {helper};
.shared .align 4 .b8 tile[64];

.func helper(.param .u32 n)
{
  .reg .b64 %rd<2>;
  mov.u64 %rd1, counter;
  ret;
}

.visible .entry uses_helper()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 1;
  { .param .b32 p; st.param.b32 [p], %r1; call.uni helper, (p); }
  ret;
}

.visible .entry reads_scale(.param .u64 out)
{
  .reg .b32 %r<2>;
  ld.const.u32 %r1, [scale]; ret;
}

.visible .entry uses_tile() { .reg .b32 %r<2>; ld.shared.u32 %r1, [tile]; ret; }

.visible .entry alone() { ret; }
"""


def test_kernels_sharing_a_variable_are_one_part() -> None:
    p = partition(MODULE)
    assert p is not None
    assert p.kernels == ("uses_helper", "reads_scale", "uses_tile", "alone")
    # `table`'s initializer names `helper`, which names `counter`.
    assert p.part_roots("uses_helper") == {"uses_helper", "counter", "table"}
    assert p.part_roots("counter") == p.part_roots("table") == p.part_roots("uses_helper")
    assert p.part_roots("reads_scale") == {"reads_scale", "scale"}
    # `.shared` variables are per block: no state to share.
    assert p.part_roots("uses_tile") == {"uses_tile"}
    assert p.part_roots("alone") == {"alone"}
    assert p.part_roots("tile") is None and p.part_roots("nothing") is None


def test_a_part_keeps_the_lines_and_columns_of_the_module() -> None:
    p = partition(MODULE)
    assert p is not None
    text = p.part_text({"uses_tile"})
    original, part = MODULE.splitlines(), text.splitlines()
    for number, line in enumerate(part):
        if line.strip():
            assert original[number] == line, number
    assert "tile[64]" in text and "uses_tile" in text
    assert ".u32 counter" not in text and "reads_scale" not in text and "alone" not in text
    assert text.startswith(HEAD)


def test_a_part_holds_what_its_roots_reach() -> None:
    p = partition(MODULE)
    assert p is not None
    text = p.part_text(p.part_roots("uses_helper") or ())
    for name in (".func helper", "uses_helper", "counter;", "table[1]"):
        assert name in text
    assert "scale" not in text and "alone" not in text


def test_function_at_names_the_definition_holding_a_line() -> None:
    p = partition(MODULE)
    assert p is not None
    lines = MODULE.splitlines()
    at = next(i for i, line in enumerate(lines, 1) if "mov.u64 %rd1, counter" in line)
    assert p.function_at(at) == "helper"
    assert p.function_at(1) is None
    assert p.kernels_reaching("helper", p.kernels) == {"uses_helper"}


def test_a_module_the_scan_cannot_place_is_not_parted() -> None:
    assert partition(HEAD + ".visible .entry k() { ret; ") is None  # unbalanced
    # A declaration it cannot name (a comment inside it).
    assert partition(HEAD + ".global /* x */ .u32 v;\n.visible .entry k() { ret; }") is None
