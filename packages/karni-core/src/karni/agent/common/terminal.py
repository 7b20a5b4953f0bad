"""Help that fits the terminal, and the nearest spelling of a mistyped word.

Every Karni command (``karni``, ``karni-historian``, ``karni-history-adr``)
wraps its help the same way and suggests the same way, so both live here.
Nothing on the hot path imports this module: it is for ``--help`` and for
errors. See ``docs/command-line.md``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TextIO

__all__ = [
    "DEFAULT_WIDTH",
    "did_you_mean",
    "distribution_version",
    "fit",
    "help_width",
    "parser_error_hint",
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
    return indent


def fit(text: str, width: int | None = None) -> str:
    """``text`` with every line longer than ``width`` wrapped at word boundaries.

    A wrapped option line continues under its description; a word longer
    than the width is left whole rather than split.
    """
    import textwrap

    limit = help_width() if width is None else width
    lines: list[str] = []
    for line in text.split("\n"):
        if len(line) <= limit:
            lines.append(line)
            continue
        hang = _hanging_indent(line)
        if limit - hang < MIN_TEXT_COLUMNS:
            hang = len(line) - len(line.lstrip(" "))
        lines.extend(
            textwrap.wrap(
                line,
                limit,
                subsequent_indent=" " * hang,
                break_long_words=False,
                break_on_hyphens=False,
                drop_whitespace=True,
            )
            or [line]
        )
    return "\n".join(lines)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean `X`?)"`` for the closest of ``choices``, or ``""`` when none is close."""
    import difflib

    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean `{matches[0]}`?)" if matches else ""


def parser_error_hint(message: str, options: Iterable[str]) -> str:
    """A did-you-mean for an argument parser's message, or ``""``.

    Handles the two mistakes a typo makes: ``unrecognized arguments: --sesion``
    (matched against ``options``) and ``invalid choice: 'contxt' (choose from
    ...)`` (matched against the choices the message lists).
    """
    import re

    unknown = re.search(r"unrecognized arguments: (\S+)", message)
    if unknown:
        return did_you_mean(unknown.group(1).partition("=")[0], options)
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        return did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
    return ""


def distribution_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``"unknown"`` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"
