"""The journeys of `docs/hooks.md`, one per harness, through the real commands.

A throwaway project and HOME, and the harnesses' own folders in the test's
temporary directory. Claude Code's hook commands are run as Claude Code runs
them (the command string from the settings, through the shell, the event JSON
on stdin); OpenCode's plugin and Pi's extension are the generated modules,
loaded by Node into the stand-in hosts of ``node/``. Each session is written
where its harness writes it, in its format; the historian that reads it after
the session-end event is the real `karni-historian` of this environment.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
from pathlib import Path

import pytest
from karni.cli.hooks.local import LOG_FILE
from karni.cli.main import main

BRIEF_BLOCK = (
    "HISTORY: apps/models.py (my-history)\n"
    "- Hard delete was reverted: it destroyed payment history\n"
)
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


@pytest.fixture(autouse=True)
def harness_folders(tmp_path: Path, monkeypatch) -> None:
    """Keep every harness's sessions (and the historian's search for them) in the test."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path(os.environ["HOME"]) / ".claude"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    monkeypatch.setenv("OMP_CODING_AGENT_DIR", str(tmp_path / "omp-agent"))
    for name in ("OPENCODE_DB", "PI_CODING_AGENT_SESSION_DIR", "KARNI_HISTORIAN", "OMP_PROFILE"):
        monkeypatch.delenv(name, raising=False)


def historian_log(project: Path, waiter) -> str:
    """The hook log, once the background historian's `run` has finished."""
    log = project / ".karni" / "local" / LOG_FILE
    waiter(lambda: log.exists() and " run` exited" in log.read_text(), "the historian's run")
    return log.read_text()


def historian_sessions(project: Path) -> list[tuple[str, str]]:
    """`karni-historian sessions` of ``project``: (session id, harness) per line."""
    result = subprocess.run(
        ["karni-historian", "--project", str(project), "sessions"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return [(line.split()[0], line.split()[1]) for line in result.stdout.splitlines()]


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
            "additionalContext": BRIEF_BLOCK,
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
    log = historian_log(project, waiter)
    assert (SESSION, "claude-code") in historian_sessions(project)
    assert f"ingest --from {shlex.quote(str(transcript))}` exited 0" in log

    capsys.readouterr()
    assert main(["hooks", "uninstall", "--agent", "claude-code", "--scope", "project"]) == 0
    assert settings_path.read_bytes() == before


OPENCODE_SESSION = "ses_3a7c1e5f9ffeHk2mR8pT4sW6vY"
PI_SESSION = "019dbb2f-4791-7e21-8f3a-6b7c8d9e0f1a"


OPENCODE_TABLES = (
    "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT,"
    " slug TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER,"
    " time_updated INTEGER);"
    "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,"
    " time_updated INTEGER, data TEXT);"
    "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
    " time_created INTEGER, time_updated INTEGER, data TEXT);"
)
"""OpenCode's store since 1.2 (``opencode.db``): ``message`` and ``part`` rows hold JSON."""


def opencode_edit_part(project: Path) -> dict:
    """An `edit` call of OpenCode as its store keeps it: a completed `tool` part."""
    return {
        "type": "tool",
        "callID": "toolu_oc_edit",
        "tool": "edit",
        "state": {
            "status": "completed",
            "input": {"filePath": str(project / "apps/models.py"), "oldString": "a"},
            "title": "edit",
            "metadata": {},
            "time": {"start": 1796115600100, "end": 1796115600200},
            "output": "Edit applied successfully.",
        },
    }


def write_opencode_store(project: Path) -> Path:
    """A short OpenCode session in its SQLite store: a prompt, then a step with an `edit`."""
    path = Path(os.environ["XDG_DATA_HOME"]) / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True)
    prompt, step = "msg_f2b3c4d50001Ab3Cd5Ef7Gh9Ij", "msg_f2b3c4d90001Uv9Wx1Yz3Ab5Cd"
    models = {"modelID": "claude-sonnet-4-5", "providerID": "anthropic"}
    messages = [
        (prompt, 1796115600000, {"role": "user", "time": {"created": 1796115600000}}),
        (
            step,
            1796115600050,
            {
                "role": "assistant",
                "time": {"created": 1796115600050, "completed": 1796115600900},
                "parentID": prompt,
                **models,
                "mode": "build",
                "path": {"cwd": str(project), "root": str(project)},
                "finish": "stop",
            },
        ),
    ]
    parts = [
        ("prt_f2b3c4d50002", prompt, {"type": "text", "text": "Make Event soft-deletable"}),
        ("prt_f2b3c4d90002", step, opencode_edit_part(project)),
        ("prt_f2b3c4d90003", step, {"type": "text", "text": "Event is now soft-deletable."}),
    ]
    connection = sqlite3.connect(path)
    with connection:  # commits; closed below
        connection.executescript(OPENCODE_TABLES)
        connection.execute(
            "INSERT INTO session VALUES (?, 'a1b2c3', NULL, 'calm-river', ?, ?, '1.2.10', ?, ?)",
            (OPENCODE_SESSION, str(project), "Soft-delete events", 1796115600000, 1796115601000),
        )
        for id_, created, data in messages:
            connection.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                (id_, OPENCODE_SESSION, created, created, json.dumps(data)),
            )
        for id_, message, data in parts:
            connection.execute(
                "INSERT INTO part VALUES (?, ?, ?, 1796115600100, 1796115600100, ?)",
                (id_, message, OPENCODE_SESSION, json.dumps(data)),
            )
    connection.close()
    return path


def write_pi_session(project: Path) -> Path:
    """A short Pi session file (format version 3) where Pi files the project's sessions."""
    folder = "--" + re.sub(r"[/\\:]", "-", str(project).lstrip("/\\")) + "--"
    path = Path(os.environ["PI_CODING_AGENT_DIR"]) / "sessions" / folder
    path = path / f"2026-12-01T10-00-00-000Z_{PI_SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    call = {
        "type": "toolCall",
        "id": "toolu_pi_edit",
        "name": "edit",
        "arguments": {"path": "apps/models.py", "edits": [{"oldText": "a", "newText": "b"}]},
    }
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Make Event soft-deletable"}]},
        {
            "role": "assistant",
            "content": [call],
            "model": "claude-sonnet-4-5",
            "stopReason": "toolUse",
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_pi_edit",
            "toolName": "edit",
            "content": [{"type": "text", "text": "Successfully replaced text in apps/models.py."}],
            "isError": False,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "stopReason": "stop"},
    ]
    header = {"type": "session", "version": 3, "id": PI_SESSION, "cwd": str(project)}
    entries = [{**header, "timestamp": "2026-12-01T10:00:00.000Z"}]
    for number, message in enumerate(messages, 1):
        entries.append(
            {
                "type": "message",
                "id": f"0000200{number}",
                "parentId": f"0000200{number - 1}" if number > 1 else None,
                "timestamp": f"2026-12-01T10:00:0{number}.000Z",
                "message": {**message, "timestamp": 1796119200000 + number * 1000},
            }
        )
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    return path


EDITS = [("apps/models.py", "1"), ("apps/models.py", "2"), ("apps/views.py", "3")]
"""The journey's edits (file, call number): a file with history twice, then one without."""


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir()}


def with_other_module(folder: Path, name: str, text: str) -> dict[str, bytes]:
    """Put someone else's module where Karni's goes; the folder's contents before install."""
    folder.mkdir(parents=True)
    (folder / name).write_text(text)
    return contents(folder)


def historian_holds(project: Path, waiter, session: tuple[str, str], ingest: str) -> None:
    """After the session-end event: ``ingest`` succeeded and the store lists ``session``."""
    log = historian_log(project, waiter)
    assert f"{ingest}` exited 0" in log
    assert session in historian_sessions(project)


def journey_uninstall(agent: str, folder: Path, before: dict[str, bytes]) -> None:
    """Uninstalling removes the generated file and leaves the folder as it was."""
    assert main(["hooks", "uninstall", "--agent", agent]) == 0
    assert contents(folder) == before


def test_opencode_journey(project, install_hooks, node_host, capsys, waiter):
    plugins = project / ".opencode" / "plugins"
    before = with_other_module(plugins, "notify.js", "export const Notify = async () => ({});\n")
    generated = install_hooks(project, "opencode")

    def edit(path: str, call: str) -> dict:
        arguments = {"filePath": str(project / path), "oldString": "a", "newString": "b"}
        return {"tool": "edit", "sessionID": OPENCODE_SESSION, "callID": call, "args": arguments}

    write_opencode_store(project)
    steps = [edit(path, f"call_{number}") for path, number in EDITS]
    steps.append({"event": "session.idle", "properties": {"sessionID": OPENCODE_SESSION}})
    results = node_host("opencode", generated, {"directory": str(project), "steps": steps})
    assert results == [
        {"output": "tool output\n\n" + BRIEF_BLOCK},
        {"output": "tool output"},
        {"output": "tool output"},
        {"event": "session.idle"},
    ]
    historian_holds(
        project,
        waiter,
        (OPENCODE_SESSION, "opencode"),
        shlex.join(["--project", str(project), "ingest"]),
    )
    capsys.readouterr()
    journey_uninstall("opencode", plugins, before)


def test_pi_journey(project, install_hooks, node_host, capsys, waiter):
    extensions = project / ".pi" / "extensions"
    before = with_other_module(extensions, "todo.ts", "export default function (pi) {}\n")
    generated = install_hooks(project, "pi")

    def edit(path: str, call: str) -> dict:
        change = {"path": str(project / path), "edits": [{"oldText": "a", "newText": "b"}]}
        return {"tool": "edit", "toolCallId": call, "input": change}

    session_file = write_pi_session(project)
    steps = [*(edit(path, f"t{number}") for path, number in EDITS), {"event": "agent_end"}]
    scenario = {
        "cwd": str(project),
        "sessionId": PI_SESSION,
        "sessionFile": str(session_file),
        "steps": steps,
    }
    text = [{"type": "text", "text": "tool output"}]
    assert node_host("pi", generated, scenario) == [
        {"content": [*text, {"type": "text", "text": BRIEF_BLOCK}]},
        {"content": text},
        {"content": text},
        {"event": "agent_end"},
    ]
    historian_holds(
        project, waiter, (PI_SESSION, "pi"), shlex.join(["ingest", "--from", str(session_file)])
    )
    capsys.readouterr()
    journey_uninstall("pi", extensions, before)


CODEX_SESSION = "019cae0b-44a0-7000-88aa-1bbab2a035a5"
GEMINI_SESSION = "3f2a9c1d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"
CODEX_PATCH = (
    "*** Begin Patch\n*** Update File: apps/models.py\n@@\n-class Event: ...\n"
    "+class Event:\n+    deleted_at = None\n*** End Patch\n"
)


def write_codex_rollout(project: Path) -> Path:
    """A short Codex session where Codex writes it: a prompt, an apply_patch, its result."""
    folder = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "12" / "01"
    folder.mkdir(parents=True)
    path = folder / f"rollout-2026-12-01T10-00-00-{CODEX_SESSION}.jsonl"
    meta = {"id": CODEX_SESSION, "cwd": str(project), "cli_version": "0.125.0"}
    records = [
        ("session_meta", meta),
        ("event_msg", {"type": "user_message", "message": "Make Event soft-deletable"}),
        (
            "response_item",
            {
                "type": "custom_tool_call",
                "call_id": "c1",
                "name": "apply_patch",
                "input": CODEX_PATCH,
            },
        ),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"}),
        (
            "event_msg",
            {
                "type": "patch_apply_end",
                "call_id": "c1",
                "success": True,
                "changes": {str(project / "apps/models.py"): {"type": "update"}},
            },
        ),
    ]
    lines = [
        json.dumps({"timestamp": f"2026-12-01T09:00:0{n}.000Z", "type": kind, "payload": payload})
        for n, (kind, payload) in enumerate(records)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_codex_journey(project, monkeypatch, run_command, waiter):
    monkeypatch.chdir(project)
    assert main(["hooks", "install", "--agent", "codex"]) == 0
    hooks_file = project / ".codex" / "hooks.json"
    commands = installed_commands(hooks_file)
    assert set(commands) == {"PostToolUse", "SessionStart", "Stop"}
    edit = {
        "session_id": CODEX_SESSION,
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "transcript_path": None,
        "tool_name": "apply_patch",
        "tool_input": {"command": CODEX_PATCH},
        "tool_response": "Success. Updated the following files:\nM apps/models.py\n",
    }
    first = run_command(commands["PostToolUse"], project, edit)
    assert json.loads(first.stdout) == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": BRIEF_BLOCK}
    }
    transcript = write_codex_rollout(project)
    stop = {"session_id": CODEX_SESSION, "cwd": str(project), "hook_event_name": "Stop"}
    stop["transcript_path"] = str(transcript)
    result = run_command(commands["Stop"], project, stop)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    historian_log(project, waiter)
    assert (CODEX_SESSION, "codex") in historian_sessions(project)
    assert main(["hooks", "uninstall", "--agent", "codex"]) == 0
    assert not hooks_file.exists()


def test_gemini_journey(project, monkeypatch, run_command, waiter):
    monkeypatch.chdir(project)
    assert main(["hooks", "install", "--agent", "gemini", "--before-edit", "block-first"]) == 0
    settings = project / ".gemini" / "settings.json"
    commands = installed_commands(settings)
    assert set(commands) == {"BeforeTool", "SessionStart", "AfterAgent", "SessionEnd"}
    edit = {
        "session_id": GEMINI_SESSION,
        "cwd": str(project),
        "hook_event_name": "BeforeTool",
        "transcript_path": "",
        "tool_name": "replace",
        "tool_input": {"file_path": "apps/models.py", "old_string": "x", "new_string": "y"},
    }
    first = run_command(commands["BeforeTool"], project, edit)
    assert json.loads(first.stdout) == {"decision": "deny", "reason": BRIEF_BLOCK}
    chats = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "tmp" / "shop" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text(str(project))
    transcript = chats / "session-2026-12-01T09-00-3f2a9c1d.jsonl"
    call = {
        "id": "replace-1",
        "name": "replace",
        "args": {"file_path": "apps/models.py", "old_string": "x", "new_string": "y"},
        "status": "success",
        "result": [{"functionResponse": {"id": "replace-1", "response": {"output": "ok"}}}],
    }
    records = [
        {"sessionId": GEMINI_SESSION, "projectHash": "h", "startTime": "2026-12-01T09:00:00Z"},
        {"id": "u1", "type": "user", "content": [{"text": "Make Event soft-deletable"}]},
        {"id": "g1", "type": "gemini", "content": "", "toolCalls": [call]},
    ]
    transcript.write_text("".join(json.dumps(record) + "\n" for record in records))
    end = {"session_id": GEMINI_SESSION, "cwd": str(project), "hook_event_name": "AfterAgent"}
    end["transcript_path"] = str(transcript)
    result = run_command(commands["AfterAgent"], project, end)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    historian_log(project, waiter)
    assert (GEMINI_SESSION, "gemini") in historian_sessions(project)
    assert main(["hooks", "uninstall", "--agent", "gemini"]) == 0
    assert not settings.exists()
