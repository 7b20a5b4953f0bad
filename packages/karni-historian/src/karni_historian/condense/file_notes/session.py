"""A session read as requests, the attempts that answered them, and what each attempt did.

A *request* is a prompt that asks for something new. Its *attempts* are the
stretches of work between two prompts: the first answers the request, and
each later one answers a follow-up of it: a bare continuation ("continue",
"yes, do it") or a correction ("no, keep the old name"). An attempt is a list of events in session
order: the edits it made (which file, the text replaced and written, the
error when the edit failed), the shell commands it ran (:mod:`.commands`)
and what the agent said. Work a subagent did carries the subagent's id, so
the agent's words are matched to the edits of the same worker.

Harness commands typed without arguments (``/model``) open nothing; a bare
continuation names the request it continues, so a file edited after
"continue" is credited to the real request (``docs/historian/file-notes.md``).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from karni_historian.condense.file_notes.commands import (
    Run,
    command_of,
    commit_of,
    read_run,
    shell_writes,
)
from karni_historian.condense.file_notes.prompts import (
    CORRECTION,
    LOCAL,
    REQUEST,
    prompt_kind,
)
from karni_historian.condense.file_notes.prose import is_narration, units
from karni_historian.edits import PATCH_TOOLS, edited_text, is_edit_tool, named_path, patch_paths
from karni_historian.model import TextPart, ToolPart
from karni_historian.prompts import prompt_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from karni_historian.model import Message

__all__ = [
    "SHELL_WRITE",
    "Attempt",
    "Edit",
    "Event",
    "Request",
    "RequestReader",
    "Said",
    "Shell",
    "iter_requests",
    "read_requests",
]

_SUBAGENT_TOOLS = frozenset({"task", "agent", "spawn_agent", "subagent"})
SHELL_WRITE = "shell"
"""The tool name of an :class:`Edit` a shell command made (a redirection, ``tee``, ``sed -i``)."""


@dataclass
class Edit:
    """One edit of one file: the ``(replaced, written)`` texts, and the error when it failed."""

    ordinal: int
    path: str
    tool: str
    pairs: list[tuple[str, str]]
    error: str | None
    group: str | None
    timestamp: str | None = None


@dataclass
class Shell:
    """One shell command and how it ended."""

    ordinal: int
    run: Run
    group: str | None
    timestamp: str | None = None


@dataclass
class Said:
    """What the agent (or a subagent's report) said, in one text part."""

    ordinal: int
    text: str
    group: str | None


Event = Edit | Shell | Said


@dataclass
class Attempt:
    """The work between two prompts, and the prompt that opened it."""

    ordinal: int
    kind: str
    words: str
    timestamp: str | None
    events: list[Event] = field(default_factory=list)

    def edits(self, path: str | None = None) -> list[Edit]:
        """The attempt's edits (of ``path`` only, when given), in order."""
        return [e for e in self.events if isinstance(e, Edit) and (path is None or e.path == path)]

    def edited_paths(self) -> list[str]:
        """The files the attempt edited successfully, in the order first edited."""
        return list(dict.fromkeys(e.path for e in self.edits() if e.error is None))


@dataclass
class Request:
    """A real request and the attempts that answered it.

    Attributes:
        ordinal: The request's prompt (0 for work before any prompt).
        text: The request in the user's words (for a session that starts with
            a continuation, what the agent said it was resuming).
        timestamp: When it was asked.
        attempts: The attempts, the first answering the request itself.
        subtasks: The subagents started while answering it, by call id:
            their task's short description.
    """

    ordinal: int
    text: str
    timestamp: str | None
    attempts: list[Attempt] = field(default_factory=list)
    subtasks: dict[str, str] = field(default_factory=dict)

    def edited_paths(self) -> list[str]:
        """The files any attempt edited successfully, in the order first edited."""
        return list(dict.fromkeys(p for a in self.attempts for p in a.edited_paths()))

    def all_edited(self) -> list[str]:
        """Every file an attempt edited or tried to, in the order first named."""
        found: dict[str, None] = {}
        for attempt in self.attempts:
            for event in attempt.events:
                if type(event) is Edit:
                    found[event.path] = None
        return list(found)


_PATHS: dict[str, str | None] = {}
"""Each raw path's project-relative form: a session names the same files over and over."""


def _project_path(raw: str | None) -> str | None:
    """A project-relative POSIX path from a tool input (absolute paths lie outside the project)."""
    if not raw:
        return None
    found = _PATHS.get(raw, "")
    if found == "":
        if len(_PATHS) >= 4096:
            _PATHS.clear()
        found = _PATHS[raw] = _relative_path(raw)
    return found


def _relative_path(raw: str) -> str | None:
    if raw.startswith(("/", "~")) or ":\\" in raw[:3]:
        return None
    normal = posixpath.normpath(raw.replace("\\", "/"))
    return None if normal.startswith("..") or normal == "." else normal


def _group(parts: Iterable[TextPart | ToolPart], current: str | None) -> str | None:
    """The worker of an assistant message: a subagent's call id, or None for the main agent."""
    for part in parts:
        if isinstance(part, ToolPart):
            meta = part.metadata if isinstance(part.metadata, dict) else {}
            subagent = meta.get("subagent")
            return subagent if isinstance(subagent, str) else None
    return current


def _edits(ordinal: int, part: ToolPart, group: str | None, timestamp: str | None) -> list[Edit]:
    data = part.input if isinstance(part.input, dict) else {}
    if part.name.lower() in PATCH_TOOLS:
        patch = next((v for k, v in data.items() if k in ("patchText", "patch", "input")), "")
        paths = patch_paths(patch) if isinstance(patch, str) else []
    else:
        paths = [named_path(data) or ""]
    error = _first_line(part.output) if part.is_error else None
    found = []
    for raw in paths:
        path = _project_path(raw)
        if path is not None:
            pairs = edited_text(part.name, data, raw)
            found.append(Edit(ordinal, path, part.name, pairs, error, group, timestamp))
    return found


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return " ".join(line.split())
    return "failed"


class RequestReader:
    """Builds the requests of a session, one message at a time, and hands out each finished one.

    ``light``: only what says which files each request edited and how (the
    prompts, the edits, the subagents' tasks); the agent's words are kept
    only while the request has no text of its own (see :func:`_resumed_task`),
    and shell commands only for the files they write and the commits they
    made (what ``blame`` reads, :mod:`.attribution`).
    """

    def __init__(self, light: bool = False) -> None:
        self.current: Request | None = None
        self.finished: list[Request] = []
        self.group: str | None = None
        self.light = light

    def wants_words(self) -> bool:
        """Whether the agent's words are read: always, unless ``light`` and the request has text."""
        return not self.light or self.current is None or not self.current.text

    def close(self) -> Request | None:
        """The last request, finished (None when there was none); the reader starts over."""
        last, self.current = self.current, None
        return None if last is None else _finished(last)

    def attempt(self) -> Attempt:
        """The attempt the agent's work goes to (a request before any prompt is opened)."""
        if self.current is None:
            self.current = Request(0, "", None)
        request = self.current
        if not request.attempts:
            request.attempts.append(Attempt(request.ordinal, REQUEST, request.text, None))
        return request.attempts[-1]

    def user(self, message: Message) -> None:
        """Read a user message: a prompt opens a request or a later attempt of it."""
        texts = [p.text for p in message.parts if isinstance(p, TextPart) and not p.ignored]
        self.prompt(message.ordinal, message.timestamp, texts)

    def prompt(self, ordinal: int, timestamp: str | None, texts: list[str]) -> None:
        """Read the (not ignored) text parts of the user message at ``ordinal``."""
        text = prompt_text(texts, lines=True)
        if not text:
            return
        kind = prompt_kind(text)
        if kind == LOCAL:
            return
        self.group = None
        if kind == REQUEST or self.current is None:
            if self.current is not None:
                self.finished.append(_finished(self.current))
            self.current = Request(ordinal, text if kind == REQUEST else "", timestamp)
        self.current.attempts.append(Attempt(ordinal, kind, text, timestamp))

    def assistant(self, message: Message) -> None:
        """Read an agent's message: its words, edits, commands and subagents."""
        self.agent(message.ordinal, message.parts, message.timestamp)

    def agent(
        self, ordinal: int, parts: Iterable[TextPart | ToolPart], timestamp: str | None = None
    ) -> None:
        """Read the parts of the agent's message at ``ordinal``, sent at ``timestamp``."""
        parts = tuple(parts)
        self.group = _group(parts, self.group)
        attempt = self.attempt()
        words = self.wants_words()
        for part in parts:
            if isinstance(part, TextPart):
                if words and not part.ignored and part.text.strip():
                    attempt.events.append(Said(ordinal, part.text, self.group))
            elif isinstance(part, ToolPart):
                self.tool(ordinal, part, attempt, timestamp)

    def tool(
        self, ordinal: int, part: ToolPart, attempt: Attempt, timestamp: str | None = None
    ) -> None:
        """Read one tool call of an agent's message (sent at ``timestamp``) into ``attempt``."""
        meta = part.metadata if isinstance(part.metadata, dict) else {}
        group = meta.get("subagent") if isinstance(meta.get("subagent"), str) else None
        if is_edit_tool(part.name):
            attempt.events.extend(_edits(ordinal, part, group, timestamp))
            return
        command = command_of(part.name, part.input)
        if command is not None:
            if not self.light or commit_of(command, part.output, part.is_error) is not None:
                run = read_run(command, part.output, part.is_error)
                attempt.events.append(Shell(ordinal, run, group, timestamp))
            for raw, body in shell_writes(command) if not part.is_error else ():
                path = _project_path(raw)
                if path is not None:
                    pairs = [("", body)] if body is not None else []
                    attempt.events.append(
                        Edit(ordinal, path, SHELL_WRITE, pairs, None, group, timestamp)
                    )
        elif part.name.lower() in _SUBAGENT_TOOLS and part.call_id:
            data = part.input if isinstance(part.input, dict) else {}
            task = data.get("description") or data.get("prompt") or ""
            if isinstance(task, str) and task.strip() and self.current is not None:
                self.current.subtasks[part.call_id] = " ".join(task.split())
            if part.output and not part.is_error and not self.light:
                attempt.events.append(Said(ordinal, part.output, part.call_id))


def read_requests(messages: Iterable[Message]) -> list[Request]:
    """The requests of a session's messages (in ordinal order), with their attempts.

    Tool results stored in user messages repeat the call's part, which the
    assistant message already holds; only user messages with the person's
    text count as prompts.
    """
    return list(iter_requests(messages))


def iter_requests(
    messages: Iterable[Message], *, light: bool = False, reader: RequestReader | None = None
) -> Iterator[Request]:
    """The requests of :func:`read_requests`, each handed out once the next one starts.

    So only one request's work is held at a time. ``light`` reads what says
    which files each request edited and how, not what the notes quote
    (:class:`RequestReader`); ``reader`` is the reader to use (one made here when None).
    """
    reader = reader or RequestReader(light)
    for message in messages:
        if message.role == "user":
            reader.user(message)
        elif message.role == "assistant":
            reader.assistant(message)
        if reader.finished:
            yield from reader.finished
            reader.finished.clear()
    last = reader.close()
    if last is not None:
        yield last


def _finished(request: Request) -> Request:
    """``request``, its text resolved when it has none of its own."""
    if not request.text:
        request.text = _resumed_task(request)
    return request


def _resumed_task(request: Request) -> str:
    """For work after a bare continuation with no request before it: the agent's first words."""
    for attempt in request.attempts:
        for event in attempt.events:
            if isinstance(event, Said) and event.group is None:
                for unit in units(event.text):
                    if not is_narration(unit) and len(unit.split()) >= 4:
                        return unit
    return ""


def is_correction(attempt: Attempt) -> bool:
    """Whether the attempt was opened by a correction of the work before it."""
    return attempt.kind == CORRECTION
