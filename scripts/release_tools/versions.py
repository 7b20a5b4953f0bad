"""Release versions and the sibling ranges that must admit them.

Only what Karni's packages use: final release versions ``X.Y.Z`` and
specifiers built from ``>=``, ``>``, ``<=``, ``<``, ``==``, ``!=`` and
``~=``. Anything else is reported as unsupported rather than guessed at.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"^\d+(\.\d+)*$")
_CLAUSE = re.compile(r"^\s*(~=|==|!=|<=|>=|<|>)\s*(\d+(?:\.\d+)*)\s*$")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*(;.*)?$")

PARTS = ("major", "minor", "patch")


class VersionError(ValueError):
    """A version or specifier this tooling does not understand."""


def parse(version: str) -> tuple[int, ...]:
    """``"0.10.2"`` → ``(0, 10, 2)``; only final release versions are accepted."""
    if not _VERSION.match(version):
        raise VersionError(f"`{version}` is not a final release version like 1.2.3")
    return tuple(int(p) for p in version.split("."))


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def bump(version: str, part: str) -> str:
    """The next ``major``, ``minor`` or ``patch`` version after ``version``."""
    if part not in PARTS:
        raise VersionError(f"`{part}` is not one of {', '.join(PARTS)}")
    major, minor, patch = (*parse(version), 0, 0, 0)[:3]
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def split_requirement(requirement: str) -> tuple[str, str]:
    """``"karni-core>=0.1,<0.2"`` → ``("karni-core", ">=0.1,<0.2")`` (name normalised)."""
    match = _REQUIREMENT.match(requirement)
    if not match:
        raise VersionError(f"cannot read the requirement `{requirement}`")
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    return name, match.group(3).strip()


def admits(specifier: str, version: str) -> bool:
    """Does ``specifier`` (e.g. ``>=0.1,<0.2``) admit ``version``?"""
    value = parse(version)
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        match = _CLAUSE.match(clause)
        if not match:
            raise VersionError(f"unsupported specifier clause `{clause}` in `{specifier}`")
        operator, bound_text = match.groups()
        v, bound = _padded(value, parse(bound_text))
        if operator == "~=":
            prefix = parse(bound_text)[:-1]
            ok = v >= bound and value[: len(prefix)] == prefix
        else:
            ok = {
                "==": v == bound,
                "!=": v != bound,
                "<=": v <= bound,
                ">=": v >= bound,
                "<": v < bound,
                ">": v > bound,
            }[operator]
        if not ok:
            return False
    return True
