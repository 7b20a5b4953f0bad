"""A file's notes in its brief: the most valuable first, each section within its share of the room.

The notes (``docs/historian/file-notes.md``) come in five kinds. Before an
edit the most valuable are the approaches that failed or were undone (so
they are not tried again), then what was decided, then the user's rules,
then how the last checks ended. Each kind gets a section; newer sessions and
requests come first within it, and the same note said twice (in two
sessions, or as a decision and inside an undone attempt) is shown once.

Sized to a room, each section takes at most its share first; what a section
leaves goes to the next ones in the same order, so a file with no failures
gives their room to its decisions.
"""

from __future__ import annotations

from karni_historian.brief.lines import alnum_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.store.briefing import BriefTables

__all__ = ["HEADINGS", "note_sections"]

HEADINGS = {
    "failed": "Tried here and failed or undone (do not repeat):",
    "decision": "Decided:",
    "constraint": "The user's rules for it:",
    "outcome": "Last outcome:",
}
"""The sections, in the order of their value before an edit (``rejected`` joins ``failed``)."""

SHARES = {"failed": 0.3, "decision": 0.35, "constraint": 0.2, "outcome": 0.15}
"""The part of the room each section may take before the others had theirs."""

STRONG = 80
"""Notes weighted this or more (a stated rule, a statement naming the file's code) go first."""

LINE_CHARS = 170
"""The longest note line shown in a brief sized to a room."""


def _line(text: str, date: str, room: int | None, author: str | None = None) -> str:
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    from karni_historian.cut import shorten

    line = f"- {date}{text}" if date else f"- {text}"
    by = f" \u2014 by {author}" if author else ""
    return line + by if room is None else shorten(line, LINE_CHARS - len(by)) + by


def _day(timestamp: str | None) -> str:
    return f"{timestamp[5:10]} " if timestamp and len(timestamp) >= 10 else ""


def _candidates(
    rows: Sequence[tuple[str, int, int, str, str, int, str | None]],
    room: int | None,
    authors: dict[str, str] | None = None,
) -> dict[str, list[tuple[int, str]]]:
    """Each section's lines with the rank that decides which fit first.

    Rows come newest request first. A section takes the best note of each
    request before the second best of any, so a long history shows its
    range; ``outcome`` keeps only the newest request that has one (the file's
    last state).
    """
    dated = len({row[0] for row in rows}) > 1
    sections: dict[str, list[tuple[int, str]]] = {kind: [] for kind in HEADINGS}
    seen: set[str] = set()
    positions: dict[tuple[str, str, int], int] = {}  # each request's place in its section
    taken: dict[tuple[str, str, int], int] = {}  # notes of each request a section has
    counts = dict.fromkeys(HEADINGS, 0)  # requests each section has placed
    for session, request, _ordinal, kind, text, weight, last_ts in rows:
        section = "failed" if kind == "rejected" else kind
        key = alnum_key(text)
        if section not in sections or not key or key in seen:
            continue
        if len(key) > 8 and any(key in other for other in seen):
            continue
        slot = (section, session, request)
        if slot not in positions:
            if section == "outcome" and sections["outcome"]:
                continue
            positions[slot] = counts[section]
            counts[section] += 1
        within = taken.get(slot, 0)
        taken[slot] = within + 1
        seen.add(key)
        author = (authors or {}).get(session)
        line = _line(text, _day(last_ts) if dated else "", room, author)
        tier = 0 if weight >= STRONG else 1
        sections[section].append((tier * 10_000_000 + within * 100_000 + positions[slot], line))
    return sections


ROOM_PER_NOTE = 50
"""Sized to a room, the notes read are at most one per this many characters of it
(a shown line takes more), so a file noted by a thousand sessions costs what a few do."""


def _rows_for(room: int) -> int:
    return max(40, room // ROOM_PER_NOTE)


def note_sections(
    store: BriefTables, path: str, room: int | None, shown_request: str = ""
) -> list[str]:
    """The note sections of ``path``'s brief, fitted into ``room`` characters (None: all).

    A rule the user stated as the request the brief quotes (``shown_request``)
    is not repeated among the rules.
    """
    request_key = alnum_key(shown_request)
    rows = [
        row
        for row in store.file_note_rows(path, None if room is None else _rows_for(room))
        if not (row[3] == "constraint" and request_key and alnum_key(row[4]) in request_key)
    ]
    if not rows:
        return []
    authors = store.shared_authors()
    if room is None:
        candidates = _candidates(rows, None, authors)
        out: list[str] = []
        for kind, heading in HEADINGS.items():
            lines = [line for _, line in sorted(candidates[kind])]
            out += [heading, *lines] if lines else []
        return out
    return _fitted(_candidates(rows, room, authors), room)


def _fitted(candidates: dict[str, list[tuple[int, str]]], room: int) -> list[str]:
    """Two passes: each section up to its share, then what is left, in the sections' order.

    A line that only names what a change added or removed (``adds `X```) is
    left out when a line already chosen names each of those names.
    """
    ordered = {kind: [line for _, line in sorted(lines)] for kind, lines in candidates.items()}
    chosen: dict[str, list[str]] = {kind: [] for kind in HEADINGS}
    said: list[str] = []
    at = dict.fromkeys(HEADINGS, 0)  # each section's next line to try

    def next_line(kind: str) -> str | None:
        lines = ordered[kind]
        while at[kind] < len(lines) and _said_already(lines[at[kind]], said):
            at[kind] += 1
        return lines[at[kind]] if at[kind] < len(lines) else None

    def take(kind: str, line: str) -> int:
        chosen[kind].append(line)
        said.append(line)
        at[kind] += 1
        return len(line) + 1

    left = room
    for kind in HEADINGS:
        heading = len(HEADINGS[kind]) + 1
        budget = min(int(room * SHARES[kind]), left) - heading
        used = 0
        while (line := next_line(kind)) is not None and used + len(line) + 1 <= budget:
            used += take(kind, line)
        if used:
            left -= heading + used
    progress = True
    while progress:  # then one more line per section, in their order, while any fits
        progress = False
        for kind in HEADINGS:
            line = next_line(kind)
            if line is None:
                continue
            cost = len(line) + 1 + (0 if chosen[kind] else len(HEADINGS[kind]) + 1)
            if cost <= left:
                left -= cost
                take(kind, line)
                progress = True
    shown: list[str] = []
    for kind, title in HEADINGS.items():
        if chosen[kind]:
            shown += [title, *chosen[kind]]
    return shown


_CHANGE_VERBS = ("adds", "defines", "removes")


def _changed_names(line: str) -> list[str] | None:
    """The names of a line that only lists them (``- 03-02 adds `a`, `b`; removes `c```), else None.

    Such a line comes from a change's diff when nothing else said what the
    change did; a date before it and a teammate's name after it are allowed.
    """
    body = line[2:] if line.startswith("- ") else line
    if len(body) > 6 and body[2] == "-" and body[5] == " " and body[:2].isdigit():
        body = body[6:]
    body = body.split(" \u2014 by ", 1)[0]
    names: list[str] = []
    for clause in body.split("; "):
        verb, _, listed = clause.partition(" ")
        if verb not in _CHANGE_VERBS:
            return None
        for item in listed.split(", "):
            if len(item) < 3 or item[0] != "`" or item[-1] != "`" or "`" in item[1:-1]:
                return None
            names.append(item[1:-1])
    return names or None


def _said_already(line: str, said: list[str]) -> bool:
    """Whether ``line`` only lists names that the lines in ``said`` all name already."""
    names = _changed_names(line)
    return names is not None and all(any(name in other for other in said) for name in names)
