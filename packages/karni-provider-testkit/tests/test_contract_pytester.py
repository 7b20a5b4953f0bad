"""ProviderContract run by pytest itself on good and misbehaving providers.

Each misbehaving provider is the docs' example provider with one fault, and
must fail exactly the conformance test that names that fault.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

FAULTY = '''
"""The docs' example provider, with one fault per class."""
import os
import socket
import subprocess
import sys
import time

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


class SlowDetect(MyHistoryProvider):
    def detect(self, project_root):
        time.sleep(0.003)
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


class ColouredBrief(MyHistoryProvider):
    def context(self, project_root, path):
        brief = super().context(project_root, path)
        return brief and "\\x1b[1m" + brief + "\\x1b[0m"
'''

VARIANTS = """
import json

from karni_provider_testkit import ProviderContract
from my_history.karni_provider import MyHistoryProvider
from faulty import (
    AlwaysDetects,
    WrongStoreMarkers,
    ChildWritesToStdout,
    ColouredBrief,
    OpensSocketInDetect,
    Prints,
    RaisesOnNonAscii,
    SlowDetect,
    UnquotedCommand,
    WaitsWithoutTimeout,
)


class Base(ProviderContract):
    def make_store(self, root):
        (root / ".my-history").mkdir()

    def record(self, root, path, text):
        note = {"path": path, "date": "2026-09-30", "note": text}
        with (root / ".my-history" / "log.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps(note) + "\\n")


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


class TestSlowDetect(Base):
    def make_provider(self):
        return SlowDetect()


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
"""

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
    "TestSlowDetect": {"test_detect_takes_under_a_millisecond"},
    "TestRaisesOnNonAscii": {"test_context_never_raises_for_hostile_paths[non-ASCII-*]"},
    "TestPrints": {"test_nothing_reaches_stdout_or_stderr"},
    "TestChildWritesToStdout": {"test_nothing_reaches_stdout_or_stderr"},
    "TestWaitsWithoutTimeout": {"test_every_external_call_is_bounded"},
    "TestUnquotedCommand": {
        "test_full_command_survives_shlex_split[apps/events/my file with spaces.py]",
        'test_full_command_survives_shlex_split[apps/$(touch pwned)/it\'s "quoted"; rm -rf.py]',
    },
    "TestColouredBrief": {"test_briefs_carry_no_control_characters"},
}


def _pattern(text: str) -> re.Pattern[str]:
    """``*`` is the only wildcard: test ids contain brackets."""
    return re.compile(".*".join(re.escape(part) for part in text.split("*")))


def _failures(lines: list[str]) -> dict[str, set[str]]:
    failed: dict[str, set[str]] = {}
    for line in lines:
        match = re.match(r"^FAILED test_variants\.py::(\w+)::(.+?)(?: - .*)?$", line)
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
