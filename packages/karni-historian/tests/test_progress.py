"""Progress bars: sized to the terminal, redrawn in place, and only where they can be."""

import io

import pytest
from karni_historian.progress import Progress, progress_for


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def _megabytes(done, total):
    return f"{done / 1e6:.1f}/{total / 1e6:.1f} MB"


@pytest.mark.parametrize("columns", [20, 40, 80, 200])
def test_the_bar_always_fits_the_terminal(columns):
    bar = Progress(50_000_000, FakeTerminal(), "ingest", _megabytes)
    bar.done = 12_500_000
    line = bar.line("a-very-long-session-file-name-" + "x" * 80 + ".jsonl", columns)
    assert len(line) <= columns - 1
    assert line.startswith("ingest")
    if columns >= 40:
        assert " 25% 12.5/50.0 MB" in line
        assert "[" in line and "#" in line


def test_none_off_a_terminal_or_with_a_dumb_one(monkeypatch):
    assert progress_for(10, io.StringIO(), "ingest", _megabytes) is None
    assert progress_for(10, None, "ingest", _megabytes) is None
    monkeypatch.setenv("TERM", "dumb")
    assert progress_for(10, FakeTerminal(), "ingest", _megabytes) is None
    monkeypatch.setenv("TERM", "xterm")
    assert progress_for(10, FakeTerminal(), "ingest", _megabytes) is not None
