"""Where the workspace is and which distributions it holds."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES_DIR = ROOT / "packages"
EXAMPLES_DIR = ROOT / "examples"


def normalize(name: str) -> str:
    """PEP 503 name: ``Karni_Core`` → ``karni-core``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def workspace_distributions() -> dict[str, Path]:
    """Distribution name → package folder, for every member of the workspace."""
    found = {}
    for pyproject in sorted(PACKAGES_DIR.glob("*/pyproject.toml")):
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        found[normalize(data["project"]["name"])] = pyproject.parent
    return found


DISTRIBUTIONS = workspace_distributions()
