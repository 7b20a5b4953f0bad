"""`karni rules`: the listing, K008 with and without a history store, --explain, --json."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from karni.agent.history import estimate_tokens
from karni.cli.main import main
from karni.cli.rules.registry import KARNI_RULES, LISTING_TOKEN_BUDGET

K008_LINE = "K008 Before editing a file: karni context --with-history FILE."


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project in Karni's layout (the ``# karni:apps`` marker), so every rule applies."""
    root = tmp_path / "proj"
    (root / "config").mkdir(parents=True)
    (root / "manage.py").write_text("")
    (root / "config" / "settings.py").write_text("INSTALLED_APPS = [\n    # karni:apps\n]\n")
    monkeypatch.chdir(root)
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["rules", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the listing ------------------------------------------------------------------------------


def test_listing_without_store(project: Path, capsys, snapshot_text) -> None:
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    assert K008_LINE not in out
    assert out == snapshot_text


LAYOUT_RULES = ["K002", "K003", "K004", "K005", "K010", "K011"]


def test_a_project_not_in_karnis_layout_leaves_the_layout_rules_out(project: Path, capsys) -> None:
    (project / "config" / "settings.py").write_text('INSTALLED_APPS = ["shop"]\n')
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    codes = [line.split()[0] for line in out.splitlines() if line[:1] == "K"]
    assert codes == ["K001", "K007", "K009", "K006"]
    assert out.splitlines()[-2] == (
        "Left out here, as this project is not in Karni's layout: K002 K003 K004 K005 K010 K011"
    )
    for code in LAYOUT_RULES:
        status, _, error = run(capsys, "--explain", code)
        assert status == 1 and "is not active here: it applies only" in error, code
    _, _, error = run(capsys, "--explain", "K003")
    assert error == (
        "karni: rule K003 is not active here: it applies only in Karni's layout, which this "
        "project does not follow: apps in apps/, listed before the `# karni:apps` marker in "
        "config/settings.py (condition `karni-apps`)\n"
    )


def test_karnis_pages_folder_alone_keeps_the_frontend_rules(project: Path, capsys) -> None:
    (project / "config" / "settings.py").unlink()
    (project / "frontend" / "src" / "pages").mkdir(parents=True)
    _, out, _ = run(capsys)
    assert "K010 Pages live in frontend/src/pages/, one component per route." in out
    assert out.splitlines()[-2].endswith(": K002 K003 K004 K005")


def test_a_disabled_layout_rule_is_not_named_as_left_out(project: Path, capsys) -> None:
    (project / "config" / "settings.py").unlink()
    (project / "karni.rules.py").write_text('DISABLE = ["K010", "K011"]\n')
    _, out, _ = run(capsys)
    assert out.splitlines()[-2].endswith(": K002 K003 K004 K005")


def test_listing_with_store_adds_exactly_k008(
    project: Path, store_provider: Path, capsys, snapshot_text
) -> None:
    code, without, _ = run(capsys)
    assert code == 0
    (project / ".my-history").mkdir()
    code, with_store, err = run(capsys)
    assert (code, err) == (0, "")
    assert with_store == snapshot_text
    added = sorted(with_store.splitlines())
    added.remove(K008_LINE)
    assert added == sorted(without.splitlines())
    lines = with_store.splitlines()
    position = lines.index(K008_LINE)
    assert lines[position - 1].startswith("K007 ") and lines[position + 1].startswith("K009 ")


def test_conditions_variable_forces_and_silences_k008(
    project: Path, store_provider: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "history")
    assert K008_LINE in run(capsys)[1]
    (project / ".my-history").mkdir()
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "")
    assert K008_LINE not in run(capsys)[1]
    monkeypatch.delenv("KARNI_AGENT_CONDITIONS")
    assert K008_LINE in run(capsys)[1]


def test_disable_removes_k008_even_with_a_store(
    project: Path, store_provider: Path, capsys
) -> None:
    (project / ".my-history").mkdir()
    (project / "karni.rules.py").write_text('DISABLE = ["K008"]\n')
    code, out, _ = run(capsys)
    assert code == 0 and "K008" not in out
    code, _, err = run(capsys, "--explain", "K008")
    assert code == 1
    assert err == (
        "karni: rule K008 is disabled by DISABLE in karni.rules.py; remove it there to use it\n"
    )


def test_listing_stays_under_the_token_budget(project: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "history")
    _, out, _ = run(capsys)
    assert all(rule.code in out for rule in KARNI_RULES)  # the longest possible listing
    assert estimate_tokens(out) < LISTING_TOKEN_BUDGET
    assert len(out) / 4 < 400


def test_listing_shape(project: Path, capsys) -> None:
    out = run(capsys)[1]
    assert out.isascii()  # safe on any terminal encoding
    lines = out.splitlines()
    assert lines[-1] == "Why a rule exists and how to fix a breach: karni rules --explain CODE"
    sections = [line for line in lines if line.startswith("[")]
    assert sections == ["[workflow]", "[architecture]", "[backend]", "[frontend]"]
    body = [line for line in lines[1:-1] if not line.startswith("[")]
    assert all(line[:4].startswith("K") and line[4] == " " for line in body)


def test_project_rules_overrides_and_disables(project: Path, capsys, snapshot_text) -> None:
    (project / "karni.rules.py").write_text(
        textwrap.dedent(
            """
            '''Rules of the test project.'''
            ADD = [
                {"code": "P001", "rule": "Store money as integer cents."},
                {"code": "AB002", "summary": "Name pages after routes.",
                 "rule": "A page for /events is EventsPage.", "category": "frontend",
                 "severity": "should", "rationale": "Findable.", "fix": "Rename it."},
            ]
            OVERRIDE = {
                "K011": {"severity": "must", "summary": "Only frontend/src/api/ calls the API."},
            }
            DISABLE = ["K006"]
            """
        )
    )
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    assert out == snapshot_text
    assert "K006" not in out
    assert out.splitlines()[-3:-1] == ["[project]", "P001 Store money as integer cents."]
    frontend = out.split("[frontend]\n")[1].split("[project]")[0].splitlines()
    assert frontend[-1] == "AB002 Name pages after routes."


# -- --explain --------------------------------------------------------------------------------


def test_explain_any_case(project: Path, capsys, snapshot_text) -> None:
    code, upper, err = run(capsys, "--explain", "K004")
    assert (code, err) == (0, "")
    assert upper == snapshot_text
    assert run(capsys, "--explain", "k004")[1] == upper
    assert run(capsys, "--explain=k004")[1] == upper


def test_explain_k008_with_store(project: Path, capsys, monkeypatch, snapshot_text) -> None:
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "history")
    code, out, _ = run(capsys, "--explain", "k008")
    assert code == 0
    assert out == snapshot_text


def test_explain_inactive_k008_is_one_line_exit_1(project: Path, capsys) -> None:
    code, out, err = run(capsys, "--explain", "K008")
    assert (code, out) == (1, "")
    assert err == (
        "karni: rule K008 is not active here: it applies only when a prompt-history store is "
        "detected (condition `history`); see `karni doctor`\n"
    )


@pytest.mark.parametrize("code", ["K999", "P001", "nope"])
def test_explain_unknown_code(project: Path, capsys, code: str) -> None:
    status, out, err = run(capsys, "--explain", code)
    assert (status, out) == (1, "")
    assert err == (
        f"karni: unknown rule code `{code.upper()}`; run `karni rules` for the codes in effect\n"
    )


def test_explain_project_rule(project: Path, capsys, snapshot_text) -> None:
    (project / "karni.rules.py").write_text(
        'ADD = [{"code": "P001", "rule": "Store money as integer cents.", "fix": "Use cents."}]\n'
    )
    code, out, _ = run(capsys, "--explain", "p001")
    assert code == 0
    assert out == snapshot_text


# -- --json -----------------------------------------------------------------------------------


def test_json(project: Path, capsys, monkeypatch, snapshot_text) -> None:
    (project / "karni.rules.py").write_text(
        'ADD = [{"code": "P001", "rule": "Cents."}]\n'
        'OVERRIDE = {"K004": {"severity": "should"}}\n'
        'DISABLE = ["K006"]\n'
        'ADAPTERS = {"aider": False}\n'
    )
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "history")
    code, out, err = run(capsys, "--json")
    assert (code, err) == (0, "")
    assert out == snapshot_text
    document = json.loads(out)
    assert document["conditions"] == ["history", "karni-apps", "karni-pages"]
    assert document["rules_file"]["path"] == "karni.rules.py"
    by_code = {rule["code"]: rule for rule in document["rules"]}
    assert set(by_code) == {rule.code for rule in KARNI_RULES} | {"P001"}
    assert by_code["K004"]["severity"] == "should"
    assert by_code["K004"]["overridden"] == ["severity"]
    assert by_code["K006"]["active"] is False and by_code["K006"]["disabled"] is True
    assert by_code["K008"]["active"] is True and by_code["K008"]["condition"] == "history"


def test_json_without_store_or_rule_file(project: Path, capsys) -> None:
    document = json.loads(run(capsys, "--json")[1])
    assert document["conditions"] == ["karni-apps", "karni-pages"]
    assert document["rules_file"] is None
    k008 = next(rule for rule in document["rules"] if rule["code"] == "K008")
    assert k008["active"] is False and k008["disabled"] is False


# -- arguments and errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--bogus"],
            "karni: unknown option `--bogus` for `karni rules`; run `karni rules --help`",
        ),
        (["--explain"], "karni: `--explain` needs a rule code, e.g. `karni rules --explain K004`"),
        (["--explain="], "karni: `--explain` needs a rule code, e.g. `karni rules --explain K004`"),
        (
            ["--json", "--explain", "K001"],
            "karni: use either `--json` or `--explain CODE`, not both",
        ),
    ],
)
def test_usage_errors_exit_2(project: Path, capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (2, "", message + "\n")


def test_help(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and out.startswith("usage: karni rules")


def test_outside_a_project(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys)
    assert (code, out) == (1, "")
    assert err.startswith("karni: no Karni project at or above ") and err.count("\n") == 1


def test_broken_rules_file_is_one_line_exit_1(project: Path, capsys) -> None:
    (project / "karni.rules.py").write_text("import os\n")
    code, out, err = run(capsys)
    assert (code, out) == (1, "")
    assert err.startswith("karni: karni.rules.py:1: an import is not allowed; ")


# -- real stores and end to end ---------------------------------------------------------------


def test_subprocess_with_an_installed_provider(
    project: Path, store_provider: Path, run_cli
) -> None:
    without = run_cli("rules", cwd=project)
    assert without.returncode == 0 and K008_LINE not in without.stdout
    (project / ".my-history").mkdir()
    with_store = run_cli("rules", cwd=project)
    assert (with_store.returncode, with_store.stderr) == (0, "")
    assert sorted(with_store.stdout.splitlines()) == sorted(
        [*without.stdout.splitlines(), K008_LINE]
    )
    silenced = run_cli("rules", cwd=project, env={"KARNI_AGENT_CONDITIONS": ""})
    assert silenced.stdout == without.stdout


def test_builtin_chronicle_provider_detects_a_chronicle_folder(
    project: Path, capsys, monkeypatch
) -> None:
    from karni.agent.history import discover

    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    found = discover()
    if not any(installed.name == "gigai-chronicle" for installed in found.providers):
        pytest.skip(f"the built-in Chronicle provider does not load here: {found.failures}")
    without = run(capsys)[1]
    (project / ".chronicle").mkdir()

    def no_process(*args, **kwargs):
        raise AssertionError("detecting a store must not start a process")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    code, with_store, _ = run(capsys)
    assert code == 0
    assert sorted(with_store.splitlines()) == sorted([*without.splitlines(), K008_LINE])


def test_plain_listing_imports_stay_lean(project: Path, probe_imports) -> None:
    (project / "karni.rules.py").write_text('DISABLE = ["K006"]\n')
    done = probe_imports(project, ["rules"])
    assert done.returncode == 0, done.stderr
    heavy = {"argparse", "json", "subprocess", "dataclasses", "typing", "tomllib"}
    heavy |= {"tempfile", "shutil", "karni.cli.rules.adapters", "importlib.metadata"}
    assert "karni.cli.rules.parse" in done.modules  # the rules file was read
    assert not heavy & done.modules, heavy & done.modules


def test_runs_from_a_subfolder_of_the_project(project: Path, capsys, monkeypatch) -> None:
    top = run(capsys)[1]
    (project / "apps" / "events").mkdir(parents=True)
    monkeypatch.chdir(project / "apps" / "events")
    assert run(capsys) == (0, top, "")


def test_disable_k008_end_to_end(
    eventsite: Path, store_provider: Path, record_brief, run_cli
) -> None:
    """K008 is disabled like any other rule: ``DISABLE = ["K008"]`` in karni.rules.py."""
    (eventsite / "karni.rules.py").write_text('DISABLE = ["K008"]\n')
    no_store = run_cli("rules", cwd=eventsite)
    assert (no_store.returncode, no_store.stderr) == (0, "")
    record_brief(eventsite, "apps/events/models.py", "- decided: keep soft delete\n")
    for extra in ({}, {"KARNI_AGENT_CONDITIONS": "history"}):
        listing = run_cli("rules", cwd=eventsite, env=extra)
        assert (listing.returncode, listing.stdout, listing.stderr) == (0, no_store.stdout, "")
        assert "K008" not in listing.stdout
    document = json.loads(run_cli("rules", "--json", cwd=eventsite).stdout)
    assert document["conditions"] == [
        "history",
        "karni-apps",
        "karni-pages",
    ]  # the store is seen ...
    (k008,) = [rule for rule in document["rules"] if rule["code"] == "K008"]
    assert (k008["active"], k008["disabled"]) == (False, True)  # ... and the rule is off
    explain = run_cli("rules", "--explain", "k008", cwd=eventsite)
    assert (explain.returncode, explain.stdout) == (1, "")
    assert explain.stderr == (
        "karni: rule K008 is disabled by DISABLE in karni.rules.py; remove it there to use it\n"
    )
    check = run_cli("rules", "sync", "--check", cwd=eventsite)
    assert (check.returncode, check.stdout, check.stderr) == (0, "adapters are up to date\n", "")
    context = run_cli("context", "--with-history", "apps/events/models.py", cwd=eventsite)
    assert context.returncode == 0  # disabling the rule does not switch history off
    assert context.stdout.endswith(
        "HISTORY: apps/events/models.py (my-history)\n- decided: keep soft delete\n"
    )


def test_the_bundled_example_follows_the_layout_rules(eventsite: Path) -> None:
    """K004 and K005 name files; the example an agent learns from must use them."""
    import ast

    places = {"Model": "models.py", "ViewSet": "viewsets.py"}
    found: dict[str, list[str]] = {kind: [] for kind in places}
    for source in sorted((eventsite / "apps").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(base).rpartition(".")[2] for base in node.bases]
            for kind, filename in places.items():
                if any(base.endswith(kind) for base in bases):
                    found[kind].append(node.name)
                    assert source.name == filename, f"{node.name} is in {source}"
    assert len(found["Model"]) >= 5 and len(found["ViewSet"]) == 4


def test_listing_without_a_rules_file_imports_neither_pathlib_nor_re(
    project: Path, probe_imports
) -> None:
    done = probe_imports(project, ["rules"])
    assert done.returncode == 0, done.stderr
    assert "K001" in done.stdout
    heavy = {"pathlib", "re", "_ast", "karni.cli.rules.parse", "importlib", "zlib"}
    assert not heavy & done.modules, heavy & done.modules
