"""The lines an edit wrote, as ranges, and the hashes ``blame`` recognises them by.

``karni-historian blame`` names the request that wrote a line even when the
session's own commit is gone (a squash merge, a cherry-pick, a rebase by
someone else): it matches today's lines against what each session's edits
wrote. This module says what "wrote" and "matches" mean, in one place, so
that every producer of these hashes (``ingest``, reading a session's edits;
``share``, writing them into the repository for teammates) and their one
reader (:mod:`karni_historian.blame`) agree byte for byte:

- an edit *wrote* the lines of its new text that its replaced text did not
  hold (a line diff of the two): the context an ``Edit`` call repeats around
  its change is not its work. Each run of such lines is a *written range*;
- a line is compared by its text without the whitespace at its end
  (:func:`normal_line`), and loosely (:func:`loose_line`) without any
  whitespace and with one quote style, which survives a formatter;
- each line is kept as a short hash (:func:`line_hash`, 8 hex digits), and
  the range as a whole as :func:`range_hash` (``blake2b:`` and 16 hex
  digits, the ``content_hash`` of an Agent Trace range). The text itself is
  never stored: a store or a shared file holds the hashes only.

See ``docs/historian/blame.md``. Standard library only.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "HASH_PREFIX",
    "LINE_HASH_CHARS",
    "WrittenRange",
    "decode_hashes",
    "encode_hashes",
    "is_distinctive",
    "line_hash",
    "loose_line",
    "normal_line",
    "range_hash",
    "written_ranges",
]

LINE_HASH_CHARS = 8
"""Hex digits of a line's hash: 32 bits, so a collision inside one file is rare and harmless."""

HASH_PREFIX = "blake2b:"
"""What a range's hash starts with: the algorithm, as Agent Trace's ``content_hash`` shows it."""

_LCS_CELLS = 4_000_000
"""Above this many line pairs an edit's whole new text counts as written (no line diff)."""


def normal_line(line: str) -> str:
    """A line as compared exactly: without whitespace (a carriage return too) at its end."""
    return line.rstrip()


def loose_line(line: str) -> str:
    """A line as compared loosely: no whitespace at all, and every ``'`` a ``"``."""
    return "".join(line.split()).replace("'", '"')


def line_hash(text: str) -> str:
    """The hash of one line's text, normalised (:func:`normal_line` or :func:`loose_line`)."""
    digest = hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=LINE_HASH_CHARS // 2
    )
    return digest.hexdigest()


def range_hash(lines: Iterable[str]) -> str:
    """The hash of a range of lines, each normalised with :func:`normal_line`."""
    text = "\n".join(normal_line(line) for line in lines)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8)
    return HASH_PREFIX + digest.hexdigest()


def encode_hashes(hashes: Iterable[str]) -> str:
    """Line hashes as stored and shared: separated by single spaces."""
    return " ".join(hashes)


def decode_hashes(text: str) -> list[str]:
    """The line hashes :func:`encode_hashes` wrote (malformed entries are dropped)."""
    size = LINE_HASH_CHARS
    return [
        h for h in text.split(" ") if len(h) == size and all(c in "0123456789abcdef" for c in h)
    ]


def is_distinctive(line: str) -> bool:
    """Whether a line can tell its writer alone: ten characters or more besides whitespace.

    Not ``}``, ``return None``'s shorter kin (``return``, ``pass``, ``x = 1``) or
    a blank line; four of the characters must be letters or digits.
    """
    loose = loose_line(line)
    return len(loose) >= 10 and sum(c.isalnum() for c in loose) >= 4


@dataclass(frozen=True)
class WrittenRange:
    """A run of lines an edit wrote, in the order it wrote them.

    Attributes:
        lines: The lines' text (kept in memory only, never stored).
    """

    lines: tuple[str, ...]

    @property
    def hash(self) -> str:
        """The range's :func:`range_hash`."""
        return range_hash(self.lines)

    @property
    def line_hashes(self) -> list[str]:
        """Each line's exact hash."""
        return [line_hash(normal_line(line)) for line in self.lines]

    @property
    def loose_hashes(self) -> list[str]:
        """Each line's loose hash."""
        return [line_hash(loose_line(line)) for line in self.lines]


def written_ranges(old: str, new: str) -> list[WrittenRange]:
    """The ranges of lines ``new`` wrote that ``old`` did not hold, in order.

    A write (``old`` empty) wrote all of ``new``; a replacement wrote the
    lines a line diff of the two (by :func:`normal_line`) marks as inserted
    or replaced. Blank lines at a range's ends are not part of it.
    """
    after = new.splitlines()
    if not old:
        return _trimmed([after])
    before = old.splitlines()
    if len(before) * len(after) > _LCS_CELLS:
        return _trimmed([after])
    matcher = difflib.SequenceMatcher(
        None, [normal_line(x) for x in before], [normal_line(x) for x in after], autojunk=False
    )
    runs = [
        after[j1:j2]
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
    ]
    return _trimmed(runs)


def _trimmed(runs: Sequence[Sequence[str]]) -> list[WrittenRange]:
    found = []
    for run in runs:
        start, end = 0, len(run)
        while start < end and not run[start].strip():
            start += 1
        while end > start and not run[end - 1].strip():
            end -= 1
        if start < end:
            found.append(WrittenRange(tuple(run[start:end])))
    return found
