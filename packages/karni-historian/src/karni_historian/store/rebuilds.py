"""The ``history_rebuilds`` table: the block each session's history was last rebuilt to.

``render`` prints that block byte for byte until a rebuild is warranted
(``docs/historian/cache-safe.md``); the row keeps what is needed to tell:
how many compartments it holds and their digest, the project memory it saw,
the settings that shaped it, and when and why it was rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.store.database import Database, utc_now

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
    """Reading and saving the last rebuild; the memory digest lives in ``BriefTables``."""

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
