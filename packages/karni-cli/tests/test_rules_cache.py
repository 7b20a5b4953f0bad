"""karni.cli.rules.cache: a karni.rules.py parsed once is read back the same, without the parser."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from karni.agent.common.cache import cache_file
from karni.cli.rules import cache
from karni.cli.rules.cache import TAG, cached_rules_file
from karni.cli.rules.file import load_rules_file
from karni.cli.rules.model import RulesFileError

SOURCE = '''\
"""Project rules, é."""
ADD = [
    {"code": "P001", "rule": "Store money as integer cents."},
    {"code": "ABC123", "rule": "Long rule\\nover lines.", "summary": "Short.",
     "category": "backend", "severity": "should", "rationale": "Why.", "fix": "How."},
]
OVERRIDE = {"K004": {"severity": "should", "summary": "Models in models.py."}}
DISABLE = ("K008", "K006")
ADAPTERS = {"aider": False, "claude": "docs/CLAUDE.md", "agents": True}
'''


def facts(rules_file) -> tuple[object, ...]:
    """Everything a RulesFile holds, as comparable data."""
    return (
        rules_file.path,
        [rule.as_dict() for rule in rules_file.add],
        rules_file.override,
        rules_file.disable,
        rules_file.adapters,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "karni.rules.py").write_text(SOURCE, encoding="utf-8")
    return tmp_path


@pytest.fixture
def without_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the AST reader unimportable: a load that needs it raises ImportError."""
    monkeypatch.setitem(sys.modules, "karni.cli.rules.parse", None)


def test_a_parsed_file_reads_back_the_same_without_the_parser(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = load_rules_file(project)
    monkeypatch.setitem(sys.modules, "karni.cli.rules.parse", None)
    again = load_rules_file(project)
    assert facts(again) == facts(parsed)
    assert again.as_dict() == parsed.as_dict()
    assert again.add[1].source == "karni.rules.py"


def test_nothing_is_cached_before_a_parse(project: Path, without_parser: None) -> None:
    with pytest.raises(ImportError):
        load_rules_file(project)


def test_a_changed_file_is_parsed_again(project: Path) -> None:
    load_rules_file(project)
    (project / "karni.rules.py").write_text('DISABLE = ["K008"]\n', encoding="utf-8")
    rules_file = load_rules_file(project)
    assert (rules_file.add, rules_file.disable) == ((), frozenset({"K008"}))


def test_a_broken_file_is_never_remembered(project: Path) -> None:
    (project / "karni.rules.py").write_text('DISABLE = ["K008"]\nDISABLE = []\n')
    for _ in range(2):
        with pytest.raises(RulesFileError, match="assigned twice"):
            load_rules_file(project)
    assert cached_rules_file(str(project / "karni.rules.py"), b"") is None


def test_a_new_reader_judges_the_file_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgrade of Karni (another parser or registry file) must not trust an old parse."""
    load_rules_file(project)
    monkeypatch.setattr(cache, "_reader_stamp", lambda: [[1, 2], [3, 4]])
    monkeypatch.setitem(sys.modules, "karni.cli.rules.parse", None)
    with pytest.raises(ImportError):
        load_rules_file(project)


def test_a_file_not_in_utf8_is_parsed_every_time(project: Path) -> None:
    source = '# -*- coding: latin-1 -*-\n"""R\xe8gles."""\nDISABLE = ["K008"]\n'.encode("latin-1")
    (project / "karni.rules.py").write_bytes(source)
    assert load_rules_file(project).disable == frozenset({"K008"})
    assert cached_rules_file(str(project / "karni.rules.py"), source) is None


@pytest.mark.parametrize(
    "body",
    ["not json", "[]", '["x"]', '[1, 2, {"add": []}]', '[null, null, {"add": [{"code": 1}]}]'],
)
def test_a_damaged_entry_means_parse(project: Path, body: str) -> None:
    path = cache_file("rules-file", os.path.join(project, "karni.rules.py"))
    assert path is not None
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    encoded = body.encode()
    Path(path).write_bytes(f"{TAG}\t{len(encoded)}\n".encode() + encoded)
    assert load_rules_file(project).disable == frozenset({"K006", "K008"})


def test_a_damaged_entry_for_the_same_text_means_parse(project: Path) -> None:
    load_rules_file(project)
    path = cache_file("rules-file", os.path.join(project, "karni.rules.py"))
    assert path is not None
    text = Path(path).read_text(encoding="utf-8")
    body = text.partition("\n")[2]
    damaged = body.replace('"code":"P001"', '"code":"P001","colour":"red"')
    assert damaged != body
    Path(path).write_text(f"{TAG}\t{len(damaged.encode())}\n{damaged}", encoding="utf-8")
    assert [rule.code for rule in load_rules_file(project).add] == ["P001", "ABC123"]


@pytest.mark.parametrize("argv", [["rules"], ["check"], ["doctor"]])
def test_a_new_projects_commands_import_no_parser_after_the_first_run(
    tmp_path: Path, run_cli, probe_imports, argv: list[str]
) -> None:
    """In a project `karni new` made (it has karni.rules.py and .karni/config.toml).

    If this fails, something on the command's path imports ``pathlib``, the
    AST reader or a TOML parser again: see docs/performance.md.
    """
    made = run_cli("new", "demo", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "demo"
    assert (project / "karni.rules.py").is_file() and (project / ".karni" / "config.toml").is_file()
    first = probe_imports(project, argv)
    assert first.returncode == 0, first.stderr
    done = probe_imports(project, argv)
    assert done.returncode == 0, done.stderr
    heavy = {"pathlib", "_ast", "ast", "karni.cli.rules.parse", "tomllib", "re", "json"}
    assert not heavy & done.modules, heavy & done.modules
