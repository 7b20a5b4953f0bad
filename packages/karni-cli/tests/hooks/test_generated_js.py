"""The generated OpenCode plugin and Pi extension, loaded by Node into stand-in hosts.

The hosts (``node/*.mjs``) follow the harnesses' documented plugin and
extension APIs; the modules they load are byte for byte what ``karni hooks
install`` wrote, and they call the real ``karni`` on PATH.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

BRIEF_BLOCK = (
    "HISTORY: apps/models.py (my-history)\n"
    "- Hard delete was reverted: it destroyed payment history\n"
)
PROJECT_BRIEF = "HISTORY: project (my-history)\n- Decision: money is stored in cents\n"


def test_the_generated_modules_are_plain_javascript(node, project, install_hooks):
    for agent in ("opencode", "pi"):
        generated = install_hooks(project, agent)
        check = subprocess.run([node, "--check", str(generated)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def opencode_edit(project: Path, path: str, call: str) -> dict:
    return {
        "tool": "edit",
        "sessionID": "ses_1",
        "callID": call,
        "args": {"filePath": str(project / path), "oldString": "a", "newString": "b"},
    }


def test_opencode_journey(project, install_hooks, node_host, record_brief, fake_historian):
    generated = install_hooks(project, "opencode")
    record_brief(project, None, "- Decision: money is stored in cents\n")
    steps = [
        {"system": True, "sessionID": "ses_1"},
        opencode_edit(project, "apps/models.py", "call_1"),
        opencode_edit(project, "apps/models.py", "call_2"),
        opencode_edit(project, "apps/views.py", "call_3"),
        {
            "tool": "read",
            "sessionID": "ses_1",
            "callID": "call_4",
            "args": {"filePath": str(project / "apps/models.py")},
        },
        {"system": True, "sessionID": "ses_1"},
        {"event": "session.idle", "properties": {"sessionID": "ses_1"}},
    ]
    results = node_host("opencode", generated, {"directory": str(project), "steps": steps})
    assert results == [
        {"system": ["base prompt", PROJECT_BRIEF]},
        {"output": "tool output\n\n" + BRIEF_BLOCK},
        {"output": "tool output"},
        {"output": "tool output"},
        {"output": "tool output"},
        {"system": ["base prompt", PROJECT_BRIEF]},
        {"event": "session.idle"},
    ]
    assert fake_historian.release_after_start() == [
        ["--project", str(project), "ingest"],
        ["--project", str(project), "run"],
    ]


def test_opencode_asks_again_each_turn_and_keeps_the_brief_within_one(
    project, install_hooks, node_host, record_brief, fake_historian
):
    generated = install_hooks(project, "opencode")
    record_brief(project, None, "- Decision: money is stored in cents\n")
    later = "- Decision: money is stored in cents\n- Since then: refunds are events\n"
    store = str(project / ".my-history" / "PROJECT")
    steps = [
        {"system": True, "sessionID": "ses_1"},
        {"write": store, "text": later},
        {"system": True, "sessionID": "ses_1"},  # the same turn: the same bytes
        {"event": "session.idle", "properties": {"sessionID": "ses_1"}},
        {"system": True, "sessionID": "ses_1"},  # the next turn asks again
    ]
    results = node_host("opencode", generated, {"directory": str(project), "steps": steps})
    assert results == [
        {"system": ["base prompt", PROJECT_BRIEF]},
        {"wrote": store},
        {"system": ["base prompt", PROJECT_BRIEF]},
        {"event": "session.idle"},
        {"system": ["base prompt", "HISTORY: project (my-history)\n" + later]},
    ]
    fake_historian.release_after_start()


def test_opencode_block_first(project, install_hooks, node_host):
    generated = install_hooks(project, "opencode", "--before-edit", "block-first")
    steps = [
        opencode_edit(project, "apps/models.py", "c1"),
        opencode_edit(project, "apps/models.py", "c2"),
    ]
    results = node_host("opencode", generated, {"directory": str(project), "steps": steps})
    assert results == [{"blocked": BRIEF_BLOCK}, {"output": "tool output"}]


def pi_edit(project: Path, path: str, call: str, tool: str = "edit") -> dict:
    return {
        "tool": tool,
        "toolCallId": call,
        "input": {"path": str(project / path), "edits": [{"oldText": "a", "newText": "b"}]},
    }


def test_pi_journey(project, tmp_path, install_hooks, node_host, record_brief, fake_historian):
    generated = install_hooks(project, "pi")
    record_brief(project, None, "- Decision: money is stored in cents\n")
    session_file = tmp_path / "pi-sessions" / "2026-12-01T10-00-00_0199.jsonl"
    session_file.parent.mkdir()
    session_file.write_text('{"type":"session","version":3,"id":"0199"}\n')
    steps = [
        {"prompt": "make events soft-deletable"},
        pi_edit(project, "apps/models.py", "t1"),
        pi_edit(project, "apps/models.py", "t2", tool="write"),
        pi_edit(project, "apps/views.py", "t3"),
        {"prompt": "and the admin"},
        {"event": "agent_end"},
    ]
    scenario = {
        "cwd": str(project),
        "sessionId": "0199",
        "sessionFile": str(session_file),
        "steps": steps,
    }
    results = node_host("pi", generated, scenario)
    text = [{"type": "text", "text": "tool output"}]
    assert results == [
        {"systemPrompt": "base prompt\n\n" + PROJECT_BRIEF},
        {"content": [*text, {"type": "text", "text": BRIEF_BLOCK}]},
        {"content": text},
        {"content": text},
        {"systemPrompt": "base prompt\n\n" + PROJECT_BRIEF},
        {"event": "agent_end"},
    ]
    assert fake_historian.release_after_start() == [
        ["--project", str(project), "ingest", "--from", str(session_file)],
        ["--project", str(project), "run"],
    ]


def test_pi_asks_again_each_run_and_keeps_the_brief_within_one(
    project, install_hooks, node_host, record_brief, fake_historian
):
    generated = install_hooks(project, "pi")
    record_brief(project, None, "- Decision: money is stored in cents\n")
    later = "- Decision: money is stored in cents\n- Since then: refunds are events\n"
    store = str(project / ".my-history" / "PROJECT")
    steps = [
        {"prompt": "soft-delete events"},
        {"write": store, "text": later},
        {"event": "agent_end"},
        {"prompt": "and the admin"},
    ]
    scenario = {"cwd": str(project), "sessionId": "0199", "steps": steps}
    results = node_host("pi", generated, scenario)
    assert results == [
        {"systemPrompt": "base prompt\n\n" + PROJECT_BRIEF},
        {"wrote": store},
        {"event": "agent_end"},
        {"systemPrompt": "base prompt\n\nHISTORY: project (my-history)\n" + later},
    ]
    fake_historian.release_after_start()


def test_pi_block_first_and_shutdown(project, install_hooks, node_host, fake_historian, waiter):
    generated = install_hooks(project, "pi", "--before-edit", "block-first")
    fake_historian.release.touch()
    steps = [
        pi_edit(project, "apps/models.py", "t1"),
        pi_edit(project, "apps/models.py", "t2"),
        {"event": "session_shutdown"},
    ]
    scenario = {"cwd": str(project), "sessionId": "0199", "steps": steps}
    results = node_host("pi", generated, scenario)
    assert results == [
        {"blocked": BRIEF_BLOCK},
        {"content": [{"type": "text", "text": "tool output"}]},
        {"event": "session_shutdown"},
    ]
    waiter(lambda: len(fake_historian.ended()) == 2, "ingest and run")
    assert fake_historian.ended()[0] == ["--project", str(project), "ingest"]


@pytest.mark.parametrize("agent", ["opencode", "pi"])
def test_without_karni_on_path_the_host_carries_on(
    project, monkeypatch, tmp_path, install_hooks, node_host, agent
):
    generated = install_hooks(project, agent)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if agent == "opencode":
        scenario = {
            "directory": str(project),
            "steps": [opencode_edit(project, "apps/models.py", "c")],
        }
        expected = [{"output": "tool output"}]
    else:
        scenario = {"cwd": str(project), "steps": [pi_edit(project, "apps/models.py", "t")]}
        expected = [{"content": [{"type": "text", "text": "tool output"}]}]
    assert node_host(agent, generated, scenario) == expected
