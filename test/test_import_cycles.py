"""No import cycles anywhere in zmlir (tools/import_cycles.py reads every import,
function-level ones included; the compiled zmlir._native imports nothing of ours)."""

from __future__ import annotations

from pathlib import Path

from tools import import_cycles


def test_zmlir_has_no_import_cycles() -> None:
    found = import_cycles.cycles(import_cycles.ROOT / "zmlir")
    assert not found, "\n".join(" -> ".join(path) for _, path in found)


def test_the_checker_counts_function_level_imports_not_type_checking_ones(
        tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg import a\n")  # its own submodule: no cycle
    (package / "a.py").write_text("from pkg import b, c\n")
    (package / "b.py").write_text("def f():\n    from .a import x\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\n\n"
                                  "if TYPE_CHECKING:\n    import pkg.a\n")
    assert import_cycles.cycles(package) == [(["pkg.a", "pkg.b"], ["pkg.a", "pkg.b", "pkg.a"])]
    assert import_cycles.cycles(package, ["pkg.c"]) == []


def test_an_extension_module_is_no_edge_to_its_package(tmp_path: Path) -> None:
    package = tmp_path / "zmlir"
    package.mkdir()
    (package / "__init__.py").write_text("def f():\n    from zmlir import compiler\n")
    (package / "compiler.py").write_text("from zmlir import _native\n")
    assert import_cycles.cycles(package) == []
    (package / "compiler.py").write_text("from zmlir import _native, f\n")
    assert import_cycles.cycles(package) == [(["zmlir", "zmlir.compiler"],
                                              ["zmlir", "zmlir.compiler", "zmlir"])]
