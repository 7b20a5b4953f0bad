from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("KARNI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    for variable in ("KARNI_AGENT_CONDITIONS", "KARNI_HISTORY_PROVIDERS", "KARNI_PROVIDER_TIMEOUT"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def example(fake_chronicle, tmp_path):
    """The example store of docs/chronicle-contract.md in tmp_path/repo."""
    return fake_chronicle.example_store(tmp_path / "repo")
