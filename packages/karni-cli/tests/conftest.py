"""Shared fixtures for karni-cli's tests: an isolated environment and the example project.

Every test runs with a temporary ``KARNI_CACHE_DIR`` and ``XDG_CONFIG_HOME``,
no CI variables, and ``KARNI_HISTORY_PROVIDERS`` empty (no provider at all)
unless a test pins the providers it wants, so installed providers never leak
into results.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from karni.agent.common.ci import CI_VARIABLES

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "eventsite"


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("KARNI_CACHE_DIR", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TZ", "UTC")  # history briefs show times; keep snapshots stable
    monkeypatch.delenv("KARNI_AGENT_CONDITIONS", raising=False)
    monkeypatch.delenv("KARNI_PROVIDER_TIMEOUT", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)  # help is 79 columns wide off a terminal
    for name in CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def eventsite(tmp_path: Path) -> Path:
    """A private copy of examples/eventsite (tests may write into it)."""
    target = tmp_path / "eventsite"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", ".karni"))
    return target


def _run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m karni.cli ARGS`` in a real process (the test's environment plus ``env``)."""
    environ = dict(os.environ)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "karni.cli", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


LAUNCHER = REPO / "packages" / "karni-cli" / "scripts" / "karni"
"""The installed ``karni`` command (a wheel script that runs ``console()``)."""

_IMPORT_PROBE = """\
import os, sys
from karni.cli.main import main
_status = main({argv!r})
"""
_CODE_PROBE = """\
import os, sys
{code}
_status = 0
"""
_DUMP_MODULES = """
_fd = os.open({out!r}, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(_fd, " ".join(sorted(sys.modules)).encode())
os.close(_fd)
raise SystemExit(_status)
"""


class ImportProbe:
    """What one command run in a fresh interpreter printed, and which modules it imported."""

    def __init__(self, done: subprocess.CompletedProcess[str], modules: set[str]) -> None:
        self.returncode = done.returncode
        self.stdout = done.stdout
        self.stderr = done.stderr
        self.modules = modules


def _probe_imports(
    cwd: Path,
    argv: list[str] | None = None,
    *,
    code: str | None = None,
    launcher: bool = False,
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
) -> ImportProbe:
    """Run ``main(argv)`` (or Python ``code``) in a new interpreter; what it imported.

    The process's exit status is ``main``'s (``code``: 0 unless it raises).
    With ``launcher``, ``argv`` runs through the installed ``karni`` script
    instead, which ends the process itself: its modules are read from
    ``python -X importtime``, so those loaded at interpreter start are not
    among them. The test's environment plus ``env`` applies; ``stdin`` is fed
    through a pipe, as a harness does.
    """
    import tempfile

    environ = {**os.environ, **(env or {})}
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "modules")
        if launcher:
            command = [sys.executable, "-X", "importtime", str(LAUNCHER), *(argv or [])]
        else:
            script = (
                _IMPORT_PROBE.format(argv=argv) if code is None else _CODE_PROBE.format(code=code)
            )
            command = [sys.executable, "-c", script + _DUMP_MODULES.format(out=out)]
        done = subprocess.run(
            command, cwd=cwd, env=environ, input=stdin, capture_output=True, timeout=60
        )
        result = subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
        )
        if launcher:
            modules = _importtime_modules(result)
        else:  # no list: the probe itself failed, and an empty set would pass any test
            assert os.path.exists(out), f"the import probe did not finish: {result.stderr}"
            with open(out, encoding="utf-8") as dumped:
                modules = set(dumped.read().split())
    return ImportProbe(result, modules)


def _importtime_modules(done: subprocess.CompletedProcess[str]) -> set[str]:
    """The module names of ``-X importtime``'s report, taken out of ``done.stderr``."""
    lines = done.stderr.splitlines(keepends=True)
    report = [line for line in lines if line.startswith("import time:")]
    assert report, f"no import report: {done.stderr}"
    done.stderr = "".join(line for line in lines if not line.startswith("import time:"))
    return {line.rsplit("|", 1)[1].strip() for line in report[1:]}  # [0] is the header


def _make_distribution(
    site: Path,
    distribution: str,
    version: str,
    entry_points: dict[str, dict[str, str]],
    modules: dict[str, str],
) -> Path:
    """Install a fake distribution into ``site``: its modules and a real ``.dist-info``.

    Args:
        site: A folder to put on ``sys.path``/``PYTHONPATH``.
        distribution: The distribution name (``my-history``).
        version: Its version.
        entry_points: Group → {name: value}.
        modules: File name (``my_history.py``) → source.
    """
    site.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (site / name).write_text(textwrap.dedent(source), encoding="utf-8")
    folder = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
    folder.mkdir()
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in points.items()]
        lines.append("")
    (folder / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return site


@pytest.fixture
def site_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A folder on ``sys.path`` and ``PYTHONPATH`` for fake distributions; cleaned up after."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    existing = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{existing}" if existing else str(site))
    before = set(sys.modules)
    yield site
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        if str(getattr(module, "__file__", "") or "").startswith(str(site)):
            del sys.modules[name]


THIRD_PARTY_PROVIDER = '''
    """A third-party history provider for tests: its store is a `.my-history/` folder."""

    import os
    import sys
    from pathlib import Path


    class MyHistoryProvider:
        name = "my-history"

        def detect(self, project_root):
            return (Path(project_root) / ".my-history").is_dir()

        def _read(self, project_root, name):
            path = Path(project_root) / ".my-history" / name
            return path.read_text(encoding="utf-8") if path.is_file() else None

        def context(self, project_root, path):
            print("provider noise on stdout")
            sys.stderr.write("provider noise on stderr\\n")
            os.write(1, b"provider noise on fd 1\\n")
            return self._read(project_root, path.replace("/", "__"))

        def project_context(self, project_root):
            return self._read(project_root, "PROJECT")

        def full_command(self, project_root, path):
            return f"my-history show {path}" if path else "my-history show"
'''


def _install_my_history(site: Path, version: str = "1.2.0") -> None:
    """Register the test provider ``my-history`` from the distribution ``my-history``."""
    _make_distribution(
        site,
        "my-history",
        version,
        {"karni.history_providers": {"my-history": "my_history_provider:MyHistoryProvider"}},
        {"my_history_provider.py": THIRD_PARTY_PROVIDER},
    )


def _record_brief(root: Path, path: str | None, text: str) -> None:
    """Put a brief for ``path`` (None: the project brief) into the project's my-history store."""
    store = root / ".my-history"
    store.mkdir(exist_ok=True)
    name = "PROJECT" if path is None else path.replace("/", "__")
    (store / name).write_text(text, encoding="utf-8")


# Helpers as fixtures: with --import-mode=importlib, test modules cannot import conftest.


@pytest.fixture
def run_cli():
    return _run_cli


@pytest.fixture
def probe_imports():
    """:func:`_probe_imports`: which modules a command imports, in a fresh interpreter."""
    return _probe_imports


@pytest.fixture
def make_distribution():
    return _make_distribution


@pytest.fixture
def my_history(site_dir: Path):
    """The third-party provider ``my-history`` installed from a real dist-info."""
    _install_my_history(site_dir)
    return site_dir


@pytest.fixture
def store_provider(my_history: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``my-history`` installed and the only provider allowed; its store is ``.my-history/``."""
    monkeypatch.setenv("KARNI_HISTORY_PROVIDERS", "my-history")
    return my_history


@pytest.fixture
def record_brief():
    return _record_brief
