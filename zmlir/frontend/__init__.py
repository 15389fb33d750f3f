"""PTX front end: text -> zmlir.frontend.ast."""

from zmlir.frontend.parser import parse_ptx

__all__ = ["parse_ptx"]
