r"""Google Gemini CLI chat recordings: where they are and how their records become messages.

Gemini CLI keeps a project's sessions under ``~/.gemini/tmp/<project id>/chats/``
(``$GEMINI_CLI_HOME`` replaces the home folder). The project id was the
SHA-256 of the project root until 2026; Gemini CLI now gives each project a
short name, registered in ``~/.gemini/projects.json`` (``{"projects": {PATH:
NAME}}``) and in a ``.project_root`` file inside the folder, and moves the old
hash folders to it. A session records only the hash of its project, not its
path, so the project's folders are found from its path: both hashes (as
written and through symbolic links), and the names whose registered path lies
in the project.

Two formats are read. Older versions rewrite one JSON object per session,
``session-<time>-<id8>.json``: ``{sessionId, projectHash, startTime,
lastUpdated, messages: [...]}``; they are read whole, again when they change
(:data:`JSON_KIND`). Current versions append JSONL,
``session-<time>-<id8>.jsonl``: a metadata line, then message records, each
keyed by ``id``, where a later record with the same id replaces the earlier
one (a message gains its tool calls' results that way), ``{"$set": {...}}``
metadata updates and ``{"$rewindTo": ID}`` when the user rewinds. A subagent
writes ``chats/<parent session id>/<session id>.jsonl``; its messages go to
the parent session, its calls marked with its session id, and its task
(written by the parent model) is not a prompt.

A ``user`` message is the prompt (what was typed, ``displayContent``, when the
record has it; the contents of ``@`` files are cut off); a ``gemini`` message
is the answer with its ``toolCalls``, each with its arguments, result and
status. ``run_shell_command`` is stored as a ``shell`` call (its output
without the harness's ``Command:``/``Exit Code:`` lines; a non-zero exit code
is a failure), ``write_file`` as ``write`` and ``replace`` (``smart_edit``) as
``edit``, the harness's name kept in ``metadata.tool``; their successful calls
give the files, with paths relative to the project folder resolved against it.
Rewound messages stay in the history; ``info``, ``error`` and ``warning``
messages, thoughts and a ``$set`` of the whole message list (a compression)
are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os

from karni.agent.common.paths import project_relative

from karni_historian.ingest.reader import read_json_object
from karni_historian.ingest.sink import changed_file
from karni_historian.store import CursorState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.report import FileReport
    from karni_historian.ingest.sink import SessionWriter, Sink

__all__ = [
    "JSON_KIND",
    "KIND",
    "GeminiReader",
    "find_files",
    "gemini_dir",
    "ingest_json",
    "is_json_session",
    "project_folders",
    "sniff",
]

KIND = "gemini"
JSON_KIND = "gemini-json"
"""A legacy one-object session file, read whole."""

_JSON_LIMIT = 256 << 20
_HEADER_LIMIT = 1 << 20
_RENAMED = {
    "run_shell_command": "shell",
    "write_file": "write",
    "replace": "edit",
    "smart_edit": "edit",
}
_PATH_KEYS = ("file_path", "absolute_path", "path")
_READ_TOOLS = frozenset({"read_file"})
_FINAL = frozenset({"success", "error", "cancelled"})
_TRAILING_FIELDS = (
    "Error: ",
    "Exit Code: ",
    "Signal: ",
    "Background PIDs: ",
    "Process Group PGID: ",
)
_REFERENCED = "\n--- Content from referenced files ---"


def gemini_dir() -> str:
    """Gemini CLI's folder: ``$GEMINI_CLI_HOME/.gemini`` or ``~/.gemini``."""
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(os.path.expanduser(home), ".gemini")


def _hash(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8")).hexdigest()


def _inside(root: str, path: Any) -> bool:
    return isinstance(path, str) and bool(path) and project_relative(root, path) is not None


def project_folders(root: str) -> list[tuple[str, str]]:
    """``(folder, project path)`` of the project's folders under ``tmp/``, each once."""
    base = os.path.join(gemini_dir(), "tmp")
    found: list[tuple[str, str]] = []
    for path in dict.fromkeys([os.path.abspath(root), os.path.realpath(root)]):
        found.append((os.path.join(base, _hash(path)), path))
    registry = read_json_object(os.path.join(gemini_dir(), "projects.json"), _HEADER_LIMIT) or {}
    projects = registry.get("projects")
    for path, name in (projects if isinstance(projects, dict) else {}).items():
        if isinstance(name, str) and name and "/" not in name and _inside(root, path):
            found.append((os.path.join(base, name), path))
    try:
        names = sorted(os.listdir(base))
    except OSError:
        names = []
    for name in names:
        try:
            with open(os.path.join(base, name, ".project_root"), encoding="utf-8") as handle:
                owner = handle.read(4096).strip()
        except (OSError, UnicodeDecodeError):
            continue
        if _inside(root, owner):
            found.append((os.path.join(base, name), owner))
    unique: dict[str, str] = {}
    for folder, path in found:
        unique.setdefault(os.path.realpath(folder), path)
    return [(folder, path) for folder, path in unique.items() if os.path.isdir(folder)]


def is_json_session(path: str) -> bool:
    """Whether ``path`` is a legacy one-object Gemini CLI session file."""
    name = os.path.basename(path)
    if not (name.startswith("session-") and name.endswith(".json")):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"sessionId"' in head and b'"projectHash"' in head


def find_files(root: str) -> list[tuple[str, str]]:
    """``(path, kind)`` of the project's session files: legacy first, then JSONL, then subagents."""
    found: list[tuple[str, str]] = []
    for folder, _ in project_folders(root):
        chats = os.path.join(folder, "chats")
        try:
            names = sorted(os.listdir(chats))
        except OSError:
            continue
        for name in names:
            path = os.path.join(chats, name)
            if name.endswith(".json") and is_json_session(path):
                found.append((path, JSON_KIND))
            elif name.endswith(".jsonl") and os.path.isfile(path):
                found.append((path, KIND))
        for name in names:
            sub = os.path.join(chats, name)
            if not os.path.isdir(sub) or os.path.islink(sub):
                continue
            try:
                inner = sorted(os.listdir(sub))
            except OSError:
                continue
            found += [(os.path.join(sub, n), KIND) for n in inner if n.endswith(".jsonl")]
    return found


def sniff(record: dict[str, Any]) -> bool:
    """Whether a parsed line is a Gemini CLI metadata or update record."""
    if isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
        return True
    return isinstance(record.get("$set"), dict) or isinstance(record.get("$rewindTo"), str)


def _text_of(content: Any) -> str:
    """The text of a message's content: a string or a list of parts (thoughts left out)."""
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
    return "\n".join(texts)


def shell_output(text: str) -> tuple[str, int | None]:
    """The output of a ``run_shell_command`` result without its fields, and its exit code."""
    lines = text.split("\n")
    code: int | None = None
    end = len(lines)
    while end > 0 and lines[end - 1].startswith(_TRAILING_FIELDS):
        line = lines[end - 1]
        if line.startswith("Exit Code: ") and line[11:].strip().lstrip("-").isdigit():
            code = int(line[11:].strip())
        end -= 1
    start = 0
    for index, line in enumerate(lines[:end]):
        if line.startswith(("Output: ", "Stdout: ")) or line in ("Output:", "Stdout:"):
            lines[index] = line.partition(":")[2].lstrip()
            start = index
            break
    body = "\n".join(lines[start:end])
    return ("" if body.strip() == "(empty)" else body), code


def _result_text(call: dict[str, Any]) -> tuple[str, bool]:
    """A tool call's result text, and whether its response was an error."""
    result = call.get("result")
    texts: list[str] = []
    error = False
    items = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
    for item in items:
        if not isinstance(item, dict):
            continue
        response = item.get("functionResponse")
        response = response.get("response") if isinstance(response, dict) else None
        if isinstance(response, dict):
            if isinstance(response.get("output"), str):
                texts.append(response["output"])
            elif response.get("error") is not None:
                error = True
                texts.append(str(response["error"]))
        elif isinstance(item.get("text"), str):
            texts.append(item["text"])
    if not texts and isinstance(call.get("resultDisplay"), str):
        texts.append(call["resultDisplay"])
    return "\n".join(texts), error


def _file_path(arguments: Any) -> str | None:
    if not isinstance(arguments, dict):
        return None
    return next((arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str)), None)


def convert_message(
    message: dict[str, Any], owner: str | None
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """A ``gemini`` message's parts, and the ``(path, action)`` its successful calls touched."""
    parts: list[dict[str, Any]] = []
    text = _text_of(message.get("content"))
    if text.strip():
        parts.append({"type": "text", "text": text})
    files: list[tuple[str, str]] = []
    calls = message.get("toolCalls")
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            continue
        part, touched = _call_part(call, owner)
        parts.append(part)
        files += touched
    return parts, files


def _call_part(
    call: dict[str, Any], owner: str | None
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    name = call["name"]
    arguments = call.get("args")
    stored = _RENAMED.get(name, name)
    stored_input: Any = arguments
    if stored == "shell" and isinstance(arguments, dict):
        stored_input = {k: v for k, v in arguments.items() if k != "command"}
        stored_input = {"command": arguments.get("command", ""), **stored_input}
    part: dict[str, Any] = {"type": "tool", "name": stored, "input": stored_input}
    if isinstance(call.get("id"), str) and call["id"]:
        part["call_id"] = call["id"]
    metadata: dict[str, Any] = {}
    if stored != name:
        metadata["tool"] = name
    if owner:
        metadata["subagent"] = owner
    if metadata:
        part["metadata"] = metadata
    status = call.get("status")
    if status not in _FINAL and call.get("result") is None:
        return part, []
    output, failed = _result_text(call)
    if stored == "shell":
        output, code = shell_output(output)
        failed = failed or (code is not None and code != 0)
    failed = failed or status in ("error", "cancelled")
    part["output"] = output
    if failed:
        part["is_error"] = True
        return part, []
    path = _file_path(arguments)
    if path is None:
        return part, []
    if name in _READ_TOOLS:
        return part, [(path, "read")]
    if stored == "write":
        display = call.get("resultDisplay")
        new = isinstance(display, dict) and display.get("originalContent") in (None, "")
        new = new or (isinstance(display, dict) and display.get("isNewFile") is True)
        return part, [(path, "create" if new else "edit")]
    if stored == "edit":
        old = arguments.get("old_string") if isinstance(arguments, dict) else None
        return part, [(path, "create" if old == "" else "edit")]
    return part, []


def _prompt_text(message: dict[str, Any]) -> str:
    shown = _text_of(message.get("displayContent"))
    text = shown if shown.strip() else _text_of(message.get("content"))
    cut = text.find(_REFERENCED)
    return text[:cut] if cut >= 0 else text


class _Session:
    """Where one session file's messages go: the session, its folder, and a subagent's owner."""

    def __init__(self, sink: Sink, path: str, header: dict[str, Any]) -> None:
        own = header.get("sessionId")
        stem = os.path.splitext(os.path.basename(path))[0]
        self.own_id = own if isinstance(own, str) and own else stem
        folder = os.path.dirname(path)
        nested = os.path.basename(os.path.dirname(folder)) == "chats"
        subagent = header.get("kind") == "subagent" or nested
        parent = os.path.basename(folder) if nested else None
        self.session_id = parent or self.own_id
        self.owner = self.own_id if subagent else None
        chats = os.path.dirname(folder) if nested else folder
        self.cwd = _project_of(os.path.dirname(chats)) or sink.root
        self.sink = sink
        self._writer: SessionWriter | None = None

    def writer(self) -> SessionWriter:
        if self._writer is None:
            self._writer = self.sink.session(self.session_id, KIND, self.cwd)
        return self._writer

    def message_id(self, raw: str) -> str:
        return f"{self.owner}/{raw}" if self.owner else raw

    def take(self, message: dict[str, Any], *, replace: bool) -> None:
        """Store one message record (a later copy of a stored message replaces it)."""
        raw_id = message.get("id")
        kind = message.get("type")
        if not isinstance(raw_id, str) or not raw_id or kind not in ("user", "gemini"):
            return
        message_id = self.message_id(raw_id)
        stamp = message.get("timestamp") if isinstance(message.get("timestamp"), str) else None
        writer = self.writer()
        existing = writer.find(message_id)
        if kind == "user":
            if existing is None:
                self._prompt(message, message_id, stamp)
            return
        parts, files = convert_message(message, self.owner)
        if not parts:
            return
        if existing is None:
            existing = writer.append("assistant", parts, stamp, message_id)
        elif replace:
            writer.replace(existing, parts)
        else:
            return
        for part in parts:
            if part.get("call_id"):
                writer.record_call(part["call_id"], existing)
        for path, action in files:
            writer.add_file(existing, self.sink.relative(path, self.cwd), action)

    def _prompt(self, message: dict[str, Any], message_id: str, stamp: str | None) -> None:
        text = _prompt_text(message)
        if not text.strip():
            return
        part: dict[str, Any] = {"type": "text", "text": text}
        if self.owner:
            part["ignored"] = True  # the task the parent model wrote
        writer = self.writer()
        writer.append("user", [part], stamp, message_id)
        if not self.owner:
            writer.title_with(text)

    def title(self, summary: Any) -> None:
        if isinstance(summary, str) and summary.strip() and not self.owner:
            self.writer()
            self.sink.store.set_title(self.session_id, summary, 3)


def _project_of(folder: str) -> str | None:
    try:
        with open(os.path.join(folder, ".project_root"), encoding="utf-8") as handle:
            owner = handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return owner if os.path.isabs(owner) else None


def _first_record(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            record = json.loads(handle.readline(_HEADER_LIMIT).lstrip(b"\x00"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


class GeminiReader:
    """Turns the records of one Gemini CLI JSONL session file into messages."""

    kind = KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the session stored at ``path``; its first line names it."""
        self.sink = sink
        self.session = _Session(sink, path, _first_record(path))

    def prefetch(self, records: list[dict[str, Any]]) -> None:
        """Look up in one query the stored ordinals of the message ids a group holds."""
        ids = {
            self.session.message_id(record["id"])
            for record in records
            if isinstance(record.get("id"), str) and record["id"]
        }
        writer = self.session._writer or self.sink.open_writer(self.session.session_id)
        if ids and writer is not None:
            writer.prefetch_ids(ids)

    def feed(self, record: dict[str, Any]) -> None:
        """Take one parsed line."""
        update = record.get("$set")
        if isinstance(update, dict):
            self.session.title(update.get("summary"))
            return
        if "$rewindTo" in record or "id" not in record:
            return  # a rewind keeps what was said; the metadata line was read first
        self.session.take(record, replace=True)


def ingest_json(sink: Sink, path: str, report: FileReport) -> None:
    """Read a legacy one-object session file whole, when it changed since the last run."""
    found = changed_file(sink, path, report)
    if found is None:
        return
    stat = found[0]
    data = read_json_object(path, _JSON_LIMIT)
    if data is None or not isinstance(data.get("messages"), list):
        report.problem = "it is not a Gemini CLI session object (no `messages` list)"
        return
    session = _Session(sink, path, data)
    with sink.store.transaction():
        for message in data["messages"]:
            if isinstance(message, dict):
                report.lines += 1
                session.take(message, replace=True)
        session.title(data.get("summary"))
        sink.flush()
        sink.store.set_cursor(
            path,
            CursorState(
                JSON_KIND, stat.st_size, stat.st_size, stat.st_mtime_ns, stat.st_ino, report.lines
            ),
        )
