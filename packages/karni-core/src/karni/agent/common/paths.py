"""Naming a file by its path inside the project, with one rule for symlinks.

The rule: the folders on the way are resolved (a symlinked folder may lead
out of the project, and then the file is not inside it), while the last part
is kept as named, so a symlinked file is known by its own path in the project
rather than by where it points. The project root is compared resolved too, so
a project reached through a symlink still contains its own files.

Reading goes one step further (:func:`leads_inside`): a file is read only when
what it leads to, every link followed to the end, lies inside the project. A
symlinked file is still *named* by its own path, but a link out of the
project (``docs/adr/0004.md`` → ``~/notes/private.md``) is never read through.
"""

from __future__ import annotations

import os

__all__ = ["leads_inside", "project_relative", "to_posix"]


def to_posix(relative: str) -> str:
    """A relative path with the platform's separators replaced by ``/``."""
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


def project_relative(
    project_root: str | os.PathLike[str], path: str | os.PathLike[str], *, cwd: str | None = None
) -> str | None:
    """``path`` relative to the project root, as POSIX.

    Args:
        project_root: The project's root folder.
        path: A path relative to ``cwd`` (default: the working directory), or absolute.
        cwd: The folder a relative ``path`` starts from.

    Returns:
        The project-relative POSIX path, ``"."`` for the root itself, or None
        when ``path`` lies outside the project.
    """
    real_root = os.path.realpath(project_root)
    start = os.fspath(path)
    if cwd is not None:
        start = os.path.join(cwd, start)
    parent, name = os.path.split(os.path.abspath(start))
    target = os.path.join(os.path.realpath(parent), name) if name else os.path.realpath(parent)
    if target == real_root:
        return "."
    try:
        inside = os.path.commonpath([real_root, target]) == real_root
    except ValueError:  # different drives on Windows
        inside = False
    if not inside:
        return None
    return to_posix(os.path.relpath(target, real_root))


def leads_inside(project_root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str | None:
    """Where ``path`` leads, every link followed, when that lies inside the project; else None.

    Providers read a project's files through this: the returned path is the
    real file, to be opened without following a link again (a link swapped in
    meanwhile is then refused rather than followed).
    """
    real_root = os.path.realpath(project_root)
    target = os.path.realpath(path)
    try:
        inside = os.path.commonpath([real_root, target]) == real_root
    except ValueError:  # different drives on Windows
        inside = False
    return target if inside else None
