"""Sizing a file brief to its room: decay tiers chosen so the episode lines fit.

The tiers come from the decay curve (``docs/historian/decay.md``), the newest
touching episode at curve index 1. The pressure is the smallest (from the 0.1
floor up) at which the lines fit, found by a binary search over the pressures
at which some episode changes tier; higher pressure never gives a better tier,
so the search is sound. If even that overflows (only when
anchors alone are too many), the oldest episodes are demoted one tier at a
time, measured in characters as Karni's cap is (``docs/historian/budgets.md``).

Only episodes that can be shown are ever loaded: they are visited in the order
they archive (by age over the importance-adjusted half-life), and a visit
stops at the first archived one or when the room is full.
"""

from __future__ import annotations

from karni_historian.brief.decay import (
    ARCHIVED,
    PRESSURE_FLOOR,
    TIER_BOUNDARIES,
    newest_visible,
    stretch,
    tier_at,
)
from karni_historian.brief.lines import episode_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.store.briefing import BriefTables
    from karni_historian.store.records import BriefEpisode

    TouchingRow = tuple[str, int, int, int, int, int, str | None]

__all__ = ["Loader", "fit_tiers", "rows_to_fit"]

_PREFETCH = 64
_CEILING = 1e9
"""A pressure at which every episode but the newest is archived."""
_ABOVE = 1 + 1e-9
_SHORTEST_LINE = 18
"""The shortest episode line with its newline: ``-  (messages 1-1)`` (no date, no title)."""


class Loader:
    """Fetches episodes on demand, in batches, by position in the touching list."""

    def __init__(self, store: BriefTables, ids: Sequence[int]) -> None:
        """Load from ``store`` the compartments with these row ids, by position."""
        self.store = store
        self.ids = ids
        self.loaded: dict[int, BriefEpisode] = {}

    def get(self, position: int) -> BriefEpisode:
        """The compartment at ``position``, loading it when needed."""
        stored = self.loaded.get(self.ids[position])
        if stored is None:
            self.prefetch([position])
            stored = self.loaded[self.ids[position]]
        return stored

    def prefetch(self, positions: Sequence[int]) -> None:
        """Load the compartments at ``positions`` that are not loaded yet, in one query."""
        missing = [self.ids[p] for p in positions if self.ids[p] not in self.loaded]
        if missing:
            self.loaded.update(self.store.episodes_by_id(missing))


def _closed(rows: Sequence[TouchingRow], read: int, visited: int) -> bool:
    """Whether the first ``visited`` episodes in archiving order are all among ``rows``.

    ``rows`` are the newest ``read`` touching episodes. An unread one sits at
    curve index ``read + 1`` or older, so its position in the order (age over
    half-life at pressure 1) is at least ``read / stretch(100)``; the read
    episodes below that are ahead of every unread one.
    """
    bound = read / stretch(100)
    count = len(rows)
    ahead = sum(1 for i, row in enumerate(rows) if (count - i - 1) / stretch(row[3]) < bound)
    return ahead >= visited


def rows_to_fit(store: BriefTables, path: str, room_chars: int) -> list[TouchingRow]:
    """The newest episodes touching ``path``: enough that a room of ``room_chars`` fits the same.

    A visit of the episodes (:meth:`_Fitting.shown_at`) stops at the first
    line that overflows, so it never goes further than ``room // 18 + 2``
    positions in the archiving order; the walk reads newest first, doubling,
    until those positions are all read, or until the decay curve's limit
    (:func:`karni_historian.brief.decay.newest_visible`). The cost follows the
    room, not the store.
    """
    most = newest_visible()
    visited = max(0, room_chars) // _SHORTEST_LINE + 2
    wanted = min(most, 4 * visited)
    while True:
        rows = store.touching_compartments(path, wanted)
        if len(rows) < wanted or wanted >= most or _closed(rows, wanted, visited):
            return rows
        wanted = min(most, wanted * 2)


class _Fitting:
    """The episodes of one file brief, their line sizes by tier, and the room they share."""

    def __init__(
        self, rows: Sequence[TouchingRow], loader: Loader, room_chars: int, sessions: int
    ) -> None:
        count = len(rows)
        # Curve index ``count - i``, 1 for the newest: its age and its half-life at pressure 1
        # (``decay.tier`` computes the same, in the same order of operations).
        self.ages = [count - i - 1 for i in range(count)]
        self.stretches = [stretch(row[3]) for row in rows]
        # The curve's z at pressure 1: episodes archive in this order at any pressure.
        self.order = sorted(range(count), key=lambda i: self.ages[i] / self.stretches[i])
        self.loader = loader
        self.room = room_chars + 1  # the last line pays for no newline
        self.visitable = self.room // _SHORTEST_LINE + 1
        self.sessions = sessions
        self.sizes: dict[int, int] = {}
        """Line sizes by ``8 * i + t`` (an int key is cheaper to hash than a pair)."""

    def size(self, i: int, t: int) -> int:
        """Characters of episode ``i``'s line at tier ``t``, with its newline."""
        key = 8 * i + t
        known = self.sizes.get(key)
        if known is None:
            line = episode_line(self.loader.get(i), t, self.sessions)
            known = self.sizes[key] = len(line) + 1
        return known

    def shown_at(self, pressure: float, *, strict: bool = True) -> dict[int, int] | None:
        """Tiers of the shown episodes at ``pressure``; None when ``strict`` and they overflow.

        Not strict, the visit stops at the first episode that overflows instead.
        """
        tiers: dict[int, int] = {}
        used = 0
        floored = max(pressure, PRESSURE_FLOOR)
        ages, stretches, sizes, loaded = self.ages, self.stretches, self.sizes, self.loader.loaded
        for n, i in enumerate(self.order):
            t = tier_at(ages[i] / (stretches[i] / floored))
            if t >= ARCHIVED:
                break
            if n % _PREFETCH == 0 and self.loader.ids[i] not in loaded:
                self.loader.prefetch(self.order[n : n + _PREFETCH])
            used += sizes.get(8 * i + t) or self.size(i, t)
            if used > self.room and (strict or tiers):
                return None if strict else tiers
            tiers[i] = t
        return tiers

    def lowest_fitting_pressure(self) -> dict[int, int]:
        """The tiers at the smallest pressure whose lines fit.

        The tiers change only where an episode's age crosses a tier boundary,
        at the pressures :meth:`_breakpoints` lists, so a binary search over
        those finds the same tiers as searching the pressure itself, in a
        tenth of the visits.
        """
        found = self.shown_at(PRESSURE_FLOOR)
        if found is not None:
            return found
        candidates = self._breakpoints()
        low, high = 0, len(candidates)  # the answer is the first candidate that fits
        while low < high:
            middle = (low + high) // 2
            if self.shown_at(candidates[middle]) is None:
                low = middle + 1
            else:
                high = middle
        if low < len(candidates):
            return self.shown_at(candidates[low]) or {}
        return self.shown_at(_CEILING, strict=False) or {}

    def _breakpoints(self) -> list[float]:
        """Just above each pressure (over the floor) at which an episode's tier changes, ascending.

        Episode ``i`` reaches boundary ``Z`` when ``age * p / stretch = Z``;
        a hair above that pressure it is at the next tier. Only the episodes a
        visit can reach count: it stops once the room overflows, which takes
        at most :attr:`visitable` of them.
        """
        ages, stretches = self.ages, self.stretches
        points = {
            boundary * stretches[i] / ages[i] * _ABOVE
            for i in self.order[: self.visitable]
            if ages[i]
            for boundary in TIER_BOUNDARIES
        }
        return sorted(point for point in points if PRESSURE_FLOOR < point < _CEILING)

    def demote_until_fit(self, tiers: dict[int, int]) -> dict[int, int]:
        """Shorten the shown episodes while their lines overflow, never down to nothing.

        The oldest episode above the anchor moves one tier down; when every shown
        episode is an anchor, the oldest is dropped, but the last one stays.
        """
        while sum(self.size(i, t) for i, t in tiers.items() if t < ARCHIVED) > self.room:
            shown = [i for i, t in tiers.items() if t < ARCHIVED]
            detailed = [i for i in shown if tiers[i] < ARCHIVED - 1]
            if detailed:
                tiers[min(detailed)] += 1
            elif len(shown) > 1:
                tiers[min(shown)] = ARCHIVED
            else:
                break
        return tiers


def fit_tiers(
    rows: Sequence[TouchingRow], loader: Loader, room_chars: int, sessions: int
) -> dict[int, int]:
    """Decay tiers of the shown episodes, by position, so that their lines fit ``room_chars``.

    Args:
        rows: The touching compartments, oldest first (see
            :meth:`karni_historian.store.briefing.BriefTables.touching_compartments`).
        loader: Loads the full compartments by position in ``rows``.
        room_chars: The characters the episode lines may use.
        sessions: How many sessions the rows come from (lines name the
            session when there are several).

    Returns:
        Position → tier, for the episodes that are visited; tier 5 is not shown.
    """
    fitting = _Fitting(rows, loader, room_chars, sessions)
    return fitting.demote_until_fit(fitting.lowest_fitting_pressure())
