"""A one-line progress bar for ingest, drawn on stderr only when it is a terminal."""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["Progress", "progress_for"]

_WIDTH = 30
_INTERVAL = 0.1


class Progress:
    """Counts bytes read against a total and redraws at most ten times a second."""

    def __init__(self, total: int, stream: TextIO) -> None:
        """Draw on ``stream`` (a terminal) for ``total`` bytes of work."""
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream
        self._last = 0.0
        self._drawn = False

    def advance(self, count: int, label: str = "") -> None:
        """Count ``count`` more bytes as read."""
        self.done += count
        now = time.monotonic()
        if now - self._last >= _INTERVAL:
            self._last = now
            self._draw(label)

    def _draw(self, label: str) -> None:
        fraction = min(self.done / self.total, 1.0)
        filled = int(fraction * _WIDTH)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        text = f"\ringest [{bar}] {fraction:4.0%} {self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
        if label:
            text += f" {label[-30:]}"
        self.stream.write(text + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def progress_for(total: int, stream: TextIO) -> Progress | None:
    """A :class:`Progress` on ``stream`` when it is a terminal, else None (silence)."""
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    return Progress(total, stream) if interactive else None
