"""Whether a folder belongs to the user running Karni, and the one walk up the tree.

A walk up the directory tree may reach folders other users control (``/tmp``,
a shared mount). A project, a store or a setting found there could be
planted, so every walk-up in every Karni package goes through
:func:`find_upwards`: a folder (or marker) owned by another user is not
taken, unless the user lists it in ``safe_directories`` in their own
configuration file (never the project's). Each folder passed over is recorded
so that ``karni doctor`` can say what it ignored and why (see
``docs/security.md``).
"""

from __future__ import annotations

import os

__all__ = [
    "SAFE_DIRECTORIES_KEY",
    "IgnoredFolder",
    "find_upwards",
    "forget_ignored",
    "ignored_folders",
    "owned_by_current_user",
    "owner_uid",
    "refusal",
    "safe_directories",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

SAFE_DIRECTORIES_KEY = "safe_directories"
"""The key, in the user's own configuration file, listing other users' folders Karni may use."""


class IgnoredFolder:
    """A folder a walk-up passed over: where, which marker it held, and why."""

    __slots__ = ("folder", "marker", "reason")

    def __init__(self, folder: str, marker: str, reason: str) -> None:
        self.folder = folder
        self.marker = marker
        self.reason = reason

    def __repr__(self) -> str:
        return f"IgnoredFolder({self.folder!r}, {self.marker!r}, {self.reason!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IgnoredFolder) and (
            (self.folder, self.marker, self.reason) == (other.folder, other.marker, other.reason)
        )

    def __hash__(self) -> int:
        return hash((self.folder, self.marker, self.reason))


_ignored: list[IgnoredFolder] = []


def owner_uid(path: str | os.PathLike[str]) -> int | None:
    """The user id owning ``path`` (a symlink not followed); None when it cannot be examined."""
    try:
        return os.lstat(path).st_uid
    except (OSError, ValueError):
        return None


def _current_uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return None if getuid is None else int(getuid())


def owned_by_current_user(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (not followed when a symlink) is owned by the current user.

    On systems without user ids (Windows) every path that exists counts as
    owned. A path that cannot be examined is not owned.
    """
    owner = owner_uid(path)
    if owner is None:
        return False
    current = _current_uid()
    return current is None or owner == current


def _target_owned(path: str) -> bool:
    """Whether what ``path`` leads to (a symlink followed) is the current user's too."""
    current = _current_uid()
    try:
        return current is None or os.stat(path).st_uid == current
    except (OSError, ValueError):
        return True  # a dangling link leads nowhere: nothing of another user's is taken


def _target_owner(path: str) -> int | None:
    """The user id owning what ``path`` leads to, or None when it cannot be examined."""
    try:
        return os.stat(path).st_uid
    except (OSError, ValueError):
        return None


def safe_directories() -> tuple[str, ...]:
    """The resolved folders listed under ``safe_directories`` in the user's configuration.

    Only the user's own file counts: a project cannot vouch for itself. A
    broken or missing file, or a value that is not a list of strings, lists nothing.
    """
    # bench row "karni context" runs without it
    from karni.agent.common.config import read_config, user_config_path
    from karni.agent.common.errors import KarniCoreError

    try:
        listed = read_config(user_config_path()).get(SAFE_DIRECTORIES_KEY, [])
    except KarniCoreError:
        return ()
    if not isinstance(listed, list):
        return ()
    folders = []
    for entry in listed:
        if isinstance(entry, str) and entry:
            folders.append(os.path.realpath(os.path.expanduser(entry)))
    return tuple(folders)


def refusal(folder: str, marker: str | None = None) -> str | None:
    """Why ``folder`` (and its ``marker`` entry) may not be used, or None when it may.

    A folder is usable when it and the marker (and, for a symlinked marker,
    what it leads to) are owned by the current user, or when the folder is
    listed in :func:`safe_directories`.
    """
    paths = [folder] if marker is None else [folder, os.path.join(folder, marker)]
    for path in paths:
        if owned_by_current_user(path) and (path == folder or _target_owned(path)):
            continue
        if os.path.realpath(folder) in safe_directories():
            return None
        owner = owner_uid(path)
        shown = path
        if owned_by_current_user(path):  # a link of ours to what another user owns
            owner, shown = _target_owner(path), f"{path} leads to {os.path.realpath(path)}, which"
        whose = "another user" if owner is None else f"another user (uid {owner})"
        return (
            f"{shown} is owned by {whose}; list {folder} under {SAFE_DIRECTORIES_KEY} "
            f"in your own Karni config.toml to use it"
        )
    return None


def find_upwards(
    start: str | os.PathLike[str],
    marker_in: Callable[[str], str | None],
    *,
    stop_at_first: bool = False,
) -> str | None:
    """The nearest folder at or above ``start`` that holds a marker and may be used.

    Args:
        start: Where the walk begins (made absolute, not resolved).
        marker_in: The name of the marker entry a folder holds (for example
            ``.chronicle`` or ``manage.py``), or None when it holds none.
        stop_at_first: End the walk at the first folder holding a marker
            even when it is refused (as a tool whose own walk stops there would).

    Returns:
        The folder, or None. A folder holding a marker but owned by another
        user is passed over and recorded (see :func:`ignored_folders`).
    """
    current = os.path.abspath(os.fspath(start))
    while True:
        marker = marker_in(current)
        if marker is not None:
            reason = refusal(current, marker)
            if reason is None:
                return current
            ignored = IgnoredFolder(current, marker, reason)
            if ignored not in _ignored:
                _ignored.append(ignored)
            if stop_at_first:
                return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def ignored_folders() -> list[IgnoredFolder]:
    """Every folder a walk-up in this process passed over, in the order met."""
    return list(_ignored)


def forget_ignored() -> None:
    """Clear the record of :func:`ignored_folders` (before a fresh report)."""
    _ignored.clear()
