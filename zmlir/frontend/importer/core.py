"""The import of one function: its blocks, its registers as SSA values
(ssa.py), and each instruction handed to its handler.

A handler (`Handler`, registered by opcode with `@handles` in the module of
its instruction family) reads operands through the FunctionImporter
(`value`, `read_reg`, ...) and emits ops (`emit`) into the current block.
Most instructions never reach theirs: the first of each shape runs it while
memo.py records what it did, and later ones replay that recipe
(`_import_statements`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast, memo
from zmlir.frontend.collector import without_collector
from zmlir.frontend.importer.printer import Block, FunctionPrinter, Op, Terminator
from zmlir.frontend.importer.ptxtypes import (
    MLIR_TYPES,
    array_bytes,
    bits,
    bits_of_float,
    element_bytes,
    float_of_bits,
    mlir_type,
    param_value_type,
    quote,
)
from zmlir.frontend.importer.sreg import SPECIAL_REGS, register_type
from zmlir.frontend.kernel_address import kernel_address
from zmlir.frontend.ssa import SSABlock, SSABuilder, Value

# CC.CF, the carry flag of add.cc/addc/... (arith.py), as a hidden predicate register.
CARRY_REG = "%cc.cf"


def _no_undef(type_: str) -> Value:
    raise AssertionError("the function is imported already")


class ModuleContext(Protocol):
    """What a function's import reads of its module (module.ModuleImporter)."""

    variables: dict[str, ast.VarDecl]
    functions: dict[str, ast.Function]
    line_offset: int
    locations: bool
    memo: bool

    @property
    def quoted_filename(self) -> str: ...

    def error(self, message: str, loc: SourceLoc | None) -> CompileError: ...


class FunctionImporter:
    """Builds the ops of one function; see module.import_module."""

    def __init__(self, module: ModuleContext, fn: ast.Function) -> None:
        self.m = module
        self.fn = fn
        self.ssa = SSABuilder(self._undef)
        self.blocks: list[Block] = []
        self.entry = self.new_block()
        self.block = self.entry
        self.params: dict[str, Value] = {}
        # `.param` variables of a body (call arguments and return values) and
        # a `.func`'s return parameters live in pseudo-registers named
        # "%param:<name>"; `.local` variables are ptx.local_var addresses.
        self.param_regs: dict[str, str] = {}
        self.locals: dict[str, Value] = {}
        self.result_types: list[str] = []
        self._edge_ids = 0
        self._undefs: list[Op] = []
        # The blocks of the labels, and `.branchtargets` lists by name
        # (brx.idx), collected before the body is imported.
        self.labels: dict[str, Block] = {}
        self.branch_targets: dict[str, ast.TargetList] = {}
        self._param_decls = 0
        # Set while a handler runs for a new instruction shape (memo.py).
        self._recording: memo.Recording | None = None

    # -- values and blocks ---------------------------------------------------

    def new_block(self) -> Block:
        b = Block(SSABlock(len(self.blocks)))
        self.blocks.append(b)
        return b

    def _undef(self, type_: str) -> Value:
        v = Value(type_)
        self._undefs.append(Op([v], f"ub.poison : {type_}", [], None))
        return v

    def emit(self, results: list[Value], template: str, operands: list[Value],
             loc: SourceLoc | None) -> None:
        op = Op(results, template, operands, loc)
        self.block.ops.append(op)
        if self._recording is not None:
            self._recording.emit(op)

    def new_value(self, type_: str) -> Value:
        v = Value(type_)
        if self._recording is not None:
            self._recording.new(v)
        return v

    def error(self, message: str, loc: SourceLoc | None) -> CompileError:
        return self.m.error(message, loc)

    def _edge(self, target: Block) -> tuple[SSABlock, int]:
        self._edge_ids += 1
        target.ssa.preds.append((self.block.ssa, self._edge_ids))
        return (target.ssa, self._edge_ids)

    def terminate(self, kind: str, targets: list[Block], pred: Value | None = None,
                  attrs: str = "", loc: SourceLoc | None = None) -> None:
        succs = [self._edge(t) for t in targets]
        self.block.term = Terminator(kind, succs, pred, attrs, loc)

    # -- registers -------------------------------------------------------------

    def declare_param(self, name: str, type_: str, fresh: bool = False) -> None:
        # A `.param` declared in a body (in each call's `{ }` scope, names
        # reused) is a new pseudo-register per declaration, so a call never
        # sees what an earlier call of the same name stored.
        reg = f"%param:{name}"
        if fresh:
            self._param_decls += 1
            reg = f"{reg}:{self._param_decls}"
        self.param_regs[name] = reg
        self.ssa.declare(reg, type_)

    def declare_local(self, var: ast.VarDecl) -> None:
        if var.type not in MLIR_TYPES:
            raise self.error(f"unsupported .local variable type '.{var.type}'", var.loc)
        size = element_bytes(var.type)
        for d in var.dims:
            if d is None:
                raise self.error(f"unsupported unsized .local variable '{var.name}'", var.loc)
            size *= d
        v = self.new_value("i64")
        align = var.align or element_bytes(var.type)
        # In the entry block, so it is one static allocation per thread.
        self.entry.ops.append(Op([v], f"ptx.local_var {{{{align = {align} : i64, "
                                       f"name = {quote(var.name)}, size = {size} : i64}}}} "
                                       ": i64", [], var.loc))
        self.locals[var.name] = v

    def reg_type(self, name: str, loc: SourceLoc) -> str:
        t = self.ssa.reg_type(name)
        if t is None:
            raise self.error(f"use of undeclared register '{name}'", loc)
        return t

    def read_reg(self, name: str, loc: SourceLoc) -> Value:
        self.reg_type(name, loc)
        v = self.ssa.read(self.block.ssa, name)
        if self._recording is not None:
            self._recording.read(name, v)
        return v

    def define(self, reg: str, value: Value) -> None:
        """`reg` holds `value` from here on in the current block."""
        self.ssa.write(self.block.ssa, reg, value)
        if self._recording is not None:
            self._recording.define(reg, value)

    def write_reg(self, operand: ast.Operand, value: Value, loc: SourceLoc) -> None:
        if isinstance(operand, ast.Sink):
            return
        if not isinstance(operand, ast.Reg):
            raise self.error("expected a register as destination", loc)
        want = self.reg_type(operand.name, loc)
        self.define(operand.name, self.coerce(value, want, loc))

    def coerce(self, value: Value, want: str, loc: SourceLoc, ptx_type: str = "") -> Value:
        """Reinterprets `value` as `want` (a register of another type of the same width)."""
        if value.type == want:
            return value
        if bits(value.type) != bits(want):
            raise self.error(
                f"operand of type {value.type} where {want} is expected", loc)
        result = self.new_value(want)
        type_attr = ptx_type or f"b{bits(want)}"
        self.emit([result], f"ptx.mov {{0}} {{{{type = #ptx.type<{type_attr}>}}}} "
                            f": {value.type} -> {want}", [value], loc)
        return result

    def constant(self, imm: ast.IntImm | ast.FloatImm, type_: str, loc: SourceLoc) -> Value:
        v = self.new_value(type_)
        if type_.startswith("i"):
            n = bits(type_)
            raw = imm.value if isinstance(imm, ast.IntImm) else imm.bits
            raw &= (1 << n) - 1
            if n > 1 and raw >= 1 << (n - 1):
                raw -= 1 << n
            # i1 constants are `true`/`false`, which take no type suffix.
            text = ("true" if raw else "false") if n == 1 else f"{raw} : {type_}"
            self.emit([v], f"arith.constant {text}", [], loc)
            return v
        n = bits(type_)
        if isinstance(imm, ast.FloatImm):
            if imm.width == n:
                pattern = imm.bits
            else:
                value = float_of_bits(imm.bits, imm.width)
                pattern = bits_of_float(value, n)
        else:
            pattern = bits_of_float(float(imm.value), n)
        self.emit([v], f"arith.constant 0x{pattern:0{n // 4}X} : {type_}", [], loc)
        return v

    def value(self, operand: ast.Operand, type_: str, loc: SourceLoc,
              ptx_type: str = "") -> Value:
        """An operand read as `type_` (registers, immediates, symbols)."""
        if isinstance(operand, ast.Reg):
            if operand.name in SPECIAL_REGS:
                return self.special_reg(operand.name, type_, loc)
            return self.coerce(self.read_reg(operand.name, loc), type_, loc, ptx_type)
        if isinstance(operand, ast.IntImm | ast.FloatImm):
            return self.constant(operand, type_, loc)
        if isinstance(operand, ast.Sym):
            if operand.name in self.params:
                raise self.error(
                    f"unsupported use of parameter '{operand.name}' as a value", loc)
            if operand.name == "WARP_SZ" and operand.name not in self.m.variables:
                return self.constant(ast.IntImm(32), type_, loc)  # PTX's warp size constant
            return self.address_of(operand.name, type_, loc)
        if isinstance(operand, ast.Not):
            inner = self.value(operand.operand, "i1", loc)
            result = self.new_value("i1")
            self.emit([result], "ptx.not {0} {{type = #ptx.type<pred>}} : i1", [inner], loc)
            return result
        raise self.error(f"unsupported operand {_describe(operand)}", loc)

    def special_reg(self, name: str, type_: str, loc: SourceLoc) -> Value:
        reg_type = register_type(name)
        v = self.new_value(reg_type)
        self.emit([v], f"ptx.sreg <{name[1:]}> : {reg_type}", [], loc)
        if reg_type != type_ and type_.startswith("i"):
            return self.coerce(v, type_, loc) if bits(type_) == bits(reg_type) else v
        return v

    def address_of(self, name: str, type_: str, loc: SourceLoc) -> Value:
        if name in self.locals:
            v = self.locals[name]
            if type_ == "i32":
                r = self.new_value("i32")
                self.emit([r], "ptx.cvt {0} {{src_type = #ptx.type<u64>, type = #ptx.type<u32>}}"
                               " : i64 -> i32", [v], loc)
                return r
            return v
        if name not in self.m.variables:
            if name in self.m.functions:  # a function pointer
                v = self.new_value("i64")
                if self.m.functions[name].kind == "entry":  # a device-side launch's child
                    self.emit([v], f"arith.constant {kernel_address(name)} : i64", [], loc)
                else:
                    self.emit([v], f"ptx.func_addr @{quote(name)} : i64", [], loc)
                return v
            raise self.error(f"unsupported reference to '{name}' (not a variable or "
                             "function)", loc)
        addr_type = type_ if type_ in ("i32", "i64") else "i64"
        v = self.new_value(addr_type)
        self.emit([v], f"ptx.addr_of @{quote(name)} : {addr_type}", [], loc)
        return v

    # -- import --------------------------------------------------------------

    @without_collector
    def run(self) -> str:
        fn = self.fn
        args = []
        for i, p in enumerate(fn.params):
            if p.dims:
                size = array_bytes(p.type, p.dims)
                t = f"!llvm.array<{size} x i8>"
            elif p.type in MLIR_TYPES:
                t = mlir_type(p.type)
            else:
                raise self.error(f"unsupported parameter type '.{p.type}'", p.loc)
            v = Value(t, f"%arg{i}")
            if p.dims and fn.kind == "entry":
                # A kernel's by-value aggregate keeps its `.align` (the
                # element's where none): the layout the launcher packs, and how
                # wide a target may load it.
                align = p.align or element_bytes(p.type)
                args.append(f"%arg{i}: {t} {{ptx.align = {align} : i64}}")
            else:
                args.append(f"%arg{i}: {t}")
            if p.space == "reg" and p.dims:
                raise self.error(f"'.reg' parameter '{p.name}' cannot be an array", p.loc)
            if p.space == "reg":  # `.func f(.reg .b64 %a)`: a register holding the argument
                self.ssa.declare(p.name, t)
                self.define(p.name, v)
            else:
                self.params[p.name] = v
        for r in fn.returns:
            t = param_value_type(r.type, r.dims)
            if t is None:
                raise self.error(f"unsupported return parameter '{r.name}' of '{fn.name}' "
                                 "(unknown type or unsized array)", r.loc)
            if r.space == "reg" and r.dims:
                raise self.error(f"'.reg' return value '{r.name}' cannot be an array", r.loc)
            if r.space == "reg":  # `.func (.reg .b32 %r) f`: `ret` returns the register
                self.ssa.declare(r.name, t)
            else:
                self.declare_param(r.name, t)
            self.result_types.append(t)
        # CC.CF, the carry flag of add.cc/addc/..., as a hidden predicate.
        self.ssa.declare(CARRY_REG, "i1")
        assert fn.body is not None
        self._collect_labels(fn.body)
        self._import_statements(fn.body)
        if self.block.term is None:
            self.terminate("ret", [], loc=fn.loc)
        self.ssa.seal([b.ssa for b in self.blocks], self.entry.ssa)
        printer = FunctionPrinter(self.m.quoted_filename, self.m.locations, self.m.line_offset)
        text = printer.function(fn, args, self.result_types, self.blocks, self._undefs)
        # Loops make the blocks a cycle of references (predecessor lists):
        # broken here, the function's blocks, ops and values are freed now,
        # not at the next full collection (collector.py).
        for b in self.blocks:
            b.ssa.preds.clear()
        self.ssa = SSABuilder(_no_undef)  # and the builder's bound self._undef
        return text

    def _collect_labels(self, body: tuple[ast.Statement, ...]) -> None:
        labels = self.labels
        for s in all_statements(body):
            if isinstance(s, ast.Label):
                if s.name in labels:
                    raise self.error(f"duplicate label '{s.name}'", s.loc)
                labels[s.name] = Block(SSABlock(-1))
            elif isinstance(s, ast.TargetList) and s.kind == "branchtargets":
                self.branch_targets[s.name] = s

    def _import_statements(self, stmts: tuple[ast.Statement, ...]) -> None:
        instruction = ast.Instruction
        recipes = memo.RECIPES if self.m.memo else None
        reg_types = self.ssa.reg_types
        for s in stmts:
            if s.__class__ is instruction:
                # The common case first: an unguarded instruction of a known
                # shape, in a block still open (what _dispatch would do).
                if recipes is not None and s.guard is None and self.block.term is None:
                    shape = memo.key(s, reg_types, recipes.shapes, SPECIAL_REGS)
                    if shape is not None:
                        replay = recipes.table.get(shape[0])
                        if replay is not None:
                            replay(self, shape[1], s.loc)
                            continue
                self._instruction(s)
            elif isinstance(s, ast.RegDecl):
                for name in s.names:
                    if s.type not in MLIR_TYPES:
                        raise self.error(f"unsupported register type '.{s.type}'", s.loc)
                    self.ssa.declare(name, mlir_type(s.type))
            elif isinstance(s, ast.Label):
                target = self.labels[s.name]
                target.ssa.index = len(self.blocks)
                self.blocks.append(target)
                if self.block.term is None:
                    self.terminate("bra", [target], loc=s.loc)
                self.block = target
            elif isinstance(s, ast.Block):
                self._import_statements(s.body)
            elif isinstance(s, ast.TargetList):
                pass  # read where used (brx.idx, call)
            elif isinstance(s, ast.NoUnroll):
                # In its block, where a loop header holds it.
                if self.block.term is not None:
                    self.block = self.new_block()
                self.emit([], "ptx.loop_nounroll", [], s.loc)
            elif isinstance(s, ast.VarDecl):
                # .shared/.global/.const declared in a body were hoisted to
                # module scope by ModuleImporter.
                if s.space == "param":
                    t = param_value_type(s.type, s.dims)
                    if t is None:
                        raise self.error(f"unsupported .param variable '{s.name}' "
                                         "(unknown type or unsized array)", s.loc)
                    self.declare_param(s.name, t, fresh=True)
                elif s.space == "local":
                    self.declare_local(s)
                elif s.name not in self.m.variables:
                    raise self.error(
                        f"unsupported function-scope variable '{s.name}' in .{s.space}", s.loc)
            else:
                raise TypeError(f"not a statement: {s!r}")

    def _instruction(self, inst: ast.Instruction) -> None:
        if self.block.term is not None:
            # Code after an unconditional branch without a label is unreachable
            # but still imported into a block of its own.
            self.block = self.new_block()
        if inst.opcode in _OWN_GUARD:
            HANDLERS[inst.opcode](self, inst)
            return
        if inst.guard is not None:
            pred = self.read_reg(inst.guard.reg, inst.loc)
            then_block, cont = self.new_block(), self.new_block()
            negated = " {negated}" if inst.guard.negated else ""
            self.terminate("cond_bra", [then_block, cont], pred, negated, inst.loc)
            self.block = then_block
            self._dispatch(inst)
            if self.block.term is None:
                self.terminate("bra", [cont], loc=inst.loc)
            self.block = cont
            return
        self._dispatch(inst)

    def _dispatch(self, inst: ast.Instruction) -> None:
        handler = HANDLERS.get(inst.opcode) or HANDLERS[OTHER]
        shape = (memo.key(inst, self.ssa.reg_types, memo.RECIPES.shapes, SPECIAL_REGS)
                 if self.m.memo else None)
        if shape is None:
            handler(self, inst)
            return
        k, names = shape
        replay = memo.RECIPES.table.get(k)
        if replay is not None:
            replay(self, names, inst.loc)
            return
        block, n_blocks, n_ops = self.block, len(self.blocks), len(self.block.ops)
        n_undefs, n_params, n_locals = len(self._undefs), len(self.param_regs), len(self.locals)
        rec = self._recording = memo.Recording(names, inst.loc)
        try:
            handler(self, inst)
        finally:
            self._recording = None
        # Kept only if the handler's whole effect is in the recording.
        if (rec.valid and self.block is block and block.term is None
                and len(self.blocks) == n_blocks and len(block.ops) - n_ops == rec.emits
                and len(self._undefs) == n_undefs and len(self.param_regs) == n_params
                and len(self.locals) == n_locals):
            memo.RECIPES.add(k, rec, Op)


Handler = Callable[[FunctionImporter, ast.Instruction], None]
# Handlers by opcode, registered by the instruction families' modules; the
# one of any other opcode is HANDLERS[OTHER] (generic.py: `ptx.inst`).
HANDLERS: dict[str, Handler] = {}
OTHER = ""
# Instructions whose guard is their condition: their handlers branch on it.
_OWN_GUARD = ("bra", "brx")


def handles(*opcodes: str) -> Callable[[Handler], Handler]:
    """Registers the decorated function as the handler of `opcodes`."""
    def register(fn: Handler) -> Handler:
        for op in opcodes:
            HANDLERS[op] = fn
        return fn
    return register


def _describe(operand: ast.Operand) -> str:
    return type(operand).__name__.lower()


def all_statements(stmts: tuple[ast.Statement, ...]) -> Iterator[ast.Statement]:
    """Every statement of `stmts`, those of nested blocks too, in order
    (iterative: a recursive closure would be a reference cycle)."""
    stack = [iter(stmts)]
    while stack:
        for s in stack[-1]:
            yield s
            if isinstance(s, ast.Block):
                stack.append(iter(s.body))
                break
        else:
            stack.pop()
