"""A one-line progress bar on stderr for ``ingest``, ``run`` and ``wrapup``.

The bar is drawn only on a terminal that can redraw a line (not when stderr
is a pipe or a file, nor with ``TERM=dumb``), always fits the terminal's
width, is redrawn in place at most ten times a second, and is erased when the
work ends. ``karni-historian -q`` turns it off.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

__all__ = ["Progress", "progress_for"]

_INTERVAL = 0.1
_MAX_BAR = 30
_MIN_BAR = 10


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = os.environ.get("COLUMNS", "")
        return int(columns) if columns.isdigit() and int(columns) > 0 else 80


class Progress:
    """Counts work done against a total and redraws the bar in place."""

    def __init__(
        self, total: int, stream: TextIO, title: str, amount: Callable[[int, int], str]
    ) -> None:
        """Draw on ``stream``; ``amount(done, total)`` says how far along, e.g. ``1.2/5.0 MB``."""
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream
        self.title = title
        self.amount = amount
        self._last = 0.0
        self._drawn = False

    def advance(self, count: int, label: str = "") -> None:
        """Count ``count`` more units as done."""
        self.update(self.done + count, label)

    def update(self, done: int, label: str = "") -> None:
        """Set the work done to ``done``; redraw unless drawn under a tenth of a second ago."""
        self.done = done
        now = time.monotonic()
        if now - self._last >= _INTERVAL:
            self._last = now
            self._draw(label)

    def line(self, label: str, columns: int) -> str:
        """The bar's text, at most ``columns - 1`` characters (the cursor keeps one)."""
        fraction = min(self.done / self.total, 1.0)
        tail = f" {fraction:4.0%} {self.amount(self.done, self.total)}"
        room = columns - 1 - len(self.title) - 3 - len(tail)
        width = min(_MAX_BAR, room)
        if width < _MIN_BAR:
            return f"{self.title}{tail}"[: columns - 1]
        filled = int(fraction * width)
        text = f"{self.title} [{'#' * filled}{'-' * (width - filled)}]{tail}"
        space = columns - 1 - len(text) - 1
        if label and space >= 8:
            text += " " + (label if len(label) <= space else "…" + label[-(space - 1) :])
        return text

    def _draw(self, label: str) -> None:
        self.stream.write("\r" + self.line(label, _columns(self.stream)) + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def progress_for(
    total: int, stream: TextIO | None, title: str, amount: Callable[[int, int], str]
) -> Progress | None:
    """A :class:`Progress` on ``stream`` when it is a terminal that can redraw, else None."""
    if stream is None or os.environ.get("TERM", "") == "dumb":
        return None
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    return Progress(total, stream, title, amount) if interactive else None
