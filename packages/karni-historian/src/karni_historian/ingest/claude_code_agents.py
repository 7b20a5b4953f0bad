"""Claude Code subagents: whose work a record is, and where a Task call's transcript lives.

A ``Task`` (now ``Agent``) call runs a subagent whose records Claude Code has
written in three ways over its versions (``docs/historian/harnesses.md``):

1. inline, as ``isSidechain`` records of the session file itself;
2. in a flat ``agent-<agentId>.jsonl`` beside the session file;
3. in ``<session id>/subagents/agent-<agentId>.jsonl``, with an
   ``agent-<agentId>.meta.json`` naming the ``toolUseId`` of the call.

Whatever the layout, the subagent's messages are stored in the parent session,
right after the call that started it when it can be linked, and each of its
tool calls carries ``metadata.subagent`` = the id of that Task call. So the
files a subagent edited have history in the parent's episodes, and a subagent
file is never a session of its own.
"""

from __future__ import annotations

import os
import re

from karni_historian.ingest.reader import read_json_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AGENT_KIND",
    "TASK_TOOLS",
    "Agent",
    "SidechainOwners",
    "agent_files",
    "agent_id_of",
    "locate",
    "meta_call_id",
    "starts_warmup",
]

AGENT_KIND = "claude-code-agent"
"""The ingest kind of a subagent transcript file."""

TASK_TOOLS = frozenset({"Task", "Agent"})
"""Claude Code's tools that start a subagent."""

_AGENT_ID = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")
_WARMUP = "Warmup"
_META_LIMIT = 1 << 16
_OPEN_LIMIT = 256


class Agent:
    """One subagent's thread of work.

    Attributes:
        owner: The id of the Task call that started it ("" when unknown).
        key: Prefixes its message ids, keeping them apart from the parent's.
        ignored: True for a thread that is no work (Claude Code's warm-up).
    """

    __slots__ = ("ignored", "key", "owner")

    def __init__(self, owner: str, key: str) -> None:
        """A thread started by the call ``owner``."""
        self.owner = owner
        self.key = key
        self.ignored = False


def agent_id_of(result: Any, output: str) -> str | None:
    """The subagent id a Task result names (``toolUseResult.agentId`` or ``agentId: …``)."""
    if isinstance(result, dict) and isinstance(result.get("agentId"), str):
        return str(result["agentId"]) or None
    found = _AGENT_ID.search(output or "")
    return found.group(1) if found else None


def _subagents_dir(session_path: str, session_id: str) -> str:
    return os.path.join(os.path.dirname(session_path), session_id, "subagents")


def agent_files(session_path: str, session_id: str) -> list[str]:
    """Every subagent transcript under the session's ``subagents/`` folder, sorted."""
    found: list[str] = []
    for directory, subdirectories, names in os.walk(_subagents_dir(session_path, session_id)):
        subdirectories.sort()
        found.extend(
            os.path.join(directory, name)
            for name in sorted(names)
            if name.startswith("agent-") and name.endswith(".jsonl")
        )
    return found


def meta_call_id(agent_path: str) -> str | None:
    """The ``toolUseId`` in the subagent's ``.meta.json``, when there is one."""
    data = read_json_object(agent_path[: -len(".jsonl")] + ".meta.json", _META_LIMIT)
    call_id = data.get("toolUseId") if isinstance(data, dict) else None
    return call_id if isinstance(call_id, str) and call_id else None


def locate(session_path: str, session_id: str, agent_id: str | None, call_id: str) -> str | None:
    """The transcript of the subagent a Task call started, or None when not written."""
    nested = agent_files(session_path, session_id)
    if agent_id:
        name = f"agent-{agent_id}.jsonl"
        for path in nested:
            if os.path.basename(path) == name:
                return path
        flat = os.path.join(os.path.dirname(session_path), name)
        if os.path.isfile(flat):
            return flat
    for path in nested:
        if meta_call_id(path) == call_id:
            return path
    return None


def _prompt_of(record: dict[str, Any]) -> str:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        texts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "\n".join(text for text in texts if isinstance(text, str)).strip()
    return ""


class SidechainOwners:
    """Attributes inline sidechain records to the Task calls that started them.

    Open Task calls are remembered with their prompt. A sidechain starts with a
    ``user`` record without a parent whose text is the prompt of one of them;
    each later record hangs off the previous one by ``parentUuid``. Only the
    newest record of each chain is remembered, so memory stays small.
    """

    def __init__(self) -> None:
        """Start with no open call."""
        self._open: dict[str, str] = {}
        self._claimed: set[str] = set()
        self._tips: dict[str, Agent] = {}
        self._last: Agent | None = None

    def opened(self, call_id: str, tool_input: Any) -> None:
        """A Task call ``call_id`` was made."""
        prompt = tool_input.get("prompt") if isinstance(tool_input, dict) else None
        self._open[call_id] = prompt.strip() if isinstance(prompt, str) else ""
        if len(self._open) > _OPEN_LIMIT:
            del self._open[next(iter(self._open))]

    def closed(self, call_id: str) -> None:
        """The Task call ``call_id`` returned its result."""
        self._open.pop(call_id, None)
        self._claimed.discard(call_id)

    def owner(self, record: dict[str, Any]) -> Agent:
        """The thread a sidechain record belongs to."""
        parent = record.get("parentUuid")
        agent = self._tips.pop(parent, None) if isinstance(parent, str) else None
        if agent is None and not parent and record.get("type") == "user":
            agent = self._start(_prompt_of(record))
        if agent is None:
            agent = self._last or Agent("", "sidechain")
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self._tips[uuid] = agent
            if len(self._tips) > _OPEN_LIMIT:
                del self._tips[next(iter(self._tips))]
        self._last = agent
        return agent

    def _start(self, prompt: str) -> Agent:
        if prompt == _WARMUP:
            warmup = Agent("", "warmup")
            warmup.ignored = True
            return warmup
        free = [call for call in self._open if call not in self._claimed]
        call_id = next((c for c in free if self._open[c] == prompt), free[0] if free else "")
        if call_id:
            self._claimed.add(call_id)
        return Agent(call_id, f"sidechain-{call_id or 'unlinked'}")


def starts_warmup(record: dict[str, Any]) -> bool:
    """Whether a subagent file's first record is Claude Code's warm-up prompt."""
    return (
        record.get("type") == "user"
        and not record.get("parentUuid")
        and (_prompt_of(record) == _WARMUP)
    )
