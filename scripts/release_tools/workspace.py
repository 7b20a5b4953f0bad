"""The workspace's packages as the release tooling sees them: name, folder, version, ranges."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from release_tools.versions import split_requirement


class WorkspaceError(Exception):
    """The workspace is not in a state the release tooling can work with."""


@dataclass(frozen=True)
class Package:
    """One member of the workspace."""

    name: str
    folder: Path
    version: str
    dependencies: tuple[tuple[str, str], ...]
    """(distribution, specifier) for every dependency, names normalised."""

    @property
    def pyproject(self) -> Path:
        return self.folder / "pyproject.toml"

    @property
    def changelog(self) -> Path:
        return self.folder / "CHANGELOG.md"

    @property
    def tag_prefix(self) -> str:
        return f"{self.name}-v"


def load_package(folder: Path) -> Package:
    """Read ``folder/pyproject.toml``; a dynamic version is refused (the tooling sets it)."""
    path = folder / "pyproject.toml"
    project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    if "version" in project.get("dynamic", []) or "version" not in project:
        raise WorkspaceError(
            f"{path}: `project.version` must be static (scripts/release writes it)"
        )
    name = re.sub(r"[-_.]+", "-", project["name"]).lower()
    deps = tuple(split_requirement(r) for r in project.get("dependencies", []))
    return Package(name=name, folder=folder, version=project["version"], dependencies=deps)


def load_workspace(root: Path) -> dict[str, Package]:
    """Every member under ``root/packages``, by distribution name."""
    packages = [load_package(p.parent) for p in sorted(root.glob("packages/*/pyproject.toml"))]
    if not packages:
        raise WorkspaceError(f"{root}: no packages/*/pyproject.toml; run from the repository")
    return {p.name: p for p in packages}


def set_version_text(pyproject_text: str, version: str) -> str:
    """``pyproject_text`` with ``[project] version`` replaced by ``version``."""
    pattern = re.compile(r'(?ms)(^\[project\]\s*$.*?^version\s*=\s*)"[^"\n]*"')
    new_text, count = pattern.subn(lambda m: f'{m.group(1)}"{version}"', pyproject_text, 1)
    if count != 1:
        raise WorkspaceError('no `version = "..."` line under [project]')
    return new_text
