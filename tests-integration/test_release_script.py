"""``scripts/release`` and ``scripts/check-ranges``, run in a throwaway clone of the repository.

The clone (``karni_it.clones``) is the repository's history plus the current
working tree committed on top, with ``.venv`` linked to the workspace's.
Commits and tags made here never reach the real checkout. The release's own
integration runs are narrowed with ``--suite-args`` to artifact checks, so
this file costs seconds, not a second full suite.
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from karni_it.clones import clone_of, commit_all, git, status
from karni_it.environment import clean_env
from karni_it.workspace import ROOT

pytestmark = pytest.mark.release_script

SUITE_ARGS = "-k 'test_file_names or test_metadata_matches or test_sibling_ranges'"


@pytest.fixture
def clone(template_clone: Path, tmp_path: Path) -> Path:
    return clone_of(template_clone, tmp_path)


def release(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    uv = shutil.which("uv")
    path = os.pathsep.join(filter(None, [os.path.dirname(uv) if uv else "", os.environ["PATH"]]))
    return subprocess.run(
        [str(repo / "scripts/release"), *args],
        cwd=repo,
        env=clean_env(PATH=path, UV_OFFLINE="1"),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def version_of(repo: Path, package: str) -> str:
    import tomllib

    text = (repo / "packages" / package / "pyproject.toml").read_text()
    return tomllib.loads(text)["project"]["version"]


def test_check_ranges_passes_on_the_workspace() -> None:
    result = subprocess.run(
        [str(ROOT / "scripts/check-ranges")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("check-ranges: ok (")


def test_check_ranges_names_a_range_that_excludes_the_sibling(clone: Path) -> None:
    pyproject = clone / "packages/karni-core/pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.2.0"'))
    result = subprocess.run(
        [str(clone / "scripts/check-ranges")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert (
        "check-ranges: karni-cli requires `karni-core>=0.1,<0.2`, which does not admit "
        "karni-core 0.2.0; widen the range in packages/karni-cli/pyproject.toml\n"
    ) in result.stderr


def test_refuses_a_dirty_tree(clone: Path) -> None:
    (clone / "stray.txt").write_text("not committed\n")
    result = release(clone, "karni-history-adr", "minor")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "release: the working tree is not clean (stray.txt); commit or stash first\n"
    )
    assert status(clone) == "?? stray.txt\n"


def test_refuses_a_package_with_nothing_unreleased(clone: Path) -> None:
    changelog = clone / "packages/karni-history-adr/CHANGELOG.md"
    text = changelog.read_text()
    changelog.write_text(text.split("## [Unreleased]")[0] + "## [Unreleased]\n")
    commit_all(clone, "empty changelog")
    result = release(clone, "karni-history-adr", "patch")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "release: karni-history-adr: nothing under `## [Unreleased]` in "
        "packages/karni-history-adr/CHANGELOG.md; record the changes there first\n"
    )
    assert status(clone) == ""


def test_refuses_a_package_unchanged_since_its_tag(clone: Path) -> None:
    git(clone, "tag", "karni-history-adr-v0.1.0")
    result = release(clone, "karni-history-adr", "patch")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "release: karni-history-adr: nothing changed since karni-history-adr-v0.1.0; "
        "there is nothing to release\n"
    )


def test_refuses_a_version_a_sibling_range_would_not_admit(clone: Path) -> None:
    result = release(clone, "karni-core", "minor")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "release: karni-cli requires `karni-core>=0.1,<0.2`, which does not admit "
        "karni-core 0.2.0; widen the range in packages/karni-cli/pyproject.toml; "
        "then release that sibling too\n"
    )
    assert status(clone) == ""
    assert version_of(clone, "karni-core") == "0.1.0"


def test_refuses_an_unknown_package_and_part(clone: Path) -> None:
    unknown = release(clone, "karni-nope", "patch")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("release: unknown package `karni-nope`; choose one of ")
    bad_part = release(clone, "karni-core", "huge")
    assert bad_part.returncode == 2
    assert "invalid choice: 'huge'" in bad_part.stderr


def test_a_failed_integration_run_undoes_the_edits(clone: Path) -> None:
    result = release(clone, "karni-history-adr", "minor", "--suite-args", "-k no_such_test")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines()[-2:] == [
        "release: undid the version and changelog edits",
        "release: the integration suite failed with the newest siblings (exit 5); "
        "fix it, then run the release again",
    ]
    assert status(clone) == ""


def test_releases_against_newest_and_oldest_released_siblings(clone: Path) -> None:
    # karni-core was released twice: 0.1.0, then 0.1.1. karni-cli's range
    # (>=0.1,<0.2) admits both, so its release is tested against each.
    git(clone, "tag", "karni-core-v0.1.0")
    core = clone / "packages/karni-core"
    (core / "pyproject.toml").write_text(
        (core / "pyproject.toml").read_text().replace('version = "0.1.0"', 'version = "0.1.1"')
    )
    commit_all(clone, "Release karni-core 0.1.1")
    git(clone, "tag", "karni-core-v0.1.1")
    cli_changelog = (clone / "packages/karni-cli/CHANGELOG.md").read_text()

    result = release(clone, "karni-cli", "patch", "--suite-args", SUITE_ARGS)

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Prepared karni-cli 0.1.1. Review the diff, then commit and push the tag:\n"
        "  git commit -am 'Release karni-cli 0.1.1'\n"
        "  git tag karni-cli-v0.1.1\n"
        "  git push origin HEAD karni-cli-v0.1.1\n"
    )
    log = result.stderr
    assert "release: karni-cli 0.1.0 → 0.1.1\n" in log
    assert "release: building karni-core 0.1.1 from tag karni-core-v0.1.1\n" in log
    assert "release: building karni-core 0.1.0 from tag karni-core-v0.1.0\n" in log
    assert "release: building karni-history-chronicle 0.1.0 from the tree (never released)\n" in log
    newest = "karni_cli-0.1.1-py3-none-any.whl, karni_core-0.1.1-py3-none-any.whl"
    oldest = "karni_cli-0.1.1-py3-none-any.whl, karni_core-0.1.0-py3-none-any.whl"
    assert f"release: integration suite (newest): {newest}, " in log
    assert f"release: integration suite (oldest): {oldest}, " in log
    assert log.count(" passed") == 2 and " failed" not in log

    assert version_of(clone, "karni-cli") == "0.1.1"
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    head, _, body = cli_changelog.partition("## [Unreleased]\n")
    assert (clone / "packages/karni-cli/CHANGELOG.md").read_text() == (
        f"{head}## [Unreleased]\n\n## [0.1.1] - {today}\n\n{body.strip()}\n"
    )
    assert sorted(status(clone).split("\n")) == [
        "",
        " M packages/karni-cli/CHANGELOG.md",
        " M packages/karni-cli/pyproject.toml",
    ]
