"""A session's shared document: what is shared of it, built from the store and redacted.

Shared: the session's id, harness, title, times and message count; its
compartments with every tier; the facts it promoted with where they came
from and who said them; per file it edited, each request that shaped the
file (time, words, ``+added −removed``, the messages that edited it, the
hashes of the line ranges it wrote, as :mod:`karni_historian.written_ranges`
defines them and ``ingest`` stored them) and the file's notes; and the
commits the session's git commands printed, with the request each answered
(what ``blame`` reads). Never shared: raw
messages, tool output, file contents (only hashes of written ranges),
thinking, absolute paths (made project-relative, the home folder ``~``),
text inside ``<private>…</private>`` in a prompt (cut wherever it shows up),
and secrets (the same redaction as a model call, with the ``.env`` values
the agent read). Everything comes out in a fixed order, so the same store
gives the same bytes.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right

from karni_historian.condense.file_notes.prose import in_project_terms
from karni_historian.condense.models.redaction import PRIVATE_MARK, Redactor, env_file_values
from karni_historian.condense.window import stream_messages
from karni_historian.ingest.shared_format import (
    FORMAT,
    NOTE_KINDS,
    is_commit,
    is_relative_path,
)
from karni_historian.model import TextPart

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from karni_historian.model import Message
    from karni_historian.store import Store

__all__ = ["PRIVATE_MARK", "private_spans", "session_document"]

_PRIVATE = re.compile(r"<private>(.*?)(?:</private>|\Z)", re.DOTALL | re.IGNORECASE)
_MIN_PRIVATE = 8
_MAX_RANGES = 400
_LIMITS = {"title": 4000, "text": 4000, "content": 4000, "p": 20_000}

Entry = dict[str, "Any"]
"""A JSON object of the document (a compartment, a fact, a file's entry)."""


def private_spans(messages: list[Message]) -> list[str]:
    """The text inside ``<private>…</private>`` in the user's prompts, and its lines."""
    spans: list[str] = []
    for message in messages:
        if message.role != "user":
            continue
        for part in message.parts:
            if isinstance(part, TextPart):
                for found in _PRIVATE.findall(part.text):
                    spans.append(found.strip())
                    spans += [line.strip() for line in found.splitlines()]
    return sorted({s for s in spans if len(s) >= _MIN_PRIVATE}, key=len, reverse=True)


def _private_material(messages: Iterable[Message]) -> tuple[list[str], list[str]]:
    """The prompts' private spans (longest first) and the ``.env`` values the agent read.

    One pass, a message at a time: a long session is never held whole.
    """
    spans: set[str] = set()
    values: list[str] = []
    for message in messages:
        spans.update(private_spans([message]))
        values += env_file_values([message])
    return sorted(spans, key=lambda span: (-len(span), span)), values


def _cleaner(root: str, messages: Iterable[Message]) -> Callable[[str], str]:
    """The function every shared text goes through: private spans, paths, then secrets."""
    spans, values = _private_material(messages)
    redact = Redactor(values)
    home = os.path.expanduser("~")

    def clean(text: str) -> str:
        text = _PRIVATE.sub(PRIVATE_MARK, text)
        for span in spans:
            if span in text:
                text = text.replace(span, PRIVATE_MARK)
        text = in_project_terms(text, root)
        if len(home) > 1 and home in text:
            text = text.replace(home, "~")
        return redact(text)

    return clean


def _compartments(store: Store, session_id: str, clean: Callable[[str], str]) -> list[Entry]:
    rows = []
    for stored in store.compartments(session_id):
        c = stored.compartment
        tiers = {
            f"p{n}": _cut(clean(t), "p") if t else None
            for n, t in enumerate((c.p1, c.p2, c.p3, c.p4), 1)
        }
        rows.append(
            {
                "sequence": stored.sequence,
                "start": c.start,
                "end": c.end,
                "title": _cut(clean(c.title), "title"),
                "type": c.episode_type,
                "importance": max(1, min(100, int(c.importance))),
                "start_date": c.start_date,
                "end_date": c.end_date,
                **tiers,
            }
        )
    return rows


def _facts(store: Store, session_id: str, clean: Callable[[str], str]) -> list[Entry]:
    facts = []
    for category, content, origin, start, end, message in store.session_fact_rows(session_id):
        text = _cut(clean(content), "content")
        if text.strip():
            facts.append(
                {
                    "category": category[:60],
                    "content": text,
                    "origin": origin if origin in ("user", "agent", "historian") else None,
                    "start": start,
                    "end": end,
                    "message": message,
                }
            )
    return facts


def _files(store: Store, session_id: str, clean: Callable[[str], str]) -> dict[str, Entry]:
    ranges = _ranges_by_request(store, session_id)
    edits = _edits_by_request(store, session_id)
    files: dict[str, Entry] = {}
    for path, request, timestamp, text, added, removed in store.session_request_rows(session_id):
        files.setdefault(path, {"requests": [], "notes": []})["requests"].append(
            {
                "request": request,
                "time": timestamp,
                "text": _cut(clean(text), "text"),
                "added": added,
                "removed": removed,
                "edits": edits.get((path, request), []),
                "ranges": ranges.get((path, request), [])[:_MAX_RANGES],
            }
        )
    for path, kind, request, ordinal, text, weight in store.session_note_rows(session_id):
        if kind not in NOTE_KINDS or not text.strip():
            continue
        files.setdefault(path, {"requests": [], "notes": []})["notes"].append(
            {
                "kind": kind,
                "request": request,
                "message": ordinal,
                "text": _cut(clean(text), "text"),
                "weight": weight,
            }
        )
    return {path: entry for path, entry in files.items() if is_relative_path(path)}


def _ranges_by_request(store: Store, session_id: str) -> dict[tuple[str, int], list[Entry]]:
    """The line ranges each request wrote in each file, as ``ingest`` stored them for blame."""
    found: dict[tuple[str, int], list[Entry]] = {}
    for (
        path,
        request,
        ordinal,
        position,
        timestamp,
        digest,
        lines,
        loose,
    ) in store.session_written_rows(session_id):
        found.setdefault((path, request), []).append(
            {
                "ordinal": ordinal,
                "position": position,
                "time": timestamp,
                "hash": digest,
                "lines": lines,
                "loose": loose,
            }
        )
    return found


def _edits_by_request(store: Store, session_id: str) -> dict[tuple[str, int], list[int]]:
    """The messages that edited each file, under the newest request before each."""
    requests: dict[str, list[int]] = {}
    for path, request, *_rest in store.session_request_rows(session_id):
        requests.setdefault(path, []).append(request)
    found: dict[tuple[str, int], list[int]] = {}
    for path, ordinal in store.session_edit_rows(session_id):
        asked = sorted(requests.get(path, ()))
        at = bisect_right(asked, ordinal)
        if at:
            found.setdefault((path, asked[at - 1]), []).append(ordinal)
    return found


def _commits(store: Store, session_id: str, clean: Callable[[str], str]) -> list[Entry]:
    """The commits the session's git commands printed, with the request each answered."""
    return [
        {
            "ordinal": ordinal,
            "request": request,
            "hash": digest,
            "subject": _cut(clean(subject), "text"),
            "time": timestamp,
            "request_text": _cut(clean(request_text), "text"),
            "request_time": request_time,
        }
        for ordinal, request, digest, subject, timestamp, request_text, request_time in (
            store.session_commit_rows(session_id)
        )
        if is_commit(digest)
    ]


def _cut(text: str, kind: str) -> str:
    limit = _LIMITS[kind]
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def session_document(store: Store, session_id: str) -> dict[str, Any]:
    """The shared document of one session of the store, redacted, in its fixed order."""
    session = store.session(session_id)
    assert session is not None
    clean = _cleaner(store.root, stream_messages(store, session_id, 1))
    title = _cut(clean(session.title), "title") if session.title else None
    return {
        "format": FORMAT,
        "session": {
            "id": session.id,
            "harness": session.source[:40],
            "title": title,
            "started": session.first_ts,
            "ended": session.last_ts,
            "messages": session.message_count,
        },
        "compartments": _compartments(store, session_id, clean),
        "facts": _facts(store, session_id, clean),
        "files": _files(store, session_id, clean),
        "commits": _commits(store, session_id, clean),
    }
