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

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_history_adr.records import AdrRecord

__all__ = ["Mention", "mention_pattern", "normalize_path", "records_mentioning"]

MAX_PATH_LENGTH = 1024
"""Longer paths are not looked up: no real project file has one."""


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


class Mention:
    r"""The mentions of one file: its path, its module, its directory.

    In regular expression terms (``\w`` a letter, digit or underscore), a
    mention is one of: the path, after ``(?<![\w./\\-])(?:\./)?`` and before
    ``(?![\w/\\-]|\.\w)``; the dotted module, after ``(?<![\w.])`` and before
    ``(?![\w]|\.[a-z_0-9])``; the directory the same way as the path, followed
    by ``/`` (or ``/?`` when it has several parts) and then ``(?![\w/\\.-])``;
    the directory as a package, the same way as the module. Matched by hand,
    without ``re`` (see :mod:`karni_history_adr.scanning`).
    """

    __slots__ = ("_forms",)

    def __init__(self, path: str) -> None:
        """The forms a mention of ``path`` (clean, project-relative) may take."""
        forms: list[tuple[str, str]] = [("path", path)]
        module = _module_name(path)
        if module:
            forms.append(("module", module))
        directory = posixpath.dirname(path)
        if directory:
            forms.append(("folders" if "/" in directory else "folder", directory))
            parts = directory.split("/")
            if len(parts) >= 2 and all(part.isidentifier() for part in parts):
                forms.append(("module", ".".join(parts)))
        self._forms = forms

    def search(self, text: str) -> bool:
        """Whether ``text`` mentions the file anywhere."""
        return any(_mentioned(text, kind, form) for kind, form in self._forms)


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _mentioned(text: str, kind: str, form: str) -> bool:
    start = text.find(form)
    while start != -1:
        if _starts_well(text, start, kind) and _ends_well(text, start + len(form), kind):
            return True
        start = text.find(form, start + 1)
    return False


def _starts_well(text: str, start: int, kind: str) -> bool:
    """Nothing that could continue a name stands before ``start`` (a ``./`` may)."""
    if kind == "module":
        return not (start and (_is_word(text[start - 1]) or text[start - 1] == "."))
    if text[max(start - 2, 0) : start] == "./":
        start -= 2
    return not (start and (_is_word(text[start - 1]) or text[start - 1] in "./\\-"))


def _ends_well(text: str, end: int, kind: str) -> bool:
    """Nothing that could continue the name follows ``end``."""
    after, following = text[end : end + 1], text[end + 1 : end + 2]
    if kind == "module":
        return not (
            (after and _is_word(after)) or (after == "." and following in _MODULE_CONTINUES)
        )
    if kind == "path":
        return not (
            (after and (_is_word(after) or after in "/\\-"))
            or (after == "." and following and _is_word(following))
        )
    if after == "/":
        return _ends_folder(text, end + 1)
    return kind == "folders" and _ends_folder(text, end)


def _ends_folder(text: str, end: int) -> bool:
    after = text[end : end + 1]
    return not (after and (_is_word(after) or after in "/\\.-"))


_MODULE_CONTINUES = frozenset("abcdefghijklmnopqrstuvwxyz_0123456789")


def mention_pattern(path: str) -> Mention | None:
    """What mentions ``path``, its module or its directory (``.search(text)`` says whether).

    Returns:
        None when ``path`` is not a file inside the project.
    """
    normal = normalize_path(path)
    return None if normal is None else Mention(normal)


def records_mentioning(records: Iterable[AdrRecord], path: str) -> list[AdrRecord]:
    """The records whose text mentions ``path``, its module or its directory."""
    pattern = mention_pattern(path)
    if pattern is None:
        return []
    return [record for record in records if pattern.search(record.text)]
