"""Finding ``karni.*`` entry points quickly, whatever else is installed.

``importlib.metadata`` costs tens of milliseconds to import on Python 3.11 and
reads every installed distribution's metadata, which an agent would pay before
every edit. This module reads the ``*.dist-info``/``*.egg-info`` folders on
``sys.path`` itself and keeps what it found for ``karni.*`` groups in a small
cache, keyed by each path entry's modification time, so the steady-state cost
is a ``stat`` per path entry and one small file, however many unrelated
distributions sit beside Karni.

Every ``karni.*`` group is read here (history providers, ``karni.checks``,
``karni.settings``), so the index lives in karni-core's common layer: a
command that reads checks or settings does not load the history package.

The cache is a file per interpreter and path in the cache folder
(:mod:`karni.agent.common.cache`, which also reads and writes it); an empty
``KARNI_CACHE_DIR`` turns it off. A folder modified too recently before it was
scanned (:func:`~karni.agent.common.cache.trust_horizon`) is never trusted from
the cache, so fresh installs are seen.
"""

from __future__ import annotations

import os
import sys

from karni.agent.common.cache import cache_file, read_cache, trust_horizon, write_cache
from karni.agent.common.names import normalize_name

__all__ = ["EntryPoint", "entry_points", "load_value"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

CACHE_FORMAT = "karni-entry-points 2"
_GROUP_PREFIX = "karni."


class EntryPoint:
    """One entry point: ``name = value`` in ``group``, from a distribution."""

    __slots__ = ("distribution", "group", "name", "value", "version")

    def __init__(self, group: str, name: str, value: str, distribution: str, version: str) -> None:
        """Create an entry point record."""
        self.group = group
        self.name = name
        self.value = value
        self.distribution = distribution
        self.version = version

    def __repr__(self) -> str:
        return (
            f"EntryPoint(group={self.group!r}, name={self.name!r}, value={self.value!r}, "
            f"distribution={self.distribution!r}, version={self.version!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EntryPoint):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[str, str, str, str, str]:
        return (self.group, self.name, self.value, self.distribution, self.version)


def load_value(value: str) -> Any:
    """Import the object an entry-point value (``module:attr.attr``) names."""
    target = value.split("[", 1)[0].strip()
    module_name, _, attribute = target.partition(":")
    module_name = module_name.strip()
    # `__import__` rather than `importlib.import_module`: `importlib` imports `warnings`.
    __import__(module_name)
    obj: Any = sys.modules[module_name]
    for part in filter(None, attribute.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def _parse_entry_points(text: str) -> Iterable[tuple[str, str, str]]:
    """``(group, name, value)`` for every entry in a ``karni.*`` section of ``text``."""
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[" and line[-1] == "]":
            group = line[1:-1].strip()
            continue
        if group is None or not group.startswith(_GROUP_PREFIX):
            continue
        name, sep, value = line.partition("=")
        if sep and name.strip() and value.strip():
            yield group, name.strip(), value.strip()


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _dist_name_version(folder: str, meta_dir: str) -> tuple[str, str]:
    """Name and version of a distribution from its metadata folder's name."""
    stem = folder.rsplit(".", 1)[0]
    name, _, rest = stem.partition("-")
    version = rest.split("-", 1)[0]
    if not version:
        for header in (_read_text(os.path.join(meta_dir, "PKG-INFO")) or "").splitlines():
            if header.startswith("Version:"):
                version = header[8:].strip()
                break
    return normalize_name(name), version


# Read by hand, not with importlib.metadata: bench row `karni context --with-history FILE (no
# store)` is 10.6 ms this way and 43.3 ms through importlib.metadata (1.08x against 4.76x).
def _scan_path_entry(entry: str) -> list[tuple[str, str, str, str, str]]:
    """Every ``karni.*`` entry point of the distributions in one ``sys.path`` folder."""
    found: list[tuple[str, str, str, str, str]] = []
    try:
        with os.scandir(entry) as listing:
            folders = sorted(
                item.name
                for item in listing
                if item.name.endswith((".dist-info", ".egg-info")) and item.is_dir()
            )
    except OSError:
        return found
    for folder in folders:
        meta_dir = os.path.join(entry, folder)
        text = _read_text(os.path.join(meta_dir, "entry_points.txt"))
        if not text or _GROUP_PREFIX not in text:
            continue
        items = list(_parse_entry_points(text))
        if not items:
            continue
        distribution, version = _dist_name_version(folder, meta_dir)
        for group, name, value in items:
            found.append((group, name, value, distribution, version))
    return found


def _cache_file(entries: list[str]) -> str | None:
    return cache_file("entry-points", "\0".join([sys.executable, *entries]))


def _load_cache(path: str) -> dict[str, tuple[int, list[tuple[str, ...]]]]:
    """``{path entry: (mtime_ns, records)}`` from the cache file; empty if unusable."""
    text = read_cache(path, CACHE_FORMAT)
    cached: dict[str, tuple[int, list[tuple[str, ...]]]] = {}
    if not text:
        return cached
    current: list[tuple[str, ...]] | None = None
    for line in text.split("\n"):
        fields = line.split("\t")
        if fields[0] == "P" and len(fields) == 3:
            current = []
            try:
                cached[fields[2]] = (int(fields[1]), current)
            except ValueError:
                return {}
        elif fields[0] == "E" and len(fields) == 6 and current is not None:
            current.append(tuple(fields[1:]))
    return cached


def _write_cache(path: str, scanned: dict[str, tuple[int, list[tuple[str, ...]]]]) -> None:
    """Write the index; a folder or record that would not read back as written is left out."""
    lines = []
    for entry, (mtime, records) in scanned.items():
        fields = [entry, *(field for record in records for field in record)]
        if any("\t" in field or "\n" in field for field in fields):
            continue  # it would not read back as written: scanned again next time
        lines.append(f"P\t{mtime}\t{entry}")
        lines.extend("E\t" + "\t".join(record) for record in records)
    write_cache(path, CACHE_FORMAT, "\n".join(lines))


def entry_points(group: str, path: list[str] | None = None) -> list[EntryPoint]:
    """All entry points in ``group`` (which must start with ``karni.``) on ``path``.

    Args:
        group: The entry-point group, e.g. ``karni.history_providers``.
        path: The folders to search; ``sys.path`` by default.

    Returns:
        The entry points in ``sys.path`` order. As with ``importlib.metadata``,
        a distribution found twice counts once: the first copy on the path wins.
    """
    if not group.startswith(_GROUP_PREFIX):
        raise ValueError(f"only `karni.*` entry-point groups are indexed, not `{group}`")
    entries = _path_entries(sys.path if path is None else path)
    cache_path = _cache_file(entries)
    cached = _load_cache(cache_path) if cache_path else {}
    scanned, dirty = _scan(entries, cached)
    trusted = {entry: value for entry, value in scanned.items() if value[0] >= 0}
    if cache_path and (dirty or set(cached) != set(trusted)):
        _write_cache(cache_path, trusted)
    return _in_path_order(group, entries, scanned)


def _path_entries(raw_entries: list[str]) -> list[str]:
    """The folders to search, absolute, each once, in order."""
    entries: list[str] = []
    seen = set()
    for raw in raw_entries:
        entry = os.path.abspath(raw or os.curdir)
        if entry not in seen:
            seen.add(entry)
            entries.append(entry)
    return entries


def _scan(
    entries: list[str], cached: dict[str, tuple[int, list[tuple[str, ...]]]]
) -> tuple[dict[str, tuple[int, list[tuple[str, ...]]]], bool]:
    """``{entry: (mtime_ns, records)}`` for every folder, from the cache where it still holds.

    A folder modified too recently to trust gets ``-1`` as its time, so it is
    scanned again next time. The flag says whether the cache needs writing.
    """
    horizon = trust_horizon()
    scanned: dict[str, tuple[int, list[tuple[str, ...]]]] = {}
    dirty = False
    for entry in entries:
        try:
            mtime = os.stat(entry).st_mtime_ns
        except OSError:
            continue
        hit = cached.get(entry)
        settled = mtime < horizon
        if hit is not None and hit[0] == mtime and settled:
            scanned[entry] = hit
            continue
        records = [tuple(record) for record in _scan_path_entry(entry)]
        scanned[entry] = (mtime if settled else -1, records)
        dirty = dirty or settled or hit is not None
    return scanned, dirty


def _in_path_order(
    group: str, entries: list[str], scanned: dict[str, tuple[int, list[tuple[str, ...]]]]
) -> list[EntryPoint]:
    """The entry points of ``group``; a distribution's first copy on the path hides the rest."""
    result: list[EntryPoint] = []
    distributions_seen: set[str] = set()
    for entry in entries:
        if entry not in scanned:
            continue
        distributions_here: set[str] = set()
        for record in scanned[entry][1]:
            record_group, name, value, distribution, version = record
            if distribution in distributions_seen:
                continue
            distributions_here.add(distribution)
            if record_group == group:
                result.append(EntryPoint(record_group, name, value, distribution, version))
        distributions_seen |= distributions_here
    return result
