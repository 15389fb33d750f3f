"""Instruction recipes (zmlir/frontend/memo.py) change nothing: every module
imports to the same text, and fails with the same diagnostic, with and
without them, on the nvcc corpus, the fidelity kernels and the test CUDA
programs' PTX, each imported with an empty recipe table and then again with
the table the whole set filled."""

from __future__ import annotations

import pytest
from corpus.build import compile_all, have_nvcc
from support import TEST_DIR

from zmlir.diagnostics import CompileError
from zmlir.frontend import memo, parse_ptx
from zmlir.frontend.importer import import_module

KERNELS = TEST_DIR / "ptx" / "kernels"


def _imported(text: str, name: str, use_memo: bool) -> str:
    try:
        return import_module(parse_ptx(text, name), name, memo=use_memo)
    except CompileError as e:
        return f"error: {e}"


def _modules() -> dict[str, str]:
    modules = {p.name: p.read_text() for p in sorted(KERNELS.glob("*.ptx"))}
    if have_nvcc():
        modules.update({case.name: ptx for case, ptx in compile_all().items()})
    return modules


@pytest.fixture(scope="module")
def modules() -> dict[str, str]:
    return _modules()


def test_recipes_import_the_same_text(modules: dict[str, str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(modules) > 100
    plain = {name: _imported(text, name, False) for name, text in modules.items()}
    monkeypatch.setattr(memo, "RECIPES", memo.Recipes())
    for round_ in ("recording", "replaying"):
        for name, text in modules.items():
            assert _imported(text, name, True) == plain[name], f"{name}, {round_}"
    # The table is used: most instructions replay a recipe.
    assert len(memo.RECIPES.table) > 500


def test_a_recipe_keeps_register_aliasing(monkeypatch: pytest.MonkeyPatch) -> None:
    """`add %r1, %r1, %r2` and `add %r3, %r1, %r2` are different shapes."""
    monkeypatch.setattr(memo, "RECIPES", memo.Recipes())
    text = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p) {
  .reg .b32 %r<5>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  add.s32 %r1, %r1, %r2;
  add.s32 %r3, %r1, %r2;
  add.s32 %r4, %r3, %r3;
  add.s32 %r4, %r4, %r1;
  ret;
}
"""
    m = parse_ptx(text, "a.ptx")
    assert import_module(m, "a.ptx") == import_module(m, "a.ptx", memo=False)
