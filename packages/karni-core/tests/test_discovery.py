"""Discovery through real dist-info folders on sys.path."""

from __future__ import annotations

import os
import shutil
import sys
import time

import pytest
from karni.agent.common.entry_points import entry_points
from karni.agent.history import (
    ENTRY_POINT_GROUP,
    DuplicateProviderError,
    NotAProviderError,
    ProviderImportError,
    UnknownProviderError,
    discover,
)
from karni.agent.history import discovery as discovery_module

PROVIDER_MODULE = """
class ClassProvider:
    name = "{name}"
    def detect(self, root):
        return True
    def context(self, root, path):
        return "from {name}"

def factory():
    provider = ClassProvider()
    provider.name = "{name}"
    return provider

instance = factory()
"""


@pytest.fixture
def only(monkeypatch):
    def allow(*names):
        monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", ",".join(names))

    return allow


@pytest.mark.parametrize("attribute", ["ClassProvider", "factory", "instance"])
def test_class_factory_and_instance_entry_points(site, only, attribute):
    site.module("demo_hist.provider", PROVIDER_MODULE.format(name="demo"))
    site.distribution(
        "demo-hist", "1.2.3", {ENTRY_POINT_GROUP: {"demo": f"demo_hist.provider:{attribute}"}}
    )
    only("demo")
    found = discover()
    assert found.failures == []
    [installed] = found.providers
    assert installed.name == "demo"
    assert installed.distribution == "demo-hist"
    assert installed.version == "1.2.3"
    assert installed.value == f"demo_hist.provider:{attribute}"
    assert installed.builtin is False
    assert installed.provider.context(None, "a.py") == "from demo"


def test_unrelated_groups_and_distributions_are_ignored(site, only):
    site.module("other_pkg.mod", "def main(): pass\n")
    site.distribution("other-pkg", "1.0", {"console_scripts": {"other": "other_pkg.mod:main"}})
    site.distribution("karni-ext", "1.0", {"karni.checks": {"x": "other_pkg.mod:main"}})
    assert [
        p for p in entry_points(ENTRY_POINT_GROUP) if p.distribution in ("other-pkg", "karni-ext")
    ] == []
    assert [p.name for p in entry_points("karni.checks") if p.distribution == "karni-ext"] == ["x"]


def test_load_failures_are_recorded_never_raised(site, only):
    site.module("broken_hist.mod", "raise ImportError('no such thing')\n")
    site.module("shapeless_hist.mod", "class NotAProvider:\n    pass\n")
    site.module(
        "raising_hist.mod",
        "class Boom:\n    def __init__(self):\n        raise ValueError('bad config')\n",
    )
    site.distribution(
        "broken-hist", "0.1", {ENTRY_POINT_GROUP: {"broken": "broken_hist.mod:Provider"}}
    )
    site.distribution(
        "shapeless-hist",
        "0.1",
        {ENTRY_POINT_GROUP: {"shapeless": "shapeless_hist.mod:NotAProvider"}},
    )
    site.distribution(
        "raising-hist", "0.1", {ENTRY_POINT_GROUP: {"raising": "raising_hist.mod:Boom"}}
    )
    site.distribution(
        "missing-hist", "0.1", {ENTRY_POINT_GROUP: {"missing": "no_such_module_xyz:P"}}
    )
    only("broken", "shapeless", "raising", "missing")
    found = discover()
    assert found.providers == []
    by_name = {failure.name: failure for failure in found.failures}
    assert sorted(by_name) == ["broken", "missing", "raising", "shapeless"]
    assert isinstance(by_name["broken"].error, ProviderImportError)
    assert "ImportError: no such thing" in by_name["broken"].message
    assert isinstance(by_name["broken"].error.__cause__, ImportError)
    assert isinstance(by_name["shapeless"].error, NotAProviderError)
    assert "lacks `name`, `detect`, `context`" in by_name["shapeless"].message
    assert isinstance(by_name["raising"].error, ProviderImportError)
    assert "ValueError: bad config" in by_name["raising"].message
    assert by_name["missing"].value == "no_such_module_xyz:P"
    assert by_name["missing"].distribution == "missing-hist"
    for failure in found.failures:
        assert "\n" not in failure.message


def test_duplicate_names_are_an_error_naming_both(site, only):
    site.module("one_hist.mod", PROVIDER_MODULE.format(name="dup"))
    site.module("two_hist.mod", PROVIDER_MODULE.format(name="dup"))
    site.distribution("one-hist", "1.0", {ENTRY_POINT_GROUP: {"dup": "one_hist.mod:ClassProvider"}})
    site.distribution("two-hist", "2.0", {ENTRY_POINT_GROUP: {"dup": "two_hist.mod:ClassProvider"}})
    only("dup")
    found = discover()
    assert found.providers == []
    [failure] = found.failures
    assert isinstance(failure.error, DuplicateProviderError)
    assert "`one_hist.mod:ClassProvider` (one-hist)" in failure.message
    assert "`two_hist.mod:ClassProvider` (two-hist)" in failure.message


def test_same_distribution_twice_on_the_path_counts_once(site, tmp_path, monkeypatch, only):
    site.module("twice_hist.mod", PROVIDER_MODULE.format(name="twice"))
    site.distribution(
        "twice-hist", "1.0", {ENTRY_POINT_GROUP: {"twice": "twice_hist.mod:ClassProvider"}}
    )
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "twice_hist-0.9.dist-info").mkdir()
    (shadow / "twice_hist-0.9.dist-info" / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ntwice = twice_hist.mod:instance\n"
    )
    monkeypatch.syspath_prepend(str(shadow))
    only("twice")
    found = discover()
    assert found.failures == []
    # The first copy on sys.path wins, as with importlib.metadata.
    assert [(p.distribution, p.version, p.value) for p in found.providers] == [
        ("twice-hist", "0.9", "twice_hist.mod:instance")
    ]


@pytest.fixture
def builtin(site, monkeypatch):
    """A stand-in for the built-in Chronicle provider, so these tests don't depend on it."""
    site.module("fake_builtin_chronicle", PROVIDER_MODULE.format(name="gigai-chronicle"))
    monkeypatch.setattr(
        discovery_module,
        "BUILTIN_PROVIDERS",
        {"gigai-chronicle": ("fake_builtin_chronicle:ClassProvider", "karni-history-chronicle")},
    )


@pytest.mark.parametrize("third_party_first", [True, False])
def test_third_party_entry_point_wins_over_the_builtin(
    site, tmp_path, monkeypatch, builtin, only, third_party_first
):
    site.module("slow_chronicle.mod", PROVIDER_MODULE.format(name="gigai-chronicle"))
    own = tmp_path / "own"
    own.mkdir()
    (own / "karni_history_chronicle-0.1.0.dist-info").mkdir()
    (own / "karni_history_chronicle-0.1.0.dist-info" / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ngigai-chronicle = fake_builtin_chronicle:ClassProvider\n"
    )
    site.distribution(
        "slow-chronicle",
        "3.0",
        {ENTRY_POINT_GROUP: {"gigai-chronicle": "slow_chronicle.mod:instance"}},
    )
    if third_party_first:
        monkeypatch.syspath_prepend(str(own))
        monkeypatch.syspath_prepend(str(site.root))
    else:
        monkeypatch.syspath_prepend(str(own))
    order = [e for e in sys.path if e in (str(own), str(site.root))]
    assert (order[0] == str(site.root)) is third_party_first
    only("gigai-chronicle")
    found = discover()
    assert found.failures == []
    [installed] = found.providers
    assert installed.distribution == "slow-chronicle"
    assert installed.value == "slow_chronicle.mod:instance"
    assert installed.builtin is False


def test_own_registration_is_used_when_alone(tmp_path, monkeypatch, builtin, only):
    own = tmp_path / "own"
    own.mkdir()
    (own / "karni_history_chronicle-0.1.0.dist-info").mkdir()
    (own / "karni_history_chronicle-0.1.0.dist-info" / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ngigai-chronicle = fake_builtin_chronicle:ClassProvider\n"
    )
    monkeypatch.syspath_prepend(str(own))
    only("gigai-chronicle")
    [installed] = discover().providers
    assert (installed.distribution, installed.version, installed.builtin) == (
        "karni-history-chronicle",
        "0.1.0",
        True,
    )


def test_builtin_found_without_its_metadata(builtin, only):
    only("gigai-chronicle")
    found = discover(registered=[])
    assert found.failures == []
    [installed] = found.providers
    assert installed.builtin is True
    assert installed.value == "fake_builtin_chronicle:ClassProvider"
    assert installed.version is None


def test_builtin_absent_when_not_importable(monkeypatch, only):
    monkeypatch.setattr(
        discovery_module, "BUILTIN_PROVIDERS", {"gigai-chronicle": ("no_such_builtin_xyz:P", "x")}
    )
    only("gigai-chronicle")
    found = discover(registered=[])
    assert found.providers == []
    assert [f.name for f in found.failures] == ["gigai-chronicle"]
    assert isinstance(found.failures[0].error, UnknownProviderError)


def test_allow_list(site, monkeypatch):
    site.module("a_hist.mod", PROVIDER_MODULE.format(name="a"))
    site.module("b_hist.mod", PROVIDER_MODULE.format(name="b"))
    site.distribution("a-hist", "1", {ENTRY_POINT_GROUP: {"a": "a_hist.mod:ClassProvider"}})
    site.distribution("b-hist", "1", {ENTRY_POINT_GROUP: {"b": "b_hist.mod:ClassProvider"}})
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "b, nope")
    found = discover()
    assert [p.name for p in found.providers] == ["b"]
    assert [f.name for f in found.failures] == ["nope"]
    assert "not installed" in found.failures[0].message
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "")
    found = discover()
    assert (found.providers, found.failures) == ([], [])


def test_providers_sorted_by_name(site, only):
    for name in ("zulu", "alpha", "mike"):
        site.module(f"{name}_hist.mod", PROVIDER_MODULE.format(name=name))
        site.distribution(
            f"{name}-hist", "1", {ENTRY_POINT_GROUP: {name: f"{name}_hist.mod:ClassProvider"}}
        )
    only("zulu", "alpha", "mike")
    assert [p.name for p in discover().providers] == ["alpha", "mike", "zulu"]


def test_cache_sees_new_installs_and_survives_corruption(site, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KARNI_CACHE_DIR", str(cache))
    site.module("c_hist.mod", PROVIDER_MODULE.format(name="c"))
    site.distribution("c-hist", "1", {ENTRY_POINT_GROUP: {"c": "c_hist.mod:ClassProvider"}})
    old = time.time() - 60
    os.utime(site.root, (old, old))  # old enough to be trusted from the cache

    def names():
        return [p.name for p in entry_points(ENTRY_POINT_GROUP) if p.distribution.endswith("-hist")]

    assert names() == ["c"]
    [cache_file] = cache.iterdir()
    assert "c_hist.mod:ClassProvider" in cache_file.read_text()
    assert names() == ["c"]  # from the cache
    site.distribution("d-hist", "1", {ENTRY_POINT_GROUP: {"d": "c_hist.mod:ClassProvider"}})
    assert names() == ["c", "d"]  # the folder changed: rescanned
    cache_file.write_text("garbage\x00\n\tP\tnot a number\n")
    assert names() == ["c", "d"]
    monkeypatch.setenv("KARNI_CACHE_DIR", "")
    assert names() == ["c", "d"]


def test_cache_is_trusted_only_for_an_unchanged_folder(site, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KARNI_CACHE_DIR", str(cache))
    site.distribution("e-hist", "1", {ENTRY_POINT_GROUP: {"e": "x:Y"}})
    old = time.time() - 60
    os.utime(site.root, (old, old))
    assert [p.name for p in entry_points(ENTRY_POINT_GROUP) if p.distribution == "e-hist"] == ["e"]
    # A cached answer for this exact folder state is used even if the files changed behind it ...
    cached = cache.iterdir().__next__().read_text()
    assert "\te\tx:Y\te-hist\t1" in cached
    # ... but touching the folder (as any install or uninstall does) invalidates it.
    shutil.rmtree(site.root / "e_hist-1.dist-info")
    assert [p for p in entry_points(ENTRY_POINT_GROUP) if p.distribution == "e-hist"] == []


@pytest.mark.skipif(os.name == "nt", reason="symlinks and FIFOs")
@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_the_index_is_never_read_through_a_link_or_from_a_fifo(
    site, tmp_path, monkeypatch, plant, planted
):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KARNI_CACHE_DIR", str(cache))
    site.distribution("f-hist", "1", {ENTRY_POINT_GROUP: {"f": "x:Y"}})
    old = time.time() - 60
    os.utime(site.root, (old, old))

    def names():
        return [p.name for p in entry_points(ENTRY_POINT_GROUP) if p.distribution == "f-hist"]

    assert names() == ["f"]
    [index] = cache.iterdir()
    elsewhere = tmp_path / "elsewhere.txt"
    plant(index, planted, index.read_bytes().replace(b"\tf\tx:Y\t", b"\tg\tx:Y\t"), elsewhere)
    assert names() == ["f"]  # scanned, not the planted answer
    if planted == "link":
        assert index.is_symlink() and b"\tg\t" in elsewhere.read_bytes()
    else:
        assert index.is_file() and b"\tf\tx:Y\t" in index.read_bytes()


def test_egg_info_and_comments_are_understood(site, only):
    egg = site.root / "Legacy_Hist.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: Legacy-Hist\nVersion: 4.5\n")
    (egg / "entry_points.txt").write_text(
        f"# a comment\n[{ENTRY_POINT_GROUP}]\n; another\nlegacy = legacy_hist:P [extra]\n"
        "\n[other]\nx = y:z\n"
    )
    site.module("legacy_hist", PROVIDER_MODULE.format(name="legacy").replace("ClassProvider", "P"))
    only("legacy")
    [installed] = discover().providers
    assert (installed.distribution, installed.version) == ("legacy-hist", "4.5")


def test_only_karni_groups_are_indexed():
    with pytest.raises(ValueError, match="karni"):
        entry_points("console_scripts")
