"""cuRAND on our CPU backend: NVIDIA's own libcurand.so.10 (the nvidia-curand
wheel), and ours (zmlir/libraries/curand/) against it.

NVIDIA's, unmodified: libcurand keeps its kernels as SASS-only images per architecture
and its PTX apart, and `zmlir run` tells it an architecture it has no SASS
for, so that it loads its PTX (runtime/cuda/arch_preload.c). Our program
(curand/curand_host.cu) runs every generator and distribution of the host
API and the device API; it checks statistics, repeatability and the host
API's XORWOW against the device API's itself, and its whole output is
compared with an H200's (curand/curand_host.h200.txt): raw bits, uniform,
Poisson and the device API's uniform and bits bit for bit; normal and
log-normal within 1e-5 (.approx instructions, docs/driver-differences.md).
That program is linked with NVIDIA's library by DT_RPATH, which comes before
the library path `zmlir run` sets (where ours is).

Ours: one program of ours (curand/curand_ours.cu), linked once with ours and
once with NVIDIA's, both run here: the outputs (checksums of every call's
values, statuses of bad arguments) must be equal line for line; and the
values that need no .approx instruction equal to an H200's (NVIDIA's library
and driver, curand/curand_ours.h200.txt, where ours on NVIDIA's driver gave
the same output).

Poisson (curand/curand_poisson.cu), ours: linked once with ours and once
with NVIDIA's, equal line for line; and ours where NVIDIA's library is not
found (ZMLIR_NVIDIA_LIBRARIES=0) equal to NVIDIA's output recorded here
(curand/curand_poisson.nvidia.txt).

What ours hands to NVIDIA's library (curand/curand_delegated.cu: generator
types, orderings, host normals ours lacks), linked once with ours and once
with NVIDIA's: equal line for line; and with ZMLIR_NVIDIA_LIBRARIES=0, as
where NVIDIA's is not installed, each refused by name
(CURAND_STATUS_ARCH_MISMATCH)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

SOURCES = Path(__file__).resolve().parent / "curand"
PROGRAM = SOURCES / "curand_host.cu"
RECORDED = SOURCES / "curand_host.h200.txt"  # H200, CUDA 13.0's libcurand, 2026-12-02


@pytest.fixture(scope="module")
def wheel() -> Path:
    from zmlir.libraries import build

    folder = build.nvidia_wheel_dir("curand.h")
    if folder is None or not (folder / "lib" / "libcurand.so.10").exists():
        pytest.skip("NVIDIA's libcurand is not installed (the nvidia-curand wheel)")
    return folder


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path_factory.mktemp("curand") / "curand_host"
    _build(PROGRAM, exe, wheel, nvidia=True)
    return exe


def _build(source: Path, exe: Path, wheel: Path, nvidia: bool, libdir: str = "") -> None:
    """`source` linked with NVIDIA's libcurand (DT_RPATH to the wheel, ahead
    of `zmlir run`'s library path), or with ours (in `libdir`)."""
    link = ([f"-L{wheel / 'lib'}", "-l:libcurand.so.10", "-Xlinker=--disable-new-dtags",
             f"-Xlinker=-rpath={wheel / 'lib'}"] if nvidia else [f"-L{libdir}", "-lcurand"])
    subprocess.run([tool("nvcc"), "-arch=sm_75", f"-I{wheel / 'include'}", str(source),
                    "-o", str(exe), *link], check=True, capture_output=True)


@pytest.fixture(scope="module")
def result(program: Path, wheel: Path) -> subprocess.CompletedProcess[str]:
    library_path = os.pathsep.join(p for p in (str(wheel / "lib"),
                                               os.environ.get("LD_LIBRARY_PATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(program)],
                          capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "LD_LIBRARY_PATH": library_path, "ZMLIR_LOG": "1"})


def test_every_generator_runs_and_checks_out(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0 and result.stdout.endswith("PASSED\n"), \
        result.stdout + result.stderr[-4000:]
    assert not re.search(r"^FAIL", result.stdout, re.M)
    for generator in ("XORWOW", "PHILOX4_32_10", "MRG32K3A", "MTGP32", "SOBOL32",
                      "device XORWOW", "device PHILOX"):
        assert re.search(rf"^{generator}$", result.stdout, re.M), generator
    # Every distribution and precision of every generator printed its checksum.
    assert len(re.findall(r"^  \S.* fnv [0-9a-f]{16}", result.stdout, re.M)) == 5 * 8 + 4 + 2 * 3
    assert "Traceback" not in result.stderr


def test_libcurand_is_told_an_architecture_it_has_no_sass_for(
        result: subprocess.CompletedProcess[str]) -> None:
    assert re.search(r"libcurand\.so\.10 keeps machine code an sm_89 device runs in images "
                     r"without PTX .*told compute capability 8\.1", result.stderr), \
        result.stderr[-4000:]


def test_without_zmlir_run_libcurand_fails_and_says_why(program: Path, wheel: Path,
                                                        libdir: str) -> None:
    """Our libcuda.so.1 alone: libcurand loads its sm_80 SASS, which has no
    kernel we run; curandCreateGenerator fails (203, as NVIDIA's library
    answers) and the driver says once what `zmlir run` would change."""
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join((libdir, str(wheel / "lib"))))
    env.pop("LD_PRELOAD", None)
    alone = subprocess.run([str(program)], capture_output=True, text=True, timeout=600, env=env)
    assert alone.returncode != 0
    assert "FAIL XORWOW: no generator" in alone.stdout, alone.stdout
    assert alone.stderr.count("NVIDIA machine code only") == 1, alone.stderr
    assert "loads its PTX when the program runs under `zmlir run`" in alone.stderr


# Kinds whose values go through .approx instructions (sin/cos/lg2.approx.f32
# in Box-Muller; in double, log's division starts from rcp.approx.ftz.f64):
# ours are within the PTX ISA's bounds, not the H200's MUFU bit for bit
# (docs/fidelity.md), so their samples compare within a tolerance and their
# checksums not at all.
APPROXIMATE = {"normal", "lognormal", "normal double", "lognormal dbl", "curand_normal"}
SAMPLE = re.compile(r"^  (\S+(?: \S+)?)\s+fnv ([0-9a-f]{16})  (.*)$")


def test_output_is_the_h200s(result: subprocess.CompletedProcess[str]) -> None:
    """Every line equal to the H200's (libcurand's version line aside: the
    H200's toolkit carries 10.4.0), but the samples of the kinds in
    APPROXIMATE, which agree to 1e-5."""
    ours = [line for line in result.stdout.splitlines() if not line.startswith("cuRAND ")]
    theirs = [line for line in RECORDED.read_text().splitlines()
              if not line.startswith("cuRAND ")]
    assert len(ours) == len(theirs), result.stdout
    approximate = 0
    for mine, h200 in zip(ours, theirs, strict=True):
        a, b = SAMPLE.match(mine), SAMPLE.match(h200)
        if a and b and a.group(1) == b.group(1) and a.group(1) in APPROXIMATE:
            approximate += 1
            for x, y in zip(map(float, a.group(3).split()), map(float, b.group(3).split()),
                            strict=True):
                assert abs(x - y) <= 1e-5 * max(1.0, abs(y)), (mine, h200)
        else:
            assert mine == h200
    assert approximate == 5 * 4 + 2


OURS = SOURCES / "curand_ours.cu"
OURS_RECORDED = SOURCES / "curand_ours.h200.txt"  # H200, libcurand 10.4, 2026-12-03


@pytest.fixture(scope="module")
def ours_and_nvidias(tmp_path_factory: pytest.TempPathFactory, wheel: Path,
                     libdir: str) -> dict[str, subprocess.CompletedProcess[str]]:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    if not (Path(libdir) / "libcurand.so.10").exists():
        pytest.skip("our libcurand is not built (needs nvcc and the nvidia-curand wheel)")
    folder = tmp_path_factory.mktemp("curand_ours")
    runs = {}
    for name in ("ours", "nvidias"):
        exe = folder / name
        _build(OURS, exe, wheel, nvidia=name == "nvidias", libdir=libdir)
        runs[name] = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                                    capture_output=True, text=True, timeout=1200,
                                    env={**os.environ, "ZMLIR_LOG": "1"})
    # Several threads per state, as on a GPU (curand.c: threads_per_state).
    runs["ours, split"] = subprocess.run(
        [sys.executable, "-m", "zmlir.cli", "run", "--", str(folder / "ours")],
        capture_output=True, text=True, timeout=1200,
        env={**os.environ, "ZMLIR_CURAND_SPLIT": "7"})
    # As where NVIDIA's library is not installed (common/route.c).
    runs["unsupported"] = subprocess.run(
        [sys.executable, "-m", "zmlir.cli", "run", "--", str(folder / "ours"), "unsupported"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "ZMLIR_NVIDIA_LIBRARIES": "0"})
    return runs


def test_ours_gives_nvidias_sequences(
        ours_and_nvidias: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """XORWOW, Philox4x32-10 and MRG32k3a, every distribution and precision,
    offsets, odd sizes, streams, host generators: the same bits as NVIDIA's
    library, which runs its own PTX here through the same JIT; also with a
    state's values shared among 7 threads (the device API's skip-ahead)."""
    ours, nvidias = ours_and_nvidias["ours"], ours_and_nvidias["nvidias"]
    split = ours_and_nvidias["ours, split"]
    assert split.returncode == 0 and split.stdout == ours.stdout, split.stdout + split.stderr
    assert ours.returncode == 0 and ours.stdout.endswith("DONE\n"), ours.stdout + ours.stderr
    assert nvidias.returncode == 0, nvidias.stdout + nvidias.stderr[-4000:]
    # Ours ran, not NVIDIA's: NVIDIA's needs its PTX path (arch_preload.c).
    assert "takes its PTX path" in nvidias.stderr and "takes its PTX path" not in ours.stderr
    assert len(ours.stdout.splitlines()) == 3 * 10 + 11
    for mine, theirs in zip(ours.stdout.splitlines(), nvidias.stdout.splitlines(), strict=True):
        assert mine == theirs
    assert "Traceback" not in ours.stderr


# Each case's steps whose values go through .approx instructions (Box-Muller:
# normals and log-normals, float and double): the H200's MUFU gives other
# last bits than ours here (docs/fidelity.md), so their checksums are not
# compared with the H200's; NVIDIA's library here gives ours bit for bit.
_EXACT = {"bits", "uniform", "udouble"}
_STEPS = {
    "bits 1M": ["bits"],
    "every distribution 64K": ["bits", "uniform", "normal", "lognormal", "udouble", "ndouble",
                               "lndouble"],
    "offset 4096, every distribution": ["bits", "uniform", "normal", "lognormal", "udouble",
                                        "ndouble", "lndouble"],
    "odd sizes and offsets": ["bits", "normal", "udouble", "bits", "ndouble", "uniform",
                              "lndouble", "lognormal", "bits"],
    "tiny calls inside units": ["udouble", "udouble", "udouble", "bits", "ndouble", "udouble",
                                "uniform", "normal", "lndouble", "bits"],
    "large offset": ["bits", "normal", "udouble"],
    "offset set twice": ["bits", "uniform", "bits"],
    "long run, doubles": ["udouble", "ndouble"],
    "in a stream": ["normal", "bits"],
    "host generator": ["bits", "uniform", "udouble", "bits"],
}
_LINE = re.compile(r"^(\S+) (.+): fnv ([0-9a-f ]+), statuses([ 0-9]*)$")


def test_ours_gives_the_h200s_sequences(
        ours_and_nvidias: dict[str, subprocess.CompletedProcess[str]]) -> None:
    ours = ours_and_nvidias["ours"].stdout.splitlines()
    h200 = OURS_RECORDED.read_text().splitlines()
    assert len(ours) == len(h200)
    compared = 0
    for mine, theirs in zip(ours, h200, strict=True):
        a, b = _LINE.match(mine), _LINE.match(theirs)
        if not (a and b):
            assert mine == theirs
            continue
        assert a.group(1, 2, 4) == b.group(1, 2, 4), (mine, theirs)
        steps = _STEPS[a.group(2)]
        sums_a, sums_b = a.group(3).split(), b.group(3).split()
        assert len(steps) == len(sums_a) == len(sums_b)
        for step, x, y in zip(steps, sums_a, sums_b, strict=True):
            if step in _EXACT:
                compared += 1
                assert x == y, (a.group(1), a.group(2), step)
    assert compared == 3 * sum(step in _EXACT for steps in _STEPS.values() for step in steps)


def test_what_ours_does_not_make_is_refused_by_name(
        ours_and_nvidias: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """Where NVIDIA's library is not found, generator types and functions
    ours lacks: CURAND_STATUS_ARCH_MISMATCH (204), the name said once on
    stderr."""
    run = ours_and_nvidias["unsupported"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == ["unsupported MT19937: 204", "unsupported SOBOL32: 204",
                                       "unsupported ordering SEEDED: 204"]
    for name in ("CURAND_RNG_PSEUDO_MT19937", "CURAND_RNG_QUASI_SOBOL32",
                 "CURAND_ORDERING_PSEUDO_SEEDED"):
        assert run.stderr.count(name) == 1, run.stderr


DELEGATED = SOURCES / "curand_delegated.cu"


@pytest.fixture(scope="module")
def delegated(tmp_path_factory: pytest.TempPathFactory, wheel: Path,
              libdir: str) -> dict[str, subprocess.CompletedProcess[str]]:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    if not (Path(libdir) / "libcurand.so.10").exists():
        pytest.skip("our libcurand is not built (needs nvcc and the nvidia-curand wheel)")
    folder = tmp_path_factory.mktemp("curand_delegated")
    runs = {}
    for name in ("ours", "nvidias"):
        _build(DELEGATED, folder / name, wheel, nvidia=name == "nvidias", libdir=libdir)
        runs[name] = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--",
                                     str(folder / name)], capture_output=True, text=True,
                                    timeout=1200, env={**os.environ, "ZMLIR_LOG": "1"})
    runs["refused"] = subprocess.run(
        [sys.executable, "-m", "zmlir.cli", "run", "--", str(folder / "ours"), "refused"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "ZMLIR_NVIDIA_LIBRARIES": "0"})
    return runs


def test_what_ours_lacks_nvidias_library_makes(
        delegated: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """Generator types ours lacks (MT19937, the Sobol generators, host
    generators among them), MTGP32's Poisson (also after seeds set among
    calls of ours), orderings (SEEDED, DYNAMIC, a
    change of ordering after values were made, after Poisson values of ours
    among others), a host generator's normals, direction vectors and
    scramble constants; and what ours makes on the same cases (Poisson,
    LEGACY, MTGP32's other values, at odd sizes, across seeds): through ours, the
    values and statuses of NVIDIA's library linked directly, also where ours
    made values of every kind first (NVIDIA's generator then replays them)."""
    ours, nvidias = delegated["ours"], delegated["nvidias"]
    assert nvidias.returncode == 0, nvidias.stdout + nvidias.stderr[-4000:]
    assert ours.returncode == 0 and ours.stdout.endswith("DONE\n"), ours.stdout + ours.stderr
    assert ours.stdout == nvidias.stdout
    lines = ours.stdout.splitlines()
    assert len(lines) == 11 + 3 * 13 + 6
    # Nothing failed quietly: every generator was made and every call answered
    # but SEEDED on Philox and MRG32k3a (CURAND_STATUS_OUT_OF_RANGE, as
    # NVIDIA's answers).
    assert all(": create 0" in line for line in lines[:-6])
    assert [line.split(":")[0] for line in lines if "status" in line] == []
    assert sum(": 104," in line for line in lines) == 2
    # Ours was the library, and handed these over by name.
    for said in ("MTGP32's curandGeneratePoisson: NVIDIA's, after 11 calls",
                 "generator type: CURAND_RNG_QUASI_SCRAMBLED_SOBOL64: NVIDIA's",
                 "to CURAND_ORDERING_PSEUDO_LEGACY after values were made: NVIDIA's, after 12 calls",
                 "to CURAND_ORDERING_PSEUDO_LEGACY after values were made: NVIDIA's, after 8 calls",
                 "change of ordering to CURAND_ORDERING_PSEUDO_BEST after values were made",
                 "a host generator's normals: NVIDIA's, after 2 calls"):
        assert said in ours.stderr, said
    # LEGACY is ours: handed over only for a change after values were made.
    assert "ordering CURAND_ORDERING_PSEUDO_LEGACY:" not in ours.stderr
    # Poisson is ours: handed over only for a method ours lacks (and MTGP32's).
    assert "libcurand.so.10: curandGeneratePoisson:" not in ours.stderr
    assert "curandGeneratePoissonMethod (method 9): NVIDIA's, after 9 calls" in ours.stderr
    # MTGP32 is ours: handed over only for Poisson.
    assert "CURAND_RNG_PSEUDO_MTGP32" not in ours.stderr
    assert "Traceback" not in ours.stderr


def test_without_nvidias_library_what_ours_lacks_is_refused(
        delegated: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """ZMLIR_NVIDIA_LIBRARIES=0, as where NVIDIA's library is not installed:
    CURAND_STATUS_ARCH_MISMATCH (204), each named once on stderr; the
    orderings ours makes (BEST, LEGACY: NVIDIA's values, known), Poisson and
    MTGP32's values but Poisson (NVIDIA's, known) still answer."""
    run = delegated["refused"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == ["MT19937: 204",
                                       "MTGP32 (ours): 0 0fe8c3dc4570675e, Poisson 204",
                                       "SOBOL32: 204", "ordering BEST: 0",
                                       "ordering SEEDED: 204",
                                       # NVIDIA's values (its library, here)
                                       "ordering LEGACY (101): 0 a5f5f6594da02f4d",
                                       "ordering LEGACY (161): 0 738a1eea7c3df249",
                                       "ordering LEGACY (121): 0 c9903bd580475bb9",
                                       "Poisson (ours): 0",
                                       "direction vectors: 204"]
    assert run.stderr.count("is not used (ZMLIR_NVIDIA_LIBRARIES=0)") == 1, run.stderr
    for name in ("CURAND_RNG_PSEUDO_MT19937", "CURAND_RNG_QUASI_SOBOL32",
                 "CURAND_ORDERING_PSEUDO_SEEDED", "curandGetDirectionVectors32",
                 "MTGP32's curandGeneratePoisson"):
        assert run.stderr.count(name) == 1, (name, run.stderr)
    assert "unsupported curandGeneratePoisson" not in run.stderr


POISSON = SOURCES / "curand_poisson.cu"
POISSON_RECORDED = SOURCES / "curand_poisson.nvidia.txt"  # NVIDIA's libcurand 10.4.5, here


@pytest.fixture(scope="module")
def poisson(tmp_path_factory: pytest.TempPathFactory, wheel: Path,
            libdir: str) -> dict[str, subprocess.CompletedProcess[str]]:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    if not (Path(libdir) / "libcurand.so.10").exists():
        pytest.skip("our libcurand is not built (needs nvcc and the nvidia-curand wheel)")
    folder = tmp_path_factory.mktemp("curand_poisson")
    runs = {}
    for name in ("ours", "nvidias"):
        _build(POISSON, folder / name, wheel, nvidia=name == "nvidias", libdir=libdir)
        runs[name] = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--",
                                     str(folder / name)], capture_output=True, text=True,
                                    timeout=1200, env={**os.environ, "ZMLIR_LOG": "1"})
    return runs


def test_poisson_is_nvidias(poisson: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """curandGeneratePoisson on XORWOW, Philox and MRG32k3a, lambdas from
    0.001 to 400000 (NVIDIA's table below 2000, rounded normals from it on),
    among other calls, at odd sizes and offsets, a host generator; and
    curandCreatePoissonDistribution's distributions drawn from by
    curand_discrete: ours gives NVIDIA's values and statuses, and makes them
    itself."""
    ours, nvidias = poisson["ours"], poisson["nvidias"]
    assert nvidias.returncode == 0, nvidias.stdout + nvidias.stderr[-4000:]
    assert ours.returncode == 0 and ours.stdout.endswith("DONE\n"), ours.stdout + ours.stderr
    assert "takes its PTX path" in nvidias.stderr and "takes its PTX path" not in ours.stderr
    assert "NVIDIA's" not in ours.stderr, ours.stderr  # nothing handed over
    lines = ours.stdout.splitlines()
    assert len(lines) == 3 * 4 + 10 + 6
    assert all(set(line.split("statuses ")[1].split()) == {"0"} for line in lines[:12])
    assert lines == nvidias.stdout.splitlines()


@pytest.fixture(scope="module")
def poisson_alone(tmp_path_factory: pytest.TempPathFactory,
                  libdir: str) -> subprocess.CompletedProcess[str]:
    """curand_poisson.cu linked with ours and run where NVIDIA's library is
    not used (ZMLIR_NVIDIA_LIBRARIES=0; installed or not), a state's values
    shared among 7 threads."""
    from zmlir.libraries import build

    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    if not (Path(libdir) / "libcurand.so.10").exists():
        pytest.skip("our libcurand is not built (needs nvcc and the nvidia-curand wheel)")
    wheel = build.nvidia_wheel_dir("curand.h")
    include = wheel / "include" if wheel else build.cuda_include_dir()
    exe = tmp_path_factory.mktemp("curand_poisson_alone") / "ours"
    subprocess.run([tool("nvcc"), "-arch=sm_75", f"-I{include}", str(POISSON), "-o", str(exe),
                    f"-L{libdir}", "-lcurand"], check=True, capture_output=True)
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                          capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "ZMLIR_NVIDIA_LIBRARIES": "0",
                               "ZMLIR_CURAND_SPLIT": "7"})


def test_poisson_without_nvidias_library(poisson_alone: subprocess.CompletedProcess[str]) -> None:
    """Ours alone: NVIDIA's output, recorded (known answers)."""
    alone = poisson_alone
    assert alone.returncode == 0, alone.stdout + alone.stderr[-4000:]
    assert alone.stdout == POISSON_RECORDED.read_text()


def test_exports_are_nvidias(libdir: str, wheel: Path) -> None:
    """Every function NVIDIA's libcurand exports, with its symbol version,
    and nothing else."""
    path = Path(libdir) / "libcurand.so.10"
    if not path.exists():
        pytest.skip("our libcurand is not built")

    def exported(library: Path) -> set[str]:
        out = subprocess.run(["nm", "-D", "--defined-only", str(library)], check=True,
                             capture_output=True, text=True).stdout
        return {line.split()[-1] for line in out.splitlines() if " T " in line}

    assert exported(path) == exported(wheel / "lib" / "libcurand.so.10")
