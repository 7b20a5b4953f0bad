"""The provider runs before every edit: which modules a brief may import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """\
import sys
from karni_history_adr.provider import AdrProvider
brief = AdrProvider().context(sys.argv[1], "apps/tickets/models.py")
print(brief is not None)
print(sorted({"dataclasses", "typing"} & set(sys.modules)))
"""


def test_a_brief_imports_neither_dataclasses_nor_typing(adr_tools_project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(adr_tools_project)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout == "True\n[]\n"
