"""The historian's briefs: what it knows about a file, and about the project.

A file brief is read before an edit, so it puts first what the edit must
respect: the project-memory facts about the file (promoted from the episodes
that touched it, or naming it) and the episodes that were reverted there.
Then what shaped the file: the requests whose work edited it, newest first,
with their line counts (:mod:`karni_historian.brief.shaped`). Then the
compartments whose messages touched the file, oldest first. Sized to a room,
each part takes at most its share and leaves the rest to the next; the
episodes' detail comes from the decay tiers (:mod:`karni_historian.brief.fit`),
so newer and more important episodes keep their paraphrase while older ones
shrink to an anchor (date, range and title) or drop out, and the newest one
always shows at the longest tier that fits. The project brief is the project memory, then the newest
compartments' titles. Without a room every episode is at full detail, as
``karni-historian brief [PATH]`` prints it.
"""

from __future__ import annotations

from karni_historian.brief.fit import Loader, fit_tiers, rows_to_fit
from karni_historian.brief.lines import (
    alnum_key,
    anchor_line,
    by_priority,
    episode_line,
    fact_line,
    fit_lines,
)
from karni_historian.brief.notes import note_sections
from karni_historian.brief.shaped import REQUEST_CHARS, shaping_line, shaping_requests

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.brief.fit import TouchingRow
    from karni_historian.brief.shaped import Shaping
    from karni_historian.store.briefing import BriefTables
    from karni_historian.store.records import FactRecord

__all__ = ["file_brief", "project_brief"]

_MAX_FACTS = 40
_FACT_SHARE = 0.3
_REVERT_SHARE = 0.15
_SHAPED_SHARE = 0.4
_SHAPED_HEADING = "What shaped this file, newest first:"
_FACT_HEADING = "Project memory:"
_EPISODE_HEADING = "Episodes that touched this file, oldest first:"
_ROOMY = 4000
"""A room this large (``karni-historian brief``'s, not the cap's) quotes requests whole."""
MAX_REQUESTS_SHOWN = 8
"""The most requests a brief sized to a room lists under what shaped the file, by default."""


def _normal(path: str) -> str:
    path = path.replace("\\", "/").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") or "."


def _facts_about(
    store: BriefTables, path: str, spans: Sequence[tuple[str, int, int]]
) -> list[FactRecord]:
    """Facts from runs over the file's episodes, then facts naming the file."""
    facts = store.fact_records_for_spans(spans)
    known = {(fact.category, fact.content) for fact in facts}
    name = path.rsplit("/", 1)[-1]
    for fact in store.fact_records_naming(path, *([name] if len(name) > 3 else [])):
        if (fact.category, fact.content) not in known:
            facts.append(fact)
            known.add((fact.category, fact.content))
    return by_priority(facts)


def _fact_lines(facts: Sequence[FactRecord], room: int | None) -> list[str]:
    """``Project memory:`` and the facts that fit ``room``; nothing when none fits."""
    if not facts:
        return []
    return _headed(_FACT_HEADING, [fact_line(fact) for fact in facts], room)


def _reverted_lines(rows: Sequence[TouchingRow], loader: Loader, room: int | None) -> list[str]:
    """The episodes touching the file whose work was reverted or failed, newest first."""
    sessions = len({row[0] for row in rows})
    lines = []
    for position in reversed(range(len(rows))):
        if "revert" in (rows[position][6] or "").split(","):
            lines.append(anchor_line(loader.get(position), sessions))
    return _headed("Reverted or abandoned here:", lines, room)


def _shaped_lines(shapings: Sequence[Shaping], room: int | None) -> list[str]:
    """``What shaped this file`` and the requests that fit ``room``, at least the newest."""
    if not shapings:
        return []
    heading = _SHAPED_HEADING
    whole = room is None or room >= _ROOMY  # a roomy brief quotes every request whole
    chars = 1 << 30 if whole else REQUEST_CHARS
    lines = [shaping_line(n, s, request_chars=chars) for n, s in enumerate(shapings, 1)]
    if room is None:
        return [heading, *lines]
    shown = fit_lines([heading, *lines], room)
    if len(shown) > 1:
        return shown
    overhead = len(shaping_line(1, shapings[0], request_chars=8)) - 8  # the line without its quote
    quote = max(8, room - len(heading) - overhead - 2)
    shortened = [heading, shaping_line(1, shapings[0], request_chars=quote)]
    return shortened if _used(shortened) <= room + 1 else []


def _used(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _share(room: int | None, share: float, used: int) -> int | None:
    return None if room is None else max(0, min(int(room * share), room - used))


def _episode_lines(rows: Sequence[TouchingRow], loader: Loader, room: int | None) -> list[str]:
    """The episodes that touched the file, oldest first, decayed into ``room``."""
    if not rows:
        return []
    heading = _EPISODE_HEADING
    sessions = len({row[0] for row in rows})
    if room is None:
        tiers = {i: 1 for i in range(len(rows))}
    else:
        tiers = fit_tiers(rows, loader, room - len(heading) - 1, sessions)
    shown = [episode_line(loader.get(i), tiers[i], sessions) for i in sorted(tiers) if tiers[i] < 5]
    return [heading, *shown] if shown else []


def _about_this_file(fact: FactRecord, name: str) -> bool:
    """Whether a fact is about the file ``name`` or the whole project: it names no other file."""
    for word in fact.content.replace("`", " ").replace("(", " ").split():
        word = word.strip(".,;:'\"")
        if _file_name(word) and word.rsplit("/", 1)[-1] != name:
            return False
    return True


def _file_name(word: str) -> bool:
    """Whether ``word`` looks like a file name or path (a name, a dot, a short extension)."""
    stem, dot, extension = word.rpartition(".")
    return (
        bool(dot and stem)
        and extension.isalpha()
        and 1 <= len(extension) <= 5
        and not stem.replace(".", "").isdigit()
    )


def file_brief(
    store: BriefTables,
    path: str,
    *,
    room_chars: int | None = None,
    max_requests: int | None = MAX_REQUESTS_SHOWN,
) -> str | None:
    """The brief about ``path``: what to respect, what shaped it, the episodes that touched it.

    Args:
        store: The project's store.
        path: A project-relative POSIX path (a folder covers the files in it).
        room_chars: The characters the brief may use; None for the full brief
            (every request, every episode at tier 1, every fact).
        max_requests: Sized to a room, the most requests listed (None: as
            many as fit); without a room every request is.

    Returns:
        The brief, or None when the store knows nothing about ``path``.
    """
    path = _normal(path)
    shapings = shaping_requests(store, path, None if room_chars is None else max_requests)
    room = room_chars
    newest = shaping_line(1, shapings[0]) if shapings else ""  # as the brief quotes it
    notes_room = _notes_room(room, shapings)
    notes = note_sections(store, path, notes_room, newest)
    touched = _Touched(store, path, room)
    if notes:
        # The notes say what was undone, and the rules in the user's words; the
        # requests come right after them, then the facts the notes do not repeat.
        shaped_room = _shaped_room(room, notes_room, _used(notes))
        lines = notes + _shaped_lines(shapings, shaped_room)
        fact_room = _share(room, _FACT_SHARE, _used(lines))
        if _can_show(fact_room, _FACT_HEADING):
            said = alnum_key("\n".join(notes))
            facts = [fact for fact in touched.facts() if alnum_key(fact.content) not in said]
            lines += _fact_lines(facts, fact_room)
    else:
        if not touched.rows() and not touched.facts() and not shapings:
            return None
        lines = _fact_lines(touched.facts(), _share(room, _FACT_SHARE, 0))
        revert_room = _share(room, _REVERT_SHARE, _used(lines))
        lines += _reverted_lines(touched.rows(), touched.loader(), revert_room)
        lines += _shaped_lines(shapings, _share(room, _SHAPED_SHARE, _used(lines)))
    left = _share(room, 1.0, _used(lines))
    if _can_show(left, _EPISODE_HEADING):
        lines += _headed_section(_episode_lines(touched.rows(), touched.loader(), left), left)
    return "\n".join(lines) if lines else None


def _can_show(room: int | None, heading: str) -> bool:
    """Whether a section under ``heading`` could show a line (``- x``) in ``room``."""
    return room is None or room >= len(heading) + 1 + 4


class _Touched:
    """The episodes that touched a file and the facts about it, read only when a section asks.

    A file many sessions noted fills its room with notes and requests, so its
    brief never reads the episodes (``docs/performance.md``).
    """

    def __init__(self, store: BriefTables, path: str, room: int | None) -> None:
        self._store, self._path, self._room = store, path, room
        self._rows: list[TouchingRow] | None = None
        self._loader: Loader | None = None
        self._facts: list[FactRecord] | None = None

    def rows(self) -> list[TouchingRow]:
        """The touching compartments (sized to a room: only those it can show), oldest first."""
        if self._rows is None:
            # Sized to a room, only the episodes the room can show are read, so
            # the brief's cost does not grow with the store.
            if self._room is None:
                self._rows = self._store.touching_compartments(self._path)
            else:
                self._rows = rows_to_fit(self._store, self._path, self._room)
        return self._rows

    def loader(self) -> Loader:
        """Loads the touching compartments' episodes by position in :meth:`rows`."""
        if self._loader is None:
            self._loader = Loader(self._store, [row[1] for row in self.rows()])
        return self._loader

    def facts(self) -> list[FactRecord]:
        """The facts about the file: from runs over its episodes, or naming it; no other file."""
        if self._facts is None:
            rows, name = self.rows(), self._path.rsplit("/", 1)[-1]
            found = _facts_about(self._store, self._path, [(r[0], r[4], r[5]) for r in rows])
            self._facts = [fact for fact in found if _about_this_file(fact, name)][:_MAX_FACTS]
            self._store.attribute_facts(self._facts)
        return self._facts


_NEWEST_LINE_CHARS = 90


def _notes_room(room: int | None, shapings: Sequence[Shaping]) -> int | None:
    """The room the notes may take: all of it but the newest request's line, when there is one.

    The newest request always keeps a line (cut if need be); the next one keeps
    its line too while that takes no more than a quarter of the room.
    """
    if room is None:
        return None
    if not shapings:
        return room
    heading = len(_SHAPED_HEADING) + 1
    newest = heading + min(len(shaping_line(1, shapings[0])), _NEWEST_LINE_CHARS) + 1
    reserve = heading + sum(len(shaping_line(n, s)) + 1 for n, s in enumerate(shapings[:2], 1))
    return max(0, room - max(newest, min(reserve, room // 4)))


def _shaped_room(room: int | None, notes_room: int | None, used: int) -> int | None:
    """The requests' room after the notes: their share, or what the notes left them if more."""
    if room is None or notes_room is None:
        return None
    return max(0, min(room - used, max(int(room * _SHAPED_SHARE), room - notes_room)))


def _headed_section(section: list[str], room: int | None) -> list[str]:
    """A section's heading and the lines that fit ``room``; nothing when no line fits."""
    if room is None or not section:
        return section
    return _headed(section[0], section[1:], room)


def _headed(heading: str, lines: list[str], room: int | None) -> list[str]:
    """``heading`` and the leading ``lines`` that fit in ``room``; nothing when none fits."""
    shown = [heading, *lines]
    if room is not None:
        shown = fit_lines(shown, room)
    return shown if len(shown) > 1 else []


def project_brief(
    store: BriefTables, *, max_titles: int | None = None, room_chars: int | None = None
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
    records = by_priority(store.fact_records())
    store.attribute_facts(records)
    facts = [fact_line(fact) for fact in records]
    lines = _headed("Project memory:", facts, None if room_chars is None else room_chars // 2)
    newest = store.newest_episodes(max_titles)
    sessions = len({episode.session_id for episode in newest})
    titles = [anchor_line(episode, sessions) for episode in newest]
    left = None if room_chars is None else room_chars - sum(len(line) + 1 for line in lines)
    lines += _headed("Recent episodes, newest first:", titles, left)
    return "\n".join(lines) if lines else None
