"""Whether the user shares this project's history, and whether the project recommends it.

Sharing a session's condensed history puts the user's own prompts into the
repository, so only the user can switch it on (``docs/how-to/team-history.md``):
``historian.share`` is read from the user's configuration alone (true for
every project, or a list of project folders), and a project's file can only
set ``historian.share_recommended``, which ``karni doctor`` passes on.
"""

from __future__ import annotations

import os

from karni.agent.common.config import PROJECT, USER, config_layers, table

__all__ = ["consented", "recommended"]


def _historian_table(root: str, scope: str) -> dict[str, object]:
    """The ``[historian]`` table of the user's (``USER``) or the project's file alone."""
    for layer in config_layers(root):
        if layer.scope == scope:
            return table(layer, "historian")
    return {}


def _same_folder(one: str, other: str) -> bool:
    try:
        return os.path.realpath(os.path.expanduser(one)) == os.path.realpath(other)
    except (OSError, ValueError):
        return False


def consented(root: str) -> bool:
    """Whether the user's own settings share this project's sessions (``historian.share``)."""
    value = _historian_table(root, USER).get("share", False)
    if value is True:
        return True
    if isinstance(value, list):
        return any(isinstance(item, str) and _same_folder(item, root) for item in value)
    return False


def recommended(root: str) -> bool:
    """Whether the project's configuration recommends sharing (``historian.share_recommended``)."""
    return _historian_table(root, PROJECT).get("share_recommended") is True
