"""The install the README gives, run with pipx as written, and every command outputs name.

The README's install block is run exactly as written, offline: pipx gets only
what an offline run needs on top (``--skip-maintenance``, the local wheels
through ``--pip-args``, the interpreter). Then the quickstart page's console
session is replayed and must print what the page shows, line for line. In a
project whose history is long enough to be cut at the cap, every ``full
brief:`` command that ``karni context --with-history`` names is run as a user
pastes it, found on the ``PATH`` that pipx set up.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from karni_it.documented import bash_commands, commands, console_steps, fenced_blocks, section
from karni_it.interpreters import PRIMARY_VERSION, python_for
from karni_it.pipx_scenario import Journey
from karni_it.workspace import ROOT

README = ROOT / "README.md"
QUICKSTART = ROOT / "docs" / "quickstart.md"
FILE = "apps/events/models.py"
FULL_BRIEF = re.compile(r"^… truncated at ~300 tokens; full brief: (.+)$", re.MULTILINE)
PROVIDER_COMMANDS = {"karni-history-adr", "karni-historian"}
"""The commands of the providers the README installs; every one must be on ``PATH``."""


def install_block() -> list[list[str]]:
    return bash_commands(fenced_blocks(section(README.read_text("utf-8"), "Install"), "bash")[0])


def try_it_block() -> list[list[str]]:
    return bash_commands(fenced_blocks(section(README.read_text("utf-8"), "Install"), "bash")[1])


@dataclass
class Shell:
    """Runs documented commands the way a user's shell would, after the pipx install."""

    journey: Journey
    python: Path

    def run(self, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        if argv[0] == "pipx":
            subcommand, *rest = argv[1:]
            if subcommand not in ("install", "inject"):  # nothing to download
                return self.journey.pipx(subcommand, *rest, check=False)
            chosen = ["--python", str(self.python)] if subcommand == "install" else []
            offline = ["--skip-maintenance", *chosen, self.journey.pip_args]
            return self.journey.pipx(subcommand, *offline, *rest, check=False)
        env = self.journey.karni_env
        found = shutil.which(argv[0], path=env["PATH"])
        assert found, f"`{argv[0]}`: command not found after the documented install"
        if argv[0] == "karni" or argv[0] in PROVIDER_COMMANDS:
            assert Path(found).parent == self.journey.bin, f"{argv[0]} is not pipx's: {found}"
        return subprocess.run(
            [found, *argv[1:]],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    def replay(self, steps: list[list[str]], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
        """Run ``steps`` in order from ``cwd`` (``cd`` moves), each required to succeed."""
        results = []
        for argv in steps:
            if argv[0] == "cd":
                cwd = cwd / argv[1]
                continue
            result = self.run(argv, cwd)
            assert result.returncode == 0, f"`{' '.join(argv)}` failed:\n{result.stderr}"
            results.append(result)
        return results

    def folder(self, name: str) -> Path:
        path = self.journey.work / name
        path.mkdir()
        return path


@pytest.fixture(scope="module")
def shell(
    interpreters: dict[str, Path],
    dist_dir: Path,
    offline: list[str],
    pipx_command: list[str],
    pip_folder: Callable[[str], Path],
) -> Shell:
    """pipx set up in a temporary home, with the README's install block run in it."""
    work = pip_folder("documented-install")
    python = python_for(interpreters, PRIMARY_VERSION)
    journey = Journey(
        python=python,
        dist_dir=dist_dir,
        extra_wheels={},
        work=work,
        offline=offline,
        shared_libs=work / "pipx-shared",
        chronicle_home=work / "chronicle-home",
        pipx_command=pipx_command,
    )
    shell = Shell(journey, python)
    shell.replay(install_block(), shell.folder("home"))
    return shell


def test_the_install_puts_every_providers_command_on_path(shell: Shell) -> None:
    exposed = {path.name for path in shell.journey.bin.iterdir()}
    assert exposed >= {"karni", *PROVIDER_COMMANDS}
    for command in sorted(PROVIDER_COMMANDS):
        (result,) = shell.replay([[command, "--help"]], shell.journey.work)
        assert result.stdout.startswith(f"usage: {command} "), result.stdout


def test_the_quickstart_prints_what_the_page_shows(shell: Shell) -> None:
    (block, *_) = fenced_blocks(QUICKSTART.read_text("utf-8"), "console")
    readme_pipx = [argv for argv in install_block() if argv[0] == "pipx"]
    cwd = shell.folder("quickstart")
    for step in console_steps(block):
        for argv in step.argv:
            if argv[0] == "pipx":  # installed above: the quickstart may show no other install
                assert argv in readme_pipx, f"`{step.line}` is not the README's install"
                assert step.output == [], "pipx's own output differs between machines"
            elif argv[0] == "cd":
                cwd = cwd / argv[1]
            else:
                result = shell.run(argv, cwd)
                assert (result.returncode, result.stderr) == (0, ""), step.line
                assert result.stdout.splitlines() == step.output, step.line


def test_the_readmes_try_it_lines_show_the_quickstarts_brief(shell: Shell) -> None:
    (*_, context) = shell.replay(try_it_block(), shell.folder("try-it"))
    (block, *_) = fenced_blocks(QUICKSTART.read_text("utf-8"), "console")
    shown = {step.line: step.output for step in console_steps(block)}
    assert context.stdout.splitlines() == shown[f"karni context --with-history {FILE}"]


def long_history(shell: Shell, project: Path) -> None:
    """Twenty more decision records and a transcript of 36 edits, all about ``FILE``."""
    for number in range(7, 27):
        (project / f"doc/adr/{number:04d}-capacity-rule-{number}.md").write_text(
            f"# {number}. Keep event capacity rule {number} in {FILE}\n\n"
            f"Date: 2026-04-{number - 6:02d}\n\n## Status\n\nAccepted\n\n"
            f"## Decision\n\n{FILE} keeps capacity rule {number}.\n",
            encoding="utf-8",
        )
    lines = []
    for session in range(1, 4):
        for turn in range(1, 13):
            stamp = f"2026-03-0{session}T10:{turn:02d}"
            lines += [
                f'{{"session": "s-{session}", "role": "user", "id": "s{session}-{turn}u", '
                f'"timestamp": "{stamp}:00Z", "text": "Change capacity rule {turn} in {FILE}"}}',
                f'{{"session": "s-{session}", "role": "assistant", "id": "s{session}-{turn}a", '
                f'"timestamp": "{stamp}:30Z", "text": "Changed rule {turn}.", "tools": '
                f'[{{"name": "Edit", "input": {{"file_path": "{FILE}"}}, "output": "ok", '
                f'"files": ["{FILE}"]}}]}}',
            ]
    transcript = shell.journey.work / "transcript.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    steps = [
        ["karni-historian", "ingest", "--from", str(transcript)],
        ["karni-historian", "wrapup", "1"],
    ]
    shell.replay(steps, project)


def test_every_full_brief_command_a_cut_brief_names_works(shell: Shell) -> None:
    shell.replay([["karni", "new", "site", "--example"]], shell.folder("cut"))
    project = shell.journey.work / "cut" / "site"
    long_history(shell, project)
    (context,) = shell.replay([["karni", "context", "--with-history", FILE]], project)
    blocks = context.stdout.split("HISTORY: ")[1:]
    assert len(blocks) == 2, context.stdout
    shown = {block.splitlines()[0]: block for block in blocks}
    # The ADR brief is cut by Karni and names its command; the historian fits its
    # brief into the room it is given, so it is whole and names none: its full
    # brief command (the one `karni-historian` documents) must work all the same.
    full_commands = {
        f"{FILE} (adr)": f"karni-history-adr show {FILE}",
        f"{FILE} (historian)": f"karni-historian brief {FILE}",
    }
    assert set(shown) == set(full_commands), context.stdout
    named = FULL_BRIEF.findall(context.stdout)
    assert named == [full_commands[f"{FILE} (adr)"]], context.stdout
    for heading, line in full_commands.items():
        block = shown[heading]
        (full,) = shell.replay(commands(line), project)
        assert full.stderr == ""
        first_line = block.splitlines()[1]
        assert first_line in full.stdout.splitlines(), (line, first_line)
        assert len(full.stdout) > len(block), f"`{line}` printed less than the brief shown"


def test_include_apps_is_refused_for_a_provider_without_commands(
    shell: Shell, third_party_wheels: dict[str, Path]
) -> None:
    """Why the docs say to inject such a provider without ``--include-apps``."""
    wheel = str(third_party_wheels["acme-history-notes"])
    refused = shell.run(
        ["pipx", "inject", "--include-apps", "karni-cli", wheel], shell.journey.work
    )
    assert refused.returncode == 1
    assert "No apps associated with package" in refused.stdout + refused.stderr
    accepted = shell.run(["pipx", "inject", "karni-cli", wheel], shell.journey.work)
    assert accepted.returncode == 0, accepted.stderr


def test_an_earlier_inject_without_apps_needs_force(shell: Shell) -> None:
    """The docs' advice for users who followed the old install: repeat it with ``--force``."""
    home = shell.journey.work

    def exposed() -> bool:
        return (shell.journey.bin / "karni-historian").exists()

    shell.replay([["pipx", "uninject", "karni-cli", "karni-historian"]], home)
    shell.replay([["pipx", "inject", "karni-cli", "karni-historian"]], home)
    assert not exposed()
    shell.replay([["pipx", "inject", "--include-apps", "karni-cli", "karni-historian"]], home)
    assert not exposed(), "pipx now exposes the app without --force: simplify the docs"
    shell.replay(
        [["pipx", "inject", "--include-apps", "--force", "karni-cli", "karni-historian"]], home
    )
    assert exposed()
