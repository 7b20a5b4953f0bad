"""The provider shape, spelled out for type checkers.

Providers never import this: the protocol is duck-typed, and Karni checks only
that an object has ``name``, ``detect`` and ``context``. Authors who want a
type checker's help can annotate against :class:`HistoryProvider`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["HistoryProvider"]


@runtime_checkable
class HistoryProvider(Protocol):
    """What Karni calls on a history provider.

    ``project_context(project_root)`` and ``full_command(project_root, path)``
    are optional and therefore not part of the required protocol. So is the
    room protocol: a provider whose class sets ``accepts_room = True`` is
    called as ``context(project_root, path, room=N)`` and
    ``project_context(project_root, room=N)``, where N is the number of
    characters its brief (heading excluded) may use without being cut.
    ``store_problem(project_root)`` is optional too: for ``karni doctor``,
    one line saying what keeps a detected store from being read and how to
    fix it, or None (:mod:`karni.agent.history.health`).
    """

    name: str
    """Shown in the ``HISTORY:`` heading; unique among installed providers."""

    def detect(self, project_root: Path) -> bool:
        """Whether a store is present for the project: a cheap file check, no process."""
        ...

    def context(self, project_root: Path, path: str) -> str | None:
        """What was asked and decided about ``path`` (project-relative, POSIX), or None."""
        ...
