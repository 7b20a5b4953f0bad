"""Where transcript readers put what they read: sessions of raw messages.

A reader turns each transcript record into message parts and hands them to a
:class:`SessionWriter`, which numbers messages 1, 2, … per session, merges
later blocks of the same response into their message, attaches tool results
to the call that asked for them and records the files each call touched. It
keeps the most recent messages in memory and writes them to the store on
:meth:`Sink.flush`, so a run costs one write per message, not one per line.

Parts are plain JSON objects here (the stored form, see
:func:`karni_historian.store.parts_to_json`): ``{"type": "text", "text": …,
"ignored": true?}`` or ``{"type": "tool", "name": …, "input": …, "output": …?,
"call_id": …?, "is_error": true?}``.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.store import Store

__all__ = ["FILE_ACTIONS", "SessionWriter", "Sink"]

FILE_ACTIONS = ("read", "edit", "create")
"""How a tool call touched a file."""

_CACHE_LIMIT = 512


class _Pending:
    __slots__ = ("dirty", "message_id", "parts", "role", "stored", "timestamp")

    def __init__(
        self, role: str, parts: list[dict[str, Any]], timestamp: str | None, message_id: str
    ) -> None:
        self.role = role
        self.parts = parts
        self.timestamp = timestamp
        self.message_id = message_id
        self.dirty = True
        self.stored = False


class Sink:
    """The sessions one ingest run writes to, with their unsaved messages."""

    def __init__(self, store: Store, root: str) -> None:
        """Create a sink writing to ``store`` for the project at ``root``."""
        self.store = store
        self.root = os.path.abspath(root)
        self._writers: dict[str, SessionWriter] = {}
        self.messages_added = 0
        self.sessions_touched: set[str] = set()

    def session(self, session_id: str, source: str, cwd: str | None = None) -> SessionWriter:
        """The writer of ``session_id``, creating the session when new."""
        writer = self._writers.get(session_id)
        if writer is None:
            self.store.ensure_session(session_id, source, cwd=cwd)
            writer = SessionWriter(self, session_id)
            self._writers[session_id] = writer
        return writer

    def relative(self, path: str, cwd: str | None = None) -> str | None:
        """``path`` relative to the project root, POSIX, or None when outside it or the root.

        Args:
            path: An absolute path, or one relative to ``cwd`` (or the root).
            cwd: The directory the agent ran in, when known.
        """
        from karni.agent.common.paths import project_relative

        if not isinstance(path, str) or not path.strip():
            return None
        relative = project_relative(self.root, path.strip(), cwd=cwd or self.root)
        return None if relative == "." else relative

    def flush(self) -> None:
        """Write every changed message to the store (inside the caller's transaction)."""
        for writer in self._writers.values():
            writer.flush()


class SessionWriter:
    """Appends messages to one session and keeps the recent ones editable."""

    def __init__(self, sink: Sink, session_id: str) -> None:
        """Create the writer; numbering continues after the stored messages."""
        self.sink = sink
        self.store = sink.store
        self.session_id = session_id
        self.last_ordinal = self.store.message_count(session_id)
        # Lookups of ids that are not in memory go to the store once it holds any
        # message of the session: from before this run, or evicted during it.
        self._in_store = self.last_ordinal > 0
        self._cache: dict[int, _Pending] = {}
        self._ids: dict[str, int] = {}
        self._calls: dict[str, int] = {}
        self.titled = False

    # -- messages --

    def append(
        self,
        role: str,
        parts: list[dict[str, Any]],
        timestamp: str | None = None,
        message_id: str = "",
    ) -> int:
        """Add a message at the next ordinal and return the ordinal."""
        self.last_ordinal += 1
        ordinal = self.last_ordinal
        self._cache[ordinal] = _Pending(role, parts, timestamp, message_id)
        if message_id:
            self._ids[message_id] = ordinal
        self.sink.messages_added += 1
        self.sink.sessions_touched.add(self.session_id)
        if len(self._cache) > _CACHE_LIMIT:
            self._evict()
        return ordinal

    def find(self, message_id: str) -> int | None:
        """The ordinal of the message with this provider id, or None."""
        ordinal = self._ids.get(message_id)
        if ordinal is None and self._in_store:
            ordinal = self.store.ordinal_of_message_id(self.session_id, message_id)
            if ordinal is not None:
                self._ids[message_id] = ordinal
        return ordinal

    def extend(self, ordinal: int, parts: list[dict[str, Any]]) -> None:
        """Append parts to an existing message (a later block of the same response)."""
        pending = self._load(ordinal)
        if pending is None:
            return
        pending.parts.extend(parts)
        pending.dirty = True

    def _load(self, ordinal: int) -> _Pending | None:
        pending = self._cache.get(ordinal)
        if pending is None:
            row = self.store.raw_message(self.session_id, ordinal)
            if row is None:
                return None
            role, parts_json, timestamp, message_id = row
            pending = _Pending(role, json.loads(parts_json), timestamp, message_id)
            pending.dirty = False
            pending.stored = True
            self._cache[ordinal] = pending
        return pending

    # -- tool calls --

    def record_call(self, call_id: str, ordinal: int) -> None:
        """Remember that the message at ``ordinal`` made the call ``call_id``."""
        if call_id and call_id not in self._calls:
            self._calls[call_id] = ordinal
            self.store.record_call(self.session_id, call_id, ordinal)

    def call(self, call_id: str) -> tuple[int, dict[str, Any]] | None:
        """``(ordinal, part)`` of the tool call ``call_id``, or None when unknown."""
        ordinal = self._calls.get(call_id)
        if ordinal is None:
            if not self._in_store:
                return None
            ordinal = self.store.call_ordinal(self.session_id, call_id)
            if ordinal is None:
                return None
            self._calls[call_id] = ordinal
        pending = self._load(ordinal)
        if pending is None:
            return None
        for part in pending.parts:
            if part.get("type") == "tool" and part.get("call_id") == call_id:
                return ordinal, part
        return None

    def attach(
        self, call_id: str, output: str | None, is_error: bool
    ) -> tuple[int, dict[str, Any]] | None:
        """Attach a result to the call ``call_id``; return ``(ordinal, part)`` or None."""
        found = self.call(call_id)
        if found is None:
            return None
        ordinal, part = found
        part["output"] = output
        if is_error:
            part["is_error"] = True
        self._cache[ordinal].dirty = True
        return found

    def add_file(self, ordinal: int, path: str | None, action: str) -> None:
        """Record that the message's tool call touched ``path`` (already project-relative)."""
        if path:
            self.store.add_file(self.session_id, ordinal, path, action)

    # -- saving --

    def flush(self) -> None:
        """Write the changed messages to the store."""
        store = self.store
        dumps = json.dumps
        new: list[tuple[int, str, str, str | None, str]] = []
        for ordinal in sorted(self._cache):
            pending = self._cache[ordinal]
            if not pending.dirty:
                continue
            parts_json = dumps(pending.parts, ensure_ascii=False)
            if pending.stored:
                store.write_message(self.session_id, ordinal, pending.role, parts_json)
            else:
                new.append(
                    (ordinal, pending.role, parts_json, pending.timestamp, pending.message_id)
                )
                pending.stored = True
            pending.dirty = False
        store.insert_messages(self.session_id, new)

    def _evict(self) -> None:
        """Write everything, then forget the older half of the messages and their ids.

        The id maps shrink with the cache, so memory stays flat however long
        the session is; an evicted id is found again in the store.
        """
        self.flush()
        ordinals = sorted(self._cache)
        oldest_kept = ordinals[len(ordinals) // 2]
        for ordinal in ordinals[: len(ordinals) // 2]:
            del self._cache[ordinal]
        self._ids = {key: o for key, o in self._ids.items() if o >= oldest_kept}
        self._calls = {key: o for key, o in self._calls.items() if o >= oldest_kept}
        self._in_store = True
