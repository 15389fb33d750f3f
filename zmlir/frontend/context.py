"""What one process needs to import the functions of one module, a batch
at a time (stream.py), in this process or in a worker (pool.py): the
module text parsed whole, or its declarations parsed as they are looked up
(declarations.py); each batch parsed, imported and, when asked, verified
and printed by MLIR."""

from __future__ import annotations

from dataclasses import dataclass, replace

from zmlir.diagnostics import SourceLoc
from zmlir.frontend import ast
from zmlir.frontend.collector import without_collector
from zmlir.frontend.declarations import Declarations, header_line, moved, parse_pieces
from zmlir.frontend.importer import ModuleImporter


class ImportContext:
    """What one process needs to import functions of one module: the module
    text parsed whole, or its `declarations` parsed as they are looked up
    (a worker's)."""

    def __init__(self, module: ast.Module, filename: str, buffer: str,
                 declarations: Declarations | None = None) -> None:
        # The module variables' ptx.var lines (importing them registers them).
        self.variable_lines: list[str] | None = None
        if declarations is None:
            self.importer = ModuleImporter(module, filename)
            self.variable_lines = self.importer.module_variables()
        else:
            self.importer = ModuleImporter(module, filename, variables=declarations.variables,
                                           functions=declarations.functions,
                                           _symbol_names=declarations)
        self.declarations = declarations
        self.module_names = {v.name for v in module.variables}
        self.filename = filename
        self.buffer = buffer  # the name native parse errors are reported under
        self.prefix = header_line(module)

    def module_part(self, k: int, groups: int, verify: bool, printing: bool) -> ModulePart:
        """The output of the k-th of `groups` parts of the module text (see
        Declarations.group; all of it in the first, if it was parsed whole)."""
        d = self.declarations
        if d is None:
            if k:
                return ModulePart("", [], [], ())
            module = self.importer.module
            importer = self.importer
            assert self.variable_lines is not None
            lines = self.variable_lines
            entries = tuple(fn for fn in module.functions if fn.kind == "entry")
        else:
            parsed = d.group(k, groups)
            if parsed is None:
                return ModulePart("", [], [], ())
            module, offset, decls = parsed
            importer = ModuleImporter(module, self.filename, _symbol_names=d,
                                      line_offset=offset)
            lines = importer.module_variables()
            entries = tuple(f for f in decls if isinstance(f, ast.Function) and f.kind == "entry")
        if any(fn.body is not None for fn in module.functions):
            raise Unsplittable  # a body the scan didn't take for a function's
        part = ModulePart(importer.header() if k == 0 else "", lines,
                          [v.name for v in module.variables], entries)
        if verify:
            header, printed_vars, _ = self.verify(lines, [], printing)
            if printing:
                part.printed_header, part.printed_variables = header, printed_vars
        return part

    def is_module_variable(self, name: str) -> bool:
        if self.declarations is not None:
            return self.declarations.is_variable(name)
        return name in self.module_names

    def parse(self, work: list[tuple[str, int, int]]) -> tuple[list[ast.Function], int]:
        """The function definitions of `work`, parsed at once: after the
        prefix line, each at its own line and column, less an offset (the
        first at line 2); returns them and that offset."""
        m, offset = parse_pieces(self.prefix, work, self.filename)
        defined = [f for f in m.functions if f.body is not None]
        if len(defined) != len(work) or len(m.functions) != len(work) or m.variables:
            raise Unsplittable  # lark saw other than the definitions split() did
        return defined, offset

    def function(self, fn: ast.Function, offset: int) -> tuple[list[ast.VarDecl], list[str],
                                                                 str]:
        """One function definition (parsed `offset` lines up): its body
        variables (as declared and as ptx.var texts) and its func.func text."""
        imp = self.importer
        imp.line_offset = offset
        try:
            body_vars = imp.body_variables(fn)
            for v in body_vars:  # across functions: import_streamed checks
                if self.is_module_variable(v.name):
                    raise imp.error(f"unsupported redeclaration of '{v.name}' in a function "
                                    "body", v.loc)
            var_lines, func = imp.function(fn, body_vars)
        finally:
            imp.line_offset = 0
        located = [ast.VarDecl(v.space, v.type, v.name, SourceLoc(v.loc.line + offset, v.loc.col))
                   for v in body_vars]
        return located, var_lines, func

    @without_collector
    def batch(self, work: list[tuple[str, int, int]], verify: bool, printing: bool,
              locations: bool = True) -> BatchResult:
        """Imports the functions of `work`; verified, when asked, by MLIR
        (and printed, with `printing`).

        Without `locations` the text (kept only for verification) has no
        `loc(...)`, which saves MLIR a location per op; if MLIR rejects it,
        the batch is imported again with locations for the diagnostic.
        """
        names: list[ast.VarDecl] = []
        var_lines: list[str] = []
        funcs: list[str] = []
        self.importer.locations = locations
        try:
            functions, offset = self.parse(work)
            for fn in functions:
                decls, lines, func = self.function(fn, offset)
                names += decls
                var_lines += lines
                funcs.append(func)
        finally:
            self.importer.locations = True
        entries = tuple(moved(replace(fn, body=None), offset)
                        for fn in functions if fn.kind == "entry")
        result = BatchResult(names, var_lines, funcs, entries)
        if verify:
            try:
                _, result.printed_vars, result.printed_funcs = self.verify(var_lines, funcs,
                                                                           printing)
            except NativeError:
                if locations:
                    raise
                for v in names:  # registered by the first import
                    self.importer.variables.pop(v.name, None)
                return self.batch(work, verify, printing, locations=True)
        return result

    def verify(self, var_lines: list[str], funcs: list[str],
               printing: bool = True) -> tuple[str, str, str]:
        """MLIR's print of a module of these pieces: (header line, variables,
        functions), each with its newlines; empty strings without `printing`
        (verified only)."""
        from zmlir import _native  # here: the parser alone doesn't need MLIR

        text = "\n".join([self.importer.header(), *var_lines, *funcs, "}"]) + "\n"
        try:
            verified = _native.Module(text, self.buffer)
        except RuntimeError as err:
            raise NativeError(str(err), text) from None
        if not printing:
            return "", "", ""
        printed = verified.text()
        # `module attributes {...} {`, the variables, the functions, `}`.
        first = printed.index("\n") + 1
        body = printed[first:printed.rindex("}")]
        if body.startswith("  func.func "):
            cut = 0
        else:
            cut = body.find("\n  func.func ")
            cut = len(body) if cut < 0 else cut + 1
        return printed[:first], body[:cut], body[cut:]


@dataclass
class BatchResult:
    body_vars: list[ast.VarDecl]
    var_lines: list[str]
    funcs: list[str]
    entries: tuple[ast.Function, ...]  # the kernels' signatures
    printed_vars: str = ""
    printed_funcs: str = ""


class Unsplittable(Exception):
    """A function's text didn't parse as one definition: parse the module whole."""


class NativeError(Exception):
    """MLIR rejected a batch: the message and the text it was given."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message, text)
        self.message = message
        self.text = text


@dataclass
class ModulePart:
    """What (a part of) the module text gives the output."""

    header: str  # `module attributes {...} {` (from the first part)
    variables: list[str]  # the module-scope ptx.var texts
    variable_names: list[str]
    entries: tuple[ast.Function, ...]  # signatures of the kernels
    printed_header: str = ""  # with `printing`
    printed_variables: str = ""

    @staticmethod
    def joined(parts: list[ModulePart]) -> ModulePart:
        names = [n for p in parts for n in p.variable_names]
        if sum(len(set(p.variable_names)) for p in parts) != len(set(names)):
            # Parts verified apart miss a symbol declared in two: parse it whole.
            raise Unsplittable
        return ModulePart(parts[0].header, [v for p in parts for v in p.variables], names,
                          tuple(e for p in parts for e in p.entries), parts[0].printed_header,
                          "".join(p.printed_variables for p in parts))
