"""What ingest has already read: ``seen_records`` and ``ingest_cursors``."""

from __future__ import annotations

from karni_historian.store.database import Database, utc_now
from karni_historian.store.records import CursorState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["IngestStateTables"]


class IngestStateTables(Database):
    """Record ids already imported and per-file read cursors."""

    def first_sighting(self, key: str) -> bool:
        """Record ``key``; True the first time it is seen, False after."""
        cursor = self.connection.execute(
            "INSERT OR IGNORE INTO seen_records (key) VALUES (?)", (key,)
        )
        return cursor.rowcount == 1

    def seen_among(self, keys: Sequence[str]) -> set[str]:
        """Those of ``keys`` recorded before, in one query."""
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.fastjson import dumps

        if not keys:
            return set()
        rows = self.connection.execute(
            "SELECT key FROM seen_records WHERE key IN (SELECT value FROM json_each(?))",
            (dumps(list(keys)),),
        )
        return {row[0] for row in rows}

    def add_seen(self, keys: Sequence[str]) -> None:
        """Record ``keys`` (those already recorded stay as they are), in one statement."""
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.fastjson import dumps

        if keys:
            self.connection.execute(
                "INSERT OR IGNORE INTO seen_records (key) SELECT value FROM json_each(?)",
                (dumps(list(keys)),),
            )

    def cursor(self, source: str) -> CursorState | None:
        """The ingest cursor of a source file, or None when never read."""
        row = self.connection.execute(
            "SELECT kind, offset, size, mtime_ns, inode, lines, malformed FROM ingest_cursors"
            " WHERE source = ?",
            (source,),
        ).fetchone()
        return CursorState(*row) if row else None

    def set_cursor(self, source: str, state: CursorState) -> None:
        """Store how far ``source`` has been read."""
        self.connection.execute(
            "INSERT INTO ingest_cursors"
            " (source, kind, offset, size, mtime_ns, inode, lines, malformed, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE SET"
            " kind = excluded.kind, offset = excluded.offset, size = excluded.size,"
            " mtime_ns = excluded.mtime_ns, inode = excluded.inode, lines = excluded.lines,"
            " malformed = excluded.malformed, updated_at = excluded.updated_at",
            (
                source,
                state.kind,
                state.offset,
                state.size,
                state.mtime_ns,
                state.inode,
                state.lines,
                state.malformed,
                utc_now(),
            ),
        )
