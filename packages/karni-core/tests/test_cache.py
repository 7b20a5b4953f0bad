"""karni.agent.common.cache: an unusable cache file is no cache, never an error or a stray write."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from karni.agent.common import cache
from karni.agent.common.cache import cache_file, read_cache, trust_horizon, write_cache

TAG = "karni-test-cache 1"
BODY = "P\t1\t/a folder\nE\tkarni.x\tname\tmodule:attr\tdist\t1.0\néàü\n"

posix_only = pytest.mark.skipif(os.name == "nt", reason="symlinks, FIFOs and permissions")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache folder (not created yet)."""
    target = tmp_path / "cache"
    monkeypatch.setenv("KARNI_CACHE_DIR", str(target))
    return target


def test_a_written_body_reads_back_owner_only(folder: Path) -> None:
    path = cache_file("test", "key")
    assert path is not None and os.path.dirname(path) == str(folder)
    assert write_cache(path, TAG, BODY)
    assert read_cache(path, TAG) == BODY
    if os.name != "nt":
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert os.listdir(folder) == [os.path.basename(path)]  # no temporary file left


def test_the_file_name_is_the_kind_and_a_stable_hash_of_the_key(folder: Path) -> None:
    assert cache.fnv1a(b"") == 0xCBF29CE484222325  # the published FNV-1a test vectors
    assert cache.fnv1a(b"a") == 0xAF63DC4C8601EC8C
    assert cache.fnv1a(b"foobar") == 0x85944171F73967E8
    assert cache_file("inventory", "/p") == str(folder / f"inventory-{cache.fnv1a(b'/p'):016x}.txt")
    assert cache_file("inventory", "\udcff") is not None  # an undecodable path still has a name


def test_no_cache_folder_means_no_cache_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KARNI_CACHE_DIR", "")
    assert cache_file("inventory", "/p") is None


def test_another_format_is_no_cache(folder: Path) -> None:
    """A file from an older or newer Karni (another tag) is stale as a whole."""
    path = str(folder / "f.txt")
    assert write_cache(path, "karni-test-cache 0", BODY)
    assert read_cache(path, TAG) is None
    Path(path).write_text(f"{TAG}\n{BODY}", encoding="utf-8")  # the tag without a length
    assert read_cache(path, TAG) is None


def test_a_half_written_file_is_no_cache(folder: Path) -> None:
    path = str(folder / "f.txt")
    assert write_cache(path, TAG, BODY)
    whole = Path(path).read_bytes()
    for length in range(len(whole)):  # every cut, at a line's end or inside a character
        Path(path).write_bytes(whole[:length])
        assert read_cache(path, TAG) is None, length
    Path(path).write_bytes(whole + b"more")
    assert read_cache(path, TAG) is None


def test_a_file_that_is_too_large_or_not_utf8_is_no_cache(folder: Path) -> None:
    path = str(folder / "f.txt")
    assert not write_cache(path, TAG, "x" * 100, max_bytes=50)
    assert not os.path.exists(path)
    assert write_cache(path, TAG, "x" * 100)
    assert read_cache(path, TAG, max_bytes=50) is None
    body = b"\xff\xfe"
    Path(path).write_bytes(f"{TAG}\t{len(body)}\n".encode() + body)
    assert read_cache(path, TAG) is None
    assert not write_cache(path, TAG, "\udcff")  # not encodable: the file is left as it was
    assert Path(path).read_bytes().endswith(body)


@posix_only
def test_a_link_is_never_read_nor_written_through(folder: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "real.txt"
    assert write_cache(str(target), TAG, BODY)
    before = target.read_bytes()
    folder.mkdir()
    link = folder / "f.txt"
    link.symlink_to(target)
    assert read_cache(str(link), TAG) is None
    assert not write_cache(str(link), TAG, "replaced")
    assert link.is_symlink() and target.read_bytes() == before
    assert sorted(os.listdir(elsewhere)) == ["real.txt"]
    assert os.listdir(folder) == ["f.txt"]  # and no temporary file left beside the link


@posix_only
def test_a_fifo_is_no_cache_and_is_never_waited_on(folder: Path) -> None:
    folder.mkdir()
    fifo = folder / "f.txt"
    os.mkfifo(fifo)
    assert read_cache(str(fifo), TAG) is None  # returns at once: no writer is waited for
    assert write_cache(str(fifo), TAG, BODY)  # replaced by a regular file
    assert read_cache(str(fifo), TAG) == BODY


def test_a_folder_in_the_files_place_is_no_cache(folder: Path) -> None:
    (folder / "f.txt").mkdir(parents=True)
    assert read_cache(str(folder / "f.txt"), TAG) is None
    assert not write_cache(str(folder / "f.txt"), TAG, BODY)


def test_a_missing_file_is_no_cache(folder: Path) -> None:
    assert read_cache(str(folder / "missing.txt"), TAG) is None
    assert read_cache("bad\0path", TAG) is None


def test_a_cache_folder_that_cannot_be_created_writes_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    path = str(blocker / "cache" / "f.txt")
    assert not write_cache(path, TAG, BODY)
    assert read_cache(path, TAG) is None
    assert sorted(os.listdir(tmp_path)) == ["a-file"]
    assert blocker.read_text(encoding="utf-8") == "not a folder"


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_folder_writes_nothing(folder: Path) -> None:
    folder.mkdir(mode=0o500)
    try:
        assert not write_cache(str(folder / "f.txt"), TAG, BODY)
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o700)


def test_a_modification_time_within_the_racy_window_is_not_trusted(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.write_text("x", encoding="utf-8")
    settled = tmp_path / "settled"
    settled.write_text("x", encoding="utf-8")
    old = time.time() - 60
    os.utime(settled, (old, old))
    horizon = trust_horizon()
    assert os.stat(fresh).st_mtime_ns >= horizon  # just written: it may change unseen
    assert os.stat(settled).st_mtime_ns < horizon
    assert time.time_ns() - horizon >= cache.RACY_NS
