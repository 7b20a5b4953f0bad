"""Reusing the rendered inventory while nothing it was read from has changed.

``karni context`` runs before every edit, and parsing the project's models and
viewsets is most of its own cost. The rendered text is kept with every
file-system fact it was derived from: each file read (modification time and
size), each folder listed (modification time, which changes when entries are
added, removed or renamed) and each path whose existence or kind was tested.
A later run re-checks every fact with one ``stat`` and reuses the text only if
all still hold. Facts too recent to trust when the text was rendered
(:func:`karni.agent.common.cache.trust_horizon`) keep it from being saved, and
the renderer's own source file is one of the facts, so upgrading Karni
invalidates the cache.

The cache is a file per project root in karni-core's cache folder, read and
written by :mod:`karni.agent.common.cache`; an empty ``KARNI_CACHE_DIR`` turns
it off. It never writes inside the project.
"""

from __future__ import annotations

import os
import stat

from karni.agent.common.cache import cache_file, read_cache, trust_horizon, write_cache

__all__ = ["CACHE_FORMAT", "cache_path", "cached", "path_kind"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CACHE_FORMAT = "karni-inventory 2"
_SEPARATOR = "\x1e"  # a record separator: never in a path or an inventory line


def cache_path(root: str) -> str | None:
    """The cache file for the project at ``root``, or None when caching is off."""
    return cache_file("inventory", root)


def path_kind(path: str) -> str:
    """``d`` (folder), ``f`` (file), ``o`` (something else) or ``x`` (missing)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "x"
    return "d" if stat.S_ISDIR(mode) else "f" if stat.S_ISREG(mode) else "o"


def _holds(fact: list[str]) -> bool:
    """Whether one recorded fact is still true."""
    try:
        if fact[0] == "k":
            return path_kind(fact[1]) == fact[2]
        info = os.stat(fact[1])
        if fact[0] == "c":
            return str(info.st_mtime_ns) == fact[2] and str(info.st_size) == fact[3]
        if fact[0] == "l":
            return str(info.st_mtime_ns) == fact[2]
    except (OSError, ValueError, IndexError):
        return False
    return False


def _load(path: str, root: str) -> str | None:
    text = read_cache(path, CACHE_FORMAT)
    if text is None:
        return None
    records = text.split(_SEPARATOR)
    if len(records) < 2 or records[0] != root:
        return None
    for record in records[1:-1]:
        if not _holds(record.split("\t")):
            return None
    return records[-1]


def _save(path: str, root: str, rendered: str, facts: list[tuple[str, ...]]) -> None:
    horizon = trust_horizon()
    for fact in facts:
        if fact[0] in ("c", "l") and (not fact[2].isdigit() or int(fact[2]) >= horizon):
            return  # too fresh to trust next time
    records = [root, *("\t".join(fact) for fact in facts), rendered]
    if any(_SEPARATOR in record for record in records) or any(
        "\t" in part or "\n" in part for fact in facts for part in fact
    ):
        return
    write_cache(path, CACHE_FORMAT, _SEPARATOR.join(records))


def cached(root: str, build: Callable[[str], tuple[str, list[tuple[str, ...]]]]) -> str:
    """The inventory of ``root``: from the cache when still valid, else ``build(root)``.

    Args:
        root: The project root.
        build: Renders the inventory and returns it with the facts it relied on.
    """
    path = cache_path(root)
    if path is not None:
        hit = _load(path, root)
        if hit is not None:
            return hit
    rendered, facts = build(root)
    if path is not None:
        _save(path, root, rendered, facts)
    return rendered
