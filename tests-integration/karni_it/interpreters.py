"""Finding every CPython from 3.11 up that this machine has, by running each candidate."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SUPPORTED_MINORS = (11, 12, 13, 14)
"""CPython 3.x minors the suite runs on when the machine has them (3.11 is the floor)."""

PYTHON_VERSIONS = [f"3.{minor}" for minor in SUPPORTED_MINORS]
PRIMARY_VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
"""The version running pytest: the one whose outputs are snapshotted."""


def _candidates(minor: int) -> list[Path]:
    exe = f"python3.{minor}"
    paths: list[Path] = []
    if sys.version_info[:2] == (3, minor):
        paths.append(Path(sys.executable))
    on_path = shutil.which(exe)
    if on_path:
        paths.append(Path(on_path))
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    paths += sorted((pyenv_root / "versions").glob(f"3.{minor}.*/bin/{exe}"), reverse=True)
    uv_dir = Path(os.environ.get("UV_PYTHON_INSTALL_DIR", Path.home() / ".local/share/uv/python"))
    paths += sorted(uv_dir.glob(f"cpython-3.{minor}.*/bin/{exe}"), reverse=True)
    return paths


def _probe(python: Path, minor: int) -> bool:
    """Does ``python`` really run, as CPython 3.<minor>? (A pyenv shim may not.)"""
    code = "import platform, sys; print(platform.python_implementation(), *sys.version_info[:2])"
    try:
        result = subprocess.run(
            [str(python), "-c", code], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and result.stdout.split() == ["CPython", "3", str(minor)]


def find_interpreters() -> dict[str, Path]:
    """``"3.N"`` → a working CPython 3.N executable, for every supported N found."""
    found: dict[str, Path] = {}
    for minor in SUPPORTED_MINORS:
        for candidate in _candidates(minor):
            if _probe(candidate, minor):
                found[f"3.{minor}"] = candidate
                break
    return found


def python_for(interpreters: dict[str, Path], version: str) -> Path:
    """The interpreter for ``version``; a skip naming where we looked when there is none."""
    import pytest

    if version not in interpreters:
        pytest.skip(
            f"CPython {version} not found on this machine (looked on PATH, in pyenv and in "
            f"uv-managed installs); install it to cover {version}"
        )
    return interpreters[version]
