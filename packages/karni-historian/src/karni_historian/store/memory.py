"""Project memory: facts by category, and the message ranges they came from.

Tables ``memories`` (deduplicated on
:func:`~karni_historian.store.records.normalize_fact`) and
``memory_sources``.
"""

from __future__ import annotations

from karni_historian.store.briefing import span_fact_rows
from karni_historian.store.database import Database, utc_now
from karni_historian.store.records import normalize_fact
from karni_historian.store.search_sql import KIND_FACT, index_rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_historian.model import Fact

__all__ = ["MemoryTables"]


class MemoryTables(Database):
    """Promoting facts and reading them back, whole or by the messages they came from."""

    def add_fact(
        self,
        fact: Fact,
        *,
        session_id: str | None = None,
        span: tuple[int, int] | None = None,
        source: tuple[int | None, str] | None = None,
    ) -> bool:
        """Promote a fact to project memory; True when it was new.

        Facts are deduplicated per category on :func:`normalize_fact`; a
        repeat raises its ``seen_count`` and records its source: the span,
        and ``source``, the message that states it and its origin (``user``,
        ``agent`` or ``historian``).
        """
        # bench row "karni-historian brief FILE" runs without it
        import hashlib

        content = " ".join(fact.content.split())
        category = fact.category.strip().upper()
        if not content or not category:
            return False
        digest = hashlib.sha256(normalize_fact(content).encode("utf-8")).hexdigest()
        now = utc_now()
        cursor = self.connection.execute(
            "INSERT INTO memories (category, content, normalized_hash, source_session_id,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(category, normalized_hash) DO UPDATE SET"
            " seen_count = seen_count + 1, updated_at = excluded.updated_at"
            " RETURNING id, seen_count",
            (category, content, digest, session_id, now, now),
        )
        row: tuple[int, int] = cursor.fetchone()  # RETURNING always yields the row
        memory_id, seen = row
        if seen == 1:
            index_rows(self.connection, KIND_FACT, "f.id = ?", (memory_id,))
        if session_id is not None and span is not None:
            message, origin = source or (None, None)
            self.connection.execute(
                "INSERT OR IGNORE INTO memory_sources (memory_id, session_id, start_message,"
                " end_message, source_message, origin) VALUES (?, ?, ?, ?, ?, ?)",
                (memory_id, session_id, span[0], span[1], message, origin),
            )
        return seen == 1

    def facts(self) -> list[Fact]:
        """Every project-memory fact, by category then first promotion."""
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.model import Fact

        rows = self.connection.execute(
            "SELECT category, content FROM memories ORDER BY category, id"
        ).fetchall()
        return [Fact(category, content) for category, content in rows]

    def fact_sources(self) -> list[tuple[str, str, str, int | None, str | None]]:
        """``(category, content, session, message, origin)`` of every recorded source."""
        return self.connection.execute(
            "SELECT m.category, m.content, s.session_id, s.source_message, s.origin"
            " FROM memories m JOIN memory_sources s ON s.memory_id = m.id"
            " ORDER BY m.category, m.id, s.session_id, s.start_message"
        ).fetchall()

    def facts_for_spans(self, spans: Iterable[tuple[str, int, int]]) -> list[Fact]:
        """Facts promoted from a run that overlapped one of ``(session, start, end)``."""
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.model import Fact

        return [Fact(*row) for row in span_fact_rows(self.connection, spans)]
