import json
from pathlib import Path

from karni_provider_testkit import ProviderContract
from my_history.karni_provider import MyHistoryProvider


class TestMyHistoryProvider(ProviderContract):
    entry_point_name = "my-history"  # checks the installed package declares it
    distribution = "my-history"

    def make_provider(self):
        return MyHistoryProvider()

    def make_store(self, root: Path) -> None:
        (root / ".my-history").mkdir()

    def record(self, root: Path, path: str, text: str) -> None:
        note = {"path": path, "date": "2026-09-30", "note": text}
        with (root / ".my-history" / "log.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps(note) + "\n")


def test_reverted_notes_come_first(karni_project: Path) -> None:
    provider = MyHistoryProvider()
    (karni_project / ".my-history").mkdir()
    (karni_project / ".my-history" / "log.jsonl").write_text(
        '{"path": "apps/events/models.py", "date": "2026-10-02", "note": "soft delete"}\n'
        '{"path": "apps/events/models.py", "date": "2026-09-30", "note": "hard delete",'
        ' "reverted": true}\n',
        encoding="utf-8",
    )
    assert provider.context(karni_project, "apps/events/models.py") == (
        "**Reverted approaches (do NOT repeat)**\n"
        "- 2026-09-30 hard delete\n"
        "**Notes (newest first)**\n"
        "- 2026-10-02 soft delete"
    )
