"""Device printf and assert through our libcuda.so.1: the exact output of
test/cuda/programs/device_printf.cu and device_assert.cu (the lines NVIDIA's
driver 580 prints for them on an H200, but where the comments say), which
appears at synchronisation points in order with the host's own printf (assert
messages on stderr), the printf FIFO's size and when it can be set, and the
sticky CUDA_ERROR_ASSERT."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import PROGRAMS_DIR, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

# device_printf's `conversions` kernel, between the host's lines: glibc's
# printf of each format (the final formatting is the host C library's). The
# H200 printed the same but "-2 65 65535 25 2520" (%hhx, %hx) and
# "[    42|42    |%.*f|%*.*f]" (a `*` precision as written).
CONVERSIONS = r"""host: default, printf FIFO 8650752 bytes
host: asked for 4096, printf FIFO 524288 bytes
host: asked for 600000, printf FIFO 600064 bytes
host: asked for 512 KiB, printf FIFO 524288 bytes
host: launched, nothing printed yet
plain line, no arguments
-42 42 4000000000 ff FF 10
[   42|42   |00042|+42| 42|007|]
-2147483648 2147483647 4294967295 80000000
-1234567890123 1099511627776 18446744073709551615 deadbeefcafe ABCDEF
-2 65 65535 ff 2345
[abc|  x|y  ]
[3.141590|2.50|    -0.333|10000000000.0|+2|3.]
[1.234568e+04|1.230E-04| -1.5000e+00|1e-05|1E+20|100|0.0001|1.00000]
[0x1p+0|-0X1P-1|0x1.80p+1|0x1.99999ap-4]
[inf|-inf|-0.000000|1.000000e-310]
[0xff|0XFF|010|1.00|+1.2e+04|+7    |+00007]
[    42|42    |3.14|   2.718]
[str|     right|left      |tru|   ab]
[global|heap|local|sh]
[0x1234|(nil)|(null)||  (null)]
100% done, 100%
1 two 3.000000
none
function 5
1 mixed 2 3 4 5.000000 6 7 8
host: synchronized
host: printf returned 3 0 1
host: per_thread launched""".splitlines()


def _run(program: str, build_dir: Path) -> subprocess.CompletedProcess[str]:
    exe = build_dir / program
    if not exe.exists():
        subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{PROGRAMS_DIR}",
                        str(PROGRAMS_DIR / f"{program}.cu"), "-o", str(exe)],
                       check=True, capture_output=True)
    # stdout a pipe: the program's own printf is fully buffered, and the
    # device's output must still come out in order with it.
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    return tmp_path_factory.mktemp("device_printf")


def test_device_printf_output(build_dir: Path) -> None:
    result = _run("device_printf", build_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[:len(CONVERSIONS)] == CONVERSIONS
    rest = lines[len(CONVERSIONS):]
    # per_thread<<<2, 64>>>(3): every line once, each thread's in order,
    # printed by the blocking copy.
    copied = rest.index("host: copied")
    threads: dict[tuple[int, int], list[int]] = {}
    for line in rest[:copied]:
        m = re.fullmatch(r"block (\d) thread (\d+) line (\d)", line)
        assert m, line
        threads.setdefault((int(m[1]), int(m[2])), []).append(int(m[3]))
    assert threads == {(b, t): [0, 1, 2] for b in range(2) for t in range(64)}
    # Setting the FIFO's size after a printf kernel: cudaErrorInvalidValue.
    rest = rest[copied + 1:]
    assert rest[:3] == ["host: setting it after printf: cudaErrorInvalidValue",
                        "host: still, printf FIFO 524288 bytes",
                        # A 5999-byte %s, whole.
                        "[" + "".join(chr(97 + i % 26) for i in range(5999)) + "]"]
    # A full 512 KiB FIFO: the first lines, then the rest dropped (NVIDIA's
    # wraps around and prints a jumble of later lines).
    filled = rest.index("host: FIFO filled")
    fifo = rest[3:filled]
    assert 0 < len(fifo) < 100000
    assert fifo == [f"fifo line {i:06d}" for i in range(len(fifo))]
    # cudaFree and cudaDeviceReset print; the process's exit does not.
    assert rest[filled + 1:] == [
        "host: freeing", "fifo line 000000", "host: resetting", "fifo line 000000",
        "fifo line 000001", "host: after the reset, printf FIFO 1048576 bytes", "PASS"]
    assert "never printed" not in result.stdout + result.stderr


def test_device_assert_output(build_dir: Path) -> None:
    result = _run("device_assert", build_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    # As NVIDIA's driver: the messages on stderr, the program's lines on stdout.
    assert result.stdout.splitlines() == [
        "thread 0 passed its check", "host: no assert yet", "host: launched",
        "host: cudaDeviceSynchronize: cudaErrorAssert (device-side assert triggered)", "PASS"]
    message = (f"{PROGRAMS_DIR / 'device_assert.cu'}:10: void check_value(const int *, int): "
               "block: [{b}], thread: [{t}] Assertion `values[i] >= 0 && \"values must not be "
               "negative\"` failed.")
    # Failing threads print in any order, at the synchronisation that
    # returns cudaErrorAssert (710).
    assert sorted(line for line in result.stderr.splitlines() if "Assertion" in line) == \
        sorted([message.format(b="0,0,0", t="5,0,0"), message.format(b="0,1,0", t="10,0,0")])
