"""The plugin's fixtures, used the way a provider author's test suite uses them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_karni_project_is_a_project_karni_understands(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_project(karni_project, run_karni):
            assert (karni_project / "manage.py").is_file()
            assert (karni_project / "apps/events/models.py").is_file()
            assert (karni_project / "frontend/src/pages/EventList.tsx").is_file()
            result = run_karni("context", cwd=karni_project)
            assert result.exit_code == 0, result.stderr
            assert "MODELS: Event(title,starts_at,capacity,status)" in result.stdout
            assert "PAGES: EventList" in result.stdout
            assert result.stderr == ""
        """
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_install_provider_registers_for_one_test_only(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    (example_installed / "my_history-0.1.0.dist-info").rename(example_installed / "not-installed")
    pytester.makepyfile(
        """
        import os
        import sys

        from karni.agent.history import discover
        from my_history.karni_provider import MyHistoryProvider

        BEFORE = (list(sys.path), os.environ.get("PYTHONPATH"), os.environ.get("KARNI_CACHE_DIR"))


        def test_a_installed(install_provider, karni_project, run_karni):
            installed = install_provider(MyHistoryProvider, distribution="my-history")
            assert installed.value == "my_history.karni_provider:MyHistoryProvider"
            assert installed.name == "my-history"
            assert os.environ["KARNI_CACHE_DIR"] != BEFORE[2]
            found = {p.name: p for p in discover().providers}
            assert found["my-history"].distribution == "my-history"
            assert isinstance(found["my-history"].provider, MyHistoryProvider)

            (karni_project / ".my-history").mkdir()
            (karni_project / ".my-history" / "log.jsonl").write_text(
                '{"path": "apps/events/models.py", "date": "2026-10-01", "note": "soft delete"}\\n'
            )
            result = run_karni(
                "context", "--with-history", "apps/events/models.py",
                cwd=karni_project, env={"KARNI_HISTORY_PROVIDERS": "my-history"},
            )
            assert result.exit_code == 0, result.stderr
            assert result.history_block() == (
                "HISTORY: apps/events/models.py (my-history)\\n"
                "**Notes (newest first)**\\n"
                "- 2026-10-01 soft delete"
            )


        def test_b_gone_afterwards(tmp_path, monkeypatch):
            assert (list(sys.path), os.environ.get("PYTHONPATH"),
                    os.environ.get("KARNI_CACHE_DIR")) == BEFORE
            monkeypatch.setenv("KARNI_CACHE_DIR", str(tmp_path))
            assert "my-history" not in {p.name for p in discover().providers}
        """
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_run_karni_isolates_the_environment(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_env(run_karni, karni_project, monkeypatch):
            monkeypatch.setenv("CI", "true")
            monkeypatch.setenv("GITHUB_ACTIONS", "true")
            monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "nonexistent")
            monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent")
            result = run_karni("--version")
            assert result.exit_code == 0
            assert result.stdout.startswith("karni ")
            assert result.args[0].endswith("karni")
        """
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_plugin_can_be_switched_off(pytester: pytest.Pytester, example_installed: Path) -> None:
    pytester.makepyfile(
        test_off="""
        def test_uses_fixture(karni_project):
            pass
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:karni_provider_testkit", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'karni_project' not found*"])


def test_the_contract_runs_with_the_plugin_switched_off(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    example_test = Path(__file__).resolve().parents[3] / "docs/how-to/example_provider/tests"
    source = (example_test / "test_karni_provider.py").read_text(encoding="utf-8")
    contract_only = source.split("\n\n\ndef test_reverted_notes_come_first")[0]
    pytester.makepyfile(test_contract=contract_only)
    result = pytester.runpytest_subprocess(
        "-p", "no:karni_provider_testkit", "-p", "no:cacheprovider"
    )
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > 40 and "failed" not in outcomes, result.outlines[-20:]


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, karni_provider_testkit.plugin\n"
        "heavy = ['karni_provider_testkit.contract', 'karni_provider_testkit.install',\n"
        "         'karni_provider_testkit.runner', 'karni_provider_testkit.probes',\n"
        "         'karni_provider_testkit.snapshots', 'karni_provider_testkit.fake_chronicle',\n"
        "         'syrupy', 'karni.agent.history']\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert output == "[]\n"
