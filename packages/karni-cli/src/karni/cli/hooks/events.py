"""Reading a harness's hook event: what happened, to which file, in which session.

Each harness names things its own way (Claude Code's ``tool_input.file_path``,
OpenCode's ``args.filePath``, Pi's ``input.path``, Gemini CLI's
``tool_input.file_path``, the file headers of Codex's ``apply_patch`` in
``tool_input.command``); :func:`read_event` turns the JSON on stdin into one
:class:`HookEvent`. The generated OpenCode plugin
and Pi extension send the host's own event objects plus ``cwd`` and the
session (see ``docs/hooks.md``).
"""

from __future__ import annotations

from karni.agent.common.jsontext import loads

__all__ = [
    "AFTER_EDIT_EVENTS",
    "AGENTS",
    "EDIT",
    "EVENTS",
    "SESSION_END",
    "SESSION_START",
    "EventError",
    "HookEvent",
    "edit_tools",
    "read_event",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EDIT = "edit"
"""The agent is about to change a file."""
SESSION_START = "session-start"
"""A session starts (or its context was reset): time for the project-level brief."""
SESSION_END = "session-end"
"""The agent finished (a turn or the whole session): time to feed the historian."""

EVENTS: dict[str, dict[str, str]] = {
    "claude-code": {
        "PreToolUse": EDIT,
        "SessionStart": SESSION_START,
        "Stop": SESSION_END,
        "SessionEnd": SESSION_END,
    },
    "opencode": {
        "tool.execute.before": EDIT,
        "experimental.chat.system.transform": SESSION_START,
        "session.idle": SESSION_END,
    },
    "pi": {
        "tool_call": EDIT,
        "before_agent_start": SESSION_START,
        "agent_end": SESSION_END,
        "session_shutdown": SESSION_END,
    },
    "codex": {
        "PreToolUse": EDIT,
        "PostToolUse": EDIT,
        "SessionStart": SESSION_START,
        "Stop": SESSION_END,
    },
    "gemini": {
        "BeforeTool": EDIT,
        "AfterTool": EDIT,
        "SessionStart": SESSION_START,
        "AfterAgent": SESSION_END,
        "SessionEnd": SESSION_END,
    },
}
"""Agent → the event names ``karni hook`` accepts → what Karni does for each."""

AGENTS = tuple(EVENTS)

AFTER_EDIT_EVENTS = frozenset({("codex", "PostToolUse"), ("gemini", "AfterTool")})
"""Events after an edit: where a harness that cannot add context before a call takes the brief."""

_EDIT_TOOLS: dict[str, tuple[str, frozenset[str], tuple[str, ...]]] = {
    # agent: (tool-name field, edit tools, where the file is: input field, then path keys)
    "claude-code": (
        "tool_name",
        frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"}),
        ("tool_input", "file_path", "notebook_path"),
    ),
    "opencode": ("tool", frozenset({"edit", "write", "multiedit"}), ("args", "filePath")),
    "pi": ("toolName", frozenset({"edit", "write"}), ("input", "path")),
    "codex": ("tool_name", frozenset({"apply_patch"}), ("tool_input", "command")),
    "gemini": ("tool_name", frozenset({"write_file", "replace"}), ("tool_input", "file_path")),
}

_SESSION_FIELDS = {
    "claude-code": "session_id",
    "opencode": "sessionID",
    "pi": "sessionId",
    "codex": "session_id",
    "gemini": "session_id",
}
_TRANSCRIPT_FIELDS = {
    "claude-code": "transcript_path",
    "pi": "sessionFile",
    "codex": "transcript_path",
    "gemini": "transcript_path",
}
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def edit_tools(agent: str) -> list[str]:
    """The names of ``agent``'s tools that change a file, sorted."""
    return sorted(_EDIT_TOOLS[agent][1])


class EventError(ValueError):
    """The event on stdin is not what the harness documents (not JSON, not an object)."""


class HookEvent:
    """One harness event, as Karni needs it."""

    __slots__ = ("agent", "cwd", "kind", "name", "path", "paths", "session", "source", "transcript")

    def __init__(self, agent: str, name: str, payload: dict[str, Any]) -> None:
        """Read ``payload`` (the event object) of ``agent``'s event ``name``."""
        self.agent = agent
        self.name = name
        self.kind = EVENTS[agent][name]
        self.cwd = _text(payload.get("cwd")) or _text(payload.get("directory"))
        self.session = _text(payload.get(_SESSION_FIELDS[agent]))
        self.transcript = _text(payload.get(_TRANSCRIPT_FIELDS.get(agent, "")))
        self.paths = _edited_files(agent, payload) if self.kind == EDIT else []
        """The files the call changes: one, or every file a Codex patch names."""
        self.path = self.paths[0] if self.paths else None
        self.source = _text(payload.get("source"))
        """Why a session started: ``startup``, ``resume``, ``clear``, ``compact``."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value and "\0" not in value else None


def _edited_files(agent: str, payload: dict[str, Any]) -> list[str]:
    tool_field, tools, (input_field, *keys) = _EDIT_TOOLS[agent]
    if payload.get(tool_field) not in tools:
        return []
    arguments = payload.get(input_field)
    if not isinstance(arguments, dict):
        return []
    if agent == "codex":
        return _patched_files(_text(arguments.get("command")) or "")
    for key in keys:
        path = _text(arguments.get(key))
        if path is not None:
            return [path]
    return []


def _patched_files(patch: str) -> list[str]:
    """The files a Codex patch names (``*** Update File: PATH`` and its kin), each once."""
    found: list[str] = []
    for line in patch.splitlines():
        for header in _PATCH_HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip()
                if path and "\0" not in path and path not in found:
                    found.append(path)
    return found


def read_event(agent: str, name: str, data: bytes) -> HookEvent:
    """The event ``name`` of ``agent`` from the JSON bytes ``data``.

    Raises:
        EventError: ``data`` is not a JSON object.
    """
    try:
        payload = loads(data.decode("utf-8")) if data.strip() else {}
    except (UnicodeDecodeError, ValueError) as error:
        raise EventError(f"the event on stdin is not JSON ({error})") from None
    if not isinstance(payload, dict):
        raise EventError(f"the event on stdin is a JSON {type(payload).__name__}, not an object")
    return HookEvent(agent, name, payload)
