"""Finding the Karni project a command runs in, and its machine-local folder.

A Karni project is the nearest directory at or above the working directory
that holds a regular file named ``manage.py`` or ``karni.rules.py``. Every
package that looks for a project uses :func:`find_project_root`, so they all
agree on which folder that is. A folder owned by another user is not taken
(see :mod:`karni.agent.common.ownership`): a ``manage.py`` planted in a shared
parent folder must not make it the project.
"""

from __future__ import annotations

import os

from karni.agent.common.ownership import find_upwards

__all__ = [
    "LOCAL_DIR",
    "MARKERS_TEXT",
    "PROJECT_MARKERS",
    "find_project_root",
    "local_dir",
]

PROJECT_MARKERS = ("manage.py", "karni.rules.py")
"""The files that make a folder a Karni project (either one is enough)."""

MARKERS_TEXT = "manage.py or karni.rules.py"
"""The markers, as error messages name them."""

LOCAL_DIR = ".karni/local"
"""Machine-local files (state, the historian's database), relative to the project root."""


def find_project_root(start: str | os.PathLike[str] | None = None) -> str | None:
    """The absolute path of the nearest project root at or above ``start`` (the cwd).

    Returns:
        The folder, or None when no folder up to the file-system root holds
        a marker the current user owns (each caller says so in its own words,
        naming :data:`MARKERS_TEXT`; see
        :func:`karni.agent.common.ownership.ignored_folders` for any passed over).
    """
    return find_upwards(os.fspath(start) if start is not None else os.getcwd(), _marker_in)


def _marker_in(folder: str) -> str | None:
    for marker in PROJECT_MARKERS:
        if os.path.isfile(os.path.join(folder, marker)):
            return marker
    return None


def local_dir(project_root: str | os.PathLike[str]) -> str:
    """The project's ``.karni/local`` folder (it may not exist yet)."""
    return os.path.join(os.fspath(project_root), *LOCAL_DIR.split("/"))
