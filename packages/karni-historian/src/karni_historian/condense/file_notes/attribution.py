"""What ``blame`` needs from a session: the ranges its edits wrote, and the commits it made.

``karni-historian blame`` tells which request wrote a line (see
``docs/historian/blame.md``). Its evidence comes from here, worked out at
``ingest`` with the file's notes and stored beside them
(``written_ranges`` and ``session_commits``):

- for every landed edit, the hashes of the line ranges it wrote
  (:mod:`karni_historian.written_ranges`), with the prompt that asked for it
  and when it was made;
- for every git command that printed the commit it made
  (``[main 1a2b3c4] subject``), the hash, the subject, the prompt and when.

The prompt is the one ``file_requests`` keys a file's requests by: the
request, or the correction that asked again (a bare continuation's work
counts for the prompt it continued).
"""

from __future__ import annotations

from karni_historian.condense.file_notes.prompts import CORRECTION
from karni_historian.condense.file_notes.session import Edit, Request, Shell
from karni_historian.written_ranges import encode_hashes, written_ranges

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CommitRow", "WrittenRow", "attribution_rows"]

WrittenRow = tuple[str, int, int, int, str | None, str, str, str]
"""``(path, request, ordinal, position, timestamp, hash, line hashes, loose line hashes)``."""

CommitRow = tuple[int, int, str, str, str | None, str, str | None]
"""``(ordinal, request, short hash, subject, timestamp, request text, request time)``."""


def attribution_rows(
    requests: list[Request], words: Callable[[str], str] = str
) -> tuple[list[WrittenRow], list[CommitRow]]:
    """The written ranges and the commits of a session's requests (read from any point on).

    ``words`` turns a prompt into the words stored with a commit (as a
    file's requests store theirs: one line, project paths relative).
    """
    written: list[WrittenRow] = []
    commits: list[CommitRow] = []
    for request in requests:
        asking, asked = request.ordinal, (request.text, request.timestamp)
        for attempt in request.attempts:
            if attempt.kind == CORRECTION:
                asking, asked = attempt.ordinal, (attempt.words, attempt.timestamp)
            for event in attempt.events:
                when = event.timestamp if isinstance(event, Edit | Shell) else None
                when = when or attempt.timestamp or request.timestamp
                if isinstance(event, Edit) and event.error is None:
                    written += _written(event, asking, when)
                elif isinstance(event, Shell) and event.run.commit is not None:
                    short, subject = event.run.commit
                    text = words(asked[0])
                    commits.append((event.ordinal, asking, short, subject, when, text, asked[1]))
    return _numbered(written), commits


def _numbered(rows: list[WrittenRow]) -> list[WrittenRow]:
    """The rows with ``position`` counting each message's ranges of a file from 0."""
    seen: dict[tuple[str, int], int] = {}
    numbered = []
    for row in rows:
        key = (row[0], row[2])
        position = seen.get(key, 0)
        seen[key] = position + 1
        numbered.append((*row[:3], position, *row[4:]))
    return numbered


def _written(edit: Edit, asking: int, when: str | None) -> list[WrittenRow]:
    rows: list[WrittenRow] = []
    for old, new in edit.pairs:
        for found in written_ranges(old, new):
            rows.append(
                (
                    edit.path,
                    asking,
                    edit.ordinal,
                    0,
                    when,
                    found.hash,
                    encode_hashes(found.line_hashes),
                    encode_hashes(found.loose_hashes),
                )
            )
    return rows
