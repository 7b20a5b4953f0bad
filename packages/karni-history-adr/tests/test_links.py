"""A record that is a link out of the project is never read, by the brief or the command.

The rule of :mod:`karni.agent.common.paths`: what the project's files lead to
must lie in the project. ``docs/adr/0004-x.md`` pointing at a private note
elsewhere, or a ``doc/adr`` folder that is a link out of the project, shows
nothing of it; a link to another file of the project is read as that file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from karni_history_adr.cli import main
from karni_history_adr.provider import AdrProvider

PRIVATE = "# 4. Private: the payroll password is hunter2\n\n## Status\n\nAccepted\n\napps/pay.py\n"
INSIDE = "# 5. Pay runs nightly\n\n## Status\n\nAccepted\n\napps/pay.py\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "doc" / "adr").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "notes" / "pay.md").write_text(INSIDE, encoding="utf-8")
    outside = tmp_path / "home" / "notes"
    outside.mkdir(parents=True)
    (outside / "private.md").write_text(PRIVATE, encoding="utf-8")
    (root / "doc" / "adr" / "0004-private.md").symlink_to(outside / "private.md")
    (root / "doc" / "adr" / "0005-pay.md").symlink_to(root / "notes" / "pay.md")
    return root


def _everything(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    provider = AdrProvider()
    shown = [
        provider.context(str(root), "apps/pay.py") or "",
        provider.project_context(str(root)) or "",
    ]
    for command in (["show", str(root / "apps" / "pay.py")], ["list"], ["list", "--accepted"]):
        assert main(["--root", str(root), *command]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        shown.append(out)
    return "\n".join(shown)


def test_a_record_linked_out_of_the_project_is_never_read(project, capsys):
    shown = _everything(project, capsys)
    assert "hunter2" not in shown and "Private" not in shown
    assert "ADR 5: Pay runs nightly" in shown  # a link inside the project is read


def test_an_adr_folder_linked_out_of_the_project_is_never_read(project, tmp_path, capsys):
    elsewhere = tmp_path / "home" / "adr"
    elsewhere.mkdir()
    (elsewhere / "0004-private.md").write_text(PRIVATE, encoding="utf-8")
    (project / "docs").mkdir()
    (project / "docs" / "adr").symlink_to(elsewhere)
    shown = _everything(project, capsys)
    assert "hunter2" not in shown


def test_guard_the_same_record_as_a_file_is_read(project, capsys):
    (project / "doc" / "adr" / "0004-private.md").unlink()
    (project / "doc" / "adr" / "0004-private.md").write_text(PRIVATE, encoding="utf-8")
    assert "hunter2" in _everything(project, capsys)
