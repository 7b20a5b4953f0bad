"""The documentation site: every package has its pages, and ``scripts/docs`` is really strict.

``scripts/test`` builds the site with ``scripts/docs``; these tests make sure
that build can fail. MkDocs's ``--quiet`` hides warnings from ``--strict``
too, so a quiet strict build passes with broken links: each case below breaks
one thing in a copy of the site and expects the build to refuse it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from karni_it.environment import clean_env
from karni_it.workspace import DISTRIBUTIONS, ROOT

MKDOCS_YML = ROOT / "mkdocs.yml"
INCLUDED = {"changelog": "CHANGELOG.md", "reference": "README.md"}
"""docs/<folder>/<distribution>.md includes packages/<distribution>/<file>."""


def nav_pages() -> list[str]:
    """Every page the nav of mkdocs.yml names (read by hand: it holds MkDocs-only YAML tags)."""
    text = MKDOCS_YML.read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    return re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.md)$", text, re.MULTILINE)


@pytest.mark.parametrize("folder", sorted(INCLUDED))
@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_each_package_has_its_included_page_in_the_nav(folder: str, name: str) -> None:
    page = ROOT / "docs" / folder / f"{name}.md"
    source = DISTRIBUTIONS[name].relative_to(ROOT) / INCLUDED[folder]
    assert page.read_text(encoding="utf-8") == f'--8<-- "{source.as_posix()}"\n'
    assert f"{folder}/{name}.md" in nav_pages()


def test_every_nav_entry_is_a_page() -> None:
    missing = [page for page in nav_pages() if not (ROOT / "docs" / page).is_file()]
    assert missing == []


def site_copy(tmp_path: Path) -> Path:
    """What ``scripts/docs`` reads, copied: mkdocs.yml, docs/, the included files, the venv."""
    copy = tmp_path / "repo"
    (copy / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "docs", copy / "scripts" / "docs")
    shutil.copy2(MKDOCS_YML, copy / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", copy / "docs")
    for folder in DISTRIBUTIONS.values():
        target = copy / folder.relative_to(ROOT)
        target.mkdir(parents=True)
        for name in INCLUDED.values():
            shutil.copy2(folder / name, target / name)
    shutil.copy2(ROOT / "scripts" / "docs_links.py", copy / "scripts" / "docs_links.py")
    shutil.copy2(ROOT / "scripts" / "bench", copy / "scripts" / "bench")
    (copy / ".venv").symlink_to(ROOT / ".venv")
    return copy


def build(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(copy / "scripts" / "docs"), *args],
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def break_a_link(copy: Path) -> str:
    with (copy / "docs" / "performance.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [the missing page](missing.md).\n")
    return "performance.md' contains a link 'missing.md'"


def break_the_nav(copy: Path) -> str:
    (copy / "docs" / "releasing.md").unlink()
    return "reference to 'releasing.md' is included in the 'nav' configuration, which is not found"


def break_an_include(copy: Path) -> str:
    (copy / DISTRIBUTIONS["karni-core"].relative_to(ROOT) / "CHANGELOG.md").unlink()
    return "karni-core/CHANGELOG.md"


def test_the_site_as_it_is_builds(tmp_path: Path) -> None:
    result = build(site_copy(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr


@pytest.mark.parametrize("breakage", [break_a_link, break_the_nav, break_an_include])
def test_a_broken_site_fails_the_build(tmp_path: Path, breakage) -> None:
    copy = site_copy(tmp_path)
    expected = breakage(copy)
    result = build(copy)
    assert result.returncode != 0
    assert expected in result.stderr


def test_links_written_for_github_work_on_the_site(tmp_path: Path) -> None:
    """A README's link into docs/, a page's link to a README or a script, code left alone."""
    copy = site_copy(tmp_path)
    readme = copy / "packages" / "karni-core" / "README.md"
    readme.write_text(
        readme.read_text(encoding="utf-8")
        + "\nSee [performance](../../docs/performance.md#measuring) and `[x](../y.md)`.\n",
        encoding="utf-8",
    )
    with (copy / "docs" / "performance.md").open("a", encoding="utf-8") as page:
        page.write(
            "\nRead [the core](../packages/karni-core/README.md) and [bench](../scripts/bench).\n"
        )
    result = build(copy, "build", str(tmp_path / "site"))
    assert result.returncode == 0, result.stderr
    reference = (tmp_path / "site/reference/karni-core/index.html").read_text(encoding="utf-8")
    assert 'href="../../performance/#measuring"' in reference
    assert "<code>[x](../y.md)</code>" in reference
    performance = (tmp_path / "site/performance/index.html").read_text(encoding="utf-8")
    assert 'href="../reference/karni-core/"' in performance
    assert (
        'href="https://github.com/karni-dev/karni-history/blob/main/scripts/bench"' in performance
    )
