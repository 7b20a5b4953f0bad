r"""OpenAI Codex CLI rollout files: where they are and how their records become messages.

Codex writes one JSONL "rollout" per session under ``$CODEX_HOME`` (default
``~/.codex``), in ``sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl``;
``codex archive`` moves a rollout to ``archived_sessions/``. A session
belongs to the project when the working directory its first record names lies
in the project (``docs/historian/harnesses.md``).

Two layouts are read. Since mid 2025 every line is ``{"timestamp", "type",
"payload"}`` with ``type`` one of ``session_meta`` (the session's id and
``cwd``), ``turn_context``, ``response_item`` (the model's messages, calls and
their outputs), ``event_msg`` (what the harness saw: the typed prompt
``user_message``, ``patch_apply_end`` with the files a patch changed) and
``compacted``. Earlier rollouts open with a bare header (``{"id",
"timestamp", "instructions"}``) followed by bare response items and
``{"record_type": "state"}`` markers, and record no typed prompt apart from
the user's messages.

Shell calls (``shell``, ``shell_command``, ``exec_command``,
``local_shell_call``) are stored as ``shell`` calls whose input holds the
command as one string, and patches (``apply_patch`` as a free-form or JSON
call, or through the shell) as ``apply_patch`` calls holding the patch, the
harness's own tool name kept in ``metadata.tool``; their outputs lose the
harness's envelope (exit code, wall time), and a non-zero exit code marks
the call as failed. The files of a patch come from ``patch_apply_end`` (or
the "Success. Updated the following files" output of versions that record
no event); a patch that failed changes none.

A forked session (``/fork``, an edited earlier prompt, or a subagent that
``spawn_agent`` started) opens with a copy of its parent's records, after a
second ``session_meta`` naming the parent: that copy is skipped (the parent's
own file has it) until the fork's first own turn. A subagent's own work goes
to its parent session, each call marked with the ``spawn_agent`` call that
started it, and its task (written by the parent model) is not a prompt.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime

from karni.agent.common.paths import project_relative

from karni_historian.fastjson import dumps
from karni_historian.ingest.codex_calls import (
    PATCH_BEGIN,
    PATCH_END,
    convert_call,
    listed_files,
    shell_result,
    texts_of,
)
from karni_historian.ingest.sink import call_part

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.sink import SessionWriter, Sink

__all__ = ["KIND", "CodexReader", "codex_home", "find_files", "read_meta", "sniff"]

KIND = "codex"

_HEADER_LIMIT = 4 << 20
_SCAN_LINES = 40
_MAX_FILES = 50_000
_ENVELOPE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
)
_REPLAY_GAP_SECONDS = 1.0
_FILE_ACTIONS = {"add": "create", "update": "edit", "delete": "edit"}


def codex_home() -> str:
    """Codex's folder: ``$CODEX_HOME`` or ``~/.codex``."""
    configured = os.environ.get("CODEX_HOME")
    return os.path.expanduser(configured) if configured else os.path.expanduser("~/.codex")


def _rollouts(folder: str, depth: int) -> list[str]:
    found: list[str] = []
    for directory, subdirectories, names in os.walk(folder):
        level = directory[len(folder) :].count(os.sep)
        subdirectories[:] = sorted(subdirectories) if level < depth else []
        found.extend(
            os.path.join(directory, name)
            for name in sorted(names)
            if name.startswith("rollout-") and name.endswith(".jsonl")
        )
        if len(found) >= _MAX_FILES:
            break
    return found


def read_meta(path: str) -> dict[str, Any] | None:
    """The session facts of a rollout: ``id``, ``cwd``, ``legacy``, ``parent``, ``forked_from``.

    None when the file does not start like a rollout. The ``cwd`` of an early
    rollout whose header has none comes from its ``<environment_context>``.
    """
    try:
        with open(path, "rb") as handle:
            first = handle.readline(_HEADER_LIMIT)
            record = json.loads(first.lstrip(b"\x00"))
            if not isinstance(record, dict):
                return None
            if record.get("type") == "session_meta" and isinstance(record.get("payload"), dict):
                return _meta_facts(record["payload"], legacy=False)
            if not _legacy_header(record):
                return None
            facts = _meta_facts(record, legacy=True)
            for _ in range(_SCAN_LINES):
                if facts["cwd"]:
                    break
                line = handle.readline(_HEADER_LIMIT)
                if not line:
                    break
                facts["cwd"] = _environment_cwd(line.decode("utf-8", "replace"))
            return facts
    except (OSError, ValueError):
        return None


def _meta_facts(payload: dict[str, Any], *, legacy: bool) -> dict[str, Any]:
    source = payload.get("source")
    spawn = source.get("subagent") if isinstance(source, dict) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return {
        "id": _string(payload.get("id")),
        "cwd": _string(payload.get("cwd")),
        "legacy": legacy,
        "parent": _string(parent),
        "forked_from": _string(payload.get("forked_from_id")),
        "timestamp": _string(payload.get("timestamp")),
    }


def _legacy_header(record: dict[str, Any]) -> bool:
    return (
        "type" not in record
        and isinstance(record.get("id"), str)
        and isinstance(record.get("timestamp"), str)
        and ("instructions" in record or "git" in record or "originator" in record)
    )


def _environment_cwd(text: str) -> str | None:
    start = text.find("<cwd>")
    end = text.find("</cwd>", start + 5)
    if start < 0 or end < 0:
        return None

    try:  # the tag sits inside a JSON string: undo its escapes
        value = json.loads('"' + text[start + 5 : end] + '"')
    except ValueError:
        value = text[start + 5 : end]
    return value.strip() if isinstance(value, str) and value.strip() else None


def find_files(root: str) -> list[str]:
    """The project's rollout files (sessions and archived ones), sorted by name."""
    home = codex_home()
    candidates = _rollouts(os.path.join(home, "sessions"), 3)
    candidates += _rollouts(os.path.join(home, "archived_sessions"), 0)
    found = []
    for path in candidates:
        meta = read_meta(path)
        cwd = meta.get("cwd") if meta else None
        if cwd and project_relative(root, cwd) is not None:
            found.append(path)
    return sorted(found, key=os.path.basename)


def sniff(record: dict[str, Any]) -> bool:
    """Whether a parsed line looks like a Codex rollout record (either layout)."""
    kind = record.get("type")
    if kind in _ENVELOPE_TYPES and isinstance(record.get("payload"), dict):
        return True
    return record.get("record_type") == "state" or _legacy_header(record)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _uuid7_millis(value: str | None) -> int | None:
    """The creation time (ms) of a version-7 UUID, else None."""
    if not value or len(value) != 36 or value[14] != "7":
        return None
    try:
        return int(value[:8] + value[9:13], 16)
    except ValueError:
        return None


def _seconds(stamp: str | None) -> float | None:
    if not stamp:
        return None

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class CodexReader:
    """Turns the records of one Codex rollout file into messages."""

    kind = KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the rollout at ``path``; its first record names the session."""
        self.sink = sink
        self.path = path
        meta = read_meta(path) or {}
        stem = os.path.splitext(os.path.basename(path))[0]
        self.own_id: str = meta.get("id") or stem[-36:]
        self.cwd: str | None = meta.get("cwd")
        self.legacy = bool(meta.get("legacy"))
        self.stamp: str | None = meta.get("timestamp")
        parent = meta.get("parent")
        self.session_id = parent or self.own_id
        self.subagent = parent is not None
        self.owner: str | None = None
        if self.subagent:
            self.owner = sink.agent_calls.get(f"codex:{self.own_id}") or self.own_id
        self._writer: SessionWriter | None = None
        self._replay = False
        self._last_seconds: float | None = None
        self._keys: dict[int, str] = {}

    def writer(self) -> SessionWriter:
        """The session's writer, created on first use."""
        if self._writer is None:
            self._writer = self.sink.session(self.session_id, KIND, self.cwd)
        return self._writer

    # -- records --

    def prefetch(self, records: list[dict[str, Any]]) -> None:
        """Look up in one query which records of a group were imported before."""
        keys = []
        self._keys = {}
        for record in records:
            if _keeps(record):
                key = "codex:" + hashlib.sha256(dumps(record).encode()).hexdigest()[:40]
                self._keys[id(record)] = key
                keys.append(key)
        self.sink.prefetch_seen(keys)

    def feed(self, record: dict[str, Any]) -> None:
        """Take one parsed line."""
        kind = record.get("type")
        payload = record.get("payload")
        stamp = _string(record.get("timestamp"))
        if (kind not in _ENVELOPE_TYPES and kind != "compacted") or not isinstance(payload, dict):
            if "record_type" in record or _legacy_header(record) or "payload" in record:
                return
            kind, payload, stamp = "response_item", record, stamp or self.stamp
        else:
            stamp = stamp or self.stamp
        self._follow_replay(kind, payload, stamp)
        if self._replay or kind == "session_meta":
            return
        if kind == "turn_context":
            self.cwd = _string(payload.get("cwd")) or self.cwd
            return
        if _keeps(record):
            key = self._keys.pop(id(record), None)
            if key is None:
                key = "codex:" + hashlib.sha256(dumps(record).encode()).hexdigest()[:40]
            if not self.sink.first_sighting(key):
                return
        if kind == "event_msg":
            self._event(payload, stamp)
        elif kind == "response_item":
            self._item(payload, stamp)

    def _follow_replay(self, kind: Any, payload: dict[str, Any], stamp: str | None) -> None:
        """Track the copy of a parent's records at the head of a fork (see the module doc)."""
        seconds = _seconds(stamp)
        previous, self._last_seconds = self._last_seconds, seconds
        if kind == "session_meta":
            meta_id = _string(payload.get("id"))
            if meta_id and meta_id != self.own_id:
                self._replay = True  # the parent's records follow
            elif meta_id == self.own_id and self._replay:
                self._replay = False  # Codex re-states the fork's own meta at its first turn
            return
        if not self._replay:
            return
        own = _uuid7_millis(self.own_id)
        turn = payload.get("turn_id") if kind in ("turn_context", "event_msg") else None
        started = _uuid7_millis(turn if isinstance(turn, str) else None)
        if own is not None and started is not None:
            if started >= own:
                self._replay = False
        elif own is None and seconds is not None and previous is not None:
            # the copy is written at once; the first own turn comes later
            self._replay = seconds - previous <= _REPLAY_GAP_SECONDS

    # -- events --

    def _event(self, payload: dict[str, Any], stamp: str | None) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            message = payload.get("message")
            if isinstance(message, str):
                self._prompt(message, stamp)
        elif kind == "patch_apply_end":
            self._patch_applied(payload)
        elif kind == "thread_name_updated":
            name = payload.get("thread_name")
            if isinstance(name, str) and name.strip() and not self.subagent:
                self.writer()
                self.sink.store.set_title(self.session_id, name, 4)
        elif kind in ("sub_agent_activity", "item_completed"):
            item = payload.get("item") if kind == "item_completed" else payload
            if isinstance(item, dict):
                call, child = item.get("event_id") or item.get("id"), item.get("agent_thread_id")
                if isinstance(call, str) and isinstance(child, str):
                    self.sink.agent_calls[f"codex:{child}"] = call

    def _prompt(self, text: str, stamp: str | None) -> None:
        if not text.strip():
            return
        part: dict[str, Any] = {"type": "text", "text": text}
        if self.subagent:
            part["ignored"] = True  # the task the parent model wrote
        writer = self.writer()
        writer.append("user", [part], stamp)
        if not self.subagent:
            writer.title_with(text)

    def _patch_applied(self, payload: dict[str, Any]) -> None:
        """A patch finished: the files it changed, or the call's failure."""
        call_id = _string(payload.get("call_id")) or ""
        writer = self.writer()
        found = writer.call(call_id) if call_id else None
        if payload.get("success") is False or payload.get("status") in ("failed", "declined"):
            if found is not None and not found[1].get("is_error"):
                found[1]["is_error"] = True
                writer.extend(found[0], [])
            return
        changes = payload.get("changes")
        changes = changes if isinstance(changes, dict) else {}
        ordinal = found[0] if found else self._patch_without_call(call_id, changes, payload)
        for path, change in changes.items():
            kind = change.get("type") if isinstance(change, dict) else None
            relative = self.sink.relative(path, self.cwd)
            writer.add_file(ordinal, relative, _FILE_ACTIONS.get(str(kind), "edit"))
            moved = change.get("move_path") if isinstance(change, dict) else None
            if isinstance(moved, str) and moved:
                writer.add_file(ordinal, self.sink.relative(moved, self.cwd), "create")

    def _patch_without_call(
        self, call_id: str, changes: dict[str, Any], payload: dict[str, Any]
    ) -> int:
        """A patch applied by a call this file does not hold (code mode): stored as its own call."""
        lines = []
        for path, change in changes.items():
            change = change if isinstance(change, dict) else {}
            kind = change.get("type")
            header = {"add": "Add", "delete": "Delete"}.get(str(kind), "Update")
            lines.append(f"*** {header} File: {path}")
            body = change.get("unified_diff") if kind == "update" else change.get("content")
            if isinstance(body, str):
                prefix = "" if kind == "update" else ("+" if kind == "add" else "-")
                lines += [prefix + line for line in body.splitlines()]
        part: dict[str, Any] = {
            "type": "tool",
            "name": "apply_patch",
            "input": {"patch": "\n".join([PATCH_BEGIN, *lines, PATCH_END])},
            "output": payload.get("stdout") if isinstance(payload.get("stdout"), str) else "",
            "metadata": {"tool": "patch_apply_end"},
        }
        if call_id:
            part["call_id"] = call_id
        if self.owner:
            part["metadata"]["subagent"] = self.owner
        writer = self.writer()
        ordinal = writer.append("assistant", [part], None)
        if call_id:
            writer.record_call(call_id, ordinal)
        return ordinal

    # -- response items --

    def _item(self, item: dict[str, Any], stamp: str | None) -> None:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            texts = [t for t in texts_of(item.get("content")) if t.strip()]
            if role == "assistant" and texts:
                parts = [{"type": "text", "text": text} for text in texts]
                self.writer().append("assistant", parts, stamp)
            elif role == "user" and self.legacy:
                for text in texts:
                    if not text.lstrip().startswith(_INJECTED):
                        self._prompt(text, stamp)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._call(item, stamp)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item, stamp)

    def _call(self, item: dict[str, Any], stamp: str | None) -> None:
        kind = item.get("type")
        call_id = item.get("call_id") or item.get("id")
        name: Any
        arguments: Any
        if kind == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            name, arguments = "local_shell", {"command": command}
        else:
            name = item.get("name")
            arguments = item.get("input") if kind == "custom_tool_call" else item.get("arguments")
        if not isinstance(name, str) or not name:
            return
        stored_name, stored_input = convert_call(name, arguments)
        if kind == "custom_tool_call" and stored_name != "apply_patch":
            stored_input = {"input": arguments} if isinstance(arguments, str) else arguments
        part = call_part(stored_name, stored_input, call_id)
        metadata: dict[str, Any] = {}
        if stored_name != name:
            metadata["tool"] = name
        if self.owner:
            metadata["subagent"] = self.owner
        if metadata:
            part["metadata"] = metadata
        writer = self.writer()
        ordinal = writer.append("assistant", [part], stamp)
        if part.get("call_id"):
            writer.record_call(part["call_id"], ordinal)

    def _output(self, item: dict[str, Any], stamp: str | None) -> None:
        call_id = _string(item.get("call_id")) or ""
        body, _, failed = shell_result(item.get("output"))
        writer = self.writer()
        part, found = writer.answer(call_id, body, failed)
        writer.append("user", [part], stamp)
        if found is None:
            return
        ordinal, call = found
        if call.get("name") == "apply_patch" and not failed:
            for path, action in listed_files(body):
                writer.add_file(ordinal, self.sink.relative(path, self.cwd), action)
        elif call.get("name") == "spawn_agent" and not failed:
            self._spawned(call_id, body)

    def _spawned(self, call_id: str, body: str) -> None:
        """``spawn_agent`` returned the new thread's id: its rollout's calls point here."""
        try:
            data = json.loads(body)
        except ValueError:
            return
        child = data.get("agent_id") if isinstance(data, dict) else None
        if isinstance(child, str) and child:
            self.sink.agent_calls[f"codex:{child}"] = call_id


def _keeps(record: dict[str, Any]) -> bool:
    """Whether a record may become (part of) a message, and so is deduplicated."""
    kind = record.get("type")
    payload = record.get("payload")
    if kind == "response_item" and isinstance(payload, dict):
        return payload.get("type") != "reasoning"
    if kind == "event_msg" and isinstance(payload, dict):
        return payload.get("type") in ("user_message", "patch_apply_end")
    return kind in _BARE_ITEMS


_BARE_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
    }
)
