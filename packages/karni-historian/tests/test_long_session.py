"""One request, hundreds of messages of work: episodes follow the work, every file gets a brief."""

import time
import unicodedata

import pytest
from karni.agent.history import HISTORY_TOKEN_CAP, compose
from karni_historian.brief.provider import HistorianProvider
from karni_historian.cli import main
from karni_historian.ingest.claude_code import project_key
from karni_historian.store import Store

SESSION = "4b1c9e2a-7f3d-4c5e-8a6b-2d9e0f1a3b5c"


@pytest.fixture
def phases(long_session):
    return long_session.PHASES


@pytest.fixture
def project(tmp_path, monkeypatch, long_session):
    root = tmp_path / "eventsite"
    root.mkdir()
    (root / "manage.py").write_text("")
    for key, value in {
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "TZ": "UTC",
    }.items():
        monkeypatch.setenv(key, value)
    time.tzset()
    folder = tmp_path / "claude" / "projects" / project_key(str(root))
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text(long_session.long_session(str(root)))
    monkeypatch.chdir(root)
    yield root
    monkeypatch.undo()  # TZ as it was before, then the zone read again
    time.tzset()


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _controls(text):
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")]


def test_wrapup_splits_the_work_into_its_phases(project, phases, capsys):
    code, out, _ = run(capsys, "ingest")
    assert code == 0 and "249 new message(s)" in out
    code, out, err = run(capsys, "wrapup", "1")
    assert code == 0
    assert err == "", err
    assert f"session {SESSION}: 6 new compartment(s)" in out
    assert "messages 1-248 condensed" in out
    with Store.open(project, readonly=True) as store:
        stored = store.compartments(SESSION)
    titles = [s.compartment.title for s in stored]
    # The first phase is named by the request, the others by their todo items.
    assert titles[0].startswith("Make events soft-deletable")
    assert titles[1:] == [title for title, _path, _word in phases[1:]]
    assert all(s.compartment.end - s.compartment.start >= 7 for s in stored)
    assert stored[1].compartment.p4.startswith("2a7c3e92")  # each phase keeps its commit


def test_every_edited_file_has_a_brief_within_the_cap(project, phases, capsys):
    run(capsys, "ingest")
    run(capsys, "wrapup", "1")
    for title, path, _word in phases:
        brief = compose(project, path, providers=[HistorianProvider()])
        assert brief is not None, path
        assert len(brief) <= HISTORY_TOKEN_CAP * 4
        lines = brief.splitlines()
        assert lines[0] == f"HISTORY: {path} (historian)"
        shaped = lines.index("What shaped this file, newest first:")
        assert lines[shaped + 1] == (
            '1. 2026-09-30 14:02 +4 \u22122 \u2014 "Make events soft-deletable: keep deleted '
            'events in the database with a deleted_at timestamp…"'
        )
        # The failing test run of the phase and the edit that fixed it, then its commit.
        assert lines[2].startswith("- `uv run pytest -q` failed: 1 failed, 11 passed; fixed: ")
        assert f"committed {_sha(phases, title)} «{title.lower()}»" in brief
        assert not _controls(brief)


def _sha(phases, title):
    index = [phase[0] for phase in phases].index(title)
    return f"{index + 1:x}a7c3e9{index + 1:x}"


def test_a_file_has_a_brief_before_any_wrapup(project, capsys):
    run(capsys, "ingest")
    code, out, err = run(capsys, "brief", "docs/events.md")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Tried here and failed or undone (do not repeat):",
        "- `uv run pytest -q` failed: 1 failed, 11 passed; fixed: added `soft_two = 3`",
        "Decided:",
        "- adds `soft_one`, `soft_two`",
        "Last outcome:",
        "- committed 6a7c3e96 «document soft deletion in the readme»",
        "- `uv run pytest -q` passed: 12 passed",
        "What shaped this file, newest first:",
        '1. 2026-09-30 14:02 +4 \u22122 \u2014 "Make events soft-deletable: keep deleted events '
        "in the database with a deleted_at timestamp, hide them everywhere, and let staff restore "
        'them. Never hard-delete an event."',
    ]


def test_a_request_with_escapes_reaches_no_brief_raw(tmp_path, monkeypatch, capsys, long_session):
    root = tmp_path / "site"
    root.mkdir()
    (root / "manage.py").write_text("")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "claude" / "projects" / project_key(str(root))
    folder.mkdir(parents=True)
    hostile = "Make events \x1b[2Jsoft-deletable\x07 \u202eplease\u202c"
    text = long_session.long_session(str(root), 1, hostile)
    (folder / f"{SESSION}.jsonl").write_text(text)
    monkeypatch.chdir(root)
    run(capsys, "ingest")
    for args in (("brief", "events/models.py"), ("wrapup", "1"), ("brief", "events/models.py")):
        code, out, err = run(capsys, *args)
        assert code == 0
        assert not _controls(out + err), out
    assert '— "Make events soft-deletable please"' in out
