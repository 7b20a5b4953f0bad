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
import stat

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


MAX_SOURCE_BYTES = 4 << 20
"""A source file larger than this (4 MiB) is not read: no project writes one by hand."""


def read(path: str) -> str | None:
    """The text of the file at ``path``, or None (its modification time and size noted).

    Only a regular file is read, and only when it is not too large: a FIFO or
    a device planted in a repository must not hang or flood ``karni context``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(fd, "rb") as handle:
            info = os.fstat(fd)
            if _facts is not None:
                _facts.append(("c", path, str(info.st_mtime_ns), str(info.st_size)))
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
                return None
            data = handle.read(MAX_SOURCE_BYTES + 1)
        if len(data) > MAX_SOURCE_BYTES:
            return None
        return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
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
