"""Remembering each provider's store markers, so a project without its store never imports it.

Checking a provider's ``store_markers`` (:mod:`karni.agent.history.markers`)
needs the provider loaded, and importing the installed providers is most of
what ``karni context --with-history`` costs on a project with no store. When
discovery loads a provider whose markers are plain class attributes, it
records them with the modification time and size of every module file that
load imported. A later discovery for one project
(``discover(project_root=...)``) checks those files with one ``stat`` each;
when all still hold and none of the markers exists for the project, the
provider stays unloaded: it could not detect a store there, so it would not
have been asked. Upgrading or editing the provider changes a file, and the
markers are read from the provider itself again. Files modified too recently
before they were recorded (:func:`~karni.agent.common.cache.trust_horizon`)
are never trusted.

The record is a file per interpreter in the cache folder, read and written by
:mod:`karni.agent.common.cache`; an empty ``KARNI_CACHE_DIR`` turns it off.
See docs/performance.md.
"""

from __future__ import annotations

import os
import sys

from karni.agent.common.cache import cache_file, read_cache, trust_horizon, write_cache
from karni.agent.history.markers import find_marker

__all__ = ["CACHE_FORMAT", "MarkerMemory"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni.agent.common.entry_points import EntryPoint

CACHE_FORMAT = "karni-provider-markers 2"
_FIELD = "\x1f"  # a unit separator: never in a name, a path or a marker


class _Record:
    """One provider as last loaded: its name, markers, and the files they came from."""

    __slots__ = ("files", "label", "markers", "walk_up")

    def __init__(
        self, label: str, markers: tuple[str, ...], walk_up: bool, files: list[tuple[str, ...]]
    ) -> None:
        self.label = label
        self.markers = markers
        self.walk_up = walk_up
        self.files = files
        """``(mtime_ns, size, path)`` of each module file, as text."""

    def lines(self, key: str) -> list[str]:
        head = f"P\t{key}\t{self.label}\t{int(self.walk_up)}\t{_FIELD.join(self.markers)}"
        return [head, *("F\t" + "\t".join(fact) for fact in self.files)]


def _key(point: EntryPoint) -> str:
    return _FIELD.join((point.name, point.value, point.distribution, point.version))


def _file_fact(path: str) -> tuple[str, ...] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (str(info.st_mtime_ns), str(info.st_size), path)


def _holds(files: list[tuple[str, ...]]) -> bool:
    return all(_file_fact(fact[2]) == fact for fact in files)


class MarkerMemory:
    """The remembered markers of the installed providers, read once per discovery."""

    __slots__ = ("_changed", "_checked", "_path", "_records")

    def __init__(self, path: str | None, records: dict[str, _Record]) -> None:
        """Hold the records read from ``path`` (None: remember nothing)."""
        self._path = path
        self._records = records
        self._changed = False
        self._checked: set[str] = set()
        """Keys of the records whose files were found unchanged in this run."""

    @classmethod
    def read(cls) -> MarkerMemory:
        """The records of this interpreter's cache file; none when it is off or unreadable."""
        path = cache_file("provider-markers", sys.executable)
        if path is None:
            return cls(None, {})
        return cls(path, _parse(read_cache(path, CACHE_FORMAT) or ""))

    def ruled_out(self, point: EntryPoint, project_root: str | os.PathLike[str]) -> str | None:
        """The provider's remembered name when its markers rule out a store, else None."""
        key = _key(point)
        record = self._records.get(key)
        if record is None or not record.files or not _holds(record.files):
            return None
        self._checked.add(key)
        found = find_marker(record.markers, record.walk_up, project_root)
        return record.label if found == "" else None

    def learn(self, point: EntryPoint, provider: Any, label: str, modules: list[str]) -> None:
        """Remember ``provider``'s markers, read from its class, and the files of ``modules``."""
        declared = _class_markers(provider)
        if self._path is None or declared is None:
            return
        key = _key(point)
        if self._still_true(key, label, *declared):
            return  # which modules this load happened to import first does not matter
        files = _module_files([*modules, point.value.partition(":")[0].strip(), _module(provider)])
        if files is None:
            return
        self._records[key] = _Record(label, declared[0], declared[1], files)
        self._changed = True

    def _still_true(self, key: str, label: str, markers: tuple[str, ...], walk_up: bool) -> bool:
        """Whether the record of ``key`` says this, and its files are unchanged."""
        old = self._records.get(key)
        if old is None or (old.label, old.markers, old.walk_up) != (label, markers, walk_up):
            return False
        return key in self._checked or (bool(old.files) and _holds(old.files))

    def save(self) -> None:
        """Write the records back when :meth:`learn` changed them (a failure is only slower)."""
        if not self._changed or self._path is None:
            return

        lines = []
        for key, record in self._records.items():
            lines += record.lines(key)
        write_cache(self._path, CACHE_FORMAT, "\n".join(lines))
        self._changed = False


def _class_markers(provider: Any) -> tuple[tuple[str, ...], bool] | None:
    """``(markers, walk_up)`` when both are plain attributes of the provider's class."""
    try:
        cls = type(provider)
        markers = getattr(cls, "store_markers", None)
        walk_up = getattr(cls, "store_markers_walk_up", False)
        own = getattr(provider, "__dict__", {})
        if "store_markers" in own or "store_markers_walk_up" in own:
            return None  # set per object: it may differ next time
    except Exception:
        return None
    if not isinstance(markers, tuple) or not markers or not isinstance(walk_up, bool):
        return None
    if not all(isinstance(m, str) and m and not _unsafe(m) for m in markers):
        return None
    return markers, walk_up


def _unsafe(text: str) -> bool:
    return any(char in text for char in (_FIELD, "\t", "\n", "\r"))


def _module(provider: Any) -> str:
    try:
        return str(type(provider).__module__)
    except Exception:
        return ""


def _module_files(names: list[str]) -> list[tuple[str, ...]] | None:
    """The facts of each named module's file; None when one is too fresh to trust."""
    horizon = trust_horizon()
    facts: dict[str, tuple[str, ...]] = {}
    for name in dict.fromkeys(names):
        path = getattr(sys.modules.get(name), "__file__", None)
        if not isinstance(path, str) or _unsafe(path):
            continue
        fact = _file_fact(path)
        if fact is None or int(fact[0]) >= horizon:
            return None
        facts[path] = fact
    return list(facts.values()) or None


def _parse(text: str) -> dict[str, _Record]:
    """The records of a cache file's body ``text``."""
    records: dict[str, _Record] = {}
    current: _Record | None = None
    for line in text.split("\n"):
        fields = line.split("\t")
        if fields[0] == "P" and len(fields) == 5 and fields[3] in ("0", "1"):
            markers = tuple(fields[4].split(_FIELD))
            current = _Record(fields[2], markers, fields[3] == "1", [])
            records[fields[1]] = current
        elif fields[0] == "F" and len(fields) == 4 and current is not None:
            current.files.append(tuple(fields[1:]))
    return records
