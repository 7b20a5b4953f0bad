"""Gigai Chronicle session logs (``.chronicle/sessions/``) as messages.

Chronicle keeps one JSONL stream per session under
``.chronicle/sessions/YYYY/MM/ses_<ULID>.jsonl``, one event per line in its
v1 envelope (``docs/chronicle-contract.md``). Events become messages of the
event's ``session``:

- ``PromptSubmitted`` and ``PromptEdited``: a user message with the prompt;
- ``AIResponseReceived``: an assistant message with the response;
- ``ToolExecuted``: an assistant message holding one tool call, its summary
  as the call's description and its outcome as the output;
- ``GitCommitCreated``: an assistant message ``committed <hash> <subject>``
  (the payload's ``sha``/``hash``/``commit`` and ``message``/``subject``
  fields; the contract does not spell them out);
- ``FileModified``: the file(s) it names (``path``/``file``/``files``/
  ``paths``) are recorded as edited by the session's latest message;
- ``SessionStarted``: its ``title`` names the session.

Text stored as a blob reference is read from ``blobs/`` beside the stream;
``[METADATA-ONLY]`` text is kept but marked ignored. Events are deduplicated
by ``id``; envelopes newer than version 1 are skipped as malformed. Private
and local streams (``.chronicle/.local/``) are not read.
"""

from __future__ import annotations

import hashlib
import os

from karni.agent.common.errors import FileTooLargeError
from karni.agent.common.files import read_regular_file
from karni.agent.common.ownership import find_upwards

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from karni_historian.ingest.sink import Sink

__all__ = ["KIND", "ChronicleReader", "chronicle_dir", "find_files", "sniff"]

KIND = "chronicle"
_METADATA_ONLY = "[METADATA-ONLY]"
_BLOB_LIMIT = 8 << 20


def chronicle_dir(root: str) -> str | None:
    """The nearest ``.chronicle`` folder at or above ``root``, as Chronicle finds it.

    A folder another user owns is not taken (karni-core's walk-up, see
    ``docs/security.md``): a store planted in a shared parent folder must not
    reach the project's memory.
    """

    def store_in(folder: str) -> str | None:
        return ".chronicle" if os.path.isdir(os.path.join(folder, ".chronicle")) else None

    found = find_upwards(root, store_in, stop_at_first=True)
    return None if found is None else os.path.join(found, ".chronicle")


def find_files(root: str) -> list[str]:
    """Every ``*.jsonl`` under ``.chronicle/sessions/``, by relative POSIX path."""
    folder = chronicle_dir(root)
    if folder is None:
        return []
    sessions = os.path.join(folder, "sessions")
    found: list[tuple[str, str]] = []
    for directory, subdirectories, names in os.walk(sessions):
        subdirectories[:] = sorted(d for d in subdirectories if d != "blobs")
        for name in names:
            path = os.path.join(directory, name)
            if name.endswith(".jsonl") and os.path.isfile(path):
                found.append((os.path.relpath(path, sessions).replace(os.sep, "/"), path))
    return [path for _, path in sorted(found)]


def sniff(record: dict[str, Any]) -> bool:
    """Whether a parsed line looks like a Chronicle event."""
    return isinstance(record.get("id"), str) and record["id"].startswith("evt_") and "v" in record


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _first(payload: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = payload.get(key)
        if value:
            return value
    return None


class ChronicleReader:
    """Turns the events of one Chronicle stream into messages."""

    kind = KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the stream at ``path``."""
        self.sink = sink
        self.folder = os.path.dirname(path)

    def _text(self, value: Any) -> tuple[str, bool] | None:
        """``(text, ignored)`` of a payload text, reading blob references."""
        if isinstance(value, dict) and isinstance(value.get("$blob"), str):
            name = value["$blob"]
            if not name.startswith("sha256-") or "/" in name or "\\" in name:
                return None

            path = os.path.join(self.folder, "blobs", f"{name}.md")
            try:
                data = read_regular_file(path, _BLOB_LIMIT, follow_symlinks=False)
            except FileTooLargeError:
                return (f"[blob {name} is too large]", True)
            except OSError:  # missing, a link, a FIFO or a device: never read
                return (f"[missing blob {name}]", True)
            if _sha256(data) != name.removeprefix("sha256-"):
                return (f"[blob {name} does not match its hash]", True)
            value = data.decode("utf-8", "replace")
        if not isinstance(value, str):
            return None
        return value, value.strip() == _METADATA_ONLY

    def feed(self, event: dict[str, Any]) -> None:
        """Take one parsed event."""
        version = event.get("v")
        if not isinstance(version, int) or version > 1:
            raise ValueError(f"unsupported Chronicle envelope version {version!r}")
        session_id, event_id, kind = event.get("session"), event.get("id"), event.get("type")
        if not isinstance(session_id, str) or not isinstance(event_id, str):
            return
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None or not self.sink.first_sighting(f"chronicle:{event_id}"):
            return
        raw_payload, raw_timestamp = event.get("payload"), event.get("ts")
        payload = raw_payload if isinstance(raw_payload, dict) else {}
        timestamp = raw_timestamp if isinstance(raw_timestamp, str) else None
        handler(self, _Event(session_id, event_id, str(kind), payload, timestamp))

    def _session_started(self, event: _Event) -> None:
        self.sink.session(event.session_id, KIND)
        if isinstance(event.payload.get("title"), str):
            self.sink.store.set_title(event.session_id, event.payload["title"], 3)

    def _file_modified(self, event: _Event) -> None:
        """Mark the path(s) edited by the session's latest message."""
        writer = self.sink.session(event.session_id, KIND)
        raw = _first(event.payload, "path", "file", "files", "paths")
        if not writer.last_ordinal:
            return
        for item in raw if isinstance(raw, list) else [raw]:
            if isinstance(item, dict):
                item = item.get("path")
            if isinstance(item, str):
                writer.add_file(writer.last_ordinal, self.sink.relative(item), "edit")

    def _text_event(self, event: _Event) -> None:
        """A prompt (user) or a response (assistant); the first real prompt titles the session."""
        writer = self.sink.session(event.session_id, KIND)
        text = self._text(event.payload.get("text"))
        if text is None:
            return
        part: dict[str, Any] = {"type": "text", "text": text[0]}
        if text[1]:
            part["ignored"] = True
        role = "assistant" if event.kind == "AIResponseReceived" else "user"
        writer.append(role, [part], event.timestamp, event.event_id)
        if role == "user" and not text[1]:
            writer.title_with(text[0])

    def _tool_executed(self, event: _Event) -> None:
        """One tool call: its summary as the description, its outcome as the output."""
        writer = self.sink.session(event.session_id, KIND)
        payload = event.payload
        tool = payload.get("tool") if isinstance(payload.get("tool"), str) else "tool"
        summary, outcome = payload.get("summary"), payload.get("outcome")
        part: dict[str, Any] = {
            "type": "tool",
            "name": tool,
            "input": {},
            "call_id": event.event_id,
        }
        if isinstance(summary, str) and summary:
            part["input"] = {"description": summary}
        if isinstance(outcome, str):
            part["output"] = outcome
            if outcome.lower() in ("error", "failed", "failure"):
                part["is_error"] = True
        writer.append("assistant", [part], event.timestamp, event.event_id)

    def _commit(self, event: _Event) -> None:
        """``committed <hash> <subject>`` as an assistant line."""
        writer = self.sink.session(event.session_id, KIND)
        sha = _first(event.payload, "sha", "hash", "commit")
        subject = _first(event.payload, "message", "subject", "title")
        if isinstance(sha, str):
            line = f"committed {sha[:12]}"
            if isinstance(subject, str):
                line += f" {subject.splitlines()[0] if subject.strip() else ''}".rstrip()
            text = [{"type": "text", "text": line}]
            writer.append("assistant", text, event.timestamp, event.event_id)


class _Event:
    """The fields of one event that the handlers read."""

    __slots__ = ("event_id", "kind", "payload", "session_id", "timestamp")

    def __init__(
        self,
        session_id: str,
        event_id: str,
        kind: str,
        payload: dict[str, Any],
        timestamp: str | None,
    ) -> None:
        self.session_id = session_id
        self.event_id = event_id
        self.kind = kind
        self.payload = payload
        self.timestamp = timestamp


_HANDLERS: dict[str, Callable[[ChronicleReader, _Event], None]] = {
    "SessionStarted": ChronicleReader._session_started,
    "FileModified": ChronicleReader._file_modified,
    "PromptSubmitted": ChronicleReader._text_event,
    "PromptEdited": ChronicleReader._text_event,
    "AIResponseReceived": ChronicleReader._text_event,
    "ToolExecuted": ChronicleReader._tool_executed,
    "GitCommitCreated": ChronicleReader._commit,
}
"""The event types that become messages, titles or touched files, by handler."""
