"""The built wheels install and work outside the workspace, on every CPython from 3.11 up.

Each interpreter gets a fresh virtualenv (``uv venv``) and the wheels from the
session's dist folder, offline. The runtime distributions install with
``--no-index``: nothing but our wheels and the one third-party runtime
dependency karni-cli declares (``tomlkit``, whose wheel the dist folder holds:
``scripts/dependency_wheels.py``), so a sibling range that the built sibling
does not meet fails here (gotcha G1), and so would any other third-party
dependency that slipped in. The testkit needs pytest and syrupy: they are put
in its venv first, at the workspace lock's versions, from uv's wheel cache
(``uv sync --offline --no-install-workspace``), which the workspace's own
``uv sync`` filled; the testkit and its siblings still come ``--no-index``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from dependency_wheels import RUNTIME_DEPENDENCIES
from karni_it.artifacts import Artifact
from karni_it.environment import clean_env
from karni_it.interpreters import PYTHON_VERSIONS, python_for
from karni_it.workspace import ROOT

STDLIB_ONLY = [
    "karni-core",
    "karni-cli",
    "karni-history-chronicle",
    "karni-history-adr",
    "karni-historian",
]


def _run(command: list[str], *more: str, **kwargs) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("env", clean_env(KARNI_CACHE_DIR=""))
    return subprocess.run([*command, *more], capture_output=True, text=True, check=False, **kwargs)


@pytest.fixture
def venv_with(uv: list[str], dist_dir: Path, offline: list[str], tmp_path: Path):
    """``venv_with(python, *requirements, third_party_of=None)`` → a fresh venv's python.

    The requirements are installed with ``--no-index -f <dist>``: nothing but
    the built wheels. ``third_party_of=NAME`` first puts NAME's third-party
    dependencies in the venv, and nothing else: ``uv sync --package NAME
    --no-install-workspace`` at the lock's versions, offline, from the wheel
    cache that the workspace's own ``uv sync`` filled.
    """

    def make(python: Path, *requirements: str, third_party_of: str | None = None) -> Path:
        venv = tmp_path / "venv"
        if third_party_of:
            flags = ["--frozen", "--offline", "--no-default-groups", "--no-install-workspace"]
            command = [*offline, *uv, "sync", "-q", *flags, "--package", third_party_of]
            env = clean_env(KARNI_CACHE_DIR="", UV_PROJECT_ENVIRONMENT=str(venv))
            made = _run(command, "--python", str(python), cwd=ROOT, env=env)
        else:
            made = _run([*offline, *uv, "venv", "-q", "--python", str(python), str(venv)])
        assert made.returncode == 0, made.stderr
        venv_python = venv / "bin" / "python"
        command = [*offline, *uv, "pip", "install", "--python", str(venv_python), "--no-index"]
        install = _run(command, "-f", str(dist_dir), *requirements)
        assert install.returncode == 0, f"offline install failed:\n{install.stderr}"
        return venv_python

    return make


@pytest.fixture(params=PYTHON_VERSIONS)
def python(request: pytest.FixtureRequest, interpreters: dict[str, Path]) -> Path:
    return python_for(interpreters, request.param)


def test_stdlib_only_wheels_install_with_no_index_and_work(
    python: Path, venv_with, uv: list[str], artifacts: dict[str, Artifact], tmp_path: Path
) -> None:
    venv_python = venv_with(python, *STDLIB_ONLY)
    freeze = _run([*uv, "pip", "freeze", "--python", str(venv_python)])
    expected = [f"{name}=={artifacts[name].version}" for name in STDLIB_ONLY]
    expected += [f"{name}=={metadata.version(name)}" for name in RUNTIME_DEPENDENCIES]
    assert sorted(freeze.stdout.split()) == sorted(expected), (
        "only our own distributions and the declared runtime dependencies"
    )

    imports = _run(
        [
            str(venv_python),
            "-I",
            "-c",
            "import karni.agent.history, karni.cli.main, karni.agent.history_chronicle, "
            "karni_history_adr, karni_historian",
        ],
        cwd=tmp_path,
    )
    assert imports.returncode == 0, imports.stderr

    discovery = _run(
        [
            str(venv_python),
            "-I",
            "-c",
            "import json; from karni.agent.history import discover; d = discover(); "
            "print(json.dumps({'providers': sorted([p.name, p.distribution, p.version] "
            "for p in d.providers), 'failures': [f.message for f in d.failures]}))",
        ],
        cwd=tmp_path,
    )
    assert discovery.returncode == 0, discovery.stderr
    assert json.loads(discovery.stdout) == {
        "providers": [
            ["adr", "karni-history-adr", artifacts["karni-history-adr"].version],
            [
                "gigai-chronicle",
                "karni-history-chronicle",
                artifacts["karni-history-chronicle"].version,
            ],
            ["historian", "karni-historian", artifacts["karni-historian"].version],
        ],
        "failures": [],
    }

    version = _run([str(tmp_path / "venv/bin/karni"), "--version"], cwd=tmp_path)
    assert (version.returncode, version.stdout) == (
        0,
        f"karni {artifacts['karni-cli'].version}\n",
    )
    for script in ("karni-history-adr", "karni-historian"):
        helped = _run([str(tmp_path / "venv/bin" / script), "--help"], cwd=tmp_path)
        assert helped.returncode == 0, f"{script} --help: {helped.stderr}"
        assert script in helped.stdout


@pytest.mark.parametrize(
    "installer",
    [
        "uv",
        pytest.param(
            "pip",
            marks=pytest.mark.xfail(
                reason="pip writes the interpreter's path unquoted into the first line of a "
                "wheel's script (pypa/pip#13389), as docs/quickstart.md says",
                raises=FileNotFoundError,
                strict=True,
            ),
        ),
    ],
)
def test_karni_starts_from_an_environment_whose_path_has_a_space(
    installer: str,
    uv: list[str],
    dist_dir: Path,
    offline: list[str],
    artifacts: dict[str, Artifact],
    tmp_path: Path,
) -> None:
    venv = tmp_path / "a folder" / "venv"
    python = venv / "bin" / "python"
    if installer == "uv":
        made = _run([*offline, *uv, "venv", "-q", "--python", sys.executable, str(venv)])
        install = [*offline, *uv, "pip", "install", "-q", "--python", str(python)]
    else:
        made = _run([*offline, sys.executable, "-m", "venv", str(venv)])
        install = [*offline, str(python), "-m", "pip", "install", "-q"]
    assert made.returncode == 0, made.stderr
    installed = _run(install, "--no-index", "-f", str(dist_dir), "karni-cli")
    assert installed.returncode == 0, installed.stderr
    version = _run([str(venv / "bin" / "karni"), "--version"], cwd=tmp_path)
    assert (version.returncode, version.stdout) == (0, f"karni {artifacts['karni-cli'].version}\n")


TESTKIT_PROBE = """
def test_snapshot_text_is_byte_exact(snapshot_text):
    assert "line one  \\r\\nno final newline" == snapshot_text


def test_fixtures_are_offered(request):
    for name in ("karni_project", "install_provider", "fake_chronicle", "run_karni"):
        request.getfixturevalue(name)
"""


def test_testkit_wheel_is_a_working_pytest_plugin(
    python: Path, venv_with, artifacts: dict[str, Artifact], tmp_path: Path
) -> None:
    wheels = [str(artifacts[n].wheel) for n in [*STDLIB_ONLY, "karni-provider-testkit"]]
    venv_python = venv_with(python, *wheels, third_party_of="karni-provider-testkit")

    project = tmp_path / "author"
    project.mkdir()
    (project / "test_probe.py").write_text(TESTKIT_PROBE, encoding="utf-8")
    pytest_cmd = [str(venv_python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    first = _run([*pytest_cmd, "--snapshot-update"], cwd=project)
    assert first.returncode == 0, first.stdout + first.stderr
    snapshot = project / "__snapshots__/test_probe/test_snapshot_text_is_byte_exact.txt"
    assert snapshot.read_bytes() == b"line one  \r\nno final newline"
    second = _run(pytest_cmd, cwd=project)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "2 passed" in second.stdout


LOAD_OWN_ENTRY_POINTS = """
import importlib, json, sys
from importlib.metadata import distribution
dist = distribution(sys.argv[1])
loaded = []
for file in dist.files:
    if file.name == "__init__.py" and ".dist-info" not in str(file):
        importlib.import_module(str(file.parent).replace("/", "."))
for point in dist.entry_points:
    point.load()
    loaded.append(f"{point.group}:{point.name}")
print(json.dumps(sorted(loaded)))
"""


@pytest.mark.parametrize("name", [*STDLIB_ONLY, "karni-provider-testkit"])
def test_each_distribution_works_installed_alone(
    name: str, venv_with, artifacts: dict[str, Artifact], tmp_path: Path
) -> None:
    """Only the declared Requires-Dist come along, and they are enough to load everything."""
    venv_python = venv_with(Path(sys.executable), str(artifacts[name].wheel), third_party_of=name)
    loaded = _run([str(venv_python), "-I", "-c", LOAD_OWN_ENTRY_POINTS, name], cwd=tmp_path)
    assert loaded.returncode == 0, f"{name} installed alone: {loaded.stderr}"
    expected = sorted(
        f"{group}:{point}"
        for group, points in artifacts[name].entry_points.items()
        for point in points
    )
    assert json.loads(loaded.stdout) == expected
