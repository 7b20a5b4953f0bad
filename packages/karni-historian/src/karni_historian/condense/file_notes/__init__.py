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
:mod:`.extract` turns all that into notes. A session is read incrementally:
each ``ingest`` reads it again only from its last two requests, in two
passes (:mod:`.outline`): every request lightly, then only each file's
newest requests whole, so its memory stays flat however long it is.
"""

from __future__ import annotations

from karni_historian.condense.file_notes.prose import in_project_terms
from karni_historian.condense.window import stream_messages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_historian.condense.file_notes.outline import Outline
    from karni_historian.condense.file_notes.session import Edit, Request
    from karni_historian.store import Store
    from karni_historian.store.file_notes import NoteStaging

__all__ = ["EXTRACTION_VERSION", "note_session", "note_sessions"]

EXTRACTION_VERSION = 1
"""The version of the extraction: raise it when the notes improve, and the next ``ingest`` reads
every session again from its start."""


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
    """Read one session from where its notes must be worked out again, and store them.

    Two passes (:mod:`.outline`): the outline stages every request's lines of
    what shaped its files and its edits' digests, then the requests worth
    noting are read whole and their notes staged; the staged rows replace
    the session's in one transaction.
    """
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.outline import Outline, outline_requests

    count = store.message_count(session_id)
    state = store.noted_state(session_id)
    start = state[2] if state is not None and state[1] == EXTRACTION_VERSION else 1
    root = store.root
    staging = store.stage_file_notes(session_id, start)
    outline = Outline(start)
    shaped: list[tuple[object, ...]] = []
    digests: list[tuple[object, ...]] = []
    for request in outline_requests(store, session_id, start):
        _outline_rows(request, outline, root, shaped, digests)
        if len(shaped) + len(digests) >= _ROWS_HELD:
            _flush(staging, shaped, digests)
    _flush(staging, shaped, digests)
    _note_chosen(store, staging, outline)
    staging.publish((count, EXTRACTION_VERSION, outline.resume_point()))


_ROWS_HELD = 4096
"""Rows of what shaped the files and of edit digests staged at once."""


def _outline_rows(
    request: Request,
    outline: Outline,
    root: str,
    shaped: list[tuple[object, ...]],
    digests: list[tuple[object, ...]],
) -> None:
    """Add the request to the outline, and its shaping lines and edit digests to the rows."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.extract import outline_of

    paths, requests, found = outline_of(request)
    outline.add(request, paths)
    for r in requests:
        text = in_project_terms(r.text, root)
        shaped.append((r.path, r.request, r.timestamp, text, r.added, r.removed))
    digests += found


def _flush(
    staging: NoteStaging, shaped: list[tuple[object, ...]], digests: list[tuple[object, ...]]
) -> None:
    staging.add_requests(shaped)
    staging.add_edits(digests)
    shaped.clear()
    digests.clear()


def _note_chosen(store: Store, staging: NoteStaging, outline: Outline) -> None:
    """Work out and stage the notes of each file's newest requests, read again whole."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.extract import request_notes
    from karni_historian.condense.file_notes.outline import chosen_requests
    from karni_historian.condense.file_notes.session import Edit
    from karni_historian.condense.file_notes.view import SessionView

    session_id = staging.session_id

    def earlier(path: str, forward: str, before: int) -> Edit | None:
        ordinal = staging.latest_edit(path, forward, before)
        if ordinal is None:
            return None
        found = _edit_at(store, session_id, ordinal, path, forward)
        return found or Edit(ordinal, path, "edit", [], None, None)

    session = SessionView(outline.paths | store.edited_paths(session_id), earlier)
    chosen = outline.chosen()
    root = store.root
    for index, request, following in chosen_requests(store, session_id, outline, chosen):
        paths = [path for path in request.all_edited() if (index, path) in chosen]
        rows = [
            (n.path, n.request, n.ordinal, n.kind, in_project_terms(n.text, root), n.weight)
            for n in request_notes(request, paths, following, session)
        ]
        staging.add_notes(rows)


def _edit_at(store: Store, session_id: str, ordinal: int, path: str, forward: str) -> Edit | None:
    """The landed edit of ``path`` with digest ``forward`` in the message at ``ordinal``."""
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.session import read_requests
    from karni_historian.condense.file_notes.view import edit_digests

    for message in stream_messages(store, session_id, ordinal, batch=1):
        if message.ordinal != ordinal:
            break
        for request in read_requests([message]):
            for attempt in request.attempts:
                for edit in attempt.edits(path):
                    if edit.error is None and edit.pairs and edit_digests(edit.pairs)[0] == forward:
                        return edit
        break
    return None
