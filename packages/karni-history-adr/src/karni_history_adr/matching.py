"""Which records concern a file.

A record concerns ``apps/events/models.py`` when it mentions the path itself,
the module (``apps.events.models``, also as ``apps.events.models.Event``), or
the file's directory (``apps/events/`` or the package ``apps.events``).
Mentions must stand as whole words: ``apps/events/models.py`` is not a mention
of ``apps/events`` the directory, and ``apps.events.models_old`` is not one of
``apps.events.models``.
"""

from __future__ import annotations

import posixpath
import re

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_history_adr.records import AdrRecord

__all__ = ["mention_pattern", "normalize_path", "records_mentioning"]

MAX_PATH_LENGTH = 1024
"""Longer paths are not looked up: no real project file has one."""

_PATH_START = r"(?<![\w./\\-])(?:\./)?"
_PATH_END = r"(?![\w/\\-]|\.\w)"
_MODULE_START = r"(?<![\w.])"
_MODULE_END = r"(?![\w]|\.[a-z_0-9])"


def normalize_path(path: str) -> str | None:
    """``path`` as a clean project-relative POSIX path, or None when it names no file inside.

    The project root itself, absolute paths, paths leaving the project,
    empty or overlong paths and paths with control characters give None.
    """
    if not path or len(path) > MAX_PATH_LENGTH or not path.isprintable() or "\\" in path:
        return None
    normal = posixpath.normpath(path.strip())
    if normal in (".", "..") or normal.startswith(("/", "../")):
        return None
    return normal


def _module_name(path: str) -> str | None:
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def mention_pattern(path: str) -> re.Pattern[str] | None:
    """A pattern matching any mention of ``path``, its module or its directory.

    Returns:
        None when ``path`` is not a file inside the project.
    """
    normal = normalize_path(path)
    if normal is None:
        return None
    alternatives = [_PATH_START + re.escape(normal) + _PATH_END]
    module = _module_name(normal)
    if module:
        alternatives.append(_MODULE_START + re.escape(module) + _MODULE_END)
    directory = posixpath.dirname(normal)
    if directory:
        # A one-word directory ("apps") counts only when written as a folder: "apps/".
        slash = "/?" if "/" in directory else "/"
        alternatives.append(_PATH_START + re.escape(directory) + slash + r"(?![\w/\\.-])")
        parts = directory.split("/")
        if len(parts) >= 2 and all(part.isidentifier() for part in parts):
            alternatives.append(_MODULE_START + re.escape(".".join(parts)) + _MODULE_END)
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives))


def records_mentioning(records: Iterable[AdrRecord], path: str) -> list[AdrRecord]:
    """The records whose text mentions ``path``, its module or its directory."""
    pattern = mention_pattern(path)
    if pattern is None:
        return []
    return [record for record in records if pattern.search(record.text)]
