"""``karni-historian timeline`` on real sessions: the page holds every session, episode and edit.

Two public transcripts of ``../shared/data/real-transcripts/`` (a 340-message
Claude Code session and a 900-message Pi one, their licences in its
``SOURCES.md``) are installed for one throwaway project, ingested and
wrapped up by the real commands, and the page is made with the installed
``karni-historian``. Its data is checked against the store, and, when
Chromium is installed, the page is drawn with ``--dump-dom`` (the script
marks the body ready once it has drawn everything). A clean clone without
that folder skips this module; the page is tested on sessions written by the
tests in ``packages/karni-historian/tests/test_timeline*.py``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from karni_it.workspace import ROOT
from session_fixtures import install, isolated_env

DATA = ROOT.parent / "shared" / "data" / "real-transcripts"
TODO_APP = DATA / "d-kimuson-claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
PI_THEMES = DATA / "badlogic-pi-mono" / "large-session.jsonl"
BIN = ROOT / ".venv" / "bin"
CHROMIUM = Path("/usr/bin/chromium")
DATA_BLOCK = re.compile(r'<script type="application/json" id="timeline-data">(.*?)</script>', re.S)

pytestmark = pytest.mark.skipif(
    not (TODO_APP.is_file() and PI_THEMES.is_file()),
    reason="the public transcripts of ../shared/data/real-transcripts/ are not on this machine",
)


def _run(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(BIN / "karni-historian"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The project with both sessions condensed, and its page filtered to ``packages``."""
    work = tmp_path_factory.mktemp("timeline")
    root = work / "project"
    root.mkdir()
    (root / "manage.py").write_text("")
    env = isolated_env(str(work))
    install("claude-code", [TODO_APP], str(root), env)
    install("pi", [PI_THEMES], str(root), env)
    _run(root, env, "-q", "ingest")
    _run(root, env, "-q", "wrapup", "20")
    page = work / "timeline.html"
    _run(root, env, "timeline", "--html", str(page), "--file", "packages")
    (block,) = DATA_BLOCK.findall(page.read_text(encoding="utf-8"))
    return root, page, json.loads(block)


def _query(root: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(root / ".karni" / "local" / "historian.db") as db:
        return db.execute(sql).fetchall()


def test_the_page_holds_every_session_and_episode_of_the_store(made):
    root, _page, data = made
    assert {(s["harness"], s["messages"]) for s in data["sessions"]} == {
        ("claude-code", 340),
        ("pi", 900),
    }
    stored = _query(root, "SELECT session_id, title, start_message FROM compartments")
    shown = [(s["id"], e["title"], e["start"]) for s in data["sessions"] for e in s["episodes"]]
    assert sorted(shown) == sorted(stored)
    for session in data["sessions"]:
        assert 0 <= session["x0"] < session["x1"] <= 1
        # Subagents' messages are stored after the call that started them, so episodes
        # may overlap in time; each stays within its session's span.
        for episode in session["episodes"]:
            assert session["x0"] <= episode["x0"] <= episode["x1"] <= session["x1"]
        ranges = [(e["start"], e["end"]) for e in session["episodes"]]
        assert all(a[1] < b[0] for a, b in itertools.pairwise(ranges))
        tail = session["tail"]
        assert tail is None or tail["start"] == session["episodes"][-1]["end"] + 1


def test_each_edited_file_has_what_shaped_it(made):
    root, _page, data = made
    assert data["selected"] == "packages"
    files = data["files"]
    shaped = {files[entry["file"]]: entry for entry in data["shaping"]}
    (edited,) = _query(
        root,
        "SELECT path FROM message_files WHERE action != 'read' AND path LIKE 'packages/%'"
        " GROUP BY path ORDER BY count(*) DESC LIMIT 1",
    )[0:1]
    requests = shaped[edited[0]]["requests"]
    assert requests and all(r["added"] + r["removed"] > 0 for r in requests)
    assert all(r["request"] or r["message"] == 0 for r in requests)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed (/usr/bin/chromium)")
def test_chromium_draws_the_page(made, tmp_path):
    _root, page, data = made
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "TZ": "UTC"},
    )
    dom = done.stdout
    assert 'data-ready="true"' in dom
    episodes = sum(len(s["episodes"]) for s in data["sessions"])
    assert dom.count('<details class="episode') == episodes
    lanes = re.findall(r'<div class="lane" data-session="[^"]*"( hidden="")?>', dom)
    assert sorted(lanes) == ["", ' hidden=""']  # only the Pi session touched packages/
