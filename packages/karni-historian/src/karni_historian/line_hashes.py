"""Hashes of the line ranges a session wrote, for ``blame`` and for shared history.

What an edit wrote (its new text) is cut into ranges at blank lines, and
each range is hashed over its lines with their trailing white space and
line endings taken off. The same hash of today's lines of a file finds the
range again wherever it moved, after a rebase, a cherry-pick or a squash
merge where the session's commit no longer exists. ``share`` writes these
hashes into ``.karni/history/`` (the text itself is never shared), and
``blame`` hashes windows of today's lines with :func:`hash_lines` to match
them. A range of lines with no word in them (a brace, ``pass``) tells
nothing about who wrote it, so :func:`written_ranges` leaves it out.

The module imports only :mod:`hashlib`.
"""

from __future__ import annotations

import hashlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["HASH_PREFIX", "MIN_WORD_CHARS", "hash_lines", "normal_line", "written_ranges"]

HASH_PREFIX = "sha256:"
"""How a range's hash starts (the algorithm, as Agent Trace's ``content_hash`` names it)."""

_HEX_DIGITS = 16
"""The hex digits of the SHA-256 kept: 64 bits, ample for ranges of one file."""

MIN_WORD_CHARS = 4
"""A range counts when one of its lines holds at least this many letters or digits."""


def normal_line(line: str) -> str:
    """``line`` as it is hashed: without its line ending and trailing white space."""
    return line.rstrip("\r\n").rstrip()


def hash_lines(lines: Sequence[str]) -> str:
    """The hash of ``lines`` (each taken by :func:`normal_line`), ``sha256:`` and 16 hex digits."""
    text = "\n".join(normal_line(line) for line in lines)
    return (
        HASH_PREFIX
        + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HEX_DIGITS]
    )


def _telling(lines: Sequence[str]) -> bool:
    return any(sum(char.isalnum() for char in line) >= MIN_WORD_CHARS for line in lines)


def written_ranges(text: str) -> list[tuple[int, int, str]]:
    """The ranges of the written ``text``: ``(first line, line count, hash)``, first line 0-based.

    Ranges are the runs of non-blank lines; one with no line of at least
    :data:`MIN_WORD_CHARS` letters or digits is left out.
    """
    found: list[tuple[int, int, str]] = []
    lines = text.split("\n")
    start = None
    for number, line in enumerate([*lines, ""]):
        blank = not normal_line(line)
        if not blank and start is None:
            start = number
        elif blank and start is not None:
            block = lines[start:number]
            if _telling(block):
                found.append((start, len(block), hash_lines(block)))
            start = None
    return found
