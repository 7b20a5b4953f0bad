"""Real public sessions replayed into git, and who wrote each line of the result.

The public transcripts of ``../shared/data/real-transcripts/`` come without
their repositories, but they hold what the agent read (whole files, in its
``read``/``Read`` results) and every edit and write it made. Replaying them
rebuilds the edited files: each file starts as the session first read it in
full (or as its first write made it), the session's edits and writes are
applied in order, a later full read that shows other text is a person's
change (made between two requests), and a commit is made where the session
committed, else at the end of each request that changed a file. Every line
of the result is owned by the request whose edit wrote it, or by nobody (the
file as first read, a person's change).

``scripts/blame_eval.py`` uses it twice: ``--write-labels`` once, to write
the owners as label files (``eval/blame/*.toml``, reviewed by hand against
the transcripts and committed), and at every eval run, to build the same
repository again and score ``karni-historian blame`` on it. A file whose
replay cannot be trusted (edited before any full read, an edit whose old
text the replay does not hold) is skipped, with its reason in the label file.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

_NUMBERED = re.compile(r"^ *\d+\u2192", re.M)
_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>\s*", re.S)
_COMMITTED = re.compile(r"^\[[^\]\n]*? [0-9a-f]{7,}\] (.+)$", re.M)
_GO_ON = re.compile(
    r"(?:\s|[.,!]|ok(?:ay)?|yes|yeah|yep|yup|sure|please|continue|go|on|ahead|proceed|do|it"
    r"|all|keep|going|lgtm|sounds|good|great|fine)*",
    re.I,
)
"""A prompt that only says to go on: it continues the request before it, and asks nothing new."""
_TAG = re.compile(r"<command-(name|args)>(.*?)</command-\1>", re.S)


@dataclass
class Step:
    """One thing the session did: a prompt, a full read, an edit, a write, a commit."""

    kind: str
    stamp: str
    path: str = ""
    text: str = ""
    old: str = ""
    new: str = ""
    every: bool = False
    edits: list[tuple[str, str, bool]] = field(default_factory=list)


@dataclass
class Lines:
    """A file's lines as the replay made them, each with its owner (a request's number or None)."""

    text: str
    owners: list[int | None]
    broken: str = ""


def split(text: str) -> list[str]:
    """``text``'s lines as git numbers them (``str.splitlines`` also breaks at ``\\r``, U+2028…)."""
    parts = text.split("\n")
    return parts[:-1] if parts and not parts[-1] else parts


def moment(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


# ---------------------------------------------------------------- reading the transcripts


def _jsonl(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line.strip()]


def pi_steps(path: Path, root: str) -> list[Step]:
    """The steps of a Pi session file (v1): calls without a result never ran."""
    records = [r for r in _jsonl(path) if r.get("type") == "message"]
    results = {
        r["message"]["toolCallId"]: r["message"]
        for r in records
        if r["message"].get("role") == "toolResult"
    }
    steps: list[Step] = []
    for record in records:
        message, stamp = record["message"], record["timestamp"]
        if message.get("role") == "user":
            text = "\n".join(
                c.get("text", "") for c in message["content"] if c.get("type") == "text"
            )
            steps.append(Step("prompt", stamp, text=text))
            continue
        for call in message.get("content", []) if message.get("role") == "assistant" else []:
            result = results.get(call.get("id", "")) if call.get("type") == "toolCall" else None
            if result is None or result.get("isError"):
                continue
            output = "".join(
                c.get("text", "") for c in result["content"] if c.get("type") == "text"
            )
            step = _pi_step(call["name"], call["arguments"], output, root)
            if step:
                step.stamp = stamp
                steps.append(step)
    return steps


def _pi_step(name: str, data: dict, output: str, root: str) -> Step | None:
    where = _inside(data.get("path", ""), root)
    if name == "read" and where and "offset" not in data and "limit" not in data:
        return Step("read", "", where, text=output)
    if name == "edit" and where:
        return Step("edit", "", where, old=data["oldText"], new=data["newText"])
    if name == "write" and where:
        return Step("write", "", where, text=data["content"])
    if name == "bash":
        return _commit_step(data.get("command", ""), output)
    return None


def _commit_step(command: str, output: str) -> Step | None:
    found = _COMMITTED.search(output) if "git" in command and "commit" in command else None
    return Step("commit", "", text=found.group(1)) if found else None


def _inside(path: str, root: str) -> str:
    """``path`` relative to the project, or "" when it is outside it."""
    if path.startswith(root + "/"):
        path = path[len(root) + 1 :]
    if not path or path.startswith(("/", "~", "..")):
        return ""
    return path


def claude_prompt(content: object) -> str:
    """A main-thread user record's prompt, as typed (a slash command as ``/name args``)."""
    if isinstance(content, list):
        if any(isinstance(p, dict) and p.get("type") == "tool_result" for p in content):
            return ""
        content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        return ""
    tags = dict(_TAG.findall(content))
    if tags.get("name"):
        return f"{tags['name']} {tags.get('args', '')}".strip()
    return "" if content.startswith("<") else content


def claude_steps(path: Path, root: str) -> list[Step]:
    """The steps of a Claude Code session file, its subagents' inline records included."""
    records = [r for r in _jsonl(path) if r.get("type") in ("user", "assistant")]
    results: dict[str, dict] = {}
    for record in records:
        for part in _parts(record):
            if part.get("type") == "tool_result":
                results[part["tool_use_id"]] = part
    steps: list[Step] = []
    for record in records:
        stamp = record["timestamp"]
        if record["type"] == "user" and not record.get("isSidechain") and not record.get("isMeta"):
            text = claude_prompt(record["message"].get("content"))
            if text:
                steps.append(Step("prompt", stamp, text=text))
        for part in _parts(record) if record["type"] == "assistant" else []:
            result = results.get(part.get("id", "")) if part.get("type") == "tool_use" else None
            if result is None or result.get("is_error"):
                continue
            step = _claude_step(part["name"], part["input"], _output(result), root)
            if step:
                step.stamp = stamp
                steps.append(step)
    return steps


def _parts(record: dict) -> list[dict]:
    content = record.get("message", {}).get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _output(result: dict) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _claude_step(name: str, data: dict, output: str, root: str) -> Step | None:
    where = _inside(data.get("file_path", ""), root)
    if name == "Read" and where and "offset" not in data and "limit" not in data:
        text = _REMINDER.sub("", output)
        if not _NUMBERED.match(text):
            return None  # an empty file, an image: nothing to start from
        return Step("read", "", where, text=_NUMBERED.sub("", text) + "\n")
    if name == "Edit" and where:
        return Step(
            "edit", "", where, old=data["old_string"], new=data["new_string"],
            every=bool(data.get("replace_all")),
        )  # fmt: skip
    if name == "MultiEdit" and where:
        edits = [
            (e["old_string"], e["new_string"], bool(e.get("replace_all"))) for e in data["edits"]
        ]
        return Step("multi", "", where, edits=edits)
    if name == "Write" and where:
        return Step("write", "", where, text=data["content"])
    if name == "Bash":
        return _commit_step(data.get("command", ""), output)
    return None


def moved(steps: list[Step], recorded: str, root: str) -> list[Step]:
    """``steps`` as if recorded in ``root``: the harness's install replaces the folder so too."""

    def move(text: str) -> str:
        return text.replace(recorded, root)

    for step in steps:
        step.text, step.old, step.new = move(step.text), move(step.old), move(step.new)
        step.edits = [(move(old), move(new), every) for old, new, every in step.edits]
    return steps


# ---------------------------------------------------------------- replaying


def _owners(before: Lines, after: str, owner: int | None) -> list[int | None]:
    """The owners of ``after``'s lines: ``before``'s where a line stayed, else ``owner``."""
    old, new = split(before.text), split(after)
    owners: list[int | None] = [owner] * len(new)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        owners[b : b + size] = before.owners[a : a + size]
    return owners


def _apply(text: str, old: str, new: str, every: bool) -> str | None:
    """``text`` with the edit made, or None when the replay cannot make it as the agent did."""
    count = text.count(old) if old else 0
    if count == 0 or (count > 1 and not every):
        return None
    return text.replace(old, new) if every else text.replace(old, new, 1)


class Replay:
    """The files a session edited, as its steps leave them; see the module's docstring."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.files: dict[str, Lines] = {}
        self.requests: list[str] = []
        self.stamps: list[str] = []
        self.edited: set[str] = set()

    def start(self) -> dict[str, str]:
        """Each edited file's text before the session changed it (a file it created: none)."""
        first: dict[str, str] = {}
        seen: set[str] = set()
        for step in self.steps:
            if step.kind == "read" and step.path not in seen:
                first[step.path] = step.text
            if step.kind in ("read", "edit", "multi", "write"):
                seen.add(step.path)
        touched = {s.path for s in self.steps if s.kind in ("edit", "multi", "write")}
        return {path: text for path, text in first.items() if path in touched}

    def step(self, step: Step) -> bool:
        """Do ``step`` to the files; whether it changed one."""
        if step.kind == "prompt":
            if not (self.requests and _GO_ON.fullmatch(step.text)):
                self.requests.append(step.text)
                self.stamps.append(step.stamp)
            return False
        if step.kind == "commit":
            return False
        owner = len(self.requests) - 1 if self.requests else None
        lines = self.files.get(step.path)
        if step.kind == "read":
            if lines is None:
                self.files[step.path] = Lines(step.text, [None] * len(split(step.text)))
            elif not lines.broken and lines.text != step.text:
                self._set(step.path, step.text, None)  # a person's change between two requests
                return True
            return False
        if step.kind == "write":
            self._set(step.path, step.text, owner)
            return True
        if lines is None:
            self.files[step.path] = Lines("", [], broken="edited before the session read it whole")
            return False
        if lines.broken:
            return False
        edits = step.edits or [(step.old, step.new, step.every)]
        text: str | None = lines.text
        for old, new, every in edits:
            text = _apply(text, old, new, every) if text is not None else None
        if text is None:
            lines.broken = "an edit's old text is not in the replayed file"
            return False
        self._set(step.path, text, owner)
        return True

    def _set(self, path: str, text: str, owner: int | None) -> None:
        before = self.files.get(path) or Lines("", [])
        self.files[path] = Lines(text, _owners(before, text, owner), before.broken)
        if owner is not None:
            self.edited.add(path)


def ranges(lines: Lines) -> list[tuple[int, int, int | None]]:
    """Runs of non-blank lines with one owner, as (first line, last line, owner), 1-based.

    Blank lines neither start, end nor split a run: who "wrote" one is a guess of the diff.
    """
    runs: list[tuple[int, int, int | None]] = []
    for number, (text, owner) in enumerate(zip(split(lines.text), lines.owners, strict=True), 1):
        if not text.strip():
            continue
        if runs and runs[-1][2] == owner:
            runs[-1] = (runs[-1][0], number, owner)
        else:
            runs.append((number, number, owner))
    return runs


# ---------------------------------------------------------------- in git


def _commit(project, message: str, stamp: str) -> None:
    project.now = moment(stamp)
    project.git("add", "-A")
    if project.git("status", "--porcelain").strip():
        project.git("commit", "-q", "-m", message)


def replay(project, steps: list[Step], squash: bool = False) -> Replay:
    """Replay ``steps`` in ``project`` (a ``git_sessions.Project``); the replay, for its owners.

    The files as first read are committed a day before the session; its
    changes are committed where it committed, else when a request that changed
    a file ends; a person's change is committed when the session reads it.
    With ``squash``, the session works on a branch that a person squash-merges
    at the end and deletes.
    """
    done = Replay(steps)
    for path, text in done.start().items():
        project.write(path, text)
    project.now = moment(steps[0].stamp) - timedelta(days=1)
    project.commit("The files before the session")
    if squash:
        project.git("checkout", "-q", "-b", "session")
    changed_at = ""
    for step in steps:
        if step.kind == "prompt" and changed_at:
            _commit(project, f"Request {len(done.requests)}", changed_at)
            changed_at = ""
        if step.kind == "commit":
            _commit(project, step.text, step.stamp)
            changed_at = ""
        elif done.step(step):
            project.write(step.path, done.files[step.path].text)
            changed_at = step.stamp
            if step.kind == "read":  # a person's change, seen by the session: the person commits it
                _commit(project, f"A person's change to {step.path}", step.stamp)
                changed_at = ""
    if changed_at:
        _commit(project, f"Request {len(done.requests)}", changed_at)
    if squash:
        project.git("checkout", "-q", "main")
        project.tick(3600)
        project.git("merge", "-q", "--squash", "session")
        project.commit("The session's work, squashed (#1)")
        project.git("branch", "-q", "-D", "session")
    return done
