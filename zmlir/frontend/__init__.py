"""PTX front end: text -> zmlir.frontend.ast.

The parser (lark) loads when parse_ptx is first asked for, so the driver
can use what needs no parser (link.py) where the compiler is not installed
(the CUDA passthrough on a machine with precompiled NVPTX)."""

from __future__ import annotations

from typing import Any

__all__ = ["parse_ptx"]


def __getattr__(name: str) -> Any:
    if name == "parse_ptx":
        from zmlir.frontend.parser import parse_ptx

        return parse_ptx
    raise AttributeError(f"module 'zmlir.frontend' has no attribute {name!r}")
