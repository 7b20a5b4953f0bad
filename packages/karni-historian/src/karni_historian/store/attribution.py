"""What ``blame`` reads from the store about one file: who wrote what, and which commits.

``karni-historian blame`` (``docs/historian/blame.md``) joins ``git blame``
with what the historian recorded: the line ranges each session's edits wrote
(``written_ranges``), the commits its git commands printed
(``session_commits``), the requests that shaped the file (``file_requests``)
and its notes of approaches later undone (``file_notes``). Every lookup here
is by the file's path or by commit, so ``blame`` costs a few queries per
file, whatever the size of the store. Sessions a teammate shared are read
from the same tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.store.database import Database

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

__all__ = ["AttributionTables", "RecordedCommit", "Written"]


@dataclass(frozen=True)
class Written:
    """One range of lines a session's edit wrote to a file (hashes only, see ``written_ranges``)."""

    session_id: str
    request: int
    ordinal: int
    timestamp: str | None
    hash: str
    lines: str
    loose: str


@dataclass(frozen=True)
class RecordedCommit:
    """A commit a session's git command printed: its short hash, subject, prompt and time."""

    session_id: str
    ordinal: int
    request: int
    hash: str
    subject: str
    timestamp: str | None
    request_text: str
    request_time: str | None


class AttributionTables(Database):
    """Reads of ``written_ranges``, ``session_commits``, ``file_requests`` and ``file_notes``."""

    def written_to(self, path: str) -> list[Written]:
        """Every range the stored sessions' edits wrote to ``path``, oldest message first."""
        rows = self.connection.execute(
            "SELECT session_id, request, ordinal, timestamp, hash, lines, loose"
            " FROM written_ranges WHERE path = ? ORDER BY session_id, ordinal, position",
            (path,),
        )
        return [Written(*row) for row in rows]

    def commits_named(
        self, prefixes: Iterable[str], subjects: Iterable[str]
    ) -> list[RecordedCommit]:
        """The recorded commits whose short hash is in ``prefixes`` or subject in ``subjects``."""
        keys = sorted(set(prefixes))
        titles = sorted(set(subjects))
        if not keys and not titles:
            return []
        found: dict[tuple[str, int, str], RecordedCommit] = {}
        select = (
            "SELECT session_id, ordinal, request, hash, subject, timestamp, request_text,"
            " request_time FROM session_commits"
        )
        for column, values in (("hash", keys), ("subject", titles)):
            for row in self._rows_in(select, column, values):
                found[(row[0], row[1], row[3])] = RecordedCommit(*row)
        return sorted(found.values(), key=lambda c: (c.session_id, c.ordinal))

    def file_requests_of(self, path: str) -> dict[tuple[str, int], tuple[str | None, str]]:
        """``(session, request) -> (timestamp, text)`` of the prompts that edited ``path``."""
        rows = self.connection.execute(
            "SELECT session_id, request, timestamp, text FROM file_requests WHERE path = ?",
            (path,),
        )
        return {(row[0], row[1]): (row[2], row[3]) for row in rows}

    def commit_requests(self, ids: Iterable[str]) -> dict[tuple[str, int], tuple[str | None, str]]:
        """``(session, request) -> (timestamp, text)`` of the prompts the commits answered.

        A commit's request may have edited no file (a ``git revert``).
        """
        select = "SELECT session_id, request, request_time, request_text FROM session_commits"
        return {
            (row[0], row[1]): (row[2], row[3])
            for row in self._rows_in(select, "session_id", sorted(set(ids)))
        }

    def undone_notes_of(self, path: str) -> list[tuple[str, int, int, str]]:
        """``(session, request, ordinal, text)`` of the file's notes of undone or rejected work."""
        return self.connection.execute(
            "SELECT session_id, request, ordinal, text FROM file_notes"
            " WHERE path = ? AND kind = 'rejected' ORDER BY session_id, ordinal",
            (path,),
        ).fetchall()

    def session_facts(self, ids: Iterable[str]) -> dict[str, tuple[str, str | None, str | None]]:
        """``id -> (source, title, model)`` of the sessions ``ids``."""
        select = "SELECT id, source, title, model FROM sessions"
        return {
            row[0]: (row[1], row[2], row[3])
            for row in self._rows_in(select, "id", sorted(set(ids)))
        }

    def _rows_in(self, select: str, column: str, values: list[str]) -> Iterator[tuple[Any, ...]]:
        """The rows of ``select`` whose ``column`` is one of ``values``, 400 values a statement."""
        for start in range(0, len(values), 400):
            chunk = values[start : start + 400]
            marks = ", ".join("?" * len(chunk))
            yield from self.connection.execute(f"{select} WHERE {column} IN ({marks})", chunk)

    def sessions_behind(self, version: int) -> int:
        """How many sessions with messages were last noted by an older extraction (or never).

        A session without stored messages (one a teammate shared, known by its
        rows alone) has nothing to read again, and is not counted.
        """
        row = self.connection.execute(
            "SELECT COUNT(*) FROM sessions s LEFT JOIN noted_sessions n ON n.session_id = s.id"
            " WHERE s.message_count > 0 AND (n.session_id IS NULL OR n.version < ?)",
            (version,),
        ).fetchone()
        return int(row[0])
