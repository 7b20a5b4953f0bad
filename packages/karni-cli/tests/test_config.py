"""`karni config get|set|list [--global]` and the settings files behind it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from karni.cli.config import settings
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
    code, out, err = config(capsys, "list")
    assert (code, err) == (0, "")
    assert "suggest_tools = true (default)\n" in out
    assert "historian.execute_threshold_percentage = 65 (default)\n" in out
    assert "historian.claude_code.model" not in out  # no default and not set
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
    assert path.read_text() == "# header\nsuggest_tools = false\n\n[tool.x]\ny = 1\n"


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
    assert f"suggest_tools = false (global: {global_file})\n" in config(capsys, "list")[1]
    config(capsys, "set", "suggest_tools", "true")
    project_file = project / ".karni" / "config.toml"
    assert f"suggest_tools = true (project: {project_file})\n" in config(capsys, "list")[1]
    assert config(capsys, "get", "suggest_tools")[1] == "true\n"
    assert config(capsys, "get", "--global", "suggest_tools")[1] == "false\n"
    assert (
        f"suggest_tools = false (global: {global_file})\n" in config(capsys, "list", "--global")[1]
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
        (["set", "colour", "true"], 1, "unknown setting `colour`; known settings: `historian`"),
        (
            ["set", "historian.colour", "1"],
            1,
            "known settings in `historian`: `historian.aider`, `historian.claude",
        ),
        (["set", "historian.pi", "1"], 1, "`historian.pi` is a table of settings, not one"),
        (["set", "historian.context_limit", "big"], 1, "takes a whole number from 1_000 to"),
        (["set", "historian.context_limit", "10"], 1, "must be a whole number from 1_000"),
        (["set", "historian.pi.variant", "low"], 1, "`historian.pi.variant` is not allowed"),
        (["set", "historian.opencode.variant", "huge"], 1, "must be one of off, minimal"),
        (["set", "historian.pi.model", "gpt-5"], 1, "is not `backend/model`"),
        (["set", "historian.pi.model", "openai-compatible/x"], 1, "needs a `base_url`"),
        (["set", "historian.pi.model", "{model = 'openai-compatible/x'}"], 1, "base_url` is req"),
        (["set", "historian.pi.model.colour", "1"], 1, "unknown setting `historian.pi.model.c"),
        (["set", "historian.expand_tools.Bash", "${"], 1, "is not a valid template"),
        (["set", "historian.expand_tools.Bash", "true"], 1, "must be a template or false"),
        (["set", "profiles.w.historian.pi.model", "openai/a"], 1, "pass --global"),
        (["set", "safe_directories", "/srv"], 1, "can be set only in your own settings"),
        (["unset", "profiles.w.historian.pi.model"], 1, "pass --global"),
        (["set", "profile", ""], 1, "is not a profile name"),
        (["get", "colour"], 1, "unknown setting `colour`"),
        (["set", "suggest_tools", "maybe"], 1, "takes true or false"),
        ([], 2, "needs an action"),
        (["remove", "x"], 2, "unknown action `remove`"),
        (["unest", "x"], 2, "did you mean `unset`?"),
        (["unset"], 2, "`karni config unset` takes KEY"),
        (["path", "x"], 2, "`karni config path` takes no arguments"),
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
        ('suggest_tools = "false"', '`suggest_tools` must be true or false, not "false"'),
        ("suggest_tools = 0", "`suggest_tools` must be true or false, not 0"),
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
        if "true or false" not in message:
            assert config(capsys, "set", *extra, "suggest_tools", "true")[0] == 1
            assert path.read_text() == content
        path.unlink()


def test_not_utf8_is_reported(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(b"\xff\xfe")
    code, _, err = config(capsys, "list")
    assert code == 1 and "is not UTF-8" in err


def test_help_names_every_action_and_the_reference(capsys) -> None:
    code, out, _ = config(capsys, "--help")
    assert code == 0
    for action in ("get KEY", "set KEY VALUE", "unset KEY", "list", "path"):
        assert f"karni config {action}" in out
    assert "docs/reference/configuration.md" in out


def test_set_is_atomic_and_leaves_no_temporary_files(project: Path, capsys) -> None:
    for value in ("true", "false", "true"):
        config(capsys, "set", "suggest_tools", value)
    assert sorted(p.name for p in (project / ".karni").iterdir()) == [".gitignore", "config.toml"]
    # a write killed before its rename leaves a temporary file that git ignores
    assert (project / ".karni" / ".gitignore").read_text().splitlines()[-1] == ".*.tmp"


def test_one_table_declares_every_key() -> None:
    table = settings.declared().table()
    assert settings.declared().failures == []
    owners = {setting.name: setting.owner for setting in table.settings}
    assert owners["suggest_tools"] == "karni-cli"
    assert owners["safe_directories"] == owners["profile"] == "karni-core"
    assert owners["historian.claude_code.model"] == "karni-historian"
    assert table.find("suggest_tools").default is True
    assert table.find("profiles.work.historian.omp.thinking_level").scope == "user"


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
        assert err.endswith("); correct it there\n") and err.count("\n") == 1
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
    rows = {row["key"]: row for row in json.loads(out)["settings"]}
    assert rows["suggest_tools"] == {
        "key": "suggest_tools",
        "value": True,
        "source": "default",
        "path": None,
        "scope": "both",
        "declared_by": "karni-cli",
    }
    assert rows["safe_directories"]["scope"] == "user"
    config(capsys, "set", "suggest_tools", "false")
    config(capsys, "set", "historian.pi.model", "{model = 'ollama/qwen3:8b', timeout = 600}")
    rows = {row["key"]: row for row in json.loads(config(capsys, "list", "--json")[1])["settings"]}
    path = str(project / ".karni" / "config.toml")
    assert rows["suggest_tools"]["value"] is False
    assert (rows["suggest_tools"]["source"], rows["suggest_tools"]["path"]) == ("project", path)
    assert rows["historian.pi.model"]["value"] == {"model": "ollama/qwen3:8b", "timeout": 600}
    assert rows["historian.pi.model"]["declared_by"] == "karni-historian"
    code, out, err = config(capsys, "get", "suggest_tools", "--json")
    assert (code, out) == (2, "")
    assert err.startswith("karni: --json goes with `karni config list`, not `get`")


def test_dotted_keys_write_tables_and_get_prints_plain_values(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    code, out, _ = config(
        capsys, "set", "historian.claude_code.model", "anthropic/claude-haiku-4-5"
    )
    assert (code, out) == (
        0,
        f'historian.claude_code.model = "anthropic/claude-haiku-4-5" ({path})\n',
    )
    config(capsys, "set", "historian.execute_threshold_percentage", "70")
    config(capsys, "set", "historian.pi.fallback_models", "openai/gpt-5-mini, ollama/qwen3:8b")
    config(capsys, "set", "historian.claude_code.two_pass", "yes")
    assert path.read_text() == (
        "[historian]\n"
        "execute_threshold_percentage = 70\n"
        "\n"
        "[historian.claude_code]\n"
        'model = "anthropic/claude-haiku-4-5"\n'
        "two_pass = true\n"
        "\n"
        "[historian.pi]\n"
        'fallback_models = ["openai/gpt-5-mini", "ollama/qwen3:8b"]\n'
    )
    assert config(capsys, "get", "historian.claude_code.model")[1] == "anthropic/claude-haiku-4-5\n"
    assert config(capsys, "get", "historian.execute_threshold_percentage")[1] == "70\n"
    assert config(capsys, "get", "historian.pi.fallback_models")[1] == (
        '["openai/gpt-5-mini", "ollama/qwen3:8b"]\n'
    )
    assert config(capsys, "get", "historian.omp.model") == (0, "\n", "")  # not set, no default


def test_a_key_inside_a_model_entry_is_checked_with_its_entry(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    config(capsys, "set", "historian.pi.model", "{model = 'openai/a'}")
    assert config(capsys, "set", "historian.pi.model.timeout", "600")[0] == 0
    assert config(capsys, "get", "historian.pi.model.timeout")[1] == "600\n"
    code, _, err = config(capsys, "set", "historian.pi.model.model", "openai-compatible/llama")
    assert code == 1 and "`historian.pi.model.base_url` is required" in err
    assert 'model = {model = "openai/a", timeout = 600}' in path.read_text()
    config(capsys, "set", "--global", "historian.pi.model", "{model = 'openai/a'}")
    config(capsys, "set", "--global", "historian.pi.model.base_url", "http://localhost:8080/v1")
    assert (
        config(capsys, "set", "--global", "historian.pi.model.model", "openai-compatible/llama")[0]
        == 0
    )
    config(capsys, "set", "historian.opencode.model", "ollama/qwen3:8b")
    code, _, err = config(capsys, "set", "historian.opencode.model.timeout", "5")
    assert code == 1 and "`historian.opencode.model` is 'ollama/qwen3:8b', not a table" in err


@pytest.mark.parametrize(
    ("key", "value", "refused"),
    [
        (
            "historian.pi.model.base_url",
            "http://attacker.example/v1",
            "historian.pi.model.base_url",
        ),
        (
            "historian.pi.model.api_key_env",
            "AWS_SECRET_ACCESS_KEY",
            "historian.pi.model.api_key_env",
        ),
        (
            "historian.claude_code.model",
            "{model = 'openai-compatible/m', base_url = 'http://attacker.example'}",
            "historian.claude_code.model.base_url",
        ),
        (
            "historian.opencode.fallback_models",
            "[{model = 'anthropic/a'}, {model = 'openai/b', api_key_env = 'GITHUB_TOKEN'}]",
            "historian.opencode.fallback_models[2].api_key_env",
        ),
    ],
)
def test_a_project_never_says_where_a_model_sends_the_users_key(
    project: Path, capsys, global_file: Path, key: str, value: str, refused: str
) -> None:
    path = project / ".karni" / "config.toml"
    code, out, err = config(capsys, "set", key, value)
    assert (code, out) == (1, "")
    assert f"`{refused}` can be set only in your own settings" in err and "--global" in err
    assert err.count("\n") == 1
    assert not path.exists()
    assert config(capsys, "set", "--global", key, value)[0] == 0
    field = refused.rsplit(".", 1)[1]
    assert f"{field} = " in global_file.read_text()


def test_unset_removes_only_the_key(project: Path, capsys, global_file: Path) -> None:
    path = project / ".karni" / "config.toml"
    path.parent.mkdir()
    original = (
        "# team settings\n"
        "suggest_tools = false  # no tips\n"
        "\n"
        "[historian]\n"
        "# our window\n"
        "context_limit = 1000000\n"
        "execute_threshold_percentage = 50\n"
    )
    path.write_text(original)
    assert config(capsys, "unset", "historian.context_limit") == (
        0,
        f"unset historian.context_limit ({path})\n",
        "",
    )
    assert path.read_text() == original.replace("context_limit = 1000000\n", "")
    assert config(capsys, "get", "historian.context_limit")[1] == "200000\n"
    assert config(capsys, "unset", "historian.context_limit") == (
        0,
        f"historian.context_limit is not set in {path}\n",
        "",
    )
    assert config(capsys, "unset", "--global", "suggest_tools")[1] == (
        f"suggest_tools is not set in {global_file}\n"
    )
    assert not global_file.exists()


def test_path_prints_the_file_acted_on(project: Path, capsys, global_file: Path, tmp_path) -> None:
    assert config(capsys, "path") == (0, f"{project / '.karni' / 'config.toml'}\n", "")
    assert config(capsys, "path", "--global") == (0, f"{global_file}\n", "")
    assert not (project / ".karni").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    import os

    os.chdir(elsewhere)
    code, out, err = config(capsys, "path")
    assert (code, out) == (1, "") and "pass --global" in err and err.count("\n") == 1


def test_profiles_are_user_only_and_selected_by_name(
    project: Path, capsys, global_file: Path
) -> None:
    key = "profiles.cheap.historian.pi.model"
    assert config(capsys, "set", "--global", key, "ollama/qwen3:8b")[0] == 0
    assert config(capsys, "set", "--global", "historian.pi.model", "openai/gpt-5")[0] == 0
    assert config(capsys, "get", "historian.pi.model")[1] == "openai/gpt-5\n"
    assert config(capsys, "set", "profile", "cheap")[0] == 0
    assert config(capsys, "get", "historian.pi.model")[1] == "ollama/qwen3:8b\n"
    out = config(capsys, "list")[1]
    assert f'historian.pi.model = "ollama/qwen3:8b" (profile cheap: {global_file})\n' in out
    assert f'{key} = "ollama/qwen3:8b" (global: {global_file})\n' in out
    assert '[profiles.cheap.historian.pi]\nmodel = "ollama/qwen3:8b"\n' in global_file.read_text()


def test_wildcard_keys(project: Path, capsys) -> None:
    assert config(capsys, "set", "historian.expand_tools.Bash", "false")[0] == 0
    assert config(capsys, "set", "historian.expand_tools.ask", "${input.q}")[0] == 0
    out = config(capsys, "list")[1]
    assert "historian.expand_tools.Bash = false (project: " in out
    assert 'historian.expand_tools.ask = "${input.q}" (project: ' in out


def test_a_refused_value_names_the_file_and_the_key(project: Path, capsys) -> None:
    path = project / ".karni" / "config.toml"
    code, out, err = config(capsys, "set", "historian.execute_threshold_percentage", "95")
    assert (code, out) == (1, "")
    assert err == (
        f"karni: {path}: `historian.execute_threshold_percentage` must be a number from 20 to "
        "90, not 95; nothing was changed\n"
    )
    assert not path.exists()


def test_a_user_only_key_in_the_project_file_is_not_shown_as_in_effect(
    project: Path, global_file: Path, capsys
) -> None:
    """`safe_directories` from a cloned repository is ignored, so `get` and `list` ignore it too."""
    (project / ".karni").mkdir()
    (project / ".karni" / "config.toml").write_text('safe_directories = ["/srv"]\n')
    code, out, _ = config(capsys, "get", "safe_directories")
    assert (code, out) == (0, "[]\n")
    global_file.parent.mkdir(parents=True, exist_ok=True)
    global_file.write_text('safe_directories = ["/home/me/shared"]\n')
    assert config(capsys, "get", "safe_directories")[:2] == (0, '["/home/me/shared"]\n')
    rows = {row["key"]: row for row in json.loads(config(capsys, "list", "--json")[1])["settings"]}
    assert rows["safe_directories"]["value"] == ["/home/me/shared"]
    assert (rows["safe_directories"]["source"], rows["safe_directories"]["path"]) == (
        "global",
        str(global_file),
    )
