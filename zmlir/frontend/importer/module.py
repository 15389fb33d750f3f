"""The import of a module: its header, its variables (`ptx.var`, with
their initializers) and each function (core.FunctionImporter)."""

from __future__ import annotations

import functools
import os
from collections.abc import Container
from dataclasses import dataclass, field
from functools import cached_property

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast
from zmlir.frontend.collector import without_collector
from zmlir.frontend.importer import samplerref, scoping
from zmlir.frontend.importer.core import FunctionImporter, all_statements
from zmlir.frontend.importer.ptxtypes import (
    MLIR_TYPES,
    bits_of_float,
    element_bytes,
    float_of_bits,
    quote,
)

# `.texref`/`.surfref`/`.samplerref` variables: the prefix of their
# descriptor's symbol (the driver's cuModuleGetTexRef/GetSurfRef look it up),
# its size.
REFERENCE_PREFIXES = {"texref": "__zmlir_texref_", "surfref": "__zmlir_surfref_",
                      "samplerref": "__zmlir_samplerref_"}
DESCRIPTOR_BYTES = 128


def reference_symbol(var: ast.VarDecl) -> str:
    """The descriptor variable of texture or surface reference `var`."""
    return REFERENCE_PREFIXES[var.type] + var.name


@functools.cache
def max_variable_bytes() -> int:
    """The largest module variable compiled: half the host's physical memory.

    The lowering materializes each variable's bytes on the host (its
    initializer, zeros included; convertVariables), so one larger than that
    would exhaust the compiler's memory and abort it (16 GB on a 23 GB host),
    and it is what the CPU device reports as its total memory
    (cuDeviceTotalMem), so no variable past it could be allocated there.
    ptxas takes any size below 2**64."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError):
        return 8 << 30


@dataclass
class ModuleImporter:
    module: ast.Module
    filename: str
    variables: dict[str, ast.VarDecl] = field(default_factory=dict)
    functions: dict[str, ast.Function] = field(default_factory=dict)
    # Names an initializer may take the address of (see _symbols).
    _symbol_names: Container[str] | None = None
    # Added to every line number printed or reported: the line, less one, at
    # which the text parsed into `module` starts in the file (stream.py).
    line_offset: int = 0
    # Without locations the text is smaller and MLIR keeps no location per
    # op in its context (stream.py verifies that way, then with locations
    # only to report an error).
    locations: bool = True
    # Replay instruction recipes (memo.py); off only to check them.
    memo: bool = True

    def __post_init__(self) -> None:
        for fn in self.module.functions:
            # A definition wins over a declaration of the same name.
            if fn.name not in self.functions or fn.body is not None:
                self.functions[fn.name] = fn

    @cached_property
    def module_scope(self) -> tuple[ast.VarDecl, ...]:
        """The module's variables, one per name (scoping.module_variables)."""
        return scoping.module_variables(self.module.variables, self.error)

    @cached_property
    def _hoisted(self) -> tuple[list[ast.VarDecl], list[ast.Function]]:
        names = {v.name for v in self.module.variables} | set(self.functions)
        body_scope, renames = scoping.hoist(names, self.module.functions, self.error)
        return body_scope, [scoping.rename_in_function(fn, renames[fn.name])
                            for fn in self.module.functions]

    @property
    def body_scope(self) -> list[ast.VarDecl]:
        """The body variables hoisted to module scope (scoping.hoist)."""
        return self._hoisted[0]

    @property
    def renamed_functions(self) -> list[ast.Function]:
        """The functions, referring to their body variables by module name."""
        return self._hoisted[1]

    @property
    def quoted_filename(self) -> str:
        return quote(self.filename)

    def error(self, message: str, loc: SourceLoc | None) -> CompileError:
        if loc is not None and self.line_offset:
            loc = SourceLoc(loc.line + self.line_offset, loc.col)
        return CompileError(message, self.filename, loc)

    def header(self) -> str:
        """The opening line of the module (its directives as attributes)."""
        mod = self.module
        target = ", ".join(quote(t) for t in mod.target)
        return (f"module attributes {{ptx.address_size = {mod.address_size} : i64, "
                f"ptx.target = [{target}], "
                f'ptx.version = "{mod.version[0]}.{mod.version[1]}"}} {{')

    @without_collector
    def run(self) -> str:
        lines = [self.header()]
        for var in (*self.module_scope, *self.body_scope):
            lines.append(self._variable(var))
        for fn in self.renamed_functions:
            if fn.body is None:
                continue
            lines.append(self._function_text(fn))
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- one function at a time (stream.py) ----------------------------------------

    def module_variables(self) -> list[str]:
        """The `ptx.var` lines of the module-scope variables (and registers them)."""
        # As declared: a name declared twice makes MLIR reject the batch, and
        # the whole-module import (module_scope) then takes the module.
        return [self._variable(var) for var in self.module.variables]

    def body_variables(self, fn: ast.Function) -> list[ast.VarDecl]:
        """`fn`'s `.shared`/`.global`/`.const` variables, which are module
        symbols (see _function_scope_variables)."""
        return [s for s in all_statements(fn.body or ())
                if isinstance(s, ast.VarDecl) and s.space in ("shared", "global", "const")]

    def function(self, fn: ast.Function, body_vars: list[ast.VarDecl]) -> tuple[list[str], str]:
        """The `ptx.var` lines of `fn`'s body variables (registered, so `fn`
        can take their addresses) and `fn` as a `func.func`."""
        var_lines = [self._variable(var) for var in body_vars]
        return var_lines, self._function_text(fn)

    def _function_text(self, fn: ast.Function) -> str:
        if fn.kind == "entry":
            self._check_parameter_space(fn)
        return FunctionImporter(self, fn).run()

    def _check_parameter_space(self, fn: ast.Function) -> None:
        """A kernel's parameters fit what ptxas takes: 4352 bytes, or 32764
        from PTX ISA 8.1 (a launch copies them all)."""
        end = 0
        for param in fn.params:
            if param.type not in MLIR_TYPES:
                return  # the function's import says it is unsupported, located
            size = element_bytes(param.type)
            count = 1
            for d in param.dims:
                count *= d or 0
            align = param.align or size
            end = -(-end // align) * align + size * count
        limit = 32764 if self.module.version >= (8, 1) else 4352
        if end > limit:
            raise self.error(f"kernel '{fn.name}' uses {end} bytes of parameter space, more "
                             f"than the {limit} bytes of PTX ISA {self.module.version[0]}."
                             f"{self.module.version[1]}", fn.loc)

    def _variable(self, var: ast.VarDecl) -> str:
        if var.space not in ("global", "shared", "const"):
            raise self.error(f"unsupported module variable in .{var.space}", var.loc)
        if var.type in REFERENCE_PREFIXES:
            return self._reference(var)
        if var.type not in MLIR_TYPES:
            raise self.error(f"unsupported variable type '.{var.type}'", var.loc)
        self.variables[var.name] = var
        count = 1
        for d in var.dims:
            count *= d if d is not None else 0
        if var.dims and var.dims[-1] is None and var.init is not None:
            count = len(_flatten(var.init))
        nbytes = count * element_bytes(var.type)
        if nbytes > max_variable_bytes():
            raise self.error(f"'.{var.space}' variable '{var.name}' of {nbytes} bytes is larger "
                             f"than the {max_variable_bytes()} bytes zmlir compiles (half the "
                             "host's memory)", var.loc)
        attrs = [f"space = #ptx.space<{var.space}>", f"type = #ptx.type<{var.type}>"]
        if count != 1:
            attrs.append(f"count = {count} : i64")
        if var.align:
            attrs.append(f"align = {var.align} : i64")
        if var.linkage:
            attrs.append(f"linkage = {quote(var.linkage)}")
        for attribute in var.attributes:
            # `.attribute(.managed)`: a __managed__ variable, host-accessible
            # at the address the driver gives (PTX ISA, Variable Attributes).
            # The other one, `.unified(...)`, we do not support yet.
            if attribute != "managed":
                raise self.error(f"unsupported variable attribute '.{attribute}' on "
                                 f"'{var.name}'", var.loc)
            if var.space != "global":
                raise self.error(f"'.attribute(.managed)' on '{var.name}' in .{var.space} "
                                 "(only .global variables can be managed)", var.loc)
            attrs.append("managed")
        if var.init is not None:
            data, addresses = self._initializer(var)
            attrs.append(f"init = array<i8: {', '.join(map(str, data))}>")
            if addresses:
                attrs.append(f"init_addresses = [{', '.join(addresses)}]")
        loc = (f' loc({self.quoted_filename}:{var.loc.line + self.line_offset}:{var.loc.col})'
               if self.locations else "")
        return f"  ptx.var @{quote(var.name)} {{{', '.join(attrs)}}}{loc}"

    def _reference(self, var: ast.VarDecl) -> str:
        """A `.global .texref`/`.surfref` as the descriptor the driver writes
        (docs/textures.md): a 128-byte variable named with the reference's
        prefix, whose address the lookups take as their object handle; a
        `.samplerref` as the descriptor its initializer gives (samplerref.py)."""
        if var.type == "samplerref":
            sampler = samplerref.parse(var)
            if isinstance(sampler, str):
                raise self.error(f"unsupported .samplerref '{var.name}' ({sampler})", var.loc)
            self.variables[var.name] = var
            init = tuple(sampler.descriptor())
            return self._variable(ast.VarDecl("global", "b8", reference_symbol(var), var.loc,
                                              align=16, dims=(len(init),), init=init,
                                              linkage=var.linkage))
        if var.space != "global" or var.dims or var.init is not None or var.attributes:
            raise self.error(f"unsupported .{var.type} '{var.name}' (only a plain .global "
                             "declaration)", var.loc)
        self.variables[var.name] = var  # the name the instructions use
        descriptor = ast.VarDecl("global", "b8", reference_symbol(var), var.loc, align=16,
                                 dims=(DESCRIPTOR_BYTES,), linkage=var.linkage)
        return self._variable(descriptor)

    def _initializer(self, var: ast.VarDecl) -> tuple[list[int], list[str]]:
        """The initializer's bytes, and a `#ptx.init_addr` for each element
        that holds the address of a symbol (zero in the bytes)."""
        size = element_bytes(var.type)
        width = size * 8
        is_float = var.type.startswith("f")
        out = bytearray()
        addresses: list[str] = []
        for item in _flatten(var.init):
            if isinstance(item, ast.Sym):
                item = ast.SymOffset(item.name, 0)
            if isinstance(item, ast.SymOffset):
                if size not in (4, 8) or is_float:
                    raise self.error(f"unsupported initializer for '{var.name}' (a symbol's "
                                     f"address in a .{var.type} element)", var.loc)
                if item.name not in self._symbols():
                    raise self.error(f"initializer of '{var.name}' refers to unknown symbol "
                                     f"'{item.name}'", var.loc)
                params = [f"offset = {len(out)}", f"symbol = @{quote(item.name)}"]
                if item.offset:
                    params.append(f"addend = {item.offset}")
                if item.generic:
                    params.append("generic = true")
                addresses.append(f"#ptx.init_addr<{', '.join(params)}>")
                out += bytes(size)
                continue
            if isinstance(item, int):
                pattern = bits_of_float(float(item), width) if is_float else item
            elif isinstance(item, ast.IntImm):
                pattern = bits_of_float(float(item.value), width) if is_float else item.value
            elif isinstance(item, ast.FloatImm):
                pattern = (item.bits if item.width == width
                           else bits_of_float(float_of_bits(item.bits, item.width), width))
            else:
                raise self.error(f"unsupported initializer for '{var.name}' "
                                 "(addresses of symbols)", var.loc)
            out += (pattern & ((1 << width) - 1)).to_bytes(size, "little")
        return [b - 256 if b >= 128 else b for b in out], addresses

    def _symbols(self) -> Container[str]:
        """Names an initializer may take the address of: variables and functions."""
        if self._symbol_names is None:
            mod = self.module
            self._symbol_names = {v.name for v in mod.variables} | {
                f.name for f in mod.functions} | {v.name for v in self.body_scope}
        return self._symbol_names


def _flatten(init: object) -> list[object]:
    if isinstance(init, tuple | list):
        result: list[object] = []
        for item in init:
            result.extend(_flatten(item))
        return result
    return [init]


def import_module(module: ast.Module, filename: str | None = None, *, memo: bool = True) -> str:
    """The ptx-dialect MLIR text for a parsed PTX module (`memo=False` runs
    every instruction's handler, to check the recipes against)."""
    return ModuleImporter(module, filename or module.filename, memo=memo).run()
