"""The contract's example payloads through the real `karni context --with-history`.

Each runs the CLI as a subprocess (``python -m karni.cli``) in a Karni project
whose store is the contract's example, with only this provider enabled and the
Chronicle double first on PATH, and snapshots stdout byte for byte.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from karni_provider_testkit import isolated_environment


@pytest.fixture
def project(karni_project, fake_chronicle):
    fake_chronicle.example_store(karni_project)
    return karni_project


@pytest.fixture
def karni(project, tmp_path_factory):
    home = tmp_path_factory.mktemp("karni-home")
    env = isolated_environment(home, {"KARNI_HISTORY_PROVIDERS": "gigai-chronicle"})

    def run(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "karni.cli", "context", *args],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )
        assert (result.returncode, result.stderr) == (0, "")
        return result.stdout

    return run


@pytest.mark.parametrize(
    ("path", "heading"),
    [
        ("src/session/store.ts", "## Why this file looks the way it does (Project Memory)"),
        ("src/api/client.py", "## Decisions & TODOs from these sessions"),
    ],
    ids=["project-memory", "knowledge-fallback"],
)
def test_a_pack_is_appended_to_the_plain_inventory(
    karni, fake_chronicle, snapshot_text, path, heading
):
    plain = karni()
    output = karni("--with-history", path)
    assert output == snapshot_text
    assert output.startswith(plain + f"HISTORY: {path} (gigai-chronicle)\n{heading}\n")
    assert [call.argv for call in fake_chronicle.calls()] == [
        ["context", path, "--json", "--limit", "5"]
    ]


def test_the_empty_pack_is_the_plain_inventory_byte_for_byte(karni, fake_chronicle, snapshot_text):
    plain = karni()
    output = karni("--with-history", "src/session/cache.ts")
    assert output == plain
    assert output == snapshot_text
    assert [call.argv for call in fake_chronicle.calls()] == [
        ["context", "src/session/cache.ts", "--json", "--limit", "5"]
    ]


def test_the_project_brief(karni, fake_chronicle, snapshot_text):
    plain = karni()
    output = karni("--with-history")
    assert output == snapshot_text
    assert output.startswith(plain + "HISTORY: project (gigai-chronicle)\n")
    assert [call.argv for call in fake_chronicle.calls()] == [
        ["knowledge", "--type", "decision", "--json"]
    ]
