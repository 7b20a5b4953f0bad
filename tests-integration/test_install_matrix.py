"""The built wheels install and work outside the workspace, on every CPython from 3.11 up.

Each interpreter gets a fresh virtualenv (``uv venv``) and the wheels from the
session's dist folder, offline. The stdlib-only distributions install with
``--no-index``: nothing but our wheels, so a sibling range that the built
sibling does not meet fails here (gotcha G1), and so would a third-party
dependency that slipped in. The testkit needs pytest and syrupy, which come
from uv's wheel cache (``--offline``), filled by ``uv sync`` on any machine that
runs this suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from karni_it.artifacts import Artifact
from karni_it.environment import clean_env
from karni_it.interpreters import PYTHON_VERSIONS, python_for

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


def _venv(uv: list[str], python: Path, where: Path, offline: list[str]) -> Path:
    result = _run([*offline, *uv, "venv", "-q", "--python", str(python), str(where)])
    assert result.returncode == 0, result.stderr
    return where / "bin" / "python"


@pytest.fixture(params=PYTHON_VERSIONS)
def python(request: pytest.FixtureRequest, interpreters: dict[str, Path]) -> Path:
    return python_for(interpreters, request.param)


def test_stdlib_only_wheels_install_with_no_index_and_work(
    python: Path,
    uv: list[str],
    dist_dir: Path,
    artifacts: dict[str, Artifact],
    offline: list[str],
    tmp_path: Path,
) -> None:
    venv_python = _venv(uv, python, tmp_path / "venv", offline)
    install = _run(
        [*offline, *uv, "pip", "install", "--python", str(venv_python), "--no-index", "-f"],
        str(dist_dir),
        *STDLIB_ONLY,
    )
    assert install.returncode == 0, install.stderr
    freeze = _run([*uv, "pip", "freeze", "--python", str(venv_python)])
    assert sorted(freeze.stdout.split()) == sorted(
        f"{name}=={artifacts[name].version}" for name in STDLIB_ONLY
    ), "only our own distributions, nothing third-party"

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


TESTKIT_PROBE = """
def test_snapshot_text_is_byte_exact(snapshot_text):
    assert "line one  \\r\\nno final newline" == snapshot_text


def test_fixtures_are_offered(request):
    for name in ("karni_project", "install_provider", "fake_chronicle", "run_karni"):
        request.getfixturevalue(name)
"""


def test_testkit_wheel_is_a_working_pytest_plugin(
    python: Path,
    uv: list[str],
    dist_dir: Path,
    artifacts: dict[str, Artifact],
    offline: list[str],
    tmp_path: Path,
) -> None:
    venv_python = _venv(uv, python, tmp_path / "venv", offline)
    wheels = [str(artifacts[n].wheel) for n in [*STDLIB_ONLY, "karni-provider-testkit"]]
    install = _run(
        [*offline, *uv, "pip", "install", "--python", str(venv_python), "--offline", "-f"],
        str(dist_dir),
        *wheels,
    )
    if install.returncode != 0 and "offline" in install.stderr.lower():
        pytest.skip(f"pytest/syrupy are not in uv's wheel cache (run `uv sync`): {install.stderr}")
    assert install.returncode == 0, install.stderr

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
    name: str,
    uv: list[str],
    dist_dir: Path,
    artifacts: dict[str, Artifact],
    offline: list[str],
    tmp_path: Path,
) -> None:
    """Only the declared Requires-Dist come along, and they are enough to load everything."""
    venv_python = _venv(uv, Path(sys.executable), tmp_path / "venv", offline)
    index = ["--offline"] if name == "karni-provider-testkit" else ["--no-index"]
    install = _run(
        [*offline, *uv, "pip", "install", "--python", str(venv_python), *index, "-f"],
        str(dist_dir),
        str(artifacts[name].wheel),
    )
    if install.returncode != 0 and index == ["--offline"] and "offline" in install.stderr:
        pytest.skip(f"pytest/syrupy are not in uv's wheel cache (run `uv sync`): {install.stderr}")
    assert install.returncode == 0, install.stderr
    loaded = _run([str(venv_python), "-I", "-c", LOAD_OWN_ENTRY_POINTS, name], cwd=tmp_path)
    assert loaded.returncode == 0, f"{name} installed alone: {loaded.stderr}"
    expected = sorted(
        f"{group}:{point}"
        for group, points in artifacts[name].entry_points.items()
        for point in points
    )
    assert json.loads(loaded.stdout) == expected
