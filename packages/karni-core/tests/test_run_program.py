"""``run_program``'s ``meanwhile`` and its wait for the exit, through each way it can run."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from karni.agent.common import processes

pytestmark = pytest.mark.skipif(
    not hasattr(os, "posix_spawn") or not os.path.isdir("/proc/self/fd"),
    reason="needs POSIX and /proc",
)

WAYS = ["posix_spawn and a pidfd", "posix_spawn without a pidfd", "subprocess"]


@pytest.fixture(params=WAYS)
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "posix_spawn without a pidfd":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    elif request.param == "subprocess":
        monkeypatch.setattr(processes, "_SPAWN", False)
    return str(request.param)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _script(started: Path, body: str) -> list[str]:
    """``python -c``: write the pid to ``started``, then run ``body``.

    The pid goes to a temporary name renamed to ``started``, so ``started``
    never exists empty: a test that stops the program once it exists still
    reads its pid.
    """
    partial = started.with_name(started.name + ".partial")
    script = (
        "import os, sys, time\n"
        f"open({str(partial)!r}, 'w').write(str(os.getpid()))\n"
        f"os.replace({str(partial)!r}, {str(started)!r})\n"
        f"{body}"
    )
    return ["-c", script]


def test_meanwhile_runs_once_while_the_program_runs_and_the_output_is_whole(
    tmp_path: Path, way: str
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    body = (
        f"while not os.path.exists({str(release)!r}): time.sleep(0.005)\n"
        "sys.stdout.write('reply')\n"
    )
    calls: list[bool] = []

    def meanwhile() -> None:
        calls.append(_wait_for(started))
        release.write_text("")  # the program ends only once this has run

    out = processes.run_program(
        sys.executable, _script(started, body), str(tmp_path), 30, meanwhile=meanwhile
    )
    assert out == b"reply"
    assert calls == [True]  # once, and the program had started by then


def _wait_for(path: Path, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_a_failing_meanwhile_kills_the_program_and_is_raised(tmp_path: Path, way: str) -> None:
    started = tmp_path / "started"

    def meanwhile() -> None:
        _wait_for(started)
        raise RuntimeError("the caller's own failure")

    with pytest.raises(RuntimeError, match="the caller's own failure"):
        argv = _script(started, "time.sleep(60)")
        processes.run_program(sys.executable, argv, str(tmp_path), 30, meanwhile=meanwhile)
    assert _gone(int(started.read_text()))


def test_output_closed_early_waits_for_the_exit_status(tmp_path: Path, way: str) -> None:
    started = tmp_path / "started"
    body = "sys.stdout.write('reply'); sys.stdout.flush(); os.close(1)\ntime.sleep(0.3)\n"
    body += "os._exit({})"
    ok = processes.run_program(sys.executable, _script(started, body.format(0)), str(tmp_path), 30)
    assert ok == b"reply"
    failed = processes.run_program(
        sys.executable, _script(started, body.format(4)), str(tmp_path), 30
    )
    assert failed is None  # the status after the output still decides


def test_a_program_that_keeps_running_after_its_output_is_killed_at_the_deadline(
    tmp_path: Path, way: str
) -> None:
    started = tmp_path / "started"
    body = "sys.stdout.write('reply'); sys.stdout.flush(); os.close(1)\ntime.sleep(60)"
    out = processes.run_program(sys.executable, _script(started, body), str(tmp_path), 1.0)
    assert out is None
    assert _gone(int(started.read_text()))
