"""ProviderContract run by pytest itself on good and misbehaving providers.

Each misbehaving provider is the docs' example provider with one fault, and
must fail exactly the conformance test that names that fault.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import CONTRACT_BASE

FAULTY = '''
"""The docs' example provider, with one fault per class."""
import os
import socket
import subprocess
import sys

from my_history.karni_provider import MyHistoryProvider


class AlwaysDetects(MyHistoryProvider):
    def detect(self, project_root):
        return True


class WrongStoreMarkers(MyHistoryProvider):
    store_markers = (".not-my-history",)


class OpensSocketInDetect(MyHistoryProvider):
    def detect(self, project_root):
        try:
            socket.socket().close()
        except Exception:
            pass
        return super().detect(project_root)


class ReadsTheStoreInDetect(MyHistoryProvider):
    def detect(self, project_root):
        try:
            os.listdir(project_root / ".my-history")
            (project_root / "manage.py").read_text()
        except OSError:
            pass
        return super().detect(project_root)


class StatsEveryFolderInDetect(MyHistoryProvider):
    def detect(self, project_root):
        for _ in range(100):
            (project_root / "apps").is_dir()
        return super().detect(project_root)


class RaisesOnNonAscii(MyHistoryProvider):
    def context(self, project_root, path):
        path.encode("ascii")
        return super().context(project_root, path)


class Prints(MyHistoryProvider):
    def context(self, project_root, path):
        print("looking up", path)
        return super().context(project_root, path)


class ChildWritesToStdout(MyHistoryProvider):
    def context(self, project_root, path):
        subprocess.run([sys.executable, "-S", "-c", "print('child')"], timeout=30)
        return super().context(project_root, path)


class WaitsWithoutTimeout(MyHistoryProvider):
    def context(self, project_root, path):
        subprocess.run([sys.executable, "-S", "-c", "pass"], capture_output=True)
        return super().context(project_root, path)


class UnquotedCommand(MyHistoryProvider):
    def full_command(self, project_root, path):
        return f"my-history show {path}" if path else None


class IgnoresItsRoom(MyHistoryProvider):
    accepts_room = True

    def context(self, project_root, path, room=1200):
        return super().context(project_root, path)


class KeepsToItsRoom(MyHistoryProvider):
    accepts_room = True

    def context(self, project_root, path, room=1200):
        kept, used = [], -1
        for line in (super().context(project_root, path) or "").splitlines():
            if used + 1 + len(line) > room:
                break
            kept.append(line)
            used += 1 + len(line)
        return "\\n".join(kept) or None


class ColouredBrief(MyHistoryProvider):
    def context(self, project_root, path):
        brief = super().context(project_root, path)
        return brief and "\\x1b[1m" + brief + "\\x1b[0m"
'''

VARIANTS = (
    CONTRACT_BASE
    + """
from faulty import (
    AlwaysDetects,
    WrongStoreMarkers,
    ChildWritesToStdout,
    ColouredBrief,
    IgnoresItsRoom,
    KeepsToItsRoom,
    OpensSocketInDetect,
    Prints,
    RaisesOnNonAscii,
    ReadsTheStoreInDetect,
    StatsEveryFolderInDetect,
    UnquotedCommand,
    WaitsWithoutTimeout,
)


class TestGood(Base):
    def make_provider(self):
        return MyHistoryProvider()


class TestGoodInstalled(Base):
    entry_point_name = "my-history"
    distribution = "my-history"

    def make_provider(self):
        return MyHistoryProvider()


class TestWrongDistribution(Base):
    entry_point_name = "my-history"
    distribution = "someone-else"

    def make_provider(self):
        return MyHistoryProvider()


class TestAlwaysDetects(Base):
    def make_provider(self):
        return AlwaysDetects()


class TestWrongStoreMarkers(Base):
    def make_provider(self):
        return WrongStoreMarkers()


class TestOpensSocketInDetect(Base):
    def make_provider(self):
        return OpensSocketInDetect()


class TestReadsTheStoreInDetect(Base):
    def make_provider(self):
        return ReadsTheStoreInDetect()


class TestStatsEveryFolderInDetect(Base):
    def make_provider(self):
        return StatsEveryFolderInDetect()


class TestRaisesOnNonAscii(Base):
    def make_provider(self):
        return RaisesOnNonAscii()


class TestPrints(Base):
    def make_provider(self):
        return Prints()


class TestChildWritesToStdout(Base):
    def make_provider(self):
        return ChildWritesToStdout()


class TestWaitsWithoutTimeout(Base):
    def make_provider(self):
        return WaitsWithoutTimeout()


class TestUnquotedCommand(Base):
    def make_provider(self):
        return UnquotedCommand()


class TestColouredBrief(Base):
    def make_provider(self):
        return ColouredBrief()


class TestIgnoresItsRoom(Base):
    def make_provider(self):
        return IgnoresItsRoom()


class TestKeepsToItsRoom(Base):
    def make_provider(self):
        return KeepsToItsRoom()
"""
)

EXPECTED_FAILURES: dict[str, set[str]] = {
    "TestGood": set(),
    "TestGoodInstalled": set(),
    "TestWrongDistribution": {"test_entry_point_is_declared"},
    "TestAlwaysDetects": {"test_detect_is_false_without_a_store"},
    "TestWrongStoreMarkers": {
        "test_store_markers_agree_with_detect",
        "test_compose_shows_the_brief_under_the_cap",
        "test_karni_context_shows_the_brief",
    },
    "TestOpensSocketInDetect": {"test_detect_starts_no_process_and_opens_no_socket"},
    "TestReadsTheStoreInDetect": {"test_detect_makes_only_a_few_file_system_calls"},
    "TestStatsEveryFolderInDetect": {"test_detect_makes_only_a_few_file_system_calls"},
    "TestRaisesOnNonAscii": {"test_context_never_raises_for_hostile_paths[non-ASCII-*]"},
    "TestPrints": {"test_nothing_reaches_stdout_or_stderr"},
    "TestChildWritesToStdout": {"test_nothing_reaches_stdout_or_stderr"},
    "TestWaitsWithoutTimeout": {"test_every_external_call_is_bounded"},
    "TestUnquotedCommand": {
        "test_full_command_survives_shlex_split[apps/events/my file with spaces.py]",
        'test_full_command_survives_shlex_split[apps/$(touch pwned)/it\'s "quoted"; rm -rf.py]',
    },
    "TestColouredBrief": {"test_briefs_carry_no_control_characters"},
    "TestIgnoresItsRoom": {
        "test_a_brief_keeps_within_its_room[0]",
        "test_a_brief_keeps_within_its_room[30]",
        "test_a_brief_keeps_within_its_room[200]",
        "test_a_brief_keeps_within_its_room[1100]",
    },
    "TestKeepsToItsRoom": set(),
}


def _pattern(text: str) -> re.Pattern[str]:
    """``*`` is the only wildcard: test ids contain brackets."""
    return re.compile(".*".join(re.escape(part) for part in text.split("*")))


def _failures(lines: list[str]) -> dict[str, set[str]]:
    failed: dict[str, set[str]] = {}
    for line in lines:
        match = re.match(r"^FAILED test_\w+\.py::(\w+)::(.+?)(?: - .*)?$", line)
        if match:
            failed.setdefault(match.group(1), set()).add(match.group(2))
    return failed


def test_each_fault_fails_its_own_conformance_test(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    pytester.makepyfile(faulty=FAULTY, test_variants=VARIANTS)
    result = pytester.runpytest_subprocess("-rfE", "-p", "no:cacheprovider")
    failures = _failures(result.outlines)
    problems = []
    for variant, texts in sorted(EXPECTED_FAILURES.items()):
        failed = failures.get(variant, set())
        expected = [_pattern(text) for text in texts]
        unexpected = sorted(name for name in failed if not any(p.fullmatch(name) for p in expected))
        if unexpected:
            problems.append(f"{variant}: unexpected failures {unexpected}")
        for pattern in expected:
            if not any(pattern.fullmatch(name) for name in failed):
                problems.append(f"{variant}: no failure matches {pattern.pattern!r}")
    assert set(failures) <= set(EXPECTED_FAILURES)
    assert not problems, "\n".join(problems) + "\n" + "\n".join(result.outlines[-60:])
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 30 * len(EXPECTED_FAILURES)
    assert "error" not in outcomes and "errors" not in outcomes


HANGING = (
    CONTRACT_BASE
    + """
import subprocess
import sys

# Runs until its caller is gone, so the hung call leaves no process behind.
NEVER_EXITS = [
    sys.executable,
    "-S",
    "-c",
    "import os, time\\nparent = os.getppid()\\nwhile os.getppid() == parent: time.sleep(0.05)",
]


class HangsWithoutTimeout(MyHistoryProvider):
    def context(self, project_root, path):
        subprocess.run(NEVER_EXITS, capture_output=True)
        return super().context(project_root, path)


class ReadsAPipeToTheEnd(MyHistoryProvider):
    # No communicate() or wait() for the probes to see: only the deadline catches it.
    def context(self, project_root, path):
        child = subprocess.Popen(NEVER_EXITS, stdout=subprocess.PIPE)
        child.stdout.read()
        return super().context(project_root, path)


class HangsWithTimeout(MyHistoryProvider):
    def context(self, project_root, path):
        try:
            subprocess.run(NEVER_EXITS, capture_output=True, timeout=0.2)
        except subprocess.TimeoutExpired:
            return None
        return super().context(project_root, path)


class Hanging(Base):
    call_timeout = 2.0


class TestHangsWithoutTimeout(Hanging):
    def make_provider(self):
        return HangsWithoutTimeout()


class TestReadsAPipeToTheEnd(Hanging):
    def make_provider(self):
        return ReadsAPipeToTheEnd()


class TestHangsWithTimeout(Hanging):
    def make_provider(self):
        return HangsWithTimeout()
"""
)


def test_a_call_that_never_returns_fails_the_bounded_check_and_the_suite_goes_on(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    import time

    pytester.makepyfile(test_hanging=HANGING)
    started = time.monotonic()
    result = pytester.runpytest_subprocess(
        "-rfE", "-p", "no:cacheprovider", "-k", "test_every_external_call_is_bounded", timeout=120
    )
    elapsed = time.monotonic() - started
    assert _failures(result.outlines) == {
        "TestHangsWithoutTimeout": {"test_every_external_call_is_bounded"},
        "TestReadsAPipeToTheEnd": {"test_every_external_call_is_bounded"},
    }, "\n".join(result.outlines[-40:])
    result.stdout.fnmatch_lines_random(
        [
            "E*unbounded external calls: Popen.communicate without a timeout, on *",
            "E*unbounded external calls: context() had not returned after 2s",
        ]
    )
    result.assert_outcomes(passed=1, failed=2)
    assert elapsed < 60, f"the suite took {elapsed:.1f}s: a hung call must not hold it up"
