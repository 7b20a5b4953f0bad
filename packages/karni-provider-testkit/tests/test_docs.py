"""docs/how-to/write-a-provider.md shows real, tested code.

Every fenced block with a ``title="..."`` is the file of that name in
docs/how-to/example_provider/, byte for byte; every example file is shown;
every conformance test is documented; and the example's own tests pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from karni_provider_testkit.contract import _CONFORMANCE_TESTS

from .conftest import EXAMPLE, REPOSITORY

HOW_TO = REPOSITORY / "docs" / "how-to" / "write-a-provider.md"
TITLED_BLOCK = re.compile(r'^```\w+ title="([^"]+)"\n(.*?)^```$', re.MULTILINE | re.DOTALL)


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


def test_the_examples_own_tests_pass(pytester: pytest.Pytester, example_installed: Path) -> None:
    source = (EXAMPLE / "tests" / "test_karni_provider.py").read_text(encoding="utf-8")
    pytester.makepyfile(test_karni_provider=source)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and "errors" not in outcomes, "\n".join(result.outlines)
    # Only the optional project_context tests (the example has none) and the
    # store_markers test (it declares no markers) may skip.
    assert outcomes.get("skipped", 0) == 4, "\n".join(result.outlines)
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
