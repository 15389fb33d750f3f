"""Imports a parsed PTX module into the MLIR `ptx` dialect (as MLIR text).

Each PTX instruction becomes one ptx op carrying all its modifiers; registers
become SSA values (see ssa.py); labels and guarded instructions become blocks
and `ptx.cond_bra`. Every op carries the PTX source location, so later
diagnostics point at `file.ptx:line:col`.

    module.py     the module: header, variables, functions; import_module
    core.py       one function: blocks, registers as SSA values, operands
                  read as values, the dispatch of instructions to handlers
                  (and to recipes, memo.py)
    printer.py    a function's blocks of ops as text
    common.py     what handlers share: modifiers sorted into kinds, operand
                  checks and reads, attribute text
    generic.py    `ptx.inst`, for instructions with no dedicated op
    ptxtypes.py   PTX types as MLIR types; sreg.py: special registers

and a module of handlers per instruction family, as the lowering has them:
arith.py, bits.py, convert.py, memory.py, atomics.py, warp.py, matrix.py,
asynccopy.py, mbarrier.py, texture.py, video.py, control.py, calls.py.
"""

from zmlir.frontend.importer import (  # noqa: F401  (each registers its handlers)
    arith,
    asynccopy,
    atomics,
    bits,
    calls,
    control,
    convert,
    generic,
    matrix,
    mbarrier,
    memory,
    texture,
    video,
    warp,
)
from zmlir.frontend.importer.core import FunctionImporter
from zmlir.frontend.importer.module import ModuleImporter, import_module

__all__ = ["FunctionImporter", "ModuleImporter", "import_module"]
