"""The `karni` dispatcher and the commands' help."""

from __future__ import annotations

from pathlib import Path

import pytest
from karni.cli.main import main


def test_help_lists_the_commands(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("context", "doctor", "check", "config"):
        assert f"\n  {name} " in out


def test_no_arguments_is_a_usage_error(capsys) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: karni COMMAND")


def test_unknown_command(capsys) -> None:
    assert main(["frobnicate"]) == 2
    assert capsys.readouterr().err == (
        "karni: unknown command `frobnicate`; run `karni --help` for the list\n"
    )


def test_unknown_top_level_option_gets_a_suggestion(capsys) -> None:
    assert main(["--versio"]) == 2
    assert capsys.readouterr().err == (
        "karni: unknown option `--versio` (did you mean `--version`?); "
        "run `karni --help` for usage\n"
    )


@pytest.mark.parametrize("command", ["context", "doctor", "check", "config"])
def test_every_command_has_help(capsys, command: str) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: karni {command}")


def test_context_hot_path_imports_nothing_heavy(eventsite, probe_imports) -> None:
    done = probe_imports(eventsite, ["context"])
    heavy = {"argparse", "json", "typing", "dataclasses", "importlib.metadata", "ast"}
    heavy |= {"subprocess", "tomllib", "karni.agent.history", "pathlib", "difflib", "textwrap"}
    heavy |= {"karni.agent.common.terminal", "importlib", "warnings"}
    assert done.returncode == 0, done.stderr
    assert "karni.cli.inventory.cache" in done.modules
    assert not heavy & done.modules, heavy & done.modules


ERROR_CASES = [
    # (argv, exit status, a piece of the message), run inside a project unless noted
    (["frobnicate"], 2, "unknown command `frobnicate`"),
    (["context", "a.py"], 2, "PATH `a.py` needs --with-history"),
    (["context", "--bogus"], 2, "unknown option `--bogus`"),
    (["context", "--with-history", ".."], 1, "is outside the project"),
    (["doctor", "extra"], 2, "`karni doctor` takes no arguments"),
    (["check", "--bogus"], 2, "unknown option `--bogus`"),
    (["check", "extra"], 2, "`karni check` takes no arguments"),
    (["config"], 2, "needs an action"),
    (["config", "get", "colour"], 1, "unknown setting `colour`"),
    (["config", "set", "suggest_tools", "maybe"], 1, "takes true or false"),
    (["rules", "--bogus"], 2, "unknown option `--bogus`"),
    (["rules", "--explain", "K999"], 1, "K999"),
    (["rules", "sync", "--bogus"], 2, "unknown argument `--bogus`"),
    (["new"], 2, "`karni new` takes one folder name"),
    (["new", "."], 1, "is not empty"),
]


@pytest.mark.parametrize(("argv", "code", "message"), ERROR_CASES, ids=lambda v: str(v))
def test_every_error_is_one_line_with_one_prefix(
    eventsite, monkeypatch, capsys, argv: list[str], code: int, message: str
) -> None:
    monkeypatch.chdir(eventsite)
    assert main(argv) == code
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.endswith("\n")
    assert captured.err.startswith("karni: ") and message in captured.err
    assert not captured.err.startswith("karni: karni "), captured.err
    assert not (eventsite / ".karni").exists()


@pytest.mark.parametrize("command", ["context", "doctor", "check", "config", "rules", "new"])
def test_outside_a_project_errors_have_one_prefix(tmp_path, monkeypatch, capsys, command) -> None:
    argv = {"config": ["config", "set", "suggest_tools", "no"], "new": ["new", "a", "b"]}
    monkeypatch.chdir(tmp_path)
    status = main(argv.get(command, [command]))
    err = capsys.readouterr().err
    if command == "doctor":  # reports "no project" instead of failing
        assert (status, err) == (0, "")
        return
    assert status in (1, 2) and err.count("\n") == 1
    assert err.startswith("karni: ") and not err.startswith("karni: karni ")


LAUNCHER = Path(__file__).resolve().parent.parent / "scripts" / "karni"


def test_the_installed_script_is_the_dispatcher_without_re(tmp_path: Path, probe_imports) -> None:
    assert LAUNCHER.read_text(encoding="utf-8").startswith("#!/usr/bin/env python3\n")
    done = probe_imports(tmp_path, ["--version"], launcher=True)
    assert done.returncode == 0, done.stderr
    imported = done.modules
    assert "karni.cli.main" in imported
    assert not imported & {"re", "importlib.metadata", "karni.cli.options"}


def test_version_is_read_from_the_metadata_folder_name(tmp_path: Path) -> None:
    from karni.cli.version import cli_version

    (tmp_path / "karni_cli-7.8.9.dist-info").mkdir()
    (tmp_path / "karni_cli-1.0.dist-info").write_text("a file, not a metadata folder")
    assert cli_version([str(tmp_path / "missing"), str(tmp_path)]) == "7.8.9"
    assert cli_version([str(tmp_path / "missing")]) is None


@pytest.mark.parametrize(
    "argv",
    [
        ["context", "apps/events/models.py", "--with-history"],
        ["rules"],
        ["hook", "claude", "pre-tool-use"],
    ],
)
def test_the_hot_path_never_loads_setting_declarations(
    eventsite: Path, argv: list[str], probe_imports
) -> None:
    done = probe_imports(eventsite, argv, launcher=True)
    assert done.returncode == 0, done.stderr
    imported = done.modules
    assert "karni.cli.main" in imported
    declarations = {
        "karni.agent.common.settings",
        "karni.agent.common.settings_registry",
        "karni.agent.common.settings_table",
        "karni.cli.config.declared",
        "karni_historian.declared_settings",
        "tomlkit",
    }
    assert not imported & declarations


def test_a_brief_from_the_examples_adr_store_imports_nothing_heavy(
    eventsite, probe_imports
) -> None:
    """`karni context --with-history` on the example's ADR store: no pathlib, re, json."""
    argv = ["context", "--with-history", "apps/events/models.py"]
    done = probe_imports(eventsite, argv, env={"KARNI_HISTORY_PROVIDERS": "adr"})
    assert done.returncode == 0, done.stderr
    assert "HISTORY: apps/events/models.py (adr)" in done.stdout
    heavy = {"argparse", "json", "re", "pathlib", "typing", "dataclasses", "subprocess"}
    heavy |= {"importlib", "importlib.metadata", "zlib", "enum", "functools"}
    heavy |= {"karni.agent.history.errors"}
    assert not heavy & done.modules, heavy & done.modules


def test_with_history_and_no_store_loads_no_provider_once_they_are_known(
    tmp_path: Path, probe_imports
) -> None:
    """The providers' markers are remembered from one run; the next imports none of them."""
    import os
    import time

    project = tmp_path / "no-store"
    project.mkdir()
    (project / "manage.py").write_text("")
    old = time.time() - 60  # old enough for the inventory cache to trust
    for path in (project / "manage.py", project):
        os.utime(path, (old, old))
    env = {"KARNI_HISTORY_PROVIDERS": "adr,gigai-chronicle,historian"}
    for _ in range(2):
        done = probe_imports(project, ["context", "--with-history", "manage.py"], env=env)
        assert done.returncode == 0, done.stderr
    imported = done.modules
    assert "karni.agent.history.remembered" in imported
    providers = ("karni_historian", "karni_history_adr", "karni.agent.history_chronicle")
    assert not [name for name in imported if name.startswith(providers)]
    unused = {
        "karni.agent.common.config",  # served from the caches: nothing written, no error raised
        "karni.agent.common.errors",
        "karni.agent.common.files",
        "karni.agent.history.isolation",
        "karni.agent.history.errors",
        "karni.agent.common.sanitize",
        "karni.agent.common.text",
        "pathlib",
        "json",
        "re",
        "typing",
    }
    assert not imported & unused, imported & unused
