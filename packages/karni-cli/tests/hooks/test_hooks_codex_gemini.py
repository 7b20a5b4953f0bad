"""Codex and Gemini CLI hooks: merged into their JSON files, briefs in their shapes, Aider has none.

The event payloads follow the harnesses' hook references: Codex sends
Claude Code's fields and, for ``apply_patch``, the patch in
``tool_input.command``; Gemini CLI sends ``tool_name``/``tool_input`` with
``file_path``. Neither adds context before a call: the brief comes with the
edit's result (PostToolUse, AfterTool) or, in block-first mode, as the reason
the edit before it is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from karni.cli.main import main

BRIEF_BLOCK = (
    "HISTORY: apps/models.py (my-history)\n"
    "- Hard delete was reverted: it destroyed payment history\n"
)
PATCH = (
    "*** Begin Patch\n*** Update File: apps/models.py\n@@\n-class Event: ...\n"
    "+class Event:\n+    pass\n*** Update File: apps/views.py\n@@\n+x = 1\n*** End Patch\n"
)


def karni(capsys, *arguments: str) -> str:
    assert main(list(arguments)) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def codex_event(project: Path, name: str, session: str = "c-1") -> dict:
    return {
        "session_id": session,
        "transcript_path": str(project / "rollout.jsonl"),
        "cwd": str(project),
        "hook_event_name": name,
        "model": "gpt-5.5",
        "turn_id": "t-1",
        "tool_name": "apply_patch",
        "tool_input": {"command": PATCH},
        "tool_use_id": "call_1",
    }


def gemini_event(project: Path, name: str, tool: str = "replace", session: str = "g-1") -> dict:
    return {
        "session_id": session,
        "transcript_path": str(project / "session.jsonl"),
        "cwd": str(project),
        "hook_event_name": name,
        "timestamp": "2026-03-03T09:00:00.000Z",
        "tool_name": tool,
        "tool_input": {"file_path": "apps/models.py", "old_string": "a", "new_string": "b"},
    }


def output(result) -> dict:
    assert result.returncode == 0 and result.stderr == ""
    return json.loads(result.stdout)


def test_codex_context_mode_briefs_with_the_edits_result(project, run_hook):
    before = run_hook(project, codex_event(project, "PreToolUse"), "codex", "PreToolUse")
    assert (before.returncode, before.stdout) == (0, "")  # Codex takes no context before a call
    after = output(run_hook(project, codex_event(project, "PostToolUse"), "codex", "PostToolUse"))
    assert after == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": BRIEF_BLOCK}
    }
    again = run_hook(project, codex_event(project, "PostToolUse"), "codex", "PostToolUse")
    assert again.stdout == ""  # once per file per session


def test_codex_block_first_denies_the_patch_with_the_brief(project, run_hook):
    event = codex_event(project, "PreToolUse")
    denied = output(run_hook(project, event, "codex", "PreToolUse", "--before-edit", "block-first"))
    assert denied == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": BRIEF_BLOCK,
        }
    }
    retry = run_hook(project, event, "codex", "PreToolUse", "--before-edit", "block-first")
    assert retry.stdout == ""


def test_gemini_briefs_after_the_tool_and_denies_in_block_first(project, run_hook):
    after = output(run_hook(project, gemini_event(project, "AfterTool"), "gemini", "AfterTool"))
    assert after == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": BRIEF_BLOCK}
    }
    event = gemini_event(project, "BeforeTool", tool="write_file", session="g-2")
    assert run_hook(project, event, "gemini", "BeforeTool").stdout == ""
    denied = run_hook(project, event, "gemini", "BeforeTool", "--before-edit", "block-first")
    assert output(denied) == {"decision": "deny", "reason": BRIEF_BLOCK}
    read = {**gemini_event(project, "AfterTool", session="g-3"), "tool_name": "read_file"}
    assert run_hook(project, read, "gemini", "AfterTool").stdout == ""


def test_session_end_starts_the_historian_on_the_transcript(project, run_hook, fake_historian):
    transcript = project / "rollout.jsonl"
    transcript.write_text("{}\n")
    result = run_hook(project, codex_event(project, "Stop"), "codex", "Stop")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert fake_historian.release_after_start() == [
        ["--project", str(project), "ingest", "--from", str(transcript)],
        ["--project", str(project), "run"],
    ]


EXISTING_CODEX = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scan.sh"}]}]
    }
}
EXISTING_GEMINI = (
    '{\n    "theme": "GitHub",\n    "hooks": {\n        "enabled": true,\n'
    '        "SessionStart": [\n            {\n                "hooks": [\n'
    '                    {"type": "command", "command": "./hello.sh"}\n'
    "                ]\n            }\n        ]\n    },\n"
    '    "general": {"vimMode": true}\n}\n'
)


@pytest.mark.parametrize("mode", ["context", "block-first"])
def test_codex_install_merges_and_uninstall_restores_every_byte(project, monkeypatch, capsys, mode):
    monkeypatch.chdir(project)
    path = project / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING_CODEX, indent=2) + "\n")
    before = path.read_bytes()
    out = karni(capsys, "hooks", "install", "--agent", "codex", "--before-edit", mode)
    assert out == f"codex hooks installed in .codex/hooks.json (before an edit: {mode})\n"
    hooks = json.loads(path.read_text())["hooks"]
    edit_event = "PostToolUse" if mode == "context" else "PreToolUse"
    flag = "" if mode == "context" else " --before-edit block-first"
    assert hooks[edit_event][-1] == {
        "matcher": "apply_patch",
        "hooks": [
            {"type": "command", "command": f"karni hook codex {edit_event}{flag}", "timeout": 30}
        ],
    }
    assert hooks["PreToolUse"][0] == EXISTING_CODEX["hooks"]["PreToolUse"][0]
    assert set(hooks) >= {"SessionStart", "Stop"}
    assert karni(capsys, "hooks", "install", "--agent", "codex", "--before-edit", mode).startswith(
        "codex hooks already installed"
    )
    status = karni(capsys, "hooks", "status")
    assert f"  codex       project .codex/hooks.json: installed (before an edit: {mode})" in status
    karni(capsys, "hooks", "uninstall", "--agent", "codex")
    assert path.read_bytes() == before


def test_gemini_install_keeps_the_settings_layout_and_its_switches(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(EXISTING_GEMINI)
    karni(capsys, "hooks", "install", "--agent", "gemini")
    settings = json.loads(path.read_text())
    assert settings["theme"] == "GitHub" and settings["general"] == {"vimMode": True}
    assert settings["hooks"]["enabled"] is True
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "./hello.sh"
    [after] = settings["hooks"]["AfterTool"]
    assert after["matcher"] == "write_file|replace"
    assert after["hooks"] == [
        {
            "type": "command",
            "name": "karni-history",
            "command": "karni hook gemini AfterTool",
            "timeout": 30000,
        }
    ]
    assert path.read_text().startswith('{\n    "theme"')  # four spaces, as the file had
    karni(capsys, "hooks", "uninstall", "--agent", "gemini")
    assert json.loads(path.read_text()) == json.loads(EXISTING_GEMINI)


def test_a_gemini_settings_file_with_comments_is_refused(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  // my theme\n  "theme": "GitHub"\n}\n')
    assert main(["hooks", "install", "--agent", "gemini"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "holds comments, which Karni would lose by rewriting it" in error
    assert path.read_text() == '{\n  // my theme\n  "theme": "GitHub"\n}\n'


def test_user_scopes_follow_the_harness_variables(project, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(project)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    karni(capsys, "hooks", "install", "--agent", "codex", "--scope", "user")
    karni(capsys, "hooks", "install", "--agent", "gemini", "--scope", "user")
    assert (tmp_path / "codex-home" / "hooks.json").is_file()
    assert (tmp_path / "gemini-home" / ".gemini" / "settings.json").is_file()
    assert main(["hooks", "install", "--agent", "codex", "--scope", "local"]) == 1
    assert "codex has no personal per-project hook file" in capsys.readouterr().err


def test_aider_has_no_hooks_and_status_says_so(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["hooks", "install", "--agent", "aider"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "aider has no hooks to install" in error and "karni-historian ingest" in error
    status = karni(capsys, "hooks", "status")
    assert "  aider       no hooks: Aider runs no hooks" in status
    facts = json.loads(karni(capsys, "hooks", "status", "--json"))
    [row] = [row for row in facts["hooks"] if row["agent"] == "aider"]
    assert row["state"] == "unsupported" and row["scope"] is None
    doctor = json.loads(karni(capsys, "doctor", "--json"))
    assert all(row["agent"] != "aider" for row in doctor["hooks"])
