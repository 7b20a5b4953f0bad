"""Per-test behaviour of the double: ``$FAKE_CHRONICLE_HOME/config.json``.

A test changes how the next runs behave (a delay, an exit code, stderr
noise, another stdout, keys patched into or dropped from the JSON reply, a
grandchild process) by writing this file; the program reads it on every run.
Both sides use these names, so they are defined once.
"""

from __future__ import annotations

import os

__all__ = ["CONFIG_KEYS", "HOME_VARIABLE", "load_config"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOME_VARIABLE = "FAKE_CHRONICLE_HOME"
"""Names the folder holding ``config.json`` and ``calls.jsonl``."""

CONFIG_FILE = "config.json"

CONFIG_KEYS = frozenset({"delay", "exit_code", "stderr", "stdout", "patch", "drop", "grandchild"})
"""The settings the double knows."""


def load_config(home: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The settings in ``home`` (none without a home or a ``config.json``)."""
    import json

    if not home:
        return {}
    try:
        with open(os.path.join(home, CONFIG_FILE), encoding="utf-8") as handle:
            config = json.load(handle)
    except FileNotFoundError:
        return {}
    return config if isinstance(config, dict) else {}
