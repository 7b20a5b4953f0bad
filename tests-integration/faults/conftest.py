"""The fault suite's fixtures, and its count line: "fault cases: N, passed: M".

Every case runs the real console scripts (``karni``, ``karni-historian``)
of the workspace's environment in a subprocess, with a temporary HOME, a
private copy of the example project, and fake providers installed as real
distributions (a module and a ``.dist-info`` with ``entry_points.txt``) in
a folder on ``PYTHONPATH``. The README's reliability section quotes the
count line.

A case that plants a Ctrl-C starts its command with SIGINT at its default,
as a shell in a terminal does, whatever the suite itself was started with: a
background job of a shell without job control (``scripts/test &`` in a
script) and some CI runners start commands with SIGINT ignored, an ignored
signal stays ignored across ``exec``, and Python keeps it so. The planted
code reports whether its SIGINT could land, and
:meth:`Faults.assert_interrupt_planted` fails with that report rather than
letting the case pass or fail on something else (``karni_it.interrupts``).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from karni_it.environment import home_env
from karni_it.interrupts import REPORT_VARIABLE, assert_planted, starting_with

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "eventsite"
BIN = Path(sys.executable).parent

_counts = {"cases": 0, "passed": 0}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "tests-integration/faults/" not in report.nodeid.replace("\\", "/"):
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _counts["cases"] += 1
        _counts["passed"] += int(report.passed)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _counts["cases"]:
        terminalreporter.write_line(f"fault cases: {_counts['cases']}, passed: {_counts['passed']}")


class Faults:
    """A temporary project, HOME and site folder, and the real commands run in them."""

    def __init__(self, tmp_path: Path) -> None:
        self.sigint_report = tmp_path / "sigint-report"
        self.project = tmp_path / "eventsite"
        shutil.copytree(EXAMPLE, self.project, ignore=shutil.ignore_patterns("__pycache__"))
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.site = tmp_path / "site"
        self.site.mkdir()
        self.env = home_env(self.home, KARNI_HISTORY_PROVIDERS="", PYTHONPATH=str(self.site))
        self.env[REPORT_VARIABLE] = str(self.sigint_report)

    def install(self, distribution: str, points: dict[str, str], modules: dict[str, str]) -> None:
        """Install ``distribution`` with ``karni.history_providers`` entry points and modules."""
        for name, source in modules.items():
            (self.site / name).write_text(textwrap.dedent(source), encoding="utf-8")
        folder = self.site / f"{distribution.replace('-', '_')}-1.0.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n", encoding="utf-8"
        )
        lines = ["[karni.history_providers]", *(f"{k} = {v}" for k, v in points.items()), ""]
        (folder / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")

    def run(
        self,
        program: str,
        *args: str | bytes,
        env: dict[str, str] | None = None,
        timeout: float = 120,
        sigint: signal.Handlers = signal.SIG_DFL,
        **options: object,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``program`` (a console script of this environment, or a path) in the project.

        The command starts with SIGINT at ``sigint``: its default, as a shell
        in a terminal starts a command, unless a case asks for
        ``signal.SIG_IGN``, as a shell starts a background job.
        """
        options["preexec_fn"] = starting_with(sigint, options.get("preexec_fn"))  # type: ignore[arg-type]
        return subprocess.run(
            [str(BIN / program), *args],
            cwd=options.pop("cwd", self.project),
            env={**self.env, **(env or {})},
            capture_output=True,
            timeout=timeout,
            **options,  # type: ignore[arg-type]
        )

    def karni(self, *args: str | bytes, **options: object) -> subprocess.CompletedProcess[bytes]:
        """Run the real ``karni`` command."""
        return self.run("karni", *args, **options)  # type: ignore[arg-type]

    def assert_interrupt_planted(self) -> None:
        """Fail unless the command's planted SIGINT (``PLANT_SIGINT``) could land."""
        assert_planted(self.sigint_report)


@pytest.fixture
def faults(tmp_path: Path) -> Faults:
    return Faults(tmp_path)
