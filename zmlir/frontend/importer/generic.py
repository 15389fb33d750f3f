"""The generic form: an instruction with no dedicated op (the handler of
every opcode no other handler takes, and of the forms a handler leaves to
it) imports as `ptx.inst`, which keeps its opcode, modifiers and operands;
the lowering then names it as unsupported."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import address, classify
from zmlir.frontend.importer.core import OTHER, FunctionImporter, handles
from zmlir.frontend.importer.ptxtypes import MLIR_TYPES, mlir_type, quote
from zmlir.frontend.importer.sreg import OTHER_SPECIAL_REG, SPECIAL_REGS
from zmlir.frontend.ssa import Value

# Instructions (opcode, or opcode.first-modifier) whose first operand is not
# a destination register. Besides these, a first operand that is an address
# (`st`, `mbarrier.init`, `multimem.st`, `cp.async`, ...) is never one.
_NO_DESTINATION = {
    "st", "red", "bar", "barrier", "membar", "fence", "prefetch", "prefetchu", "trap",
    "brkpt", "pmevent", "call", "brx", "nanosleep", "stmatrix", "wmma.store", "cp",
    "griddepcontrol", "setmaxnreg", "bar.warp", "discard", "applypriority",
    "sust", "sured", "tensormap", "stackrestore", "wgmma",
}


def _has_destination(inst: ast.Instruction) -> bool:
    if not inst.operands or isinstance(inst.operands[0], ast.Addr):
        return False
    if inst.opcode in ("bar", "barrier") and "red" in inst.modifiers:
        return True
    dotted = f"{inst.opcode}.{inst.modifiers[0]}" if inst.modifiers else inst.opcode
    return inst.opcode not in _NO_DESTINATION and dotted not in _NO_DESTINATION


def is_other_special_reg(imp: FunctionImporter, operand: ast.Operand) -> bool:
    """A special register without a `ptx.sreg` case (and not a declared register)."""
    return (isinstance(operand, ast.Reg) and OTHER_SPECIAL_REG.fullmatch(operand.name) is not None
            and imp.ssa.reg_type(operand.name) is None)


@handles(OTHER)
def generic(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """Imports an instruction with no dedicated op as `ptx.inst`, keeping
    opcode, modifiers and operands; lowering reports it as unsupported.
    A special register with no `ptx.sreg` case (`%envreg0`, `%current_graph_exec`,
    ...) is an operand of kind "%name" (its own name) with no SSA value."""
    m = classify(inst)
    default_type = mlir_type(m.types[-1]) if m.types and m.types[-1] in MLIR_TYPES else "i32"
    operands = list(inst.operands)
    dests: list[ast.Operand] = []
    if _has_destination(inst):
        first = operands.pop(0)
        if isinstance(first, ast.Pair):  # `d|p`, `{d...}|p`
            leading = first.first
            dests = [*(leading.elems if isinstance(leading, ast.Vec) else [leading]),
                     first.second]
        else:
            dests = list(first.elems) if isinstance(first, ast.Vec) else [first]
    kinds: list[str] = ["d" * len(dests)] if dests else []
    args: list[Value] = []
    symbols: list[str] = []

    def value_of(o: ast.Operand) -> Value:
        if isinstance(o, ast.Reg) and o.name not in SPECIAL_REGS:
            return imp.read_reg(o.name, inst.loc)
        return imp.value(o, default_type, inst.loc)

    for o in operands:
        if isinstance(o, ast.Addr):
            if isinstance(o.base, ast.Sym) and o.base.name not in imp.m.variables:
                symbols.append(o.base.name)
                kinds.append(f"as{o.offset:+d}")
                continue
            base, offset = address(imp, inst, o, m.space)
            args.append(base)
            kinds.append(f"a{offset:+d}")
        elif isinstance(o, ast.Vec):
            elems = [e for e in o.elems if not isinstance(e, ast.Sink)]
            args.extend(value_of(e) for e in elems)
            kinds.append(f"v{len(elems)}")
        elif isinstance(o, ast.Sym) and o.name not in imp.m.variables:
            symbols.append(o.name)
            kinds.append("s")
        elif isinstance(o, ast.Sink):
            kinds.append("_")
        elif is_other_special_reg(imp, o):
            assert isinstance(o, ast.Reg)
            kinds.append(o.name)
        else:
            args.append(value_of(o))
            kinds.append("r")
    results = []
    for d in dests:
        if isinstance(d, ast.Reg) and d.name not in SPECIAL_REGS:
            results.append(imp.new_value(imp.reg_type(d.name, inst.loc)))
        else:
            results.append(imp.new_value(default_type))
    mods = ", ".join(quote("." + mod) for mod in inst.modifiers)
    attrs = [f"operand_kinds = [{', '.join(quote(k) for k in kinds)}]"]
    if symbols:
        attrs.append(f"symbols = [{', '.join('@' + quote(sym) for sym in symbols)}]")
    arg_slots = ", ".join(f"{{{i}}}" for i in range(len(args)))
    arg_types = ", ".join(a.type for a in args)
    result_types = ", ".join(r.type for r in results)
    imp.emit(results, f"ptx.inst {quote(inst.opcode)} [{mods}] ({arg_slots}) "
                      f"{{{{{', '.join(attrs)}}}}} : ({arg_types}) -> ({result_types})",
             args, inst.loc)
    for d, r in zip(dests, results, strict=True):
        if not isinstance(d, ast.Sink):
            imp.write_reg(d, r, inst.loc)
