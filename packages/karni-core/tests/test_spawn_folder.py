"""Spawns from several threads each start in their own working folder."""

from __future__ import annotations

import os
import shutil
import threading

import pytest
from karni.agent.common.spawn import run_spawned

PWD = shutil.which("pwd")


@pytest.mark.skipif(
    PWD is None or not hasattr(os, "posix_spawn"), reason="needs pwd and posix_spawn"
)
def test_concurrent_spawns_start_in_their_own_folder_and_leave_the_process_where_it_was(tmp_path):
    folders = [tmp_path / f"f{n}" for n in range(8)]
    for folder in folders:
        folder.mkdir()
    before = os.getcwd()
    seen: dict[int, list[bytes | None]] = {n: [] for n in range(len(folders))}

    def spawn(n: int) -> None:
        for _ in range(15):
            seen[n].append(run_spawned(PWD, [], str(folders[n]), 10.0))

    threads = [threading.Thread(target=spawn, args=(n,)) for n in range(len(folders))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n, outputs in seen.items():
        expected = os.path.realpath(folders[n]).encode() + b"\n"
        assert outputs == [expected] * 15
    assert os.getcwd() == before
