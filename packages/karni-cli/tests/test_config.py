"""`karni config get|set|list [--global]` and the settings files behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from karni.cli import settings
from karni.cli.main import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "manage.py").write_text("")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def global_file(isolated_env: Path) -> Path:
    return isolated_env / "config" / "karni" / "config.toml"


def config(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["config", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_defaults(project: Path, capsys) -> None:
    assert config(capsys, "get", "suggest_tools") == (0, "true\n", "")
    assert config(capsys, "list") == (0, "suggest_tools = true (default)\n", "")
    assert not (project / ".karni").exists()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("false", False),
        ("NO", False),
        ("Off", False),
        ("0", False),
        ("TRUE", True),
        ("yes", True),
        ("on", True),
        ("1", True),
    ],
)
def test_set_accepts_boolean_words_and_writes_a_toml_boolean(
    project: Path, capsys, text: str, value: bool
) -> None:
    code, out, _ = config(capsys, "set", "suggest_tools", text)
    path = project / ".karni" / "config.toml"
    literal = "true" if value else "false"
    assert (code, out) == (0, f"suggest_tools = {literal} ({path})\n")
    assert path.read_text() == f"suggest_tools = {literal}\n"
    assert config(capsys, "get", "suggest_tools")[1] == f"{literal}\n"


def test_set_keeps_comments_other_keys_and_tables(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    path.parent.mkdir()
    original = (
        "# Team settings for Karni\n"
        'future_key = "kept"\n'
        'notes = """\n'
        "suggest_tools = true\n"
        '"""\n'
        "suggest_tools = true   # we like tips\n"
        "\n"
        "[tool.other]\n"
        "suggest_tools = 3\n"
    )
    path.write_text(original)
    assert config(capsys, "set", "suggest_tools", "off")[0] == 0
    assert path.read_text() == original.replace(
        "suggest_tools = true   # we like tips", "suggest_tools = false   # we like tips"
    )


def test_set_adds_the_key_before_the_first_table(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    path.parent.mkdir()
    path.write_text("# header\n[tool.x]\ny = 1\n")
    config(capsys, "set", "suggest_tools", "false")
    assert path.read_text() == "# header\nsuggest_tools = false\n[tool.x]\ny = 1\n"


def test_set_appends_with_a_newline_and_keeps_crlf(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(b"a = 1\r\nb = 2")
    config(capsys, "set", "suggest_tools", "false")
    assert path.read_bytes() == b"a = 1\r\nb = 2\r\nsuggest_tools = false\r\n"


def test_set_repairs_a_wrongly_typed_value(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    path.parent.mkdir()
    path.write_text('suggest_tools = "no"\n')
    assert config(capsys, "get", "suggest_tools")[0] == 1
    assert config(capsys, "set", "suggest_tools", "no")[0] == 0
    assert path.read_text() == "suggest_tools = false\n"


def test_project_wins_over_global_which_wins_over_default(
    project: Path, capsys, global_file: Path
) -> None:
    assert config(capsys, "set", "--global", "suggest_tools", "false")[0] == 0
    assert global_file.read_text() == "suggest_tools = false\n"
    assert config(capsys, "list") == (
        0,
        f"suggest_tools = false (global: {global_file})\n",
        "",
    )
    config(capsys, "set", "suggest_tools", "true")
    project_file = project / ".karni" / "config.toml"
    assert config(capsys, "list")[1] == f"suggest_tools = true (project: {project_file})\n"
    assert config(capsys, "get", "suggest_tools")[1] == "true\n"
    assert config(capsys, "get", "--global", "suggest_tools")[1] == "false\n"
    assert config(capsys, "list", "--global")[1] == (
        f"suggest_tools = false (global: {global_file})\n"
    )


def test_global_defaults_to_dot_config_and_ignores_relative_xdg(
    monkeypatch, isolated_env: Path
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    expected = str(isolated_env / ".config" / "karni" / "config.toml")
    assert settings.global_config_path() == expected
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")
    assert settings.global_config_path() == expected


def test_outside_a_project(tmp_path: Path, monkeypatch, capsys, global_file: Path) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = config(capsys, "set", "suggest_tools", "false")
    assert (code, out) == (1, "")
    assert "pass --global" in err and err.count("\n") == 1
    assert config(capsys, "get", "suggest_tools")[1] == "true\n"
    assert config(capsys, "set", "--global", "suggest_tools", "false")[0] == 0
    assert config(capsys, "get", "suggest_tools")[1] == "false\n"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["set", "colour", "true"], 1, "unknown setting `colour`; known settings: `suggest_tools`"),
        (["get", "colour"], 1, "unknown setting `colour`"),
        (["set", "suggest_tools", "maybe"], 1, "takes true or false"),
        ([], 2, "needs an action"),
        (["remove", "x"], 2, "unknown action `remove`"),
        (["get"], 2, "`karni config get` takes KEY"),
        (["set", "suggest_tools"], 2, "takes KEY VALUE"),
        (["list", "x"], 2, "takes no arguments"),
        (["list", "--local"], 2, "unknown option `--local`"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    project: Path, capsys, args: list[str], code: int, message: str
) -> None:
    result = main(["config", *args])
    err = capsys.readouterr().err
    assert result == code
    assert err.startswith("karni: ") and err.count("\n") == 1 and message in err
    assert not (project / ".karni").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("suggest_tools = [", "is not valid TOML"),
        ('suggest_tools = "false"', "`suggest_tools` must be a TOML boolean"),
        ("suggest_tools = 0", "`suggest_tools` must be a TOML boolean"),
    ],
)
def test_invalid_files_are_named_and_left_alone(
    project: Path, capsys, global_file: Path, content: str, message: str
) -> None:
    for path, extra in ((project / ".karni" / "config.toml", []), (global_file, ["--global"])):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        code, out, err = config(capsys, "get", *extra, "suggest_tools")
        assert (code, out) == (1, "")
        assert str(path) in err and message in err
        if "TOML boolean" not in message:
            assert config(capsys, "set", *extra, "suggest_tools", "true")[0] == 1
            assert path.read_text() == content
        path.unlink()


def test_not_utf8_is_reported(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(b"\xff\xfe")
    code, _, err = config(capsys, "list")
    assert code == 1 and "is not UTF-8" in err


def test_help_lists_every_setting(capsys) -> None:
    code, out, _ = config(capsys, "--help")
    assert code == 0
    for setting in settings.SETTINGS.values():
        assert f"{setting.name} (default true)" in out


def test_set_is_atomic_and_leaves_no_temporary_files(project: Path, capsys) -> None:
    for value in ("true", "false", "true"):
        config(capsys, "set", "suggest_tools", value)
    assert sorted(p.name for p in (project / ".karni").iterdir()) == [".gitignore", "config.toml"]
    # a write killed before its rename leaves a temporary file that git ignores
    assert (project / ".karni" / ".gitignore").read_text().splitlines()[-1] == ".*.tmp"


def test_one_table_declares_every_key() -> None:
    assert list(settings.SETTINGS) == ["suggest_tools"]
    assert settings.SETTINGS["suggest_tools"].default is True


def test_an_invalid_global_file_is_reported_even_when_the_project_decides(
    project: Path, capsys, global_file: Path
) -> None:
    assert config(capsys, "set", "suggest_tools", "true")[0] == 0
    global_file.parent.mkdir(parents=True)
    global_file.write_text("suggest_tools = [\n")
    for args in (["list"], ["get", "suggest_tools"]):
        code, out, err = config(capsys, *args)
        assert (code, out) == (1, "")
        assert err.startswith(f"karni: {global_file} is not valid TOML (")
        assert err.endswith("); fix or delete it\n") and err.count("\n") == 1
    assert global_file.read_text() == "suggest_tools = [\n"


def test_set_never_writes_through_a_symlinked_karni_folder(
    project: Path, tmp_path: Path, capsys
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".karni").symlink_to(elsewhere, target_is_directory=True)
    assert main(["config", "set", "suggest_tools", "false"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("karni: cannot write ") and "symlink" in err and err.count("\n") == 1
    assert list(elsewhere.iterdir()) == []


def test_list_as_json(project: Path, capsys) -> None:
    code, out, err = config(capsys, "list", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "settings": [{"key": "suggest_tools", "value": True, "source": "default", "path": None}]
    }
    config(capsys, "set", "suggest_tools", "false")
    document = json.loads(config(capsys, "list", "--json")[1])
    assert document["settings"] == [
        {
            "key": "suggest_tools",
            "value": False,
            "source": "project",
            "path": str(project / ".karni" / "config.toml"),
        }
    ]
    code, out, err = config(capsys, "get", "suggest_tools", "--json")
    assert (code, out) == (2, "")
    assert err.startswith("karni: --json goes with `karni config list`, not `get`")
