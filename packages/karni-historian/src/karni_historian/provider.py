"""The ``historian`` history provider: briefs from the historian's store.

Karni calls this on the hot path of ``karni context --with-history``, so the
module imports nothing heavy: ``detect`` is one file check, and SQLite, the
store and the decay maths are imported inside the methods that read them.

A file brief puts the project-memory facts about the file first (facts
promoted from the episodes that touched it, or naming it), then the
compartments whose messages touched the file, oldest first. Their detail
comes from the decay tiers (:mod:`karni_historian.decay`, with the budget guard
of :mod:`karni_historian.budget`) computed for the room Karni's cap leaves, so
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


class HistorianProvider:
    """Briefs an agent from ``.karni/local/historian.db``; never prints, never raises."""

    name = "historian"

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
    tiers = (compartment.p1, compartment.p2, compartment.p3, compartment.p4)
    if tier == 4:
        return _one_line(compartment.p4)
    for text in reversed(tiers[:tier]):
        if text.strip():
            return _one_line(text)
    return _one_line(compartment.content)


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


def _touching(store: Store, path: str) -> list[StoredCompartment]:
    """The compartments whose messages touched ``path``, oldest first."""
    import bisect

    ordinals: dict[str, list[int]] = {}
    for session_id, ordinal in store.touching(path):
        ordinals.setdefault(session_id, []).append(ordinal)
    found: list[tuple[str, str, int, StoredCompartment]] = []
    for session_id, touched in ordinals.items():
        session = store.session(session_id)
        first = (session.first_ts or "") if session else ""
        for stored in store.compartments(session_id):
            c = stored.compartment
            i = bisect.bisect_left(touched, c.start)
            if i < len(touched) and touched[i] <= c.end:
                found.append((first, session_id, stored.sequence, stored))
    found.sort(key=lambda item: item[:3])
    return [item[3] for item in found]


def _facts_about(store: Store, path: str, episodes: Sequence[StoredCompartment]) -> list[Fact]:
    spans = [(s.session_id, s.compartment.start, s.compartment.end) for s in episodes]
    facts = store.facts_for_spans(spans)
    known = {(fact.category, fact.content) for fact in facts}
    name = path.rsplit("/", 1)[-1]
    for fact in store.facts():
        if (fact.category, fact.content) in known:
            continue
        if path in fact.content or (len(name) > 3 and name in fact.content):
            facts.append(fact)
            known.add((fact.category, fact.content))
    return facts


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
    episodes = _touching(store, path)
    facts = _facts_about(store, path, episodes)[:_MAX_FACTS]
    if not episodes and not facts:
        return None
    lines: list[str] = []
    if facts:
        fact_lines = ["Project memory:", *(_fact_line(fact) for fact in facts)]
        if room_chars is not None:
            share = int(room_chars * (_FACT_SHARE if episodes else 1.0))
            fact_lines = _fit_lines(fact_lines, share)
            if len(fact_lines) == 1:
                fact_lines = []
        lines += fact_lines
    if episodes:
        heading = "Episodes that touched this file, oldest first:"
        sessions = len({stored.session_id for stored in episodes})
        if room_chars is None:
            tiers = [1] * len(episodes)
        else:
            used = sum(len(line) + 1 for line in lines) + len(heading) + 1
            tiers = _tiers(episodes, room_chars - used, sessions)
        shown = [
            _episode_line(stored, tier, sessions)
            for stored, tier in zip(episodes, tiers, strict=True)
            if tier < 5
        ]
        if shown:
            lines += [heading, *shown]
    return "\n".join(lines) if lines else None


def _tiers(episodes: Sequence[StoredCompartment], room_chars: int, sessions: int) -> list[int]:
    """Decay tiers for the episodes so that their lines fit in ``room_chars``.

    The tiers come from the decay curve (:func:`karni_historian.decay.tier`).
    Its pressure is the smallest (from the 0.1 floor up) at which the lines
    fit, found by bisection: the reference's one-pass estimate prices tiers at
    upstream's average sizes (322 tokens for a full paraphrase) and would
    leave most of Karni's few hundred tokens unused. Higher pressure never
    gives a better tier, so the search is sound. The guard of §1.8 then
    demotes the oldest episodes, one tier at a time, if the lines still do not
    fit (only possible when even the anchors overflow).
    """
    from karni_historian.decay import PRESSURE_FLOOR, tier

    count = len(episodes)
    items = [(count - i, stored.compartment.importance) for i, stored in enumerate(episodes)]
    sizes: dict[tuple[int, int], int] = {}

    def render_one(i: int, t: int) -> str:
        return _episode_line(episodes[i], t, sessions) if t < 5 else ""

    def size(i: int, t: int) -> int:
        if t >= 5:
            return 0
        key = (i, t)
        if key not in sizes:
            sizes[key] = len(render_one(i, t)) + 1
        return sizes[key]

    def tiers_at(p: float) -> list[int]:
        return [tier(index, importance, p) for index, importance in items]

    def fits(tiers: list[int]) -> bool:
        return sum(size(i, t) for i, t in enumerate(tiers)) <= room_chars + 1

    low, high = PRESSURE_FLOOR, PRESSURE_FLOOR
    if not fits(tiers_at(low)):
        high = 1.0
        while not fits(tiers_at(high)) and high < 1e9:
            low, high = high, high * 4
        for _ in range(40):
            middle = (low * high) ** 0.5
            if fits(tiers_at(middle)):
                high = middle
            else:
                low = middle
    tiers = tiers_at(high)
    while not fits(tiers):  # the guard of §1.8, measured in characters as Karni's cap is
        oldest = next((i for i, t in enumerate(tiers) if t < 5), None)
        if oldest is None:
            break
        tiers[oldest] += 1
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
    facts = store.facts()
    lines: list[str] = []
    if facts:
        fact_lines = ["Project memory:", *(_fact_line(fact) for fact in facts)]
        if room_chars is not None:
            fact_lines = _fit_lines(fact_lines, room_chars // 2)
        lines += fact_lines
    newest = _newest(store, max_titles)
    if newest:
        sessions = len({stored.session_id for stored in newest})
        lines.append("Recent episodes, newest first:")
        lines += [_anchor_line(stored, sessions) for stored in newest]
    return "\n".join(lines) if lines else None


def _newest(store: Store, limit: int | None) -> list[StoredCompartment]:
    found: list[tuple[str, str, int, StoredCompartment]] = []
    for session in store.sessions():
        for stored in store.compartments(session.id):
            found.append((session.last_ts or "", session.id, stored.sequence, stored))
    found.sort(key=lambda item: item[:3], reverse=True)
    chosen = found if limit is None else found[:limit]
    return [item[3] for item in chosen]
