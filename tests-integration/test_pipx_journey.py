"""Karni as users install it: ``scripts/install``, then a provider added later, offline.

The journey (``karni_it.pipx_scenario``) runs once per interpreter. The
interpreter running pytest has every step's output locked in a byte-exact
snapshot (``__snapshots__/test_pipx_journey/``); every other CPython from 3.11
up must print the very same bytes. Normalised before snapshotting, and only
that: the temporary folder, the interpreter's version and our own
distributions' versions (see ``pipx_scenario.normalize``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from karni_it.artifacts import Artifact
from karni_it.interpreters import PRIMARY_VERSION, PYTHON_VERSIONS, python_for
from karni_it.pipx_scenario import (
    Journey,
    Scenario,
    normalize,
)
from karni_it.workspace import EXAMPLES_DIR, ROOT

PLAIN_STEPS = [
    "version",
    "eventsite/context",
    "eventsite/context-with-history",
    "eventsite/context-with-history-project",
    "eventsite/rules",
    "eventsite/doctor",
    "eventsite/doctor-again",
    "new",
    "new/context",
    "new/context-with-history",
    "new/rules",
    "new/rules-sync-check",
    "chronicle/context-with-history",
    "chronicle/context-with-history-project",
    "chronicle/rules",
    "chronicle/doctor",
]
INJECTED_STEPS = [
    "adr/eventsite/context-with-history",
    "adr/eventsite/context-with-history-project",
    "adr/eventsite/rules",
    "adr/eventsite/doctor",
    "adr/no-store/context",
    "adr/no-store/context-with-history",
    "adr/no-store/rules",
    "adr/chronicle/context-with-history",
    "third-party/eventsite/context",
    "third-party/eventsite/context-with-history",
    "third-party/eventsite/context-with-history-project",
    "third-party/eventsite/rules",
    "third-party/eventsite/doctor",
]
STEPS = [f"before/{s}" for s in PLAIN_STEPS] + INJECTED_STEPS
OTHER_VERSIONS = [v for v in PYTHON_VERSIONS if v != PRIMARY_VERSION]


def step_id(step: str) -> str:
    """Snapshot file names cannot hold ``/``."""
    return step.replace("/", ".")


def test_pipx_is_the_dev_groups_and_new_enough(pipx_command: list[str]) -> None:
    """The journey's pipx is the workspace's, pinned at >= 1.15.1 (gotcha G3)."""
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement

    root = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev = [Requirement(line) for line in root["dependency-groups"]["dev"]]
    (pipx,) = [requirement for requirement in dev if requirement.name == "pipx"]
    assert not pipx.specifier.contains("1.15.0"), "the dev group must require pipx >= 1.15.1"
    assert pipx.specifier.contains(version("pipx"))
    assert pipx_command == [sys.executable, "-m", "pipx"]


@pytest.fixture(scope="session")
def journeys(
    interpreters: dict[str, Path],
    dist_dir: Path,
    artifacts: dict[str, Artifact],
    offline: list[str],
    pipx_command: list[str],
    third_party_wheels: dict[str, Path],
    pip_folder: Callable[[str], Path],
    uv_location: tuple[str, str],
):
    """``version`` → that interpreter's recorded journey, run on first use."""
    if not (EXAMPLES_DIR / "eventsite").is_dir():
        pytest.fail("examples/eventsite is missing: the journey runs in the bundled example")
    shared_libs = pip_folder("pipx-shared")
    done: dict[str, Scenario] = {}
    failed: dict[str, str] = {}

    def get(version: str) -> Scenario:
        python = python_for(interpreters, version)
        if version in failed:
            pytest.fail(failed[version])
        if version not in done:
            work = pip_folder(f"journey-{version}")
            journey = Journey(
                python=python,
                dist_dir=dist_dir,
                extra_wheels=third_party_wheels,
                work=work,
                offline=offline,
                shared_libs=shared_libs,
                chronicle_home=work / "chronicle-home",
                pipx_command=pipx_command,
                uv=uv_location,
                wheels_from=dist_dir,
            )
            from karni_provider_testkit.fake_chronicle import FakeChronicle

            FakeChronicle(work / "chronicle-home").install()
            try:
                scenario = journey.run()
            except AssertionError as error:
                failed[version] = str(error)
                raise
            scenario.python_version = subprocess.run(
                [str(python), "-c", "import platform; print(platform.python_version())"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            done[version] = scenario
        return done[version]

    return get


def normalized(scenario: Scenario, step: str, artifacts: dict[str, Artifact]) -> str:
    versions = {name: artifact.version for name, artifact in artifacts.items()}
    return normalize(scenario.records[step], scenario.work, scenario.python_version, versions)


@pytest.mark.parametrize("step", STEPS, ids=step_id)
def test_output_is_locked(step: str, journeys, artifacts, snapshot_text) -> None:
    scenario = journeys(PRIMARY_VERSION)
    assert normalized(scenario, step, artifacts) == snapshot_text


def test_with_history_without_a_store_is_the_plain_context(journeys) -> None:
    raw = journeys(PRIMARY_VERSION).raw
    assert raw["before/eventsite/context"][0] == 0
    plain = raw["before/eventsite/context"]
    assert raw["before/eventsite/context-with-history"] == plain
    assert raw["before/eventsite/context-with-history-project"] == plain
    assert raw["adr/no-store/context-with-history"] == raw["adr/no-store/context"]
    assert raw["before/new/context-with-history"] == raw["before/new/context"]


def test_a_store_adds_exactly_the_k008_line(journeys) -> None:
    raw = journeys(PRIMARY_VERSION).raw
    k008 = "K008 Before editing a file: karni context --with-history FILE."
    without = raw["before/eventsite/rules"][1].splitlines()
    for step in ["before/chronicle/rules", "adr/eventsite/rules", "third-party/eventsite/rules"]:
        with_store = raw[step][1].splitlines()
        assert sorted(with_store) == sorted([*without, k008]), step
    assert k008 not in without
    assert raw["adr/no-store/rules"] == raw["before/eventsite/rules"]


def test_a_broken_provider_breaks_nothing_else(journeys) -> None:
    raw = journeys(PRIMARY_VERSION).raw
    assert raw["third-party/eventsite/context"] == raw["before/eventsite/context"]
    code, doctor, _ = raw["third-party/eventsite/doctor"]
    assert code == 0
    assert "acme-history-broken is broken on purpose" in doctor
    for listed in ["adr", "gigai-chronicle", "notes", "karni-history-adr", "acme-history-notes"]:
        assert listed in doctor


@pytest.mark.parametrize("step", PLAIN_STEPS, ids=step_id)
def test_uninject_restores_the_output_byte_for_byte(step: str, journeys) -> None:
    raw = journeys(PRIMARY_VERSION).raw
    assert raw[f"after/{step}"] == raw[f"before/{step}"]


@pytest.mark.parametrize("version", OTHER_VERSIONS)
def test_every_interpreter_prints_the_same_bytes(version: str, journeys, artifacts) -> None:
    other = journeys(version)
    primary = journeys(PRIMARY_VERSION)
    for step in [*STEPS, *(f"after/{s}" for s in PLAIN_STEPS)]:
        assert normalized(other, step, artifacts) == normalized(primary, step, artifacts), step


def test_chronicle_runs_only_for_briefs_as_documented(journeys) -> None:
    """Detection starts no process: only the --with-history steps ran ``chronicle``."""
    from karni_provider_testkit.fake_chronicle import FakeChronicle

    scenario = journeys(PRIMARY_VERSION)
    calls = FakeChronicle(scenario.work / "chronicle-home").calls()
    project = str(scenario.work / "eventsite-chronicle")
    file_brief = ["context", "apps/events/models.py", "--json", "--limit", "5"]
    project_brief = ["knowledge", "--type", "decision", "--json"]
    assert [(call.argv, call.cwd) for call in calls] == [
        (file_brief, project),  # before/chronicle/context-with-history
        (project_brief, project),  # before/chronicle/context-with-history-project
        (file_brief, project),  # adr/chronicle/context-with-history
        (file_brief, project),  # after/chronicle/context-with-history
        (project_brief, project),  # after/chronicle/context-with-history-project
    ]
