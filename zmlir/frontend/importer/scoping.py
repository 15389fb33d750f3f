"""Module-scope names from PTX's scopes: variables declared inside function
bodies become module symbols (nvcc demotes a kernel's `__shared__` arrays
into its body), and repeated `.extern` declarations name one variable.

PTX scopes a body's `.shared`/`.global`/`.const` variable to that body: two
kernels may each declare `buf`, and a body's `buf` hides a module's. Hoisted
to module scope, such a variable is renamed where its name is taken (by a
module variable, a function, or an earlier body's variable), and the body's
references follow it (`rename_in_function`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast
from zmlir.frontend.importer.core import all_statements

HOISTED_SPACES = ("shared", "global", "const")


def module_variables(variables: Iterable[ast.VarDecl],
                     error: Callable[[str, SourceLoc | None], CompileError]
                     ) -> tuple[ast.VarDecl, ...]:
    """The module's variables, one per name: a repeated `.extern`
    declaration (the same array declared by several headers) adds nothing,
    and a definition wins over declarations; declarations that disagree,
    or two definitions, are errors, in ptxas's words."""
    kept: dict[str, ast.VarDecl] = {}
    for var in variables:
        previous = kept.get(var.name)
        if previous is None:
            kept[var.name] = var
            continue
        extern = (previous.linkage == "extern", var.linkage == "extern")
        same = (previous.space, previous.type) == (var.space, var.type)
        if not any(extern):
            raise error(f"duplicate definition of variable '{var.name}' (first defined at "
                        f"line {previous.loc.line})", var.loc)
        if not same:
            raise error(f"inconsistent redefinition of variable '{var.name}' (first "
                        f"declared at line {previous.loc.line})", var.loc)
        if extern == (True, False):
            kept[var.name] = var  # the definition
    return tuple(kept.values())


def hoist(module_names: set[str], functions: Iterable[ast.Function],
          error: Callable[[str, SourceLoc | None], CompileError]
          ) -> tuple[list[ast.VarDecl], dict[str, dict[str, str]]]:
    """The variables declared in the functions' bodies, as module variables,
    and for each function the renaming of its own (body name -> module
    name; empty where no name was taken)."""
    taken = set(module_names)
    hoisted: list[ast.VarDecl] = []
    renames: dict[str, dict[str, str]] = {}
    for fn in functions:
        renamed: dict[str, str] = {}
        own: set[str] = set()
        for s in all_statements(fn.body or ()):
            if not (isinstance(s, ast.VarDecl) and s.space in HOISTED_SPACES):
                continue
            if s.name in own:  # one body, two blocks: a name per block
                raise error(f"unsupported redeclaration of '{s.name}' in a nested block of "
                            f"'{fn.name}'", s.loc)
            own.add(s.name)
            name = s.name
            if name in taken:
                name = _fresh(f"{s.name}_{fn.name}", taken)
                renamed[s.name] = name
            taken.add(name)
            hoisted.append(replace(s, name=name))
        renames[fn.name] = renamed
    return hoisted, renames


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def rename_in_function(fn: ast.Function, renamed: dict[str, str]) -> ast.Function:
    """`fn` with its body's references to its hoisted variables renamed."""
    if not renamed or fn.body is None:
        return fn
    return replace(fn, body=tuple(_statement(s, renamed) for s in fn.body))


def _statement(s: ast.Statement, renamed: dict[str, str]) -> ast.Statement:
    if isinstance(s, ast.Instruction):
        return replace(s, operands=tuple(_operand(o, renamed) for o in s.operands))
    if isinstance(s, ast.Block):
        return replace(s, body=tuple(_statement(b, renamed) for b in s.body))
    if isinstance(s, ast.VarDecl) and s.space in HOISTED_SPACES and s.name in renamed:
        return replace(s, name=renamed[s.name])
    return s


def _operand(o: ast.Operand, renamed: dict[str, str]) -> ast.Operand:
    if isinstance(o, ast.Sym) and o.name in renamed:
        return replace(o, name=renamed[o.name])
    if isinstance(o, ast.Addr) and isinstance(o.base, ast.Sym) and o.base.name in renamed:
        return replace(o, base=replace(o.base, name=renamed[o.base.name]))
    if isinstance(o, ast.Vec):
        return replace(o, elems=tuple(_operand(e, renamed) for e in o.elems))
    if isinstance(o, ast.Pair):
        return replace(o, first=_operand(o.first, renamed), second=_operand(o.second, renamed))
    if isinstance(o, ast.Not):
        return replace(o, operand=_operand(o.operand, renamed))
    return o
