"""What shaped a file: the requests whose work edited it, with the lines each changed.

Read before an edit, the most useful history of a file is the list of the
user requests that led to changes in it: when, how much, and why. This module
works it out from the raw messages, so a file has it as soon as its session is
ingested, condensed or not (``docs/historian/blocks.md``). Each edit is
attributed to the last meaningful user prompt before it in its session
(subagent work is stored after the call that started it, so it counts for
the parent's request), and its ``+added −removed`` line counts come from the
edit tool's own input: the old and new text of a replacement, the content of
a written file, the ``+``/``-`` lines of a patch.
"""

from __future__ import annotations

import os
import time

from karni.agent.common.paths import project_relative
from karni.agent.common.sanitize import clean_line

from karni_historian.edits import PATH_KEYS, edit_line_counts, named_path
from karni_historian.prompts import SCENE_WORDS, first_word, prompt_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from karni_historian.store.briefing import BriefTables

__all__ = ["REQUEST_CHARS", "Shaping", "shaping_line", "shaping_requests"]

_READ_PER_SHOWN = 8
"""Sized to a limit, the noted requests read per request shown (repeats are skipped)."""

REQUEST_CHARS = 100
"""The longest request quoted in a line of what shaped a file."""


class Shaping:
    """One request that led to edits of a file.

    Attributes:
        session_id: The session of the request.
        ordinal: The request's message (0 when the edits came before any prompt).
        request: The request's text, on one line.
        timestamp: When the request was made (else the first edit), ISO 8601.
        added: Lines the edits added.
        removed: Lines the edits removed.
        author: The teammate who shared the session, from git (None: the user's own).
    """

    __slots__ = ("added", "author", "ordinal", "removed", "request", "session_id", "timestamp")

    def __init__(
        self,
        session_id: str,
        ordinal: int,
        request: str,
        timestamp: str | None,
        added: int = 0,
        removed: int = 0,
    ) -> None:
        """Create the record."""
        self.session_id = session_id
        self.ordinal = ordinal
        self.request = request
        self.timestamp = timestamp
        self.added = added
        self.removed = removed
        self.author: str | None = None
        """The teammate who shared the session (None: the user's own)."""

    def __repr__(self) -> str:
        return f"Shaping({self.session_id!r}, {self.ordinal}, +{self.added} -{self.removed})"

    def key(self) -> tuple[str, str, int]:
        """The order of requests, newest last: time, then session, then message."""
        return (self.timestamp or "", self.session_id, self.ordinal)


def _touches(data: dict[str, Any], path: str) -> bool:
    named = named_path(data)
    if named is not None:
        return named == path or named.startswith(path.rstrip("/") + "/")
    patch = data.get("patchText") or data.get("patch")
    return isinstance(patch, str) and path in patch


def _project_input(data: dict[str, Any], root: str) -> dict[str, Any]:
    """The input with absolute file paths inside ``root`` made project-relative."""
    updates = {}

    for key in PATH_KEYS:
        value = data.get(key)
        if isinstance(value, str) and os.path.isabs(value):
            relative = project_relative(root, value)
            if relative and relative != ".":
                updates[key] = relative
    return {**data, **updates} if updates else data


def _edit_counts(
    store: BriefTables, session_id: str, ordinal: int, path: str
) -> tuple[str | None, int, int]:
    """The message's time, and the lines of ``path`` its successful tool calls added and removed."""
    added = removed = 0
    when, parts = store.tool_calls(session_id, ordinal)
    for part in parts:
        data = part.get("input")
        if part.get("is_error") or not isinstance(data, dict):
            continue
        data = _project_input(data, store.root)
        if _touches(data, path):
            plus, minus = edit_line_counts(str(part.get("name", "")), data, path)
            added, removed = added + plus, removed + minus
    return when, added, removed


def _one_line(text: str) -> str:
    """``text`` on one line, without escape sequences or control characters."""
    return clean_line(" ".join(text.split()))


def _prompts(
    store: BriefTables, session_id: str, before: int
) -> Iterator[tuple[int, str, str | None]]:
    """``(ordinal, text, timestamp)`` of the session's meaningful prompts, newest first."""
    ordinal, timestamp, texts = 0, None, list[str]()
    for row_ordinal, row_timestamp, text in store.user_texts(session_id, before):
        if row_ordinal != ordinal and texts:
            prompt = prompt_text(texts)
            if prompt:
                yield ordinal, _one_line(prompt), timestamp
            texts = []
        ordinal, timestamp = row_ordinal, row_timestamp
        texts.append(text)
    prompt = prompt_text(texts)
    if prompt:
        yield ordinal, _one_line(prompt), timestamp


def _session_shapings(
    store: BriefTables, session_id: str, path: str, limit: int | None
) -> list[Shaping]:
    """The newest ``limit`` requests of one session whose work edited ``path``, newest first.

    The session's edits of the file and its prompts are walked together,
    newest first; the walk stops once ``limit`` requests are complete.
    """
    found: list[Shaping] = []
    prompts: Iterator[tuple[int, str, str | None]] | None = None
    request: tuple[int, str, str | None] = (1 << 62, "", None)  # the first edit finds its own
    for edit in store.edit_ordinals(session_id, path):
        if edit < request[0]:
            if limit is not None and len(found) >= limit:
                break
            if prompts is None:
                prompts = _prompts(store, session_id, edit)
            request = next((p for p in prompts if p[0] <= edit), (0, "", None))
            found.append(Shaping(session_id, request[0], request[1], request[2]))
        shaping = found[-1]
        when, plus, minus = _edit_counts(store, session_id, edit, path)
        if request[2] is None:
            shaping.timestamp = when  # the request's first edit, as the walk goes back
        shaping.added += plus
        shaping.removed += minus
    return found


def shaping_requests(store: BriefTables, path: str, limit: int | None = None) -> list[Shaping]:
    """The requests that led to edits of ``path`` (or files under it), newest first.

    A session ``ingest`` has noted (``docs/historian/file-notes.md``) gives its
    requests as noted: a bare "continue" already names the request it
    continued. Another session's are worked out from its raw messages. With
    ``limit``, only the newest that many: each session contributes its newest,
    and sessions whose last activity is older than every request found are
    not read (``docs/historian/blocks.md``).
    """
    shapings: list[Shaping] = []
    asked: set[str] = set()
    # A request asked again in another session is shown once: read a few more than shown.
    read = None if limit is None else limit * _READ_PER_SHOWN
    for session, request, timestamp, text, added, removed in store.file_request_rows(path, read):
        line = _one_line(text)
        if line and line in asked:
            continue  # the same request asked again in another session: the newest says it
        asked.add(line)
        shapings.append(Shaping(session, request, line, timestamp, added, removed))
    del shapings[len(shapings) if limit is None else limit :]
    for session_id, last_ts in store.editing_sessions(path):
        if limit is not None and len(shapings) >= limit and (last_ts or "") < shapings[-1].key()[0]:
            break
        shapings += _session_shapings(store, session_id, path, limit)
        shapings.sort(key=Shaping.key, reverse=True)
        del shapings[len(shapings) if limit is None else limit :]
    authors = store.shared_authors()
    for shaping in shapings if authors else ():
        shaping.author = authors.get(shaping.session_id)
    return shapings


def _minute(timestamp: str | None) -> str:
    """The local ``YYYY-MM-DD HH:MM`` of an ISO 8601 timestamp, or ``""``."""
    if not timestamp:
        return ""
    if len(timestamp) >= 16 and timestamp[10] in "T " and timestamp[:4].isdigit():
        seconds = _utc_seconds(timestamp)
        if seconds is not None:
            return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))
    return _minute_by_datetime(timestamp)


def _utc_seconds(timestamp: str) -> int | None:
    """Seconds since the epoch of ``YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)``; None otherwise.

    The common form of the transcripts' times, read without :mod:`datetime`
    (a brief runs before every edit); every other form goes to it.
    """
    date, zone = timestamp[:16], timestamp[16:]
    if date[4] + date[7] + date[13] != "--:":
        return None
    digits = date[:4] + date[5:7] + date[8:10] + date[11:13] + date[14:16]
    rest, offset = _zone(zone)
    if not digits.isdigit() or not digits.isascii() or offset is None:
        return None
    if rest and not (rest[0] == ":" and rest[1:3].isdigit() and _fraction(rest[3:])):
        return None
    year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:8])
    hour, minute = int(digits[8:10]), int(digits[10:12])
    second = int(rest[1:3]) if rest else 0
    if not (1 <= month <= 12 and 1 <= day <= _month_days(year, month)):
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    return ((_days(year, month, day) * 24 + hour) * 60 + minute) * 60 + second - offset


def _zone(text: str) -> tuple[str, int | None]:
    """``text`` split into what precedes its zone and the zone's offset in seconds."""
    if text.endswith("Z"):
        return text[:-1], 0
    sign = text[-6:-5]
    hours, colon, minutes = text[-5:-3], text[-3:-2], text[-2:]
    if sign in ("+", "-") and colon == ":" and (hours + minutes).isdigit():
        offset = int(hours) * 3600 + int(minutes) * 60
        return text[:-6], offset if sign == "+" else -offset
    return text, None


def _fraction(text: str) -> bool:
    return not text or (text[0] == "." and text[1:].isdigit() and text[1:].isascii())


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to the proleptic Gregorian date (Hinnant's days_from_civil)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _minute_by_datetime(timestamp: str) -> str:
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def _quoted(request: str, limit: int) -> str:
    if not request:
        return "(edits before the first request)"
    if len(request) <= limit:
        return f'"{request}"'
    ask = _ask_after_context(request)
    if ask:
        return f'"\u2026{_sentence_cut(request[ask:], limit - 1)}"'
    return f'"{_sentence_cut(request, limit)}"'


# fmt: off
_ASKING_WORDS = frozenset((
    "add", "make", "use", "fix", "change", "remove", "rename", "create", "implement", "write",
    "move", "replace", "update", "refactor", "switch", "delete", "drop", "keep", "split",
    "extract", "convert", "build", "set", "put", "show", "hide", "return", "raise", "handle",
    "support", "allow", "cap", "limit", "store", "save", "log", "retry", "wrap", "run", "test",
    "check", "ensure", "give", "turn", "please", "can", "could", "would", "let's", "don't",
    "never", "stop",
))
# fmt: on
"""First words of a sentence that asks for something (an imperative, a polite question)."""


def _ask_after_context(request: str) -> int:
    """Where the ask starts when the request opens with one sentence that only sets the scene.

    ``Our client keeps getting HTTP 429. Add a rate limiter …`` is quoted from
    ``Add``, so a cut quote keeps the request's point; 0 when the request
    opens with its ask (or a question, or anything else).
    """
    end = min((i for i in (request.find(". "), request.find("! ")) if i > 0), default=-1)
    if end < 0 or "?" in request[:end]:
        return 0
    rest = request[end + 2 :].lstrip()
    if first_word(request) not in SCENE_WORDS or first_word(rest) not in _ASKING_WORDS:
        return 0
    return len(request) - len(rest)


def _sentence_cut(request: str, limit: int) -> str:
    """``request`` cut after its last whole sentence that fits, else at a word."""
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    from karni_historian.cut import shorten

    end = max(request.rfind(mark, 0, limit) for mark in (". ", "? ", "! ", "; "))
    if end >= limit // 2:
        return request[: end + 1].rstrip(" ;")
    return shorten(request, limit)


def shaping_line(number: int, shaping: Shaping, *, request_chars: int = REQUEST_CHARS) -> str:
    """``N. DATE +A −R — "request…"``, one line; ``— by NAME`` ends a teammate's."""
    date = _minute(shaping.timestamp)
    head = f"{number}. {date} " if date else f"{number}. "
    counts = f"+{shaping.added} \u2212{shaping.removed}"
    line = f"{head}{counts} \u2014 {_quoted(shaping.request, request_chars)}"
    return f"{line} \u2014 by {_one_line(shaping.author)}" if shaping.author else line
