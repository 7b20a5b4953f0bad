"""The ``claude-code/`` backend against a fake ``claude`` program on PATH."""

import json
import os
import sys
from pathlib import Path

import pytest
from fake_model import covering_xml
from karni_historian.condense.models.backends import complete
from karni_historian.condense.models.entries import ModelEntry
from karni_historian.condense.models.prompt import Prompt
from karni_historian.errors import ModelCallError

FAKE = Path(__file__).parent / "fake_model" / "claude.py"


@pytest.fixture
def fake_claude(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "claude"
    program.write_text(
        f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(FAKE)!r}, run_name='__main__')\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_CALLS", str(tmp_path / "calls.json"))
    monkeypatch.setenv("FAKE_CLAUDE_SCRIPT", str(tmp_path / "script.json"))

    def script(*steps):
        (tmp_path / "script.json").write_text(json.dumps(list(steps)))

    def calls():
        return json.loads((tmp_path / "calls.json").read_text())

    return script, calls


def envelope(result, **extra):
    return json.dumps(
        {"type": "result", "subtype": "success", "is_error": False, "result": result, **extra}
    )


PROMPT = Prompt("the system prompt", "Messages 1-4:\n\n[1] U: hello")
ENTRY = ModelEntry(model_id="claude-code/sonnet", timeout=30)


def test_print_mode_with_no_tools_and_the_prompt_on_stdin(fake_claude, tmp_path):
    script, calls = fake_claude
    xml = covering_xml(PROMPT.user)
    script({"stdout": envelope(xml)})
    reply = complete(ENTRY, PROMPT)
    assert reply.text == xml
    assert not reply.truncated
    (call,) = calls()
    assert call["argv"] == [
        "-p",
        "--output-format",
        "json",
        "--model",
        "sonnet",
        "--system-prompt",
        "the system prompt",
        "--tools",
        "",
        "--max-turns",
        "1",
        "--no-session-persistence",
        "--settings",
        '{"disableAllHooks": true}',
    ]
    assert call["stdin"] == PROMPT.user
    assert call["cwd"] != os.getcwd()  # an empty temporary folder, never the project
    assert not Path(call["cwd"]).exists()


def test_the_reasoning_level_becomes_effort(fake_claude):
    script, calls = fake_claude
    script({"stdout": envelope("x")})
    complete(ModelEntry(model_id="claude-code/opus", reasoning="high"), PROMPT)
    assert calls()[0]["argv"][-2:] == ["--effort", "high"]


def test_a_rate_limit_is_transient(fake_claude):
    script, _ = fake_claude
    script(
        {
            "stdout": json.dumps(
                {"type": "result", "is_error": True, "result": "API Error: 429 rate limit reached"}
            ),
            "code": 1,
        }
    )
    with pytest.raises(ModelCallError) as error:
        complete(ENTRY, PROMPT)
    assert error.value.transient
    assert "claude-code/sonnet: `claude -p` failed (exit 1): API Error: 429" in str(error.value)


def test_not_logged_in_is_permanent(fake_claude):
    script, _ = fake_claude
    script({"stderr": "Invalid API key · Please run /login", "code": 1})
    with pytest.raises(ModelCallError) as error:
        complete(ENTRY, PROMPT)
    assert not error.value.transient
    assert "Please run /login" in str(error.value)


def test_the_entry_timeout_bounds_the_process(fake_claude):
    script, _ = fake_claude
    script({"stdout": envelope("late"), "sleep": 20})
    with pytest.raises(ModelCallError, match=r"no answer within 0.5 s \(timeout\)") as error:
        complete(ModelEntry(model_id="claude-code/sonnet", timeout=0.5), PROMPT)
    assert error.value.transient


def test_a_reply_cut_at_max_tokens_is_marked(fake_claude):
    script, _ = fake_claude
    script({"stdout": envelope("<output>", stop_reason="max_tokens")})
    assert complete(ENTRY, PROMPT).truncated


def test_no_claude_on_path_is_permanent_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ModelCallError, match="the `claude` command is not on PATH") as error:
        complete(ENTRY, PROMPT)
    assert not error.value.transient


def test_a_claude_in_the_working_folder_is_never_run(fake_claude, monkeypatch, tmp_path):
    """A relative `PATH` entry names the working folder: a cloned repository's `claude`."""
    _, calls = fake_claude
    project = tmp_path / "project"
    project.mkdir()
    planted = project / "claude"
    planted.write_text(f"#!/bin/sh\ntouch {tmp_path / 'planted-ran'}\n")
    planted.chmod(0o755)
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", f".{os.pathsep}{os.pathsep}{tmp_path / 'bin'}")
    fake_claude[0]({"stdout": envelope("<output>")})
    complete(ENTRY, PROMPT)
    assert not (tmp_path / "planted-ran").exists()
    assert len(calls()) == 1  # the real one, from the absolute entry
