"""Raw messages and what their tool calls touched.

Tables ``raw_messages``, ``tool_parts``, ``tool_calls`` and ``message_files``.
``tool_parts`` lists, for each message, its tool parts that carry a call id
(``(position, role, call_id)``): what condensing builds tool arcs from. Every
write of a message writes its rows, from the caller's parts when it has them
(ingest) or else from the stored JSON
(:data:`~karni_historian.store.schema.TOOL_PARTS_OF_MESSAGES`).

Raw messages are copied from the transcripts and never deleted: compartments
are a view on them, and ``expand`` recovers any message in full.
"""

from __future__ import annotations

from karni_historian.store.codec import parts_decoder
from karni_historian.store.database import Database, utc_now
from karni_historian.store.schema import TOOL_PARTS_OF_MESSAGES
from karni_historian.store.search_sql import KIND_MESSAGE, index_rows, unindex_rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any

    from karni_historian.model import Message

__all__ = ["MessageTables", "tool_part_rows"]

_CALLS_REMEMBERED = 4096
"""Tool calls a read keeps for the results that refer to them; it starts over when full."""


class MessageTables(Database):
    """Raw messages, tool-call ordinals and touched files."""

    def message_count(self, session_id: str) -> int:
        """The number of raw messages of the session (its last ordinal)."""
        row = self.connection.execute(
            "SELECT COALESCE(MAX(ordinal), 0) FROM raw_messages WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row[0])

    def write_message(
        self,
        session_id: str,
        ordinal: int,
        role: str,
        parts_json: str,
        *,
        timestamp: str | None = None,
        message_id: str = "",
        tool_parts: Sequence[tuple[int, int, str, str]] | None = None,
    ) -> None:
        """Insert the message at ``ordinal``, or replace its parts when it exists.

        Raw messages are never deleted; a replacement only ever adds to a
        message (a later block of the same response, a tool result).
        ``tool_parts`` are its ``(ordinal, position, role, call_id)`` rows
        when the caller has them (:func:`tool_part_rows`); else they are
        read from ``parts_json``.
        """
        at = "m.session_id = ? AND m.ordinal = ?"
        unindex_rows(self.connection, KIND_MESSAGE, at, (session_id, ordinal))
        cursor = self.connection.execute(
            "UPDATE raw_messages SET parts_json = ? WHERE session_id = ? AND ordinal = ?",
            (parts_json, session_id, ordinal),
        )
        if cursor.rowcount:
            index_rows(self.connection, KIND_MESSAGE, at, (session_id, ordinal))
            self.connection.execute(
                "DELETE FROM tool_parts WHERE session_id = ? AND ordinal = ?", (session_id, ordinal)
            )
            self._add_tool_parts(session_id, [ordinal], tool_parts)
            return
        cursor = self.connection.execute(
            "INSERT INTO raw_messages (session_id, ordinal, message_id, role, parts_json,"
            " timestamp) VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, ordinal, message_id, role, parts_json, timestamp),
        )
        index_rows(self.connection, KIND_MESSAGE, "m.id = ?", (cursor.lastrowid,))
        self._add_tool_parts(session_id, [ordinal], tool_parts)
        self.connection.execute(
            "UPDATE sessions SET message_count = MAX(message_count, ?), updated_at = ?,"
            " first_ts = CASE WHEN first_ts IS NULL OR (? IS NOT NULL AND ? < first_ts)"
            " THEN COALESCE(?, first_ts) ELSE first_ts END,"
            " last_ts = CASE WHEN last_ts IS NULL OR (? IS NOT NULL AND ? > last_ts)"
            " THEN COALESCE(?, last_ts) ELSE last_ts END WHERE id = ?",
            (
                ordinal,
                utc_now(),
                timestamp,
                timestamp,
                timestamp,
                timestamp,
                timestamp,
                timestamp,
                session_id,
            ),
        )

    def insert_messages(
        self,
        session_id: str,
        rows: Sequence[tuple[int, str, str, str | None, str]],
        tool_parts: Sequence[tuple[int, int, str, str]] | None = None,
    ) -> None:
        """Insert new messages as ``(ordinal, role, parts_json, timestamp, message_id)`` rows.

        Faster than :meth:`write_message` for messages known to be new: one
        statement for all rows, one update of the session's counters.
        ``tool_parts``: as for :meth:`write_message`, the rows of all these
        messages.
        """
        if not rows:
            return
        last = self.connection.execute("SELECT coalesce(max(id), 0) FROM raw_messages").fetchone()
        self.connection.executemany(
            "INSERT INTO raw_messages (session_id, ordinal, role, parts_json, timestamp,"
            " message_id) VALUES (?, ?, ?, ?, ?, ?)",
            [(session_id, *row) for row in rows],
        )
        index_rows(self.connection, KIND_MESSAGE, "m.id > ?", last)
        self._add_tool_parts(session_id, [row[0] for row in rows], tool_parts)
        stamps = [row[3] for row in rows if row[3]]
        self.connection.execute(
            "UPDATE sessions SET message_count = MAX(message_count, ?), updated_at = ?,"
            " first_ts = CASE WHEN ? IS NOT NULL AND (first_ts IS NULL OR ? < first_ts)"
            " THEN ? ELSE first_ts END,"
            " last_ts = CASE WHEN ? IS NOT NULL AND (last_ts IS NULL OR ? > last_ts)"
            " THEN ? ELSE last_ts END WHERE id = ?",
            (
                max(row[0] for row in rows),
                utc_now(),
                *([min(stamps)] * 3 if stamps else [None] * 3),
                *([max(stamps)] * 3 if stamps else [None] * 3),
                session_id,
            ),
        )

    def _add_tool_parts(
        self,
        session_id: str,
        ordinals: Sequence[int],
        rows: Sequence[tuple[int, int, str, str]] | None,
    ) -> None:
        """Write the ``tool_parts`` rows of the messages at ``ordinals``: ``rows``, or read."""
        if rows is None:
            self.connection.executemany(
                TOOL_PARTS_OF_MESSAGES.format(messages="m.session_id = ?1 AND m.ordinal = ?2"),
                [(session_id, ordinal) for ordinal in ordinals],
            )
        elif rows:
            self.connection.executemany(
                "INSERT INTO tool_parts (session_id, ordinal, position, role, call_id)"
                " VALUES (?, ?, ?, ?, ?)",
                [(session_id, *row) for row in rows],
            )

    def raw_message(self, session_id: str, ordinal: int) -> tuple[str, str, str | None, str] | None:
        """``(role, parts_json, timestamp, message_id)`` of one message, or None."""
        row: tuple[str, str, str | None, str] | None = self.connection.execute(
            "SELECT role, parts_json, timestamp, message_id FROM raw_messages"
            " WHERE session_id = ? AND ordinal = ?",
            (session_id, ordinal),
        ).fetchone()
        return row

    def ordinal_of_message_id(self, session_id: str, message_id: str) -> int | None:
        """The ordinal of the message with this provider id, or None."""
        # Without the hint SQLite prefers the primary key for the session and scans
        # every message of it: quadratic on a long session.
        row = self.connection.execute(
            "SELECT min(ordinal) FROM raw_messages INDEXED BY idx_raw_messages_message_id"
            " WHERE session_id = ? AND message_id = ? AND message_id != ''",
            (session_id, message_id),
        ).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def ordinals_of_message_ids(
        self, session_id: str, message_ids: Sequence[str]
    ) -> dict[str, int]:
        """The ordinal of each of ``message_ids`` that is stored, in one query."""
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.fastjson import dumps

        if not message_ids:
            return {}
        rows = self.connection.execute(
            "SELECT message_id, min(ordinal) FROM raw_messages INDEXED BY"
            " idx_raw_messages_message_id WHERE session_id = ? AND message_id != ''"
            " AND message_id IN (SELECT value FROM json_each(?)) GROUP BY message_id",
            (session_id, dumps(list(message_ids))),
        )
        return {row[0]: int(row[1]) for row in rows}

    def message_ids(self, session_id: str) -> set[str]:
        """The provider ids of the session's stored messages."""
        rows = self.connection.execute(
            "SELECT message_id FROM raw_messages INDEXED BY idx_raw_messages_message_id"
            " WHERE session_id = ? AND message_id != ''",
            (session_id,),
        ).fetchall()
        return {row[0] for row in rows}

    def message(self, session_id: str, ordinal: int) -> Message | None:
        """One message as a model :class:`Message`, or None when missing."""
        messages = self.messages(session_id, ordinal, ordinal)
        return messages[0] if messages else None

    def messages(self, session_id: str, start: int = 1, end: int | None = None) -> list[Message]:
        """The session's messages with ``start <= ordinal <= end``, in order."""
        return list(self.iter_messages(session_id, start, end))

    def iter_messages(
        self, session_id: str, start: int = 1, end: int | None = None
    ) -> Iterator[Message]:
        """Like :meth:`messages`, one at a time."""
        rows = self.connection.execute(
            "SELECT ordinal, role, parts_json, timestamp, message_id FROM raw_messages"
            " WHERE session_id = ? AND ordinal >= ? AND ordinal <= ? ORDER BY ordinal",
            (session_id, start, end if end is not None else 2**62),
        )
        return _messages(session_id, rows, None, self.parts_reader(session_id))

    def messages_at(self, session_id: str, ordinals: Sequence[int]) -> list[Message]:
        """The session's messages at ``ordinals`` (those stored), in order, in one query."""
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.fastjson import dumps

        if not ordinals:
            return []
        rows = self.connection.execute(
            "SELECT ordinal, role, parts_json, timestamp, message_id FROM raw_messages"
            " WHERE session_id = ? AND ordinal IN (SELECT value FROM json_each(?))"
            " ORDER BY ordinal",
            (session_id, dumps(list(ordinals))),
        )
        return list(_messages(session_id, rows, None, self.parts_reader(session_id)))

    def message_batch(
        self,
        session_id: str,
        start: int,
        limit: int,
        *,
        tool_input: Callable[[Any], Any] | None = None,
    ) -> list[Message]:
        """At most ``limit`` messages of the session from ordinal ``start`` on, in order.

        ``tool_input`` maps each tool part's input as it is decoded (see
        :func:`karni_historian.store.codec.parts_decoder`).
        """
        rows = self.connection.execute(
            "SELECT ordinal, role, parts_json, timestamp, message_id FROM raw_messages"
            " WHERE session_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
            (session_id, start, limit),
        )
        return list(_messages(session_id, rows, tool_input, self.parts_reader(session_id)))

    def stored_rows(self, session_id: str, start: int) -> Iterator[tuple[int, str, str]]:
        """``(ordinal, role, parts_json)`` of the session's messages from ``start`` on, undecoded.

        A cursor over the rows, in order: for readers that measure the stored
        JSON itself (``run``'s triggers, :mod:`karni_historian.condense.trigger_facts`).
        """
        rows: Iterator[tuple[int, str, str]] = self.connection.execute(
            "SELECT ordinal, role, parts_json FROM raw_messages"
            " WHERE session_id = ? AND ordinal >= ? ORDER BY ordinal",
            (session_id, start),
        )
        return rows

    def stored_messages(
        self, session_id: str, start: int
    ) -> Iterator[tuple[int, str, str, str | None]]:
        """``(ordinal, role, parts_json, timestamp)`` of the session's messages from ``start`` on.

        Undecoded, in order, through a cursor: for readers that decode only
        the rows they need (the files' notes' outline,
        :mod:`karni_historian.condense.file_notes.outline`).
        """
        rows: Iterator[tuple[int, str, str, str | None]] = self.connection.execute(
            "SELECT ordinal, role, parts_json, timestamp FROM raw_messages"
            " WHERE session_id = ? AND ordinal >= ? ORDER BY ordinal",
            (session_id, start),
        )
        return rows

    def parts_reader(self, session_id: str) -> Callable[[int], str | None]:
        """A reader of the stored parts JSON of the session's message at an ordinal (None: none)."""
        execute = self.connection.execute

        def parts_at(ordinal: int) -> str | None:
            row = execute(
                "SELECT parts_json FROM raw_messages WHERE session_id = ? AND ordinal = ?",
                (session_id, ordinal),
            ).fetchone()
            return row[0] if row else None

        return parts_at

    def tool_part_calls(self, session_id: str, start: int = 1) -> Iterator[tuple[int, str, str]]:
        """``(ordinal, role, call_id)`` of every tool part with a call id, from ``start`` on.

        In message and part order (what tool arcs are computed from), read
        from ``tool_parts``, not from the messages' JSON.
        """
        rows: Iterator[tuple[int, str, str]] = self.connection.execute(
            "SELECT ordinal, role, call_id FROM tool_parts WHERE session_id = ? AND ordinal >= ?"
            " ORDER BY ordinal, position",
            (session_id, start),
        )
        return rows

    def messages_mentioning(
        self, session_id: str, needle: str, start: int, end: int
    ) -> Iterator[Message]:
        """The messages of ``start``-``end`` whose stored parts contain ``needle``, in order."""
        rows = self.connection.execute(
            "SELECT ordinal, role, parts_json, timestamp, message_id FROM raw_messages"
            " WHERE session_id = ? AND ordinal >= ? AND ordinal <= ? AND instr(parts_json, ?) > 0"
            " ORDER BY ordinal",
            (session_id, start, end, needle),
        )
        return _messages(session_id, rows, None, self.parts_reader(session_id))

    def record_calls(self, calls: Sequence[tuple[str, str, int]]) -> None:
        """Remember which message made each call, from ``(session_id, call_id, ordinal)`` rows.

        The first message to make a call wins; one statement for all the rows.
        """
        self.connection.executemany(
            "INSERT OR IGNORE INTO tool_calls (session_id, call_id, ordinal) VALUES (?, ?, ?)",
            calls,
        )

    def call_ordinal(self, session_id: str, call_id: str) -> int | None:
        """The ordinal of the message that made the call, or None."""
        row = self.connection.execute(
            "SELECT ordinal FROM tool_calls WHERE session_id = ? AND call_id = ?",
            (session_id, call_id),
        ).fetchone()
        return int(row[0]) if row else None

    def add_file(self, session_id: str, ordinal: int, path: str, action: str) -> None:
        """Record that a tool call of the message touched ``path`` (project-relative POSIX)."""
        self.connection.execute(
            "INSERT OR IGNORE INTO message_files (session_id, ordinal, path, action)"
            " VALUES (?, ?, ?, ?)",
            (session_id, ordinal, path, action),
        )

    def add_files(self, rows: Sequence[tuple[str, int, str, str]]) -> None:
        """:meth:`add_file` for ``(session_id, ordinal, path, action)`` rows, in one statement."""
        self.connection.executemany(
            "INSERT OR IGNORE INTO message_files (session_id, ordinal, path, action)"
            " VALUES (?, ?, ?, ?)",
            rows,
        )

    def files(self, session_id: str, ordinal: int) -> list[tuple[str, str]]:
        """``(path, action)`` pairs the message touched, sorted."""
        return self.connection.execute(
            "SELECT path, action FROM message_files WHERE session_id = ? AND ordinal = ?"
            " ORDER BY path, action",
            (session_id, ordinal),
        ).fetchall()

    def touching(self, path: str) -> list[tuple[str, int]]:
        """``(session_id, ordinal)`` of the messages that touched ``path`` or a file under it."""
        prefix = path.rstrip("/") + "/"
        return self.connection.execute(
            "SELECT DISTINCT session_id, ordinal FROM message_files"
            " WHERE path = ? OR substr(path, 1, ?) = ? ORDER BY session_id, ordinal",
            (path, len(prefix), prefix),
        ).fetchall()


def _messages(
    session_id: str,
    rows: Iterable[Sequence[Any]],
    tool_input: Callable[[Any], Any] | None = None,
    parts_at: Callable[[int], str | None] | None = None,
) -> Iterator[Message]:
    """Model messages from ``(ordinal, role, parts_json, timestamp, message_id)`` rows.

    A tool result stored as a reference to its call (``copy_of``, see
    :mod:`karni_historian.store.codec`) gets the call's part: the part of an
    assistant message the rows held before it, or else the one
    ``parts_at(ordinal)`` reads (the parts JSON of another message).
    """
    # bench row "karni-historian brief FILE" runs without it
    from karni_historian.model import Message, ToolPart

    calls: dict[str, tuple[int, ToolPart]] = {}
    plain = parts_decoder(tool_input)  # for a call read apart: its references stay unresolved

    def resolve(ordinal: int, call_id: str) -> ToolPart | None:
        known = calls.get(call_id)
        if known is not None and known[0] == ordinal:
            return known[1]
        parts_json = parts_at(ordinal) if parts_at is not None else None
        if parts_json is None:
            return None
        for part in plain(parts_json):
            if type(part) is ToolPart and part.call_id == call_id:
                return part
        return None

    decode = parts_decoder(tool_input, resolve)
    for ordinal, role, parts_json, timestamp, message_id in rows:
        parts = decode(parts_json)
        if role == "assistant":
            for part in parts:
                if type(part) is ToolPart and part.call_id:
                    if len(calls) >= _CALLS_REMEMBERED:
                        calls.clear()
                    calls[part.call_id] = (ordinal, part)
        yield Message(ordinal, role, parts, session_id, timestamp, message_id)


def tool_part_rows(
    ordinal: int, role: str, parts: Sequence[dict[str, Any]]
) -> list[tuple[int, int, str, str]] | None:
    """The ``tool_parts`` rows of a message whose stored parts are ``parts`` (plain objects).

    What :data:`~karni_historian.store.schema.TOOL_PARTS_OF_MESSAGES` reads
    from the JSON :func:`karni_historian.fastjson.dumps` writes of them (which
    spells every key as it is), for parts whose call ids are text or absent;
    None when one is anything else (the store then reads the rows from the
    JSON).
    """
    rows = []
    for position, part in enumerate(parts):
        if type(part) is dict and part.get("type") == "tool":
            call_id = part.get("call_id")
            if type(call_id) is str:
                if call_id:
                    rows.append((ordinal, position, role, call_id))
            elif call_id is not None:
                return None
    return rows
