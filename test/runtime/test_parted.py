"""PartedModule (zmlir/runtime/cuda/parted.py) over a stand-in compiler: which
part each kernel and variable compiles in, and which kernels a compile
error fails."""

from __future__ import annotations

import pytest

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend.partition import partition
from zmlir.runtime.cuda.errors import CudaError
from zmlir.runtime.cuda.parted import PartedModule, kernel_level

MODULE = """.version 8.0
.target sm_80
.address_size 64
.global .align 4 .u32 counter;

.func broken()
{
  wgmma.fence.sync.aligned;
  ret;
}

.visible .entry calls_broken()
{
  call.uni broken, ();
  ld.global.u32 %r1, [counter];
  ret;
}

.visible .entry reads_counter()
{
  ld.global.u32 %r1, [counter];
  ret;
}

.visible .entry alone()
{
  ret;
}
"""
BROKEN_LINE = MODULE.splitlines().index("  wgmma.fence.sync.aligned;") + 1


class StandIn:
    """Compiles a part: fails where `wgmma` is, records what it was given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> object:
        self.texts.append(text)
        if "wgmma" in text:
            raise CompileError("unsupported instruction 'wgmma.fence.sync.aligned'",
                               "m.ptx", SourceLoc(BROKEN_LINE, 3))
        return object()


@pytest.fixture
def parted() -> tuple[PartedModule, StandIn, list[str]]:
    index = partition(MODULE)
    assert index is not None
    compile_part, logged = StandIn(), []
    return PartedModule("m.ptx", index, compile_part, logged.append), compile_part, logged


def test_a_kernel_reaching_what_fails_fails_alone(parted) -> None:
    module, compile_part, logged = parted
    # reads_counter shares `counter` with calls_broken: their part compiles
    # again without calls_broken, and keeps the variable.
    roots, compiled = module.part("reads_counter")
    assert roots == {"reads_counter", "counter"}
    assert len(compile_part.texts) == 2 and "wgmma" not in compile_part.texts[1]
    assert module.part("counter") == (roots, compiled)  # one object for kernels and host
    with pytest.raises(CudaError) as failed:
        module.part("calls_broken")
    assert failed.value.code == 218
    assert f"kernel calls_broken: m.ptx:{BROKEN_LINE}:3: error: unsupported" in str(failed.value)
    assert logged == [f"cannot compile kernel calls_broken of m.ptx: m.ptx:{BROKEN_LINE}:3: "
                      "error: unsupported instruction 'wgmma.fence.sync.aligned'"]
    assert len(compile_part.texts) == 2  # each part is compiled once


def test_each_part_compiles_when_first_asked_for(parted) -> None:
    module, compile_part, _ = parted
    assert module.part("alone")[0] == {"alone"}
    assert len(compile_part.texts) == 1 and "counter" not in compile_part.texts[0]
    with pytest.raises(CudaError) as missing:
        module.part("nothing")
    assert missing.value.code == 500  # CUDA_ERROR_NOT_FOUND


def test_which_errors_fail_kernels_only() -> None:
    assert kernel_level(CompileError("unsupported special register", "m", SourceLoc(1, 1)))
    assert kernel_level(CompileError("internal error: the importer ...", "m", SourceLoc(1, 1)))
    assert not kernel_level(CompileError("expected ';'", "m", SourceLoc(1, 1)))
    assert not kernel_level(CompileError("unsupported target", "m"))  # nowhere in particular


def test_the_index_comes_from_the_cache_once_made(tmp_path, monkeypatch) -> None:
    from zmlir.frontend import partition as index_module
    from zmlir.runtime import cache

    monkeypatch.setenv("ZMLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ZMLIR_CACHE", raising=False)
    made = cache.cached_partition(MODULE, "m.ptx")
    real = index_module.partition
    monkeypatch.setattr(index_module, "partition", lambda text: pytest.fail("indexed again"))
    again = cache.cached_partition(MODULE, "m.ptx")
    assert again.kernels == made.kernels
    assert again.part_text({"alone"}) == made.part_text({"alone"})
    assert again.part_roots("calls_broken") == made.part_roots("calls_broken")
    # Another module's text is not given that module's index.
    monkeypatch.setattr(index_module, "partition", real)
    assert cache.cached_partition(MODULE.replace("alone", "other"), "m.ptx").kernels[-1] == "other"


def test_declarations_that_do_not_parse_fail_the_index() -> None:
    from zmlir.runtime import cache

    with pytest.raises(CompileError):
        cache.cached_partition(MODULE.replace(".u32 counter;", ".u32 counter[;"), "m.ptx")
