"""docs/how-to/write-a-provider.md shows real, tested code.

Every fenced block with a ``title="..."`` is the file of that name in
docs/how-to/example_provider/, byte for byte; every example file is shown;
the two untitled Python samples run as the page says; every conformance test
is documented; and the example's own tests pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from karni_provider_testkit.contract import _CONFORMANCE_TESTS

from .conftest import CONTRACT_BASE, EXAMPLE, REPOSITORY

HOW_TO = REPOSITORY / "docs" / "how-to" / "write-a-provider.md"
TITLED_BLOCK = re.compile(r'^```\w+ title="([^"]+)"\n(.*?)^```$', re.MULTILINE | re.DOTALL)
UNTITLED_PYTHON = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _titled_blocks() -> dict[str, str]:
    blocks: dict[str, str] = {}
    for title, body in TITLED_BLOCK.findall(HOW_TO.read_text(encoding="utf-8")):
        assert title not in blocks, f"{title} is shown twice"
        blocks[title] = body
    return blocks


def _example_files() -> list[str]:
    return sorted(
        path.relative_to(EXAMPLE).as_posix()
        for path in EXAMPLE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )


@pytest.mark.parametrize("title", sorted(_titled_blocks()))
def test_each_code_sample_is_the_example_file(title: str) -> None:
    assert _titled_blocks()[title] == (EXAMPLE / title).read_text(encoding="utf-8")


def test_every_example_file_is_shown() -> None:
    assert sorted(_titled_blocks()) == _example_files()


def test_every_conformance_test_is_documented() -> None:
    text = HOW_TO.read_text(encoding="utf-8")
    missing = sorted(name for name in _CONFORMANCE_TESTS if f"`{name}`" not in text)
    assert not missing, f"add these to the table in {HOW_TO.name}: {missing}"


def test_every_conformance_test_says_what_to_fix() -> None:
    from karni_provider_testkit.contract import ProviderContract

    silent = sorted(
        name
        for name in _CONFORMANCE_TESTS
        if "Fix" not in (getattr(ProviderContract, name).__doc__ or "")
    )
    assert not silent, f"give these a docstring with a `Fix:` paragraph: {silent}"


def test_the_examples_own_tests_pass(pytester: pytest.Pytester, example_installed: Path) -> None:
    source = (EXAMPLE / "tests" / "test_karni_provider.py").read_text(encoding="utf-8")
    pytester.makepyfile(test_karni_provider=source)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and "errors" not in outcomes, "\n".join(result.outlines)
    # Only the optional project_context, room and str-root tests (the example has none) may skip.
    skipped = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert outcomes.get("skipped", 0) == 9, "\n".join(result.outlines)
    assert all(
        "project_context" in line
        or "accepts_room" in line
        or "accepts_str_root" in line
        or "parent folders" in line
        for line in skipped
    )
    assert outcomes["passed"] >= 45


def test_the_examples_command_prints_the_full_brief(
    example_installed: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    project = tmp_path / "project"
    (project / ".my-history").mkdir(parents=True)
    (project / ".my-history" / "log.jsonl").write_text(
        '{"path": "a b.py", "date": "2026-01-02", "note": "kept"}\n', encoding="utf-8"
    )
    command = "import sys; from my_history.cli import main; sys.exit(main())"
    completed = subprocess.run(
        [sys.executable, "-c", command, "show", "a b.py"],
        cwd=project,
        env={"PYTHONPATH": str(example_installed), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (completed.returncode, completed.stdout) == (
        0,
        "**Notes (newest first)**\n- 2026-01-02 kept\n",
    )


def _untitled_python() -> tuple[str, str]:
    xfail, compose = UNTITLED_PYTHON.findall(HOW_TO.read_text(encoding="utf-8"))
    return xfail, compose


def test_the_xfail_sample_is_accepted_by_the_guard(
    pytester: pytest.Pytester, example_installed: Path
) -> None:
    xfail, _ = _untitled_python()
    assert xfail.startswith("    @pytest.mark.xfail(reason=")
    pytester.makepyfile(test_sample=CONTRACT_BASE + "\n\nclass TestNetworkStore(Base):\n" + xfail)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "bounded")
    result.assert_outcomes(xpassed=1)


def test_the_compose_sample_prints_what_karni_appends(
    example_installed: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    _, compose = _untitled_python()
    (tmp_path / ".my-history").mkdir()
    (tmp_path / ".my-history" / "log.jsonl").write_text(
        '{"path": "apps/events/models.py", "date": "2026-09-30", "note": "hard delete",'
        ' "reverted": true}\n',
        encoding="utf-8",
    )
    completed = subprocess.run(
        [sys.executable, "-c", compose],
        cwd=tmp_path,
        env={"PYTHONPATH": str(example_installed), "PATH": "", "KARNI_CACHE_DIR": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (completed.returncode, completed.stderr) == (0, "")
    assert completed.stdout == (
        "HISTORY: apps/events/models.py (my-history)\n"
        "**Reverted approaches (do NOT repeat)**\n"
        "- 2026-09-30 hard delete\n"
    )


def test_the_readmes_chronicle_example_passes(pytester: pytest.Pytester) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    (sample,) = re.findall(
        r"^```python\n(def test_brief\(fake_chronicle.*?)^```$", readme, re.M | re.S
    )
    pytester.makepyfile(test_readme=sample)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
