"""The `karni` dispatcher and the commands' help."""

from __future__ import annotations

import sys

import pytest
from karni.cli.main import main


def test_help_lists_the_commands(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("context", "doctor", "check", "config"):
        assert f"\n  {name} " in out


def test_no_arguments_is_a_usage_error(capsys) -> None:
    assert main([]) == 2
    assert capsys.readouterr().out.startswith("usage: karni COMMAND")


def test_unknown_command(capsys) -> None:
    assert main(["frobnicate"]) == 2
    assert capsys.readouterr().err == (
        "karni: unknown command `frobnicate`; run `karni --help` for the list\n"
    )


@pytest.mark.parametrize("command", ["context", "doctor", "check", "config"])
def test_every_command_has_help(capsys, command: str) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: karni {command}")


def test_context_hot_path_imports_nothing_heavy(eventsite, run_cli) -> None:
    probe = (
        "import sys\n"
        "from karni.cli.main import main\n"
        "main(['context'])\n"
        "heavy = {'argparse', 'json', 'typing', 'dataclasses', 'importlib.metadata', 'ast',"
        " 'subprocess', 'tomllib', 'karni.agent.history', 'pathlib'}\n"
        "print(sorted(heavy & set(sys.modules)), file=sys.stderr)\n"
    )
    import subprocess

    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=eventsite, capture_output=True, text=True, check=True
    )
    assert result.stderr == "[]\n"
