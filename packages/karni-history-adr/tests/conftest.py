from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture
def adr_tools_project(tmp_path: Path) -> Path:
    """The adr-tools corpus, plus records no editor should be trusted to keep byte for byte."""
    root = tmp_path / "adr-tools"
    shutil.copytree(CORPUS / "adr-tools", root)
    folder = root / "doc" / "adr"
    (folder / "0006-windows-line-endings.md").write_bytes(
        b"# 6. Windows line endings\r\n\r\nDate: 2025-05-02\r\n\r\n## Status\r\n\r\n"
        b"Proposed\r\n\r\n## Context\r\n\r\nWritten on Windows; mentions apps/notifications/.\r\n"
    )
    (folder / "0007-a-record-with-a-bom.md").write_bytes(
        "\ufeff# 7. A record with a byte-order mark\n\n## Status\n\nRejected\n\n## Context\n\n"
        "No date line (Nygard's template has none). Mentions `apps/tickets/models.py`.\n".encode()
    )
    (folder / "0009-not-utf-8.md").write_bytes(b"# 9. Caf\xe9\n\n## Status\n\nAccepted\n")
    (folder / "0010-colours.md").write_text(
        "# 10. Colours \x1b[31min\x1b[0m a title\n\n## Status\n\nAccepted\n\napps/tickets/\n",
        encoding="utf-8",
    )
    (folder / "0011-a-folder.md").mkdir()
    (folder / "0013-\x1b[31mred\x1b[0m.md").write_text("# 13. Red\n", encoding="utf-8")
    (folder / "0012-huge.md").write_text("# 12. Huge\n" + "x" * 300_000, encoding="utf-8")
    return root


@pytest.fixture
def madr_project(tmp_path: Path) -> Path:
    root = tmp_path / "madr"
    shutil.copytree(CORPUS / "madr", root)
    return root
