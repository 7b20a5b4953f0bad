"""The conditions that switch conditional rules on, such as K008's ``history``.

A rule with a ``condition`` is in effect only while that condition holds.
Today there is one: ``history``, true when an installed history provider
detects a store for the project (no process is started to find out).
``KARNI_AGENT_CONDITIONS`` replaces detection, for tests and for users who
want K008 on or off regardless.
"""

from __future__ import annotations

import os

from karni.agent.history import detect, named_providers

__all__ = ["CONDITIONS_VARIABLE", "HISTORY", "active_conditions"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

CONDITIONS_VARIABLE = "KARNI_AGENT_CONDITIONS"
"""When set, replaces store detection for conditional rules (comma-separated)."""

HISTORY = "history"
"""The condition that holds when a history provider detects a store."""


def active_conditions(
    project_root: str | os.PathLike[str], providers: Iterable[Any] | None = None
) -> frozenset[str]:
    """The conditions in effect for the project at ``project_root``.

    ``KARNI_AGENT_CONDITIONS``, when set, replaces detection: an empty value
    turns every conditional rule off, ``history`` forces K008 on. Otherwise the
    set is ``{"history"}`` when any provider (the installed ones by default)
    detects a store.
    """
    raw = os.environ.get(CONDITIONS_VARIABLE)
    if raw is not None:
        return frozenset(part.strip().lower() for part in raw.split(",") if part.strip())

    for _, provider in named_providers(providers, project_root=project_root):
        if detect(provider, project_root):
            return frozenset({HISTORY})  # one store is enough: the others are not asked
    return frozenset()
