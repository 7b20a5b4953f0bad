"""Each file's notes: what was tried, decided, required and found there, session by session.

An agent about to edit a file needs to know what happened to it before: the
approaches that failed or were undone, what was decided and why, the rules
the user stated, how the last checks ended. ``ingest`` works these out from
every session it read, without a model (the extraction is described in
``docs/historian/file-notes.md``), and stores them per file; the file's
brief (:mod:`karni_historian.brief.briefs`) shows the most valuable first.

The pipeline: :mod:`.session` reads a session as requests and attempts,
:mod:`.commands` and :mod:`.changes` read its shell commands and edits,
:mod:`.prompts` and :mod:`.prose` its prompts and the agent's words, and
:mod:`.extract` turns all that into notes; :mod:`.attribution` keeps what
``blame`` needs (the ranges the edits wrote, the commits made). A session is read incrementally:
each ``ingest`` reads it again only from its last two requests.
"""

from __future__ import annotations

from karni_historian.condense.file_notes.prose import in_project_terms
from karni_historian.condense.window import stream_messages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_historian.condense.file_notes.extract import SessionNotes
    from karni_historian.condense.file_notes.session import Edit, Request
    from karni_historian.store import Store

__all__ = ["EXTRACTION_VERSION", "note_session", "note_sessions"]

EXTRACTION_VERSION = 2
"""The version of the extraction: raise it when the notes improve, and the next ``ingest`` reads
every session again from its start. Version 2 added what ``blame`` reads (written ranges and
commits, :mod:`.attribution`)."""


def note_sessions(store: Store, touched: Iterable[str] = ()) -> int:
    """Note every session that needs it; how many were read.

    A session is read (from its last two noted requests on) when ``ingest``
    just added to it (``touched``) or it has more messages than when it was
    last noted; from its start when it never was, or an older extraction
    noted it.
    """
    todo = sorted(set(store.sessions_to_note(EXTRACTION_VERSION)) | set(touched))
    for session_id in todo:
        note_session(store, session_id)
    return len(todo)


def note_session(store: Store, session_id: str) -> None:
    """Read one session from where its notes must be worked out again, and store them."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.attribution import attribution_rows
    from karni_historian.condense.file_notes.extract import file_notes, request_words
    from karni_historian.condense.file_notes.session import read_requests
    from karni_historian.condense.file_notes.view import Prior

    count = store.message_count(session_id)
    state = store.noted_state(session_id)
    start = state[2] if state is not None and state[1] == EXTRACTION_VERSION else 1
    requests = read_requests(stream_messages(store, session_id, start))
    prior = Prior(
        store.edited_paths(session_id),
        store.edit_digests(session_id, start) if start > 1 else [],
        lambda ordinal, path: _edit_at(store, session_id, ordinal, path),
    )
    found = file_notes(requests, prior)
    resume = _resume_point(requests, start)
    store.replace_file_notes(
        session_id,
        start,
        _rows(found, store.root),
        (count, EXTRACTION_VERSION, resume),
        attribution_rows(requests, lambda text: in_project_terms(request_words(text), store.root)),
    )


def _resume_point(requests: list[Request], start: int) -> int:
    """Where the next reading starts: the second to last request (the last two may change)."""
    starts = [request.ordinal for request in requests if request.ordinal >= start]
    return starts[-2] if len(starts) >= 2 else start


def _rows(
    found: SessionNotes, root: str
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], list[tuple[object, ...]]]:
    notes: list[tuple[object, ...]] = [
        (n.path, n.request, n.ordinal, n.kind, in_project_terms(n.text, root), n.weight)
        for n in found.notes
    ]
    requests: list[tuple[object, ...]] = [
        (r.path, r.request, r.timestamp, in_project_terms(r.text, root), r.added, r.removed)
        for r in found.requests
    ]
    return notes, requests, list(found.digests)


def _edit_at(store: Store, session_id: str, ordinal: int, path: str) -> Edit | None:
    """The edit of ``path`` in the message at ``ordinal``, read back from the store."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.session import read_requests

    for message in stream_messages(store, session_id, ordinal, batch=1):
        if message.ordinal != ordinal:
            break
        for request in read_requests([message]):
            for attempt in request.attempts:
                for edit in attempt.edits(path):
                    if edit.error is None:
                        return edit
        break
    return None
