"""Finding the Karni project a command runs in.

A Karni project is the nearest directory at or above the working directory
that holds ``manage.py`` or ``karni.rules.py``.
"""

from __future__ import annotations

import os

from karni.cli.errors import ProjectNotFoundError

__all__ = ["PROJECT_MARKERS", "find_project_root"]

PROJECT_MARKERS = ("manage.py", "karni.rules.py")


def find_project_root(start: str | None = None) -> str:
    """The absolute path of the nearest project root at or above ``start`` (the cwd).

    Raises:
        ProjectNotFoundError: No directory up to the file-system root has a marker.
    """
    current = os.path.abspath(start or os.getcwd())
    origin = current
    while True:
        for marker in PROJECT_MARKERS:
            if os.path.isfile(os.path.join(current, marker)):
                return current
        parent = os.path.dirname(current)
        if parent == current:
            raise ProjectNotFoundError(
                f"no Karni project at or above {origin}: looked for manage.py or karni.rules.py; "
                f"run karni inside a project, or create one with `karni new NAME`"
            )
        current = parent
