"""ChronicleProvider against the testkit's conformance suite, with the Chronicle double."""

from __future__ import annotations

import pytest
from karni.agent.history_chronicle import ChronicleProvider
from karni_provider_testkit import FakeStore, ProviderContract


class TestChronicleProvider(ProviderContract):
    entry_point_name = "gigai-chronicle"
    distribution = "karni-history-chronicle"

    @pytest.fixture(autouse=True)
    def _double_on_path(self, fake_chronicle):
        self.double = fake_chronicle

    def make_provider(self):
        return ChronicleProvider()

    def make_store(self, root):
        self.double.create_store(root)

    def record(self, root, path, text):
        FakeStore(root).add_prompt(text, {path: (12, 3)})
