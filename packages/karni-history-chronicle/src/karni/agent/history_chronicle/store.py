"""Finding a project's Chronicle store, with the same walk-up Chronicle does.

Chronicle looks for the nearest entry named ``.chronicle`` from its working
directory up to the filesystem root, and treats the directory holding it as
the repository root. ``detect`` runs before every edit an agent makes, so this
is a few ``stat`` calls: no process is started and the store is never read.
"""

from __future__ import annotations

import os

__all__ = ["STORE_DIRNAME", "command_path", "find_store_root"]

STORE_DIRNAME = ".chronicle"
"""The name of Chronicle's store directory."""


def find_store_root(project_root: str | os.PathLike[str]) -> str | None:
    """The directory holding the nearest ``.chronicle/`` at or above ``project_root``.

    The walk starts from the physical path (Chronicle's working directory is
    always physical) and stops at the first entry named ``.chronicle``, as
    Chronicle's does. That entry only counts as a store when it is a directory:
    a plain file there would make Chronicle fail, so the walk does not go on
    past it. A dangling symlink is no entry at all. A store owned by another
    user is not taken (karni-core's walk-up, as every provider's): a shared
    parent folder such as ``/tmp`` could hold a planted one.

    Returns:
        The store's parent directory (Chronicle's repository root), or None.
    """
    from karni.agent.common.ownership import find_upwards

    try:
        start = os.path.realpath(project_root)
    except (OSError, ValueError):
        return None
    found = find_upwards(start, _store_entry, stop_at_first=True)
    if found is None:
        return None
    return found if os.path.isdir(os.path.join(found, STORE_DIRNAME)) else None


def _store_entry(folder: str) -> str | None:
    """``.chronicle`` when ``folder`` holds an entry of that name (a dangling link is none)."""
    try:
        os.stat(os.path.join(folder, STORE_DIRNAME))
    except (OSError, ValueError):
        return None
    return STORE_DIRNAME


def command_path(store_root: str, project_root: str | os.PathLike[str], path: str) -> str | None:
    """The argument naming ``path`` for a ``chronicle`` run from ``store_root``.

    Args:
        store_root: The directory holding ``.chronicle/``.
        project_root: The Karni project's root, at or below ``store_root``.
        path: The file, relative to ``project_root`` (POSIX).

    Returns:
        The path relative to ``store_root``, POSIX and normalised, with
        karni-core's one symlink rule (:mod:`karni.agent.common.paths`),
        prefixed with ``./`` when it starts with ``-`` so it cannot read as an
        option; None when it lies outside ``store_root`` or is ``store_root``
        itself (Chronicle refuses both).
    """
    from karni.agent.common.paths import project_relative

    try:
        relative = project_relative(store_root, path, cwd=os.path.realpath(project_root))
    except (OSError, ValueError):
        return None
    if relative is None or relative == ".":
        return None
    return f"./{relative}" if relative.startswith("-") else relative
