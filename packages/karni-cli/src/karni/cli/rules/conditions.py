"""The conditions that switch conditional rules on: K008's ``history``, and Karni's layout.

A rule with a ``condition`` is in effect only while that condition holds:

- ``history``: an installed history provider detects a store for the project
  (no process is started to find out). ``KARNI_AGENT_CONDITIONS`` replaces
  this detection, for tests and for users who want K008 on or off regardless.
- ``karni-apps``: the project is laid out as Karni's scaffold lays it out:
  ``config/settings.py`` holds the ``# karni:apps`` marker. The rules that
  name Karni's folders and bases for the backend (K002–K005) need it.
- ``karni-pages``: the front end is Karni's, ``frontend/src/pages/`` (or the
  project is in Karni's layout): K010 and K011 need it.

The layout conditions are facts of the project's files, read on every run
(one small file and one folder check); ``KARNI_AGENT_CONDITIONS`` adds to
them but never takes them away.
"""

from __future__ import annotations

import os
import stat

from karni.agent.history import detect, named_providers

__all__ = [
    "CONDITIONS_VARIABLE",
    "HISTORY",
    "KARNI_APPS",
    "KARNI_PAGES",
    "LAYOUT_CONDITIONS",
    "active_conditions",
    "layout_conditions",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

CONDITIONS_VARIABLE = "KARNI_AGENT_CONDITIONS"
"""When set, replaces store detection for the ``history`` condition (comma-separated)."""

HISTORY = "history"
"""The condition that holds when a history provider detects a store."""

KARNI_APPS = "karni-apps"
"""The condition that holds in Karni's layout: the ``# karni:apps`` marker in config/settings.py."""

KARNI_PAGES = "karni-pages"
"""The condition that holds where the pages are Karni's: frontend/src/pages/ (or Karni's layout)."""

LAYOUT_CONDITIONS = (KARNI_APPS, KARNI_PAGES)
"""The conditions read from the project's files, in the order rules name them."""

_SETTINGS = ("config", "settings.py")
_MARKER = b"# karni:apps"
_MAX_SETTINGS_BYTES = 1 << 20


def _holds_marker(path: str) -> bool:
    """Whether the regular file at ``path`` holds the ``# karni:apps`` marker (never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and _MARKER in os.read(fd, _MAX_SETTINGS_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)


def layout_conditions(project_root: str | os.PathLike[str]) -> frozenset[str]:
    """Which of :data:`LAYOUT_CONDITIONS` the project's files meet."""
    root = os.fspath(project_root)
    if _holds_marker(os.path.join(root, *_SETTINGS)):
        return frozenset(LAYOUT_CONDITIONS)
    if os.path.isdir(os.path.join(root, "frontend", "src", "pages")):
        return frozenset({KARNI_PAGES})
    return frozenset()


def active_conditions(
    project_root: str | os.PathLike[str], providers: Iterable[Any] | None = None
) -> frozenset[str]:
    """The conditions in effect for the project at ``project_root``.

    The layout conditions come from the project's files. ``KARNI_AGENT_CONDITIONS``,
    when set, replaces store detection: an empty value turns K008 off,
    ``history`` forces it on. Otherwise ``history`` holds when any provider
    (the installed ones by default) detects a store.
    """
    layout = layout_conditions(project_root)
    raw = os.environ.get(CONDITIONS_VARIABLE)
    if raw is not None:
        return layout | {part.strip().lower() for part in raw.split(",") if part.strip()}

    for _, provider in named_providers(providers, project_root=project_root):
        if detect(provider, project_root):
            return layout | {HISTORY}  # one store is enough: the others are not asked
    return layout
