"""A provider's optional hint that lets Karni skip ``detect`` when no store can exist.

``detect`` receives a :class:`pathlib.Path`, and importing :mod:`pathlib` is the
largest single cost of ``karni context --with-history`` on a project with no
store. A provider may declare the paths one of which must exist for it to
detect a store::

    store_markers = (".my-history",)      # relative to the project root
    store_markers_walk_up = True          # also look in every parent folder

When the provider declares markers and none exists, Karni treats it as "no
store" without calling ``detect``; when one exists, ``detect`` still decides.
A provider without the hint is always asked. Walking up, a marker in a
folder owned by another user does not count (see
:mod:`karni.agent.common.ownership`).
"""

from __future__ import annotations

import os

__all__ = ["find_marker", "markers_rule_out", "store_marker"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _declared_markers(provider: Any) -> tuple[str, ...] | None:
    markers = getattr(provider, "store_markers", None)
    if isinstance(markers, str) or not isinstance(markers, tuple | list):
        return None
    if not markers or not all(isinstance(marker, str) and marker for marker in markers):
        return None
    return tuple(markers)


def markers_rule_out(provider: Any, project_root: str | os.PathLike[str]) -> bool:
    """True when ``provider`` declares store markers and none of them exists.

    Never raises: a provider whose hint cannot be read is simply asked.
    """
    found = _found_marker(provider, project_root)
    return found is not None and not found


def store_marker(provider: Any, project_root: str | os.PathLike[str]) -> str | None:
    """The path of the first of ``provider``'s store markers that exists, or None.

    None too for a provider that declares no markers (``karni doctor -v``
    shows where a store was seen). Never raises.
    """
    return _found_marker(provider, project_root) or None


def _found_marker(provider: Any, project_root: str | os.PathLike[str]) -> str | None:
    """The existing marker's path, ``""`` when none exists, None when none is declared."""
    try:
        markers = _declared_markers(provider)
        if markers is None:
            return None
        walk_up = getattr(provider, "store_markers_walk_up", False) is True
    except Exception:
        return None
    return find_marker(markers, walk_up, project_root)


def find_marker(
    markers: tuple[str, ...], walk_up: bool, project_root: str | os.PathLike[str]
) -> str | None:
    """The path of the first of ``markers`` that exists for ``project_root``, else ``""``.

    None when the root cannot be read as a path (the provider is then asked).
    """
    try:
        given = os.path.abspath(os.fspath(project_root))
        # Parents differ when the root is reached through a symlink: a provider
        # walking up may start from either side, so both chains are looked at.
        starts = dict.fromkeys((given, os.path.realpath(given)) if walk_up else (given,))
    except Exception:
        return None
    for start in starts:
        found = _marker_at_or_above(start, markers, walk_up)
        if found is not None:
            return found
    return ""


def _marker_at_or_above(folder: str, markers: tuple[str, ...], walk_up: bool) -> str | None:
    """The path of the first marker in ``folder`` (or, walking up, a parent); None if none."""
    seen: dict[str, str] = {}

    def marker_in(candidate: str) -> str | None:
        for marker in markers:
            if os.path.lexists(os.path.join(candidate, marker)):
                seen[candidate] = marker
                return marker
        return None

    if not walk_up:
        found = marker_in(folder)
        return None if found is None else os.path.join(folder, found)
    # bench row "discover() with 10 unrelated distributions" runs without it
    from karni.agent.common.ownership import find_upwards

    # A marker in a folder another user owns is no store of this user's.
    store_folder = find_upwards(folder, marker_in)
    return None if store_folder is None else os.path.join(store_folder, seen[store_folder])
