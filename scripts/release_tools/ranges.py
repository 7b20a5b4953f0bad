"""Sibling ranges: every dependency between packages must admit the sibling's version.

A uv workspace source hides a range that excludes the in-repo sibling (gotcha
G1): ``uv sync`` still succeeds. This check reads the ranges themselves.
"""

from __future__ import annotations

from release_tools.versions import admits
from release_tools.workspace import Package


def range_problems(
    packages: dict[str, Package], versions: dict[str, str] | None = None
) -> list[str]:
    """One message per sibling range that does not admit the sibling's version.

    Args:
        packages: The workspace, by distribution name.
        versions: Versions to check against instead of the in-repo ones (e.g. a
            package's version after a planned bump).
    """
    versions = {name: p.version for name, p in packages.items()} | (versions or {})
    problems = []
    for package in packages.values():
        for dependency, specifier in package.dependencies:
            if dependency not in packages:
                continue
            clauses = [c.strip() for c in specifier.split(",") if c.strip()]
            if not any(c.startswith(">=") for c in clauses) or not any(
                c.startswith("<") and not c.startswith("<=") for c in clauses
            ):
                problems.append(
                    f"{package.name}: `{dependency}{specifier}` needs a floor and a cap "
                    f"(`>=X,<Y`), never a pin or an open range"
                )
            elif not admits(specifier, versions[dependency]):
                problems.append(
                    f"{package.name} requires `{dependency}{specifier}`, which does not admit "
                    f"{dependency} {versions[dependency]}; widen the range in "
                    f"{package.pyproject.relative_to(package.folder.parent.parent)}"
                )
    return problems
