"""The entry point `gigai-chronicle`, and replacing it with a longer timeout."""

from __future__ import annotations

from karni.agent.history import discover
from karni.agent.history_chronicle import ChronicleProvider


def test_the_built_in_provider_is_discovered(monkeypatch):
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")
    discovery = discover()
    assert discovery.failures == []
    (installed,) = discovery.providers
    assert installed.name == "gigai-chronicle"
    assert installed.distribution == "karni-history-chronicle"
    assert isinstance(installed.provider, ChronicleProvider)
    assert installed.provider.timeout == 5.0


def test_an_entry_point_under_the_same_name_replaces_it(install_provider, tmp_path, monkeypatch):
    package = tmp_path / "src"
    package.mkdir()
    (package / "my_slow_history.py").write_text(
        "from karni.agent.history_chronicle import ChronicleProvider\n"
        "slow_chronicle = ChronicleProvider(timeout=15.0)\n"
    )
    monkeypatch.syspath_prepend(str(package))
    install_provider("my_slow_history:slow_chronicle", name="gigai-chronicle")
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "gigai-chronicle")

    (installed,) = discover().providers

    assert installed.provider.timeout == 15.0
    assert installed.builtin is False
