"""Python GPU libraries from the package index, run under `zmlir run`.

Each client library gets a virtualenv of its own, made with a Python of
another minor version than zmlir's where one is installed (the driver must
not depend on the application's interpreter), with nothing of zmlir's in it.
The environments are cached across runs (`$ZMLIR_CLIENT_VENVS`, default
`~/.cache/zmlir/client-venvs`): CI downloads each once per machine.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("ZMLIR_CLIENT_VENVS",
                            Path.home() / ".cache" / "zmlir" / "client-venvs"))


def _other_python() -> str:
    """A CPython >= 3.9 of another minor version than ours, else ours."""
    ours = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [f"python3.{minor}" for minor in (12, 13, 10, 9)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for name in candidates:
        if name.endswith(ours):
            continue
        found = shutil.which(name)
        if found and "/shims/" not in found:  # a pyenv shim may name no installed version
            return found
        for version in sorted(pyenv.glob(name.removeprefix("python") + ".*"), reverse=True):
            if (version / "bin" / name).exists():
                return str(version / "bin" / name)
    return sys.executable


CLIENT_PYTHON = _other_python()


def client_venv(*packages: str) -> Path:
    """The python of a cached virtualenv holding `packages` (nothing of zmlir's)."""
    key = hashlib.sha256("\n".join((CLIENT_PYTHON, *packages)).encode()).hexdigest()[:16]
    root = CACHE / key
    python = root / "bin" / "python"
    if (root / ".complete").exists():
        return python
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([CLIENT_PYTHON, "-m", "venv", str(root)], check=True)
    install = subprocess.run([str(python), "-m", "pip", "install", "-q",
                              "--disable-pip-version-check", *packages],
                             capture_output=True, text=True, timeout=1800)
    if install.returncode != 0:
        pytest.fail(f"pip install {' '.join(packages)} failed:\n{install.stderr[-4000:]}")
    (root / ".complete").write_text("\n".join(packages) + "\n")
    return python


def zmlir_run(python: Path, script: Path | str, *args: str, timeout: int = 600,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`zmlir run -- PYTHON SCRIPT ARGS` on the default (CPU) backend."""
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(python),
                           str(script), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def script_steps(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """A client script's `<step>: <outcome>` lines, by step, in their order."""
    return dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)


def assert_steps(result: subprocess.CompletedProcess[str], steps: list[str],
                 pending: dict[str, str] | None = None) -> dict[str, str]:
    """Asserts a client script's run: exit status 0, its steps `steps` in
    order, those `pending` (not yet seen to pass) printed "skipped" and every
    other one "ok ..."; returns the steps' outcomes."""
    pending = pending or {}
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    outcomes = script_steps(result)
    assert list(outcomes) == steps, result.stdout
    assert all(outcomes[step] == "skipped" for step in pending), result.stdout
    failed = {step: out for step, out in outcomes.items()
              if step not in pending and not out.startswith("ok")}
    assert not failed, output
    return outcomes
