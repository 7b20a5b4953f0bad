"""``scripts/eval``: what a file's brief carries, measured on labelled sessions, meets its targets.

The eval (``scripts/brief_eval.py``, ``eval/README.md``) installs each labelled
session where its harness keeps it, runs a plain ``karni-historian ingest`` and
``karni context --with-history FILE`` for each labelled file, and scores the
HISTORY block. The sessions written in this repository always run; the public
transcripts of ``../shared/data/real-transcripts/`` run when that folder is
there (a clean clone alone skips them, and the eval says so). Then it scores
``karni-historian blame`` on labelled line ranges (``scripts/blame_eval.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LABELS = sorted((ROOT / "eval" / "labels").glob("*.toml"))
KINDS = {"request", "decision", "constraint", "failed", "outcome"}


def run_eval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "brief_eval.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.parametrize("path", LABELS, ids=lambda p: p.stem)
def test_a_label_file_labels_at_least_five_items_of_each_file(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["harness"] and data["source"].partition(":")[0] in ("data", "repo")
    for entry in data["files"]:
        assert len(entry["items"]) >= 5, entry["path"]
        for item in entry["items"]:
            assert item["kind"] in KINDS and item["terms"] and item["text"], item


def test_the_eval_meets_its_targets():
    done = run_eval("--check", "--json")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert figures["missed"] == []
    assert figures["recall"] >= 0.6 and figures["bad_share"] <= 0.10
    # The sessions written in this repository always run.
    assert {"codex", "gemini", "aider"} <= set(figures["harnesses"])
    # blame, on labelled ranges of real git repositories (scripts/blame_eval.py)
    blame = figures["blame"]
    assert blame["ranges"] >= 30
    assert blame["precision"] >= 0.9 and blame["coverage"] >= 0.6
