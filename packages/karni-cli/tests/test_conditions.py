"""When conditional rules apply: K008's ``history`` condition and KARNI_AGENT_CONDITIONS."""

from __future__ import annotations

from pathlib import Path

import pytest
from karni.cli.rules.conditions import active_conditions

ROOT = Path("/project")


class Provider:
    def __init__(self, name: str = "static", detects: bool = True) -> None:
        self.name = name
        self.detects = detects
        self.calls: list[str] = []

    def detect(self, project_root: Path) -> bool:
        self.calls.append("detect")
        return self.detects

    def context(self, project_root: Path, path: str) -> str:
        self.calls.append("context")
        return "never asked"


@pytest.fixture(autouse=True)
def _no_variable(monkeypatch) -> None:
    monkeypatch.delenv("KARNI_AGENT_CONDITIONS", raising=False)


def test_conditions_follow_detection() -> None:
    assert active_conditions(ROOT, providers=[Provider(detects=False)]) == frozenset()
    assert active_conditions(ROOT, providers=[Provider()]) == {"history"}
    assert active_conditions(ROOT, providers=[]) == frozenset()


def test_the_variable_replaces_detection(monkeypatch) -> None:
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "")
    assert active_conditions(ROOT, providers=[Provider()]) == frozenset()
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", "history")
    assert active_conditions(ROOT, providers=[Provider(detects=False)]) == {"history"}
    monkeypatch.setenv("KARNI_AGENT_CONDITIONS", " History , other,, ")
    assert active_conditions(ROOT, providers=[]) == {"history", "other"}


def test_no_brief_is_asked_and_the_first_store_ends_the_search() -> None:
    first, second = Provider("a"), Provider("b")
    assert active_conditions(ROOT, providers=[second, first]) == {"history"}
    assert first.calls == ["detect"]
    assert second.calls == []
