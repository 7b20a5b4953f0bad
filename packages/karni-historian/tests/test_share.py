"""Shared history (docs/how-to/team-history.md): its writer, its strict reader, the index.

Sessions are written message by message into a real store, noted as
``ingest`` notes them, then shared into ``.karni/history/`` and read back
into another project's store, as a teammate's clone would.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest
from karni_historian.brief.briefs import file_brief, project_brief
from karni_historian.brief.provider import HistorianProvider
from karni_historian.condense.file_notes import note_sessions
from karni_historian.errors import SharedFileProblem, ShareError
from karni_historian.ingest.shared import refresh_shared
from karni_historian.ingest.shared_format import MAX_FILE_BYTES, parse
from karni_historian.model import Compartment, Fact, TextPart, ToolPart
from karni_historian.share.fit import dumps, fit
from karni_historian.share.write import share_session
from karni_historian.shared_folder import folder_stamp
from karni_historian.store import RunRecord, Store, parts_to_json
from karni_historian.written_ranges import range_hash

SESSION = "5e55100a-0000-4000-8000-000000000001"
TOKEN = "ghp_" + "Q1w" * 12


def project(path):
    path.mkdir(parents=True, exist_ok=True)
    (path / "manage.py").write_text("")
    return path


@pytest.fixture
def roots(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return project(tmp_path / "mine"), project(tmp_path / "theirs")


def write_session(store: Store, session_id: str = SESSION, prompt: str | None = None) -> None:
    """A session that adds hard delete to models.py, commits, then reverts it on request."""
    store.ensure_session(session_id, "claude-code")
    messages = [
        ("user", [prompt or "Switch Event deletion in apps/models.py to a hard delete"]),
        (
            "assistant",
            [
                ToolPart(
                    "Edit",
                    {
                        "file_path": "apps/models.py",
                        "old_string": "soft = True",
                        "new_string": "def delete(self):\n    hard_delete(self)",
                    },
                    "ok",
                    call_id="e1",
                )
            ],
        ),
        (
            "assistant",
            [
                ToolPart(
                    "Bash",
                    {"command": "git commit -am 'hard delete'"},
                    "[main 4a1c9e2] hard delete\n 1 file changed",
                    call_id="b1",
                )
            ],
        ),
        ("user", ["Revert the hard delete in apps/models.py: it destroyed payment history."]),
        (
            "assistant",
            [
                ToolPart(
                    "Edit",
                    {
                        "file_path": "apps/models.py",
                        "old_string": "def delete(self):\n    hard_delete(self)",
                        "new_string": "soft = True",
                    },
                    "ok",
                    call_id="e2",
                )
            ],
        ),
        (
            "assistant",
            ["Reverted apps/models.py to soft delete; hard delete destroyed payment history."],
        ),
    ]
    with store.transaction():
        for ordinal, (role, parts) in enumerate(messages, 1):
            parts = [TextPart(p) if isinstance(p, str) else p for p in parts]
            store.write_message(
                session_id,
                ordinal,
                role,
                parts_to_json(parts),
                timestamp=f"2026-11-20T10:{ordinal:02d}:00Z",
            )
            if any(isinstance(p, ToolPart) and p.name == "Edit" for p in parts):
                store.add_file(session_id, ordinal, "apps/models.py", "edit")
    note_sessions(store)
    compartment = Compartment(
        1,
        6,
        "Hard delete tried and reverted",
        "Asked for hard delete; reverted: it destroyed payment history.",
        importance=70,
        episode_type="implementation,revert",
        p2="Hard delete reverted.",
        p3="Reverted.",
        p4="models.py",
        start_date="2026-11-20",
        end_date="2026-11-20",
    )
    run = RunRecord(session_id, "run", "ok")
    store.publish(
        session_id,
        [compartment],
        [Fact("CONSTRAINTS", "Never hard delete events.")],
        run,
        fact_sources=[(4, "user")],
    )


def shared_into(mine, theirs):
    """My session shared from ``mine`` and its history folder copied to ``theirs`` (a pull)."""
    with Store.open(mine, create=True) as store:
        write_session(store)
        share_session(store, str(mine), SESSION)
    folder = theirs / ".karni" / "history"
    shutil.copytree(mine / ".karni" / "history", folder)
    return folder


def shared_text(root) -> str:
    (path,) = (root / ".karni" / "history").iterdir()
    return path.read_text(encoding="utf-8")


def test_a_session_is_shared_byte_stable_and_read_back_into_another_store(roots):
    mine, theirs = roots
    with Store.open(mine, create=True) as store:
        write_session(store)
        first = share_session(store, str(mine), SESSION)
        again = share_session(store, str(mine), SESSION)
    assert (first.state, again.state) == ("written", "unchanged")
    assert first.text == again.text
    text = shared_text(mine)
    document = parse(text.encode("utf-8"), f"{SESSION}.json")
    assert text == dumps(document) and text.endswith("}\n") and "\r" not in text
    (commit,) = document["commits"]
    assert (commit["hash"], commit["request"]) == ("4a1c9e2", 1)
    first_request, revert = document["files"]["apps/models.py"]["requests"]
    assert (first_request["edits"], revert["edits"]) == ([2], [5])
    request = first_request
    assert request["ranges"][0]["hash"] == range_hash(
        ["def delete(self):", "    hard_delete(self)"]
    )
    assert "[main 4a1c9e2]" not in text  # the tool's output is never shared
    assert document["facts"][0]["origin"] == "user"

    shutil.copytree(mine / ".karni" / "history", theirs / ".karni" / "history")
    with Store.open(theirs, create=True) as store:
        assert refresh_shared(store, str(theirs)) == 1
        assert refresh_shared(store, str(theirs)) == 0  # unchanged: nothing read
        assert note_sessions(store) == 0  # a shared session is never noted again
        brief = file_brief(store, "apps/models.py", room_chars=3000) or ""
        assert "payment history" in brief and "Never hard delete events." in brief
        assert store.connection.execute("SELECT COUNT(*) FROM written_ranges").fetchone()[0] >= 1
        assert store.connection.execute("SELECT hash FROM session_commits").fetchall() == [
            ("4a1c9e2",)
        ]
        # Its episodes are found by search, under its author.
        hits = store.connection.execute(
            "SELECT COUNT(*) FROM search_index WHERE search_index MATCH 'payment'"
        ).fetchone()[0]
        assert hits >= 1
    # Removed from the folder (a `git rm`): gone from the store.
    os.unlink(theirs / ".karni" / "history" / f"{SESSION}.json")
    with Store.open(theirs) as store:
        assert refresh_shared(store, str(theirs)) == 1
        assert file_brief(store, "apps/models.py", room_chars=3000) is None
        assert store.fact_records() == []


def test_ones_own_session_shared_and_local_is_counted_once(roots):
    mine, _ = roots
    with Store.open(mine, create=True) as store:
        write_session(store)
        before = file_brief(store, "apps/models.py", room_chars=None)
        share_session(store, str(mine), SESSION)
        refresh_shared(store, str(mine))
        assert store.shared_index()[f"{SESSION}.json"][3] == "local"
        assert file_brief(store, "apps/models.py", room_chars=None) == before
        assert [s.id for s in store.sessions()] == [SESSION]


def test_the_provider_reads_shared_history_without_a_store_of_its_own(roots):
    mine, theirs = roots
    shared_into(mine, theirs)
    provider = HistorianProvider()
    assert provider.detect(str(theirs))
    brief = provider.context(str(theirs), "apps/models.py", room=2000) or ""
    assert "payment history" in brief
    assert provider.doctor_notes(str(theirs)) is None


def test_private_spans_and_secrets_never_reach_the_file(roots):
    mine, _ = roots
    prompt = (
        f"Switch apps/models.py to hard delete, the deploy token is {TOKEN}. "
        "<private>The customer is Globex Corporation in Springfield</private>"
    )
    with Store.open(mine, create=True) as store:
        write_session(store, prompt=prompt)
        store.set_title(SESSION, prompt, 1)
        share_session(store, str(mine), SESSION)
    text = shared_text(mine)
    assert TOKEN not in text and "[REDACTED]" in text
    assert "Globex" not in text and "[private]" in text


def test_a_secret_left_after_redaction_refuses_the_session(roots):
    mine, _ = roots
    with Store.open(mine, create=True) as store:
        write_session(store)
        with store.transaction():
            store.connection.execute(
                "UPDATE file_requests SET path = ? WHERE session_id = ?",
                (f"keys/{'sk_live_' + 'Ab12' * 5}.py", SESSION),
            )
        with pytest.raises(ShareError, match=f"session {SESSION} refused: .*a Stripe key"):
            share_session(store, str(mine), SESSION)
    assert not (mine / ".karni" / "history").exists()


def test_a_link_in_place_of_the_file_is_never_written_through(roots, tmp_path):
    mine, _ = roots
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    folder = mine / ".karni" / "history"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.json").symlink_to(target)
    with Store.open(mine, create=True) as store:
        write_session(store)
        with pytest.raises(ShareError, match="never a link"):
            share_session(store, str(mine), SESSION)
    assert target.read_text() == "{}"


def test_a_large_session_fits_the_cap_the_oldest_detail_going_first():
    compartments = [
        {
            "sequence": n,
            "start": n * 10,
            "end": n * 10 + 9,
            "title": f"episode {n}",
            "type": None,
            "importance": 50,
            "start_date": None,
            "end_date": None,
            "p1": "x" * 30_000,
            "p2": "y" * 100,
            "p3": "z",
            "p4": "w",
        }
        for n in range(12)
    ]
    document = {
        "format": 1,
        "session": {
            "id": "s",
            "harness": "pi",
            "title": None,
            "started": None,
            "ended": None,
            "messages": 1,
        },
        "compartments": compartments,
        "facts": [],
        "files": {},
    }
    text = fit(document)
    assert len(text.encode("utf-8")) <= MAX_FILE_BYTES
    kept = json.loads(text)["compartments"]
    assert len(kept) == 12 and kept[0]["p1"] is None and kept[-1]["p1"] == "x" * 30_000
    assert all(c["p2"] for c in kept)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\0\1binary", "binary"),
        (b"\xff\xfe", "binary, not UTF-8"),
        (b"[" * 100 + b"]" * 100, "nested deeper"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
        (b'{"format": 2}', "format 2, newer than 1"),
        (b'{"format": "1"}', "no `format`"),
        (b"{nope", "not valid JSON"),
        (
            b'{"format": 1, "session": {"id": "other", "harness": "pi", "title": null, '
            b'"started": null, "ended": null, "messages": 1}, "compartments": [], "facts": [], '
            b'"files": {}}',
            "other than its file name",
        ),
        (
            b'{"format": 1, "session": {"id": "s", "harness": "pi", "title": null, '
            b'"started": null, "ended": null, "messages": 1}, "compartments": [], "facts": [], '
            b'"files": {"/etc/passwd": {}}}',
            "malformed entry in `files`",
        ),
        (
            b'{"format": 1, "session": {"id": "s", "harness": "pi", "title": null, '
            b'"started": null, "ended": null, "messages": "1"}, "compartments": [], "facts": [], '
            b'"files": {}}',
            "no valid `session`",
        ),
        (b" " * (MAX_FILE_BYTES + 1), "larger than 256 KiB"),
    ],
)
def test_a_shared_file_is_read_strictly(data, reason):
    with pytest.raises(SharedFileProblem, match=reason):
        parse(data, "s.json")


def test_doctor_names_each_skipped_file_and_the_rest_is_served(roots):
    mine, theirs = roots
    folder = shared_into(mine, theirs)
    (folder / "newer.json").write_text('{"format": 9}')
    (folder / "leak.json").write_text(f'{{"format": 1, "token": "{TOKEN}"}}')
    (folder / "README.md").write_text("hello")
    (folder / ".gitkeep").write_text("")
    notes = (HistorianProvider().doctor_notes(str(theirs)) or "").splitlines()
    assert notes == [
        ".karni/history/README.md is skipped: it is not a shared history file (`<session>.json`)",
        ".karni/history/leak.json is skipped: it has no valid `session` (id, harness, title, "
        "times, messages)",
        ".karni/history/newer.json is skipped: it has format 9, newer than 1; upgrade "
        "karni-historian to read it",
    ]
    brief = HistorianProvider().context(str(theirs), "apps/models.py", room=2000) or ""
    assert "payment history" in brief


def test_a_valid_file_holding_a_secret_is_skipped(roots):
    mine, theirs = roots
    folder = shared_into(mine, theirs)
    path = folder / f"{SESSION}.json"
    path.write_text(path.read_text().replace("Never hard delete events.", f"use {TOKEN}"))
    notes = HistorianProvider().doctor_notes(str(theirs)) or ""
    assert f"{SESSION}.json is skipped: it holds what looks like a GitHub token" in notes
    assert HistorianProvider().context(str(theirs), "apps/models.py", room=2000) is None


def test_a_shared_session_is_never_condensed_again(roots, capsys, monkeypatch):
    from karni_historian.cli import main

    mine, theirs = roots
    shared_into(mine, theirs)
    monkeypatch.chdir(theirs)
    assert main(["brief", "apps/models.py"]) == 0
    assert "payment history" in capsys.readouterr().out
    assert main(["recomp"]) == 1
    assert "came from the team's shared history" in capsys.readouterr().err
    assert main(["wrapup"]) == 1
    assert "no session of your own (only shared ones) yet" in capsys.readouterr().err
    with Store.open(theirs) as store:
        assert store.compartment_count(SESSION) == 1


def test_ones_own_shared_session_ingested_later_is_given_back_to_the_local_side(roots):
    mine, theirs = roots
    shared_into(mine, theirs)
    with Store.open(theirs, create=True) as store:
        refresh_shared(store, str(theirs))
        assert store.imported_sessions() == {SESSION}
        write_session(store)  # the same session's transcript, ingested on this machine
        assert store.reclaim_ingested() == 1
        assert store.imported_sessions() == set()
        assert store.shared_index()[f"{SESSION}.json"][3] == "local"
        assert store.compartment_count(SESSION) == 0  # the next local run condenses it again
        assert note_sessions(store) == 1  # its notes come from its own messages now
        assert refresh_shared(store, str(theirs)) == 0
        brief = file_brief(store, "apps/models.py", room_chars=3000) or ""
    assert "payment history" in brief


def test_dry_run_prints_exactly_what_would_be_written(roots, capsys, monkeypatch):
    from karni_historian.cli import main

    mine, _ = roots
    with Store.open(mine, create=True) as store:
        write_session(store)
    monkeypatch.chdir(mine)
    assert main(["share", "--dry-run"]) == 0
    out = capsys.readouterr().out
    header, _, text = out.partition("\n")
    assert header == f"# .karni/history/{SESSION}.json"
    assert not (mine / ".karni" / "history").exists()
    assert main(["share"]) == 0
    assert f"shared to .karni/history/{SESSION}.json" in capsys.readouterr().out
    assert shared_text(mine) == text


def test_a_file_name_with_a_newline_is_one_doctor_line(roots):
    _, theirs = roots
    folder = theirs / ".karni" / "history"
    folder.mkdir(parents=True)
    (folder / "evil\nname.json").write_text("{}")
    assert HistorianProvider().doctor_notes(str(theirs)) == (
        ".karni/history/evil?name.json is skipped: it has no `format` version"
    )


def test_a_settled_folder_is_trusted_until_a_file_comes_or_goes(roots):
    mine, theirs = roots
    folder = shared_into(mine, theirs)
    provider = HistorianProvider()
    os.utime(folder, (time.time(), time.time()))
    assert "payment history" in (provider.context(theirs, "apps/models.py") or "")
    with Store.open(theirs) as store:
        assert store.shared_fingerprint("stamp") is None  # changed just now: not trusted yet
    an_hour_ago = time.time() - 3600
    os.utime(folder, (an_hour_ago, an_hour_ago))
    assert "payment history" in (provider.context(theirs, "apps/models.py") or "")
    with Store.open(theirs) as store:  # the brief kept the settled stamp
        assert store.shared_fingerprint("stamp") == folder_stamp(theirs)
    os.unlink(folder / f"{SESSION}.json")  # a `git rm`: the folder's own time moves
    assert "payment history" not in (provider.context(theirs, "apps/models.py") or "")


def test_expand_of_a_shared_session_gives_its_episodes(roots, capsys):
    from karni_historian.cli import main

    mine, theirs = roots
    shared_into(mine, theirs)
    with Store.open(theirs, create=True) as store:
        refresh_shared(store, str(theirs))
    capsys.readouterr()
    assert main(["--project", str(theirs), "expand", "--session", SESSION, "2", "3"]) == 0
    out = capsys.readouterr().out
    assert "raw messages stay on the machine it ran on" in out
    assert "[1-6] Hard delete tried and reverted" in out and "payment history" in out
    assert main(["--project", str(theirs), "expand", "--session", SESSION, "9", "12"]) == 0
    assert "No episode of it covers messages 9-12" in capsys.readouterr().out


def test_a_long_session_is_read_a_batch_at_a_time_and_still_redacted_whole(roots):
    """Private spans and ``.env`` values are gathered in one pass: 30 MB are never held at once."""
    import tracemalloc

    from karni_historian.share.document import session_document

    mine, _ = roots
    secret = "s3cr3t-value-from-the-env-file"
    filler = "x = 1  # unremarkable output line\n" * 300  # about 10 KB a message
    with Store.open(mine, create=True) as store:
        write_session(store, prompt="Tidy apps/models.py <private>Initech payroll rules</private>")
        base = store.message_count(SESSION)
        rows = [
            (base + n, "assistant", parts_to_json([ToolPart("Bash", {"command": "ls"}, filler)]))
            for n in range(1, 3001)
        ]
        env_read = ToolPart("Read", {"file_path": ".env"}, f"API_KEY={secret}\n")
        rows.append((base + 3001, "assistant", parts_to_json([env_read])))
        with store.transaction():
            for ordinal, role, parts in rows:
                store.write_message(SESSION, ordinal, role, parts, timestamp=None)
        store.set_title(SESSION, f"Tidy models; Initech payroll rules; key {secret}", 1)
        tracemalloc.start()
        try:
            document = session_document(store, SESSION)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    title = document["session"]["title"]
    assert "Initech" not in title and secret not in title
    assert peak < 20_000_000, f"peak {peak / 1e6:.1f} MB: the session was held whole"


def test_status_and_sessions_tell_a_shared_session_from_ones_own(roots, capsys, monkeypatch):
    """A teammate's session is not reported as one to condense: no raw messages, no trigger."""
    from karni_historian.cli import main

    mine, theirs = roots
    shared_into(mine, theirs)
    monkeypatch.chdir(theirs)
    assert main(["brief", "apps/models.py"]) == 0  # the brief imports the shared file
    capsys.readouterr()
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no session of your own yet; 1 shared session(s) are read from")
    assert "Raw messages" not in out
    assert main(["status", "--json"]) == 1
    assert "no session of your own yet" in capsys.readouterr().err
    assert main(["status", "--session", SESSION[:8]]) == 0
    out = capsys.readouterr().out
    assert "- Shared from this project's history (.karni/history/)" in out
    assert "Trigger" not in out and "-6 after" not in out
    assert main(["status", "--session", SESSION, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["session"]["shared"] is True and data["messages"]["uncondensed"] == 0
    assert main(["sessions"]) == 0
    assert f"{SESSION}  claude-code  shared  1 compartments" in capsys.readouterr().out

    with Store.open(theirs) as store:  # a session of one's own comes first, the shared counted
        write_session(store, session_id="0wn00000-0000-4000-8000-000000000002")
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Session 0wn00000-0000-4000-8000-000000000002")
    assert SESSION not in out
    assert out.rstrip().endswith("`--session ID` shows one") and "1 shared session(s)" in out
    assert main(["status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["session"]["shared"] is False


def test_a_teammates_fact_names_them_and_a_fact_said_by_both_names_nobody(roots):
    """Facts carry `— by NAME` as notes do, only when the teammate's sessions alone said them."""
    mine, theirs = roots
    shared_into(mine, theirs)
    with Store.open(theirs, create=True) as store:
        refresh_shared(store, str(theirs))
        with store.transaction():
            store.attribute_shared_files([(f"{SESSION}.json", "Alice", "a@example.com", None)])
        brief = file_brief(store, "apps/models.py") or ""
        assert "- Never hard delete events. (constraints) \u2014 by Alice" in brief
        memory = project_brief(store) or ""  # what `render` and the session start hand
        assert "- Never hard delete events. (constraints) \u2014 by Alice" in memory
        write_session(store, session_id="0wn00000-0000-4000-8000-000000000002")
        brief = file_brief(store, "apps/models.py") or ""
    assert "- Never hard delete events. (constraints)\n" in brief + "\n"
    assert "(constraints) \u2014 by" not in brief
