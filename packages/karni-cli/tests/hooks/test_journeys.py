"""The journeys of `docs/hooks.md` for Claude Code, through the real commands.

A throwaway project and HOME; the settings file already holds other hooks;
the hook commands are run as Claude Code runs them (the command string from
the settings, through the shell, the event JSON on stdin); the historian is
the real `karni-historian` of this environment. (The OpenCode and Pi journeys
are in test_generated_js.py, through their generated modules.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from karni.cli.hooks.local import LOG_FILE
from karni.cli.main import main

SESSION = "5f0c9a12-7b3d-4e2a-9c1f-2d8e6b4a0c31"
SETTINGS = {
    "permissions": {"allow": ["Bash(pytest)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]}
        ],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye >> /tmp/x"}]}],
    },
}


def installed_commands(settings_path: Path) -> dict[str, str]:
    settings = json.loads(settings_path.read_text())
    return {
        event: hook["command"]
        for event, groups in settings["hooks"].items()
        for group in groups
        for hook in group["hooks"]
        if hook["command"].startswith("karni ")
    }


def write_transcript(home: Path, project: Path) -> Path:
    """A short Claude Code session in its own format: a prompt, an Edit, its result."""
    key = re.sub(r"[^A-Za-z0-9]", "-", str(project))
    path = home / ".claude" / "projects" / key / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    common = {
        "sessionId": SESSION,
        "cwd": str(project),
        "version": "2.1.90",
        "gitBranch": "main",
        "isSidechain": False,
        "userType": "external",
    }
    edit = {
        "type": "tool_use",
        "id": "toolu_01E",
        "name": "Edit",
        "input": {
            "file_path": str(project / "apps/models.py"),
            "old_string": "class Event: ...",
            "new_string": "class Event:\n    pass",
        },
    }
    records = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": "2026-12-01T09:00:00.000Z",
            "message": {"role": "user", "content": "Make Event soft-deletable"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "timestamp": "2026-12-01T09:00:02.000Z",
            "requestId": "req_1",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [edit],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {
            "type": "user",
            "uuid": "u2",
            "parentUuid": "a1",
            "timestamp": "2026-12-01T09:00:03.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01E", "content": "Updated"}
                ],
            },
            "toolUseResult": {"filePath": str(project / "apps/models.py")},
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "parentUuid": "u2",
            "timestamp": "2026-12-01T09:00:05.000Z",
            "requestId": "req_2",
            "message": {
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": "Event is now soft-deletable."}],
                "usage": {"input_tokens": 12, "output_tokens": 6},
            },
        },
    ]
    path.write_text("".join(json.dumps({**r, **common}) + "\n" for r in records))
    return path


def test_claude_code_journey(project, monkeypatch, capsys, run_command, waiter):
    home = Path(os.environ["HOME"])
    settings_path = project / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    settings_path.write_text(json.dumps(SETTINGS, indent=2) + "\n")
    before = settings_path.read_bytes()
    monkeypatch.chdir(project)
    assert main(["hooks", "install", "--agent", "claude-code", "--scope", "project"]) == 0
    commands = installed_commands(settings_path)
    assert set(commands) == {"PreToolUse", "SessionStart", "Stop", "SessionEnd"}

    def edit(path: str) -> dict:
        return {
            "session_id": SESSION,
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "transcript_path": str(home / "t.jsonl"),
            "permission_mode": "default",
            "tool_name": "Edit",
            "tool_use_id": "toolu_1",
            "tool_input": {"file_path": str(project / path), "old_string": "x", "new_string": "y"},
        }

    first = run_command(commands["PreToolUse"], project, edit("apps/models.py"))
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": "HISTORY: apps/models.py (my-history)\n"
            "- Hard delete was reverted: it destroyed payment history\n",
        }
    }
    again = run_command(commands["PreToolUse"], project, edit("apps/models.py"))
    assert (again.returncode, again.stdout) == (0, "")
    no_history = run_command(commands["PreToolUse"], project, edit("apps/views.py"))
    assert (no_history.returncode, no_history.stdout) == (0, "")

    transcript = write_transcript(home, project)
    stop = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    result = run_command(commands["Stop"], project, stop)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    log = project / ".karni" / "local" / LOG_FILE
    waiter(lambda: log.exists() and " run` exited" in log.read_text(), "the historian's run")
    sessions = subprocess.run(
        ["karni-historian", "--project", str(project), "sessions"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sessions.returncode == 0, sessions.stderr
    assert SESSION[:8] in sessions.stdout
    assert "ingest --from" in log.read_text() and "exited 0" in log.read_text()

    capsys.readouterr()
    assert main(["hooks", "uninstall", "--agent", "claude-code", "--scope", "project"]) == 0
    assert settings_path.read_bytes() == before
