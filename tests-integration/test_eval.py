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
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LABELS = sorted((ROOT / "eval" / "labels").glob("*.toml"))
BLAME_LABELS = sorted((ROOT / "eval" / "blame").glob("*.toml"))
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


@pytest.mark.parametrize("path", BLAME_LABELS, ids=lambda p: p.stem)
def test_a_blame_label_file_covers_each_file_in_order_and_names_its_skips(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["source"].startswith("data:") and data["harness"] in ("pi", "claude-code")
    assert data["files"] and data["session"]
    for skipped in data.get("skipped", []):
        assert skipped["path"] and skipped["reason"], skipped
    for entry in data["files"]:
        end = 0
        for item in entry["ranges"]:
            first, last = item["lines"]
            assert end < first <= last and item["first"], (entry["path"], item)
            end = last
            if "request" in item:  # who asked, when, in their first words
                assert item["request"] >= 1 and item["asked"], item
                assert datetime.fromisoformat(item["at"].replace("Z", "+00:00")).year >= 2025


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
    # and per case, the real sessions' among them when ../shared/data/real-transcripts/ is here
    assert {"example", "squash-merge"} <= set(blame["cases"])
    if (ROOT.parent / "shared" / "data" / "real-transcripts").is_dir():
        real = blame["cases"]["pi-themes"]
        assert real["ranges"] >= 100 and real["right"] >= 0.9 * real["attributed"]
