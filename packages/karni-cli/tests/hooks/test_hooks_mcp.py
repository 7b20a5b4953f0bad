"""`karni hooks install` registers karni-historian's MCP server where each harness reads it.

Claude Code reads a project's MCP servers from `.mcp.json` (`mcpServers` →
`{command, args}`), OpenCode from `opencode.json` (`mcp` → `{type: "local",
command: [...]}`); the entries are checked against those documented shapes,
the user's other servers and keys are kept, and uninstall removes exactly Karni's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from karni.cli.main import main

THEIRS = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}


def karni(capsys, *arguments: str) -> str:
    assert main(list(arguments)) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


@pytest.fixture
def here(project: Path, monkeypatch) -> Path:
    monkeypatch.chdir(project)
    return project


def test_claude_code_gets_its_project_server_and_keeps_the_users(here, capsys):
    mcp = here / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"memory": THEIRS}}, indent=2) + "\n")
    before = mcp.read_bytes()
    out = karni(capsys, "hooks", "install", "--agent", "claude-code")
    assert "claude-code MCP server karni-historian registered in .mcp.json" in out
    assert json.loads(mcp.read_text()) == {
        "mcpServers": {
            "memory": THEIRS,
            "karni-historian": {"command": "karni-historian", "args": ["mcp"]},
        }
    }
    assert "already registered" in karni(capsys, "hooks", "install", "--agent", "claude-code")
    out = karni(capsys, "hooks", "uninstall", "--agent", "claude-code")
    assert "claude-code MCP server karni-historian removed from .mcp.json" in out
    assert mcp.read_bytes() == before


def test_opencode_gets_a_local_server_with_a_command_array(here, capsys):
    config = here / "opencode.json"
    out = karni(capsys, "hooks", "install", "--agent", "opencode")
    assert "opencode MCP server karni-historian registered in opencode.json" in out
    assert json.loads(config.read_text()) == {
        "$schema": "https://opencode.ai/config.json",
        "mcp": {
            "karni-historian": {
                "type": "local",
                "command": ["karni-historian", "mcp"],
                "enabled": True,
            }
        },
    }
    karni(capsys, "hooks", "uninstall", "--agent", "opencode")
    assert not config.exists()  # it held nothing but Karni's server


def test_opencode_keeps_the_users_settings(here, capsys):
    config = here / "opencode.json"
    mine = {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude-sonnet-4"}
    config.write_text(json.dumps(mine) + "\n")
    karni(capsys, "hooks", "install", "--agent", "opencode")
    assert json.loads(config.read_text())["model"] == "anthropic/claude-sonnet-4"
    karni(capsys, "hooks", "uninstall", "--agent", "opencode")
    assert json.loads(config.read_text()) == mine


def test_nothing_is_registered_without_the_historian_or_for_the_user_scope(
    here, capsys, monkeypatch, tmp_path
):
    monkeypatch.setenv("KARNI_HISTORIAN", str(tmp_path / "no-such-program"))
    out = karni(capsys, "hooks", "install", "--agent", "claude-code")
    assert "MCP" not in out and not (here / ".mcp.json").exists()
    monkeypatch.delenv("KARNI_HISTORIAN")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-user"))
    out = karni(capsys, "hooks", "install", "--agent", "claude-code", "--scope", "user")
    assert "MCP" not in out and not (here / ".mcp.json").exists()
    out = karni(capsys, "hooks", "install", "--agent", "pi")
    assert "MCP" not in out


def test_a_server_of_that_name_karni_did_not_write_is_left_alone(here, capsys):
    mcp = here / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"karni-historian": THEIRS}}) + "\n")
    assert main(["hooks", "install", "--agent", "claude-code"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "that Karni did not write" in err
    karni(capsys, "hooks", "uninstall", "--agent", "claude-code")
    assert json.loads(mcp.read_text()) == {"mcpServers": {"karni-historian": THEIRS}}
    status = json.loads(karni(capsys, "hooks", "status", "--json"))["mcp_servers"]
    assert {"agent": "claude-code", "path": ".mcp.json", "state": "other", "error": None} in status


def test_a_config_with_comments_is_refused_in_one_line(here, capsys):
    config = here / "opencode.json"
    config.write_text('{\n  // mine\n  "model": "x"\n}\n')
    assert main(["hooks", "install", "--agent", "opencode"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "comments" in err
    assert config.read_text() == '{\n  // mine\n  "model": "x"\n}\n'


def test_status_and_doctor_show_the_registration(here, capsys):
    karni(capsys, "hooks", "install", "--agent", "claude-code")
    text = karni(capsys, "hooks", "status")
    assert "karni-historian MCP server (pi has no MCP):" in text
    assert "  claude-code .mcp.json: registered" in text
    assert "  opencode    opencode.json: not registered" in text
    doctor = karni(capsys, "doctor", "--quiet")
    assert "mcp:         claude-code .mcp.json (registered)" in doctor


def test_a_historian_without_its_mcp_extra_is_not_registered(here, capsys, monkeypatch, tmp_path):
    """`karni-historian mcp --check` decides: a server that cannot start is not registered."""
    program = tmp_path / "karni-historian"
    program.write_text(
        "#!/bin/sh\n"
        'echo "karni-historian: the MCP server needs the MCP Python SDK; install it" >&2\n'
        "exit 1\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("KARNI_HISTORIAN", str(program))
    out = karni(capsys, "hooks", "install", "--agent", "claude-code")
    assert out.splitlines()[1] == (
        "claude-code MCP server karni-historian not registered: "
        "the MCP server needs the MCP Python SDK; install it"
    )
    assert not (here / ".mcp.json").exists()
