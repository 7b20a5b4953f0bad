"""The GitHub workflows promise what docs/releasing.md says, checked without GitHub.

No YAML library is a dependency, so the files are read by indentation: two
spaces under ``jobs:`` start a job, and a ``run: |`` block is the lines
indented below it. The tag-splitting step of ``release.yml`` is run for real
with bash against this workspace.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from karni_it.workspace import DISTRIBUTIONS, ROOT

WORKFLOWS = ROOT / ".github/workflows"


def jobs(workflow: str) -> dict[str, str]:
    """Job name → its block of text, for ``workflow`` (a file name in .github/workflows)."""
    text = (WORKFLOWS / workflow).read_text(encoding="utf-8")
    body = text.split("\njobs:\n", 1)[1]
    found: dict[str, str] = {}
    name = None
    for line in body.splitlines():
        header = re.match(r"^  ([\w-]+):\s*$", line)
        if header:
            name = header.group(1)
            found[name] = ""
        elif name and (line.startswith("   ") or not line.strip()):
            found[name] += line + "\n"
        elif line.strip() and not line.startswith(" "):
            break
    return found


def header(workflow: str) -> str:
    """Everything before ``jobs:``: the triggers and the workflow-wide permissions."""
    return (WORKFLOWS / workflow).read_text(encoding="utf-8").split("\njobs:\n", 1)[0]


def run_block(job: str, step_name: str) -> str:
    """The script of the step called ``step_name`` (a ``run: |`` block), dedented."""
    lines = job.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"name: {step_name}")
    run = next(i for i in range(start, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[run + 1]) - len(lines[run + 1].lstrip())
    script = []
    for line in lines[run + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        script.append(line[indent:])
    return "\n".join(script) + "\n"


def matrix_pythons(job: str) -> list[str]:
    match = re.search(r"python: \[([^\]]*)\]", job)
    assert match, "the job has no python matrix"
    return [v.strip().strip('"') for v in match.group(1).split(",")]


def test_ci_lints_tests_and_runs_the_integration_suite_on_311_to_313() -> None:
    ci = jobs("ci.yml")
    assert set(ci) == {"lint", "tests", "integration"}
    lint = ["ruff check .", "ruff format --check .", "scripts/typecheck", "scripts/check-ranges"]
    lint.append("scripts/docs")
    for command in lint:
        assert command in ci["lint"], command
    assert "uv lock --check" in ci["lint"]
    assert "pytest packages" in ci["tests"]
    assert "pytest tests-integration" in ci["integration"]
    for job in ("tests", "integration"):
        assert matrix_pythons(ci[job]) == ["3.11", "3.12", "3.13"], job
    installs_pipx = re.search(r"^\s*- run: .*pipx", ci["integration"], re.MULTILINE)
    assert not installs_pipx, "pipx comes from the dev group, not from a tool install"
    assert "branches: [main]" in header("ci.yml") and "pull_request:" in header("ci.yml")


def test_release_runs_on_package_tags_and_only_publish_may_publish() -> None:
    assert 'tags: ["*-v*"]' in header("release.yml")
    assert "permissions:\n  contents: read" in header("release.yml")
    release = jobs("release.yml")
    assert set(release) == {"build", "smoke", "publish"}
    assert 'uv build --package "${{ steps.tag.outputs.package }}" --no-sources' in release["build"]
    assert "--all-packages" not in release["build"], "a tag builds only its own package"
    assert "actions/checkout" not in release["smoke"], "the smoke test runs outside the checkout"
    assert "needs: [build, smoke]" in release["publish"]
    assert "actions/checkout" not in release["publish"], "publish uploads the tested files"
    for name, job in release.items():
        holds_token = "id-token: write" in job
        assert holds_token == (name == "publish"), name
    assert "pypa/gh-action-pypi-publish@" in release["publish"]
    assert "password" not in release["publish"], "trusted publishing: no stored token"


def split_tag(tag: str, tmp_path: Path) -> tuple[int, dict[str, str], str]:
    """Run release.yml's tag step in this workspace; (exit, outputs, stdout+stderr)."""
    script = run_block(jobs("release.yml")["build"], "Split the tag into package and version")
    output = tmp_path / "github_output"
    output.write_text("")
    result = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "GITHUB_REF_NAME": tag, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    pairs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return result.returncode, pairs, result.stdout + result.stderr


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_the_tag_names_the_package_and_its_version(name: str, tmp_path: Path) -> None:
    import tomllib

    pyproject = DISTRIBUTIONS[name] / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    assert split_tag(f"{name}-v{version}", tmp_path)[:2] == (
        0,
        {"package": name, "version": version},
    )


def test_a_tag_that_does_not_match_the_tree_stops_the_release(tmp_path: Path) -> None:
    code, outputs, log = split_tag("karni-core-v99.0.0", tmp_path)
    assert (code, outputs) == (1, {})
    assert "::error::tag karni-core-v99.0.0 does not match packages/karni-core version" in log
    code, outputs, log = split_tag("karni-nope-v0.1.0", tmp_path)
    assert (code, outputs) == (1, {})
    assert "::error::tag karni-nope-v0.1.0 names no package" in log


def test_docs_publishes_the_strict_build_and_only_deploy_may_write_pages() -> None:
    assert "branches: [main]" in header("docs.yml")
    assert "permissions:\n  contents: read" in header("docs.yml")
    docs = jobs("docs.yml")
    assert set(docs) == {"build", "deploy"}
    assert "uv sync --all-packages --locked" in docs["build"]
    assert re.search(r"^\s*- run: scripts/docs build ", docs["build"], re.MULTILINE)
    assert "actions/upload-pages-artifact@" in docs["build"]
    assert "needs: [build]" in docs["deploy"]
    assert "actions/checkout" not in docs["deploy"], "deploy publishes the built artifact"
    for name, job in docs.items():
        may_write = "id-token: write" in job and "pages: write" in job
        assert may_write == (name == "deploy"), name
