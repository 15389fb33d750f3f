"""cuBLAS's 64-bit integer API (`cublasDtrsm_v2_64`, ...) over our 32-bit
functions: generated C, one wrapper per `_64` function of NVIDIA's header
whose 32-bit sibling is ours and differs from it only in `int64_t` sizes,
strides and counts passed by value. Each wrapper passes its integers on where
they fit in an int (the host BLAS's integers) and otherwise answers
NOT_SUPPORTED, naming itself: never a truncated size. A function whose
integers are arrays or results (grouped batches, `cublasIsamax_v2_64`'s index)
is left out, and stays NOT_SUPPORTED.

NVIDIA's own libraries call these (cuSOLVER's `cusolverDnDpotrs` calls
`cublasDtrsm_v2_64`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DECLARATION = re.compile(
    r"(?:CUBLASAPI\s+)?cublasStatus_t\s+CUBLASWINAPI\s+(\w+)\s*\(([^;{]*?)\)\s*;", re.S)


@dataclass(frozen=True)
class Param:
    type: str  # whitespace-normalised, the name and any `[]` taken out
    name: str
    text: str  # as declared


def _params(text: str) -> list[Param]:
    params = []
    for raw in text.split(","):
        declared = " ".join(raw.split())
        match = re.match(r"(.*?)\b(\w+)\s*((?:\[\s*\])?)$", declared)
        if not match:
            raise ValueError(f"cannot read the parameter {declared!r}")
        kind = re.sub(r"\s*\*\s*", "*", match.group(1).strip()) + match.group(3).replace(" ", "")
        params.append(Param(kind, match.group(2), declared))
    return params


def prototypes(header: str) -> dict[str, list[Param]]:
    """Every cuBLAS function NVIDIA's header declares, by name."""
    return {name: _params(params) for name, params in _DECLARATION.findall(header)}


def _wrapper(name: str, wide: list[Param], narrow: list[Param]) -> str | None:
    if len(wide) != len(narrow):
        return None
    checks, args = [], []
    for w, n in zip(wide, narrow, strict=True):
        if w.type == n.type:
            args.append(w.name)
        elif w.type == "int64_t" and n.type == "int":
            checks.append(f"{w.name} < INT_MIN || {w.name} > INT_MAX")
            args.append(f"(int){w.name}")
        else:
            return None
    if not checks:
        return None
    sibling = name.removesuffix("_64")
    narrow_params = ", ".join(p.text for p in narrow)
    wide_params = ", ".join(p.text for p in wide)
    return (f"cublasStatus_t IMPL({sibling})({narrow_params});\n"
            f"cublasStatus_t IMPL({name})({wide_params});\n"
            f"cublasStatus_t IMPL({name})({wide_params}) {{\n"
            f"  if ({' || '.join(checks)}) {{\n"
            f'    zmlir_log(1, "{name}: an integer beyond 32 bits; returning "'
            f" ZMLIR_NOT_SUPPORTED_NAME);\n"
            f"    return ZMLIR_NOT_SUPPORTED;\n"
            f"  }}\n"
            f"  return IMPL({sibling})({', '.join(args)});\n"
            f"}}\n"
            # The header declares the __half functions for C++ alone.
            + ("" if "__half" in wide_params else f"ABI_CHECK({name});\n"))


def wrappers_c(header: str, ours: set[str]) -> str:
    """C source of the wrappers for the `_64` functions of `header` (NVIDIA's
    cublas_api.h) whose 32-bit sibling is in `ours` and which are not."""
    declared = prototypes(header)
    parts = ["#include <cublas_v2.h>", "#include <limits.h>", "#include <stdint.h>", "",
             '#include "route.h"', "",
             "/* C has no __half: a pointer to one is a pointer to 16 bits (cublas.c). */",
             "typedef uint16_t __half;", ""]
    for name, wide in declared.items():
        sibling = name.removesuffix("_64")
        if name == sibling or sibling not in ours or name in ours or sibling not in declared:
            continue
        code = _wrapper(name, wide, declared[sibling])
        if code:
            parts.append(code)
    return "\n".join(parts)
