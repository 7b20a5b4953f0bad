"""The detached historian run a hook starts: ingest one transcript, then condense.

Run as ``python -m karni.cli.hooks.background ROOT HISTORIAN REQUESTED
[TRANSCRIPT [share]]`` by :func:`karni.cli.hooks.historian.start`, with stdout and
stderr already appended to ``.karni/local/hooks.log``. One run at a time per
project: the run holds ``.karni/local/hooks-historian.lock``; a run that
waited for it skips its work when a run of the same transcript started
after it was requested (that one has already read everything).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

from karni.agent.common.files import read_regular_file, write_atomic
from karni.cli.config.state import ExclusiveLock, ensure_local_dir
from karni.cli.hooks.local import append_log

__all__ = ["RUN_TIMEOUT", "main"]

RUN_TIMEOUT = 1800.0
"""Seconds one historian command may take before it is stopped."""

_LOCK_FILE = "hooks-historian.lock"
_RUNS_FILE = "hooks-historian.json"


def _read_runs(path: str) -> dict[str, float]:
    try:
        data = json.loads(read_regular_file(path, 1 << 20))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: float(value) for key, value in data.items() if isinstance(value, (int, float))}


def _historian(root: str, historian: str, *arguments: str) -> int:
    command = [historian, "--project", root, *arguments]
    shown = shlex.join(command)  # a line to copy into a shell, whatever the paths hold
    try:
        status = subprocess.run(
            command, stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT, check=False
        ).returncode
    except (OSError, subprocess.TimeoutExpired) as error:
        append_log(root, f"historian: `{shown}` failed: {error}")
        return 1
    append_log(root, f"historian: `{shown}` exited {status}")
    return status


def run(
    root: str, historian: str, requested: float, transcript: str | None, share: bool = False
) -> None:
    """Ingest ``transcript`` (None: the historian's own sources) and condense, under the lock.

    With ``share``, then ``share --auto``: the user's settings decide whether it writes.
    """
    folder = ensure_local_dir(root)
    key = transcript or ""
    with ExclusiveLock(os.path.join(folder, _LOCK_FILE)):
        runs_path = os.path.join(folder, _RUNS_FILE)
        runs = _read_runs(runs_path)
        if runs.get(key, 0.0) >= requested:
            append_log(root, f"historian: {key or 'its sources'} already ingested by a later run")
            return
        runs[key] = time.time()
        write_atomic(runs_path, json.dumps(runs, indent=1, sort_keys=True) + "\n", within=root)
        ingest = ["ingest", "--from", transcript] if transcript else ["ingest"]
        ran = _historian(root, historian, *ingest) == 0 and _historian(root, historian, "run") == 0
        if ran and share:
            _historian(root, historian, "share", "--auto")


def main(argv: list[str]) -> int:
    """Run the background job; every failure goes to the log, never further."""
    root, historian, requested, *rest = argv
    transcript = rest[0] if rest and rest[0] else None
    share = len(rest) > 1 and rest[1] == "share"
    try:
        run(root, historian, float(requested), transcript, share)
    except Exception as error:  # the log is the only place left to tell
        append_log(root, f"historian: background run failed: {type(error).__name__}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
