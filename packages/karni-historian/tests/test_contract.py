"""The historian provider against the testkit's conformance suite."""

from __future__ import annotations

from pathlib import Path

from karni_historian.brief.provider import HistorianProvider
from karni_historian.model import Compartment, TextPart
from karni_historian.store import RunRecord, Store, parts_to_json
from karni_provider_testkit import ProviderContract


class TestHistorianProvider(ProviderContract):
    entry_point_name = "historian"
    distribution = "karni-historian"

    def make_provider(self) -> HistorianProvider:
        return HistorianProvider()

    def make_store(self, root: Path) -> None:
        Store.open(root, create=True).close()

    def record(self, root: Path, path: str, text: str) -> None:
        with Store.open(root) as store:
            start = store.message_count("contract") + 1
            with store.transaction():
                store.ensure_session("contract", "generic")
                store.write_message("contract", start, "user", parts_to_json([TextPart(text)]))
                store.add_file("contract", start, path, "edit")
            episode = Compartment(start, start, text, p1=text, p2=text, p3=text, p4=text)
            store.publish("contract", [episode], [], RunRecord("contract", "wrapup", "ok"))
