"""The timeline page's data: sessions, their episodes and files, and what shaped each file.

``karni-historian timeline`` draws the history a person would otherwise read
in briefs: every session on a time axis, its compartments along it, which
files each touched, and for the files edited, the requests that changed them
(with their ``+added −removed``) and the notes ``ingest`` took
(``docs/historian/timeline.md``). This module gathers that as one JSON-ready
object; :mod:`karni_historian.brief.timeline_page` turns it into the page.

Every text comes from transcripts, so it is untrusted: each is cleaned here
as a brief's is (no escape sequences, controls or format characters), and
the page shows it only as text. Files are named by their indices into one
list (``files``), so a path touched in many places is written once. Instants
are milliseconds since the epoch (the page shows them in the reader's zone),
and each has its place on the axis (``x0``/``x1``, 0 to 1,
:class:`~karni_historian.brief.timeline_axis.TimeAxis`).
"""

from __future__ import annotations

from datetime import datetime

from karni.agent.common.sanitize import clean_field, clean_text

from karni_historian.brief.notes import HEADINGS
from karni_historian.brief.shaped import shaping_requests
from karni_historian.brief.timeline_axis import TimeAxis

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from karni_historian.store import SessionInfo, Store

__all__ = ["FORMAT", "MAX_SHAPED_FILES", "epoch_ms", "timeline_data"]

FORMAT = 1
"""The version of the data's shape, the page's ``format``."""
MAX_SHAPED_FILES = 2000
"""The most files whose shaping the page carries (the most recently edited, and the chosen file)."""

NOTE_KINDS = {"rejected": "failed", **{kind: kind for kind in HEADINGS}}
"""The notes' kinds as the page groups them (a rejected attempt is one that failed)."""


def epoch_ms(timestamp: str | None) -> int | None:
    """Milliseconds since the epoch of an ISO 8601 timestamp (one without a zone is local)."""
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int(moment.timestamp() * 1000)


class _Files:
    """The page's list of paths, each written once; a path's index names it elsewhere."""

    __slots__ = ("index", "paths")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.index: dict[str, int] = {}

    def of(self, path: str) -> int:
        found = self.index.get(path)
        if found is None:
            found = self.index[path] = len(self.paths)
            self.paths.append(clean_field(path))
        return found


def _touched(
    rows: Sequence[tuple[int, str, str]], files: _Files, start: int, end: int
) -> dict[str, list[int]]:
    """``{"edited": [...], "read": [...]}``: the files messages ``start``-``end`` touched."""
    edited: dict[int, None] = {}
    read: dict[int, None] = {}
    low, high = 0, len(rows)
    while low < high:  # the first row at or after ``start``
        middle = (low + high) // 2
        if rows[middle][0] < start:
            low = middle + 1
        else:
            high = middle
    for ordinal, path, action in rows[low:]:
        if ordinal > end:
            break
        (read if action == "read" else edited)[files.of(path)] = None
    return {"edited": list(edited), "read": [f for f in read if f not in edited]}


def _between(t0: int | None, t1: int | None, share: float) -> int | None:
    """The instant ``share`` of the way from ``t0`` to ``t1`` (None without both)."""
    if t0 is None or t1 is None:
        return None
    return t0 + round((t1 - t0) * share)


def _session(
    store: Store, info: SessionInfo, author: str, files: _Files, *, local: bool = True
) -> dict[str, Any]:
    """One session: its facts, its episodes, and the messages not condensed yet (``tail``).

    ``local`` is false for a teammate's shared session, ``author`` theirs then.
    """
    t0, t1 = epoch_ms(info.first_ts), epoch_ms(info.last_ts)
    rows = store.session_file_rows(info.id)
    count = max(info.message_count, 1)

    def when(ordinal: int, timestamp: str | None) -> int | None:
        """A message's time, else its place between the session's first and last."""
        return epoch_ms(timestamp) or _between(t0, t1, (ordinal - 1) / max(count - 1, 1))

    episodes: list[dict[str, Any]] = []
    condensed = 0
    for row in store.timeline_episodes(info.id):
        number, start, end, title, body, importance, kind, first, last = row
        condensed = max(condensed, end)
        episodes.append(
            {
                "id": number,
                "start": start,
                "end": end,
                "title": clean_field(title),
                "text": clean_text(body).strip(),
                "importance": importance,
                "type": clean_field(kind) if kind else None,
                "t0": when(start, first),
                "t1": when(end, last),
                **_touched(rows, files, start, end),
            }
        )
    tail = None
    if info.message_count > condensed:
        first, last = store.message_span_times(info.id, condensed + 1, info.message_count)
        tail = {
            "start": condensed + 1,
            "end": info.message_count,
            "t0": when(condensed + 1, first),
            "t1": when(info.message_count, last),
            **_touched(rows, files, condensed + 1, info.message_count),
        }
    return {
        "id": clean_field(info.id),
        "harness": clean_field(info.source),
        "author": author,
        "local": local,
        "title": clean_field(info.title) if info.title else None,
        "model": clean_field(info.model) if info.model else None,
        "messages": info.message_count,
        "t0": t0,
        "t1": t1,
        "files": sorted({files.of(path) for _ordinal, path, _action in rows}),
        "episodes": episodes,
        "tail": tail,
    }


def _place(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Lay the axis out for the sessions and give each dated thing its ``x0`` and ``x1``."""
    spans = [(s["t0"], s["t1"]) for s in sessions if s["t0"] is not None and s["t1"] is not None]
    axis = TimeAxis(spans)
    for session in sessions:
        parts = [session, *session["episodes"], *([session["tail"]] if session["tail"] else [])]
        for part in parts:
            dated = part["t0"] is not None and part["t1"] is not None
            part["x0"] = axis.x(part["t0"]) if dated else None
            part["x1"] = axis.x(part["t1"]) if dated else None
    return {"ticks": axis.ticks(), "gaps": axis.gaps()}


def _shaping(store: Store, path: str, files: _Files) -> dict[str, Any]:
    """What shaped one file: the requests that edited it, and its notes, newest first."""
    requests = [
        {
            "session": clean_field(s.session_id),
            "message": s.ordinal,
            "time": epoch_ms(s.timestamp),
            "request": clean_field(s.request),
            "added": s.added,
            "removed": s.removed,
        }
        for s in shaping_requests(store, path)
    ]
    notes = []
    seen: set[tuple[str, str]] = set()
    for session, _request, _ordinal, kind, text, _weight, last_ts in store.file_note_rows(path):
        group = NOTE_KINDS.get(kind)
        key = (group or "", " ".join(text.split()).lower())
        if group is None or key in seen:
            continue
        seen.add(key)
        notes.append(
            {
                "session": clean_field(session),
                "kind": group,
                "text": clean_field(text),
                "time": epoch_ms(last_ts),
            }
        )
    return {"file": files.of(path), "requests": requests, "notes": notes}


def _shaped_paths(store: Store, selected: str | None, files: _Files) -> list[str]:
    """The files whose shaping the page carries: the newest edited, and the chosen file's."""
    paths = store.edited_paths_newest_first(MAX_SHAPED_FILES)
    if selected:
        under = selected.rstrip("/") + "/"
        chosen = [p for p in files.index if p == selected or p.startswith(under)]
        have = set(paths)
        paths += [p for p in chosen if p not in have]
    return paths


def timeline_data(
    store: Store,
    *,
    project: str,
    author: str,
    selected: str | None = None,
    generated: int | None = None,
) -> dict[str, Any]:
    """Everything the timeline page shows, as one JSON-ready object.

    Its shape is described in ``docs/historian/timeline.md``.

    Args:
        store: The project's store.
        project: The project's name, for the page's heading.
        author: Who ran the local sessions (the page colours each author).
        selected: A project-relative path the page's file filter starts on.
        generated: When the page was made, in milliseconds since the epoch.
    """
    files = _Files()
    teammates = store.shared_authors()  # a teammate's shared session: its file's git author
    imported = store.imported_sessions()
    sessions = [
        _session(
            store,
            info,
            clean_field(teammates.get(info.id, author)),
            files,
            local=info.id not in imported,
        )
        for info in store.sessions()
    ]
    axis = _place(sessions)
    shaping = [_shaping(store, path, files) for path in _shaped_paths(store, selected, files)]
    shaping = [entry for entry in shaping if entry["requests"] or entry["notes"]]
    return {
        "format": FORMAT,
        "project": clean_field(project),
        "generated": generated,
        "selected": clean_field(selected) if selected else "",
        "author": clean_field(author),
        "files": files.paths,
        "sessions": sessions,
        "axis": axis,
        "shaping": shaping,
    }
