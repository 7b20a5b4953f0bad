"""Where transcript readers put what they read: sessions of raw messages.

A reader turns each transcript record into message parts and hands them to a
:class:`SessionWriter`, which numbers messages 1, 2, … per session, merges
later blocks of the same response into their message, attaches tool results
to the call that asked for them and records the files each call touched. It
keeps the most recent messages in memory and writes them to the store on
:meth:`Sink.flush`, so a run costs one write per message, not one per line.
The ids a group of lines will ask about (record ids already imported, message
ids already stored) are looked up in one query per group
(:meth:`Sink.prefetch_seen`, :meth:`SessionWriter.prefetch_ids`), and what a
group learns (records seen, calls made, files touched) is written with the
messages, one statement per table.

Parts are plain JSON objects here (the stored form, see
:func:`karni_historian.store.parts_to_json`): ``{"type": "text", "text": …,
"ignored": true?}`` or ``{"type": "tool", "name": …, "input": …, "output": …?,
"call_id": …?, "is_error": true?, "metadata": …?}``, or, for a tool result whose
call holds it, ``{"type": "tool", "name": …, "call_id": …, "copy_of": ordinal}``
(:meth:`SessionWriter.answer`), written as compact JSON by
:func:`karni_historian.fastjson.dumps`.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from karni.agent.common.paths import project_relative

from karni_historian.fastjson import dumps
from karni_historian.store.messages import tool_part_rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from karni_historian.ingest.report import FileReport
    from karni_historian.store import CursorState, Store

__all__ = [
    "FILE_ACTIONS",
    "SessionWriter",
    "Sink",
    "call_part",
    "changed_file",
    "iso_from_millis",
]

FILE_ACTIONS = ("read", "edit", "create")
"""How a tool call touched a file."""

_CACHE_LIMIT = 512

_RELATIVE_CACHE_LIMIT = 4096
"""Paths remembered by :meth:`Sink.relative`; the cache starts over when full."""


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


class OtherProjectSession(Exception):
    """A session recorded in another project, read from a file named with ``--from``."""

    def __init__(self, cwd: str) -> None:
        """The session ran in ``cwd``, outside the project."""
        super().__init__(cwd)
        self.cwd = cwd


class Sink:
    """The sessions one ingest run writes to, with their unsaved messages."""

    def __init__(
        self,
        store: Store,
        root: str,
        read_side_file: Callable[[Sink, str, str], None] | None = None,
        *,
        other_projects: bool = True,
    ) -> None:
        """Create a sink writing to ``store`` for the project at ``root``.

        ``read_side_file(sink, path, kind)`` reads a file a transcript leads
        to (a subagent's) within the same run; the run passes it, so a reader
        reaches it without importing the run. With ``other_projects`` false, a
        session whose recorded working folder lies outside the project raises
        :class:`OtherProjectSession`.
        """
        self.store = store
        self.read_side_file = read_side_file
        self.root = os.path.abspath(root)
        self.other_projects = other_projects
        self._writers: dict[str, SessionWriter] = {}
        self.messages_added = 0
        self.sessions_touched: set[str] = set()
        self.agent_calls: dict[str, str] = {}
        """Subagent file (real path) -> the Task call that started it, learnt this run."""
        self.side_reports: list[Any] = []
        """Reports of files read because another transcript led to them."""
        self._relative: dict[tuple[str, str | None], str | None] = {}
        self._seen: dict[str, bool] = {}
        """Record keys prefetched for the current group of lines -> whether already seen."""
        self._new_keys: list[str] = []

    def session(self, session_id: str, source: str, cwd: str | None = None) -> SessionWriter:
        """The writer of ``session_id``, creating the session when new."""
        writer = self._writers.get(session_id)
        if writer is None:
            if not self.other_projects and cwd and not self._in_project(cwd):
                raise OtherProjectSession(cwd)
            self.store.ensure_session(session_id, source, cwd=cwd)
            writer = SessionWriter(self, session_id)
            self._writers[session_id] = writer
        return writer

    def _in_project(self, cwd: str) -> bool:
        from karni.agent.common.paths import project_relative

        return project_relative(self.root, cwd) is not None

    def open_writer(self, session_id: str) -> SessionWriter | None:
        """The writer of ``session_id`` when this run has one already, else None."""
        return self._writers.get(session_id)

    def relative(self, path: str, cwd: str | None = None) -> str | None:
        """``path`` relative to the project root, POSIX, or None when outside it or the root.

        Args:
            path: An absolute path, or one relative to ``cwd`` (or the root).
            cwd: The directory the agent ran in, when known.
        """
        if not isinstance(path, str):
            return None
        key = (path, cwd)
        try:
            return self._relative[key]
        except KeyError:
            pass
        if len(self._relative) >= _RELATIVE_CACHE_LIMIT:
            self._relative.clear()  # agents touch a few files many times: keep memory flat
        found = self._resolve(path, cwd)
        self._relative[key] = found
        return found

    def _resolve(self, path: str, cwd: str | None) -> str | None:
        """:meth:`relative` without the cache: one look at the file system."""
        if not path.strip():
            return None
        relative = project_relative(self.root, path.strip(), cwd=cwd or self.root)
        return None if relative == "." else relative

    def prefetch_seen(self, keys: list[str]) -> None:
        """Look up in one query which of ``keys`` were imported before.

        :meth:`first_sighting` then answers them from memory until the next
        prefetch; other keys still ask the store.
        """
        self._write_seen()
        found = self.store.seen_among(keys)
        self._seen = {key: key in found for key in keys}

    def first_sighting(self, key: str) -> bool:
        """Record ``key``; True the first time it is seen, False after."""
        already = self._seen.get(key)
        if already is None:
            return self.store.first_sighting(key)
        if already:
            return False
        self._seen[key] = True
        self._new_keys.append(key)
        return True

    def _write_seen(self) -> None:
        if self._new_keys:
            self.store.add_seen(self._new_keys)
            self._new_keys = []

    def flush(self) -> None:
        """Write every changed message to the store (inside the caller's transaction)."""
        self._write_seen()
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
        self._absent: set[str] = set()
        """Message ids a prefetch found nowhere in the store (and not appended since)."""
        self._new_calls: list[tuple[str, str, int]] = []
        self._new_files: list[tuple[str, int, str, str]] = []
        self.titled = False

    def title_with(self, prompt: str) -> None:
        """Title the session with its first prompt, unless it is a harness command (``/model``)."""
        text = prompt.strip()
        if self.titled or not text or (text.startswith("/") and " " not in text):
            return
        self.titled = True
        self.store.set_title(self.session_id, text, 1)

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
            self._absent.discard(message_id)
        self.sink.messages_added += 1
        self.sink.sessions_touched.add(self.session_id)
        if len(self._cache) > _CACHE_LIMIT:
            self._evict()
        return ordinal

    def find(self, message_id: str) -> int | None:
        """The ordinal of the message with this provider id, or None."""
        ordinal = self._ids.get(message_id)
        if ordinal is None and self._in_store and message_id not in self._absent:
            ordinal = self.store.ordinal_of_message_id(self.session_id, message_id)
            if ordinal is not None:
                self._ids[message_id] = ordinal
        return ordinal

    def prefetch_ids(self, message_ids: set[str]) -> None:
        """Look up in one query the stored ordinals of the ids a group of lines will ask for."""
        if not self._in_store:
            return
        unknown = [key for key in message_ids if key and key not in self._ids]
        found = self.store.ordinals_of_message_ids(self.session_id, unknown)
        self._ids.update(found)
        self._absent = {key for key in unknown if key not in found}

    def extend(self, ordinal: int, parts: list[dict[str, Any]]) -> None:
        """Append parts to an existing message (a later block of the same response)."""
        pending = self._load(ordinal)
        if pending is None:
            return
        pending.parts.extend(parts)
        pending.dirty = True

    def replace(self, ordinal: int, parts: list[dict[str, Any]]) -> None:
        """Replace an existing message's parts (a harness that rewrites a message in place)."""
        pending = self._load(ordinal)
        if pending is None or pending.parts == parts:
            return
        pending.parts = parts
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
            self._new_calls.append((self.session_id, call_id, ordinal))

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

    def answer(
        self, call_id: str, output: str, is_error: bool, name: str = "tool"
    ) -> tuple[dict[str, Any], tuple[int, dict[str, Any]] | None]:
        """Attach a tool result to its call; return the part the result's message stores.

        Also returns ``(ordinal, call part)`` of the call, or None when the
        call is unknown. The call keeps the output of its first result, and
        that result's own message stores a reference to the call (its name,
        ``call_id`` and ``copy_of``: the call's ordinal) instead of a second
        copy of the input and output; the store reads it back as the call's
        part (:mod:`karni_historian.store.codec`). A result that finds no
        call, or a call already answered, is stored whole.
        """
        found = self.call(call_id) if call_id else None
        if found is None:
            return _whole_result(name, None, output, call_id, is_error, None), None
        ordinal, call = found
        name = call.get("name", name)
        if "output" in call:
            whole = _whole_result(name, call.get("input"), output, call_id, is_error, call)
            return whole, found
        call["output"] = output
        if is_error:
            call["is_error"] = True
        self._cache[ordinal].dirty = True
        return {"type": "tool", "name": name, "call_id": call_id, "copy_of": ordinal}, found

    def add_file(self, ordinal: int, path: str | None, action: str) -> None:
        """Record that the message's tool call touched ``path`` (already project-relative)."""
        if path:
            self._new_files.append((self.session_id, ordinal, path, action))

    # -- saving --

    def flush(self) -> None:
        """Write the changed messages to the store."""
        store = self.store
        new: list[tuple[int, str, str, str | None, str]] = []
        new_parts: list[tuple[int, int, str, str]] | None = []
        for ordinal in sorted(self._cache):
            pending = self._cache[ordinal]
            if not pending.dirty:
                continue
            parts_json = dumps(pending.parts)
            tool_parts = tool_part_rows(ordinal, pending.role, pending.parts)
            if pending.stored:
                store.write_message(
                    self.session_id, ordinal, pending.role, parts_json, tool_parts=tool_parts
                )
            else:
                new.append(
                    (ordinal, pending.role, parts_json, pending.timestamp, pending.message_id)
                )
                if tool_parts is None:
                    new_parts = None  # the store reads the rows of all the new messages
                elif new_parts is not None:
                    new_parts += tool_parts
                pending.stored = True
            pending.dirty = False
        store.insert_messages(self.session_id, new, new_parts)
        if self._new_calls:
            store.record_calls(self._new_calls)
            self._new_calls = []
        if self._new_files:
            store.add_files(self._new_files)
            self._new_files = []

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


def changed_file(
    sink: Sink, path: str, report: FileReport
) -> tuple[os.stat_result, CursorState | None] | None:
    """The file's ``stat`` and its stored cursor, when it changed since that cursor was stored.

    None when it is the same file, size and modification time as the cursor
    says (nothing to read), or cannot be read (``report.problem`` says why):
    the readers that take a whole file, or a file from its last turn, start here.
    """
    try:
        stat = os.stat(path)
    except OSError as error:
        report.problem = f"cannot read it: {error.strerror}"
        return None
    state = sink.store.cursor(path)
    if state is not None and (state.size, state.mtime_ns, state.inode) == (
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ino,
    ):
        return None
    return stat, state


def iso_from_millis(millis: float) -> str | None:
    """An epoch-milliseconds time as ISO 8601 UTC with milliseconds, or None when invalid."""
    try:
        moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _whole_result(
    name: str,
    tool_input: Any,
    output: str,
    call_id: str,
    is_error: bool,
    call: dict[str, Any] | None,
) -> dict[str, Any]:
    """The stored part of a tool result that holds its call's name, input and its output."""
    part: dict[str, Any] = {"type": "tool", "name": name, "input": tool_input, "output": output}
    if call is not None and call.get("metadata"):
        part["metadata"] = call["metadata"]
    if call_id:
        part["call_id"] = call_id
    if is_error:
        part["is_error"] = True
    return part


def call_part(name: str, tool_input: Any, call_id: Any) -> dict[str, Any]:
    """The stored part of a tool call; its output is attached when its result comes."""
    part: dict[str, Any] = {"type": "tool", "name": name, "input": tool_input}
    if isinstance(call_id, str) and call_id:
        part["call_id"] = call_id
    return part
