"""`karni hook claude-code EVENT`: briefs before edits and at session start, never a failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

from karni.cli.hooks.local import LOG_FILE

BRIEF_BLOCK = (
    "HISTORY: apps/models.py (my-history)\n"
    "- Hard delete was reverted: it destroyed payment history\n"
)


def edit_event(project: Path, path: str, session: str = "s-1", tool: str = "Edit") -> dict:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {
        "session_id": session,
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {key: path, "old_string": "a", "new_string": "b"},
        "tool_use_id": "toolu_1",
    }


def context_of(result) -> str:
    assert result.returncode == 0 and result.stderr == ""
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    return output["additionalContext"]


def test_the_brief_is_exactly_what_context_with_history_appends(project, run_hook, run_cli):
    result = run_hook(
        project, edit_event(project, str(project / "apps/models.py")), "claude-code", "PreToolUse"
    )
    assert context_of(result) == BRIEF_BLOCK
    plain = run_cli("context", cwd=project).stdout
    with_history = run_cli("context", "--with-history", "apps/models.py", cwd=project).stdout
    assert with_history == plain + BRIEF_BLOCK


def test_once_per_file_per_session(project, run_hook):
    event = edit_event(project, str(project / "apps/models.py"))
    assert context_of(run_hook(project, event, "claude-code", "PreToolUse"))
    for tool in ("Edit", "Write", "MultiEdit"):
        again = run_hook(project, {**event, "tool_name": tool}, "claude-code", "PreToolUse")
        assert (again.returncode, again.stdout) == (0, "")
    other_session = edit_event(project, str(project / "apps/models.py"), session="s-2")
    assert context_of(run_hook(project, other_session, "claude-code", "PreToolUse"))
    assert (project / ".karni" / "local" / ".gitignore").read_text() == "*\n"


def test_nothing_for_a_file_without_history_or_outside_the_project(project, run_hook, tmp_path):
    for path in (str(project / "apps/views.py"), str(tmp_path / "elsewhere.py"), "/etc/passwd"):
        result = run_hook(project, edit_event(project, path), "claude-code", "PreToolUse")
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (project / ".karni" / "local" / LOG_FILE).exists()


def test_a_relative_path_is_read_from_the_event_cwd(project, run_hook, tmp_path):
    event = {**edit_event(project, "models.py"), "cwd": str(project / "apps")}
    assert context_of(run_hook(tmp_path, event, "claude-code", "PreToolUse")) == BRIEF_BLOCK


def test_notebook_edits_and_other_tools(project, run_hook, record_brief):
    record_brief(project, "apps/report.ipynb", "- cells must stay in order\n")
    notebook = edit_event(project, str(project / "apps/report.ipynb"), tool="NotebookEdit")
    assert "cells must stay in order" in context_of(
        run_hook(project, notebook, "claude-code", "PreToolUse")
    )
    read = {**edit_event(project, str(project / "apps/models.py")), "tool_name": "Read"}
    assert run_hook(project, read, "claude-code", "PreToolUse").stdout == ""


def test_block_first_denies_the_first_edit_with_the_brief(project, run_hook):
    event = edit_event(project, str(project / "apps/models.py"))
    first = run_hook(project, event, "claude-code", "PreToolUse", "--before-edit", "block-first")
    assert json.loads(first.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": BRIEF_BLOCK,
        }
    }
    retry = run_hook(project, event, "claude-code", "PreToolUse", "--before-edit=block-first")
    assert (retry.returncode, retry.stdout) == (0, "")


def test_session_start_gives_the_project_brief(project, run_hook, record_brief):
    event = {
        "session_id": "s-1",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert run_hook(project, event, "claude-code", "SessionStart").stdout == ""
    record_brief(project, None, "- Decision: money is stored in cents\n")
    output = json.loads(run_hook(project, event, "claude-code", "SessionStart").stdout)
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "HISTORY: project (my-history)\n"
            "- Decision: money is stored in cents\n",
        }
    }


def test_a_resumed_session_is_handed_only_what_is_new(project, run_hook, record_brief):
    def session_start(source, session="s-1"):
        event = {"session_id": session, "cwd": str(project), "source": source}
        stdout = run_hook(project, event, "claude-code", "SessionStart").stdout
        return json.loads(stdout)["hookSpecificOutput"]["additionalContext"] if stdout else None

    heading = "HISTORY: project (my-history)\n"
    record_brief(project, None, "- Decision: money is stored in cents\n")
    assert session_start("startup") == heading + "- Decision: money is stored in cents\n"
    assert session_start("resume") is None  # the conversation still holds it
    record_brief(
        project, None, "- Decision: money is stored in cents\n- Since then: refunds are events\n"
    )
    assert session_start("resume") == "- Since then: refunds are events\n"
    assert session_start("resume") is None
    whole = heading + "- Decision: money is stored in cents\n- Since then: refunds are events\n"
    assert session_start("compact") == whole  # a new conversation gets it whole
    assert session_start("resume", session="s-2") == whole  # never handed before
    record_brief(project, None, "- Decision: money is stored in pennies\n")
    assert session_start("resume") == heading + "- Decision: money is stored in pennies\n"


def test_any_error_exits_0_prints_nothing_and_logs_one_line(project, run_hook):
    cases = [
        ("{not json", ("claude-code", "PreToolUse")),
        ("[1, 2]", ("claude-code", "PreToolUse")),
        ("{}", ("claude-code", "NoSuchEvent")),
        ("{}", ("no-such-agent", "PreToolUse")),
        ("{}", ("claude-code", "PreToolUse", "--before-edit", "sometimes")),
    ]
    for payload, arguments in cases:
        result = run_hook(project, payload, *arguments)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), arguments
    lines = (project / ".karni" / "local" / LOG_FILE).read_text().splitlines()
    assert len(lines) == len(cases)
    assert "not JSON" in lines[0] and "not an object" in lines[1]
    assert "NoSuchEvent" in lines[2] and "no-such-agent" in lines[3] and "sometimes" in lines[4]


def test_a_broken_provider_never_reaches_the_agent(project, run_hook, monkeypatch):
    broken = project / ".my-history" / "apps__models.py"
    broken.unlink()
    broken.mkdir()  # reading the brief now raises inside the provider
    result = run_hook(
        project, edit_event(project, str(project / "apps/models.py")), "claude-code", "PreToolUse"
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_outside_any_project_nothing_happens(tmp_path, run_hook, store_provider):
    folder = tmp_path / "not-a-project"
    folder.mkdir()
    event = edit_event(folder, str(folder / "a.py"))
    result = run_hook(folder, event, "claude-code", "PreToolUse")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert os.listdir(folder) == []


def test_a_linked_local_folder_is_never_written_through(project, run_hook, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".karni").mkdir()
    (project / ".karni" / "local").symlink_to(elsewhere)
    result = run_hook(
        project, edit_event(project, str(project / "apps/models.py")), "claude-code", "PreToolUse"
    )
    assert (result.returncode, result.stdout) == (0, "")  # no record can be kept: no brief
    assert list(elsewhere.iterdir()) == []


def test_the_hook_imports_no_more_than_context_with_history(project, probe_imports):
    """Which modules get imported, before an edit of a file with and without history."""
    context = probe_imports(project, ["context", "--with-history", "apps/models.py"]).modules
    for path in ("apps/views.py", "apps/models.py"):
        event = json.dumps(edit_event(project, str(project / path))).encode()
        hook = probe_imports(project, ["hook", "claude-code", "PreToolUse"], stdin=event).modules
        extra = {name for name in hook - context if not name.startswith("karni.cli.hooks")}
        # The event and the record are JSON, read and written without `json`
        # (it brings in `re`); remembering a brief needs the lock.
        json_modules = {"_json", "karni.agent.common.jsontext"}
        allowed = {"karni.cli.commands.hook", "karni.cli.config", "karni.cli.config.state", "fcntl"}
        allowed |= json_modules
        assert extra <= allowed, extra
        assert not {"subprocess", "argparse", "json", "karni.cli.hooks.install"} & hook


def test_a_file_already_briefed_loads_no_history_layer(project, run_hook, probe_imports):
    """The second edit of a file in a session reads one record: no provider, no `json`."""
    event = edit_event(project, str(project / "apps/models.py"))
    first = run_hook(project, event, "claude-code", "PreToolUse")
    assert context_of(first)
    argv = ["hook", "claude-code", "PreToolUse"]
    done = probe_imports(project, argv, stdin=json.dumps(event).encode())
    assert (done.returncode, done.stdout) == (0, ""), done.stderr  # briefed once is enough
    modules = done.modules
    heavy = {"json", "re", "pathlib", "typing", "fcntl", "karni.agent.history"}
    assert "karni.cli.hooks.seen" in modules
    assert not heavy & modules, heavy & modules


def test_hooks_running_at_once_brief_a_file_once(project):
    import subprocess
    import sys

    event = json.dumps(edit_event(project, str(project / "apps/models.py")))
    command = [sys.executable, "-m", "karni.cli", "hook", "claude-code", "PreToolUse"]
    processes = [
        subprocess.Popen(
            command,
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    outputs = [process.communicate(event, timeout=120) for process in processes]
    assert [process.returncode for process in processes] == [0] * 8
    assert sorted(bool(out) for out, _ in outputs) == [False] * 7 + [True]
    assert all(err == "" for _, err in outputs)


def test_a_corrupt_record_counts_as_nothing_briefed(project, run_hook):
    local = project / ".karni" / "local"
    local.mkdir(parents=True)
    (local / "hooks-briefed.json").write_text("{ not json")
    event = edit_event(project, str(project / "apps/models.py"))
    assert context_of(run_hook(project, event, "claude-code", "PreToolUse")) == BRIEF_BLOCK
    record = json.loads((local / "hooks-briefed.json").read_text())
    assert record["claude-code s-1"][1] == ["apps/models.py"]
