"""The Karni project a command runs in, or the CLI's error saying there is none.

The search itself is karni-core's (:mod:`karni.agent.common.root`), shared
with every other Karni package; this module only words the failure.
"""

from __future__ import annotations

import os

from karni.agent.common.ownership import ignored_folders
from karni.agent.common.root import MARKERS_TEXT, PROJECT_MARKERS
from karni.agent.common.root import find_project_root as find_root
from karni.cli.errors import ProjectNotFoundError

__all__ = ["find_project_root"]


def find_project_root(start: str | None = None) -> str:
    """The absolute path of the nearest project root at or above ``start`` (the cwd).

    Raises:
        ProjectNotFoundError: No directory up to the file-system root has a marker.
    """
    root = find_root(start)
    if root is None:
        origin = os.path.abspath(start or os.getcwd())
        passed_over = [
            ignored
            for ignored in ignored_folders()
            if ignored.marker in PROJECT_MARKERS
            and (origin + os.sep).startswith(ignored.folder.rstrip(os.sep) + os.sep)
        ]
        if passed_over:
            raise ProjectNotFoundError(
                f"no Karni project at or above {origin} that you own: {passed_over[0].reason}"
            )
        raise ProjectNotFoundError(
            f"no Karni project at or above {origin}: looked for {MARKERS_TEXT}; "
            f"run karni inside a project, or create one with `karni new NAME`"
        )
    return root
