"""User-facing compiler diagnostics: one `file:line:col: error: message` line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A 1-based line and column in a PTX source file."""

    line: int
    col: int


class CompileError(Exception):
    """A diagnostic about the user's input; printed as one line, never a traceback."""

    def __init__(self, message: str, filename: str = "<input>", loc: SourceLoc | None = None):
        self.message = message
        self.filename = filename
        self.loc = loc
        super().__init__(str(self))

    def with_filename(self, filename: str) -> CompileError:
        return CompileError(self.message, filename, self.loc)

    def __str__(self) -> str:
        if self.loc is None:
            return f"{self.filename}: error: {self.message}"
        return f"{self.filename}:{self.loc.line}:{self.loc.col}: error: {self.message}"
