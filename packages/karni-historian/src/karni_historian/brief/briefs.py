"""The historian's briefs: what it knows about a file, and about the project.

A file brief puts the project-memory facts about the file first (facts
promoted from the episodes that touched it, or naming it), then the
compartments whose messages touched the file, oldest first. Sized to a room,
their detail comes from the decay tiers (:mod:`karni_historian.brief.fit`),
so newer and more important episodes keep their paraphrase while older ones
shrink to an anchor (date, range and title) or drop out, instead of the brief
being cut off. The project brief is the project memory, then the newest
compartments' titles. Without a room every episode is at full detail, as
``karni-historian brief [PATH]`` prints it.
"""

from __future__ import annotations

from karni_historian.brief.decay import newest_visible
from karni_historian.brief.fit import Loader, fit_tiers
from karni_historian.brief.lines import anchor_line, by_priority, episode_line, fact_line, fit_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.model import Fact
    from karni_historian.store import Store

__all__ = ["file_brief", "project_brief"]

_MAX_FACTS = 40
_FACT_SHARE = 0.4


def _normal(path: str) -> str:
    path = path.replace("\\", "/").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") or "."


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
    return by_priority(facts)


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
    # Sized to a room, only the episodes the decay curve can show are read
    # (docs/historian/decay.md), so the brief's cost does not grow with the store.
    rows = store.touching_compartments(path, None if room_chars is None else newest_visible())
    loader = Loader(store, [row[1] for row in rows])
    spans = [(row[0], row[4], row[5]) for row in rows]
    facts = _facts_about(store, path, spans)[:_MAX_FACTS]
    if not rows and not facts:
        return None
    lines: list[str] = []
    if facts:
        fact_lines = ["Project memory:", *(fact_line(fact) for fact in facts)]
        if room_chars is not None:
            share = int(room_chars * (_FACT_SHARE if rows else 1.0))
            fact_lines = fit_lines(fact_lines, share)
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
            tiers = fit_tiers(rows, loader, room_chars - used, sessions)
        shown = [
            episode_line(loader.get(i), tiers[i], sessions) for i in sorted(tiers) if tiers[i] < 5
        ]
        if shown:
            lines += [heading, *shown]
    return "\n".join(lines) if lines else None


def _headed(heading: str, lines: list[str], room: int | None) -> list[str]:
    """``heading`` and the leading ``lines`` that fit in ``room``; nothing when none fits."""
    shown = [heading, *lines]
    if room is not None:
        shown = fit_lines(shown, room)
    return shown if len(shown) > 1 else []


def project_brief(
    store: Store, *, max_titles: int | None = None, room_chars: int | None = None
) -> str | None:
    """The project brief: the project memory, then the newest compartments' titles.

    Args:
        store: The project's store.
        max_titles: How many titles to list at most; None for all.
        room_chars: The characters the brief may use: the project memory takes
            at most half, the titles the rest; None for no limit.

    Returns:
        The brief, or None when nothing is known or nothing fits.
    """
    facts = [fact_line(fact) for fact in by_priority(store.facts())]
    lines = _headed("Project memory:", facts, None if room_chars is None else room_chars // 2)
    newest = store.newest_compartments(max_titles)
    sessions = len({stored.session_id for stored in newest})
    titles = [anchor_line(stored, sessions) for stored in newest]
    left = None if room_chars is None else room_chars - sum(len(line) + 1 for line in lines)
    lines += _headed("Recent episodes, newest first:", titles, left)
    return "\n".join(lines) if lines else None
