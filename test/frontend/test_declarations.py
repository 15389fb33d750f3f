"""A worker's declarations, parsed as the importer looks them up
(zmlir/frontend/declarations.py): the same tables, so the same import, as
the module text parsed whole; and the main process's check of the scan."""

from __future__ import annotations

import dataclasses

import pytest
from corpus.build import compile_all, have_nvcc

from zmlir.frontend import context, parse_ptx, stream
from zmlir.frontend.declarations import Declarations, Unreadable, certified, chunks
from zmlir.frontend.importer import ModuleImporter

MODULE = """.version 8.5
.target sm_80
.address_size 64
.file 1 "k.cu"

.extern .func (.param .b32 r) ext (.param .b32 a);
.extern .func (.param .b32 r) ext (.param .b64 a);
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.global .u32 twice = 1;
.global .u32 twice = 2;
.global .attribute(.managed) .align 8 .u64 managed_var;
.const .u32 %odd;
.shared .u32 /* hidden */ commented;
.global .u64 where = generic(table);
.section .debug_abbrev { .b8 1 }
.visible .func (.param .b32 r) f(.param .b32 a)
{
	ret;
}
	// .globl	k
.visible .entry k(.param .u64 out) .maxntid 32, 1, 1
{
	ret;
}
"""


def _module_text(text: str) -> str:
    parts = stream.split(text)
    assert parts is not None
    return parts[0]


def _whole_tables(text: str) -> ModuleImporter:
    importer = ModuleImporter(parse_ptx(text, "m.ptx"), "m.ptx")
    importer.module_variables()
    return importer


def test_chunks_name_only_plain_declarations() -> None:
    text = _module_text(MODULE)
    found = chunks(text)
    assert found is not None
    # Parsed up front: the first item (the header, and the first declaration
    # of `ext`: no `;` ends `.file`), `%odd` (a register's name), the one
    # with a comment inside, and the `.section`.
    assert [c.name for c in found] == [
        None, "ext", "table", "twice", "twice", "managed_var", None, None, "where", None,
        "f", "k"]
    joined = "".join(text[c.start:c.end] for c in found)
    assert text.startswith(joined) and not text[len(joined):].strip()
    lines = text.splitlines()
    for c in found:
        if c.name is not None:
            line, col = c.decl_loc
            assert lines[line - 1][col - 1:].startswith((".extern", ".global", ".visible"))
            assert c.name in lines[line - 1] or c.name == "ext"


def test_on_demand_tables_are_the_whole_parse() -> None:
    text = _module_text(MODULE)
    whole = _whole_tables(text)
    names = [*whole.functions, *whole.variables, "nowhere", "r", "a"]
    for order in (names, names[::-1]):  # the order of lookups doesn't matter
        found = chunks(text)
        assert found is not None
        decls = Declarations(text, found, "m.ptx")
        for name in order:
            assert decls.functions.get(name) == whole.functions.get(name), name
            assert (name in decls.variables) == (name in whole.variables), name
            assert decls.variables.get(name) == whole.variables.get(name), name
            assert (name in decls) == (name in whole.functions or name in whole.variables)
        # The first declaration of a function wins, the last of a variable.
        assert decls.functions["ext"].params[0].type == "b32"
        assert decls.variables["twice"].init == 2


def test_certified_catches_a_misread_chunk() -> None:
    text = _module_text(MODULE)
    module = parse_ptx(text, "m.ptx")
    decls = [*module.variables, *module.functions]
    found = chunks(text)
    assert found is not None and certified(decls, found)
    i = next(i for i, c in enumerate(found) if c.name == "table")
    for wrong in (dataclasses.replace(found[i], name="tables"),
                  dataclasses.replace(found[i], decl_loc=(found[i].decl_loc[0] + 1, 1))):
        assert not certified(decls, [*found[:i], wrong, *found[i + 1:]])


def test_a_chunk_that_does_not_parse_is_unreadable() -> None:
    text = ".version 8.5\n.target sm_80\n.address_size 64\n.global .u32 y;\n.global .u32 x = ;\n"
    found = chunks(text)
    assert found is not None and [c.name for c in found] == [None, "x"]
    decls = Declarations(text, found, "m.ptx")
    with pytest.raises(Unreadable):
        _ = "x" in decls.variables


@pytest.mark.skipif(not have_nvcc(), reason="nvcc is not installed")
def test_corpus_imports_the_same_with_declarations_on_demand() -> None:
    """Every corpus module, a function at a time, imports to the same text
    with a worker's declarations as with the module text parsed whole."""
    for case, ptx in compile_all().items():
        parts = stream.split(ptx)
        assert parts is not None, case.name
        text, spans = parts
        found = chunks(text)
        m = parse_ptx(text, "m.ptx")
        assert found is not None and certified([*m.variables, *m.functions], found), case.name
        whole = context.ImportContext(parse_ptx(text, "m.ptx"), "m.ptx", "<buffer>")
        decls = Declarations(text, found, "m.ptx")
        lazy = context.ImportContext(decls.module, "m.ptx", "<buffer>", decls)
        for s in spans:
            work = [(ptx[s.start:s.end], s.line, s.col)]
            assert lazy.batch(work, False, False).funcs == whole.batch(work, False, False).funcs
        # The module text in parts gives what it gives whole.
        assert _parts(text, 3) == _whole_part(text), case.name
        # Declarations were parsed only as looked up.
        assert sum(c.name is not None for c in found) == 0 or decls.lazy, case.name


def _parts(text: str, groups: int, verify: bool = False) -> context.ModulePart:
    found = chunks(text)
    assert found is not None
    decls = Declarations(text, found, "m.ptx")
    ctx = context.ImportContext(decls.module, "m.ptx", "<buffer>", decls)
    return context.ModulePart.joined([ctx.module_part(k, groups, verify, verify)
                                      for k in range(groups)])


def _whole_part(text: str, verify: bool = False) -> context.ModulePart:
    ctx = context.ImportContext(parse_ptx(text, "m.ptx"), "m.ptx", "<buffer>")
    return ctx.module_part(0, 1, verify, verify)


def test_module_text_in_parts_is_the_whole() -> None:
    # (MLIR rejects the second `twice`.)
    text = _module_text(MODULE.replace(".global .u32 twice = 2;\n", ""))
    whole = _whole_part(text, verify=True)
    for groups in (1, 2, 5, 40):
        assert _parts(text, groups, verify=True) == whole, groups


@pytest.mark.parametrize("late", [".address_size 32\n", '.file 2 "other.cu"\n',
                                  ".loc 1 2 3\n"])
def test_parts_decline_what_the_whole_parse_reads_otherwise(late: str) -> None:
    """A header directive after the first part (the parser checks those
    across the module), or a `.loc` (it ends at the line's end, not at `;`)."""
    text = _module_text(MODULE).replace(".global .u64 where", late + ".global .u64 where")
    if late.startswith(".address_size"):
        text = text.replace(".address_size 64\n", "\n")  # else it is a duplicate
    assert _parts(text, 1) == _whole_part(text)
    with pytest.raises(Unreadable):
        _parts(text, 2)


def test_a_variable_declared_in_two_parts_is_declined() -> None:
    text = _module_text(MODULE)
    assert _parts(text, 1).variable_names.count("twice") == 2
    with pytest.raises(stream.Unsplittable):
        _parts(text, 40)
