"""karni.rules.py: read with the AST and never run; every malformed file is one line, exit 1."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from karni.cli.errors import KarniError
from karni.cli.main import main
from karni.cli.rules.file import load_rules_file
from karni.cli.rules.model import RulesFileError


def load(tmp_path: Path, source: str | bytes):
    path = tmp_path / "karni.rules.py"
    if isinstance(source, bytes):
        path.write_bytes(source)
    else:
        path.write_text(textwrap.dedent(source).lstrip("\n"))
    return load_rules_file(tmp_path)


# (id, source, line the error must name)
ERRORS = [
    ("syntax", "ADD = [\n", 1),
    ("nul-byte", b"ADD = []\x00\n", 1),
    ("import", "import os\n", 1),
    ("function", "def f():\n    pass\n", 1),
    ("class", "class C:\n    pass\n", 1),
    ("bare-expression", '"""doc"""\nprint("hi")\n', 2),
    ("late-docstring", 'ADD = []\n"""not a docstring"""\n', 2),
    ("if", "if True:\n    ADD = []\n", 1),
    ("augmented", "ADD = []\nADD += []\n", 2),
    ("annotated", "ADD: list = []\n", 1),
    ("chained", "ADD = DISABLE = []\n", 1),
    ("unpacking", "ADD, DISABLE = [], []\n", 1),
    ("unknown-setting", "RULES = []\n", 1),
    ("lowercase-setting", "add = []\n", 1),
    ("assigned-twice", "DISABLE = []\n\nDISABLE = []\n", 3),
    ("non-literal-name", "ADD = RULES\n", 1),
    ("non-literal-call", "ADD = list()\n", 1),
    ("non-literal-nested", 'ADD = [\n    {"code": "P001", "rule": str(1)},\n]\n', 2),
    ("f-string", 'ADD = [{"code": "P001", "rule": f"{1}"}]\n', 1),
    ("dict-unpacking", 'ADD = [{**{}, "code": "P001"}]\n', 1),
    ("add-not-list", 'ADD = {"code": "P001"}\n', 1),
    ("add-entry-not-dict", 'ADD = [\n    "P001",\n]\n', 2),
    ("add-missing-code", 'ADD = [\n    {"rule": "x"},\n]\n', 2),
    ("add-missing-rule", 'ADD = [\n    {"code": "P001"},\n]\n', 2),
    ("add-unknown-key", 'ADD = [\n    {"code": "P001",\n     "rul": "x"},\n]\n', 3),
    ("add-k-code", 'ADD = [{"code": "K100", "rule": "x"}]\n', 1),
    ("add-bad-code", 'ADD = [{"code": "P01", "rule": "x"}]\n', 1),
    ("add-lowercase-code", 'ADD = [{"code": "p001", "rule": "x"}]\n', 1),
    ("add-four-letters", 'ADD = [{"code": "ABCD001", "rule": "x"}]\n', 1),
    ("add-code-not-string", 'ADD = [{"code": 1, "rule": "x"}]\n', 1),
    (
        "add-duplicate-code",
        'ADD = [\n    {"code": "P001", "rule": "x"},\n    {"code": "P001", "rule": "y"},\n]\n',
        3,
    ),
    ("add-empty-rule", 'ADD = [{"code": "P001", "rule": "  "}]\n', 1),
    ("add-rule-not-string", 'ADD = [{"code": "P001", "rule": ["x"]}]\n', 1),
    ("add-multiline-summary", 'ADD = [{"code": "P001", "rule": "a\\nb"}]\n', 1),
    ("add-long-summary", 'ADD = [{"code": "P001", "rule": "' + "x" * 101 + '"}]\n', 1),
    ("add-bad-category", 'ADD = [{"code": "P001", "rule": "x", "category": "ops"}]\n', 1),
    ("add-bad-severity", 'ADD = [{"code": "P001", "rule": "x", "severity": "may"}]\n', 1),
    ("add-repeated-key", 'ADD = [{"code": "P001", "rule": "x",\n        "rule": "y"}]\n', 2),
    ("add-key-not-string", 'ADD = [{1: "x"}]\n', 1),
    ("override-not-dict", 'OVERRIDE = ["K004"]\n', 1),
    ("override-unknown-code", 'OVERRIDE = {\n    "K099": {"severity": "should"},\n}\n', 2),
    ("override-project-code", 'OVERRIDE = {"P001": {"severity": "should"}}\n', 1),
    ("override-value-not-dict", 'OVERRIDE = {"K004": "should"}\n', 1),
    ("override-empty", 'OVERRIDE = {"K004": {}}\n', 1),
    ("override-unknown-field", 'OVERRIDE = {"K004": {"code": "K005"}}\n', 1),
    ("override-bad-severity", 'OVERRIDE = {"K004": {"severity": "never"}}\n', 1),
    ("override-empty-text", 'OVERRIDE = {"K004": {"rule": ""}}\n', 1),
    ("disable-not-list", 'DISABLE = "K008"\n', 1),
    ("disable-unknown-code", 'DISABLE = [\n    "K008",\n    "K999",\n]\n', 3),
    ("disable-project-code", 'DISABLE = ["P001"]\n', 1),
    ("disable-lowercase", 'DISABLE = ["k008"]\n', 1),
    ("disable-not-string", "DISABLE = [8]\n", 1),
    ("adapters-not-dict", 'ADAPTERS = ["aider"]\n', 1),
    ("adapters-unknown", 'ADAPTERS = {\n    "vscode": False,\n}\n', 2),
    ("adapters-bad-value", 'ADAPTERS = {"aider": 0}\n', 1),
    ("adapters-absolute", 'ADAPTERS = {"aider": "/etc/CONVENTIONS.md"}\n', 1),
    ("adapters-parent", 'ADAPTERS = {"aider": "../CONVENTIONS.md"}\n', 1),
    ("adapters-backslash", 'ADAPTERS = {"aider": "docs\\\\CONVENTIONS.md"}\n', 1),
    ("adapters-trailing-slash", 'ADAPTERS = {"aider": "docs/"}\n', 1),
    ("adapters-empty", 'ADAPTERS = {"aider": ""}\n', 1),
    ("adapters-karni-folder", 'ADAPTERS = {"aider": ".karni/CONVENTIONS.md"}\n', 1),
    ("adapters-rules-file", 'ADAPTERS = {"aider": "karni.rules.py"}\n', 1),
    ("adapters-collision", 'ADAPTERS = {\n    "agents": True,\n    "aider": "AGENTS.md",\n}\n', 3),
    (
        "adapters-moved-collision",
        'ADAPTERS = {\n    "aider": "x.md",\n    "cline": "X.md",\n}\n',
        3,
    ),
]


@pytest.mark.parametrize(
    ("source", "line"), [case[1:] for case in ERRORS], ids=[c[0] for c in ERRORS]
)
def test_each_error_names_file_line_and_fix(tmp_path: Path, source: str | bytes, line: int) -> None:
    with pytest.raises(RulesFileError) as caught:
        load(tmp_path, source)
    error = caught.value
    message = str(error)
    assert isinstance(error, KarniError) and error.exit_code == 1
    assert error.line == line
    assert message.startswith(f"karni.rules.py:{line}: ")
    assert "\n" not in message
    assert "; " in message  # problem; fix


def test_all_error_messages(tmp_path: Path, snapshot_text) -> None:
    lines = []
    for name, source, _ in ERRORS:
        with pytest.raises(RulesFileError) as caught:
            load(tmp_path, source)
        lines.append(f"{name}: {caught.value}")
    assert "\n".join(lines) + "\n" == snapshot_text


def test_cli_reports_the_error_and_exits_1(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "manage.py").write_text("")
    (tmp_path / "karni.rules.py").write_text('DISABLE = ["K008"]\nDISABLE = []\n')
    monkeypatch.chdir(tmp_path)
    for argv in (["rules"], ["rules", "--json"], ["rules", "sync"], ["rules", "sync", "--check"]):
        assert main(argv) == 1
        out, err = capsys.readouterr()
        assert out == ""
        assert err == (
            "karni: karni.rules.py:2: `DISABLE` is assigned twice (first on line 1); "
            "keep one assignment\n"
        )


def test_the_file_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(RulesFileError):
        load(tmp_path, f"open({str(marker)!r}, 'w').close()\n")
    assert not marker.exists()


def test_missing_file_means_no_project_rules(tmp_path: Path) -> None:
    rules_file = load_rules_file(tmp_path)
    assert rules_file.path is None
    assert (rules_file.add, rules_file.override, rules_file.disable, rules_file.adapters) == (
        (),
        {},
        frozenset(),
        {},
    )


def test_folder_in_its_place(tmp_path: Path) -> None:
    (tmp_path / "karni.rules.py").mkdir()
    with pytest.raises(RulesFileError, match=r"^karni\.rules\.py:1: is a folder, not a file; "):
        load_rules_file(tmp_path)


def test_a_full_valid_file(tmp_path: Path) -> None:
    rules_file = load(
        tmp_path,
        '''
        """Project rules."""
        # comments are fine
        ADD = [
            {"code": "P001", "rule": "  Store money as integer cents.  "},
            {"code": "ABC123", "rule": "Long rule\\nover lines.", "summary": "Short.",
             "category": "backend", "severity": "should", "rationale": "Why.", "fix": "How."},
        ]
        OVERRIDE = {"K004": {"severity": "should", "summary": "Models in models.py."}}
        DISABLE = ("K008", "K006")
        ADAPTERS = {"aider": False, "claude": "docs/CLAUDE.md", "agents": True}
        ''',
    )
    assert rules_file.path == str(tmp_path / "karni.rules.py")
    first, second = rules_file.add
    assert (first.code, first.summary, first.rule, first.category, first.severity) == (
        "P001",
        "Store money as integer cents.",
        "Store money as integer cents.",
        "project",
        "must",
    )
    assert (second.code, second.summary, second.category, second.severity) == (
        "ABC123",
        "Short.",
        "backend",
        "should",
    )
    assert (second.rationale, second.fix, second.source) == ("Why.", "How.", "karni.rules.py")
    assert rules_file.override == {
        "K004": {"severity": "should", "summary": "Models in models.py."}
    }
    assert rules_file.disable == frozenset({"K006", "K008"})
    assert rules_file.adapters == {"aider": None, "claude": "docs/CLAUDE.md", "agents": "AGENTS.md"}


def test_the_scaffold_template_parses_to_nothing(tmp_path: Path) -> None:
    from karni.cli.scaffold import project_files

    text = dict(project_files("demo"))["karni.rules.py"]
    rules_file = load(tmp_path, text)
    assert rules_file.path is not None
    assert (rules_file.add, rules_file.override, rules_file.disable, rules_file.adapters) == (
        (),
        {},
        frozenset(),
        {},
    )
