"""`karni` behaves like the command-line tools users know: version, help, typos, completion."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from itertools import pairwise
from pathlib import Path

import pytest
from karni.cli.main import COMMANDS


def _words(text: str) -> list[str]:
    return text.split()


def test_version(run_cli, tmp_path: Path) -> None:
    result = run_cli("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert re.fullmatch(r"karni \S+\n", result.stdout)
    assert run_cli("-V", cwd=tmp_path).stdout == result.stdout


def test_bare_karni_prints_usage_on_stderr_and_exits_2(run_cli, tmp_path: Path) -> None:
    result = run_cli(cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("usage: karni COMMAND")
    assert "  completion " in result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_command_is_the_commands_own_help(run_cli, tmp_path: Path, command: str) -> None:
    via_help = run_cli("help", command, cwd=tmp_path)
    own = run_cli(command, "--help", cwd=tmp_path)
    assert via_help.returncode == own.returncode == 0
    assert via_help.stdout == own.stdout
    assert via_help.stdout.startswith(f"usage: karni {command}")


def test_help_alone_is_the_top_level_help(run_cli, tmp_path: Path) -> None:
    result = run_cli("help", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == run_cli("--help", cwd=tmp_path).stdout


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["contxt"], "karni: unknown command `contxt` (did you mean `context`?); "),
        (["help", "doctr"], "karni: unknown command `doctr` (did you mean `doctor`?); "),
        (
            ["context", "--with-histroy"],
            "karni: unknown option `--with-histroy` for `karni context` "
            "(did you mean `--with-history`?); ",
        ),
        (
            ["doctor", "--quite"],
            "karni: unknown option `--quite` for `karni doctor` (did you mean `--quiet`?); ",
        ),
        (
            ["rules", "--jsn"],
            "karni: unknown option `--jsn` for `karni rules` (did you mean `--json`?); ",
        ),
        (
            ["hooks", "status", "--agnet", "claude"],
            "karni: unknown option `--agnet` for `karni hooks` (did you mean `--agent`?); ",
        ),
        (["completion", "fsh"], "(did you mean `fish`?); "),
    ],
)
def test_a_typo_gets_a_suggestion(run_cli, tmp_path: Path, argv: list[str], expected: str) -> None:
    result = run_cli(*argv, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert expected in result.stderr
    assert result.stderr.count("\n") == 1


def test_no_suggestion_when_nothing_is_close(run_cli, tmp_path: Path) -> None:
    result = run_cli("frobnicate", cwd=tmp_path)
    assert result.stderr == "karni: unknown command `frobnicate`; run `karni --help` for the list\n"


@pytest.mark.parametrize("command", ["", *sorted(COMMANDS)])
def test_help_fits_79_columns_off_a_terminal_and_the_terminal_width(
    run_cli, tmp_path: Path, command: str
) -> None:
    argv = [command, "--help"] if command else ["--help"]
    wide = run_cli(*argv, cwd=tmp_path).stdout
    narrow = run_cli(*argv, cwd=tmp_path, env={"COLUMNS": "50"}).stdout
    assert max(map(len, wide.splitlines())) <= 79
    assert max(len(line) for line in narrow.splitlines() if " " in line.strip()) <= 50
    assert _words(narrow) == _words(wide)  # rewrapped, never a word split or lost
    for width, text in ((50, narrow), (79, wide)):
        assert not _stranded(text.splitlines(), width), f"a short line left at {width} columns"


def _stranded(lines: list[str], width: int) -> list[str]:
    """The lines of an option's description that end early while the next one continues it.

    A description that had to be wrapped is re-filled whole, so each of its
    lines but the last is full: the next line's first word would not fit.
    """
    short = []
    for line, following in pairwise(lines):
        stripped = following.lstrip(" ")
        hang = len(following) - len(stripped)
        continues = hang > 2 and stripped and len(line) > hang and line[hang - 1] == " "
        continues = continues and not line.startswith("usage:")  # a second usage line is its own
        if continues and len(line) + 1 + len(stripped.split(" ")[0]) <= width:
            short.append(line)
    return short


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_every_command(run_cli, tmp_path: Path, shell: str) -> None:
    result = run_cli("completion", shell, cwd=tmp_path)
    assert result.returncode == 0
    for command in COMMANDS:
        assert command in result.stdout
    for option in ("--with-history", "--explain", "--example", "--agent"):
        assert option.lstrip("-") in result.stdout
    assert "python" not in result.stdout.lower()  # completing runs no Python
    program = shutil.which(shell)
    if program is not None:  # a syntax check where the shell is installed
        check = [program, "-n"] if shell != "fish" else [program, "--no-execute"]
        script = tmp_path / f"karni.{shell}"
        script.write_text(result.stdout)
        assert subprocess.run([*check, str(script)], capture_output=True).returncode == 0


def test_bash_completion_completes_commands_and_options(run_cli, tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = tmp_path / "karni.bash"
    script.write_text(run_cli("completion", "bash", cwd=tmp_path).stdout)
    probe = (
        f"complete() {{ :; }}; source {shlex.quote(str(script))}; "
        "COMP_WORDS=(karni con); COMP_CWORD=1; _karni; echo ${COMPREPLY[@]}; "
        "COMP_WORDS=(karni context --w); COMP_CWORD=2; _karni; echo ${COMPREPLY[@]}"
    )
    result = subprocess.run([bash, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout == "context config\n--with-history\n"


def test_completion_needs_one_known_shell(run_cli, tmp_path: Path) -> None:
    result = run_cli("completion", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "karni: `karni completion` takes bash, zsh or fish, got nothing; "
        "usage: karni completion bash|zsh|fish\n"
    )
