"""Reusing the rendered inventory while nothing it was read from has changed.

``karni context`` runs before every edit, and parsing the project's models and
viewsets is most of its own cost. The rendered text is kept with every
file-system fact it was derived from: each file read (modification time and
size), each folder listed (modification time, which changes when entries are
added, removed or renamed) and each path whose existence or kind was tested.
A later run re-checks every fact with one ``stat`` and reuses the text only if
all still hold. Facts younger than two seconds are never trusted (file-system
timestamps are coarse), and the renderer's own source file is one of the
facts, so upgrading Karni invalidates the cache.

The cache lives beside karni-core's entry-point cache: ``$KARNI_CACHE_DIR``,
else ``$XDG_CACHE_HOME/karni`` (default ``~/.cache/karni``); an empty
``KARNI_CACHE_DIR`` turns it off. It never writes inside the project.
"""

from __future__ import annotations

import os
import stat

__all__ = ["CACHE_FORMAT", "cache_path", "cached", "path_kind"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CACHE_FORMAT = "karni-inventory 1"
_RACY_NS = 2_000_000_000
_SEPARATOR = "\x1e"  # a record separator: never in a path or an inventory line


def _fnv1a(text: str) -> str:
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def cache_path(root: str) -> str | None:
    """The cache file for the project at ``root``, or None when caching is off."""
    from karni.agent.common.config import cache_dir

    folder = cache_dir()
    return os.path.join(folder, f"inventory-{_fnv1a(root)}.txt") if folder else None


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


_MAX_CACHE_BYTES = 8 << 20


def _load(path: str, root: str) -> str | None:
    from karni.agent.common.files import read_regular_file

    try:
        text = read_regular_file(path, _MAX_CACHE_BYTES, follow_symlinks=False).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    header, sep, rest = text.partition("\n")
    if header != CACHE_FORMAT or not sep:
        return None
    records = rest.split(_SEPARATOR)
    if len(records) < 2 or records[0] != root:
        return None
    for record in records[1:-1]:
        if not _holds(record.split("\t")):
            return None
    return records[-1]


def _save(path: str, root: str, rendered: str, facts: list[tuple[str, ...]]) -> None:
    import time

    limit = time.time_ns() - _RACY_NS
    for fact in facts:
        if fact[0] in ("c", "l") and (not fact[2].isdigit() or int(fact[2]) >= limit):
            return  # too fresh to trust next time
    records = [root, *("\t".join(fact) for fact in facts), rendered]
    if any(_SEPARATOR in record for record in records) or any(
        "\t" in part or "\n" in part for fact in facts for part in fact
    ):
        return
    payload = CACHE_FORMAT + "\n" + _SEPARATOR.join(records)
    from karni.agent.common.files import make_folders, write_atomic

    try:
        make_folders(os.path.dirname(path), mode=0o700)  # caches are owner-only
        write_atomic(path, payload, durable=False, mode=0o600)
    except (OSError, UnicodeError):
        pass  # a cache that cannot be written is only a slower next run


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
