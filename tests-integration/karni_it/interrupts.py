"""Planting a Ctrl-C in a child process, and proving it was planted.

A shell in a terminal starts a command with SIGINT at its default, which is
what a user pressing Ctrl-C meets. But a shell without job control starts a
background job (``cmd &``, ``nohup cmd &`` in a script) with SIGINT
*ignored*, and so do some CI runners; an ignored signal stays ignored across
``exec``, and Python keeps it so. A test suite started that way hands the
ignored SIGINT on to every command it runs, where a planted SIGINT is
silently dropped. So a test that plants one starts its command with
:func:`starting_with` ``(SIG_DFL)``, and the planted code
(:data:`PLANT_SIGINT`) writes down whether its SIGINT could land;
:func:`assert_planted` fails with that report, so the test never passes or
fails on something else.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = [
    "NOT_PLANTED",
    "PLANTED",
    "PLANT_SIGINT",
    "REPORT_VARIABLE",
    "assert_planted",
    "starting_with",
]

NOT_PLANTED = "SIGINT is ignored in this process, so no interrupt can be planted"
"""What a planted SIGINT reports when it cannot land, and what its test then fails with."""

PLANTED = "planted"
"""What a planted SIGINT reports when SIGINT was not ignored where it was sent."""

REPORT_VARIABLE = "FAULT_SIGINT_REPORT"
"""The environment variable naming the file the planted code writes its report to."""

PLANT_SIGINT = f"""
def plant_sigint():
    # Sends SIGINT to this process, after writing down whether it can land.
    import os, signal
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    with open(os.environ[{REPORT_VARIABLE!r}], "w") as report:
        report.write({NOT_PLANTED!r} if ignored else {PLANTED!r})
    os.kill(os.getpid(), signal.SIGINT)
"""
"""Source that defines ``plant_sigint()``, for code planted in a child (a provider, a
``sitecustomize``); the child's environment names the report file in :data:`REPORT_VARIABLE`."""


def starting_with(
    sigint: signal.Handlers, then: Callable[[], object] | None = None
) -> Callable[[], None]:
    """A ``preexec_fn`` that sets SIGINT's disposition to ``sigint``, then runs ``then``.

    ``signal.SIG_DFL`` starts a command as a shell in a terminal does;
    ``signal.SIG_IGN`` as a shell starts a background job. The disposition is set between
    ``fork`` and ``exec``, so only the child has it.
    """

    def start() -> None:
        signal.signal(signal.SIGINT, sigint)
        if then is not None:
            then()

    return start


def assert_planted(report: Path) -> None:
    """Fail unless the planted SIGINT that writes ``report`` could land."""
    if not report.exists():
        pytest.fail("the planted code never ran, so no interrupt was planted")
    text = report.read_text(encoding="utf-8")
    if text != PLANTED:
        pytest.fail(text)
