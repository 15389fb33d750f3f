"""bench/numba_cuda.py: the packages the suite's modules need beyond numba-cuda."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.numba_cuda import SUITE_PACKAGES, _run_pytest_module, missing_packages, run_module


def test_missing_packages_are_named_by_their_requirement(tmp_path: Path) -> None:
    # test_bfloat16 errored on the missing ml_dtypes and CuPy's modules
    # skipped: the venv check must name exactly what its environment lacks.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    assert missing_packages(python) == list(SUITE_PACKAGES.values())
    site = next((venv / "lib").glob("python3.*")) / "site-packages"
    (site / "ml_dtypes-0.7.0.dist-info").mkdir()
    (site / "ml_dtypes-0.7.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ml_dtypes\nVersion: 0.7.0\n")
    assert missing_packages(python) == [SUITE_PACKAGES["cupy-cuda13x"],
                                        SUITE_PACKAGES["nvidia-curand"], SUITE_PACKAGES["cffi"]]


PLAIN_FUNCTIONS = """
def test_adds():
    assert 1 + 1 == 2


def test_subtracts():
    assert 2 - 1 == 0, "two less one"
"""


def test_modules_of_plain_functions_run_under_pytest(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # numba-cuda's test_matmul has test functions and no TestCase: given it,
    # numba.runtests ran numba's whole CPU suite (223 tests in 900 s here).
    (tmp_path / "plain_functions_module.py").write_text(PLAIN_FUNCTIONS)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    result = _run_pytest_module("test_plain", "plain_functions_module", [sys.executable])
    assert (result["ran"], result["passed"], result["failed"], result["finished"]) == (2, 1, 1, True)
    assert result["causes"] == [("AssertionError: two less one", 1)]


ALL_SKIPPED_RUN = '''
import sys
for n in range(2):
    print(f"test_{n} (numba.cuda.tests.cudapy.test_x.T.test_{n}) ... skipped 'FP8 is not supported'",
          file=sys.stderr)
print("\\n" + "-" * 70 + "\\nRan 0 tests in 0.005s\\n\\nNO TESTS RAN (skipped=2)", file=sys.stderr)
'''


def test_a_module_whose_tests_all_skip_passes_none(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Python 3.12's unittest ends such a run with "NO TESTS RAN (skipped=18)":
    # test_fp8_bindings (FP8 needs compute capability 8.9) was counted as 18 passed.
    runtests = tmp_path / "numba"
    runtests.mkdir()
    (runtests / "__init__.py").write_text("")
    (runtests / "runtests.py").write_text(ALL_SKIPPED_RUN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    result = run_module(sys.executable, "test_x", 60, real_driver=True)
    assert (result["ran"], result["passed"], result["skipped"]) == (2, 0, 2)
