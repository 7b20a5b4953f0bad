"""karni.agent.history.remembered: a provider whose remembered markers are absent stays unloaded."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from karni.agent.history import ENTRY_POINT_GROUP, compose, discover

MARKED = """
LOADS = []
LOADS.append(1)


class Marked:
    name = "{label}"
    store_markers = ({markers},)
    accepts_str_root = True

    def detect(self, root):
        return True

    def context(self, root, path):
        return "brief of " + path
"""

PER_OBJECT = """
class PerObject:
    name = "per-object"

    def __init__(self):
        self.store_markers = (".per-object",)

    def detect(self, root):
        return False

    def context(self, root, path):
        return None
"""


@pytest.fixture
def marked(site, monkeypatch):
    """Install the provider `marked` (module `marked_hist`), its file old enough to be trusted."""
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "marked")

    def install(markers: str = '".marked"', label: str = "marked") -> Path:
        site.module("marked_hist", MARKED.format(markers=markers, label=label))
        old = time.time() - 60
        os.utime(site.root / "marked_hist.py", (old, old))
        if not (site.root / "marked_hist-1.dist-info").exists():
            site.distribution(
                "marked-hist", "1", {ENTRY_POINT_GROUP: {"marked": "marked_hist:Marked"}}
            )
        return site.root / "marked_hist.py"

    yield install
    sys.modules.pop("marked_hist", None)


def _forget_module() -> None:
    sys.modules.pop("marked_hist", None)


def test_a_project_without_the_store_does_not_import_the_provider(marked, tmp_path) -> None:
    marked()
    project = tmp_path / "project"
    project.mkdir()
    assert [p.name for p in discover().providers] == ["marked"]  # loaded once: remembered
    _forget_module()
    assert discover(project_root=project).providers == []
    assert compose(project, "a.py") is None
    assert "marked_hist" not in sys.modules
    (project / ".marked").mkdir()
    assert compose(project, "a.py") == "HISTORY: a.py (marked)\nbrief of a.py"
    assert "marked_hist" in sys.modules


def test_without_project_root_every_provider_is_loaded(marked, tmp_path) -> None:
    marked()
    discover()
    _forget_module()
    assert [p.name for p in discover().providers] == ["marked"]
    assert "marked_hist" in sys.modules


def test_a_changed_provider_file_is_read_again(marked, tmp_path) -> None:
    module = marked()
    project = tmp_path / "project"
    (project / ".elsewhere").mkdir(parents=True)
    discover()
    _forget_module()
    assert discover(project_root=project).providers == []
    marked(markers='".elsewhere"')  # an upgrade: the file's size and time change
    assert module.read_text().count(".elsewhere") == 1
    assert [p.name for p in discover(project_root=project).providers] == ["marked"]


def test_a_fresh_provider_file_is_not_remembered(marked, tmp_path) -> None:
    module = marked()
    os.utime(module, None)  # modified just now: its time cannot be trusted yet
    project = tmp_path / "project"
    project.mkdir()
    discover()
    _forget_module()
    assert [p.name for p in discover(project_root=project).providers] == ["marked"]


def test_markers_set_per_object_are_never_remembered(site, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "per-object")
    site.module("per_object_hist", PER_OBJECT)
    old = time.time() - 60
    os.utime(site.root / "per_object_hist.py", (old, old))
    site.distribution(
        "po-hist", "1", {ENTRY_POINT_GROUP: {"per-object": "per_object_hist:PerObject"}}
    )
    discover()
    sys.modules.pop("per_object_hist", None)
    assert [p.name for p in discover(project_root=tmp_path).providers] == ["per-object"]
    assert not list(Path(os.environ["KARNI_CACHE_DIR"]).glob("provider-markers-*"))
    sys.modules.pop("per_object_hist", None)


def test_no_cache_remembers_nothing(marked, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KARNI_CACHE_DIR", "")
    marked()
    discover()
    _forget_module()
    assert [p.name for p in discover(project_root=tmp_path).providers] == ["marked"]


def test_a_corrupt_record_is_read_as_nothing(marked, tmp_path) -> None:
    from karni.agent.common.cache import write_cache
    from karni.agent.history.remembered import CACHE_FORMAT

    marked()
    discover()
    [record] = Path(os.environ["KARNI_CACHE_DIR"]).glob("provider-markers-*")
    body = "P\tmarked\x1fmarked_hist:Marked\x1fmarked-hist\x1f1"  # a field short
    assert write_cache(str(record), CACHE_FORMAT, body)
    _forget_module()
    assert [p.name for p in discover(project_root=tmp_path).providers] == ["marked"]


def test_an_unloaded_provider_still_holds_its_name(marked, site, monkeypatch, tmp_path) -> None:
    """Two providers named alike: the first in entry-point order wins, loaded or not."""
    marked(label="shared")
    site.module("zz_hist", MARKED.format(markers='".zz"', label="shared").replace("Marked", "Zz"))
    site.distribution("zz-hist", "1", {ENTRY_POINT_GROUP: {"zz": "zz_hist:Zz"}})
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "marked,zz")
    project = tmp_path / "project"
    (project / ".zz").mkdir(parents=True)
    assert [p.name for p in discover().providers] == ["marked"]
    _forget_module()
    found = discover(project_root=project)
    assert found.providers == []  # `zz` is the duplicate whether or not `marked` was loaded
    assert [failure.name for failure in found.failures] == ["zz"]
    sys.modules.pop("zz_hist", None)


@pytest.mark.skipif(os.name == "nt", reason="symlinks and FIFOs")
@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_the_record_is_never_read_through_a_link_or_from_a_fifo(marked, tmp_path, plant, planted):
    """A link or a FIFO in the record's place is no record: the provider is loaded again."""
    marked()
    discover()
    [record] = Path(os.environ["KARNI_CACHE_DIR"]).glob("provider-markers-*")
    elsewhere = tmp_path / "elsewhere.txt"
    before = record.read_bytes()  # a record that would rule the provider out
    plant(record, planted, before, elsewhere)
    project = tmp_path / "project"
    project.mkdir()
    _forget_module()
    assert [p.name for p in discover(project_root=project).providers] == ["marked"]
    if planted == "link":  # left alone, never written through
        assert record.is_symlink()
        assert elsewhere.read_bytes() == before
    else:  # the FIFO is replaced by a record, never waited on
        assert record.is_file() and not record.is_symlink()


def test_a_record_that_still_holds_is_not_rewritten(marked, site, tmp_path) -> None:
    """A second load that happens to import fewer new modules keeps the record as it is."""
    module = marked()
    module.write_text("import marked_helper\n" + module.read_text())
    site.module("marked_helper", "HELPER = 1\n")
    old = time.time() - 60
    for path in (module, site.root / "marked_helper.py"):
        os.utime(path, (old, old))
    project = tmp_path / "project"
    (project / ".marked").mkdir(parents=True)
    assert [p.name for p in discover(project_root=project).providers] == ["marked"]
    [record] = Path(os.environ["KARNI_CACHE_DIR"]).glob("provider-markers-*")
    written = record.read_bytes()
    assert b"marked_helper.py" in written
    before = os.stat(record)
    _forget_module()  # `marked_helper` stays imported: this load does not import it anew
    assert [p.name for p in discover(project_root=project).providers] == ["marked"]
    after = os.stat(record)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert record.read_bytes() == written
    sys.modules.pop("marked_helper", None)
