"""The CUDA test programs of test/cuda/programs: each one .cu file, or a
folder of .cu files linked together with the nvcc flags in the folder's
`nvcc_flags` file (e.g. -rdc=true).

Standard library only: tools/run_programs_passthrough.py reads this on an
NVIDIA machine that has neither zmlir's dependencies nor LLVM."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from support import PROGRAMS_DIR

# Programs known to fail on the CPU (OpenCL) backend, with the reason: the
# test suite expects each to fail (a strict xfail) and the demo says so.
CPU_PENDING: dict[str, str] = {
    "pipeline_roles": "a cuda::pipeline's producer and consumer warps wait apart; Intel's "
                      "runtime takes their waits' barriers for one another's, and a wait "
                      "finds its phase stuck (the launch traps)",
}


@dataclass(frozen=True)
class Program:
    name: str
    sources: tuple[Path, ...]
    include: tuple[Path, ...]  # -I folders: its own folder, then PROGRAMS_DIR (check.h)
    flags: tuple[str, ...] = ()  # a folder's `nvcc_flags` file (e.g. -rdc=true)


def programs(root: Path = PROGRAMS_DIR) -> list[Program]:
    """Every *.cu in `root`, and every subdirectory of .cu files as one
    program (one translation unit each: several modules, or one linked
    module with `-rdc=true` in the folder's `nvcc_flags`), by name."""
    found = []
    for path in sorted(root.iterdir()):
        if path.suffix == ".cu":
            found.append(Program(path.stem, (path,), (root,)))
        elif path.is_dir() and any(path.glob("*.cu")):
            flags = path / "nvcc_flags"
            found.append(Program(path.name, tuple(sorted(path.glob("*.cu"))), (path, root),
                                 tuple(flags.read_text().split()) if flags.is_file() else ()))
    return found


def nvcc_arguments(program: Program) -> list[str]:
    """The flags, -I folders and sources to give nvcc for `program`."""
    return [*program.flags, *[f"-I{d}" for d in program.include], *map(str, program.sources)]
