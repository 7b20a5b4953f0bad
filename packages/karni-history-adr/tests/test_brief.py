"""The briefs the provider gives Karni, and the full ones its command prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from karni_history_adr.cli import main
from karni_history_adr.provider import AdrProvider

EVENTSITE = Path(__file__).resolve().parents[3] / "examples" / "eventsite"


@pytest.mark.parametrize(
    "path",
    [
        "apps/notifications/tasks.py",
        "apps/tickets/models.py",
        "apps/tickets/viewsets.py",
        "apps/unrelated/models.py",
    ],
)
def test_context(adr_tools_project: Path, path: str, snapshot_text: object) -> None:
    brief = AdrProvider().context(adr_tools_project, path)
    assert f"{brief}\n" == snapshot_text


def test_superseded_records_come_first_with_their_replacement(adr_tools_project: Path) -> None:
    brief = AdrProvider().context(adr_tools_project, "apps/notifications/tasks.py")
    assert brief is not None
    lines = brief.splitlines()
    assert lines[0].startswith("**Superseded, deprecated or rejected")
    assert lines[1] == (
        "- ADR 2: Use Celery for emails (superseded by ADR 5: "
        "Send emails from a transactional outbox, 2025-02-03)"
    )


def test_project_context(
    adr_tools_project: Path, madr_project: Path, snapshot_text: object
) -> None:
    provider = AdrProvider()
    briefs = [provider.project_context(adr_tools_project), provider.project_context(madr_project)]
    assert "\n\n".join(str(brief) for brief in briefs) + "\n" == snapshot_text


def test_madr_context(madr_project: Path, snapshot_text: object) -> None:
    assert f"{AdrProvider().context(madr_project, 'config/settings.py')}\n" == snapshot_text


def test_no_records_means_no_brief(tmp_path: Path) -> None:
    (tmp_path / "docs" / "adr").mkdir(parents=True)
    provider = AdrProvider()
    assert provider.detect(tmp_path) is True
    assert provider.context(tmp_path, "apps/events/models.py") is None
    assert provider.project_context(tmp_path) is None


def test_detect_wants_a_folder(tmp_path: Path) -> None:
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "adr").write_text("not a folder", encoding="utf-8")
    assert AdrProvider().detect(tmp_path) is False
    (tmp_path / "docs" / "decisions").mkdir(parents=True)
    assert AdrProvider().detect(tmp_path) is True


def test_full_command_quotes_the_path(tmp_path: Path) -> None:
    provider = AdrProvider()
    assert provider.full_command(tmp_path, "apps/events/models.py") == (
        "karni-history-adr show apps/events/models.py"
    )
    assert provider.full_command(tmp_path, "my app/x.py") == "karni-history-adr show 'my app/x.py'"
    assert provider.full_command(tmp_path, None) == "karni-history-adr list --accepted"


def test_show_prints_the_brief_with_files(
    adr_tools_project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    snapshot_text: object,
) -> None:
    monkeypatch.chdir(adr_tools_project / "doc")
    assert main(["show", "../apps/notifications/tasks.py"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out == snapshot_text


def test_list(
    adr_tools_project: Path, capsys: pytest.CaptureFixture[str], snapshot_text: object
) -> None:
    assert main(["--root", str(adr_tools_project), "list"]) == 0
    listing = capsys.readouterr().out
    assert main(["--root", str(adr_tools_project), "list", "--accepted"]) == 0
    accepted = capsys.readouterr().out
    assert f"{listing}\n{accepted}" == snapshot_text


def test_show_without_matches(adr_tools_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(adr_tools_project), "show", str(adr_tools_project / "x.py")]) == 0
    assert (
        capsys.readouterr().out == "No decision record mentions x.py, its module or its folder.\n"
    )


def test_errors_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"karni-history-adr: no ADR folder (doc/adr/, docs/decisions/, docs/adr/) at or above "
        f"{tmp_path}; run it inside a project with decision records, or pass --root DIR\n"
    )
    (tmp_path / "doc" / "adr").mkdir(parents=True)
    assert main(["show", "/elsewhere/x.py"]) == 1
    assert capsys.readouterr().err == (
        f"karni-history-adr: `/elsewhere/x.py` is outside the project {tmp_path}; "
        f"pass a path inside it\n"
    )
    assert main(["--root", str(tmp_path / "nope"), "list"]) == 1
    assert "holds none of doc/adr/, docs/decisions/, docs/adr/" in capsys.readouterr().err


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "karni-history-adr"
    completed = subprocess.run(
        [str(script), "show", "apps/events/models.py"],
        cwd=EVENTSITE,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert "  doc/adr/0004-soft-delete-events.md\n" in completed.stdout


def test_the_example_project_brief(run_karni: object, snapshot_text: object) -> None:
    """`karni context --with-history` in examples/eventsite shows a genuine brief."""
    result = run_karni(  # type: ignore[operator]
        "context",
        "--with-history",
        "apps/events/models.py",
        cwd=EVENTSITE,
        env={"KARNI_HISTORY_PROVIDERS": "adr"},
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert f"{result.history_block()}\n" == snapshot_text


def test_the_docs_show_the_example_projects_real_brief() -> None:
    from karni.agent.history import compose

    block = compose(EVENTSITE, "apps/events/models.py", providers=[AdrProvider()])
    assert block is not None
    repository = EVENTSITE.parents[1]
    concepts = (repository / "docs/concepts/history-providers.md").read_text(encoding="utf-8")
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert "\n".join(f"  {line}" for line in block.splitlines()) in concepts
    assert block in readme


def test_the_command_cleans_every_line_it_prints(tmp_path, capsys):
    from karni_history_adr.cli import main

    folder = tmp_path / "doc" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-evil.md").write_text(
        "# 1. Evil\x1b]52;c;Y3VybHxzaA==\x07 title\u200b\u202e\n\n"
        "Date: 2026-01-02\n\n## Status\n\nAccepted\x1b[2J\n\n## Context\n\napps/events/models.py\n",
        encoding="utf-8",
    )
    assert main(["--root", str(tmp_path), "list"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u200b" not in out and "\u202e" not in out
    assert "Y3VybHxzaA" not in out  # the whole clipboard write is gone, not just its ESC
    assert "Evil title" in out
