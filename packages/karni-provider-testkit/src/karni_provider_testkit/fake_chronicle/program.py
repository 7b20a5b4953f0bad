"""The double as a program: record the call, apply the test's settings, run, print.

This is what the installed ``chronicle`` script, ``python -m
karni_provider_testkit.fake_chronicle`` and the ``fake-chronicle`` console
script run. The call is logged before anything else happens, so a run that
is later killed is still on record.
"""

from __future__ import annotations

import os
import sys

from karni_provider_testkit.fake_chronicle.calls import record_call, stdin_state
from karni_provider_testkit.fake_chronicle.commands import Outcome, run
from karni_provider_testkit.fake_chronicle.config import HOME_VARIABLE, load_config
from karni_provider_testkit.fake_chronicle.formats import dumps

__all__ = ["main"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


def _start_grandchild(own_session: bool) -> int:
    import subprocess

    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        stdin=subprocess.DEVNULL,
        start_new_session=own_session,
    )
    return child.pid


def _apply_config(outcome: Outcome, config: Mapping[str, Any]) -> None:
    payload, command = outcome.payload, outcome.command
    if payload is not None and command is not None:
        patch = (config.get("patch") or {}).get(command) or {}
        drop = (config.get("drop") or {}).get(command) or []
        if patch or drop:
            payload.update(patch)
            for key in drop:
                payload.pop(key, None)
            outcome.stdout = dumps(payload) + "\n"
    if isinstance(config.get("stdout"), str):
        outcome.stdout = config["stdout"]
    if config.get("exit_code") is not None:
        outcome.code = int(config["exit_code"])


def _write(stream: Any, text: str) -> None:
    if text:
        stream.buffer.write(text.encode("utf-8"))
        stream.buffer.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the double as the ``chronicle`` command; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    home = os.environ.get(HOME_VARIABLE)
    config = load_config(home)
    cwd = os.getcwd()
    wanted = config.get("grandchild")
    grandchild = _start_grandchild(wanted == "own-session") if wanted else None
    if home:
        entry = {
            "argv": arguments,
            "cwd": cwd,
            "pid": os.getpid(),
            "stdin": stdin_state(),
            "grandchild": grandchild,
        }
        record_call(home, entry)
    if config.get("delay"):
        import time

        time.sleep(float(config["delay"]))
    _write(sys.stderr, str(config.get("stderr") or ""))
    outcome = run(arguments, cwd)
    _apply_config(outcome, config)
    _write(sys.stderr, outcome.stderr)
    _write(sys.stdout, outcome.stdout)
    return outcome.code
