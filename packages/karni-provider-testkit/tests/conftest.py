from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # The `pytester` plugin, as `pytest_plugins = ["pytester"]` would load it. That
    # variable is refused in a conftest that is not top-level, which this one is when
    # pytest runs from the repository root, so the plugin is registered here instead.
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


CONTRACT_BASE = """
import json

import pytest
from karni_provider_testkit import ProviderContract
from my_history.karni_provider import MyHistoryProvider


class Base(ProviderContract):
    def make_provider(self):
        return MyHistoryProvider()

    def make_store(self, root):
        (root / ".my-history").mkdir()

    def record(self, root, path, text):
        note = {"path": path, "date": "2026-09-30", "note": text}
        with (root / ".my-history" / "log.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps(note) + "\\n")
"""
"""The start of a pytester test module: ``Base``, the docs' example under ProviderContract."""

REPOSITORY = Path(__file__).resolve().parents[3]
EXAMPLE = REPOSITORY / "docs" / "how-to" / "example_provider"


@pytest.fixture
def example_installed(pytester: pytest.Pytester) -> Path:
    """The docs' example provider, importable and "installed" in the pytester folder.

    The package is copied next to the tests pytester runs, and a dist-info
    declaring the entry points of the example's own pyproject.toml is written
    beside it, as `pip install` would.
    """
    from karni_provider_testkit.install import write_distribution

    shutil.copytree(EXAMPLE / "src" / "my_history", pytester.path / "my_history")
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for name, value in project["entry-points"]["karni.history_providers"].items():
        write_distribution(pytester.path, name, value, project["name"], project["version"])
    return pytester.path
