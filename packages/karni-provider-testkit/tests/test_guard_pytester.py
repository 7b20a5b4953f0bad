"""A conformance test may be overridden only with an explicit, reasoned xfail."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CONTRACT_BASE

BASE = CONTRACT_BASE


def _run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_guarded=BASE + body)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def test_a_silently_overridden_test_fails_collection(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    result = _run(
        pytester,
        """
class TestQuiet(Base):
    def test_nothing_reaches_stdout_or_stderr(self):
        pass
""",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*TypeError: TestQuiet overrides the conformance test `test_nothing_reaches_stdout_or_"
            "stderr` of ProviderContract; remove the override, or mark it*xfail(reason=...)*"
        ]
    )
    assert result.ret != 0


def test_a_test_dropped_by_assignment_fails_collection(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    result = _run(
        pytester,
        "\nclass TestDropped(Base):\n    test_detect_makes_only_a_few_file_system_calls = None\n",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*TestDropped overrides the conformance test*few_file_system_calls*"]
    )


def test_xfail_without_a_reason_is_not_enough(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    result = _run(
        pytester,
        """
class TestNoReason(Base):
    @pytest.mark.xfail
    def test_every_external_call_is_bounded(self):
        raise AssertionError("no")
""",
    )
    result.assert_outcomes(errors=1)


def test_an_override_marked_xfail_with_a_reason_is_allowed(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    result = _run(
        pytester,
        """
class TestExplained(Base):
    @pytest.mark.xfail(reason="our store is a network service; tracked in #12")
    def test_every_external_call_is_bounded(self, contract_store):
        raise AssertionError("talks to the network without a timeout")
""",
        "-k",
        "bounded or shape",
    )
    result.assert_outcomes(passed=1, xfailed=1)


def test_the_contract_itself_is_not_collected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bare="from karni_provider_testkit import ProviderContract\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
