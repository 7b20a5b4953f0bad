"""The generated OpenCode plugin and Pi extension, loaded by Node into stand-in hosts.

The hosts (``node/*.mjs``) follow the harnesses' documented plugin and
extension APIs; the modules they load are byte for byte what ``karni hooks
install`` wrote, and they call the real ``karni`` on PATH.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from karni.cli.main import main

HOSTS = Path(__file__).parent / "node"
BRIEF_BLOCK = (
    "HISTORY: apps/models.py (my-history)\n"
    "- Hard delete was reverted: it destroyed payment history\n"
)
PROJECT_BRIEF = "HISTORY: project (my-history)\n- Decision: money is stored in cents\n"


def install(project: Path, monkeypatch, agent: str, *options: str) -> Path:
    monkeypatch.chdir(project)
    assert main(["hooks", "install", "--agent", agent, *options]) == 0
    folder = ".opencode/plugins" if agent == "opencode" else ".pi/extensions"
    return project / folder / "karni-history.js"


def host(node: str, agent: str, generated: Path, tmp_path: Path, scenario: dict) -> list[dict]:
    # Node reads a `.js` file outside an ESM package as CommonJS; the same bytes as
    # `.mjs` load as the ES module OpenCode (Bun) and Pi (jiti) load.
    module = tmp_path / f"{agent}-module.mjs"
    shutil.copyfile(generated, module)
    result = subprocess.run(
        [node, str(HOSTS / f"{agent}_host.mjs"), str(module), json.dumps(scenario)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_generated_modules_are_plain_javascript(node, project, monkeypatch):
    for agent in ("opencode", "pi"):
        generated = install(project, monkeypatch, agent)
        check = subprocess.run([node, "--check", str(generated)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def opencode_edit(project: Path, path: str, call: str) -> dict:
    return {
        "tool": "edit",
        "sessionID": "ses_1",
        "callID": call,
        "args": {"filePath": str(project / path), "oldString": "a", "newString": "b"},
    }


def test_opencode_journey(node, project, monkeypatch, tmp_path, record_brief, fake_historian):
    generated = install(project, monkeypatch, "opencode")
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
    results = host(
        node, "opencode", generated, tmp_path, {"directory": str(project), "steps": steps}
    )
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


def test_opencode_block_first(node, project, monkeypatch, tmp_path):
    generated = install(project, monkeypatch, "opencode", "--before-edit", "block-first")
    steps = [
        opencode_edit(project, "apps/models.py", "c1"),
        opencode_edit(project, "apps/models.py", "c2"),
    ]
    results = host(
        node, "opencode", generated, tmp_path, {"directory": str(project), "steps": steps}
    )
    assert results == [{"blocked": BRIEF_BLOCK}, {"output": "tool output"}]


def pi_edit(project: Path, path: str, call: str, tool: str = "edit") -> dict:
    return {
        "tool": tool,
        "toolCallId": call,
        "input": {"path": str(project / path), "edits": [{"oldText": "a", "newText": "b"}]},
    }


def test_pi_journey(node, project, monkeypatch, tmp_path, record_brief, fake_historian):
    generated = install(project, monkeypatch, "pi")
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
    results = host(node, "pi", generated, tmp_path, scenario)
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


def test_pi_block_first_and_shutdown(node, project, monkeypatch, tmp_path, fake_historian, waiter):
    generated = install(project, monkeypatch, "pi", "--before-edit", "block-first")
    fake_historian.release.touch()
    steps = [
        pi_edit(project, "apps/models.py", "t1"),
        pi_edit(project, "apps/models.py", "t2"),
        {"event": "session_shutdown"},
    ]
    scenario = {"cwd": str(project), "sessionId": "0199", "steps": steps}
    results = host(node, "pi", generated, tmp_path, scenario)
    assert results == [
        {"blocked": BRIEF_BLOCK},
        {"content": [{"type": "text", "text": "tool output"}]},
        {"event": "session_shutdown"},
    ]
    waiter(lambda: len(fake_historian.ended()) == 2, "ingest and run")
    assert fake_historian.ended()[0] == ["--project", str(project), "ingest"]


@pytest.mark.parametrize("agent", ["opencode", "pi"])
def test_without_karni_on_path_the_host_carries_on(node, project, monkeypatch, tmp_path, agent):
    generated = install(project, monkeypatch, agent)
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
    assert host(node, agent, generated, tmp_path, scenario) == expected
