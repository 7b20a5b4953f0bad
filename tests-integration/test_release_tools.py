"""The pure parts behind scripts/release: versions, ranges and the changelog move."""

from __future__ import annotations

import sys

import pytest
from karni_it.workspace import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from release_tools import changelog
from release_tools.versions import VersionError, admits, bump
from release_tools.workspace import set_version_text


@pytest.mark.parametrize(
    ("version", "part", "expected"),
    [
        ("0.1.0", "patch", "0.1.1"),
        ("0.1.9", "minor", "0.2.0"),
        ("0.9.3", "minor", "0.10.0"),
        ("1.4.2", "major", "2.0.0"),
        ("1.4", "patch", "1.4.1"),
    ],
)
def test_bump(version: str, part: str, expected: str) -> None:
    assert bump(version, part) == expected


@pytest.mark.parametrize(
    ("specifier", "version", "expected"),
    [
        (">=0.1,<0.2", "0.1.0", True),
        (">=0.1,<0.2", "0.1.17", True),
        (">=0.1,<0.2", "0.2.0", False),
        (">=0.1,<0.2", "0.0.9", False),
        (">=1.4,<2", "1.10.0", True),
        ("~=1.4", "1.9", True),
        ("~=1.4", "2.0", False),
        (">=0.1,!=0.1.3,<0.2", "0.1.3", False),
        ("", "3.0.0", True),
    ],
)
def test_admits(specifier: str, version: str, expected: bool) -> None:
    assert admits(specifier, version) is expected


def test_unsupported_versions_are_refused_not_guessed() -> None:
    with pytest.raises(VersionError, match="not a final release version"):
        admits(">=0.1", "0.2.0rc1")
    with pytest.raises(VersionError, match=r"unsupported specifier clause `=~0\.1`"):
        admits("=~0.1", "0.1.0")


def test_set_version_touches_only_the_project_version() -> None:
    text = '[build-system]\nrequires = ["x"]\n\n[project]\nname = "a"\nversion = "0.1.0"\n'
    text += '\n[tool.other]\nversion = "9.9.9"\n'
    assert set_version_text(text, "0.2.0") == text.replace('"0.1.0"', '"0.2.0"')


CHANGELOG = """# Changelog: x

Intro.

## [Unreleased]

### Fixed

- A bug.

## [0.1.0] - 2026-01-02

### Added

- First release.
"""


def test_changelog_moves_unreleased_under_the_version() -> None:
    assert changelog.unreleased_entries(CHANGELOG) == ["- A bug."]
    assert changelog.release(CHANGELOG, "0.1.1", "2026-11-30") == CHANGELOG.replace(
        "## [Unreleased]\n\n### Fixed",
        "## [Unreleased]\n\n## [0.1.1] - 2026-11-30\n\n### Fixed",
    )


def test_changelog_with_only_headings_has_nothing_to_release() -> None:
    empty = CHANGELOG.replace("- A bug.\n", "")
    assert changelog.unreleased_entries(empty) == []
    with pytest.raises(changelog.ChangelogError, match="nothing under"):
        changelog.release(empty, "0.1.1", "2026-11-30")
