"""Control flow: branches (bra, brx.idx), barriers (bar, barrier), trap, brkpt,
ret and exit. (A guard on any other instruction is a branch around it,
made where instructions are dispatched: FunctionImporter._instruction.)"""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import Modifiers, attr_dict, classify, expect_operands
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.importer.warp import bar_warp_sync


@handles("bra")
def _branch(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """`{@p} bra{.uni} label;`: a guard makes it a conditional branch."""
    labels = imp.labels
    if len(inst.operands) != 1 or not isinstance(inst.operands[0], ast.Sym):
        raise imp.error("'bra' expects one label", inst.loc)
    name = inst.operands[0].name
    if name not in labels:
        raise imp.error(f"branch to unknown label '{name}'", inst.loc)
    target = labels[name]
    uni = "uni" in inst.modifiers
    if inst.guard is None:
        imp.terminate("bra", [target], attrs=" {uni}" if uni else "", loc=inst.loc)
        return
    pred = imp.read_reg(inst.guard.reg, inst.loc)
    fallthrough = imp.new_block()
    attrs = [a for a, on in (("negated", inst.guard.negated), ("uni", uni)) if on]
    imp.terminate("cond_bra", [target, fallthrough], pred,
                  " {" + ", ".join(attrs) + "}" if attrs else "", inst.loc)
    imp.block = fallthrough


@handles("brx")
def _brx(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """`{@p} brx.idx{.uni} index, tlist;`: one compare and branch per target of the
    `.branchtargets` list, in order; an index past the list (undefined in PTX) traps."""
    ops = inst.operands
    if (inst.modifiers not in (("idx",), ("idx", "uni")) or len(ops) != 2
            or not isinstance(ops[1], ast.Sym)):
        raise imp.error("unsupported 'brx' form (expected brx.idx index, targets)", inst.loc)
    labels = imp.labels
    tlist = imp.branch_targets.get(ops[1].name)
    if tlist is None:
        raise imp.error(f"'brx.idx' of unknown .branchtargets list '{ops[1].name}'",
                        inst.loc)
    for t in tlist.targets:
        if t not in labels:
            raise imp.error(f"'.branchtargets' list '{tlist.name}' names unknown label "
                            f"'{t}'", tlist.loc)
    if inst.guard is not None:
        pred = imp.read_reg(inst.guard.reg, inst.loc)
        taken, fallthrough = imp.new_block(), imp.new_block()
        imp.terminate("cond_bra", [taken, fallthrough], pred,
                      " {negated}" if inst.guard.negated else "", inst.loc)
        imp.block = taken
    index = imp.value(ops[0], "i32", inst.loc)
    for k, t in enumerate(tlist.targets):
        k_value = imp.constant(ast.IntImm(k), "i32", inst.loc)
        equal = imp.new_value("i1")
        imp.emit([equal], "arith.cmpi eq, {0}, {1} : i32", [index, k_value], inst.loc)
        after = imp.new_block()
        imp.terminate("cond_bra", [labels[t], after], equal, "", inst.loc)
        imp.block = after
    imp.terminate("trap", [], loc=inst.loc)
    if inst.guard is not None:
        imp.block = fallthrough


@handles("bar", "barrier")
def _bar(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if inst.opcode == "bar" and inst.modifiers == ("warp", "sync"):
        bar_warp_sync(imp, inst)
        return
    m = classify(inst)
    aligned = inst.opcode == "bar" or "aligned" in m.flags
    if m.scope == "cluster":
        # barrier.cluster.*: no dedicated op (barrier.cta.* is barrier.*).
        generic(imp, inst)
        return
    if m.rest == ["red"] or m.rest == ["red", "popc"]:
        _bar_red(imp, inst, m, aligned)
        return
    if m.rest == ["arrive"]:
        expect_operands(imp, inst, 2)
        vs = [imp.value(o, "i32", inst.loc) for o in inst.operands]
        imp.emit([], f"ptx.bar_arrive {{0}}, {{1}} {attr_dict(aligned=aligned)}", vs, inst.loc)
        return
    if "sync" not in m.flags or m.rest:
        # barrier.cluster, ...: no dedicated op.
        generic(imp, inst)
        return
    if len(inst.operands) not in (1, 2):
        raise imp.error(f"'{inst.opcode}.sync' expects 1 or 2 operands", inst.loc)
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands]
    slots = ", ".join(f"{{{i}}}" for i in range(len(vs)))
    imp.emit([], f"ptx.bar_sync {slots} {attr_dict(aligned=aligned)}", vs, inst.loc)


def _bar_red(imp: FunctionImporter, inst: ast.Instruction, m: Modifiers,
             aligned: bool) -> None:
    """`bar.red.popc.u32 d, a{, b}, {!}c` and `bar.red.{and,or}.pred p, a{, b}, {!}c`."""
    mode = "popc" if "popc" in m.rest else next((f for f in ("and", "or") if f in m.flags), None)
    want = "u32" if mode == "popc" else "pred"
    if mode is None or m.types != [want]:
        raise imp.error(f"unsupported '{inst.opcode}.red' form (expected .popc.u32, .and.pred "
                        "or .or.pred)", inst.loc)
    if len(inst.operands) not in (3, 4):
        raise imp.error(f"'{inst.opcode}.red' expects 3 or 4 operands", inst.loc)
    pred = imp.value(inst.operands[-1], "i1", inst.loc)
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands[1:-1]]
    t = "i32" if mode == "popc" else "i1"
    r = imp.new_value(t)
    slots = ", ".join(f"{{{i}}}" for i in range(1 + len(vs)))
    imp.emit([r], f"ptx.bar_red {slots} {attr_dict(aligned=aligned, mode=f'#ptx.barred<{mode}>')}"
                  f" : {t}", [pred, *vs], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@handles("trap", "brkpt")
def _trap(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if inst.operands or inst.modifiers:
        raise imp.error(f"'{inst.opcode}' takes no operands or modifiers", inst.loc)
    imp.terminate(inst.opcode, [], loc=inst.loc)


@handles("ret", "exit")
def _ret(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if inst.operands:
        raise imp.error(f"'{inst.opcode}' takes no operands", inst.loc)
    uni = " {uni}" if "uni" in inst.modifiers else ""
    imp.terminate(inst.opcode, [], attrs=uni if inst.opcode == "ret" else "", loc=inst.loc)
    if inst.opcode == "ret":
        assert imp.block.term is not None
        imp.block.term.values = [
            imp.read_reg(r.name if r.space == "reg" else f"%param:{r.name}", inst.loc)
            for r in imp.fn.returns]
