"""Finding the Karni project a command runs in, and its machine-local folder.

A Karni project is the nearest directory at or above the working directory
that holds a regular file named ``manage.py`` or ``karni.rules.py``. Every
package that looks for a project uses :func:`find_project_root`, so they all
agree on which folder that is.
"""

from __future__ import annotations

import os

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
        a marker (each caller says so in its own words, naming
        :data:`MARKERS_TEXT`).
    """
    current = os.path.abspath(os.fspath(start) if start is not None else os.getcwd())
    while True:
        for marker in PROJECT_MARKERS:
            if os.path.isfile(os.path.join(current, marker)):
                return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def local_dir(project_root: str | os.PathLike[str]) -> str:
    """The project's ``.karni/local`` folder (it may not exist yet)."""
    return os.path.join(os.fspath(project_root), *LOCAL_DIR.split("/"))
