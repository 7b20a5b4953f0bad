"""Where a project keeps its Architecture Decision Records.

adr-tools writes to ``doc/adr/``; MADR suggests ``docs/decisions/`` (and many
teams use ``docs/adr/``). Detection is a directory check and nothing more: it
runs before every ``karni context --with-history`` and for ``karni rules``.
"""

from __future__ import annotations

import os

__all__ = ["ADR_DIRECTORIES", "adr_directories", "has_adr_directory"]

ADR_DIRECTORIES: tuple[str, ...] = ("doc/adr", "docs/decisions", "docs/adr")
"""The project-relative folders searched for records, in this order."""


def has_adr_directory(project_root: str | os.PathLike[str]) -> bool:
    """Whether one of :data:`ADR_DIRECTORIES` exists at the project root; reads nothing."""
    root = os.fspath(project_root)
    return any(os.path.isdir(os.path.join(root, folder)) for folder in ADR_DIRECTORIES)


def adr_directories(project_root: str | os.PathLike[str]) -> list[str]:
    """The project-relative ADR folders that exist, in :data:`ADR_DIRECTORIES` order."""
    root = os.fspath(project_root)
    return [folder for folder in ADR_DIRECTORIES if os.path.isdir(os.path.join(root, folder))]
