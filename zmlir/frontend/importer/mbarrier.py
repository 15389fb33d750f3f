"""Barriers in shared memory: the `mbarrier` family.

    mbarrier.init{.shared{::cta}}.b64 [addr], count
    mbarrier.inval{.shared{::cta}}.b64 [addr]
    mbarrier.{expect,complete}_tx{.relaxed}{.scope}{.shared{::cta}}.b64 [addr], txCount
    mbarrier.arrive{_drop}{.expect_tx}{.noComplete}{.sem}{.scope}{.shared{::cta}}.b64
        state, [addr]{, count | txCount}
    mbarrier.{test,try}_wait{.parity}{.sem}{.scope}{.shared{::cta}}.b64
        waitComplete, [addr], state | phaseParity{, suspendTimeHint}
    mbarrier.pending_count.b64 count, state

A barrier in another CTA of the cluster (`.shared::cluster`) imports as
`ptx.inst`, which the lowering names as unsupported. `cp.async.mbarrier.arrive`
is with cp.async (asynccopy.py)."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import Modifiers, address, attr_dict, classify
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.ssa import Value

_SPACES = {None, "shared"}
_ARRIVE_FLAGS = {"expect_tx", "noComplete"}
_WAITS = {"test_wait", "try_wait"}


@handles("mbarrier")
def _mbarrier(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    if m.types != ["b64"] or m.space not in _SPACES or m.vec != 1 or m.flags or m.rnd \
            or m.cmp or m.cache or not m.rest:
        generic(imp, inst)
        return
    what, extra = m.rest[0], m.rest[1:]
    ops = inst.operands
    if what in ("init", "inval") and not extra and m.sem is None and m.scope is None:
        _expect(imp, inst, 2 if what == "init" else 1)
        addr, attrs = _address(imp, inst, ops[0], m)
        if what == "init":
            count = imp.value(ops[1], "i32", inst.loc, "b32")
            imp.emit([], f"ptx.mbarrier_init {{0}}, {{1}} {attr_dict(**attrs)} : {addr.type}, i32",
                     [addr, count], inst.loc)
        else:
            imp.emit([], f"ptx.mbarrier_inval {{0}} {attr_dict(**attrs)} : {addr.type}", [addr],
                     inst.loc)
    elif what in ("expect_tx", "complete_tx") and not extra:
        _expect(imp, inst, 2)
        addr, attrs = _address(imp, inst, ops[0], m)
        tx = imp.value(ops[1], "i32", inst.loc, "b32")
        text = attr_dict(complete=what == "complete_tx", **_ordering(m), **attrs)
        imp.emit([], f"ptx.mbarrier_tx {{0}}, {{1}} {text} : {addr.type}, i32", [addr, tx],
                 inst.loc)
    elif what in ("arrive", "arrive_drop") and set(extra) <= _ARRIVE_FLAGS \
            and len(set(extra)) == len(extra):
        _arrive(imp, inst, m, what == "arrive_drop", set(extra))
    elif what in _WAITS and extra in ([], ["parity"]):
        _wait(imp, inst, m, what == "try_wait", bool(extra))
    elif what == "pending_count" and not extra and m.space is None and m.sem is None \
            and m.scope is None:
        _expect(imp, inst, 2)
        state = imp.value(ops[1], "i64", inst.loc, "b64")
        r = imp.new_value("i32")
        imp.emit([r], "ptx.mbarrier_pending_count {0}", [state], inst.loc)
        imp.write_reg(ops[0], r, inst.loc)
    else:
        generic(imp, inst)


def _expect(imp: FunctionImporter, inst: ast.Instruction, *counts: int) -> None:
    if len(inst.operands) not in counts:
        expected = " or ".join(map(str, counts))
        raise imp.error(f"'mbarrier' expects {expected} operands, got {len(inst.operands)}",
                        inst.loc)


def _address(imp: FunctionImporter, inst: ast.Instruction, operand: ast.Operand,
             m: Modifiers) -> tuple[Value, dict[str, object]]:
    addr, offset = address(imp, inst, operand, m.space)
    return addr, {"offset": f"{offset} : i64" if offset else None,
                  "space": f"#ptx.space<{m.space}>" if m.space else None}


def _ordering(m: Modifiers) -> dict[str, object]:
    return {"scope": f"#ptx.scope<{m.scope}>" if m.scope else None,
            "sem": f"#ptx.sem<{m.sem}>" if m.sem else None}


def _arrive(imp: FunctionImporter, inst: ast.Instruction, m: Modifiers, drop: bool,
            flags: set[str]) -> None:
    _expect(imp, inst, 2, 3)
    ops = inst.operands
    addr, attrs = _address(imp, inst, ops[1], m)
    args = [addr]
    operand_text = ""
    if len(ops) == 3:
        args.append(imp.value(ops[2], "i32", inst.loc, "b32"))
        operand_text = " tx {1}" if "expect_tx" in flags else " count {1}"
    elif flags:
        raise imp.error(f"'mbarrier.{'.'.join(inst.modifiers)}' expects a count operand",
                        inst.loc)
    text = attr_dict(drop=drop, no_complete="noComplete" in flags, **_ordering(m), **attrs)
    r = imp.new_value("i64")
    imp.emit([r], f"ptx.mbarrier_arrive {{0}}{operand_text} {text} : {addr.type} -> i64", args,
             inst.loc)
    imp.write_reg(ops[0], r, inst.loc)


def _wait(imp: FunctionImporter, inst: ast.Instruction, m: Modifiers, try_: bool,
          parity: bool) -> None:
    _expect(imp, inst, *((3, 4) if try_ else (3,)))
    ops = inst.operands
    addr, attrs = _address(imp, inst, ops[1], m)
    phase_type = "i32" if parity else "i64"
    args = [addr, imp.value(ops[2], phase_type, inst.loc, "b32" if parity else "b64")]
    hint = ""
    if len(ops) == 4:
        args.append(imp.value(ops[3], "i32", inst.loc, "b32"))
        hint = " suspend {2}"
    text = attr_dict(parity=parity, try_wait=try_, **_ordering(m), **attrs)
    r = imp.new_value("i1")
    imp.emit([r], f"ptx.mbarrier_test_wait {{0}}, {{1}}{hint} {text} : {addr.type}, {phase_type}",
             args, inst.loc)
    imp.write_reg(ops[0], r, inst.loc)
