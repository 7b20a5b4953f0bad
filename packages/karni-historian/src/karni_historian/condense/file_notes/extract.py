"""A file's notes from one session: what was tried, decided, required and found there.

For every file a request's attempts edited (or tried to), in the order of
their value before an edit (``docs/historian/file-notes.md``):

- ``failed``: edits that never landed, and tests, builds or checks that
  failed because of the file, with the fix when a later run passed
  (:mod:`.failures`);
- ``rejected``: attempts the user undid or corrected ("no, …"), an edit the
  session reverted itself, changes discarded with ``git checkout``
  (:mod:`.undone`);
- ``decision``, ``constraint`` and ``outcome``: the agent's statements about
  the file's code and the names its edits added and removed, the rules the
  user stated, the checks after its last edit and the commit that landed it
  (:mod:`.findings`).

Everything is extracted from what the session holds; nothing is invented,
and the same session always gives the same notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from karni_historian.condense.file_notes.failures import failed_edits, failed_runs, pasted_failures
from karni_historian.condense.file_notes.findings import constraints_of, decisions, outcomes
from karni_historian.condense.file_notes.prompts import CORRECTION, without_pasted_output
from karni_historian.condense.file_notes.session import Attempt, Edit, Request
from karni_historian.condense.file_notes.undone import discards, rejections, self_reverts
from karni_historian.condense.file_notes.view import (
    FileView,
    Note,
    NoteList,
    Prior,
    SessionView,
    edit_digests,
)
from karni_historian.cut import shorten
from karni_historian.edits import diff_counts

__all__ = [
    "NOTED_REQUESTS",
    "FileRequest",
    "SessionNotes",
    "digests_of",
    "file_notes",
    "outline_of",
    "request_notes",
    "request_words",
    "shaping_of",
]


class FileRequest(NamedTuple):
    """A request that edited a file, with the lines its edits added and removed there."""

    path: str
    request: int
    timestamp: str | None
    text: str
    added: int
    removed: int


def _pair_counts(edit: Edit) -> tuple[int, int]:
    added = removed = 0
    for old, new in edit.pairs:
        if not old:
            added += len(new.splitlines())
        elif edit.tool.lower() in ("apply_patch", "patch"):
            added, removed = added + len(new.splitlines()), removed + len(old.splitlines())
        else:
            plus, minus = diff_counts(old, new)
            added, removed = added + plus, removed + minus
    return added, removed


def _file_request(path: str, request: Request, attempt: Attempt, landed: list[Edit]) -> FileRequest:
    added = removed = 0
    for edit in landed:
        plus, minus = _pair_counts(edit)
        added, removed = added + plus, removed + minus
    text = request_words(attempt.words if attempt.kind == CORRECTION else request.text)
    workers = [e.group for e in reversed(landed)]
    subtasks = [request.subtasks[g] for g in workers if g and g in request.subtasks]
    if subtasks:
        text = f"{text} (subtask: {shorten(subtasks[0], 60)})" if text else subtasks[0]
    timestamp = attempt.timestamp or request.timestamp
    if timestamp is None:
        timestamp = next((a.timestamp for a in request.attempts if a.timestamp), None)
    ordinal = attempt.ordinal if attempt.kind == CORRECTION else request.ordinal
    return FileRequest(path, ordinal, timestamp, text, added, removed)


def request_words(text: str) -> str:
    """A prompt on one line without pasted output (whole: the brief decides where to cut)."""
    return " ".join(without_pasted_output(text).split()) or " ".join(text.split())


NOTED_REQUESTS = 16
"""The newest requests of each file, in one reading of a session, whose notes are worked out.

A brief shows the notes of a file's newest requests first, and a room the
size of ``karni context``'s holds those of a few; older requests keep their
line under what shaped the file. So reading a long backlog does not cost a
full extraction for every one of thousands of requests.
"""


@dataclass
class SessionNotes:
    """A reading's notes, the files' shaping requests, and the digests of its landed edits."""

    notes: list[Note]
    requests: list[FileRequest]
    digests: list[tuple[int, str, str, str]]


def file_notes(requests: list[Request], prior: Prior | None = None) -> SessionNotes:
    """The notes and the shaping requests of every file the requests edited.

    ``prior`` holds what earlier readings of the same session knew (the
    requests are then the session's later ones). Everything is held in
    memory; ``ingest`` reads a session in two passes instead
    (:mod:`.outline`), with the same result.
    """
    session = SessionView.of_requests(requests, prior or Prior())
    found: list[Note] = []
    shaped: list[FileRequest] = []
    digests: list[tuple[int, str, str, str]] = []
    noted = _newest_per_file(requests)
    for index, request in enumerate(requests):
        following = requests[index + 1] if index + 1 < len(requests) else None
        shaped += shaping_of(request)
        digests += digests_of(request)
        paths = [path for path in request.all_edited() if (index, path) in noted]
        found += request_notes(request, paths, following, session)
    return SessionNotes(found, shaped, digests)


def shaping_of(request: Request) -> list[FileRequest]:
    """The lines of what shaped each file the request edited, file by file.

    A line per prompt that asked for a file's edits: the request and each
    correction of it ask; a bare continuation's edits count for the prompt
    it continued.
    """
    return outline_of(request)[1]


def outline_of(
    request: Request,
) -> tuple[list[str], list[FileRequest], list[tuple[int, str, str, str]]]:
    """The request's files, :func:`shaping_of` lines and :func:`digests_of`, in one walk.

    The files are every one the request edited or tried to, in the order first named.
    """
    asked: list[tuple[Attempt, dict[str, list[Edit]]]] = []
    paths: dict[str, None] = {}
    digests = []
    for attempt in request.attempts:
        if attempt.kind == CORRECTION or not asked:
            asked.append((attempt, {}))
        landed = asked[-1][1]
        for event in attempt.events:
            if type(event) is Edit:
                paths.setdefault(event.path)
                if event.error is None:
                    landed.setdefault(event.path, []).append(event)
                    if event.pairs:
                        forward, inverse = edit_digests(event.pairs)
                        digests.append((event.ordinal, event.path, forward, inverse))
    found = []
    for path in paths:
        for attempt, landed in asked:
            edits = landed.get(path)
            if edits:
                found.append(_file_request(path, request, attempt, edits))
    return list(paths), found, digests


def digests_of(request: Request) -> list[tuple[int, str, str, str]]:
    """``(ordinal, path, forward, inverse)`` digests of the request's landed edits."""
    found = []
    for attempt in request.attempts:
        for edit in attempt.edits():
            if edit.error is None and edit.pairs:
                forward, inverse = edit_digests(edit.pairs)
                found.append((edit.ordinal, edit.path, forward, inverse))
    return found


def request_notes(
    request: Request, paths: list[str], following: Request | None, session: SessionView
) -> list[Note]:
    """The notes of ``paths`` (files the request edited) in one request.

    ``following`` is the next request (only its first attempt is read: what
    the user said next).
    """
    after = following.attempts[0] if following is not None and following.attempts else None
    found: list[Note] = []
    for path in paths:
        notes = NoteList(FileView(path, request, session))
        failed_edits(notes)
        failed_runs(notes, session.names)
        pasted_failures(notes)
        rejections(notes, after, session)
        self_reverts(notes, session)
        discards(notes)
        decisions(notes)
        constraints_of(notes)
        outcomes(notes)
        found += notes.items
    return found


def _newest_per_file(requests: list[Request]) -> set[tuple[int, str]]:
    """``(request index, path)`` of the :data:`NOTED_REQUESTS` newest requests of each file."""
    chosen: set[tuple[int, str]] = set()
    counts: dict[str, int] = {}
    for index in range(len(requests) - 1, -1, -1):
        for path in requests[index].all_edited():
            if counts.get(path, 0) < NOTED_REQUESTS:
                counts[path] = counts.get(path, 0) + 1
                chosen.add((index, path))
    return chosen
