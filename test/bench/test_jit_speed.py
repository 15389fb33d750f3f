"""bench/jit_speed.py's corpus and accounting (never the bench itself)."""

from __future__ import annotations

from bench.jit_speed import BIG_BYTES, _ir_shape, named_texts, second_forms, select


def test_a_programs_modules_are_numbered_and_a_repeated_text_measured_once() -> None:
    named = named_texts({"a": ["x"], "b": ["y", "x", "z"], "c": ["y"]}, "samples")
    assert named == {"samples/a": "x", "samples/b.0": "y", "samples/b.2": "z"}


def test_selection_by_name_program_quick_and_size() -> None:
    sizes = {"llmc/gelu_forward": 10, "samples/histogram.0": 10, "samples/histogram.1": 10,
             "samples/reduction": BIG_BYTES}
    assert select(sizes, {"histogram"}, False, False) == (
        ["samples/histogram.0", "samples/histogram.1"], [])
    assert select(sizes, {"samples/histogram.1", "reduction"}, False, False)[0] == [
        "samples/histogram.1", "samples/reduction"]
    assert select(sizes, set(), True, False)[0] == ["llmc/gelu_forward", "samples/histogram.1"]
    assert select(sizes, set(), False, False) == (
        ["llmc/gelu_forward", "samples/histogram.0", "samples/histogram.1"],
        ["samples/reduction"])
    assert select(sizes, set(), False, True) == (list(sizes), [])


IR = """\
define spir_kernel void @k(i64 %0) {
  ret void
}
define spir_kernel void @k__zmlir_grid31(i64 %0) {
  %2 = call i64 @_Z17get_global_offsetj(i32 1)
  ret void
}
define spir_kernel void @w(i64 %0) {
  %2 = call i64 @_Z17get_global_offsetj(i32 1)
  %3 = add i64 %2, 1
  ret void
}
define spir_func void @f() {
  ret void
}
"""


def test_second_forms_are_counted_by_their_lines() -> None:
    shape = _ir_shape(IR)
    assert shape == {"kernels": 3, "grid_variants": 1, "linear_copies": 1, "lines": 15,
                     "grid_variant_lines": 4, "linear_copy_lines": 2}
    forms = second_forms([{"shape": shape}])
    assert forms["grid_variant_share"] == round(4 / 15, 3)
    assert forms["linear_copy_share"] == round(2 / 15, 3)
    assert "measured" not in forms
