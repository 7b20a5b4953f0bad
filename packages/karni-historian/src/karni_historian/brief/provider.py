"""The ``historian`` history provider: briefs from the historian's store.

Karni calls this on the hot path of ``karni context --with-history``, so the
module imports nothing heavy: ``detect`` is one file check, and SQLite, the
store and the decay maths are imported inside the methods that read them.

A file brief puts the project-memory facts about the file first (facts
promoted from the episodes that touched it, or naming it), then the
compartments whose messages touched the file, oldest first. Their detail
comes from the decay tiers (:mod:`karni_historian.brief.decay`, with the budget guard
of :mod:`karni_historian.brief.budget`) computed for the room Karni's cap leaves, so
newer and more important episodes keep their paraphrase while older ones
shrink to an anchor (date, range and title) or drop out, instead of the brief
being cut off. The project brief is the project memory, then the newest
compartments' titles. ``karni-historian brief [PATH]`` prints the same briefs
without the cap, every episode at full detail.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from karni_historian.model import Compartment, Fact
    from karni_historian.store import Store, StoredCompartment

__all__ = ["HistorianProvider", "file_brief", "project_brief"]

_DB = os.path.join(".karni", "local", "historian.db")
_MAX_FACTS = 40
_MAX_TITLES = 30
_FACT_SHARE = 0.4
_CATEGORY_ORDER = ("CONSTRAINTS", "PROJECT_RULES", "ARCHITECTURE", "CONFIG_VALUES", "NAMING")
"""Facts are listed in this order (what must not be broken first); others follow."""


class HistorianProvider:
    """Briefs an agent from ``.karni/local/historian.db``; never prints, never raises."""

    name = "historian"

    store_markers = (_DB,)
    """Karni's speed hint: without the database there is no store."""

    def detect(self, project_root: Path) -> bool:
        """Whether the project has a historian store (a file check)."""
        try:
            return os.path.isfile(os.path.join(project_root, _DB))
        except (TypeError, ValueError, OSError):
            return False

    def context(self, project_root: Path, path: str) -> str | None:
        """What the historian knows about ``path``, sized to the room Karni's cap leaves."""
        try:
            from karni.agent.history import HISTORY_TOKEN_CAP

            heading = f"HISTORY: {path} ({self.name})"
            room = HISTORY_TOKEN_CAP * 4 - len(heading) - 1
            store = _open(project_root)
            if store is None:
                return None
            try:
                return file_brief(store, path, room_chars=room)
            finally:
                store.close()
        except Exception:
            return None

    def project_context(self, project_root: Path) -> str | None:
        """The project memory, then the newest compartments' titles."""
        try:
            from karni.agent.history import HISTORY_TOKEN_CAP

            store = _open(project_root)
            if store is None:
                return None
            try:
                return project_brief(
                    store, max_titles=_MAX_TITLES, room_chars=HISTORY_TOKEN_CAP * 4
                )
            finally:
                store.close()
        except Exception:
            return None

    def full_command(self, project_root: Path, path: str | None) -> str | None:
        """The command that prints the full, uncapped brief."""
        try:
            if path is None:
                return "karni-historian brief"
            import shlex

            return f"karni-historian brief {shlex.quote(path)}"
        except Exception:
            return None


def _open(project_root: Path) -> Store | None:
    from karni_historian.store import Store, StoreError

    try:
        return Store.open(project_root, readonly=True)
    except StoreError:
        return None


def _normal(path: str) -> str:
    path = path.replace("\\", "/").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") or "."


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _fact_line(fact: Fact) -> str:
    return f"- {_one_line(fact.content)} ({fact.category.lower()})"


def _body(compartment: Compartment, tier: int) -> str:
    """The paraphrase for ``tier`` (reference §1.6), on one line."""
    if not compartment.p1:
        return _one_line(compartment.content) if tier < 4 else ""
    from karni_historian.brief.render import paraphrase

    return _one_line(paraphrase(compartment, tier))


def _anchor_line(stored: StoredCompartment, sessions: int) -> str:
    """``- DATE TITLE (messages S-E)``: the episode's anchor."""
    compartment = stored.compartment
    where = f"messages {compartment.start}-{compartment.end}"
    if sessions > 1:
        where = f"session {stored.session_id[:8]} {where}"
    date = f"{compartment.start_date} " if compartment.start_date else ""
    return f"- {date}{_one_line(compartment.title)} ({where})"


def _episode_line(stored: StoredCompartment, tier: int, sessions: int) -> str:
    head = _anchor_line(stored, sessions)
    body = _body(stored.compartment, tier)
    return f"{head}: {body}" if body else head


def _facts_about(store: Store, path: str, spans: Sequence[tuple[str, int, int]]) -> list[Fact]:
    facts = store.facts_for_spans(spans)
    known = {(fact.category, fact.content) for fact in facts}
    name = path.rsplit("/", 1)[-1]
    for fact in store.facts():
        if (fact.category, fact.content) in known:
            continue
        if path in fact.content or (len(name) > 3 and name in fact.content):
            facts.append(fact)
            known.add((fact.category, fact.content))
    return _by_priority(facts)


def _by_priority(facts: Sequence[Fact]) -> list[Fact]:
    rank = {category: i for i, category in enumerate(_CATEGORY_ORDER)}
    return sorted(facts, key=lambda fact: rank.get(fact.category, len(rank)))


def _fit_lines(lines: list[str], room: int) -> list[str]:
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    return kept


def file_brief(store: Store, path: str, *, room_chars: int | None = None) -> str | None:
    """The brief about ``path``: project memory about it, then the episodes that touched it.

    Args:
        store: The project's store.
        path: A project-relative POSIX path (a folder covers the files in it).
        room_chars: The characters the brief may use; None for the full brief
            (every episode at tier 1, every fact).

    Returns:
        The brief, or None when the store knows nothing about ``path``.
    """
    path = _normal(path)
    rows = store.touching_compartments(path)
    loader = _Loader(store, [row[1] for row in rows])
    spans = [(row[0], row[4], row[5]) for row in rows]
    facts = _facts_about(store, path, spans)[:_MAX_FACTS]
    if not rows and not facts:
        return None
    lines: list[str] = []
    if facts:
        fact_lines = ["Project memory:", *(_fact_line(fact) for fact in facts)]
        if room_chars is not None:
            share = int(room_chars * (_FACT_SHARE if rows else 1.0))
            fact_lines = _fit_lines(fact_lines, share)
            if len(fact_lines) == 1:
                fact_lines = []
        lines += fact_lines
    if rows:
        heading = "Episodes that touched this file, oldest first:"
        sessions = len({row[0] for row in rows})
        if room_chars is None:
            tiers = {i: 1 for i in range(len(rows))}
        else:
            used = sum(len(line) + 1 for line in lines) + len(heading) + 1
            tiers = _tiers(rows, loader, room_chars - used, sessions)
        shown = [
            _episode_line(loader.get(i), tiers[i], sessions) for i in sorted(tiers) if tiers[i] < 5
        ]
        if shown:
            lines += [heading, *shown]
    return "\n".join(lines) if lines else None


class _Loader:
    """Fetches full compartments on demand, in batches, by position in the touching list."""

    def __init__(self, store: Store, ids: Sequence[int]) -> None:
        self.store = store
        self.ids = ids
        self.loaded: dict[int, StoredCompartment] = {}

    def get(self, position: int) -> StoredCompartment:
        stored = self.loaded.get(self.ids[position])
        if stored is None:
            self.prefetch([position])
            stored = self.loaded[self.ids[position]]
        return stored

    def prefetch(self, positions: Sequence[int]) -> None:
        missing = [self.ids[p] for p in positions if self.ids[p] not in self.loaded]
        if missing:
            self.loaded.update(self.store.compartments_by_id(missing))


def _tiers(
    rows: Sequence[tuple[str, int, int, int, int, int]],
    loader: _Loader,
    room_chars: int,
    sessions: int,
) -> dict[int, int]:
    """Decay tiers of the shown episodes, by position, so that their lines fit ``room_chars``.

    The tiers come from the decay curve (:func:`karni_historian.brief.decay.tier`),
    the newest touching episode at curve index 1. Its pressure is the smallest
    (from the 0.1 floor up) at which the lines fit, found by bisection: the
    reference's one-pass estimate prices tiers at upstream's average sizes (322
    tokens for a full paraphrase) and would leave most of Karni's few hundred
    tokens unused. Higher pressure never gives a better tier, so the search is
    sound. The guard of §1.8 then demotes the oldest episodes, one tier at a
    time, if the lines still do not fit (only when even anchors overflow).

    Only episodes that can be shown are ever loaded: they are visited in the
    order they archive (by age over the importance-adjusted half-life), and a
    visit stops at the first archived one or when the room is full.
    """
    from karni_historian.brief.decay import ARCHIVED, PRESSURE_FLOOR, half_life, tier

    count = len(rows)
    items = [(count - i, row[3]) for i, row in enumerate(rows)]
    # The curve's z at pressure 1: episodes archive in this order at any pressure.
    order = sorted(range(count), key=lambda i: (items[i][0] - 1) / half_life(items[i][1], 1.0))
    sizes: dict[tuple[int, int], int] = {}

    def size(i: int, t: int) -> int:
        key = (i, t)
        if key not in sizes:
            sizes[key] = len(_episode_line(loader.get(i), t, sessions)) + 1
        return sizes[key]

    def shown_at(p: float) -> dict[int, int] | None:
        """Tiers of the shown episodes at pressure ``p``, or None when they overflow."""
        tiers: dict[int, int] = {}
        used = 0
        for n, i in enumerate(order):
            t = tier(items[i][0], items[i][1], p)
            if t >= ARCHIVED:
                break
            if n % 64 == 0:
                loader.prefetch(order[n : n + 64])
            used += size(i, t)
            if used > room_chars + 1:
                return None
            tiers[i] = t
        return tiers

    low, high = PRESSURE_FLOOR, PRESSURE_FLOOR
    found = shown_at(low)
    if found is None:
        high = 1.0
        while shown_at(high) is None and high < 1e9:
            low, high = high, high * 4
        for _ in range(40):
            middle = (low * high) ** 0.5
            if shown_at(middle) is None:
                low = middle
            else:
                high = middle
        found = shown_at(high)
    tiers = found or {}
    while sum(size(i, t) for i, t in tiers.items() if t < ARCHIVED) > room_chars + 1:
        oldest = min((i for i, t in tiers.items() if t < ARCHIVED), default=None)
        if oldest is None:
            break
        tiers[oldest] += 1  # the guard of §1.8, measured in characters as Karni's cap is
    return tiers


def project_brief(
    store: Store, *, max_titles: int | None = None, room_chars: int | None = None
) -> str | None:
    """The project brief: the project memory, then the newest compartments' titles.

    Args:
        store: The project's store.
        max_titles: How many titles to list at most; None for all.
        room_chars: Characters the project memory may take before titles
            (about half); None for no limit.

    Returns:
        The brief, or None when the store has neither facts nor compartments.
    """
    facts = _by_priority(store.facts())
    lines: list[str] = []
    if facts:
        fact_lines = ["Project memory:", *(_fact_line(fact) for fact in facts)]
        if room_chars is not None:
            fact_lines = _fit_lines(fact_lines, room_chars // 2)
        lines += fact_lines
    newest = store.newest_compartments(max_titles)
    if newest:
        sessions = len({stored.session_id for stored in newest})
        lines.append("Recent episodes, newest first:")
        lines += [_anchor_line(stored, sessions) for stored in newest]
    return "\n".join(lines) if lines else None
