"""A provider's failure is never the user's: output discarded, exceptions and hangs contained.

These run Karni's composition in a real subprocess, because what matters is what
reaches file descriptors 1 and 2 of the process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from karni.agent.history import call_isolated, compose

HERE = Path(__file__).parent


def run_python(
    code: str, timeout: float = 30, env: dict | None = None
) -> subprocess.CompletedProcess:
    preamble = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from conftest import Static, Noisy, Raising, Hanging, NoProjectContext
        from karni.agent.history import compose
        """
    )
    return subprocess.run(
        [sys.executable, "-c", preamble + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_prints_and_fd_writes_never_reach_the_process_output():
    result = run_python(
        """
        print("before")
        print(compose("/project", "a.py", providers=[Noisy(name="noisy")]))
        print("after", file=sys.stderr)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "before\nHISTORY: a.py (noisy)\nquiet brief\n"
    assert result.stderr == "after\n"


@pytest.mark.parametrize("failing", ["detect", "context", "project_context", "full_command"])
def test_raising_in_each_method(kinds, failing):
    long_brief = "\n".join("r" * 60 for _ in range(50))
    provider = kinds.Raising(failing, brief=long_brief, project=long_brief, command="tool")
    other = kinds.Static(name="zz-other", brief="still here")
    path = None if failing == "project_context" else "a.py"
    block = compose("/project", path, providers=[provider, other])
    if failing == "detect" or failing == "context":
        assert block == "HISTORY: a.py (zz-other)\nstill here"
    elif failing == "project_context":
        assert block is None  # zz-other has no project brief either
    else:
        lines = block.split("\n")
        assert "… truncated at ~300 tokens; static holds the full brief" in lines
        assert lines[-2:] == ["HISTORY: a.py (zz-other)", "still here"]


def test_keyboard_interrupt_inside_a_provider_is_contained(kinds):
    class Interrupting(kinds.Static):
        def context(self, project_root, path):
            raise KeyboardInterrupt

    assert compose("/project", "a.py", providers=[Interrupting()]) is None


def test_hanging_provider_is_abandoned_after_the_deadline():
    result = run_python(
        """
        import time
        started = time.monotonic()
        providers = [Hanging(3, name="slow"), Static(name="fast", brief="quick")]
        block = compose("/project", "a.py", providers=providers)
        print(block)
        print(f"elapsed {time.monotonic() - started:.2f}", file=sys.stderr)
        time.sleep(3.5)  # let the abandoned call finish and try to write
        print("done")
        """,
        env={"KARNI_PROVIDER_TIMEOUT": "0.5"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "HISTORY: a.py (fast)\nquick\ndone\n"
    elapsed = float(result.stderr.split("elapsed ")[1].split()[0])
    assert elapsed < 2.5
    assert "too late" not in result.stderr


def test_timeout_variable_is_read_at_every_call(kinds, monkeypatch):
    provider = kinds.Hanging(0.3, brief="late")
    monkeypatch.setenv("KARNI_PROVIDER_TIMEOUT", "0.05")
    started = time.monotonic()
    outcome = call_isolated(provider.context, Path("/p"), "a.py")
    assert outcome.timed_out and outcome.value is None
    assert time.monotonic() - started < 0.3
    monkeypatch.setenv("KARNI_PROVIDER_TIMEOUT", "5")
    outcome = call_isolated(provider.context, Path("/p"), "a.py")
    assert outcome.ok and outcome.value == "late brief"


@pytest.mark.parametrize("value", ["", "abc", "-1", "0", "nan", "inf"])
def test_invalid_timeout_values_fall_back_to_the_default(monkeypatch, value):
    from karni.agent.history.isolation import DEFAULT_PROVIDER_TIMEOUT, provider_timeout

    monkeypatch.setenv("KARNI_PROVIDER_TIMEOUT", value)
    assert provider_timeout() == DEFAULT_PROVIDER_TIMEOUT == 10.0


def test_call_isolated_restores_streams_and_working_directory(tmp_path):
    before_out, before_err, cwd = sys.stdout, sys.stderr, os.getcwd()

    def wander():
        os.chdir(tmp_path)
        return "ok"

    outcome = call_isolated(wander)
    assert outcome.ok and outcome.value == "ok"
    assert (sys.stdout, sys.stderr, os.getcwd()) == (before_out, before_err, cwd)


def test_call_isolated_reports_errors():
    outcome = call_isolated(lambda: 1 / 0)
    assert not outcome.ok
    assert isinstance(outcome.error, ZeroDivisionError)


def test_bytes_and_ten_megabytes(kinds):
    assert compose("/project", "a.py", providers=[kinds.Static(brief=b"x" * 100)]) is None
    huge = ("line of text\n" * 800_000)[:10_000_000]
    started = time.monotonic()
    block = compose("/project", "a.py", providers=[kinds.Static(brief=huge)])
    assert time.monotonic() - started < 1.0  # only what the cap can show is read
    assert len(block) <= 1200
    assert block.split("\n")[1] == "line of text"


def test_child_process_output_is_discarded_even_when_karni_stdout_is_a_pipe():
    result = run_python(
        """
        import subprocess
        class Child(Static):
            def context(self, root, path):
                subprocess.run(["sh", "-c", "echo shell-out; echo shell-err >&2"])
                return "brief"
        sys.stdout.write("start\\n")
        print(compose("/p", "a.py", providers=[Child(name="child")]))
        """
    )
    assert result.stdout == "start\nHISTORY: a.py (child)\nbrief\n"
    assert result.stderr == ""


def test_a_provider_with_a_longer_timeout_of_its_own_gets_it(kinds, monkeypatch):
    from karni.agent.history.isolation import provider_timeout

    slow = kinds.Static()
    slow.timeout = 15.0
    assert provider_timeout(slow) == 16.0
    assert provider_timeout(kinds.Static()) == 10.0
    quick = kinds.Static()
    quick.timeout = 2
    assert provider_timeout(quick) == 10.0
    weird = kinds.Static()
    weird.timeout = "soon"
    assert provider_timeout(weird) == 10.0
    monkeypatch.setenv("KARNI_PROVIDER_TIMEOUT", "3")
    assert provider_timeout(slow) == 3.0


def test_compose_uses_the_providers_own_timeout(kinds, monkeypatch):
    provider = kinds.Hanging(0.3, brief="late")
    provider.timeout = 0.01  # shorter than the default: the default (10 s) still applies
    block = compose("/project", "a.py", providers=[provider])
    assert block == "HISTORY: a.py (static)\nlate brief"


def test_two_abandoned_providers_still_leave_karni_its_output():
    result = run_python(
        """
        slow = [Hanging(3, name="slow-a"), Hanging(3, name="slow-b")]
        providers = [*slow, Static(name="z", brief="b")]
        print(compose("/project", "a.py", providers=providers))
        print("after both", file=sys.stderr)
        print("done")
        """,
        env={"KARNI_PROVIDER_TIMEOUT": "0.3"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "HISTORY: a.py (z)\nb\ndone\n"
    assert result.stderr == "after both\n"
