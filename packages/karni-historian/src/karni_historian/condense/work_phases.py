"""Where a stretch of work changes phase, when no user prompt says so.

One prompt often drives hundreds of messages of work, so prompts alone make
episodes far too long to be useful. The work itself marks its phases
(``docs/historian/chunk.md``): a commit that succeeded, a todo item that moved
to done, a plan the user approved, a long pause, edits moving to another
folder, a subagent taking over, or simply a long run of tool work
(:data:`LONG_RUN` messages). Each such event ends a phase right after it
(after the tool's result and the agent's words about it), and each phase is
named by the todo item in progress, or the subagent's task, when it starts. A
boundary never falls inside a short tool call and its result, and phases
shorter than :data:`MIN_PHASE_MESSAGES` are merged into the next.
"""

from __future__ import annotations

import re
from datetime import datetime

from karni_historian.condense.file_notes.commands import command_of
from karni_historian.edits import is_edit_tool
from karni_historian.model import PATH_KEYS, TextPart, ToolPart

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from karni_historian.model import Message

__all__ = [
    "MIN_PHASE_MESSAGES",
    "PAUSE_SECONDS",
    "SHIFT_EDITS",
    "commit_of",
    "input_path",
    "phase_starts",
]

MIN_PHASE_MESSAGES = 8
"""A phase shorter than this is merged into the next one."""

PAUSE_SECONDS = 30 * 60
"""A pause this long between two messages starts a new phase."""

SHIFT_EDITS = 3
"""Edits a phase needs before an edit in another folder starts a new one."""

LONG_RUN = 60
"""A phase this many messages long ends at the agent's next words between tool calls."""

_TODO_TOOLS = frozenset({"todowrite", "todo_write", "update_plan"})
_SUBAGENT_TOOLS = frozenset({"task", "agent", "spawn_agent", "subagent"})
_PLAN_TOOLS = frozenset({"exitplanmode"})
_WORDS_AFTER = 2  # the agent's messages about the event that still belong to its phase
_RE: dict[str, Any] = {}


def _re(name: str) -> Any:
    if not _RE:
        _RE["commit"] = re.compile(r"^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.+)$", re.M)
        _RE["git_commit"] = re.compile(r"\bgit\b[^|;&]*\bcommit\b")
    return _RE[name]


def input_path(data: dict[str, Any]) -> str | None:
    """The first of :data:`~karni_historian.model.PATH_KEYS` with a string value in a tool input."""
    for key in PATH_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            return value
    return None


def commit_of(part: ToolPart) -> tuple[str, str] | None:
    """``(short hash, subject)`` of a shell call that made a commit, else None."""
    command = command_of(part.name, part.input)
    if command is None:
        return None
    if part.is_error or not _re("git_commit").search(command) or not part.output:
        return None
    found = _re("commit").search(part.output)
    return (found.group(1)[:8], found.group(2).strip()) if found else None


def _todos(part: ToolPart) -> list[tuple[str, str]]:
    """``(item, status)`` of a todo tool call's list (Claude Code's ``todos``, Codex's ``plan``)."""
    data = part.input if isinstance(part.input, dict) else {}
    items = data.get("todos", data.get("plan"))
    found = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        text = item.get("content", item.get("step"))
        if isinstance(text, str):
            found.append((" ".join(text.split()), str(item.get("status", ""))))
    return found


class _Scan:
    """One pass over the messages: phase-ending events and the todo item in progress."""

    def __init__(self) -> None:
        self.folders: set[str] = set()  # folders of the files edited in the current phase
        self.edits = 0
        self.last_edit = 0
        self.calls: set[str] = set()
        self.done: set[str] = set()
        self.current = ""
        self.ends: list[int] = []  # ordinals of messages that end a phase
        self.topics: dict[int, str] = {}  # ordinal → the item in progress after it
        self.tasks: dict[str, str] = {}  # a subagent call's id → what it was asked to do
        self.worker: str | None = None  # the subagent doing the work now (None: the agent)
        self.threads: dict[int, str] = {}  # ordinal → the subagent task that starts there

    def read(self, message: Message, previous: Message | None) -> None:
        self._thread(message, previous)
        for part in message.parts:
            if not isinstance(part, ToolPart) or part.is_error:
                continue
            name = part.name.lower()
            if is_edit_tool(name):
                self._edit(message.ordinal, part)
            if name in _SUBAGENT_TOOLS and part.call_id:
                self.tasks[part.call_id] = _task_of(part.input)
            if name in _TODO_TOOLS:
                self._todo(message.ordinal, _todos(part))
            elif (name in _PLAN_TOOLS and part.output is not None) or commit_of(part):
                self.ends.append(message.ordinal)

    def _thread(self, message: Message, previous: Message | None) -> None:
        """A subagent taking over the work starts a phase named by its task.

        Only tool calls carry their worker; the subagent's words just before its
        first call are its own too.
        """
        tools = [p for p in message.parts if isinstance(p, ToolPart)]
        if not tools or message.role != "assistant":
            return
        meta = tools[0].metadata if isinstance(tools[0].metadata, dict) else {}
        worker = meta.get("subagent") if isinstance(meta.get("subagent"), str) else None
        if worker == self.worker:
            return
        self.worker = worker
        if worker is None:
            return
        start = message.ordinal
        if (
            previous is not None
            and previous.role == "assistant"
            and all(isinstance(p, TextPart) for p in previous.parts)
        ):
            start = previous.ordinal
        self.threads[start] = self.tasks.get(worker, "")

    def _edit(self, ordinal: int, part: ToolPart) -> None:
        """An edit in a folder the phase has not edited, after a few edits: the focus moved."""
        data = part.input if isinstance(part.input, dict) else {}
        path = input_path(data)
        if path is None or (part.call_id and part.call_id in self.calls):
            return  # a result carries its call again
        self.calls.add(part.call_id)
        folder = path.rpartition("/")[0]
        if self.edits >= SHIFT_EDITS and folder not in self.folders:
            self.ends.append(self.last_edit)
            self.folders, self.edits = set(), 0
        self.folders.add(folder)
        self.edits += 1
        self.last_edit = ordinal

    def _todo(self, ordinal: int, items: list[tuple[str, str]]) -> None:
        finished = {item for item, status in items if status == "completed"} - self.done
        if finished:
            self.done |= finished
            self.ends.append(ordinal)
        progress = [item for item, status in items if status == "in_progress"]
        self.current = progress[0] if progress else ""
        self.topics[ordinal] = self.current


def _task_of(data: Any) -> str:
    """A subagent call's task in a few words: its description, else its prompt's first line."""
    if not isinstance(data, dict):
        return ""
    for key in ("description", "prompt", "message"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            line = value.strip().splitlines()[0]
            words = line.split()
            return " ".join(words[:12]) + ("…" if len(words) > 12 else "")
    return ""


def _topic(scan: _Scan, start: int) -> str:
    """The work in progress at ``start``: the newest todo item or subagent task before it."""
    todo = max((o for o in scan.topics if o < start), default=-1)
    thread = max((o for o in scan.threads if o <= start), default=-1)
    item = scan.topics.get(todo, "")
    task = scan.threads.get(thread, "")
    return task if task and (not item or thread > todo) else item


def _after(ordinal: int, by_ordinal: dict[int, Message], arcs: Sequence[tuple[int, int]]) -> int:
    """The first message after ``ordinal`` past its tool result and the agent's words on it."""
    for call, result in arcs:
        if call <= ordinal < result:
            ordinal = result
    for _ in range(_WORDS_AFTER):
        following = by_ordinal.get(ordinal + 1)
        if following is None or following.role != "assistant":
            break
        if any(isinstance(p, ToolPart) for p in following.parts):
            break
        ordinal += 1
    return ordinal + 1


def _pauses(messages: Sequence[Message]) -> list[int]:
    """Ordinals of messages that come after a long pause."""
    starts: list[int] = []
    previous = None
    stamp: object = None
    for message in messages:
        if message.timestamp == stamp:
            continue  # read as before: no pause, or the same error
        stamp = message.timestamp
        try:
            moment = datetime.fromisoformat((message.timestamp or "").replace("Z", "+00:00"))
        except ValueError:
            continue
        if previous is not None and (moment - previous).total_seconds() >= PAUSE_SECONDS:
            starts.append(message.ordinal)
        previous = moment
    return starts


def _long_runs(
    messages: Sequence[Message], starts: Sequence[int], arcs: Sequence[tuple[int, int]]
) -> list[int]:
    """Where a run of work longer than :data:`LONG_RUN` messages ends, with no other event.

    At the first message past the limit where the agent speaks between tool
    calls (an assistant message of text only, outside any call and result):
    a natural pause in the work.
    """
    found: list[int] = []
    ends = list(starts)
    since = messages[0].ordinal
    for message in messages:
        while ends and ends[0] <= message.ordinal:
            since = ends.pop(0)
        if message.ordinal - since < LONG_RUN or message.role != "assistant":
            continue
        if all(isinstance(p, TextPart) for p in message.parts) and not _inside_arc(
            message.ordinal, arcs
        ):
            found.append(message.ordinal + 1)
            since = message.ordinal + 1
    return found


def _inside_arc(ordinal: int, arcs: Sequence[tuple[int, int]]) -> bool:
    return any(call < ordinal <= result for call, result in arcs)


def phase_starts(messages: Sequence[Message], arcs: Sequence[tuple[int, int]]) -> dict[int, str]:
    """Ordinals where a new phase of work starts, each with its todo item (or ``""``).

    Args:
        messages: Consecutive messages of a session, in order.
        arcs: Their completed tool arcs
            (:func:`karni_historian.condense.boundaries.completed_arcs`).

    Returns:
        Start ordinal → the todo item in progress there; the first message
        is never a start.
    """
    if not messages:
        return {}
    scan = _Scan()
    before = None
    for message in messages:
        scan.read(message, before)
        before = message
    by_ordinal = {m.ordinal: m for m in messages}
    candidates = {_after(o, by_ordinal, arcs) for o in scan.ends} | set(_pauses(messages))
    candidates |= set(scan.threads)
    candidates |= set(_long_runs(messages, sorted(candidates), arcs))
    first, last = messages[0].ordinal, messages[-1].ordinal
    starts: dict[int, str] = {}
    previous = first
    for start in sorted(candidates):
        if start <= first or start > last - MIN_PHASE_MESSAGES or _inside_arc(start, arcs):
            continue
        if start - previous < MIN_PHASE_MESSAGES:
            if not starts:
                continue
            del starts[previous]  # too short a phase: it joins the next one
        starts[start] = _topic(scan, start)
        previous = start
    return starts
