"""In the ``karni`` command, provider calls run in a forked child: even ``os._exit`` ends only it.

Each case runs a program that claims its output as the ``karni`` command does
(:func:`karni.agent.common.output.claim`), then composes or calls through
:func:`karni.agent.history.call_isolated` with ``in_child=True``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).parent

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork: calls use a thread")


def run_claimed(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    preamble = textwrap.dedent(
        f"""
        import os, signal, sys, time
        sys.path.insert(0, {str(HERE)!r})
        from conftest import Static
        from karni.agent.common.output import claim, finish
        from karni.agent.history import call_isolated, compose
        claim()
        """
    )
    epilogue = "\nfinish(0)\n"
    return subprocess.run(
        [sys.executable, "-c", preamble + textwrap.dedent(code) + epilogue],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        # Ctrl-C at its default, as in a terminal, even when this suite runs with it
        # ignored (a background job of a shell without job control, nohup &).
        preexec_fn=_sigint_at_default,
    )


def _sigint_at_default() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_values_errors_and_endings_come_back_as_outcomes():
    result = run_claimed(
        """
        def show(outcome):
            error = outcome.error and type(outcome.error).__name__
            print(repr(outcome.value), error, outcome.timed_out, outcome.ended)

        def raising():
            raise ValueError("no")

        def pid():
            return str(os.getpid())

        show(call_isolated(lambda: "text \\ud800", in_child=True))
        show(call_isolated(lambda: True, in_child=True))
        show(call_isolated(lambda: None, in_child=True))
        show(call_isolated(raising, in_child=True))
        show(call_isolated(lambda: os._exit(7), in_child=True))
        show(call_isolated(os.abort, in_child=True))
        show(call_isolated(lambda: 12, in_child=True))
        show(call_isolated(lambda: time.sleep(30), in_child=True, timeout=0.3))
        print(call_isolated(pid, in_child=True).value != str(os.getpid()))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        "'text \\ud800' None False None",
        "True None False None",
        "None None False None",
        "None ProviderCallError False None",
        "None ProviderExitError False 7",
        "None ProviderExitError False -6",
        "None ProviderCallError False None",
        "None None True None",
        "True",
    ]


def test_compose_carries_on_when_a_provider_ends_its_process():
    result = run_claimed(
        """
        class Exiting(Static):
            def context(self, root, path):
                os._exit(7)
        class ExitingInDetect(Static):
            def detect(self, root):
                os._exit(9)
        providers = [Exiting(name="a"), ExitingInDetect(name="b"), Static(name="c", brief="c")]
        print(compose("/project", "x.py", providers=providers))
        """
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "HISTORY: x.py (c)\nc\n"


def test_what_a_call_changes_stays_in_its_child():
    result = run_claimed(
        """
        seen = []
        outcome = call_isolated(lambda: seen.append(1) or "ok", in_child=True)
        print(outcome.value, seen)
        """
    )
    assert result.stdout == "ok []\n"


def test_a_process_the_provider_forks_cannot_hold_the_result_back():
    result = run_claimed(
        """
        def forks_then_exits():
            if os.fork() == 0:
                time.sleep(3)
                os._exit(0)
            os._exit(3)
        started = time.monotonic()
        outcome = call_isolated(forks_then_exits, in_child=True, timeout=20)
        print(outcome.ended, time.monotonic() - started < 2.5)
        """
    )
    assert result.stdout == "3 True\n"


def test_a_ctrl_c_in_the_call_is_karnis():
    result = run_claimed(
        """
        def interrupted():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)
        try:
            call_isolated(interrupted, in_child=True)
        except KeyboardInterrupt:
            print("interrupted")
        """
    )
    assert result.stdout == "interrupted\n"


def test_without_claimed_output_the_call_runs_on_a_thread():
    code = textwrap.dedent(
        """
        import os
        from karni.agent.history import call_isolated
        print(call_isolated(os.getpid, in_child=True).value == os.getpid())
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "True\n"


def test_one_child_makes_the_whole_composition():
    """detect and the brief of every provider run in the same child: one fork per composition."""
    result = run_claimed(
        """
        class Where(Static):
            def detect(self, root):
                self.seen = os.getpid()
                return True
            def context(self, root, path):
                return f"{self.seen == os.getpid()} {os.getpid() != PARENT}"
        PARENT = os.getpid()
        block = compose("/project", "x.py", providers=[Where(name="a"), Where(name="b")])
        print(block.replace(chr(10), "|"))
        """
    )
    assert result.stdout == "HISTORY: x.py (a)|True True|HISTORY: x.py (b)|True True\n"


def test_a_child_that_goes_silent_is_killed_and_the_others_still_answer():
    result = run_claimed(
        """
        class Stopped(Static):
            def context(self, root, path):
                os.kill(os.getpid(), signal.SIGSTOP)
        started = time.monotonic()
        providers = [Stopped(name="a"), Static(name="b", brief="b")]
        print(compose("/project", "x.py", providers=providers), time.monotonic() - started < 5)
        """,
        env={"KARNI_PROVIDER_TIMEOUT": "0.5"},
    )
    assert result.stdout == "HISTORY: x.py (b)\nb True\n"


def test_providers_that_never_end_the_process_are_called_in_karnis_own():
    """``calls_in_process = True`` (Karni's own providers): no child, unless another needs one."""
    result = run_claimed(
        """
        class Where(Static):
            def context(self, root, path):
                return "own" if os.getpid() == PARENT else "child"
        class Own(Where):
            calls_in_process = True
        PARENT = os.getpid()
        print(compose("/project", "x.py", providers=[Own(name="a")]).replace(chr(10), "|"))
        both = [Own(name="a"), Where(name="b")]
        print(compose("/project", "x.py", providers=both).replace(chr(10), "|"))
        print(call_isolated(Own(name="c").context, "/p", "x", in_child=True).value)
        """
    )
    assert result.stdout.splitlines() == [
        "HISTORY: x.py (a)|own",
        "HISTORY: x.py (a)|child|HISTORY: x.py (b)|child",
        "child",
    ]
