"""What the MCP server's tools answer, as plain functions of the project they serve.

Each opens the project's store read-only for one answer, never writes, and
reads no other project's store: paths outside the project are refused. Every
answer is text cleaned as briefs are (:func:`clean`), ending with its size in
tokens, and compact first (ids, titles, dates, one-line snippets), so an
agent asks for details (:func:`get_history`) only of what it picked.
Anticipated failures raise :class:`~karni_historian.errors.QueryError` with
one line saying why and what to do.
"""

from __future__ import annotations

import os
import re

from karni.agent.common.paths import project_relative
from karni.agent.common.sanitize import clean_line, neutralise

from karni_historian.brief.briefs import file_brief
from karni_historian.brief.expand import expand_range, full_message
from karni_historian.brief.search import SearchFilters, author_filter, check_since, search
from karni_historian.budget import CHARS_PER_TOKEN_FALLBACK, estimate_tokens
from karni_historian.condense.settings import load_settings
from karni_historian.errors import QueryError, StoreError
from karni_historian.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.store.search import TimelineRow

__all__ = [
    "MAX_BRIEF_TOKENS",
    "clean",
    "file_history",
    "get_history",
    "search_history",
    "timeline",
]

MAX_BRIEF_TOKENS = 20_000
"""The largest budget ``file_history`` takes."""
DEFAULT_BRIEF_TOKENS = 1_500
"""``file_history``'s budget when none is asked for."""
MAX_IDS = 10
"""The most ids one ``get_history`` call reads."""

_ID = re.compile(r"^([^\s:]+):(\d+)(?:-(\d+))?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def clean(text: str) -> str:
    """``text`` as a brief shows it: each line cleaned, a line imitating Karni's own neutralised."""
    return "\n".join(neutralise(clean_line(line)) for line in text.splitlines())


def sized(text: str) -> str:
    """``text``, cleaned, with a last line stating its size in tokens."""
    body = clean(text)
    return f"{body}\n[{estimate_tokens(body)} tokens]"


def _open(root: str) -> Store:
    """The project's store, read-only."""
    try:
        return Store.open(root, readonly=True)
    except StoreError as error:
        raise QueryError(str(error)) from None


def search_history(
    root: str,
    query: str,
    *,
    file: str | None = None,
    session: str | None = None,
    since: str | None = None,
    author: str | None = None,
    limit: int = 10,
    tools: bool = False,
) -> str:
    """The hits of ``query``, one line each: ``id  date  kind  title — snippet``."""
    filters = SearchFilters(tools=tools)
    if since is not None:
        filters.since = check_since(since)
    if author is not None:
        author_filter(filters, author, root)
    if file is not None:
        filters.path = _inside(root, file)
    with _open(root) as store:
        if session is not None:
            filters.session_id = _session(store, session)
        found = search(store, query, filters, limit)
    lines = [
        f"{_hit_id(hit.session_id, hit.start, hit.end)}  {hit.date or '-'}  {hit.kind}"
        f"  {hit.title or 'untitled'} — {hit.snippet}"
        for hit in found.hits
    ]
    if not lines:
        lines = [f"no history matches {query!r}"]
    elif found.any_word:
        lines.insert(0, "(no row holds every word; these hold some of them)")
    lines.append("ids are SESSION:START-END; get_history(ids) reads them in full")
    return sized("\n".join(lines))


def file_history(root: str, path: str, budget: int | None = None) -> str:
    """The brief about ``path`` (what shaped it, what to respect), in ``budget`` tokens."""
    tokens = DEFAULT_BRIEF_TOKENS if budget is None else budget
    if not 100 <= tokens <= MAX_BRIEF_TOKENS:
        raise QueryError(f"budget {tokens} is out of range; give 100 to {MAX_BRIEF_TOKENS}")
    relative = _inside(root, path)
    with _open(root) as store:
        text = file_brief(store, relative, room_chars=int(tokens * CHARS_PER_TOKEN_FALLBACK))
    return sized(text or f"no history recorded for {relative}")


def get_history(root: str, ids: Sequence[str], raw: bool = False) -> str:
    """The full text of each id: a compartment's (or with ``raw`` its messages), or a message."""
    if not ids:
        raise QueryError("give one or more ids, as search_history or timeline list them")
    if len(ids) > MAX_IDS:
        raise QueryError(f"{len(ids)} ids asked for; give at most {MAX_IDS} at once")
    parts = []
    with _open(root) as store:
        for wanted in ids:
            session_id, start, end = _parse_id(store, wanted)
            parts.append(f"== {_hit_id(session_id, start, end)}")
            parts.append(_history_of(store, root, session_id, start, end, raw))
    return sized("\n".join(parts))


def _history_of(store: Store, root: str, session_id: str, start: int, end: int, raw: bool) -> str:
    """One id's text: a message in full, a compartment's tiers, or a range's messages."""
    if start == end:
        return full_message(store, session_id, start) or f"no message {start} in {session_id}"
    if not raw:
        for stored in store.compartments(session_id):
            found = stored.compartment
            if (found.start, found.end) == (start, end):
                date = found.end_date or found.start_date or "-"
                return f"{found.title} ({date})\n{found.p1 or found.content}"
    return expand_range(store, session_id, start, end, load_settings(root))


def timeline(root: str, around: str, days: int = 3, limit: int = 20) -> str:
    """What happened around a date (``YYYY-MM-DD``) or a message (``SESSION:N``)."""
    if not 0 <= days <= 60 or not 1 <= limit <= 100:
        raise QueryError("give days from 0 to 60 and limit from 1 to 100")
    with _open(root) as store:
        if _DATE.match(around.strip()):
            first, last = _date_span(store, around.strip(), days)
            rows = store.episodes_between(first, last, limit)
            sessions = store.sessions_between(first, last)
            head = [f"sessions active {first} to {last}:"]
            head += [
                f"  {sid[:8]}  {(ts or '-')[:10]}  {title or 'untitled'}"
                for sid, title, ts in sessions
            ]
        else:
            session_id, start, _end = _parse_id(store, around)
            rows = store.episodes_around(session_id, start, max(1, limit // 2))
            head = [f"session {session_id[:8]}, around message {start}:"]
    lines = [*head, "episodes:", *(_episode_line(row) for row in rows)]
    if not rows:
        lines.append("  none")
    return sized("\n".join(lines))


def _date_span(store: Store, day: str, days: int) -> tuple[str, str]:
    """``days`` days before and after ``day``, as ``YYYY-MM-DD`` (SQLite's date arithmetic)."""
    row = store.connection.execute(
        "SELECT date(?1, '+0 days'), date(?1, ?2), date(?1, ?3)",
        (day, f"-{days} days", f"+{days} days"),
    ).fetchone()
    if row is None or row[0] != day:  # SQLite reads 2026-02-31 as 2026-03-03
        raise QueryError(f"{day!r} is not a date; give YYYY-MM-DD")
    return str(row[1]), str(row[2])


def _short(text: str, limit: int = 100) -> str:
    """``text`` on one line, cut at a word to about ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] + "…"


def _episode_line(row: TimelineRow) -> str:
    return f"  {row.date or '-'}  {_hit_id(row.session_id, row.start, row.end)}  {row.title}"


def _hit_id(session_id: str | None, start: int | None, end: int | None) -> str:
    """``SESSION:START-END`` (``SESSION:N`` for one message), the session cut to 8 characters."""
    session = (session_id or "-")[:8]
    if start is None:
        return session
    return f"{session}:{start}" if start == end or end is None else f"{session}:{start}-{end}"


def _parse_id(store: Store, wanted: str) -> tuple[str, int, int]:
    """``(session, start, end)`` of an id ``SESSION:START-END`` or ``SESSION:N``."""
    match = _ID.match(wanted.strip())
    if match is None:
        raise QueryError(f"{wanted!r} is not an id; ids look like 9c2f41d7:12-30 or 9c2f41d7:12")
    start = int(match.group(2))
    end = int(match.group(3) or start)
    if not 1 <= start <= end:
        raise QueryError(f"{wanted!r}: the range must run from 1 up, START <= END")
    return _session(store, match.group(1)), start, end


def _session(store: Store, wanted: str) -> str:
    """The session ``wanted`` names, in full or by a unique prefix."""
    if store.session(wanted) is not None:
        return wanted
    matches = [s.id for s in store.sessions() if s.id.startswith(wanted)]
    if len(matches) != 1:
        why = "no session" if not matches else "more than one session"
        raise QueryError(f"{why} starts with {wanted!r}; give more of the id")
    return matches[0]


def _inside(root: str, path: str) -> str:
    """``path`` (relative to the project root, or absolute) as a project path; refused outside."""
    relative = project_relative(root, path if os.path.isabs(path) else os.path.join(root, path))
    if relative is None:
        raise QueryError(f"{path} lies outside this project; give a path inside {root}")
    return relative
