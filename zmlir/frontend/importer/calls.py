"""Calls: `call` of a named function, and indirect calls through a
function pointer (a `.callprototype` or `.calltargets` label gives the
signature); arguments and results pass through `.param` variables, or
registers where the callee declares them `.reg`."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import operand_slots
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.ptxtypes import is_aggregate, param_value_type, quote


@handles("call")
def _call(imp: FunctionImporter, inst: ast.Instruction) -> None:
    ops = list(inst.operands)
    rets: list[ast.Operand] = []
    if ops and isinstance(ops[0], ast.Vec):
        rets = list(ops.pop(0).elems)
    if ops and isinstance(ops[0], ast.Reg):
        _call_indirect(imp, inst, rets, ops)
        return
    if not ops or not isinstance(ops[0], ast.Sym):
        raise imp.error("'call' needs a function name or a register", inst.loc)
    name = ops.pop(0).name
    args: list[ast.Operand] = list(ops.pop(0).elems) if ops and isinstance(ops[0], ast.Vec) else []
    if ops:
        raise imp.error("unsupported 'call' with a prototype or jump table", inst.loc)
    callee = imp.m.functions.get(name)
    if callee is None or callee.kind == "entry":
        raise imp.error(f"'call' of unknown function '{name}'", inst.loc)
    if len(args) != len(callee.params) or len(rets) != len(callee.returns):
        raise imp.error(f"'call' of '{name}' with the wrong number of parameters", inst.loc)
    values = []
    for a, p in zip(args, callee.params, strict=True):
        want = param_value_type(p.type, p.dims)
        if want is None:
            raise imp.error(f"unsupported parameter '{p.name}' in a call (unknown type or "
                            "unsized array)", inst.loc)
        if is_aggregate(want):
            if not isinstance(a, ast.Sym) or a.name not in imp.param_regs:
                raise imp.error(f"aggregate parameter '{p.name}' must be passed as a .param "
                                "variable", inst.loc)
            v = imp.read_reg(imp.param_regs[a.name], inst.loc)
            if v.type != want:
                raise imp.error(f"'call' of '{name}' passes {v.type} for parameter "
                                f"'{p.name}' of type {want}", inst.loc)
            values.append(v)
            continue
        if isinstance(a, ast.Sym) and a.name in imp.param_regs:
            v = imp.read_reg(imp.param_regs[a.name], inst.loc)
            values.append(imp.coerce(v, want, inst.loc))
        else:
            values.append(imp.value(a, want, inst.loc, p.type))
    results = []
    for r in callee.returns:
        rt = param_value_type(r.type, r.dims)
        if rt is None:
            raise imp.error(f"unsupported return parameter '{r.name}' of '{name}' (unknown "
                            "type or unsized array)", inst.loc)
        results.append(imp.new_value(rt))
    arg_types = ", ".join(v.type for v in values)
    res_types = ", ".join(r.type for r in results)
    uni = " {{uni}}" if "uni" in inst.modifiers else ""
    imp.emit(results, f"ptx.call @{quote(name)}({operand_slots(len(values))}){uni} : "
                      f"({arg_types}) -> ({res_types})", values, inst.loc)
    for r_op, r, decl in zip(rets, results, callee.returns, strict=True):
        if decl.space == "reg" and isinstance(r_op, (ast.Reg, ast.Sink)):
            # A `.reg` return value lands in a register of the caller.
            imp.write_reg(r_op, r, inst.loc)
            continue
        if not isinstance(r_op, ast.Sym) or r_op.name not in imp.param_regs:
            raise imp.error("'call' return values must be .param variables (or registers, "
                            "for '.reg' return values)", inst.loc)
        reg = imp.param_regs[r_op.name]
        want = imp.reg_type(reg, inst.loc)
        if is_aggregate(want) or is_aggregate(r.type):
            if want != r.type:
                raise imp.error(f"'call' of '{name}' returns {r.type} into '{r_op.name}' of "
                                f"type {want}", inst.loc)
            imp.define(reg, r)
            continue
        imp.define(reg, imp.coerce(r, want, inst.loc))


def _call_indirect(imp: FunctionImporter, inst: ast.Instruction, rets: list[ast.Operand],
                   ops: list[ast.Operand]) -> None:
    """`call (ret), %fptr, (args), prototype;`: the `.callprototype` (or
    `.calltargets`) names the signature, which is that of the `.param`
    variables passed; so arguments and results take their declared types."""
    fptr = ops.pop(0)
    assert isinstance(fptr, ast.Reg)
    args: list[ast.Operand] = list(ops.pop(0).elems) if ops and isinstance(ops[0], ast.Vec) else []
    if len(ops) != 1 or not isinstance(ops[0], ast.Sym):
        raise imp.error("indirect 'call' needs a '.callprototype' or '.calltargets' label",
                        inst.loc)
    callee = imp.read_reg(fptr.name, inst.loc)
    if callee.type != "i64":
        raise imp.error(f"unsupported indirect 'call' through '{fptr.name}' of type "
                        f"{callee.type} (function pointers are 64-bit)", inst.loc)
    values = []
    for a in args:
        if not isinstance(a, ast.Sym) or a.name not in imp.param_regs:
            raise imp.error("indirect 'call' arguments must be .param variables", inst.loc)
        values.append(imp.read_reg(imp.param_regs[a.name], inst.loc))
    regs = []
    for r_op in rets:
        if not isinstance(r_op, ast.Sym) or r_op.name not in imp.param_regs:
            raise imp.error("'call' return values must be .param variables", inst.loc)
        regs.append(imp.param_regs[r_op.name])
    results = [imp.new_value(imp.reg_type(reg, inst.loc)) for reg in regs]
    arg_types = ", ".join(v.type for v in (callee, *values))
    res_types = ", ".join(r.type for r in results)
    uni = " {{uni}}" if "uni" in inst.modifiers else ""
    imp.emit(results, f"ptx.call_indirect {{0}}({operand_slots(len(values), 1)}){uni} : "
                      f"({arg_types}) -> ({res_types})", [callee, *values], inst.loc)
    for reg, r in zip(regs, results, strict=True):
        imp.define(reg, r)
