"""Atomics and memory ordering: atom, red, membar and fence."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import (
    SCOPES,
    address,
    attr_dict,
    check_no_rest,
    classify,
    expect_operands,
    one_type,
)
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.importer.ptxtypes import mlir_type


@handles("atom")
def _atom(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    ops = {"and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max"}
    op = next((r for r in m.rest if r in ops), None)
    if op is None:
        op = next((f for f in ("and", "or", "xor") if f in m.flags), None)
    if op is None:
        raise imp.error("'atom' needs an operation (.add, .cas, ...)", inst.loc)
    # .noftz is the only form of the f16/bf16 adds (and required on them).
    if any(r not in ops and r != "noftz" for r in m.rest):
        generic(imp, inst)
        return
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    n = 4 if op == "cas" else 3
    expect_operands(imp, inst, n)
    addr, offset = address(imp, inst, inst.operands[1], m.space)
    values = [imp.value(o, t, inst.loc, ptx_type) for o in inst.operands[2:]]
    r = imp.new_value(t)
    attrs = attr_dict(offset=f"{offset} : i64" if offset else None, op=f"#ptx.atomop<{op}>",
                      scope=f"#ptx.scope<{m.scope}>" if m.scope else None,
                      sem=f"#ptx.sem<{m.sem}>" if m.sem else None,
                      space=f"#ptx.space<{m.space}>" if m.space else None,
                      type=f"#ptx.type<{ptx_type}>")
    slots = ", ".join(f"{{{i}}}" for i in range(1 + len(values)))
    types = ", ".join([addr.type, *(v.type for v in values)])
    imp.emit([r], f"ptx.atom {slots} {attrs} : ({types}) -> {t}", [addr, *values], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


# fence.proxy.async's state spaces (none: all), as the dialect names them.
_PROXY_ASYNC_SPACES = {(): None, ("global",): "global", ("shared::cta",): "shared",
                       ("shared::cluster",): "shared_cluster"}


@handles("membar", "fence")
def _fence(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if inst.opcode == "membar":
        scopes = {"cta": "cta", "gl": "gpu", "sys": "sys"}
        if len(inst.modifiers) != 1 or inst.modifiers[0] not in scopes:
            raise imp.error(f"unsupported 'membar' form '.{'.'.join(inst.modifiers)}'",
                            inst.loc)
        sem, scope = "sc", scopes[inst.modifiers[0]]
    else:
        mods = list(inst.modifiers)
        if mods[:2] == ["proxy", "async"] and tuple(mods[2:]) in _PROXY_ASYNC_SPACES:
            space = _PROXY_ASYNC_SPACES[tuple(mods[2:])]
            attrs = attr_dict(space=f"#ptx.space<{space}>" if space else None)
            imp.emit([], f"ptx.fence_proxy_async {attrs}", [], inst.loc)
            return
        if mods == ["mbarrier_init", "release", "cluster"]:
            imp.emit([], "ptx.fence_mbarrier_init", [], inst.loc)
            return
        if len(mods) != 2 or mods[0] not in ("sc", "acq_rel") or mods[1] not in SCOPES:
            # Other proxy fences: no ptx.fence form for them.
            generic(imp, inst)
            return
        sem, scope = mods
    imp.emit([], f"ptx.fence {{{{scope = #ptx.scope<{scope}>, sem = #ptx.sem<{sem}>}}}}", [],
             inst.loc)


@handles("red")
def _red(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    ops = {"add", "inc", "dec", "min", "max"}
    op = next((r for r in m.rest if r in ops), None)
    if op is None:
        op = next((f for f in ("and", "or", "xor") if f in m.flags), None)
    if op is None:
        raise imp.error("'red' needs an operation (.add, .min, ...)", inst.loc)
    check_no_rest(imp, inst, m, allowed=ops | {"noftz"})
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    expect_operands(imp, inst, 2)
    addr, offset = address(imp, inst, inst.operands[0], m.space)
    b = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    attrs = attr_dict(offset=f"{offset} : i64" if offset else None, op=f"#ptx.atomop<{op}>",
                      scope=f"#ptx.scope<{m.scope}>" if m.scope else None,
                      sem=f"#ptx.sem<{m.sem}>" if m.sem else None,
                      space=f"#ptx.space<{m.space}>" if m.space else None,
                      type=f"#ptx.type<{ptx_type}>")
    imp.emit([], f"ptx.red {{0}}, {{1}} {attrs} : {addr.type}, {t}", [addr, b], inst.loc)
