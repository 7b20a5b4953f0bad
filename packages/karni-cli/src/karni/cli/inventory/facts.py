"""Reading the project for the inventory while noting every file-system fact it relied on.

The inventory cache (:mod:`karni.cli.inventory.cache`) reuses a rendered
inventory only while everything it was derived from still holds: each file
read (modification time and size), each folder listed (modification time)
and each path whose existence or kind was tested. The inventory's modules do
all their reading through these functions, which note those facts while
:func:`recorded` runs.
"""

from __future__ import annotations

import _ast
import os

from karni.cli.inventory.cache import path_kind

__all__ = ["exists", "isdir", "isfile", "listdir", "parse", "read", "recorded", "walk"]

_ONLY_AST = _ast.PyCF_ONLY_AST

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TypeVar

    T = TypeVar("T")

_facts: list[tuple[str, ...]] | None = None
"""While :func:`recorded` runs: every file-system fact read so far."""


def recorded(build: Callable[[], T]) -> tuple[T, list[tuple[str, ...]]]:
    """``build()``'s result, and every file-system fact it read through this module."""
    global _facts
    facts: list[tuple[str, ...]] = []
    _facts = facts
    try:
        return build(), facts
    finally:
        _facts = None


def _note_kind(path: str) -> str:
    kind = path_kind(path)
    if _facts is not None:
        _facts.append(("k", path, kind))
    return kind


def isdir(path: str) -> bool:
    """Whether ``path`` is a folder (noted)."""
    return _note_kind(path) == "d"


def isfile(path: str) -> bool:
    """Whether ``path`` is a regular file (noted)."""
    return _note_kind(path) == "f"


def exists(path: str) -> bool:
    """Whether anything is at ``path`` (noted)."""
    return _note_kind(path) != "x"


def listdir(path: str) -> list[str]:
    """The entries of the folder ``path`` (its modification time noted)."""
    if _facts is not None:
        try:
            _facts.append(("l", path, str(os.stat(path).st_mtime_ns)))
        except OSError:
            _facts.append(("k", path, "x"))
    return os.listdir(path)


def walk(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk``, noting each folder it lists (its modification time changes with its entries)."""
    if _facts is not None and path_kind(top) != "d":
        _facts.append(("k", top, path_kind(top)))
    for current, dirs, files in os.walk(top):
        if _facts is not None:
            try:
                _facts.append(("l", current, str(os.stat(current).st_mtime_ns)))
            except OSError:
                _facts.append(("k", current, "x"))
        yield current, dirs, files


def read(path: str) -> str | None:
    """The text of the file at ``path``, or None (its modification time and size noted)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            if _facts is not None:
                info = os.fstat(handle.fileno())
                _facts.append(("c", path, str(info.st_mtime_ns), str(info.st_size)))
            return handle.read()
    except OSError:
        if _facts is not None:
            _facts.append(("k", path, path_kind(path)))
        return None


def parse(path: str, text: str | None = None) -> _ast.Module | None:
    """The module's AST, or None when it cannot be read or is not valid Python."""
    if text is None:
        text = read(path)
        if text is None:
            return None
    try:
        module = compile(text, path, "exec", _ONLY_AST)
    except (SyntaxError, ValueError):
        return None
    assert isinstance(module, _ast.Module)  # mode "exec" always compiles to a Module
    return module
