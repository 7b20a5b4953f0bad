"""`karni hooks install|uninstall|status`: merged, idempotent, exactly undone, never via a link."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from karni.cli.main import main

CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "model": "opus",
}


def karni(capsys, *arguments: str) -> str:
    assert main(list(arguments)) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def failure(capsys, *arguments: str) -> str:
    assert main(list(arguments)) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    return captured.err


@pytest.fixture
def settings_file(project: Path, monkeypatch) -> Path:
    monkeypatch.chdir(project)
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(CLAUDE_SETTINGS, indent=2) + "\n")
    return path


def test_claude_code_install_merges_and_uninstall_restores_every_byte(settings_file, capsys):
    before = settings_file.read_bytes()
    out = karni(capsys, "hooks", "install", "--agent", "claude-code", "--scope", "project")
    assert out == (
        "claude-code hooks installed in .claude/settings.json (before an edit: context)\n"
        "claude-code MCP server karni-historian registered in .mcp.json\n"
    )
    settings = json.loads(settings_file.read_text())
    assert settings["permissions"] == CLAUDE_SETTINGS["permissions"]
    assert settings["model"] == "opus"
    pre = settings["hooks"]["PreToolUse"]
    assert pre[0] == CLAUDE_SETTINGS["hooks"]["PreToolUse"][0]
    assert pre[1] == {
        "matcher": "Edit|MultiEdit|Write|NotebookEdit",
        "hooks": [
            {"type": "command", "command": "karni hook claude-code PreToolUse", "timeout": 30}
        ],
    }
    assert settings["hooks"]["Stop"][0] == CLAUDE_SETTINGS["hooks"]["Stop"][0]
    assert [group["hooks"][0]["command"] for group in settings["hooks"]["Stop"]] == [
        "notify-send done",
        "karni hook claude-code Stop",
    ]
    assert set(settings["hooks"]) == {"PreToolUse", "Stop", "SessionStart", "SessionEnd"}
    installed = settings_file.read_bytes()
    again = karni(capsys, "hooks", "install", "--agent", "claude-code", "--scope", "project")
    assert "already installed" in again
    assert settings_file.read_bytes() == installed
    out = karni(capsys, "hooks", "uninstall", "--agent", "claude-code", "--scope", "project")
    assert out == (
        "claude-code hooks removed from .claude/settings.json\n"
        "claude-code MCP server karni-historian removed from .mcp.json\n"
    )
    assert settings_file.read_bytes() == before
    assert not (settings_file.parent.parent / ".mcp.json").exists()
    out = karni(capsys, "hooks", "uninstall", "--agent", "claude-code", "--scope", "project")
    assert "nothing to remove" in out


def test_claude_code_default_scope_is_the_personal_local_file(project, monkeypatch, capsys):
    monkeypatch.chdir(project / "apps")
    karni(capsys, "hooks", "install", "--agent", "claude-code")
    local = project / ".claude" / "settings.local.json"
    assert "karni hook claude-code SessionStart" in local.read_text()
    karni(capsys, "hooks", "uninstall", "--agent", "claude-code")
    assert not local.exists()  # it held nothing but Karni's hooks


def test_user_scope_and_block_first(project, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(project)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    karni(
        capsys,
        "hooks",
        "install",
        "--agent",
        "claude-code",
        "--scope",
        "user",
        "--before-edit",
        "block-first",
    )
    settings = json.loads((tmp_path / "claude-home" / "settings.json").read_text())
    commands = [g["hooks"][0]["command"] for g in settings["hooks"]["PreToolUse"]]
    assert commands == ["karni hook claude-code PreToolUse --before-edit block-first"]
    status = json.loads(karni(capsys, "hooks", "status", "--json"))
    user = next(row for row in status["hooks"] if row["scope"] == "user")
    assert (user["agent"], user["state"], user["before_edit"]) == (
        "claude-code",
        "installed",
        "block-first",
    )
    # Reinstalling in the other mode replaces Karni's entry, nothing is added twice.
    karni(capsys, "hooks", "install", "--agent", "claude-code", "--scope", "user")
    settings = json.loads((tmp_path / "claude-home" / "settings.json").read_text())
    assert [g["hooks"][0]["command"] for g in settings["hooks"]["PreToolUse"]] == [
        "karni hook claude-code PreToolUse"
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"hooks": [', "not valid JSON"),
        ("[]", "not a JSON object"),
        ('{"hooks": {"Stop": {}}}', '"hooks" is not an object of event lists'),
    ],
)
def test_an_unparsable_settings_file_is_refused_in_one_line(settings_file, capsys, text, why):
    settings_file.write_text(text)
    error = failure(capsys, "hooks", "install", "--agent", "claude-code", "--scope", "project")
    assert error.startswith("karni: cannot parse .claude/settings.json: ")
    assert why in error
    assert settings_file.read_text() == text
    error = failure(capsys, "hooks", "uninstall", "--agent", "claude-code", "--scope", "project")
    assert "cannot parse .claude/settings.json" in error


def test_links_are_refused(project, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(project)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "settings.json").write_text("{}\n")
    (project / ".claude").symlink_to(outside)
    error = failure(capsys, "hooks", "install", "--agent", "claude-code", "--scope", "project")
    assert error == (
        "karni: .claude is a symbolic link; Karni never writes through one: "
        "replace it with a real folder\n"
    )
    (project / ".claude").unlink()
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(outside / "settings.json")
    error = failure(capsys, "hooks", "install", "--agent", "claude-code", "--scope", "project")
    assert "settings.json is a symbolic link" in error
    (project / ".pi").symlink_to(outside)
    error = failure(capsys, "hooks", "install", "--agent", "pi")
    assert error.startswith("karni: .pi is a symbolic link")
    assert sorted(p.name for p in outside.iterdir()) == ["settings.json"]
    assert (outside / "settings.json").read_text() == "{}\n"


@pytest.mark.parametrize(
    ("agent", "relative"),
    [("opencode", ".opencode/plugins/karni-history.js"), ("pi", ".pi/extensions/karni-history.js")],
)
def test_script_install_is_idempotent_and_uninstall_removes_only_it(
    project, monkeypatch, capsys, agent, relative
):
    monkeypatch.chdir(project)
    neighbour = project / Path(relative).parent / "theirs.js"
    neighbour.parent.mkdir(parents=True)
    neighbour.write_text("export default function () {}\n")
    out = karni(capsys, "hooks", "install", "--agent", agent)
    assert out.splitlines()[0] == f"{agent} hooks installed in {relative} (before an edit: context)"
    generated = (project / relative).read_text()
    assert "// karni-hooks: generated" in generated.splitlines()[:3]
    assert "already installed" in karni(capsys, "hooks", "install", "--agent", agent)
    karni(capsys, "hooks", "install", "--agent", agent, "--before-edit", "block-first")
    assert 'const BEFORE_EDIT = "block-first";' in (project / relative).read_text()
    karni(capsys, "hooks", "uninstall", "--agent", agent)
    assert not (project / relative).exists()
    assert neighbour.read_text() == "export default function () {}\n"


def test_a_file_karni_did_not_write_is_left_alone(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    mine = project / ".pi" / "extensions" / "karni-history.js"
    mine.parent.mkdir(parents=True)
    mine.write_text("// my own\n")
    error = failure(capsys, "hooks", "install", "--agent", "pi")
    assert error == (
        "karni: .pi/extensions/karni-history.js exists and was not written by Karni; "
        "move it away and run again\n"
    )
    assert "not written by Karni" in failure(capsys, "hooks", "uninstall", "--agent", "pi")
    assert mine.read_text() == "// my own\n"


def test_user_scopes_of_opencode_and_pi(project, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(project)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    karni(capsys, "hooks", "install", "--agent", "opencode", "--scope", "user")
    karni(capsys, "hooks", "install", "--agent", "pi", "--scope", "user")
    assert (tmp_path / "xdg" / "opencode" / "plugins" / "karni-history.js").is_file()
    assert (tmp_path / "pi-agent" / "extensions" / "karni-history.js").is_file()
    error = failure(capsys, "hooks", "install", "--agent", "pi", "--scope", "local")
    assert "pi has no personal per-project hook file" in error


def test_status_text_and_doctor(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    karni(capsys, "hooks", "install", "--agent", "pi")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text("{oops")
    status = karni(capsys, "hooks", "status")
    assert (
        "  pi          project .pi/extensions/karni-history.js: "
        "installed (before an edit: context)\n" in status
    )
    assert "  claude-code local   .claude/settings.local.json: error: cannot parse" in status
    assert "  opencode    project .opencode/plugins/karni-history.js: not installed\n" in status
    doctor = karni(capsys, "doctor", "-q")
    hooks_line = next(line for line in doctor.splitlines() if line.startswith("hooks:"))
    assert hooks_line.startswith("hooks:       claude-code local (cannot parse")
    assert hooks_line.endswith(", pi project (installed)")
    facts = json.loads(karni(capsys, "doctor", "--json"))
    assert [(row["agent"], row["state"]) for row in facts["hooks"]] == [
        ("claude-code", "error"),
        ("pi", "installed"),
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["hooks"], "needs install, uninstall or status"),
        (["hooks", "install"], "needs --agent"),
        (["hooks", "install", "--agent", "vim"], "`--agent` takes one of "),
        (
            ["hooks", "install", "--agent", "pi", "--scope", "team"],
            ", not `team`",
        ),
        (["hooks", "status", "--frob"], "unknown option `--frob` for `karni hooks`"),
    ],
)
def test_usage_errors(project, monkeypatch, capsys, arguments, message):
    monkeypatch.chdir(project)
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert message in error
    assert error.count("\n") == 1


def test_a_karni_missing_from_path_is_pointed_out(project, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["hooks", "install", "--agent", "pi"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("pi hooks installed")
    assert captured.err == (
        "karni: warning: `karni` is not on PATH, so the harness cannot run the hooks; "
        "put it there\n"
    )
    assert main(["hooks", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["karni_on_path"] is False


def test_share_adds_share_to_the_end_of_session_hooks_only(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    out = karni(capsys, "hooks", "install", "--agent", "claude-code", "--share")
    first = out.splitlines()[0]
    assert first.endswith("(before an edit: context; at the end: share, when your settings opt in)")
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    commands = {
        event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()
    }
    assert commands == {
        "PreToolUse": "karni hook claude-code PreToolUse",
        "SessionStart": "karni hook claude-code SessionStart",
        "Stop": "karni hook claude-code Stop --share",
        "SessionEnd": "karni hook claude-code SessionEnd --share",
    }
    karni(capsys, "hooks", "install", "--agent", "pi", "--share")
    script = (project / ".pi" / "extensions" / "karni-history.js").read_text()
    assert "const SHARE = true;" in script
