"""The generic JSONL transcript format, for agents the historian has no reader for.

One message per line (the package README has the full specification)::

    {"session": "s-1", "role": "user", "text": "Rename total() to subtotal()",
     "timestamp": "2026-03-02T10:15:00Z"}
    {"session": "s-1", "role": "assistant", "text": "Renamed it.",
     "tools": [{"name": "Edit", "input": {"file_path": "cart.py"}, "output": "ok",
                "files": ["cart.py", {"path": "README.md", "action": "read"}]}]}

``session`` and ``role`` (``user``, ``assistant`` or ``system``) are required;
``text``, ``tools``, ``timestamp``, ``id`` (a unique id that makes re-reading
a rewritten file idempotent) and ``title`` (names the session) are optional.
A tool has ``name`` (required), ``input``, ``output``, ``error`` (true when the
call failed), ``id`` and ``files``: paths relative to the project root (or
absolute inside it), each a string (edited) or ``{"path", "action"}`` with
``action`` one of ``read``, ``edit``, ``create``.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.sink import Sink

__all__ = ["KIND", "GenericReader", "sniff"]

KIND = "generic"
_ROLES = frozenset({"user", "assistant", "system"})
_ACTIONS = frozenset({"read", "edit", "create"})


def sniff(record: dict[str, Any]) -> bool:
    """Whether a parsed line looks like a generic-format message."""
    return "session" in record and "role" in record and "v" not in record


class GenericReader:
    """Turns the lines of one generic JSONL file into messages."""

    kind = KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the file at ``path``."""
        self.sink = sink
        self.path = path

    def feed(self, record: dict[str, Any], offset: int = 0) -> None:
        """Take one parsed line (``offset`` is where it starts, its fallback identity)."""
        session_id, role, text, tools = _checked(record)
        record_id = record.get("id")
        key = f"generic:{session_id}:{record_id}" if record_id else f"generic@{self.path}:{offset}"
        if not self.sink.first_sighting(key):
            return
        writer = self.sink.session(session_id, KIND)
        if isinstance(record.get("title"), str):
            self.sink.store.set_title(session_id, record["title"], 4)
        parts = [{"type": "text", "text": text}] if text else []
        parts += [_tool_part(tool) for tool in tools]
        if not parts:
            return
        timestamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        ordinal = writer.append(role, parts, timestamp, str(record_id) if record_id else "")
        for tool in tools:
            for path, action in self._touched(tool):
                writer.add_file(ordinal, path, action)
        if role == "user" and text:
            writer.title_with(text)

    def _touched(self, tool: dict[str, Any]) -> list[tuple[str, str]]:
        """The tool's ``files`` inside the project, as ``(path, action)``."""
        touched: list[tuple[str, str]] = []
        for item in tool.get("files") or ():
            path, action = (item, "edit") if isinstance(item, str) else _file(item)
            relative = self.sink.relative(path) if path else None
            if relative and action in _ACTIONS:
                touched.append((relative, action))
        return touched


def _checked(record: dict[str, Any]) -> tuple[str, str, str | None, list[dict[str, Any]]]:
    """``(session, role, text, tools)`` of a line, or ValueError naming what is wrong."""
    session_id = record.get("session")
    role = record.get("role")
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError("a generic line without a `session` string")
    if not isinstance(role, str) or role not in _ROLES:
        raise ValueError(f"a generic line with role {role!r}; use user, assistant or system")
    text = record.get("text")
    if text is not None and not isinstance(text, str):
        raise ValueError("a generic line whose `text` is not a string")
    tools = record.get("tools") or []
    if not isinstance(tools, list) or not all(
        isinstance(tool, dict) and isinstance(tool.get("name"), str) for tool in tools
    ):
        raise ValueError("a generic line whose `tools` is not a list of {name, …} objects")
    return session_id, role, text, tools


def _tool_part(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool of the line as a stored tool part."""
    part: dict[str, Any] = {"type": "tool", "name": tool["name"], "input": tool.get("input")}
    output = tool.get("output")
    if output is not None:
        part["output"] = output if isinstance(output, str) else _compact(output)
    if isinstance(tool.get("id"), str):
        part["call_id"] = tool["id"]
    if tool.get("error") is True:
        part["is_error"] = True
    return part


def _file(item: Any) -> tuple[str | None, str]:
    if isinstance(item, dict) and isinstance(item.get("path"), str):
        action = item.get("action", "edit")
        return item["path"], action if isinstance(action, str) else ""
    return None, ""


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
