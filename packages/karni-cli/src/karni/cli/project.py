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

__all__ = ["find_project_root", "found_below", "projects_below"]


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
        below = projects_below(origin)
        if below:
            raise ProjectNotFoundError(
                f"no Karni project at or above {origin}: looked for {MARKERS_TEXT}; "
                f"{found_below(below)}"
            )
        raise ProjectNotFoundError(
            f"no Karni project at or above {origin}: looked for {MARKERS_TEXT}; "
            f"run karni inside a project, or create one with `karni new NAME`"
        )
    return root


_NOT_PROJECTS = frozenset({"node_modules", "site-packages", "venv", "env", "__pycache__"})
_MAX_LISTED = 200
"""Folders listed at most while looking below for a project (a home folder can hold many)."""


def projects_below(origin: str, depth: int = 2) -> list[str]:
    """Folders up to ``depth`` levels below ``origin`` that hold ``manage.py``, sorted, relative.

    Only the message of a failed search uses this: a repository whose Django
    project sits in a subfolder (``backend/manage.py``) is named, instead of
    advising ``karni new``. Hidden folders, ``node_modules`` and virtual
    environments are skipped; at most :data:`_MAX_LISTED` folders are listed.
    """
    found: list[str] = []
    level, listed = [origin], 0
    for _ in range(depth):
        below = []
        for folder in level:
            if listed >= _MAX_LISTED:
                break
            listed += 1
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if name[:1] in "._" or name in _NOT_PROJECTS or not os.path.isdir(path):
                    continue
                if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
                    continue
                if os.path.isfile(os.path.join(path, "manage.py")):
                    found.append(os.path.relpath(path, origin).replace(os.sep, "/"))
                else:
                    below.append(path)
        level = below
    return found


def found_below(folders: list[str]) -> str:
    """What to do when ``manage.py`` is in ``folders`` below the working directory."""
    from karni.agent.common.sanitize import clean_field

    shown = [clean_field(folder) + "/" for folder in folders[:3]]
    if len(folders) == 1:
        import shlex

        return f"manage.py is in {shown[0]}: run karni there (`cd {shlex.quote(shown[0][:-1])}`)"
    more = f" and {len(folders) - 3} more" if len(folders) > 3 else ""
    return f"manage.py is in {', '.join(shown)}{more}: run karni in the project you mean"
