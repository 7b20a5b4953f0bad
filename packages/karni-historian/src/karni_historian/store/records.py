"""The plain records the store reads and writes, one per table row.

They are small ``__slots__`` classes rather than dataclasses so that the
store, which the history provider opens on the hot path, imports nothing
beyond the standard library's :mod:`sqlite3`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from karni_historian.model import Compartment

__all__ = [
    "BriefEpisode",
    "CursorState",
    "FactRecord",
    "RunRecord",
    "SessionInfo",
    "StoredCompartment",
    "normalize_fact",
]


class SessionInfo:
    """One stored session, as ``sessions`` lists it."""

    __slots__ = ("first_ts", "id", "last_ts", "message_count", "model", "source", "title")

    def __init__(
        self,
        id: str,
        source: str,
        title: str | None,
        message_count: int,
        first_ts: str | None,
        last_ts: str | None,
        model: str | None = None,
    ) -> None:
        """Create the record (fields as in the ``sessions`` table)."""
        self.id = id
        self.source = source
        self.title = title
        self.message_count = message_count
        self.first_ts = first_ts
        self.last_ts = last_ts
        self.model = model
        """The session's model as its transcript records it (``provider/model``), if known."""

    def __repr__(self) -> str:
        return f"SessionInfo({self.id!r}, {self.source!r}, messages={self.message_count})"


class StoredCompartment:
    """A compartment row: the model :class:`Compartment` plus where it is stored."""

    __slots__ = ("compartment", "id", "sequence", "session_id")

    def __init__(self, id: int, session_id: str, sequence: int, compartment: Compartment) -> None:
        """Create the record."""
        self.id = id
        self.session_id = session_id
        self.sequence = sequence
        self.compartment = compartment


class BriefEpisode:
    """A compartment as a brief reads it: its place, range, title and tier bodies.

    The fields a brief prints, under the names :class:`Compartment` uses, without
    the model classes (which need :mod:`dataclasses`, a cost the hot path avoids).
    """

    __slots__ = (
        "author",
        "content",
        "end",
        "episode_type",
        "id",
        "importance",
        "p1",
        "p2",
        "p3",
        "p4",
        "session_id",
        "start",
        "start_date",
        "title",
    )

    def __init__(self, row: Sequence[Any]) -> None:
        """Create the record from a row of its columns, in this order.

        ``id, session_id, start, end, title, p1, p2, p3, p4, importance,
        start_date, episode_type``.
        """
        (
            self.id,
            self.session_id,
            self.start,
            self.end,
            self.title,
            p1,
            p2,
            p3,
            p4,
            self.importance,
            self.start_date,
            self.episode_type,
        ) = row
        # As :func:`karni_historian.store.compartments.compartment_row` reads them.
        self.p1 = p1 or ""
        self.content = self.p1  # a compartment's body is its p1 (schema 8 keeps no copy)
        self.p2 = p2 if p2 is not None else ""
        self.p3 = p3 if p3 is not None else ""
        self.p4 = p4 if p4 is not None else ""
        self.author: str | None = None
        """The teammate who shared the episode's session (None: the user's own)."""


def normalize_fact(content: str) -> str:
    """The form of a fact used to deduplicate it: case-folded, whitespace collapsed."""
    return " ".join(content.casefold().split()).rstrip(".")


class FactRecord:
    """A project-memory fact as a brief reads it: its category, content and teammate, if any."""

    __slots__ = ("author", "category", "content")

    def __init__(self, category: str, content: str, author: str | None = None) -> None:
        """Create the record; ``author`` names the teammate whose shared sessions alone said it."""
        self.category = category
        self.content = content
        self.author = author


class CursorState:
    """How far an ingest source file has been read."""

    __slots__ = ("inode", "kind", "lines", "malformed", "mtime_ns", "offset", "size")

    def __init__(
        self,
        kind: str,
        offset: int,
        size: int,
        mtime_ns: int,
        inode: int,
        lines: int = 0,
        malformed: int = 0,
    ) -> None:
        """Create the record (fields as in the ``ingest_cursors`` table)."""
        self.kind = kind
        self.offset = offset
        self.size = size
        self.mtime_ns = mtime_ns
        self.inode = inode
        self.lines = lines
        self.malformed = malformed


class RunRecord:
    """One historian run, successful or not, for ``historian_runs``."""

    __slots__ = (
        "chunk_end",
        "chunk_start",
        "compartments_produced",
        "discarded_last",
        "duration_ms",
        "facts_emitted",
        "failure_reason",
        "historian",
        "importances",
        "run_kind",
        "session_id",
        "status",
        "unprocessed_from",
    )

    def __init__(
        self,
        session_id: str,
        run_kind: str,
        status: str,
        *,
        historian: str = "local/extractive",
        failure_reason: str | None = None,
        chunk_start: int | None = None,
        chunk_end: int | None = None,
        unprocessed_from: int | None = None,
        compartments_produced: int = 0,
        facts_emitted: int = 0,
        importances: Sequence[int] = (),
        discarded_last: bool = False,
        duration_ms: int | None = None,
    ) -> None:
        """Create the record (fields as in the ``historian_runs`` table)."""
        self.session_id = session_id
        self.run_kind = run_kind
        self.status = status
        self.historian = historian
        self.failure_reason = failure_reason
        self.chunk_start = chunk_start
        self.chunk_end = chunk_end
        self.unprocessed_from = unprocessed_from
        self.compartments_produced = compartments_produced
        self.facts_emitted = facts_emitted
        self.importances = tuple(importances)
        self.discarded_last = discarded_last
        self.duration_ms = duration_ms
