"""`karni doctor`: the report, its JSON form, and detection-only provider handling."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from karni.cli.commands.doctor import collect
from karni.cli.main import main

BROKEN = {"karni.history_providers": {"broken": "broken_history_missing:Provider"}}

ASKING_PROVIDER = """
    from pathlib import Path


    class AskedProvider:
        name = "asked"

        def detect(self, project_root):
            return True

        def context(self, project_root, path):
            (Path(project_root) / "context-was-called").write_text(path)
            return "brief"

        def project_context(self, project_root):
            (Path(project_root) / "context-was-called").write_text("project")
            return "brief"
"""


@pytest.fixture
def doctor_project(eventsite: Path, monkeypatch, capsys, my_history, make_distribution) -> Path:
    """The example with fresh adapters, my-history (with a store), the built-in Chronicle
    provider (no store) and a provider that fails to load from a real dist-info."""
    make_distribution(my_history, "broken-history", "0.3.0", BROKEN, {})
    (eventsite / ".my-history").mkdir()
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history,broken,gigai-chronicle")
    monkeypatch.chdir(eventsite)
    assert main(["rules", "sync"]) == 0
    capsys.readouterr()
    return eventsite


def normalize(text: str, root: Path) -> str:
    version = "{}.{}.{}".format(*sys.version_info[:3])
    from importlib.metadata import version as dist_version

    return (
        text.replace(str(root), "<project>")
        .replace(sys.executable, "<python>")
        .replace(f"Python {version}", "Python <X.Y.Z>")
        .replace(f'"version": "{version}"', '"version": "<X.Y.Z>"')
        .replace(f"karni-cli:   {dist_version('karni-cli')}", "karni-cli:   <version>")
        .replace(
            f'"karni_cli_version": "{dist_version("karni-cli")}"',
            '"karni_cli_version": "<version>"',
        )
        .replace(
            f"karni-history-chronicle {dist_version('karni-history-chronicle')}",
            "karni-history-chronicle <version>",
        )
        .replace(
            f'"version": "{dist_version("karni-history-chronicle")}"', '"version": "<version>"'
        )
    )


def test_doctor_snapshot(doctor_project: Path, capsys, snapshot_text) -> None:
    assert main(["doctor"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert normalize(captured.out, doctor_project) == snapshot_text


def test_doctor_json_snapshot(doctor_project: Path, capsys, snapshot_text) -> None:
    assert main(["doctor", "--json"]) == 0
    out = capsys.readouterr().out
    facts = json.loads(out)
    assert facts["project"] == str(doctor_project)
    assert facts["interpreter"]["executable"] == sys.executable
    assert normalize(out, doctor_project) == snapshot_text


def test_doctor_json_is_the_same_facts_as_text(doctor_project: Path, capsys) -> None:
    main(["doctor", "--json"])
    facts = json.loads(capsys.readouterr().out)
    main(["doctor"])
    text = capsys.readouterr().out
    for provider in facts["history"]["providers"]:
        assert provider["name"] in text and provider["distribution"] in text
    for failure in facts["history"]["failures"]:
        assert f"{failure['name']}: {failure['error']}" in text
    assert "adapters:    fresh" in text and facts["adapters"]["status"] == "fresh"


def test_doctor_asks_for_detection_only(
    eventsite: Path, monkeypatch, capsys, site_dir, make_distribution
) -> None:
    make_distribution(
        site_dir,
        "asked-history",
        "1.0",
        {"karni.history_providers": {"asked": "asked_provider:AskedProvider"}},
        {"asked_provider.py": ASKING_PROVIDER},
    )
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "asked")
    monkeypatch.chdir(eventsite)
    assert main(["doctor"]) == 0
    assert main(["doctor", "--json"]) == 0
    out = capsys.readouterr().out
    assert "store detected" in out
    assert not (eventsite / "context-was-called").exists()


def test_doctor_lists_builtin_chronicle_and_its_store(eventsite: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    monkeypatch.chdir(eventsite)
    main(["doctor", "--json"])
    (provider,) = json.loads(capsys.readouterr().out)["history"]["providers"]
    assert provider["name"] == "gigai-chronicle"
    assert provider["distribution"] == "karni-history-chronicle"
    assert (provider["builtin"], provider["third_party"], provider["detects_store"]) == (
        True,
        False,
        False,
    )
    (eventsite / ".chronicle").mkdir()
    main(["doctor", "-q"])
    out = capsys.readouterr().out
    assert "gigai-chronicle  karni-history-chronicle" in out
    assert "(built in)  store detected" in out


def test_doctor_outside_a_project_still_reports(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"project:     none (no manage.py or karni.rules.py at or above {tmp_path})"
    )
    assert "adapters:    not checked (no project)" in out
    assert "history providers: none installed" in out
    assert "tip:" not in out
    assert main(["doctor", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["project"] is None and facts["adapters"]["status"] == "no-project"


def test_doctor_calls_an_adapter_never_written_missing(
    eventsite: Path, monkeypatch, capsys
) -> None:
    (eventsite / "AGENTS.md").unlink()
    monkeypatch.chdir(eventsite)
    main(["doctor", "--json"])
    adapters = json.loads(capsys.readouterr().out)["adapters"]
    assert adapters == {"status": "missing", "stale": [], "missing": ["AGENTS.md"], "error": None}
    main(["doctor", "-q"])
    assert "adapters:    missing: AGENTS.md; run `karni rules sync`\n" in capsys.readouterr().out


def test_doctor_tells_missing_from_stale_adapters(eventsite: Path, monkeypatch, capsys) -> None:
    (eventsite / "AGENTS.md").unlink()
    claude = eventsite / "CLAUDE.md"
    claude.write_text(claude.read_text() + "an edit\n")
    monkeypatch.chdir(eventsite)
    main(["doctor", "--json"])
    adapters = json.loads(capsys.readouterr().out)["adapters"]
    assert (adapters["status"], adapters["missing"], adapters["stale"]) == (
        "stale",
        ["AGENTS.md"],
        ["CLAUDE.md"],
    )
    main(["doctor", "-q"])
    line = "adapters:    missing: AGENTS.md; stale: CLAUDE.md; run `karni rules sync`\n"
    assert line in capsys.readouterr().out
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "missing: AGENTS.md; out of date: CLAUDE.md; run `karni rules sync`" in out


def test_a_project_that_never_synced_has_its_adapters_missing(tmp_path: Path, run_cli) -> None:
    (tmp_path / "manage.py").write_text("")
    result = run_cli("doctor", "-q", cwd=tmp_path)
    adapters = next(line for line in result.stdout.splitlines() if line.startswith("adapters:"))
    assert adapters.startswith("adapters:    missing: AGENTS.md, CLAUDE.md, ")
    assert "stale" not in adapters


def test_doctor_reports_an_invalid_rules_file_and_still_exits_0(
    eventsite: Path, monkeypatch, capsys
) -> None:
    (eventsite / "karni.rules.py").write_text("import os\n")
    monkeypatch.chdir(eventsite)
    assert main(["doctor", "-q"]) == 0
    assert "adapters:    not checked: karni.rules.py:1:" in capsys.readouterr().out


def test_doctor_usage_errors_exit_2(eventsite: Path, run_cli) -> None:
    for args in (["--verbos"], ["extra"]):
        result = run_cli("doctor", *args, cwd=eventsite)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr.startswith("karni: ") and result.stderr.count("\n") == 1


def test_doctor_json_in_a_real_process_is_valid_and_tip_free(eventsite: Path, run_cli) -> None:
    result = run_cli("doctor", "--json", cwd=eventsite)
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["project"] == os.path.realpath(eventsite)
    assert not (eventsite / ".karni").exists()


def test_collect_without_a_project_does_not_detect() -> None:
    from karni.agent.history import discover

    facts = collect(None, discover())
    assert facts["project"] is None
    assert all(p["detects_store"] is None for p in facts["history"]["providers"])


OWN_PROVIDERS = {
    "adr": "karni-history-adr",
    "gigai-chronicle": "karni-history-chronicle",
    "historian": "karni-historian",
}


def test_doctor_lists_the_providers_installed_in_this_environment(
    eventsite: Path, monkeypatch, capsys
) -> None:
    """No allow-list: every provider this venv has (the workspace installs all of Karni's)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        versions = {name: dist_version(dist) for name, dist in OWN_PROVIDERS.items()}
    except PackageNotFoundError as error:
        pytest.skip(f"not every Karni provider is installed here: {error}")
    monkeypatch.delenv("KARNI_HISTORY_PROVIDERS")
    monkeypatch.chdir(eventsite)  # the example ships doc/adr/: the adr provider detects it
    assert main(["doctor", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    listed = {p["name"]: p for p in facts["history"]["providers"]}
    for name, distribution in OWN_PROVIDERS.items():
        assert listed[name]["distribution"] == distribution
        assert listed[name]["version"] == versions[name]
        assert listed[name]["third_party"] is False
    assert listed["adr"]["detects_store"] is True
    assert listed["historian"]["detects_store"] is False
    assert listed["gigai-chronicle"]["detects_store"] is False
    assert facts["history"]["failures"] == []
    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    for name, distribution in OWN_PROVIDERS.items():
        row = next(line for line in text.splitlines() if line.startswith(f"  {name} "))
        assert f"{distribution} {versions[name]}" in row
        assert row.endswith("store detected" if name == "adr" else "no store")
    assert "tip:" not in text  # a store is detected


def test_doctor_verbose_adds_entry_points_times_and_store_markers(
    eventsite: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    monkeypatch.setenv("KARNI_CACHE_DIR", str(eventsite / "cache-here"))
    (eventsite / ".chronicle").mkdir()
    monkeypatch.chdir(eventsite)
    assert main(["doctor", "-v", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    import karni.cli

    assert lines[2].endswith(f" in {os.path.dirname(os.path.abspath(karni.cli.__file__))}")
    assert lines[3] == f"cache:       {eventsite / 'cache-here'}"
    assert lines[4] == "allowed:     KARNI_HISTORY_PROVIDERS=gigai-chronicle"
    row = lines.index(next(line for line in lines if line.startswith("  gigai-chronicle")))
    details = lines[row + 1]
    assert details.startswith("      entry point karni.agent.history_chronicle:ChronicleProvider; ")
    assert "; loaded in " in details and " ms; detect " in details
    assert details.endswith(f"; store marker {eventsite / '.chronicle'}")


def test_doctor_verbose_json_has_the_details_and_plain_json_does_not(
    doctor_project: Path, capsys
) -> None:
    main(["doctor", "--json"])
    plain = json.loads(capsys.readouterr().out)
    main(["doctor", "--json", "--verbose"])
    verbose = json.loads(capsys.readouterr().out)
    details = {"entry_point", "load_ms", "detect_ms", "store_marker"}
    for short, long in zip(
        plain["history"]["providers"], verbose["history"]["providers"], strict=True
    ):
        assert not details & set(short)
        assert {key: long[key] for key in short} == short
        assert isinstance(long["load_ms"], float) and isinstance(long["detect_ms"], float)
    by_name = {provider["name"]: provider for provider in verbose["history"]["providers"]}
    assert by_name["my-history"]["store_marker"] is None  # it declares no markers
    assert by_name["gigai-chronicle"]["store_marker"] is None  # no .chronicle here
    assert {"karni_cli_path", "cache_dir", "allowed_providers"} <= set(verbose)
    assert not {"karni_cli_path", "cache_dir", "allowed_providers"} & set(plain)


@pytest.mark.parametrize("claude_settings", [False, True], ids=["no-settings", "claude-settings"])
def test_doctor_imports_stay_lean(
    eventsite: Path, tmp_path: Path, probe_imports, run_cli, claude_settings: bool
) -> None:
    """No pathlib, json or re when the tip was already shown (the usual run).

    With Claude Code settings files in the project and the user's folder (Karni's
    hooks in one of them), as most Claude Code users have: reading them must not
    import ``json`` either (see docs/performance.md).
    """
    (eventsite / ".karni" / "local").mkdir(parents=True)
    (eventsite / ".karni" / "local" / "state.json").write_text(
        '{\n  "history_tip_shown": true\n}\n', encoding="utf-8"
    )
    user = tmp_path / "claude-user"
    env = {"KARNI_HISTORY_PROVIDERS": "gigai-chronicle", "CLAUDE_CONFIG_DIR": str(user)}
    if claude_settings:
        user.mkdir()
        (user / "settings.json").write_text('{"model": "opus", "hooks": {}}\n', encoding="utf-8")
        (eventsite / ".claude").mkdir()
        (eventsite / ".claude" / "settings.json").write_text(
            '{\n  "permissions": {"allow": ["Bash(npm test)"]}\n}\n', encoding="utf-8"
        )
        installed = run_cli("hooks", "install", "--agent", "claude-code", cwd=eventsite, env=env)
        assert installed.returncode == 0, installed.stderr
    done = probe_imports(eventsite, ["doctor"], env=env)
    assert done.returncode == 0, done.stderr
    assert "tip:" not in done.stdout
    assert ("claude-code local (installed)" in done.stdout) is claude_settings
    heavy = {"argparse", "json", "re", "pathlib", "subprocess", "typing", "dataclasses"}
    heavy |= {"importlib", "importlib.metadata", "tomllib", "zlib", "_ast", "fcntl"}
    assert not heavy & done.modules, heavy & done.modules


def test_doctor_names_a_settings_file_that_is_not_toml(eventsite: Path, run_cli, tmp_path) -> None:
    (eventsite / ".karni").mkdir(exist_ok=True)
    (eventsite / ".karni" / "config.toml").write_text("suggest_tools = \n[historian\n")
    user = tmp_path / "user-config"
    (user / "karni").mkdir(parents=True)
    (user / "karni" / "config.toml").write_text("= nothing\n")
    env = {"XDG_CONFIG_HOME": str(user), "KARNI_HISTORY_PROVIDERS": "gigai-chronicle"}
    result = run_cli("doctor", "-q", cwd=eventsite, env=env)
    assert result.returncode == 0
    settings = [line for line in result.stdout.splitlines() if line.startswith("settings:")]
    assert len(settings) == 2
    for line, path in zip(settings, [eventsite / ".karni", user / "karni"], strict=True):
        assert line.startswith(f"settings:    {path}/config.toml is not valid TOML (")
        assert line.endswith("); correct it there")
    document = json.loads(run_cli("doctor", "--json", cwd=eventsite, env=env).stdout)
    assert len(document["settings"]["problems"]) == 2
    context = run_cli("context", cwd=eventsite, env=env)
    assert (context.returncode, context.stderr) == (0, "")
    assert context.stdout.startswith("APPS: events(apps/events/) ")


def test_doctor_has_no_settings_line_when_the_files_read(eventsite: Path, run_cli) -> None:
    (eventsite / ".karni").mkdir(exist_ok=True)
    (eventsite / ".karni" / "config.toml").write_text("suggest_tools = false\n")
    result = run_cli("doctor", cwd=eventsite)
    assert "settings:" not in result.stdout
