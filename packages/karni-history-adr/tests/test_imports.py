"""The provider runs before every edit: which modules a brief may import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """\
import sys
from karni_history_adr.provider import AdrProvider
brief = AdrProvider().context(sys.argv[1], sys.argv[2])
print(brief is not None)
print(sorted({"dataclasses", "typing", "re", "pathlib", "json"} & set(sys.modules)))
"""


def _brief_and_imports(project: Path, path: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(project), path],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def test_a_brief_imports_neither_dataclasses_nor_typing(adr_tools_project: Path) -> None:
    # This corpus holds a title with terminal escapes, which karni-core's sanitiser
    # removes with `re`; nothing else heavy is loaded.
    found, imported = _brief_and_imports(adr_tools_project, "apps/tickets/models.py").splitlines()
    assert found == "True"
    assert imported in ("[]", "['re']")


def test_a_brief_of_plain_records_imports_no_re_pathlib_or_json(tmp_path: Path) -> None:
    folder = tmp_path / "doc" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-soft-delete.md").write_text(
        "# 1. Soft-delete events\n\nDate: 2025-03-01\n\n## Status\n\nSuperseded by "
        "[2. Archive](0002-archive.md)\n\n## Context\n\napps/events/models.py deletes rows.\n",
        encoding="utf-8",
    )
    (folder / "0002-archive.md").write_text(
        "# 2. Archive events\n\n* Status: accepted\n* Date: 2025-04-01\n\n"
        "Supersedes ADR-0001. The module apps.events.models keeps an archive.\n",
        encoding="utf-8",
    )
    assert _brief_and_imports(tmp_path, "apps/events/models.py") == "True\n[]\n"
