"""The integration suite's fixtures: what a release would upload, and where to run it.

Everything here works on *built artifacts*, never on the editable workspace:

- ``dist_dir`` builds every wheel and sdist once per session with
  ``uv build --all-packages --no-sources --offline -o <temp>``: the release
  build (no workspace sources, so sibling ranges are honoured, gotcha G1;
  ``-o`` because uv otherwise writes to the root ``dist/``, gotcha G5;
  ``--offline`` because hatchling comes from uv's cache, which ``uv sync``
  filled). Set ``KARNI_IT_DIST=/abs/dir`` to test a folder of ready-made
  artifacts instead: ``scripts/release`` does this to test a new wheel next to
  released siblings.
- ``interpreters`` finds every CPython from 3.11 up on the machine.
- ``offline`` is the command prefix that cuts the network where allowed.
- ``template_clone`` is a git clone of the repository with the working tree
  committed on top, for the scripts that act on a checkout (release, demo).
- ``pip_folder`` makes a folder for an environment that pip installs ``karni``
  into: under the session's temporary folder, unless its path has a space.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))  # dependency_wheels

from karni_it.artifacts import Artifact, find_artifacts
from karni_it.clones import working_tree_template
from karni_it.environment import clean_env, offline_prefix
from karni_it.interpreters import find_interpreters
from karni_it.pipx_scenario import BROKEN_PROVIDER, NOTES_PROVIDER, third_party_project
from karni_it.workspace import DISTRIBUTIONS, ROOT

MINIMUM_PIPX = (1, 15, 1)
"""The first pipx whose ``--skip-maintenance`` works offline (gotcha G3)."""

BUDGET_SECONDS = 600
"""The issue's limit for the whole integration run on 2 cores (it is part of ``.ci/run``)."""

_spent = [0.0]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "release_script: tests of scripts/release (left out of the release's own run)"
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.fspath.startswith("tests-integration"):
        _spent[0] += report.duration


def pytest_terminal_summary(terminalreporter) -> None:
    """One line with the integration tests' own time against the budget, on every run."""
    if _spent[0]:
        verdict = "within" if _spent[0] <= BUDGET_SECONDS else "OVER"
        terminalreporter.write_line(
            f"tests-integration: {_spent[0]:.0f} s in tests, {verdict} the "
            f"{BUDGET_SECONDS} s budget"
        )


def find_uv() -> list[str]:
    """The uv command: on PATH, else as a module of this interpreter."""
    uv = shutil.which("uv")
    if uv:
        return [uv]
    probe = subprocess.run([sys.executable, "-m", "uv", "--version"], capture_output=True)
    if probe.returncode == 0:
        return [sys.executable, "-m", "uv"]
    pytest.fail("uv not found: put it on PATH (scripts/test installs it when missing)")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def uv() -> list[str]:
    return find_uv()


@pytest.fixture(scope="session")
def uv_location(uv: list[str]) -> tuple[str, str]:
    """The folder holding the uv command and uv's cache: what ``scripts/install`` runs with.

    ``scripts/install`` finds uv on ``PATH`` (``scripts/lib.sh``) and builds
    offline from the cache ``uv sync`` filled.
    """
    if len(uv) != 1:
        pytest.fail("uv must be a command on PATH for scripts/install (scripts/test puts it there)")
    cache = subprocess.run([*uv, "cache", "dir"], capture_output=True, text=True, check=True)
    return str(Path(uv[0]).resolve().parent), cache.stdout.strip()


@pytest.fixture(scope="session")
def dist_dir(tmp_path_factory: pytest.TempPathFactory, uv: list[str]) -> Path:
    """Every wheel and sdist of the workspace, built as a release builds them."""
    given = os.environ.get("KARNI_IT_DIST")
    if given:
        path = Path(given)
        if not path.is_absolute() or not path.is_dir():
            pytest.fail(f"KARNI_IT_DIST={given!r} is not an absolute folder; give one")
        return path
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [*uv, "build", "--all-packages", "--no-sources", "--offline", "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"uv build failed (exit {result.returncode}):\n{result.stderr}")
    from dependency_wheels import repack_all

    repack_all(out)  # third-party runtime dependencies (tomlkit): every install here is offline
    return out


@pytest.fixture(scope="session")
def artifacts(dist_dir: Path) -> dict[str, Artifact]:
    """Distribution name → its built wheel and sdist."""
    return find_artifacts(dist_dir, list(DISTRIBUTIONS))


@pytest.fixture(scope="session")
def pipx_command() -> list[str]:
    """pipx from the workspace's dev group: the interpreter running this suite has it.

    Never a pipx found on PATH, whose version nobody chose. Missing or too old
    is a failure, not a skip: ``scripts/test`` installs the dev group.
    """
    command = [sys.executable, "-m", "pipx"]
    probe = subprocess.run([*command, "--version"], capture_output=True, text=True, check=False)
    version = probe.stdout.strip()
    if probe.returncode != 0:
        pytest.fail(
            f"pipx is not installed for {sys.executable}; run `uv sync --all-packages` "
            f"(pipx is in the dev group), or scripts/test, which does"
        )
    parts = tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
    if parts < MINIMUM_PIPX:
        # Before 1.15.1 --skip-maintenance is a no-op, so an offline pip-backend
        # install fails, and relative find-links break (gotcha G3).
        pytest.fail(f"pipx {version} is older than 1.15.1; run `uv sync --all-packages`")
    return command


@pytest.fixture(scope="session")
def third_party_wheels(
    tmp_path_factory: pytest.TempPathFactory, uv: list[str], offline: list[str]
) -> dict[str, Path]:
    """Wheels of a working and a broken third-party provider, built like any author would.

    Neither has a console script (``pipx inject --include-apps`` refuses them).
    """
    root = tmp_path_factory.mktemp("third-party")
    out = root / "dist"
    wheels = {}
    for name, entry, source in [
        ("acme-history-notes", "notes", NOTES_PROVIDER),
        ("acme-history-broken", "broken", BROKEN_PROVIDER),
    ]:
        project = third_party_project(root / name, name, entry, source)
        result = subprocess.run(
            [*offline, *uv, "build", "--wheel", "--offline", "-q", "-o", str(out), str(project)],
            env=clean_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        (wheel,) = out.glob(f"{name.replace('-', '_')}-*.whl")
        wheels[name] = wheel
    return wheels


@pytest.fixture(scope="session")
def interpreters() -> dict[str, Path]:
    """``"3.N"`` → a working CPython executable, for each supported version found."""
    return find_interpreters()


@pytest.fixture(scope="session")
def offline() -> list[str]:
    """The command prefix that cuts the network (``unshare -rn``) where allowed, else ``[]``."""
    return offline_prefix()


@pytest.fixture(scope="session")
def template_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository as it is on disk, as a git clone; clone it again before changing it."""
    if not (ROOT / ".git").exists():
        pytest.skip("the workspace is not a git checkout")
    return working_tree_template(tmp_path_factory.mktemp("template"))


@pytest.fixture(scope="session")
def pip_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Path]]:
    """``pip_folder(NAME)`` → a new folder for an environment pip installs ``karni`` into.

    pip writes the interpreter's path unquoted into the first line of a
    wheel's script (pypa/pip#13389), so a ``karni`` that pip installed under
    a path with a space does not start: ``docs/quickstart.md`` says so, and
    ``test_install_matrix`` checks it. The folder is under the session's
    temporary folder, or, when ``TMPDIR`` has a space in it, in ``/tmp``
    (removed at the end of the session).
    """
    base = tmp_path_factory.getbasetemp()
    own = None
    if any(character.isspace() for character in str(base)):
        own = base = Path(tempfile.mkdtemp(prefix="karni-it-pip-", dir="/tmp"))

    def make(name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=base))

    yield make
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)
