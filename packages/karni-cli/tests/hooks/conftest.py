"""Fixtures for the harness-hook tests: a project with a history store, the hook run
as the harness runs it, a stand-in historian, and Node hosts for the generated modules.

The brief comes from the test provider ``my-history`` (see the parent conftest):
``record_brief(project, PATH, TEXT)`` gives PATH history.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from karni.cli.main import main

BIN = os.path.dirname(sys.executable)
"""The folder holding this environment's `karni` and `karni-historian`."""

HOSTS = Path(__file__).parent / "node"
"""The stand-in OpenCode and Pi hosts (``node/<agent>_host.mjs``)."""

BRIEF = "- Hard delete was reverted: it destroyed payment history\n"


@pytest.fixture
def project(tmp_path: Path, store_provider: Path, record_brief, monkeypatch) -> Path:
    """A Karni project (`manage.py`) with a my-history store; `apps/models.py` has history.

    Its folder's name has a space (and so does every path in it): a harness
    runs the hooks there, and Karni quotes what it shows of such a path.
    """
    root = tmp_path / "my shop"
    (root / "apps").mkdir(parents=True)
    (root / "manage.py").write_text("")
    (root / "apps" / "models.py").write_text("class Event: ...\n")
    (root / "apps" / "views.py").write_text("")
    record_brief(root, "apps/models.py", BRIEF)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(tmp_path)
    return root


def _run(argv: list[str], cwd: Path, payload: object, shell: bool = False):
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        argv[0] if shell else argv,
        shell=shell,
        cwd=cwd,
        input=data,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def run_hook():
    """``run_hook(cwd, payload, AGENT, EVENT, *options)``: `karni hook` in a real process.

    ``-P`` keeps ``cwd`` off ``sys.path``, as the installed `karni` script does.
    """

    def run(cwd: Path, payload: object, *arguments: str):
        return _run([sys.executable, "-P", "-m", "karni.cli", "hook", *arguments], cwd, payload)

    return run


@pytest.fixture
def run_command():
    """``run_command(COMMAND, cwd, payload)``: an installed hook command through the shell."""

    def run(command: str, cwd: Path, payload: object):
        return _run([command], cwd, payload, shell=True)

    return run


def wait_for(predicate, what: str, timeout: float = 120.0):
    """Poll ``predicate`` until it is true (a wait, not a timing: the limit only ends a hang)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


class FakeHistorian:
    """A stand-in `karni-historian`: records each call, and holds until released."""

    def __init__(self, folder: Path) -> None:
        self.calls = folder / "calls.jsonl"
        self.release = folder / "release"
        self.program = folder / "karni-historian"
        self.program.write_text(
            f"#!{sys.executable}\n"
            "import json, os, sys, time\n"
            f"calls, release = {str(self.calls)!r}, {str(self.release)!r}\n"
            "def note(what):\n"
            "    with open(calls, 'a') as f:\n"
            "        f.write(json.dumps([what, os.getpid(), sys.argv[1:]]) + '\\n')\n"
            "if sys.argv[1:] == ['mcp', '--check']:  # install asks; no MCP SDK here\n"
            "    sys.exit('karni-historian: the MCP server needs the mcp extra')\n"
            "note('start')\n"
            "deadline = time.time() + 120\n"
            "while not os.path.exists(release) and time.time() < deadline:\n"
            "    time.sleep(0.02)\n"
            "note('end')\n"
        )
        self.program.chmod(0o755)

    def records(self) -> list[list]:
        if not self.calls.exists():
            return []
        return [json.loads(line) for line in self.calls.read_text().splitlines()]

    def ended(self) -> list[list[str]]:
        """The argument lists of the calls that finished, in order."""
        return [arguments for what, _, arguments in self.records() if what == "end"]

    def release_after_start(self, calls: int = 2) -> list[list[str]]:
        """Check the historian started and is still held, release it, and wait for ``calls``.

        Called once the hook (or the host) has returned: a held historian that
        has started shows that the hook did not wait for it.

        Returns:
            The argument lists of the finished calls.
        """
        wait_for(lambda: self.records(), "the historian to start")
        assert self.ended() == []
        self.release.touch()
        wait_for(lambda: len(self.ended()) >= calls, f"{calls} historian calls")
        return self.ended()


@pytest.fixture
def fake_historian(tmp_path: Path, monkeypatch) -> FakeHistorian:
    folder = tmp_path / "fake-historian"
    folder.mkdir()
    historian = FakeHistorian(folder)
    monkeypatch.setenv("KARNI_HISTORIAN", str(historian.program))
    return historian


@pytest.fixture
def waiter():
    return wait_for


@pytest.fixture(scope="session")
def node() -> str:
    """The Node.js program; CI must have it (scripts/lib.sh installs it), elsewhere skip."""
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed; scripts/test installs it (scripts/lib.sh)")
        pytest.skip("node is not installed: the generated JavaScript cannot be loaded")
    return found


@pytest.fixture
def install_hooks(monkeypatch):
    """``install_hooks(project, AGENT, *options)``: `karni hooks install` for OpenCode or Pi.

    Returns the plugin or extension file it wrote.
    """

    def install(project: Path, agent: str, *options: str) -> Path:
        monkeypatch.chdir(project)
        assert main(["hooks", "install", "--agent", agent, *options]) == 0
        folder = ".opencode/plugins" if agent == "opencode" else ".pi/extensions"
        return project / folder / "karni-history.js"

    return install


@pytest.fixture
def node_host(node: str, tmp_path: Path):
    """``node_host(AGENT, GENERATED, SCENARIO)``: run the stand-in host on a generated module.

    Returns what the host printed: one result per step of ``SCENARIO``.
    """

    def run(agent: str, generated: Path, scenario: dict) -> list[dict]:
        # Node reads a `.js` file outside an ESM package as CommonJS; the same bytes as
        # `.mjs` load as the ES module OpenCode (Bun) and Pi (jiti) load.
        module = tmp_path / f"{agent}-module.mjs"
        shutil.copyfile(generated, module)
        result = subprocess.run(
            [node, str(HOSTS / f"{agent}_host.mjs"), str(module), json.dumps(scenario)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    return run
