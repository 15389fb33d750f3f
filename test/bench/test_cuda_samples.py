"""bench/cuda_samples.py: a sample's data files that its checkout lacks are
named, so a sample failing for them says so (dwtHaar1D's signal.dat was
absent from a snapshot of cuda-samples, and the sample failed everywhere)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bench.cuda_samples import _missing_data


def test_missing_data_names_what_git_has_and_the_checkout_lacks(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("no git")
    data = tmp_path / "Samples" / "5_Domain_Specific" / "dwtHaar1D" / "data"
    data.mkdir(parents=True)
    (data / "signal.dat").write_text("1\n")
    (data / "regression.gold.dat").write_text("2\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                        *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "samples")
    sample = data.parent
    assert _missing_data(tmp_path, sample) == []
    (data / "signal.dat").unlink()
    assert _missing_data(tmp_path, sample) == ["signal.dat"]
    # Not a git checkout: nothing to compare with, nothing said.
    shutil.rmtree(tmp_path / ".git")
    assert _missing_data(tmp_path, sample) == []
