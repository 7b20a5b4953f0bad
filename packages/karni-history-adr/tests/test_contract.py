"""The adr provider against the testkit's conformance suite."""

from __future__ import annotations

from pathlib import Path

from karni_history_adr.provider import AdrProvider
from karni_provider_testkit import ProviderContract


class TestAdrProvider(ProviderContract):
    entry_point_name = "adr"
    distribution = "karni-history-adr"

    def make_provider(self) -> AdrProvider:
        return AdrProvider()

    def make_store(self, root: Path) -> None:
        (root / "doc" / "adr").mkdir(parents=True)

    def record(self, root: Path, path: str, text: str) -> None:
        folder = root / "doc" / "adr"
        number = len(list(folder.glob("*.md"))) + 1
        (folder / f"{number:04d}-contract-record.md").write_text(
            f"# {number}. {text}\n\nDate: 2026-01-{number:02d}\n\n## Status\n\nAccepted\n\n"
            f"## Context\n\nThis concerns `{path}`.\n",
            encoding="utf-8",
        )
