"""Building one package's wheel and sdist the way a release does, from a tree or a tag."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


class BuildError(Exception):
    """``uv build`` failed."""


def uv_command() -> list[str]:
    """uv on PATH, else ``python -m uv``."""
    uv = shutil.which("uv")
    return [uv] if uv else [sys.executable, "-m", "uv"]


def build(tree: Path, package: str, out: Path) -> list[Path]:
    """Build ``package`` from the workspace at ``tree`` into ``out``; return the two files.

    ``--no-sources`` so sibling ranges are honoured as they will be on PyPI;
    ``-o`` because uv otherwise writes to the workspace's ``dist/`` (G5).
    """
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    result = subprocess.run(
        [*uv_command(), "build", "--package", package, "--no-sources", "-o", str(out)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise BuildError(f"building {package} in {tree} failed:\n{result.stderr.strip()}")
    built = sorted(p for p in set(out.iterdir()) - before if p.name.endswith((".whl", ".tar.gz")))
    if len(built) != 2:
        raise BuildError(f"building {package} gave {[p.name for p in built]}, not a wheel+sdist")
    return built
