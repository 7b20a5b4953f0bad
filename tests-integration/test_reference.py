"""The generated references in docs/reference/ match what the commands print today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_cli_reference_is_not_stale() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-reference"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


def test_the_cli_reference_names_every_command() -> None:
    from karni.cli.main import COMMANDS

    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"### `karni {name}`" in page
    for command in ("karni-historian ingest", "karni-historian status", "karni-history-adr show"):
        assert f"### `{command}`" in page


def test_the_configuration_reference_lists_every_declared_setting() -> None:
    from karni.agent.common.settings import Forbidden
    from karni.agent.common.settings_registry import declarations

    page = (ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    found = declarations()
    assert found.failures == []
    for setting in found.settings:
        if not isinstance(setting.kind, Forbidden):
            assert f"| `{setting.name}` |" in page
    for owner in ("karni-core", "karni-cli", "karni-historian"):
        assert f"\n## {owner}\n" in page
    for title in ("Claude Code", "OpenCode", "Pi", "OMP"):
        assert f"### {title} model entry" in page
