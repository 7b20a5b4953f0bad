"""The three commands share their conventions: version, usage, one error form, help width.

``karni``, ``karni-historian`` and ``karni-history-adr`` each run in a real
process from the workspace (``python -m``), outside any project.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = {
    "karni": "karni.cli",
    "karni-historian": "karni_historian.cli",
    "karni-history-adr": "karni_history_adr.cli",
}

TYPOS = {
    "karni": (["contxt"], "(did you mean `context`?)"),
    "karni-historian": (["sesions"], "(did you mean `sessions`?)"),
    "karni-history-adr": (["shwo", "x.py"], "(did you mean `show`?)"),
}

OPTION_TYPOS = {
    "karni": (["doctor", "--jsn"], "(did you mean `--json`?)"),
    "karni-historian": (["run", "--dry-rn"], "(did you mean `--dry-run`?)"),
    "karni-history-adr": (["list", "--acepted"], "(did you mean `--accepted`?)"),
}


def _run(
    program: str, *args: str, cwd: Path, columns: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    env["HOME"] = str(cwd)
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(
        [sys.executable, "-m", COMMANDS[program], *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("program", COMMANDS)
def test_version_on_every_command(program: str, tmp_path: Path) -> None:
    result = _run(program, "--version", cwd=tmp_path)
    assert result.returncode == 0
    assert re.fullmatch(rf"{program} \d+\.\d+\S*\n", result.stdout)


@pytest.mark.parametrize("program", COMMANDS)
def test_bare_command_prints_usage_on_stderr_and_exits_2(program: str, tmp_path: Path) -> None:
    result = _run(program, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"usage: {program} ")


@pytest.mark.parametrize("program", COMMANDS)
def test_a_mistyped_command_is_one_error_line_with_a_suggestion(
    program: str, tmp_path: Path
) -> None:
    argv, hint = TYPOS[program]
    result = _run(program, *argv, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"{program}: ")
    assert "error:" not in result.stderr
    assert hint in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("program", COMMANDS)
def test_a_mistyped_option_gets_a_suggestion(program: str, tmp_path: Path) -> None:
    argv, hint = OPTION_TYPOS[program]
    result = _run(program, *argv, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"{program}: ")
    assert hint in result.stderr


@pytest.mark.parametrize("program", COMMANDS)
def test_a_failure_exits_1_in_the_same_form(program: str, tmp_path: Path) -> None:
    argv = {"karni": ["rules"], "karni-historian": ["sessions"], "karni-history-adr": ["list"]}
    result = _run(program, *argv[program], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"{program}: ")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("program", COMMANDS)
def test_help_fits_79_columns_or_the_terminal(program: str, tmp_path: Path) -> None:
    wide = _run(program, "--help", cwd=tmp_path)
    narrow = _run(program, "--help", cwd=tmp_path, columns="60")
    assert wide.returncode == narrow.returncode == 0
    assert max(map(len, wide.stdout.splitlines())) <= 79
    assert max(map(len, narrow.stdout.splitlines())) <= 60
    assert "Exit status: 0 success, 1 failure, 2 usage error, 130 interrupted." in " ".join(
        wide.stdout.split()
    )
