"""The timeline page's time axis: working time drawn wide, idle time squeezed into narrow gaps.

Sessions last minutes or hours and lie days or weeks apart; on a linear axis
they would be slivers. Here the spans where some session ran are merged into
blocks (two spans less than :data:`JOIN_MS` apart share one; with many
sessions, spans further apart do, so that there are at most
:data:`MAX_BLOCKS`, and many short sessions read as one stretch drawn to
scale rather than a comb of gaps), each block gets
room in proportion to its length (at least :data:`MIN_BLOCK_MS`'s worth),
and each idle stretch between blocks a narrow gap of the same width whatever
its length; the page marks the gaps and says how long they were
(``docs/historian/timeline.md``). Positions are fractions of the axis, 0 to 1.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["JOIN_MS", "MIN_BLOCK_MS", "TICK_STEPS_MS", "TimeAxis"]

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS

JOIN_MS = HOUR_MS
"""Spans closer than this share one block: a short break is drawn to scale."""
MAX_BLOCKS = 24
"""The most blocks the axis has: with more, spans further apart share one (:data:`JOINS_MS`)."""
JOINS_MS = (
    JOIN_MS,
    3 * HOUR_MS,
    12 * HOUR_MS,
    DAY_MS,
    3 * DAY_MS,
    7 * DAY_MS,
    30 * DAY_MS,
    1 << 62,
)
"""How far apart spans may be and share a block, tried in turn until :data:`MAX_BLOCKS` hold."""
MIN_BLOCK_MS = 10 * MINUTE_MS
"""The least room a block gets, as if it lasted this long, so a short session stays visible."""
GAP_SHARE = 0.04
"""The axis share of one gap, at most."""
GAPS_SHARE = 0.25
"""The axis share of all gaps together, at most."""
TICK_STEPS_MS = (
    5 * MINUTE_MS,
    10 * MINUTE_MS,
    15 * MINUTE_MS,
    30 * MINUTE_MS,
    HOUR_MS,
    2 * HOUR_MS,
    3 * HOUR_MS,
    6 * HOUR_MS,
    12 * HOUR_MS,
    DAY_MS,
    2 * DAY_MS,
    7 * DAY_MS,
    14 * DAY_MS,
    30 * DAY_MS,
)
"""The steps between the ticks inside a block, the finest that keeps them apart first."""
TICKS_PER_AXIS = 12
"""About how many ticks inside blocks the whole axis holds."""


class TimeAxis:
    """Positions on the page's axis for instants in milliseconds since the epoch.

    Attributes:
        blocks: ``(t0, t1, x0, x1)`` of each block, oldest first.
    """

    __slots__ = ("blocks",)

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        """Lay out the axis for ``spans`` (``(start, end)`` pairs; the order does not matter)."""
        ordered = sorted((min(a, b), max(a, b)) for a, b in spans)
        for join in JOINS_MS:
            merged = _merged(ordered, join)
            if len(merged) <= MAX_BLOCKS:
                break
        widths = [max(end - start, MIN_BLOCK_MS) for start, end in merged]
        total = sum(widths)
        gaps = len(merged) - 1
        gap = min(total * GAP_SHARE, total * GAPS_SHARE / gaps) if gaps else 0.0
        scale = total + gap * gaps or 1
        self.blocks: list[tuple[int, int, float, float]] = []
        x = 0.0
        for (start, end), width in zip(merged, widths, strict=True):
            self.blocks.append((start, end, x / scale, (x + width) / scale))
            x += width + gap

    def x(self, instant: int) -> float:
        """The position of ``instant``: inside its block to scale, inside a gap in proportion."""
        blocks = self.blocks
        if not blocks:
            return 0.0
        low, high = 0, len(blocks)
        while low < high:  # the first block ending at or after the instant
            middle = (low + high) // 2
            if blocks[middle][1] < instant:
                low = middle + 1
            else:
                high = middle
        if low == len(blocks):
            return blocks[-1][3]
        t0, t1, x0, x1 = blocks[low]
        if instant >= t0:
            return x0 + (x1 - x0) * ((instant - t0) / (t1 - t0) if t1 > t0 else 0.0)
        if low == 0:
            return x0
        _, before_t1, _, before_x1 = blocks[low - 1]
        return before_x1 + (x0 - before_x1) * (instant - before_t1) / (t0 - before_t1)

    def gaps(self) -> list[dict[str, float | int]]:
        """The idle stretches between blocks: ``{"t0", "t1", "x0", "x1"}`` each, oldest first."""
        return [
            {"t0": before[1], "t1": after[0], "x0": before[3], "x1": after[2]}
            for before, after in zip(self.blocks, self.blocks[1:], strict=False)
        ]

    def ticks(self) -> list[dict[str, float | int]]:
        """Where the axis is labelled: ``{"t", "x", "step"}`` at each block's ends and inside.

        Inside a block the ticks fall on whole steps (:data:`TICK_STEPS_MS`,
        counted from the epoch), as many as its share of the axis allows;
        ``step`` is that step (0 at a block's ends), so a page can label a
        tick a day or more apart by its date alone.
        """
        found: list[dict[str, float | int]] = []
        for t0, t1, x0, x1 in self.blocks:
            found.append({"t": t0, "x": x0, "step": 0})
            room = max(0, round((x1 - x0) * TICKS_PER_AXIS) - 1)
            step = _step(t1 - t0, room)
            if step:
                tick = (t0 // step + 1) * step
                while tick < t1 - step // 2:
                    if tick - t0 >= step // 2:
                        found.append({"t": tick, "x": self.x(tick), "step": step})
                    tick += step
            if t1 > t0:
                found.append({"t": t1, "x": x1, "step": 0})
        return found


def _merged(spans: list[tuple[int, int]], join: int) -> list[list[int]]:
    """The sorted ``spans`` merged where less than ``join`` apart: ``[start, end]`` each."""
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1] + join:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _step(length: int, room: int) -> int:
    """The finest tick step that puts at most ``room`` ticks into ``length``; 0 for none."""
    if room <= 0:
        return 0
    for step in TICK_STEPS_MS:
        if length // step <= room:
            return step if length > step else 0
    return 0
