"""The install the README gives, run as written, and every command outputs name.

The README's install block is run exactly as written, in a fresh clone of the
repository, offline: ``scripts/install`` builds the wheels from the clone
(hatchling from uv's cache, ``UV_OFFLINE``) and installs them with pipx, pip
taking ``tomlkit`` from a local folder (``PIP_NO_INDEX``, ``PIP_FIND_LINKS``),
all in a temporary home. Then the quickstart page's console session is
replayed and must print what the page shows, line for line. In a project
whose history is long enough to be cut at the cap, every ``full brief:``
command that ``karni context --with-history`` names is run as a user pastes
it, found on the ``PATH`` that pipx set up. The uv install, a provider added
later, an index holding another project's ``karni-cli``, and the shell
completion line on a fresh home are run as written too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from karni_it.artifacts import Artifact
from karni_it.documented import bash_commands, commands, console_steps, fenced_blocks, section
from karni_it.interpreters import PRIMARY_VERSION, python_for
from karni_it.pipx_scenario import Journey

README = Path(__file__).resolve().parents[1] / "README.md"
QUICKSTART = README.parent / "docs" / "quickstart.md"
FILE = "apps/events/models.py"
FULL_BRIEF = re.compile(r"^… truncated at ~300 tokens; full brief: (.+)$", re.MULTILINE)
PROVIDER_COMMANDS = {"karni-history-adr", "karni-historian"}
"""The commands of the providers the README installs; every one must be on ``PATH``."""
INSTALL = "scripts/install"


def install_blocks() -> list[str]:
    """The ``bash`` blocks of the README's Install section, in page order."""
    return fenced_blocks(section(README.read_text("utf-8"), "Install"), "bash")


def block_with(text: str) -> str:
    """The first block of the Install section holding ``text``."""
    (found, *_) = [block for block in install_blocks() if text in block]
    return found


def install_block() -> list[list[str]]:
    return bash_commands(install_blocks()[0])


def try_it_block() -> list[list[str]]:
    return bash_commands(block_with("karni new "))


def uv_block() -> list[list[str]]:
    return bash_commands(block_with(f"{INSTALL} --uv "))


@dataclass
class Shell:
    """Runs documented commands the way a user's shell would, in a clone of the repository."""

    journey: Journey
    python: Path

    def run(self, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        if argv[0] == INSTALL:
            return self.journey.install(*argv[1:], check=False)
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
            assert Path(found).parent == self.journey.bin, f"{argv[0]} is not the installed one"
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
def make_shell(
    interpreters: dict[str, Path],
    dist_dir: Path,
    offline: list[str],
    pipx_command: list[str],
    pip_folder: Callable[[str], Path],
    template_clone: Path,
    uv_location: tuple[str, str],
) -> Callable[[str], Shell]:
    """``make_shell(NAME)``: a temporary home with a fresh clone of the repository in it."""

    def make(name: str) -> Shell:
        work = pip_folder(name)
        repository = work / "karni-history"
        subprocess.run(["git", "clone", "-q", str(template_clone), str(repository)], check=True)
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
            repository=repository,
            uv=uv_location,
        )
        return Shell(journey, python)

    return make


@pytest.fixture(scope="module")
def shell(make_shell: Callable[[str], Shell]) -> Shell:
    """The README's install block, run as written in a fresh clone."""
    shell = make_shell("documented-install")
    shell.replay(install_block(), shell.folder("home"))
    return shell


def test_the_install_puts_every_providers_command_on_path(shell: Shell) -> None:
    exposed = {path.name for path in shell.journey.bin.iterdir()}
    assert exposed >= {"karni", *PROVIDER_COMMANDS}
    for command in sorted(PROVIDER_COMMANDS):
        (result,) = shell.replay([[command, "--help"]], shell.journey.work)
        assert result.stdout.startswith(f"usage: {command} "), result.stdout


def test_the_install_uses_the_wheels_it_built_from_the_clone(
    shell: Shell, artifacts: dict[str, Artifact]
) -> None:
    wheels = shell.journey.work / "data" / "karni" / "wheels"
    built = {path.name for path in wheels.glob("*.whl")}
    assert built == {artifact.wheel.name for artifact in artifacts.values()}
    constraints = (wheels / "constraints.txt").read_text(encoding="utf-8")
    for name in artifacts:
        assert f"\n{name} @ file://{wheels}/" in constraints, name
    (version,) = shell.replay([["karni", "--version"]], shell.journey.work)
    assert version.stdout == f"karni {artifacts['karni-cli'].version}\n"


def _readme_providers() -> set[str]:
    (install, *_) = [argv for argv in install_block() if argv[0] == INSTALL]
    return set(install[1:])


def test_the_quickstart_prints_what_the_page_shows(shell: Shell) -> None:
    (block, *_) = fenced_blocks(QUICKSTART.read_text("utf-8"), "console")
    cwd = shell.folder("quickstart")
    for step in console_steps(block):
        for argv in step.argv:
            if argv[0] == INSTALL:  # done above: the quickstart may show no other install
                assert set(argv[1:]) <= _readme_providers(), f"`{step.line}`"
                assert step.output == [], "the installers' own output differs between machines"
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


def test_a_provider_injected_without_its_command_gets_it_from_the_install(shell: Shell) -> None:
    """The docs' advice for a provider added by hand without ``--include-apps``."""
    home = shell.journey.work

    def exposed() -> bool:
        return (shell.journey.bin / "karni-historian").exists()

    shell.replay([["pipx", "uninject", "karni-cli", "karni-historian"]], home)
    shell.replay([["pipx", "inject", "karni-cli", "karni-historian"]], home)
    assert not exposed()
    shell.replay([["pipx", "inject", "--include-apps", "karni-cli", "karni-historian"]], home)
    assert not exposed(), "pipx now exposes the app without --force: simplify scripts/install"
    shell.replay([[INSTALL, "karni-historian"]], home)
    assert exposed()
    assert (shell.journey.bin / "karni-history-adr").exists()  # added before, still there


def test_the_completion_line_works_on_a_fresh_home(shell: Shell, tmp_path: Path) -> None:
    (line,) = [
        line for line in block_with("karni completion").splitlines() if "karni completion" in line
    ]
    home = tmp_path / "fresh-home"
    home.mkdir()
    env = {**shell.journey.karni_env, "HOME": str(home)}
    result = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (0, "")
    script = home / ".local/share/bash-completion/completions/karni"
    assert script.is_file()
    check = subprocess.run(
        ["bash", "-c", f"source {script} && complete -p karni"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0 and "karni" in check.stdout, check.stderr


def test_the_uv_install_as_written(make_shell: Callable[[str], Shell]) -> None:
    shell = make_shell("uv-install")
    home = shell.folder("home")
    shell.replay(uv_block(), home)
    assert not (shell.journey.work / "pipx-home").exists()
    exposed = {path.name for path in shell.journey.bin.iterdir()}
    assert exposed >= {"karni", *PROVIDER_COMMANDS}
    (doctor,) = shell.replay([["karni", "doctor", "-q"]], home)
    for name in ("adr", "historian", "gigai-chronicle"):
        assert f"  {name} " in doctor.stdout


def test_a_provider_added_later_keeps_the_one_before(make_shell: Callable[[str], Shell]) -> None:
    for flags in ([], ["--uv"]):
        shell = make_shell("added-later" + "".join(flags))
        home = shell.folder("home")
        shell.replay([[INSTALL, *flags, "karni-history-adr"]], home)
        assert not (shell.journey.bin / "karni-historian").exists()
        shell.replay([[INSTALL, *flags, "karni-historian"]], home)
        for command in ("karni", *PROVIDER_COMMANDS):
            assert (shell.journey.bin / command).exists(), (flags, command)


def _other_project_wheel(folder: Path, name: str, version: str) -> None:
    """A wheel another project published under one of our names, with a `karni` of its own."""
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    files = {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": "[console_scripts]\nkarni = other_karni:main\n"
        if name == "karni-cli"
        else "",
        "other_karni.py": "def main():\n    print('another project')\n",
    }
    with zipfile.ZipFile(folder / f"{stem}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{info}/RECORD", "".join(f"{path},,\n" for path in files))


def test_an_index_with_another_projects_releases_is_never_used(
    make_shell: Callable[[str], Shell], dist_dir: Path, artifacts: dict[str, Artifact]
) -> None:
    """An "index" holding higher versions of our names: both installers still take ours."""
    for flags in ([], ["--uv"]):
        shell = make_shell("other-index" + "".join(flags))
        index = shell.journey.work / "index"
        index.mkdir()
        for wheel in dist_dir.glob("tomlkit-*.whl"):
            shutil.copy2(wheel, index)
        for name, version in [
            ("karni-cli", "9.9.9"),
            ("karni-core", "0.1.999"),
            ("karni-history-chronicle", "0.1.999"),
            ("karni-history-adr", "0.1.999"),
        ]:
            _other_project_wheel(index, name, version)
        shell.journey.dist_dir = index  # PIP_FIND_LINKS and UV_FIND_LINKS: the other "index"
        home = shell.folder("home")
        shell.replay([[INSTALL, *flags, "karni-history-adr"]], home)
        (version,) = shell.replay([["karni", "--version"]], home)
        assert version.stdout == f"karni {artifacts['karni-cli'].version}\n", flags
        (adr,) = shell.replay([["karni-history-adr", "--help"]], home)
        assert adr.stdout.startswith("usage: karni-history-adr "), flags


def test_a_wrong_provider_or_python_is_one_line_before_any_build(shell: Shell) -> None:
    for args, expected in [
        (
            ["karni-history-adrr"],
            "install: `karni-history-adrr` is not one of this repository's providers "
            "(karni-historian, karni-history-adr); add someone else's with "
            "`pipx inject karni-cli NAME`\n",
        ),
        (
            ["karni-history-chronicle"],
            "install: karni-history-chronicle is built in: karni-cli brings it; name only "
            "karni-historian or karni-history-adr\n",
        ),
        (
            ["--python", "3.10"],
            "install: --python names Python 3.10 (3.10); karni needs 3.11 or newer: pass "
            "--python with one, e.g. `scripts/install --python python3.12`\n",
        ),
    ]:
        result = shell.journey.install(*args, check=False)
        assert (result.returncode, result.stderr) == (1, expected), args
        assert "building" not in result.stdout
