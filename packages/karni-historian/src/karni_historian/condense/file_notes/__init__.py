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
``blame`` needs (the ranges the edits wrote, the commits made). A session is
read incrementally: each ``ingest`` reads it again only from its last two
requests, in two passes (:mod:`.outline`): every request lightly (its
shaping lines, edit digests and ``blame``'s rows are worked out then, for
every request), then only each file's newest requests whole, so its memory
stays flat however long it is.
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

EXTRACTION_VERSION = 3
"""The version of the extraction: raise it when the notes improve, and the next ``ingest`` reads
every session again from its start. Version 2 added what ``blame`` reads (written ranges and
commits, :mod:`.attribution`); version 3 no longer takes ``keeps getting …`` or a number the
user only reports for a rule (:func:`.prompts.constraints`)."""

SHARED_VERSION = -1
"""``noted_sessions.version`` of a session imported from shared history (never noted here)."""

_ROWS_HELD = 4096
"""Rows of the first reading (shaping lines, edit digests, ``blame``'s rows) staged at once."""


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
    what shaped its files, its edits' digests and what ``blame`` reads (the
    ranges its edits wrote, the commits it made: :mod:`.attribution`), then
    the requests worth noting are read whole and their notes staged; the
    staged rows replace the session's from ``start`` on in one transaction.
    A session imported from shared history is left as its file brought it.
    """
    # bench row "karni-historian wrapup" runs without it
    from karni_historian.condense.file_notes.outline import Outline, outline_requests

    state = store.noted_state(session_id)
    if state is not None and state[1] == SHARED_VERSION:
        return  # imported from shared history: its rows are the ones its file brought
    count = store.message_count(session_id)
    start = state[2] if state is not None and state[1] == EXTRACTION_VERSION else 1
    staging = store.stage_file_notes(session_id, start)
    outline = Outline(start)
    rows = _Rows(store.root)
    for request in outline_requests(store, session_id, start):
        rows.add(request, outline)
        if rows.held >= _ROWS_HELD:
            rows.flush(staging)
    rows.flush(staging)
    _note_chosen(store, staging, outline)
    staging.publish((count, EXTRACTION_VERSION, outline.resume_point()))


class _Rows:
    """The first reading's rows not staged yet: every request's, whichever its notes are."""

    def __init__(self, root: str) -> None:
        # bench row "karni-historian wrapup" runs without them
        from karni_historian.condense.file_notes.attribution import attribution_rows
        from karni_historian.condense.file_notes.extract import outline_of, request_words

        self.root = root
        self._outline_of = outline_of
        self._attribution = attribution_rows
        self._request_words = request_words
        self.shaped: list[tuple[object, ...]] = []
        self.digests: list[tuple[object, ...]] = []
        self.written: list[tuple[object, ...]] = []
        self.commits: list[tuple[object, ...]] = []
        self.held = 0

    def add(self, request: Request, outline: Outline) -> None:
        """Add the request to the outline, and its shaping lines, edit digests and blame's rows."""
        paths, requests, found = self._outline_of(request)
        outline.add(request, paths)
        root = self.root
        for r in requests:
            text = in_project_terms(r.text, root)
            self.shaped.append((r.path, r.request, r.timestamp, text, r.added, r.removed))
        self.digests += found
        written, commits = self._attribution([request], self._words)
        self.written += written
        self.commits += commits
        self.held += len(requests) + len(found) + len(written) + len(commits)

    def _words(self, text: str) -> str:
        """A prompt as a commit stores it (as a file's requests store theirs)."""
        return in_project_terms(self._request_words(text), self.root)

    def flush(self, staging: NoteStaging) -> None:
        """Stage the rows held, and forget them."""
        staging.add_requests(self.shaped)
        staging.add_edits(self.digests)
        staging.add_written(self.written)
        staging.add_commits(self.commits)
        for held in (self.shaped, self.digests, self.written, self.commits):
            held.clear()
        self.held = 0


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
