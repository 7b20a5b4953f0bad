"""The inventory cache: reused only while every fact it was read from still holds."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from karni.cli.inventory import report as inventory
from karni.cli.inventory.cache import cache_path, cached
from karni.cli.main import main


def age(root: Path, seconds: float = 60) -> None:
    """Make every file and folder under ``root`` look modified ``seconds`` ago."""
    stamp = time.time() - seconds
    for current, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(current, name), (stamp, stamp))
        os.utime(current, (stamp, stamp))


class Counter:
    def __init__(self) -> None:
        self.builds = 0

    def __call__(self, root: str):
        self.builds += 1
        return inventory.build(root)


@pytest.fixture
def aged(eventsite: Path) -> Path:
    age(eventsite)
    return eventsite


def test_second_run_is_served_from_the_cache(aged: Path) -> None:
    build = Counter()
    first = cached(str(aged), build)
    second = cached(str(aged), build)
    assert first == second == inventory.build(str(aged))[0]
    assert build.builds == 1
    assert Path(cache_path(str(aged))).is_file()


@pytest.mark.parametrize(
    "change",
    [
        "edit a model",
        "add a page",
        "remove a page",
        "add an app",
        "add a viewset file",
        "change apps.py label",
    ],
)
def test_any_change_invalidates(aged: Path, change: str, monkeypatch) -> None:
    build = Counter()
    before = cached(str(aged), build)
    if change == "edit a model":
        models = aged / "apps" / "events" / "models.py"
        models.write_text(models.read_text() + "\n\nclass Extra(BaseModel):\n    pass\n")
    elif change == "add a page":
        (aged / "frontend" / "src" / "pages" / "About.tsx").write_text("")
    elif change == "remove a page":
        (aged / "frontend" / "src" / "pages" / "Home.tsx").unlink()
    elif change == "add an app":
        settings = aged / "config" / "settings.py"
        settings.write_text(
            settings.read_text().replace(
                '    "apps.accounts",\n', '    "apps.accounts",\n    "apps.venues",\n'
            )
        )
        (aged / "apps" / "venues").mkdir()
        (aged / "apps" / "venues" / "models.py").write_text("")
    elif change == "add a viewset file":
        (aged / "apps" / "tickets" / "api.py").write_text(
            "from karni.api import BaseViewSet\n\n\nclass RefundViewSet(BaseViewSet):\n    pass\n"
        )
    elif change == "change apps.py label":
        apps = aged / "apps" / "events" / "apps.py"
        apps.write_text(apps.read_text() + '    label = "happenings"\n')
    after = cached(str(aged), build)
    assert build.builds == 2
    assert after == inventory.build(str(aged))[0]
    assert after != before


def test_a_new_renderer_invalidates(aged: Path, monkeypatch) -> None:
    source = aged.parent / "inventory.py"
    source.write_text("# the installed renderer\n")
    age(source.parent / "eventsite")
    stamp = time.time() - 60
    os.utime(source, (stamp, stamp))
    monkeypatch.setattr(inventory, "_renderer_files", lambda: [str(source)])
    build = Counter()
    cached(str(aged), build)
    cached(str(aged), build)
    assert build.builds == 1
    source.write_text("# an upgraded renderer\n")
    cached(str(aged), build)
    assert build.builds == 2


def test_every_module_that_renders_is_a_fact() -> None:
    folder = Path(inventory.__file__).parent
    renderers = {path.name for path in folder.glob("*.py")} - {"__init__.py", "cache.py"}
    assert {Path(path).name for path in inventory._renderer_files()} == renderers


def test_fresh_files_are_never_trusted(aged: Path) -> None:
    (aged / "apps" / "events" / "models.py").touch()
    build = Counter()
    cached(str(aged), build)
    cached(str(aged), build)
    assert build.builds == 2
    assert not Path(cache_path(str(aged))).exists()


def test_empty_cache_dir_turns_it_off(aged: Path, monkeypatch) -> None:
    monkeypatch.setenv("KARNI_CACHE_DIR", "")
    assert cache_path(str(aged)) is None
    build = Counter()
    cached(str(aged), build)
    cached(str(aged), build)
    assert build.builds == 2


def test_default_location_follows_xdg_cache_home(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KARNI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_path("/p").startswith(str(tmp_path / "karni" / "inventory-"))


@pytest.mark.parametrize("content", ["garbage", "old format", "other root", "half written"])
def test_corrupt_or_foreign_cache_is_ignored_and_replaced(aged: Path, content: str) -> None:
    from karni.agent.common.cache import write_cache
    from karni.cli.inventory.cache import CACHE_FORMAT

    path = Path(cache_path(str(aged)))
    cached(str(aged), Counter())
    whole = path.read_bytes()
    if content == "garbage":
        path.write_text("garbage")
    elif content == "old format":  # an earlier Karni's file, without the body's length
        path.write_bytes(whole.replace(b"karni-inventory 2\t", b"karni-inventory 1\t", 1))
    elif content == "other root":
        write_cache(str(path), CACHE_FORMAT, "/else\x1eX")
    else:  # cut short, at a line's end: the rest of the inventory is missing
        path.write_bytes(whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 1])
    build = Counter()
    assert cached(str(aged), build) == inventory.build(str(aged))[0]
    assert build.builds == 1
    assert path.read_bytes() == whole


@pytest.mark.skipif(os.name == "nt", reason="symlinks and FIFOs")
@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_a_link_or_fifo_in_the_caches_place_is_not_read(
    aged: Path, tmp_path: Path, planted: str
) -> None:
    path = Path(cache_path(str(aged)))
    cached(str(aged), Counter())
    elsewhere = tmp_path / "elsewhere.txt"
    before = path.read_bytes()  # a valid cache: it would be used if read
    os.replace(path, elsewhere)  # the valid cache moves away ...
    if planted == "link":
        path.symlink_to(elsewhere)  # ... and a link to it takes its place
    else:
        os.mkfifo(path)
    build = Counter()
    assert cached(str(aged), build) == inventory.build(str(aged))[0]
    assert build.builds == 1
    if planted == "link":  # never written through either
        assert path.is_symlink() and elsewhere.read_bytes() == before
    else:
        assert path.is_file()


def test_context_from_the_cache_is_byte_for_byte_the_same(aged: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(aged)
    main(["context"])
    fresh = capsys.readouterr().out
    assert Path(cache_path(str(aged))).is_file()
    monkeypatch.setattr(inventory, "build", lambda root: pytest.fail("cache was not used"))
    main(["context"])
    assert capsys.readouterr().out == fresh
