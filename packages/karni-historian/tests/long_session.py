"""A long Claude Code session, written in the harness's real record shapes.

One user request drives several phases of work, as real sessions do: each
phase marks a todo item in progress, reads and edits its own files, runs the
tests (failing, then passing), commits and marks the item completed. Every
phase is about 40 messages, so six phases give a session of hundreds.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

SESSION = "4b1c9e2a-7f3d-4c5e-8a6b-2d9e0f1a3b5c"
START = datetime(2026, 9, 30, 14, 2, tzinfo=UTC)

PHASES = (
    ("Make events soft-deletable", "events/models.py", "deleted_at"),
    ("Hide deleted events from the listing", "events/views.py", "visible"),
    ("Add a restore action to the admin", "events/admin.py", "restore"),
    ("Show the deletion date in the event page", "events/templates/event.html", "deleted"),
    ("Add a migration for deleted_at", "events/migrations/0002_deleted_at.py", "migration"),
    ("Document soft deletion in the README", "docs/events.md", "soft"),
)
REQUEST = (
    "Make events soft-deletable: keep deleted events in the database with a deleted_at "
    "timestamp, hide them everywhere, and let staff restore them. Never hard-delete an event."
)


class _Writer:
    def __init__(self, root: str) -> None:
        self.root = root
        self.records: list[dict[str, object]] = []
        self.clock = START
        self.parent: str | None = None
        self.count = 0

    def _base(self, kind: str) -> dict[str, object]:
        self.count += 1
        self.clock += timedelta(seconds=7)
        uuid = f"00000000-0000-4000-8000-{self.count:012d}"
        record: dict[str, object] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uuid,
            "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.root,
            "sessionId": SESSION,
            "version": "2.1.81",
            "gitBranch": "main",
        }
        self.parent = uuid
        return record

    def prompt(self, text: str) -> None:
        record = self._base("user")
        record["message"] = {"role": "user", "content": text}
        record["promptId"] = f"prompt-{self.count}"
        self.records.append(record)

    def _assistant(self, content: dict[str, object], stop: str) -> None:
        record = self._base("assistant")
        record["message"] = {
            "model": "claude-sonnet-4-5-20250929",
            "id": f"msg_{self.count:05d}",
            "type": "message",
            "role": "assistant",
            "content": [content],
            "stop_reason": stop,
            "usage": {"input_tokens": 3, "output_tokens": 20},
        }
        self.records.append(record)

    def say(self, text: str) -> None:
        self._assistant({"type": "text", "text": text}, "end_turn")

    def tool(
        self, name: str, tool_input: dict[str, object], output: str, *, error: bool = False
    ) -> None:
        call_id = f"toolu_{self.count:06d}"
        self._assistant(
            {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}, "tool_use"
        )
        result = self._base("user")
        content: dict[str, object] = {
            "tool_use_id": call_id,
            "type": "tool_result",
            "content": output,
        }
        if error:
            content["is_error"] = True
        result["message"] = {"role": "user", "content": [content]}
        result["toolUseResult"] = {"stdout": output, "stderr": "", "interrupted": False}
        self.records.append(result)


def _todos(current: int, done: int) -> list[dict[str, str]]:
    items = []
    for index, (title, _path, _word) in enumerate(PHASES):
        status = "completed" if index < done else "in_progress" if index == current else "pending"
        items.append({"content": title, "status": status, "activeForm": title})
    return items


def _phase(writer: _Writer, index: int) -> None:
    title, path, word = PHASES[index]
    absolute = f"{writer.root}/{path}"
    writer.tool(
        "TodoWrite", {"todos": _todos(index, index)}, "Todos have been modified successfully."
    )
    writer.say(f"Working on: {title.lower()}.")
    for step in range(6):
        writer.tool("Read", {"file_path": absolute}, f"     1\tline {step} of {path}")
        writer.tool("Grep", {"pattern": word, "path": writer.root}, f"{path}:1:{word}")
    writer.tool(
        "Edit",
        {
            "file_path": absolute,
            "old_string": f"# {word} placeholder\n",
            "new_string": f"# {word}\n{word}_one = 1\n{word}_two = 2\n",
        },
        f"The file {absolute} has been updated.",
    )
    writer.tool("Bash", {"command": "uv run pytest -q"}, "1 failed, 11 passed", error=True)
    writer.say(f"The test of {word} fails because the fixture still expects the old value.")
    writer.tool(
        "Edit",
        {
            "file_path": absolute,
            "old_string": f"{word}_two = 2\n",
            "new_string": f"{word}_two = 3\n",
        },
        f"The file {absolute} has been updated.",
    )
    writer.tool("Bash", {"command": "uv run pytest -q"}, "12 passed")
    sha = f"{index + 1:x}a7c3e9{index + 1:x}"
    message = title.lower()
    writer.tool(
        "Bash",
        {"command": f'git add -A && git commit -m "{message}"'},
        f"[main {sha}] {message}\n 1 file changed, 3 insertions(+), 1 deletion(-)",
    )
    writer.say(f"Committed {sha}: {message}.")
    writer.tool(
        "TodoWrite",
        {"todos": _todos(index + 1, index + 1)},
        "Todos have been modified successfully.",
    )


def long_session(root: str, phases: int = len(PHASES), request: str = REQUEST) -> str:
    """The JSON lines of the session, for the project at ``root``."""
    writer = _Writer(root)
    writer.prompt(request)
    writer.say("I'll start with the model, then the views, the admin and the docs.")
    for index in range(phases):
        _phase(writer, index)
    writer.say(f"All {phases} items are done and committed; the test suite passes.")
    return "".join(json.dumps(record) + "\n" for record in writer.records)
