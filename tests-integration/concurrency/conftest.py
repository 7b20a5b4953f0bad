"""The concurrency suite's fixture, and its figures line.

Every case starts many real commands (``karni-historian ingest``, ``run``,
``wrapup``, ``karni context --with-history`` and Claude Code's end-of-session
hook) at once on one project, while a transcript grows, and adds up what
they did. The last line of the run gives the totals, as the fault suite
does: ``concurrency: processes: P, runs: R, messages: M, errors: E``, where
a process is a command the suite started (the hooks' background historian
runs are counted from their log), a run is one of those commands, messages
are the transcript's, and errors are the lines shown to a user that report
a failure. ``docs/reliability.md`` quotes that line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from karni_it.crowd import Crowd, totals


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    figures = totals()
    if figures["cases"]:
        terminalreporter.write_line(
            f"concurrency: cases: {figures['cases']}, processes: {figures['processes']}, "
            f"runs: {figures['runs']}, messages: {figures['messages']}, "
            f"errors: {figures['errors']}"
        )


@pytest.fixture
def crowd(tmp_path: Path) -> Crowd:
    return Crowd(tmp_path)
