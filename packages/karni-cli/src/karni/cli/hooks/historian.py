"""Feeding the historian after a session, without making the agent wait.

When ``karni-historian`` is installed (the program ``$KARNI_HISTORIAN``
names, else the one next to the running interpreter, else on PATH), the
hook starts :mod:`karni.cli.hooks.background` as a detached process (a
new session, stdin from ``/dev/null``, stdout and stderr appended to
``.karni/local/hooks.log``) and returns at once; ``python -P`` keeps the
project's folder off its ``sys.path``. That process runs
``karni-historian ingest`` of the session's transcript, then ``run``, under
a lock. The historian is only ever started as a program, never imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from karni.agent.common.processes import find_program
from karni.cli.hooks.local import open_log

__all__ = ["HISTORIAN", "HISTORIAN_VARIABLE", "find_historian", "start"]

HISTORIAN = "karni-historian"
"""The historian's command."""

HISTORIAN_VARIABLE = "KARNI_HISTORIAN"
"""Names the historian program to run instead of the one found."""


def find_historian() -> str | None:
    """The historian program: ``$KARNI_HISTORIAN``, beside this interpreter, then on PATH.

    On PATH means its absolute entries: an empty or relative one names the
    working folder, which is the project's when a harness runs the hook.
    """
    chosen = os.environ.get(HISTORIAN_VARIABLE)
    if chosen:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    name = HISTORIAN + (".exe" if os.name == "nt" else "")
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside

    return find_program(HISTORIAN)  # absolute PATH entries only: never the project's folder


def start(root: str, transcript: str | None, *, share: bool = False) -> str:
    """Start the background historian run for ``transcript`` (None: its own sources).

    With ``share``, the run ends with ``karni-historian share --auto``.

    Returns:
        What happened, for the log.

    Raises:
        OSError: The process or the log could not be started.
    """
    historian = find_historian()
    if historian is None:
        return f"{HISTORIAN} is not installed; nothing to ingest"
    if transcript is not None and not os.path.isfile(transcript):
        return f"transcript {transcript} does not exist; nothing to ingest"

    # -P: the process runs in the project's folder, and `python -m` would put
    # that folder first on sys.path, so a `karni/` folder in a cloned
    # repository would be imported instead of Karni (docs/security.md).
    command = [sys.executable, "-P", "-m", "karni.cli.hooks.background", root, historian]
    command += [repr(time.time()), transcript or "", "share" if share else ""]
    if sys.platform == "win32":
        flags, new_session = (
            subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP,
            False,
        )
    else:
        flags, new_session = 0, True
    with open_log(root) as log:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=root,
            close_fds=True,
            creationflags=flags,
            start_new_session=new_session,
        )
    then = " and share --auto" if share else ""
    return f"started {HISTORIAN} ingest {transcript or '(its own sources)'}, run{then}"
