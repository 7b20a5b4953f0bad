"""Loading a provider in a fresh interpreter, as Karni does, to see what loading does.

Karni imports a provider's module, calls its class (or factory) and reads
its ``name`` inside an isolated call: output is discarded, any exception
(``SystemExit`` too) is a load failure ``karni doctor`` lists, and loading
that takes longer than Karni's deadline is abandoned. Karni survives all
of that, but the provider is then missing. :func:`load_in_subprocess`
does the same steps in a child interpreter without any isolation, so the
conformance suite can tell the author exactly what loading did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["LoadingReport", "load_in_subprocess"]

_LOADER = """
import json, sys
from karni.agent.common.entry_points import load_value
from karni.agent.history.discovery import provider_from_object

value, report = sys.argv[1], sys.argv[2]
error = None
try:
    provider = provider_from_object("under-test", value, load_value(value))
    provider.name
except BaseException as caught:
    error = f"{type(caught).__name__}: {caught}"
with open(report, "w", encoding="utf-8") as handle:
    json.dump({"error": error}, handle)
"""


class LoadingReport:
    """What loading did: an exception, output on stdout/stderr, or no end in time."""

    __slots__ = ("error", "stderr", "stdout", "timed_out")

    def __init__(self, error: str | None, stdout: str, stderr: str, timed_out: bool) -> None:
        """Record the outcome."""
        self.error = error
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out


def load_in_subprocess(value: str, seconds: float, workdir: Path) -> LoadingReport:
    """Import and create the provider an entry-point ``value`` names, in a child interpreter.

    Args:
        value: ``module:attribute``, as in ``entry_points.txt``.
        seconds: How long loading may take.
        workdir: A folder for the child's report.
    """
    report = workdir / "loading-report.json"
    folders = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(folders)}
    try:
        result = subprocess.run(
            [sys.executable, "-c", _LOADER, value, str(report)],
            capture_output=True,
            text=True,
            errors="replace",
            env=env,
            timeout=seconds,
            cwd=workdir,
        )
    except subprocess.TimeoutExpired:
        return LoadingReport(None, "", "", timed_out=True)
    error = None
    if report.is_file():
        error = json.loads(report.read_text(encoding="utf-8"))["error"]
    elif result.returncode != 0:
        error = f"the interpreter exited with status {result.returncode}"
    return LoadingReport(error, result.stdout, result.stderr, timed_out=False)
