"""A project for the timeline tests: the bundled example session and a hostile one, ingested.

The example is ``examples/sessions/claude-code-soft-delete.jsonl`` (as
``scripts/demo`` installs it); the second session is written here in Claude
Code's own format, modelled on it: one prompt full of markup and control
characters, an edit of another file, a result, a reply.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import install_example
from karni_historian.cli import main

HOSTILE_ID = "4e1d2c3b-7a6f-4b5e-9d8c-0f1e2d3c4b5a"

PAYLOAD = (
    "<script>window.__pwned = 1</script>"
    '<img src=x onerror="window.__pwned = 2">'
    "</script><!-- {{SCRIPT}} & \u2028\u2029"
)
"""Markup that would run if the page ever parsed transcript text as HTML."""
HOSTILE_PROMPT = f"List sold tickets per event \x1b[31mnow\x1b[0m {PAYLOAD}"
"""The hostile session's prompt: the payload, and an escape sequence the page must drop."""
SHOWN_PROMPT = f"List sold tickets per event now {PAYLOAD}".replace("\u2028\u2029", "").strip()
"""The prompt as the page shows it: cleaned of the escape sequence and the line separators."""


def _record(number: int, kind: str, timestamp: str, message: dict, **extra: object) -> str:
    record = {
        "parentUuid": None if number == 1 else f"7a1b2c3d-{number - 1:04d}-4e5f-8a9b-000000000000",
        "isSidechain": False,
        "userType": "external",
        "cwd": "__PROJECT__",
        "sessionId": HOSTILE_ID,
        "version": "2.1.81",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"7a1b2c3d-{number:04d}-4e5f-8a9b-000000000000",
        "timestamp": timestamp,
        "message": message,
        **extra,
    }
    return json.dumps(record, ensure_ascii=False)


def _assistant(number: int, content: list[dict]) -> dict:
    return {
        "model": "claude-sonnet-4-5-20250929",
        "id": f"msg_01Ho{number:05d}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
        "usage": {"input_tokens": 12, "output_tokens": 48},
    }


def hostile_session() -> str:
    """The hostile session's JSONL, its project folder written ``__PROJECT__``."""
    path = "__PROJECT__/apps/tickets/views.py"
    edit = {
        "type": "tool_use",
        "id": "toolu_01Ho0001",
        "name": "Edit",
        "input": {
            "file_path": path,
            "old_string": "def sold(request):\n    pass\n",
            "new_string": "def sold(request):\n    tickets = Ticket.objects.sold()\n"
            "    return render(request, 'sold.html', {'tickets': tickets})\n",
            "replace_all": False,
        },
    }
    result = {
        "tool_use_id": "toolu_01Ho0001",
        "type": "tool_result",
        "content": f"The file {path} has been updated.",
    }
    reply = {"type": "text", "text": f"Done: the sold tickets are listed. {PAYLOAD}"}
    lines = [
        _record(1, "user", "2026-10-02T09:00:00Z", {"role": "user", "content": HOSTILE_PROMPT}),
        _record(2, "assistant", "2026-10-02T09:00:20Z", _assistant(2, [edit]), requestId="r2"),
        _record(3, "user", "2026-10-02T09:00:21Z", {"role": "user", "content": [result]}),
        _record(4, "assistant", "2026-10-02T09:00:40Z", _assistant(4, [reply]), requestId="r4"),
    ]
    return "\n".join(lines) + "\n"


def make_project(tmp_path: Path, monkeypatch: object, *, hostile: bool = True) -> Path:
    """A project with the example session (and the hostile one), ingested and wrapped up.

    The harness and user folders are under ``tmp_path`` (the ``user_folders``
    fixture's environment must be set); the working directory becomes the project.
    """
    root = tmp_path / "eventsite"
    root.mkdir()
    (root / "manage.py").write_text("")
    folder = install_example(root, tmp_path / "claude")
    if hostile:
        (folder / f"{HOSTILE_ID}.jsonl").write_text(
            hostile_session().replace("__PROJECT__", str(root)), encoding="utf-8"
        )
    monkeypatch.chdir(root)  # type: ignore[attr-defined]
    assert main(["-q", "ingest"]) == 0
    assert main(["-q", "wrapup", "1"]) == 0
    return root
