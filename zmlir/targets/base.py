"""The target plugin interface and registry.

A target is one class in `zmlir/targets/<name>/`: it names its LLVM triple,
the options the ptx-to-std lowering needs (address spaces, how kernels reach
shared memory, warp shape; the C++ side of the same target, its TargetInfo,
sits beside it), its ordered compilation stages after the import (as
Triton's backends do), what its binary is, and what the runtime must do for
its kernels. The compiler, the CLI and the driver ask the target; none of
them tests a target's name. docs/adding-a-target.md walks through a new one.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

# The first stage, the frontend's for every target: PTX imported into the ptx dialect.
IMPORT_STAGE = "ptx-mlir"
# The stage whose output carries the kernels' metadata (zmlir.static_shared_bytes, ...).
KERNEL_METADATA_STAGE = "std-mlir"


@dataclass(frozen=True)
class Stage:
    """One named step of a target's compilation after the import.

    `run` takes what the previous stage carried (first the verified ptx
    dialect module, a zmlir._native.Module) and returns what it carries to
    the next stage and its own output (the text or bytes `--emit NAME`
    writes). A `goal_only` stage runs only when it is the stage asked for:
    no later stage takes its output (assembly, beside the binary).
    """

    name: str
    run: Callable[[Any], tuple[Any, str | bytes]]
    goal_only: bool = False


@dataclass(frozen=True)
class LoweringOptions:
    """Options of the convert-ptx-to-std pass for one target."""

    generic_address_space: int = 0
    global_address_space: int = 1
    shared_address_space: int = 3
    const_address_space: int = 4
    local_address_space: int = 5
    shared_window: str = "global"  # or "kernel-arg"
    subgroup_size: int = 0
    # The lowering's TargetInfo (zmlir/lowering/TargetInfo.h), by the name
    # its `target` option gives it.
    target: str = "generic"
    wave_size: int = 32
    # Texture and surface handles are the vendor's objects, read by the
    # target's own instructions (NVPTX under the CUDA passthrough with
    # vendor textures; docs/textures.md).
    native_textures: bool = False

    def __post_init__(self) -> None:
        if self.shared_window not in ("global", "kernel-arg"):
            raise ValueError(f"shared_window must be 'global' or 'kernel-arg', "
                             f"not {self.shared_window!r}")
        if self.wave_size not in (32, 64):
            raise ValueError(f"wave_size must be 32 or 64, not {self.wave_size}")

    def pass_options(self) -> str:
        return (f"generic-address-space={self.generic_address_space} "
                f"global-address-space={self.global_address_space} "
                f"shared-address-space={self.shared_address_space} "
                f"const-address-space={self.const_address_space} "
                f"local-address-space={self.local_address_space} "
                f"target={self.target} wave-size={self.wave_size} "
                f"shared-window={self.shared_window} "
                f"subgroup-size={self.subgroup_size} "
                f"native-textures={str(self.native_textures).lower()}")


class Target(ABC):
    """One code generation target; `arch` is e.g. `gfx1100` or `sm_80`."""

    name: ClassVar[str]
    default_arch: ClassVar[str]
    triple: ClassVar[str]
    warp_size: ClassVar[int] = 32
    binary_suffix: ClassVar[str]
    # Whether the binary is text (NVPTX's is PTX), fit for a terminal.
    binary_is_text: ClassVar[bool] = False
    # The module variable a trapping thread sets (its lowering's trap word),
    # which the runtime reads after each launch; None where `trap` ends the
    # launch itself.
    trap_word: ClassVar[str | None] = None
    # The module variable holding %globaltimer's calibration, which the
    # driver writes after loading (zmlir/runtime/cuda/globaltimer.py); None
    # where kernels read nanoseconds themselves.
    globaltimer_word: ClassVar[str | None] = None
    # The LLVM module fix-ups (zmlir/targets/CodeEmission.h) translation applies.
    llvm_fixups: ClassVar[tuple[str, ...]] = ()
    # Whether kernels get grid variants (zmlir-index-no-wrap's grid-variants:
    # `<kernel>__zmlir_grid31` for grids below 2^21 blocks in x, chosen by the
    # backend at launch; KernelInfo.grid_variant_x).
    grid_variants: ClassVar[bool] = False
    # Whether kernels whose warps are 32-wide sub-groups get a copy of their
    # body with their tests of the thread's warp visibly uniform across the
    # sub-group, run for blocks where it is exact (zmlir-warp-uniform-conditions).
    uniform_warp_conditions: ClassVar[bool] = False

    def __init__(self, arch: str | None = None) -> None:
        self.arch = arch or self.default_arch
        self.validate_arch(self.arch)

    @classmethod
    @abstractmethod
    def validate_arch(cls, arch: str) -> None:
        """Raises ValueError for an architecture this target cannot emit."""

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.arch}" if self.arch else self.name

    def refuses_ptx_arch(self, ptx_sm: int) -> str | None:
        """Why this target cannot compile PTX of `.target sm_<ptx_sm>` (0: none
        given), or None: it can."""
        return None

    @abstractmethod
    def lowering_options(self) -> LoweringOptions: ...

    @abstractmethod
    def llvm_pipeline(self) -> str:
        """Pass pipeline from the std dialects (inside gpu.module) to the LLVM dialect."""

    def stages(self) -> list[Stage]:
        """This target's stages after the import, in order."""
        return [
            Stage("std-mlir", self._lower(self.std_pipeline())),
            # The LLVM dialect's text is what translation takes.
            Stage("llvm-mlir", self._lower(self.llvm_pipeline(), carry_text=True)),
            Stage("llvm-ir", self._translate),
            Stage("asm", lambda llvm_ir: (llvm_ir, self.emit_asm(llvm_ir)), goal_only=True),
            Stage("bin", self._emit_binary),
        ]

    def stage_names(self) -> tuple[str, ...]:
        """Every stage compilation can stop at, in order."""
        return (IMPORT_STAGE, *(stage.name for stage in self.stages()))

    @staticmethod
    def _lower(pipeline: str, *, carry_text: bool = False) -> Callable[[Any], tuple[Any, str]]:
        """A stage running an MLIR pass pipeline on the module in place; it
        carries the module on, or with `carry_text` its text."""
        def run(module: Any) -> tuple[Any, str]:
            module.run(pipeline)
            text = module.text()
            return (text if carry_text else module), text
        return run

    def _emit_binary(self, llvm_ir: str) -> tuple[bytes, bytes]:
        binary = self.emit_binary(llvm_ir)
        return binary, binary

    def _translate(self, llvm_mlir: str) -> tuple[str, str]:
        from zmlir import _native

        llvm_ir = _native.translate_to_llvm_ir(llvm_mlir, self.triple, list(self.llvm_fixups))
        return llvm_ir, llvm_ir

    def std_pipeline(self) -> str:
        options = self.lowering_options()
        uniform = "zmlir-warp-uniform-conditions, " if self.uniform_warp_conditions else ""
        return (f"builtin.module(convert-ptx-to-std{{{options.pass_options()}}},"
                f" gpu.module(canonicalize, cse, {uniform}"
                f"zmlir-index-no-wrap{{target={options.target}"
                f" grid-variants={str(self.grid_variants).lower()}}}))")

    @property
    def cpu(self) -> str:
        return self.arch

    @property
    def features(self) -> str:
        return ""

    def emit_asm(self, llvm_ir: str) -> bytes:
        from zmlir import _native

        return _native.emit(llvm_ir, self.triple, self.cpu, self.features, "asm", 2)

    @abstractmethod
    def emit_binary(self, llvm_ir: str) -> bytes: ...

    def cache_key(self) -> str:
        """Identifies this target's output: name, arch, options and pipelines
        (the compiler itself, LLVM included, is the JIT cache's fingerprint)."""
        text = f"{self.spec}|{self.lowering_options()}|{self.llvm_pipeline()}"
        return hashlib.sha256(text.encode()).hexdigest()


_REGISTRY: dict[str, type[Target]] = {}


def register(cls: type[Target]) -> type[Target]:
    if cls.name in _REGISTRY:
        raise RuntimeError(f"target '{cls.name}' registered twice "
                           f"({_REGISTRY[cls.name].__module__} and {cls.__module__})")
    _REGISTRY[cls.name] = cls
    return cls


def _discover() -> None:
    """Imports every plugin, a subpackage of zmlir.targets (importing one
    registers its target)."""
    import importlib
    import pkgutil
    from pathlib import Path

    for plugin in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if plugin.ispkg:
            importlib.import_module(f"{__package__}.{plugin.name}")
    if not _REGISTRY:
        raise RuntimeError("no zmlir targets registered")


def targets() -> dict[str, type[Target]]:
    _discover()
    return dict(_REGISTRY)


def get_target(spec: str) -> Target:
    """`spirv`, `nvptx`, `nvptx:sm_90`, `amdgpu:gfx942` -> a Target."""
    name, _, arch = spec.partition(":")
    registry = targets()
    if name not in registry:
        raise ValueError(f"unknown target '{name}' (known: {', '.join(sorted(registry))})")
    return registry[name](arch or None)
