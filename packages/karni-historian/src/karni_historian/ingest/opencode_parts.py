"""One OpenCode message and its parts, as the historian stores them.

OpenCode keeps a message's content in parts: ``text`` (``synthetic`` or
``ignored`` text was written by OpenCode, not the person), ``tool`` (the call,
its state, and its output once ``completed`` or its ``error``), ``patch`` (the
files a step changed, edits made through the shell included) and bookkeeping
parts (``step-start``, ``step-finish``, ``snapshot``, ``reasoning``, ``file``,
…) that are skipped. A tool result lives in its call's part, so an assistant
message carries its calls with their outputs; there is no separate result
message.

The files a call touched come from its input (``filePath``, or ``path`` in
newer builds, resolved against the session folder) and, for ``apply_patch``,
from the files its metadata lists or its patch text names.
"""

from __future__ import annotations

import json
import re

from karni_historian.ingest.sink import call_part

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Converted", "convert", "is_final"]

_PATCH_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_PATCH_ACTIONS = {"add": "create", "update": "edit", "delete": "edit", "move": "edit"}
_EDIT_TOOLS = frozenset({"edit", "multiedit"})
_PATCH_TOOLS = frozenset({"apply_patch", "patch"})
_FINAL = frozenset({"completed", "error"})


class Converted:
    """What one OpenCode message becomes.

    Attributes:
        role: ``user`` or ``assistant``.
        parts: The stored parts, in order.
        files: ``(path as recorded, action)`` of the files its calls touched.
        children: ``(call id, child session id)`` of the ``task`` calls it made.
    """

    __slots__ = ("children", "files", "parts", "role")

    def __init__(self, role: str) -> None:
        """An empty message of ``role``."""
        self.role = role
        self.parts: list[dict[str, Any]] = []
        self.files: list[tuple[str, str]] = []
        self.children: list[tuple[str, str]] = []


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def is_final(info: dict[str, Any]) -> bool:
    """Whether a message will not change any more (an answer step has completed or failed)."""
    if info.get("role") != "assistant":
        return True
    time = info.get("time")
    completed = isinstance(time, dict) and time.get("completed") is not None
    return completed or info.get("error") is not None


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _tool_part(data: dict[str, Any], owner: str | None) -> dict[str, Any]:
    state = _object(data.get("state"))
    status = state.get("status")
    part = call_part(data["tool"], state.get("input"), data.get("callID"))
    result = state.get("output") if status == "completed" else state.get("error")
    if status in _FINAL and result is not None:
        part["output"] = result if isinstance(result, str) else _compact(result)
    if status == "error":
        part["is_error"] = True
    if owner is not None:
        part["metadata"] = {"subagent": owner}
    return part


def _patch_files(state: dict[str, Any]) -> list[tuple[str, str]]:
    metadata = _object(state.get("metadata"))
    listed = metadata.get("files")
    found: list[tuple[str, str]] = []
    for item in listed if isinstance(listed, list) else ():
        if not isinstance(item, dict):
            continue
        raw = item.get("filePath") or item.get("relativePath")
        action = _PATCH_ACTIONS.get(str(item.get("type")), "edit")
        if isinstance(raw, str):
            found.append((raw, action))
        if isinstance(item.get("movePath"), str):
            found.append((item["movePath"], "create"))
    if found:
        return found
    tool_input = _object(state.get("input"))
    text = tool_input.get("patchText") or tool_input.get("patch")
    for match in _PATCH_HEADER.finditer(text if isinstance(text, str) else ""):
        kind, path, moved = match.groups()
        if moved:
            found.append((moved.strip(), "create"))
        else:
            found.append((path.strip(), "create" if kind == "Add" else "edit"))
    return found


def _call_files(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The files a completed call worked on, with how."""
    state = _object(data.get("state"))
    if state.get("status") != "completed":
        return []
    name = data["tool"]
    if name in _PATCH_TOOLS:
        return _patch_files(state)
    tool_input = _object(state.get("input"))
    raw = tool_input.get("filePath") or tool_input.get("path")
    if not isinstance(raw, str):
        return []
    if name == "read":
        return [(raw, "read")]
    if name == "write":
        metadata = _object(state.get("metadata"))
        return [(raw, "create" if metadata.get("exists") is False else "edit")]
    return [(raw, "edit")] if name in _EDIT_TOOLS else []


def _child_session(data: dict[str, Any]) -> str | None:
    state = _object(data.get("state"))
    metadata = _object(state.get("metadata"))
    child = metadata.get("sessionId") or metadata.get("sessionID")
    return child if isinstance(child, str) and child else None


def _text_part(data: dict[str, Any], human: bool) -> dict[str, Any] | None:
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    part: dict[str, Any] = {"type": "text", "text": text}
    if not human or data.get("synthetic") is True or data.get("ignored") is True:
        part["ignored"] = True
    return part


def convert(
    info: dict[str, Any], parts: list[dict[str, Any]], owner: str | None
) -> Converted | None:
    """The stored form of one message, or None when it holds nothing to keep.

    Args:
        info: The message's info object.
        parts: Its parts, in order.
        owner: For a subagent's message, the ``task`` call that started it;
            its user messages (written by the parent model) are not kept.
    """
    role = info.get("role")
    if role not in ("user", "assistant") or info.get("summary") is True:
        return None
    if role == "user" and owner is not None:
        return None
    converted = Converted(str(role))
    add = converted.parts.append
    for data in parts:
        kind = data.get("type")
        if kind == "text":
            text = _text_part(data, role == "user")
            if text is not None:
                add(text)
        elif kind == "tool" and isinstance(data.get("tool"), str) and role == "assistant":
            add(_tool_part(data, owner))
            converted.files.extend(_call_files(data))
            child = _child_session(data)
            if data["tool"] == "task" and child and data.get("callID"):
                converted.children.append((str(data["callID"]), child))
        elif kind == "patch" and isinstance(data.get("files"), list):
            converted.files.extend((p, "edit") for p in data["files"] if isinstance(p, str))
    return converted if converted.parts else None
