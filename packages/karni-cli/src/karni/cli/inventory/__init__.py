"""The project inventory ``karni context`` prints, read statically, and its cache.

:mod:`~karni.cli.inventory.cache` is all the hot path imports while nothing
changed; on a miss :mod:`~karni.cli.inventory.report` builds the lines from
:mod:`~karni.cli.inventory.apps`, :mod:`~karni.cli.inventory.classes` and
:mod:`~karni.cli.inventory.pages`, which read the project through
:mod:`~karni.cli.inventory.facts`. The names of ``report`` are also reachable
from here, imported on first use.
"""

from __future__ import annotations

__all__ = [
    "INVENTORY_TOKEN_BUDGET",
    "LINE_CAPS",
    "MAX_MODELS",
    "MAX_MODEL_FIELDS",
    "SETTINGS_FILE",
    "build",
    "inventory_lines",
    "render",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        # bench row "karni context" runs without it
        from karni.cli.inventory import report

        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
