r"""Pi session files: where they are and how their entries become messages.

Pi writes one JSONL file per session. The first line is a header
(``{"type": "session", "id", "cwd", "version"?}``); every other line is an
entry. By default the files live in ``<agent dir>/sessions/--<cwd>--/``, where
the agent dir is ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent`` and ``<cwd>`` is
X
and ``:`` replaced by ``-``. A session folder chosen with
``$PI_CODING_AGENT_SESSION_DIR`` or the ``sessionDir`` setting holds the files
directly. Either way the header's ``cwd`` decides which project a file belongs
to (``docs/historian/harnesses.md``).

Every format version is read: version 1 (a linear file whose entries have no
ids), 2 (entries form a tree) and 3 (``hookMessage`` renamed ``custom``).
``message`` entries become messages: ``user`` text is the prompt, ``assistant``
text and ``toolCall`` blocks its answer and calls, a ``toolResult`` is attached
to its call and kept as a user message carrying a copy of the call (as for
Claude Code), and a ``bashExecution`` (a command the user ran with ``!``) is a
user message holding that command as a call. A subagent run by an extension
writes no file of its own; its messages, returned in the result's
``details.results[].messages``, follow the result, marked with the call.
``session_info`` names the session. Thinking, images, extension entries,
model and thinking-level changes, labels, compaction and branch summaries are
skipped.

Pi rewrites a file when it migrates it to a newer version, giving version-1
entries new ids, and copies entries with their ids into a forked session. So
an entry is recognised by its content (entry time, role, message time, text
and call ids), never by its id: re-reading a migrated file or a fork adds
nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import os

from karni.agent.common.paths import project_relative

from karni_historian.ingest.reader import read_json_object
from karni_historian.ingest.sink import call_part, iso_from_millis

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.sink import SessionWriter, Sink
    from karni_historian.store import Store

__all__ = [
    "KIND",
    "PiReader",
    "agent_dir",
    "cursor_is_stale",
    "find_files",
    "folder_name",
    "read_header",
    "session_dirs",
    "sniff",
]

KIND = "pi"

_HEADER_LIMIT = 1 << 16
_WALK_DEPTH = 4
_WALK_FILES = 20_000
_EDIT_TOOLS = frozenset({"edit", "write"})
_SUBAGENT_DEPTH = 4


def agent_dir() -> str:
    """Pi's agent folder: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    return os.path.expanduser(configured) if configured else os.path.expanduser("~/.pi/agent")


def folder_name(cwd: str) -> str:
    """The folder Pi gives sessions started in ``cwd`` under ``sessions/``."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + stripped.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def _setting(path: str) -> str | None:
    """The ``sessionDir`` of a Pi ``settings.json``, resolved against its folder."""
    settings = read_json_object(path, _HEADER_LIMIT)
    value = settings.get("sessionDir") if isinstance(settings, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    return os.path.join(os.path.dirname(path), os.path.expanduser(value.strip()))


def session_dirs(root: str) -> tuple[str, list[str]]:
    """``(default sessions folder, explicitly chosen folders)`` for the project at ``root``.

    The explicit folders come from ``$PI_CODING_AGENT_SESSION_DIR`` and the
    ``sessionDir`` setting of the project (``.pi/settings.json``) and of the
    agent folder; all are read, since sessions written before a setting
    changed stay where they were.
    """
    agent = agent_dir()
    explicit: list[str] = []
    configured = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    candidates: list[str | None] = [os.path.expanduser(configured)] if configured else []
    candidates += [
        _setting(os.path.join(root, ".pi", "settings.json")),
        _setting(os.path.join(agent, "settings.json")),
    ]
    for folder in candidates:
        if folder and os.path.abspath(folder) not in explicit:
            explicit.append(os.path.abspath(folder))
    return os.path.join(agent, "sessions"), explicit


def read_header(path: str) -> dict[str, Any] | None:
    """The header of a Pi session file, or None when its first line is not one."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline(_HEADER_LIMIT)
    except OSError:
        return None
    try:
        record = json.loads(line.lstrip(b"\x00"))
    except ValueError:
        return None
    return record if isinstance(record, dict) and sniff(record) else None


def sniff(record: dict[str, Any]) -> bool:
    """Whether a parsed line is a Pi session header."""
    return (
        record.get("type") == "session"
        and isinstance(record.get("id"), str)
        and isinstance(record.get("cwd"), str)
    )


def _in_project(root: str, cwd: Any) -> bool:
    return isinstance(cwd, str) and bool(cwd) and project_relative(root, cwd) is not None


def _jsonl_files(folder: str, depth: int) -> list[str]:
    """The ``*.jsonl`` files under ``folder``, ``depth`` levels deep at most, bounded in count."""
    found: list[str] = []
    for directory, subdirectories, names in os.walk(folder):
        level = directory[len(folder) :].count(os.sep)
        subdirectories[:] = sorted(subdirectories) if level < depth else []
        found.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith(".jsonl"))
        if len(found) >= _WALK_FILES:
            break
    return found


def find_files(root: str) -> list[str]:
    """The Pi session files of the project at ``root`` (and its subfolders), sorted."""
    roots = {os.path.abspath(root), os.path.realpath(root)}
    default, explicit = session_dirs(root)
    candidates: list[str] = []
    try:
        names = sorted(os.listdir(default))
    except OSError:
        names = []
    prefixes = tuple(folder_name(path)[:-2] for path in sorted(roots))
    for name in names:
        if name.startswith(prefixes):
            candidates.extend(_jsonl_files(os.path.join(default, name), 0))
    for folder in explicit:
        candidates.extend(_jsonl_files(folder, _WALK_DEPTH))
    found: list[str] = []
    for path in candidates:
        header = read_header(path)
        if header is not None and _in_project(root, header.get("cwd")) and path not in found:
            found.append(path)
    return sorted(found)


def cursor_is_stale(store: Store, path: str) -> bool:
    """Whether the file's first line changed since it was last read.

    Pi rewrites a file in place when it migrates it to a newer format version,
    so a cursor into the old bytes is meaningless; the file is then read again
    from the start (its entries are deduplicated by content).
    """
    try:
        with open(path, "rb") as handle:
            head = handle.readline(_HEADER_LIMIT)
    except OSError:
        return False
    digest = hashlib.sha256(head).hexdigest()[:32]
    new_head = store.first_sighting(f"pi-head:{path}:{digest}")
    return new_head and store.cursor(path) is not None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def _content_key(entry: dict[str, Any], message: dict[str, Any]) -> str:
    """An entry's identity that survives Pi's migrations and forks (see the module doc)."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    calls = [
        block.get("id")
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "toolCall"
    ]
    identity = [
        entry.get("timestamp"),
        message.get("role"),
        message.get("timestamp"),
        message.get("toolCallId"),
        message.get("command"),
        _texts(content),
        calls,
    ]
    digest = hashlib.sha256(json.dumps(identity, ensure_ascii=False).encode()).hexdigest()
    return f"pi:{digest[:40]}"


def _timestamp(entry: dict[str, Any], message: dict[str, Any]) -> str | None:
    stamp = entry.get("timestamp")
    if isinstance(stamp, str):
        return stamp
    millis = message.get("timestamp")
    if isinstance(millis, (int, float)) and not isinstance(millis, bool):
        return iso_from_millis(millis)
    return None


class PiReader:
    """Turns the entries of one Pi session file into messages."""

    kind = KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the session stored at ``path``; its header names the session."""
        self.sink = sink
        header = read_header(path) or {}
        stem = os.path.splitext(os.path.basename(path))[0]
        session_id = header.get("id")
        self.session_id = session_id if isinstance(session_id, str) else stem.partition("_")[2]
        cwd = header.get("cwd")
        self.cwd = cwd if isinstance(cwd, str) else None
        self._writer: SessionWriter | None = None

    def writer(self) -> SessionWriter:
        """The session's writer, created on first use."""
        if self._writer is None:
            self._writer = self.sink.session(self.session_id or "pi-session", KIND, self.cwd)
        return self._writer

    def feed(self, record: dict[str, Any]) -> None:
        """Take one parsed line."""
        kind = record.get("type")
        if kind == "session_info":
            name = record.get("name")
            if isinstance(name, str) and name.strip():
                self.writer()
                self.sink.store.set_title(self.session_id, name, 4)
            return
        if kind != "message":
            return
        message = record.get("message")
        if not isinstance(message, dict):
            raise ValueError("a Pi message entry without a message object")
        role = message.get("role")
        handler = {
            "user": self._user,
            "assistant": self._assistant,
            "toolResult": self._tool_result,
            "bashExecution": self._bash,
        }.get(role if isinstance(role, str) else "")
        if handler is None or not self.sink.first_sighting(_content_key(record, message)):
            return
        handler(message, _timestamp(record, message))

    def _user(self, message: dict[str, Any], timestamp: str | None) -> None:
        texts = [text for text in _texts(message.get("content")) if text.strip()]
        if not texts:
            return
        writer = self.writer()
        writer.append("user", [{"type": "text", "text": text} for text in texts], timestamp)
        writer.title_with(texts[0])

    def _assistant(
        self, message: dict[str, Any], timestamp: str | None, owner: str | None = None
    ) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            raise ValueError("a Pi assistant message whose content is not a list")
        parts: list[dict[str, Any]] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                if block["text"].strip():
                    parts.append({"type": "text", "text": block["text"]})
            elif block.get("type") == "toolCall" and isinstance(block.get("name"), str):
                part = call_part(block["name"], block.get("arguments"), block.get("id"))
                if owner is not None:
                    part["metadata"] = {"subagent": owner}
                parts.append(part)
        if not parts:
            return
        writer = self.writer()
        ordinal = writer.append("assistant", parts, timestamp)
        for part in parts:
            if part.get("call_id"):
                writer.record_call(part["call_id"], ordinal)

    def _tool_result(self, message: dict[str, Any], timestamp: str | None, depth: int = 0) -> None:
        call_id = message.get("toolCallId")
        call_id = call_id if isinstance(call_id, str) else ""
        output = "\n".join(_texts(message.get("content")))
        is_error = message.get("isError") is True
        writer = self.writer()
        name = message.get("toolName")
        name = name if isinstance(name, str) else "tool"
        part, found = writer.answer(call_id, output, is_error, name)
        writer.append("user", [part], timestamp)
        if found is not None and not is_error:
            call = found[1]
            touched = self._file(call.get("name", part["name"]), call.get("input"))
            if touched is not None:
                writer.add_file(found[0], *touched)
        if call_id and depth < _SUBAGENT_DEPTH:
            self._subagent_messages(message.get("details"), call_id, timestamp, depth + 1)

    def _subagent_messages(
        self, details: Any, call_id: str, timestamp: str | None, depth: int
    ) -> None:
        """The work of subagents a tool ran, returned in ``details.results[].messages``.

        Pi's subagent extension runs child agents without a session file of
        their own; their answers and calls are stored after the call's result,
        marked with the call that ran them.
        """
        results = details.get("results") if isinstance(details, dict) else None
        for result in results if isinstance(results, list) else ():
            messages = result.get("messages") if isinstance(result, dict) else None
            for message in messages if isinstance(messages, list) else ():
                role = message.get("role") if isinstance(message, dict) else None
                if role == "assistant" and isinstance(message.get("content"), list):
                    self._assistant(message, timestamp, owner=call_id)
                elif role == "toolResult":
                    self._tool_result(message, timestamp, depth)

    def _file(self, name: str, arguments: Any) -> tuple[str, str] | None:
        """The project file a successful built-in call worked on, with how."""
        if not isinstance(arguments, dict) or not isinstance(arguments.get("path"), str):
            return None
        path = self.sink.relative(arguments["path"], self.cwd)
        if path is None:
            return None
        if name == "read":
            return path, "read"
        return (path, "edit") if name in _EDIT_TOOLS else None

    def _bash(self, message: dict[str, Any], timestamp: str | None) -> None:
        command = message.get("command")
        if not isinstance(command, str) or not command.strip():
            return
        output = message.get("output")
        part: dict[str, Any] = {
            "type": "tool",
            "name": "bash",
            "input": {"command": command},
            "output": output if isinstance(output, str) else "",
            "metadata": {"run_by": "user"},
        }
        exit_code = message.get("exitCode")
        if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0:
            part["is_error"] = True
        self.writer().append("user", [part], timestamp)
