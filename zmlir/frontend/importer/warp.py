"""Warp-level instructions: shfl.sync, vote.sync, match.sync, redux.sync,
activemask, elect.sync and bar.warp.sync."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import (
    attr_dict,
    check_no_rest,
    classify,
    emit_result,
    expect_operands,
    one_type,
    operand_values,
)
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.ptxtypes import mlir_type


@handles("elect")
def _elect(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """`elect.sync d|p, membermask` (d may be the sink `_`)."""
    dest = inst.operands[0] if inst.operands else None
    if inst.modifiers != ("sync",) or len(inst.operands) != 2 or not isinstance(dest, ast.Pair):
        raise imp.error("unsupported 'elect' form (expected elect.sync d|p, membermask)",
                        inst.loc)
    mask = imp.value(inst.operands[1], "i32", inst.loc)
    d, p = imp.new_value("i32"), imp.new_value("i1")
    imp.emit([d, p], "ptx.elect_sync {0}", [mask], inst.loc)
    imp.write_reg(dest.first, d, inst.loc)
    imp.write_reg(dest.second, p, inst.loc)


@handles("shfl")
def _shfl(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    modes = {"up", "down", "bfly", "idx"}
    mode = next((r for r in m.rest if r in modes), None)
    if mode is None or "sync" not in m.flags:
        raise imp.error("unsupported 'shfl' form (expected shfl.sync.<mode>.b32)", inst.loc)
    check_no_rest(imp, inst, m, allowed=modes)
    expect_operands(imp, inst, 5)
    dest = inst.operands[0]
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands[1:]]
    d, p = imp.new_value("i32"), imp.new_value("i1")
    imp.emit([d, p], f"ptx.shfl_sync {{0}}, {{1}}, {{2}}, {{3}} "
                     f"{attr_dict(mode=f'#ptx.shfl<{mode}>')} : i32", vs, inst.loc)
    if isinstance(dest, ast.Pair):
        imp.write_reg(dest.first, d, inst.loc)
        imp.write_reg(dest.second, p, inst.loc)
    else:
        imp.write_reg(dest, d, inst.loc)


@handles("vote")
def _vote(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    modes = {"all", "any", "uni", "ballot"}
    check_no_rest(imp, inst, m, modes)
    # .uni is also a hint modifier elsewhere, so look at the modifiers as written.
    mode = next((r for r in inst.modifiers if r in modes), None)
    if mode is None or "sync" not in m.flags:
        raise imp.error("unsupported 'vote' form (expected vote.sync.mode)", inst.loc)
    if len(inst.operands) != 3:
        raise imp.error("'vote.sync' expects 3 operands", inst.loc)
    _, p, mask = inst.operands
    pv = imp.value(p, "i1", inst.loc)  # a `!p` operand is negated here
    mv = imp.value(mask, "i32", inst.loc)
    rt = "i32" if mode == "ballot" else "i1"
    emit_result(imp, inst, f"ptx.vote_sync {{0}}, {{1}} {{{{mode = #ptx.vote<{mode}>}}}} : {rt}",
                [pv, mv], rt)


@handles("activemask")
def _activemask(imp: FunctionImporter, inst: ast.Instruction) -> None:
    expect_operands(imp, inst, 1)
    emit_result(imp, inst, "ptx.activemask : i32", [], "i32")


@handles("redux")
def _redux(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    ops = {"add", "min", "max"}
    check_no_rest(imp, inst, m, ops)
    op = next((r for r in m.rest if r in ops), None) or next(
        (f for f in ("and", "or", "xor") if f in m.flags), None)
    if op is None or "sync" not in m.flags:
        raise imp.error("unsupported 'redux' form (expected redux.sync.op.type)", inst.loc)
    ptx_type = one_type(imp, inst, m)
    if ptx_type not in ("b32", "u32", "s32"):
        raise imp.error(f"unsupported 'redux.sync' type '.{ptx_type}'", inst.loc)
    vs = operand_values(imp, inst, ["i32", "i32"])
    attrs = attr_dict(op=f"#ptx.atomop<{op}>", type=f"#ptx.type<{ptx_type}>")
    emit_result(imp, inst, f"ptx.redux_sync {{0}}, {{1}} {attrs} : i32", vs, "i32")


@handles("match")
def _match(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    modes = {"any", "all"}
    check_no_rest(imp, inst, m, modes)
    mode = next((r for r in m.rest if r in modes), None)
    if mode is None or "sync" not in m.flags:
        raise imp.error("unsupported 'match' form (expected match.mode.sync.type)", inst.loc)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    expect_operands(imp, inst, 3)
    a = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    mask = imp.value(inst.operands[2], "i32", inst.loc)
    d, p = imp.new_value("i32"), imp.new_value("i1")
    imp.emit([d, p], f"ptx.match_sync {{0}}, {{1}} {{{{mode = #ptx.match<{mode}>}}}} : {t}",
             [a, mask], inst.loc)
    dest = inst.operands[0]
    if isinstance(dest, ast.Pair):
        imp.write_reg(dest.first, d, inst.loc)
        imp.write_reg(dest.second, p, inst.loc)
    else:
        imp.write_reg(dest, d, inst.loc)


def bar_warp_sync(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """`bar.warp.sync membermask` (the `bar` handler's, control.py)."""
    expect_operands(imp, inst, 1)
    mask = imp.value(inst.operands[0], "i32", inst.loc)
    imp.emit([], "ptx.bar_warp_sync {0}", [mask], inst.loc)
