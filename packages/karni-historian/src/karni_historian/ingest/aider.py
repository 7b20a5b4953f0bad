r"""Aider's chat history: ``.aider.chat.history.md`` beside the repository.

Aider appends every session to one Markdown file in the git repository's root
(``--chat-history-file``, ``$AIDER_CHAT_HISTORY_FILE`` or ``chat-history-file``
in ``.aider.conf.yml`` name another). It records no working directory: the
file's own folder is the project the sessions belong to. Its shape:

- ``# aider chat started at 2026-03-02 10:15:00`` starts a session (local time;
  the only time the file records, so every message of a session carries it);
- ``#### TEXT`` lines (two trailing spaces) are what the user typed, a
  multi-line input one line each;
- ``> TEXT`` lines (two trailing spaces) are Aider's own output: the start-up
  banner, questions and answers, ``Applied edit to PATH``, ``Commit SHA
  MESSAGE``, the output of ``/run`` and ``/test``, and what went wrong (``The
  LLM did not conform to the edit format``, a SEARCH block that failed to
  match);
- everything else is the model's answer, with its edits as SEARCH/REPLACE
  blocks (``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE``) after the
  file's name, unified diffs (``--- a/PATH`` / ``+++ b/PATH``) or whole files
  in a fence after the file's name.

A turn is a typed input and everything after it up to the next input. It
becomes a user message (a ``/run``, ``/test`` or ``!`` command: a ``shell``
call run by the user, its output the block after it; Aider's own commands such
as ``/add`` and ``/model`` are kept but ignored), and one assistant message
per answer, holding the answer's text, an ``edit``, ``patch`` or ``write``
call per edit block (failed unless Aider's output says it applied the edit to
that file), and its commits (``Commit 1a2b3c4 …``) as text. The files of
applied edits are recorded, paths relative to the file's folder.

The file is read incrementally from the start of its last turn, which may
still grow: its messages keep ids made of the turn's byte offset, so reading
it again replaces them rather than adding them twice.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime

from karni.agent.common.paths import project_relative

from karni_historian.ingest.reader import iter_lines
from karni_historian.ingest.sink import changed_file
from karni_historian.store import CursorState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

    from karni_historian.ingest.report import FileReport
    from karni_historian.ingest.sink import Sink

__all__ = ["HISTORY_NAME", "KIND", "find_files", "ingest_file", "is_history", "parse_turn"]

KIND = "aider"
HISTORY_NAME = ".aider.chat.history.md"
SESSION_PREFIX = "# aider chat started at "

_HARNESS_COMMANDS = frozenset(
    {
        "/add",
        "/drop",
        "/ls",
        "/tokens",
        "/model",
        "/models",
        "/clear",
        "/reset",
        "/help",
        "/exit",
        "/quit",
        "/settings",
        "/map",
        "/map-refresh",
        "/read-only",
        "/chat-mode",
        "/editor",
        "/voice",
        "/paste",
        "/copy",
        "/copy-context",
        "/multiline-mode",
        "/think-tokens",
        "/reasoning-effort",
        "/weak-model",
        "/editor-model",
        "/save",
        "/load",
        "/report",
    }
)
_SHELL_COMMANDS = {"/run": "", "/test": "", "/git": "git ", "/lint": ""}
_FAILURE_MARKS = (
    "failed to match",
    "SearchReplaceNoExactMatch",
    "did not conform to the edit format",
    "Did not apply edit",
    "Malformed",
    "Unable to apply",
)
_NOISE = (
    "Tokens:",
    "Cost:",
    "You can use /undo",
    "Use /help",
    "Aider v",
    "Main model:",
    "Weak model:",
    "Editor model:",
    "Git repo:",
    "Repo-map:",
    "Added ",
    "Model:",
)
_BLOCK = 1 << 16
_READ_LIMIT = 256 << 20


def is_history(path: str) -> bool:
    """Whether ``path`` looks like an Aider chat history (by name, or by its first line)."""
    if os.path.basename(path).endswith(".chat.history.md"):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(SESSION_PREFIX.encode())


def _git_root(root: str) -> str | None:
    current = os.path.abspath(root)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _configured(folder: str) -> str | None:
    """``chat-history-file`` of ``folder``'s ``.aider.conf.yml`` (a plain ``key: value`` line)."""
    try:
        with open(os.path.join(folder, ".aider.conf.yml"), encoding="utf-8") as handle:
            lines = handle.read(1 << 16).splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        key, colon, value = line.partition(":")
        if colon and key.strip() == "chat-history-file":
            value = value.split(" #", 1)[0].strip().strip("'\"")
            return value or None
    return None


def find_files(root: str) -> list[str]:
    """The project's Aider chat histories: in the project and in its repository's root."""
    folders = [os.path.abspath(root)]
    git_root = _git_root(root)
    if git_root is not None and git_root not in folders:
        folders.append(git_root)
    candidates: list[str] = []
    for folder in folders:
        candidates.append(os.path.join(folder, HISTORY_NAME))
        configured = _configured(folder)
        if configured:
            candidates.append(os.path.join(folder, os.path.expanduser(configured)))
    variable = os.environ.get("AIDER_CHAT_HISTORY_FILE")
    if variable:
        candidates.append(os.path.join(os.path.abspath(root), os.path.expanduser(variable)))
    found: list[str] = []
    for path in candidates:
        inside = project_relative(root, path) is not None
        repository = git_root is not None and project_relative(git_root, path) is not None
        if (inside or repository) and os.path.isfile(path) and path not in found:
            found.append(path)
    return found


# -- reading the file -----------------------------------------------------------------------


def _lines(handle: BinaryIO, offset: int) -> Iterator[tuple[int, str]]:
    """``(byte offset, line without its newline)`` of each complete line from ``offset`` on."""
    start = offset
    for line, end in iter_lines(handle, offset):
        yield start, line.decode("utf-8", "replace").rstrip("\r")
        start = end


def _header_before(handle: BinaryIO, offset: int) -> tuple[int, str] | None:
    """The session header line at or before ``offset`` (read backwards), with its offset."""
    marker = ("\n" + SESSION_PREFIX).encode()
    position = offset
    tail = b""
    while position > 0:
        step = min(_BLOCK, position)
        position -= step
        handle.seek(position)
        block = handle.read(step) + tail
        found = block.rfind(marker)
        if found >= 0:
            start = position + found + 1
            handle.seek(start)
            return start, handle.readline(1 << 12).decode("utf-8", "replace").rstrip("\r\n")
        tail = block[: len(marker)]
    handle.seek(0)
    first = handle.readline(1 << 12).decode("utf-8", "replace").rstrip("\r\n")
    return (0, first) if first.startswith(SESSION_PREFIX) else None


class _Turn:
    __slots__ = ("lines", "offset")

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.lines: list[str] = []


def _content(line: str, prefix: str) -> str:
    text = line[len(prefix) :] if line.startswith(prefix) else line[len(prefix.rstrip()) :]
    return text[:-2] if text.endswith("  ") else text.rstrip()


def parse_turn(lines: list[str]) -> tuple[str, list[tuple[str, list[str]]]]:
    """A turn's typed input, and its answers and Aider's outputs as ``(kind, lines)``."""
    typed: list[str] = []
    index = 0
    while index < len(lines) and lines[index].startswith("####"):
        typed.append(_content(lines[index], "#### "))
        index += 1
    segments: list[tuple[str, list[str]]] = []
    fence = False
    for line in lines[index:]:
        if line.startswith("```"):
            fence = not fence
        tool = not fence and (line.startswith("> ") or line.rstrip() == ">")
        kind = "tool" if tool else "text"
        body = _content(line, "> ") if kind == "tool" else line
        if segments and segments[-1][0] == kind:
            segments[-1][1].append(body)
        else:
            segments.append((kind, [body]))
    text = "\n".join(typed).strip()
    return ("" if text == "<blank>" else text), segments


# -- edits in an answer -----------------------------------------------------------------------


def _file_name(line: str) -> str | None:
    """The file name an edit block's preceding line gives, else None."""
    name = line.strip().strip("`*").strip()
    if name.endswith(":"):
        name = name[:-1]
    if not name or name.startswith(("```", "<<<", ">>>", "===", "#", "-", "+")):
        return None
    if not all(c.isalnum() or c in "._-/\\" for c in name):
        return None
    stem, dot, extension = os.path.basename(name).rpartition(".")
    return name if (dot and stem and extension) or "/" in name.rstrip("/") else None


def _edits(lines: list[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The answer's prose, and its edits as ``{"name", "path", ...}`` in order."""
    prose: list[str] = []
    edits: list[dict[str, Any]] = []
    index = 0
    fence = False
    name: str | None = None
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if stripped.startswith("<<<<<<< SEARCH"):
            while prose and (not prose[-1].strip() or _file_name(prose[-1]) == name):
                prose.pop()  # the file's name belongs to the edit
            index, fence = _search_replace(lines, index, name, edits), False
            continue
        if stripped.startswith("```"):
            fence = not fence
            if fence:
                inner = lines[index + 1 : index + 3]
                if inner and _file_name(inner[0]) and len(inner) > 1 and "SEARCH" in inner[1]:
                    name = _file_name(inner[0])  # the diff-fenced format names the file inside
                    index += 2
                    continue
                end = next(
                    (j for j in range(index + 1, len(lines)) if lines[j].strip().startswith("```")),
                    len(lines),
                )
                body = lines[index + 1 : end]
                if any(b.startswith("--- ") for b in body) and any(
                    b.startswith("+++ ") for b in body
                ):
                    edits += _udiff(body)
                    if prose and prose[-1].strip() == (name or ""):
                        prose.pop()
                    index, fence = end + 1, False
                    continue
                if name is not None and not any("<<<<<<< SEARCH" in b for b in body):
                    edits.append({"name": "write", "path": name, "content": "\n".join(body)})
                    if prose and _file_name(prose[-1]) == name:
                        prose.pop()
                    index, fence = end + 1, False
                    continue
            index += 1
            continue
        candidate = _file_name(line)
        name = candidate if candidate else (name if not stripped else None)
        prose.append(line)
        index += 1
    return prose, edits


def _search_replace(
    lines: list[str], index: int, name: str | None, edits: list[dict[str, Any]]
) -> int:
    old: list[str] = []
    new: list[str] = []
    target = old
    index += 1
    while index < len(lines):
        stripped = lines[index].strip()
        if stripped == "=======" and target is old:
            target = new
        elif stripped.startswith(">>>>>>> REPLACE"):
            index += 1
            break
        else:
            target.append(lines[index])
        index += 1
    if name is not None:
        edits.append({"name": "edit", "path": name, "old": "\n".join(old), "new": "\n".join(new)})
    while index < len(lines) and lines[index].strip().startswith("```"):
        index += 1  # the closing fence
    return index


def _udiff(body: list[str]) -> list[dict[str, Any]]:
    edits: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in body:
        if line.startswith("--- "):
            continue
        if line.startswith("+++ "):
            path = line[4:].strip()
            path = path[2:] if path.startswith("b/") else path
            current = {"name": "patch", "path": path, "lines": []}
            edits.append(current)
        elif current is not None:
            current["lines"].append(line)
    return edits


def _outcome(lines: list[str]) -> tuple[set[str], set[str], list[str], list[str]]:
    """``(applied, created, commits, failures)`` from Aider's output after an answer."""
    applied: set[str] = set()
    created: set[str] = set()
    commits: list[str] = []
    failures: list[str] = []
    for line in lines:
        text = line.strip()
        if text.startswith("Applied edit to "):
            applied.add(text[len("Applied edit to ") :].strip())
        elif text.startswith("Creating empty file "):
            created.add(text[len("Creating empty file ") :].strip())
        elif text.startswith("Commit ") and len(text.split()) >= 3:
            commits.append(text)
        elif any(mark in text for mark in _FAILURE_MARKS):
            failures.append(text)
    return applied, created, commits, failures


# -- messages -----------------------------------------------------------------------------


class _Session:
    def __init__(self, sink: Sink, path: str, header: str, offset: int) -> None:
        self.sink = sink
        self.cwd = os.path.dirname(os.path.abspath(path))
        started = header[len(SESSION_PREFIX) :].strip()
        self.timestamp = _iso(started)
        digest = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:8]
        moment = "".join(c for c in started if c.isdigit()) or str(offset)
        self.session_id = f"aider-{digest}-{moment}"
        self._writer: Any = None

    def writer(self) -> Any:
        if self._writer is None:
            self._writer = self.sink.session(self.session_id, KIND, self.cwd)
        return self._writer

    def put(self, message_id: str, role: str, parts: list[dict[str, Any]]) -> int:
        writer = self.writer()
        ordinal = writer.find(message_id)
        if ordinal is None:
            return int(writer.append(role, parts, self.timestamp, message_id))
        writer.replace(ordinal, parts)
        return int(ordinal)

    def turn(self, turn: _Turn) -> int:
        """Store one turn's messages; returns how many records (lines) it held."""
        typed, segments = parse_turn(turn.lines)
        number = 0
        tools = iter(segments)
        if typed:
            number = self._typed(turn, typed, segments)
            if number == 2:
                tools = iter(segments[1:])  # the command's output went with it
        pending: list[str] | None = None
        for kind, lines in tools:
            if kind == "text":
                if pending is not None:
                    number = self._answer(turn, number, pending, [])
                pending = lines
            elif pending is not None:
                number = self._answer(turn, number, pending, lines)
                pending = None
        if pending is not None:
            number = self._answer(turn, number, pending, [])
        return len(turn.lines)

    def _typed(self, turn: _Turn, typed: str, segments: list[tuple[str, list[str]]]) -> int:
        first, _, rest = typed.partition(" ")
        message_id = f"aider:{turn.offset}:0"
        if typed.startswith("!") or first in _SHELL_COMMANDS:
            command = typed[1:].strip() if typed.startswith("!") else rest.strip()
            command = (
                _SHELL_COMMANDS.get(first, "") + command if not typed.startswith("!") else command
            )
            output = segments[0][1] if segments and segments[0][0] == "tool" else []
            output = [o for o in output if "(Y)es/(N)o" not in o and not o.startswith("Added ")]
            part: dict[str, Any] = {
                "type": "tool",
                "name": "shell",
                "input": {"command": command or first},
                "output": "\n".join(output),
                "call_id": message_id,
                "metadata": {"run_by": "user", "tool": first if not typed.startswith("!") else "!"},
            }
            self.put(message_id, "user", [part])
            return 2 if output else 1
        part = {"type": "text", "text": typed}
        if first in _HARNESS_COMMANDS or "(Y)es/(N)o" in typed:
            part["ignored"] = True
        self.put(message_id, "user", [part])
        writer = self.writer()
        if not part.get("ignored"):
            writer.title_with(typed)
        return 1

    def _answer(self, turn: _Turn, number: int, text: list[str], output: list[str]) -> int:
        prose, edits = _edits(text)
        applied, created, commits, failures = _outcome(output)
        parts: list[dict[str, Any]] = []
        words = "\n".join(prose).strip()
        if words:
            parts.append({"type": "text", "text": words})
        message_id = f"aider:{turn.offset}:{number}"
        touched: list[tuple[str, str]] = []
        for count, edit in enumerate(edits):
            part = _edit_part(edit, f"{message_id}:{count}")
            path = edit["path"]
            if path in applied:
                part["output"] = f"Applied edit to {path}"
                new = path in created or (edit["name"] == "edit" and not edit["old"].strip())
                touched.append((path, "create" if new else "edit"))
            else:
                part["output"] = "\n".join(failures) or "Aider did not apply this edit"
                part["is_error"] = True
            parts.append(part)
        if commits:
            parts.append({"type": "text", "text": "\n".join(commits)})
        if not parts:
            return number
        ordinal = self.put(message_id, "assistant", parts)
        writer = self.writer()
        for part in parts:
            if part.get("call_id"):
                writer.record_call(part["call_id"], ordinal)
        for path, action in touched:
            writer.add_file(ordinal, self.sink.relative(path, self.cwd), action)
        return number + 1


def _edit_part(edit: dict[str, Any], call_id: str) -> dict[str, Any]:
    path = edit["path"]
    if edit["name"] == "edit":
        data: dict[str, Any] = {
            "file_path": path,
            "old_string": edit["old"],
            "new_string": edit["new"],
        }
        tool = "search/replace"
    elif edit["name"] == "patch":
        data = {"file_path": path, "patch": "\n".join(edit["lines"])}
        tool = "udiff"
    else:
        data = {"file_path": path, "content": edit["content"]}
        tool = "whole"
    return {
        "type": "tool",
        "name": edit["name"],
        "input": data,
        "call_id": call_id,
        "metadata": {"tool": tool},
    }


def _iso(started: str) -> str | None:
    try:
        moment = datetime.strptime(started, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    return moment.astimezone().isoformat(timespec="seconds")


# -- the run --------------------------------------------------------------------------------


def ingest_file(sink: Sink, path: str, report: FileReport) -> None:
    """Read what is new in one chat history, from the start of its last turn."""
    found = changed_file(sink, path, report)
    if found is None:
        return
    stat, state = found
    continues = state is not None and state.inode == stat.st_ino and stat.st_size >= state.size
    start = state.offset if continues and state is not None else 0
    try:
        with open(path, "rb") as handle:
            resume = _header_before(handle, start) if start else None
            _read(sink, path, handle, start, resume, report, stat)
    except OSError as error:
        report.problem = f"cannot read it: {error.strerror}"


def _read(
    sink: Sink,
    path: str,
    handle: BinaryIO,
    start: int,
    resume: tuple[int, str] | None,
    report: FileReport,
    stat: os.stat_result,
) -> None:
    """Parse from ``start``; the cursor is left at the last turn, where the next run resumes."""
    session = _Session(sink, path, resume[1], resume[0]) if resume else None
    turn: _Turn | None = None
    last = start
    read = 0
    with sink.store.transaction():
        for offset, line in _lines(handle, start):
            read += len(line) + 1
            if read > _READ_LIMIT:
                break
            if line.startswith(SESSION_PREFIX):
                if turn is not None and session is not None:
                    report.lines += session.turn(turn)
                session, turn, last = _Session(sink, path, line, offset), None, offset
                continue
            if line.startswith("####") and (turn is None or not turn.lines[-1].startswith("####")):
                if turn is not None and session is not None:
                    report.lines += session.turn(turn)
                turn, last = _Turn(offset), offset
            if turn is not None:
                turn.lines.append(line)
        if turn is not None and session is not None:
            report.lines += session.turn(turn)
        sink.flush()
        state = CursorState(KIND, last, stat.st_size, stat.st_mtime_ns, stat.st_ino, report.lines)
        sink.store.set_cursor(path, state)
