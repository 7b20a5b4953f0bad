"""``karni-historian timeline``: the page's data, its escaping, its axis and the command's errors.

The page itself is driven in a browser by ``test_timeline_browser.py``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from conftest import EXAMPLE_ID
from karni_historian.brief.timeline import epoch_ms, timeline_data
from karni_historian.brief.timeline_axis import GAP_SHARE, MAX_BLOCKS, MIN_BLOCK_MS, TimeAxis
from karni_historian.brief.timeline_page import embedded_json, timeline_html
from karni_historian.store import Store
from timeline_project import HOSTILE_ID, PAYLOAD, SHOWN_PROMPT, make_project

DATA_BLOCK = re.compile(
    r'<script type="application/json" id="timeline-data">(.*?)</script>', re.DOTALL
)
MINUTE = 60_000
HOUR = 60 * MINUTE


@pytest.fixture
def project(user_folders, tmp_path, monkeypatch):
    return make_project(tmp_path, monkeypatch)


def page_data(page: str) -> dict:
    (block,) = DATA_BLOCK.findall(page)
    return json.loads(block)


# The data ------------------------------------------------------------------------------


def test_the_data_holds_each_session_with_its_episodes_times_and_files(project):
    with Store.open(project) as store:
        data = timeline_data(store, project="eventsite", author="ann")
    files = data["files"]
    sessions = {session["id"]: session for session in data["sessions"]}
    assert list(sessions) == [HOSTILE_ID, EXAMPLE_ID]  # newest first
    example = sessions[EXAMPLE_ID]
    assert (example["harness"], example["author"]) == ("claude-code", "ann")
    assert example["messages"] == 49
    assert example["t0"] == epoch_ms("2026-09-30T14:02:40Z")
    first, second = example["episodes"]
    assert first["title"] == "Make events soft-deletable instead of hard delete"
    assert (first["start"], second["end"]) == (1, 48)
    assert "Never cascade the delete to tickets" in first["text"]
    assert [files[i] for i in first["edited"]] == [
        "apps/events/models.py",
        "apps/events/viewsets.py",
        "apps/events/admin.py",
    ]
    assert [files[i] for i in first["read"]] == ["doc/adr/0002-hard-delete-events-with-cascade.md"]
    assert example["tail"]["start"] == example["tail"]["end"] == 49
    assert first["t0"] == example["t0"] < first["t1"] <= second["t0"] < second["t1"]
    assert 0 == first["x0"] < first["x1"] <= second["x0"] < second["x1"] <= example["x1"]
    hostile = sessions[HOSTILE_ID]
    assert example["x1"] < hostile["x0"] < hostile["x1"] == 1.0  # later, after a gap
    assert [files[i] for i in hostile["files"]] == ["apps/tickets/views.py"]


def test_the_data_says_what_shaped_each_edited_file(project):
    with Store.open(project) as store:
        data = timeline_data(store, project="eventsite", author="ann")
    files = data["files"]
    shaping = {files[entry["file"]]: entry for entry in data["shaping"]}
    models = shaping["apps/events/models.py"]
    assert [(r["added"], r["removed"]) for r in models["requests"]] == [(0, 8), (10, 2)]
    assert models["requests"][1]["request"].startswith("Make events soft-deletable")
    # The newest request is the user's correction, at its own time.
    assert models["requests"][0]["time"] == epoch_ms("2026-09-30T14:05:07Z")
    kinds = {note["kind"] for note in models["notes"]}
    assert {"failed", "decision", "constraint", "outcome"} <= kinds
    assert any("Never cascade the delete" in n["text"] for n in models["notes"])
    (tickets,) = shaping["apps/tickets/views.py"]["requests"]
    assert (tickets["added"], tickets["removed"], tickets["session"]) == (2, 1, HOSTILE_ID)
    assert "doc/adr/0002-hard-delete-events-with-cascade.md" not in shaping  # only read


def test_transcript_text_is_cleaned_of_escape_sequences_but_keeps_its_markup(project):
    with Store.open(project) as store:
        data = timeline_data(store, project="eventsite", author="ann")
    (hostile,) = [s for s in data["sessions"] if s["id"] == HOSTILE_ID]
    assert hostile["title"] == SHOWN_PROMPT
    assert "\x1b" not in json.dumps(data)
    assert "<script>window.__pwned = 1</script>" in hostile["episodes"][0]["text"]


def test_a_session_without_compartments_is_all_tail(user_folders, tmp_path, monkeypatch):
    root = make_project(tmp_path, monkeypatch, hostile=False)
    with Store.open(root) as store, store.transaction():
        store.connection.execute("DELETE FROM compartments")
    with Store.open(root) as store:
        (session,) = timeline_data(store, project="p", author="ann")["sessions"]
    assert session["episodes"] == []
    assert (session["tail"]["start"], session["tail"]["end"]) == (1, 49)
    assert (session["tail"]["x0"], session["tail"]["x1"]) == (session["x0"], session["x1"])


def test_epoch_ms_reads_the_transcripts_forms():
    assert epoch_ms("2026-09-30T14:02:40Z") == epoch_ms("2026-09-30T16:02:40+02:00")
    assert epoch_ms("2026-09-30T14:02:40.500Z") == epoch_ms("2026-09-30T14:02:40Z") + 500
    assert epoch_ms("yesterday") is None
    assert epoch_ms(None) is None


# Escaping ------------------------------------------------------------------------------


def test_embedded_json_has_no_markup_characters_and_reads_back_unchanged():
    data = {"text": PAYLOAD, "<key>": "a & b > c", "lines": "x\u2028y\u2029z"}
    text = embedded_json(data)
    for character in "<>&\u2028\u2029":
        assert character not in text
    assert "\\u003c/script\\u003e" in text
    assert json.loads(text) == data


def test_the_page_embeds_hostile_text_only_as_inert_json():
    data = {
        "project": "</title><script>alert(1)</script>",
        "files": [PAYLOAD],
        "sessions": [],
        "shaping": [],
        "note": PAYLOAD,
    }
    page = timeline_html(data)
    assert page_data(page) == data
    assert "window.__pwned" not in page.replace(embedded_json(data), "")
    assert "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;: agent" in page
    # Exactly the page's own two scripts and one style, whatever the data holds.
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert page.count("<style>") == 1
    assert "{{" not in page.replace(embedded_json(data), "")


def test_the_policy_names_exactly_the_inline_style_and_script():
    page = timeline_html({"project": "p", "sessions": []})
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)

    def source(text):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        return f"'sha256-{digest}'"

    assert policy.startswith("default-src 'none'; ")
    assert f"style-src {source(style)};" in policy
    assert f"script-src {source(script)};" in policy
    assert "http" not in page.replace("http-equiv", "")  # nothing to fetch
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script


# The axis ------------------------------------------------------------------------------


def test_the_axis_draws_working_time_to_scale_and_squeezes_idle_time():
    day = 24 * HOUR
    axis = TimeAxis([(0, 2 * HOUR), (HOUR, 3 * HOUR), (10 * day, 10 * day + HOUR)])
    (first, second) = axis.blocks
    assert first[:2] == (0, 3 * HOUR)  # overlapping spans merged
    assert second[:2] == (10 * day, 10 * day + HOUR)
    assert first[3] - first[2] == pytest.approx(3 * (second[3] - second[2]), rel=0.01)
    (gap,) = axis.gaps()
    assert gap["x1"] - gap["x0"] <= GAP_SHARE + 1e-9
    assert axis.x(0) == 0 and axis.x(10 * day + HOUR) == 1
    assert axis.x(5 * day) == pytest.approx((gap["x0"] + gap["x1"]) / 2, rel=0.1)
    xs = [axis.x(t) for t in range(0, 10 * day + HOUR, HOUR)]
    assert xs == sorted(xs)
    ticks = axis.ticks()
    assert [t["x"] for t in ticks] == sorted(t["x"] for t in ticks)
    assert any(0 < t["t"] < 3 * HOUR for t in ticks)  # whole steps inside the long block


def test_spans_closer_than_an_hour_share_a_block_and_a_short_one_stays_visible():
    axis = TimeAxis([(0, MINUTE), (40 * MINUTE, 41 * MINUTE), (10 * HOUR, 10 * HOUR + 1)])
    assert len(axis.blocks) == 2
    short = axis.blocks[1]
    assert short[3] - short[2] >= MIN_BLOCK_MS / (41 * MINUTE + MIN_BLOCK_MS) * 0.9
    assert TimeAxis([]).x(5) == 0.0


def test_many_sessions_share_blocks_so_the_axis_does_not_become_a_comb_of_gaps():
    day = 24 * HOUR
    spans = [(n * 8 * HOUR, n * 8 * HOUR + 30 * MINUTE) for n in range(300)]  # 100 days
    axis = TimeAxis(spans)
    assert len(axis.blocks) <= MAX_BLOCKS
    assert TimeAxis(spans[:10]).blocks[1][0] == 8 * HOUR  # a few keep their gaps
    ticks = axis.ticks()
    assert {tick["step"] for tick in ticks} - {0} == {14 * day}  # a fortnightly axis
    assert all(tick["t"] % (14 * day) == 0 for tick in ticks if tick["step"])


# The command ---------------------------------------------------------------------------


def test_the_command_writes_the_page_with_the_file_chosen(project, historian, tmp_path):
    out = tmp_path / "timeline.html"
    (project / "apps").mkdir()
    os.chdir(project / "apps")
    code, stdout, stderr = historian("timeline", "--file", "events/models.py", "--html", str(out))
    assert (code, stderr) == (0, "")
    assert stdout == f"wrote {out}: 2 session(s), 3 episode(s)\n"
    data = page_data(out.read_text(encoding="utf-8"))
    assert data["selected"] == "apps/events/models.py"
    assert data["author"] and data["sessions"][0]["author"] == data["author"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_the_command_replaces_a_page_and_says_when_the_file_has_no_history(
    project, historian, tmp_path
):
    out = tmp_path / "timeline.html"
    out.write_text("old")
    code, stdout, stderr = historian("-q", "timeline", "--html", str(out), "--file", "nothing.py")
    assert (code, stdout) == (0, "")
    assert stderr == "karni-historian: no history recorded for nothing.py\n"
    assert page_data(out.read_text())["selected"] == "nothing.py"


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (
            ["--html", "{tmp}/missing/t.html"],
            "--html {tmp}/missing/t.html: the folder {tmp}/missing does not exist; create it first",
        ),
        (["--html", "{tmp}"], "--html {tmp} is a folder; name the HTML file to write"),
        (
            ["--html", "{tmp}/t.html", "--file", "/etc/passwd"],
            "--file /etc/passwd lies outside the project {root}; name a path inside it",
        ),
        (
            ["--html", "{tmp}/t.html", "--file", "."],
            "--file . is the project root {root}; name a file or folder inside it, "
            "or omit --file for the whole history",
        ),
    ],
)
def test_usage_errors_are_one_line(project, historian, tmp_path, arguments, line):
    values = {"tmp": str(tmp_path), "root": str(project)}
    code, stdout, stderr = historian("timeline", *[a.format(**values) for a in arguments])
    assert (code, stdout) == (2, "")
    assert stderr == f"karni-historian: {line.format(**values)}\n"
    assert not (tmp_path / "t.html").exists()


def test_the_page_is_never_written_through_a_symlink(project, historian, tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    link = tmp_path / "t.html"
    link.symlink_to(target)
    code, stdout, stderr = historian("timeline", "--html", str(link))
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"karni-historian: --html {link} is a symlink; Karni does not write through "
        "symlinks: name another file\n"
    )
    assert target.read_text() == "keep me" and link.is_symlink()


def test_without_a_store_the_command_says_what_to_run(root, historian, tmp_path):
    code, _stdout, stderr = historian("timeline", "--html", str(tmp_path / "t.html"))
    assert code == 1
    assert len(stderr.splitlines()) == 1 and "ingest" in stderr


def test_an_empty_store_gives_an_empty_page(root, historian, tmp_path):
    Store.open(root, create=True).close()
    out = tmp_path / "t.html"
    code, stdout, stderr = historian("timeline", "--html", str(out))
    assert (code, stdout) == (0, f"wrote {out}: 0 session(s), 0 episode(s)\n")
    assert stderr == "karni-historian: the store has no session yet; run `karni-historian ingest`\n"
    assert page_data(out.read_text())["sessions"] == []
    assert Path(out).stat().st_size > 1000
