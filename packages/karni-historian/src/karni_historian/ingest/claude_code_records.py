"""Claude Code records as messages: one reader per session or subagent file.

Each assistant content block is its own line, grouped into one message by
``message.id``; a tool result comes back as a ``user`` record, which stays a
user message whose tool part refers to the assistant's call, to which the
result is attached (:meth:`~karni_historian.ingest.sink.SessionWriter.answer`).
Subagent records (inline sidechains and subagent files) go to the parent
session, their calls marked with the Task call that started them
(:mod:`karni_historian.ingest.claude_code_agents`); their prompts, written
by the parent model, are not stored as prompts.

Skipped: sidecar records (titles aside), ``system``/``progress`` records and
attachments other than queued prompts, compaction summaries, thinking blocks,
images, and synthetic assistant notices. Duplicated records (copied by
``--resume`` in older builds) are dropped by ``uuid``. Harness text in user
records is kept but marked ``ignored`` (see
:mod:`karni_historian.ingest.claude_code_prompts`), so it never counts as a
prompt; a slash command is stored as the request it is.
"""

from __future__ import annotations

import os

from karni_historian.ingest.claude_code_agents import (
    AGENT_KIND,
    TASK_TOOLS,
    Agent,
    SidechainOwners,
    agent_id_of,
    locate,
    meta_call_id,
    starts_warmup,
)
from karni_historian.ingest.claude_code_prompts import classify
from karni_historian.ingest.sink import call_part

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.sink import SessionWriter, Sink

__all__ = ["ClaudeCodeAgentReader", "ClaudeCodeReader"]

KIND = "claude-code"
_TITLE_FIELDS = {"custom-title": ("customTitle", 4), "ai-title": ("aiTitle", 3)}
_SUMMARY_LIMIT = 256
_READ_TOOLS = frozenset({"Read"})
_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "NotebookEdit", "Write"})


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "\n".join(text for text in texts if isinstance(text, str))
    return ""


def _blocks(content: Any, what: str) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ValueError(f"a {what} message whose content is neither text nor a list")
    return content


def _string(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


def _read_as_message(record: dict[str, Any]) -> bool:
    """Whether :meth:`ClaudeCodeReader.feed` reads ``record`` as a message (and asks its thread)."""
    get = record.get
    return (
        get("type") in ("assistant", "user")
        and not (get("isCompactSummary") or get("isVisibleInTranscriptOnly"))
        and isinstance(get("message"), dict)
    )


def _not_human(record: dict[str, Any]) -> bool:
    """Whether a user record's text was written by the harness, whatever it says."""
    origin = record.get("origin")
    by_machine = isinstance(origin, dict) and origin.get("kind") not in (None, "human")
    return by_machine or record.get("isMeta") is True or record.get("turnCompanion") is True


class ClaudeCodeReader:
    """Turns the records of one Claude Code session file into messages."""

    kind = KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the session stored at ``path`` (its file stem is the session id)."""
        self.sink = sink
        self.path = path
        self.session_id = os.path.splitext(os.path.basename(path))[0]
        self._writer: SessionWriter | None = None
        self._sidechains = SidechainOwners()
        self._linked: list[tuple[str, str]] = []
        self._summaries: dict[str, str] = {}

    def writer(self, cwd: str | None = None) -> SessionWriter:
        """The session's writer, created on first use."""
        if self._writer is None:
            self._writer = self.sink.session(self.session_id, KIND, cwd)
        return self._writer

    # -- records --

    def prefetch(self, records: list[dict[str, Any]]) -> None:
        """Look up, in one query each, the record and message ids a group of lines holds."""
        keys: list[str] = []
        message_ids: set[str] = set()
        for record in records:
            get = record.get
            uuid = get("uuid")
            if uuid and isinstance(uuid, str):
                keys.append("cc:" + uuid)
            if get("type") == "assistant":
                message = get("message")
                message_id = message.get("id") if isinstance(message, dict) else None
                if isinstance(message_id, str) and message_id:
                    stored_id = self.stored_id(message_id, get("isSidechain") is True)
                    if stored_id is not None:
                        message_ids.add(stored_id)
        self.sink.prefetch_seen(keys)
        writer = self._writer or self.sink.open_writer(self.session_id)
        if message_ids and writer is not None:
            writer.prefetch_ids(message_ids)

    def stored_id(self, message_id: str, sidechain: bool) -> str | None:
        """The id a response is stored under, when known before its record is read.

        A sidechain's responses carry its thread's key, known only once the
        record is read (:meth:`agent_of`): those are asked for when they come.
        """
        return None if sidechain else message_id

    def feed(self, record: dict[str, Any]) -> None:
        """Take one parsed line."""
        get = record.get
        kind = get("type", "")
        if kind != "assistant" and kind != "user":
            self._other(record, kind)
            return
        if get("isCompactSummary") or get("isVisibleInTranscriptOnly"):
            return
        message = get("message")
        if not isinstance(message, dict):
            raise ValueError("a user or assistant record without a message object")
        agent = self.agent_of(record)
        uuid = get("uuid")
        if uuid in self._summaries and agent is None:
            self.writer(_string(record, "cwd"))
            self.sink.store.set_title(self.session_id, self._summaries.pop(uuid), 2)
        if uuid and isinstance(uuid, str) and not self.sink.first_sighting("cc:" + uuid):
            return
        if agent is not None and agent.ignored:
            return
        cwd, timestamp = get("cwd"), get("timestamp")
        cwd = cwd if isinstance(cwd, str) else None
        timestamp = timestamp if isinstance(timestamp, str) else None
        if kind == "assistant":
            self._assistant(message, timestamp, cwd, agent)
        else:
            self._user(record, message, timestamp, cwd, agent)
            self._read_linked()

    def _other(self, record: dict[str, Any], kind: Any) -> None:
        """A record that is no message: a title, a queued prompt, or nothing kept."""
        if kind in _TITLE_FIELDS or kind == "summary":
            self._title(record, kind)
        elif kind == "attachment":
            self._queued_prompt(record)

    def agent_of(self, record: dict[str, Any]) -> Agent | None:
        """The subagent thread a record belongs to, or None for the main thread."""
        return self._sidechains.owner(record) if record.get("isSidechain") is True else None

    def _title(self, record: dict[str, Any], kind: str) -> None:
        field, rank = _TITLE_FIELDS.get(kind, ("summary", 2))
        title = record.get(field)
        if not isinstance(title, str):
            return
        if kind == "summary":
            # A summary names the session its leaf record is in, often another one.
            leaf = record.get("leafUuid")
            if isinstance(leaf, str) and len(self._summaries) < _SUMMARY_LIMIT:
                self._summaries[leaf] = title
            return
        self.writer()
        self.sink.store.set_title(self.session_id, title, rank)

    def _queued_prompt(self, record: dict[str, Any]) -> None:
        """A prompt typed while the agent was busy, recorded as an attachment."""
        attachment = record.get("attachment")
        if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
            return
        origin = attachment.get("origin")
        if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
            return
        text = attachment.get("prompt")
        text = text if isinstance(text, str) else attachment.get("content")
        if not isinstance(text, str) or not text.strip():
            return
        uuid = record.get("uuid")
        if isinstance(uuid, str) and uuid and not self.sink.first_sighting(f"cc:{uuid}"):
            return
        stored, ignored = classify(text)
        part: dict[str, Any] = {"type": "text", "text": stored}
        if ignored:
            part["ignored"] = True
        self._append_user([part], _string(record, "timestamp"), _string(record, "cwd"), [])

    # -- assistant records --

    def _assistant(
        self, message: dict[str, Any], timestamp: str | None, cwd: str | None, agent: Agent | None
    ) -> None:
        if message.get("model") == "<synthetic>":
            return
        parts = self._assistant_parts(_blocks(message.get("content"), "an assistant"), agent)
        if not parts:
            return
        writer = self.writer(cwd)
        message_id = _string(message, "id") or ""
        if message_id and agent is not None:
            message_id = f"{agent.key}/{message_id}"
        ordinal = writer.find(message_id) if message_id else None
        if ordinal is None:
            ordinal = writer.append("assistant", parts, timestamp, message_id)
        else:
            writer.extend(ordinal, parts)
        for part in parts:
            if part.get("call_id"):
                writer.record_call(part["call_id"], ordinal)
                if part["name"] in TASK_TOOLS:
                    self._sidechains.opened(part["call_id"], part["input"])

    @staticmethod
    def _assistant_parts(blocks: list[Any], agent: Agent | None) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append({"type": "text", "text": block["text"]})
            elif kind == "tool_use" and isinstance(block.get("name"), str):
                part = call_part(block["name"], block.get("input"), block.get("id"))
                if agent is not None:
                    part["metadata"] = {"subagent": agent.owner}
                parts.append(part)
        return parts

    # -- user records --

    def _user(
        self,
        record: dict[str, Any],
        message: dict[str, Any],
        timestamp: str | None,
        cwd: str | None,
        agent: Agent | None,
    ) -> None:
        blocks = _blocks(message.get("content"), "a user")
        writer = self.writer(cwd)
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        is_result = bool(results) or record.get("toolUseResult") is not None
        touched: list[tuple[int, str, str]] = []
        parts: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                parts.append(self._result(writer, record, block, cwd, touched))
            elif agent is None and kind == "text":
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(self._text_part(text, is_result or _not_human(record)))
        self._append_user(parts, timestamp, cwd, touched)

    @staticmethod
    def _text_part(text: str, harness: bool) -> dict[str, Any]:
        stored, ignored = (text, True) if harness else classify(text)
        part: dict[str, Any] = {"type": "text", "text": stored}
        if ignored:
            part["ignored"] = True
        return part

    def _append_user(
        self,
        parts: list[dict[str, Any]],
        timestamp: str | None,
        cwd: str | None,
        touched: list[tuple[int, str, str]],
    ) -> None:
        if not parts:
            return
        writer = self.writer(cwd)
        writer.append("user", parts, timestamp)
        for ordinal, path, action in touched:
            writer.add_file(ordinal, path, action)
        if not writer.titled:
            prompt = next(
                (p["text"] for p in parts if p["type"] == "text" and not p.get("ignored")), ""
            )
            writer.title_with(prompt)

    def _result(
        self,
        writer: SessionWriter,
        record: dict[str, Any],
        block: dict[str, Any],
        cwd: str | None,
        touched: list[tuple[int, str, str]],
    ) -> dict[str, Any]:
        call_id = _string(block, "tool_use_id") or ""
        output = _result_text(block.get("content"))
        is_error = block.get("is_error") is True
        part, found = writer.answer(call_id, output, is_error)
        if found is not None:
            ordinal, call = found
            name = call.get("name", "tool")
            result = record.get("toolUseResult")
            if not is_error and not isinstance(result, str):
                for path, action in self._files(name, call.get("input"), result, cwd):
                    touched.append((ordinal, path, action))
            if name in TASK_TOOLS:
                self._task_returned(call_id, result, output)
        return part

    def _files(
        self, name: str, tool_input: Any, result: Any, cwd: str | None
    ) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        relative = self.sink.relative
        if isinstance(tool_input, dict):
            raw = tool_input.get("file_path") or tool_input.get("notebook_path")
            if isinstance(raw, str):
                path = relative(raw, cwd)
                if path and name in _READ_TOOLS:
                    found.append((path, "read"))
                elif path and name in _EDIT_TOOLS:
                    created = isinstance(result, dict) and result.get("type") == "create"
                    create = name == "Write" and created
                    found.append((path, "create" if create else "edit"))
        if name == "Bash" and isinstance(result, dict):
            diff = result.get("bashEditDiff")
            changed = diff.get("changedFiles") if isinstance(diff, dict) else None
            for item in changed if isinstance(changed, list) else ():
                raw = item.get("filePath") if isinstance(item, dict) else item
                path = relative(raw, cwd) if isinstance(raw, str) else None
                if path:
                    found.append((path, "edit"))
        return found

    # -- subagent files --

    def _task_returned(self, call_id: str, result: Any, output: str) -> None:
        """A Task call returned: its subagent's file, if it has one, is read next."""
        self._sidechains.closed(call_id)
        path = locate(self.path, self.session_id, agent_id_of(result, output), call_id)
        if path is not None:
            self._linked.append((os.path.realpath(path), call_id))

    def _read_linked(self) -> None:
        """Read the subagent files of the Task calls that just returned, after their result."""
        read_side_file = self.sink.read_side_file
        if not self._linked or read_side_file is None:
            return
        linked, self._linked = self._linked, []
        for path, call_id in linked:
            self.sink.agent_calls[path] = call_id
            read_side_file(self.sink, path, AGENT_KIND)


class ClaudeCodeAgentReader(ClaudeCodeReader):
    """Turns a subagent's transcript file into messages of its parent session.

    The parent is the folder above ``subagents/`` or, for a flat
    ``agent-*.jsonl``, the ``sessionId`` its records carry. The Task call is
    the one whose result led here in this run, else the one the
    ``.meta.json`` names.
    """

    kind = AGENT_KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the subagent transcript at ``path``."""
        super().__init__(sink, path)
        folder = os.path.dirname(path)
        nested = os.path.basename(folder) == "subagents"
        self.session_id = os.path.basename(os.path.dirname(folder)) if nested else ""
        project_folder = os.path.dirname(os.path.dirname(folder)) if nested else folder
        self.path = os.path.join(project_folder, f"{self.session_id}.jsonl")
        stem = os.path.splitext(os.path.basename(path))[0]
        owner = sink.agent_calls.get(path) or meta_call_id(path) or ""
        self._agent = Agent(owner, stem)
        self._first = True

    def prefetch(self, records: list[dict[str, Any]]) -> None:
        """As for a session file, once the parent session is known from the first message."""
        if not self.session_id:
            first = next((record for record in records if _read_as_message(record)), None)
            if first is not None:
                self._adopt_session(first)
        super().prefetch(records)

    def stored_id(self, message_id: str, sidechain: bool) -> str | None:
        """Every response of the file is its one subagent's, stored under its key."""
        return f"{self._agent.key}/{message_id}"

    def _adopt_session(self, record: dict[str, Any]) -> None:
        """A flat subagent file's parent: the session its first record names."""
        recorded = record.get("sessionId")
        self.session_id = recorded if isinstance(recorded, str) and recorded else "unknown"
        self.path = os.path.join(os.path.dirname(self.path), f"{self.session_id}.jsonl")

    def agent_of(self, record: dict[str, Any]) -> Agent | None:
        """Every record of the file belongs to its one subagent."""
        if not self.session_id:
            self._adopt_session(record)
        if self._first:
            self._first = False
            self._agent.ignored = starts_warmup(record)
        return self._agent

    def _title(self, record: dict[str, Any], kind: str) -> None:
        """A subagent's titles do not name the parent session."""

    def _queued_prompt(self, record: dict[str, Any]) -> None:
        """A subagent has no typed prompts."""
