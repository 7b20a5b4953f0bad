"""Help that fits the terminal, and the nearest spelling of a mistyped word.

Every Karni command (``karni``, ``karni-historian``, ``karni-history-adr``)
wraps its help the same way and suggests the same way, so both live here.
Nothing on the hot path imports this module: it is for ``--help`` and for
errors. See ``docs/command-line.md``.
"""

from __future__ import annotations

import os
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import TextIO

__all__ = [
    "DEFAULT_WIDTH",
    "did_you_mean",
    "distribution_version",
    "fit",
    "help_width",
    "parser_error_parts",
]

DEFAULT_WIDTH = 79
"""The width of help when the output is not a terminal (a pipe, a file)."""

MIN_TEXT_COLUMNS = 20
"""An option's description continues under itself only when this much room is left."""


def help_width(stream: TextIO | None = None) -> int:
    """The columns help may use: ``$COLUMNS``, else the terminal's, else 79."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    target = sys.stdout if stream is None else stream
    try:
        if target.isatty():
            return os.get_terminal_size(target.fileno()).columns or DEFAULT_WIDTH
    except (AttributeError, OSError, ValueError):
        pass
    return DEFAULT_WIDTH


def _hanging_indent(line: str) -> int:
    """Where a long line's continuation starts: under the text after an option's name."""
    stripped = line.lstrip(" ")
    indent = len(line) - len(stripped)
    gap = stripped.find("  ")
    if indent and gap > 0:
        rest = stripped[gap:]
        return indent + gap + len(rest) - len(rest.lstrip(" "))
    if stripped.startswith("usage: "):
        bracket = stripped.find(" [")
        return bracket + 1 if 0 < bracket < 40 else len("usage: ")
    return indent


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blocks(lines: list[str]) -> Iterator[list[str]]:
    """The help's lines in the groups :func:`fit` re-fills as a whole.

    An option line with the lines under its description, and a paragraph of
    unindented lines (up to a line ending in ``:``), are one group each; any
    other line is a group of its own.
    """
    i = 0
    while i < len(lines):
        line = lines[i]
        hang = _hanging_indent(line)
        stripped = line.strip()
        ends = not stripped or stripped.endswith(":") or stripped.startswith("usage:")
        j = i + 1
        if hang and hang != _indent(line) and not stripped.startswith("usage:"):  # an option
            while j < len(lines) and lines[j].strip() and _indent(lines[j]) == hang:
                j += 1
        elif _indent(line) == 0 and not ends:  # a paragraph
            while j < len(lines) and lines[j].strip() and _indent(lines[j]) == 0:
                j += 1
                if lines[j - 1].rstrip().endswith(":"):
                    break
        yield lines[i:j]
        i = j


def _refill(block: list[str], limit: int) -> list[str]:
    """``block`` as written when every line fits, else its words re-wrapped to ``limit``."""
    # bench row "karni-historian brief FILE (historian store, 100,000 compartments)" runs without it
    import textwrap

    if all(len(line) <= limit for line in block):
        return block
    hang = _hanging_indent(block[0])
    if limit - hang < MIN_TEXT_COLUMNS:
        hang = _indent(block[0])
    text = " ".join([block[0].rstrip(), *(line.strip() for line in block[1:])])
    wrapped = textwrap.wrap(
        text,
        limit,
        subsequent_indent=" " * hang,
        break_long_words=False,
        break_on_hyphens=False,
        drop_whitespace=True,
    )
    return wrapped or block


def fit(text: str, width: int | None = None) -> str:
    """``text`` with every line fitted to ``width`` columns.

    A paragraph or an option's description that has a line too long is
    re-filled as a whole, so no short fragment is left behind; an option's
    description continues under itself, a usage line under its first
    option. What fits is printed as written, and a word longer than the
    width is left whole rather than split.
    """
    limit = help_width() if width is None else width
    lines: list[str] = []
    for block in _blocks(text.split("\n")):
        lines.extend(_refill(block, limit))
    return "\n".join(lines)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean `X`?)"`` for the closest of ``choices``, or ``""`` when none is close."""
    # bench row "karni-historian brief FILE (historian store, 100,000 compartments)" runs without it
    import difflib

    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean `{matches[0]}`?)" if matches else ""


def parser_error_parts(message: str, options: Iterable[str]) -> tuple[str, str]:
    """An argument parser's message in Karni's words, and a did-you-mean (or ``""``).

    Rewords the two mistakes a typo makes, so every Karni command names them
    alike: ``unrecognized arguments: --sesion`` becomes ``unknown option
    `--sesion``` (matched against ``options``) and ``argument COMMAND: invalid
    choice: 'contxt' (choose from ...)`` becomes ``unknown command `contxt```
    (matched against the choices the message lists). Other messages pass
    through unchanged.
    """
    unknown = re.search(r"unrecognized arguments: (\S+)", message)
    if unknown:
        word = unknown.group(1)
        if not word.startswith("-"):
            return f"unexpected argument `{word}`", ""
        return f"unknown option `{word}`", did_you_mean(word.partition("=")[0], options)
    choice = re.search(r"argument ([^:]+): invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not choice:
        return message, ""
    where, word = choice.group(1), choice.group(2)
    choices = [part.strip().strip("'") for part in choice.group(3).split(",")]
    hint = did_you_mean(word, choices)
    if where.startswith("-"):
        return f"`{where}` takes one of {', '.join(choices)}, not `{word}`", hint
    return f"unknown command `{word}`", hint


def distribution_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``"unknown"`` when it is not installed."""
    # bench row "karni-historian brief FILE (historian store, 100,000 compartments)" runs without it
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"
