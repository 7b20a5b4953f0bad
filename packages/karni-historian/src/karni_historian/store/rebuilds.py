"""The ``history_rebuilds`` table: the block each session's history was last rebuilt to.

``render`` prints that block byte for byte until a rebuild is warranted
(``docs/historian/cache-safe.md``); the row keeps what is needed to tell:
how many compartments it holds and their digest, the project memory it saw,
the settings that shaped it, and when and why it was rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.store.database import Database, utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.store.records import StoredCompartment

__all__ = ["Rebuild", "RebuildTables"]


@dataclass(frozen=True, slots=True)
class Rebuild:
    """One session's last history rebuild (fields as in ``history_rebuilds``)."""

    block: str
    compartment_count: int
    compartments_digest: str
    memory_max_id: int
    memory_digest: str
    shape: str
    reason: str
    rebuilt_at: str


class RebuildTables(Database):
    """Reading and saving the last rebuild, and the digest of the project memory."""

    def last_rebuild(self, session_id: str) -> Rebuild | None:
        """The session's last rebuild, None before the first."""
        row = self.connection.execute(
            "SELECT block, compartment_count, compartments_digest, memory_max_id,"
            " memory_digest, shape, reason, rebuilt_at FROM history_rebuilds"
            " WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return Rebuild(*row) if row else None

    def save_rebuild(self, session_id: str, rebuild: Rebuild) -> None:
        """Replace the session's last rebuild by ``rebuild`` (its time is now)."""
        with self.transaction():
            self.connection.execute(
                "INSERT OR REPLACE INTO history_rebuilds (session_id, block, compartment_count,"
                " compartments_digest, memory_max_id, memory_digest, shape, reason, rebuilt_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    rebuild.block,
                    rebuild.compartment_count,
                    rebuild.compartments_digest,
                    rebuild.memory_max_id,
                    rebuild.memory_digest,
                    rebuild.shape,
                    rebuild.reason,
                    utc_now(),
                ),
            )

    def memory_digest(self, max_id: int | None = None) -> tuple[int, str]:
        """``(newest memory id, digest)`` of the memories up to ``max_id`` (None: all).

        Only the id, category and content count: a fact seen again changes
        nothing, an edited or removed one changes the digest.
        """
        import hashlib

        query = "SELECT id, category, content FROM memories"
        rows = self.connection.execute(
            query + " ORDER BY id" if max_id is None else query + " WHERE id <= ? ORDER BY id",
            () if max_id is None else (max_id,),
        ).fetchall()
        digest = hashlib.sha256(repr(rows).encode("utf-8")).hexdigest()
        return (int(rows[-1][0]) if rows else 0), digest

    def facts_after(self, max_id: int) -> list[tuple[str, str]]:
        """``(category, content)`` of the memories promoted after ``max_id``, oldest first."""
        return self.connection.execute(
            "SELECT category, content FROM memories WHERE id > ? ORDER BY id", (max_id,)
        ).fetchall()

    def newest_compartment_id(self) -> int:
        """The row id of the newest compartment, 0 when there is none."""
        row = self.connection.execute("SELECT MAX(id) FROM compartments").fetchone()
        return int(row[0] or 0)

    def compartments_after(self, max_id: int, limit: int) -> list[StoredCompartment]:
        """At most ``limit`` compartments stored after row ``max_id``, oldest first."""
        from karni_historian.store.compartments import compartment_row, compartment_select

        rows = self.connection.execute(
            compartment_select() + " WHERE id > ? ORDER BY id LIMIT ?", (max_id, limit)
        ).fetchall()
        return [compartment_row(row) for row in rows]
