"""Keep a Changelog: moving the ``## [Unreleased]`` section under a released version."""

from __future__ import annotations

import re

UNRELEASED = "## [Unreleased]"
_ENTRY = re.compile(r"^\s*[-*] \S")


class ChangelogError(Exception):
    """The changelog cannot be released as it stands."""


def _unreleased_bounds(lines: list[str]) -> tuple[int, int]:
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == UNRELEASED)
    except StopIteration:
        raise ChangelogError(f"no `{UNRELEASED}` heading") from None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return start, end


def unreleased_entries(text: str) -> list[str]:
    """The list items under ``## [Unreleased]`` (what this release would announce)."""
    lines = text.splitlines()
    start, end = _unreleased_bounds(lines)
    return [line.strip() for line in lines[start + 1 : end] if _ENTRY.match(line)]


def release(text: str, version: str, date: str) -> str:
    """``text`` with the Unreleased entries moved under ``## [version] - date``.

    An empty ``## [Unreleased]`` heading stays on top for the next changes.
    """
    lines = text.splitlines()
    start, end = _unreleased_bounds(lines)
    body = lines[start + 1 : end]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    if not any(_ENTRY.match(line) for line in body):
        raise ChangelogError(f"nothing under `{UNRELEASED}`")
    rest = lines[end:]
    new = [*lines[: start + 1], "", f"## [{version}] - {date}", "", *body]
    if rest:
        new += ["", *rest]
    return "\n".join(new) + "\n"
