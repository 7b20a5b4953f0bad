"""Files' notes in the store and in the brief: noted at ingest, read again incrementally, capped."""

from __future__ import annotations

import pytest
from karni_historian.brief.briefs import file_brief
from karni_historian.condense import file_notes
from karni_historian.condense.file_notes import note_sessions
from karni_historian.model import Compartment, TextPart, ToolPart
from karni_historian.store import RunRecord, Store, parts_to_json


@pytest.fixture
def root(tmp_path, monkeypatch):
    (tmp_path / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path


class Session:
    """Writes one session's messages to the store, numbered as ingest numbers them."""

    def __init__(self, store: Store, session_id: str, day: str = "2026-03-02") -> None:
        self.store, self.id, self.day = store, session_id, day
        self.ordinal = store.message_count(session_id)
        store.ensure_session(session_id, "claude-code")

    def add(self, role: str, *parts) -> None:
        self.ordinal += 1
        parts = [TextPart(p) if isinstance(p, str) else p for p in parts]
        stamp = f"{self.day}T10:{self.ordinal:02d}:00Z"
        with self.store.transaction():
            self.store.write_message(
                self.id, self.ordinal, role, parts_to_json(parts), timestamp=stamp
            )

    def ask(self, text: str) -> None:
        self.add("user", text)

    def edit(self, path: str, old: str, new: str) -> None:
        data = {"file_path": path, "old_string": old, "new_string": new}
        self.add("assistant", ToolPart("Edit", data, "ok", call_id=f"c{self.ordinal}"))
        with self.store.transaction():
            self.store.add_file(self.id, self.ordinal, path, "edit")

    def run(self, command: str, output: str, failed: bool = False) -> None:
        self.add(
            "assistant",
            ToolPart(
                "Bash", {"command": command}, output, call_id=f"r{self.ordinal}", is_error=failed
            ),
        )


def brief(store: Store, path: str, room: int | None = 1200) -> str:
    return file_brief(store, path, room_chars=room) or ""


def test_ingest_notes_a_session_and_the_brief_shows_what_matters_first(root):
    with Store.open(root, create=True) as store:
        s = Session(store, "s1")
        s.ask("add a cache to cart.py. Never cache prices across currencies.")
        s.edit("cart.py", "def total(items):", "def total(items, cache=CACHE):")
        s.run(
            "pytest -q",
            "FAILED test_cart.py::test_eur - KeyError: 'EUR'\n1 failed, 3 passed",
            failed=True,
        )
        s.edit("cart.py", "cache=CACHE", "cache=None")
        s.run("pytest -q", "4 passed")
        s.add("assistant", "`total()` now takes an optional `cache`, keyed by currency.")
        assert note_sessions(store) == 1
        text = brief(store, "cart.py")
    lines = text.splitlines()
    assert lines[0] == "Tried here and failed or undone (do not repeat):"
    assert lines[1].startswith(
        "- `pytest -q` failed: 1 failed, 3 passed; FAILED test_cart.py::test_eur"
    )
    assert "- `total()` now takes an optional `cache`, keyed by currency." in lines
    # The rule is in the request the brief quotes: it is not said twice.
    assert "Never cache prices across currencies" not in "\n".join(lines[:-2])
    assert "- `pytest -q` passed: 4 passed" in lines
    assert lines[-1].startswith('1. 2026-03-02 10:01 +2 \u22122 \u2014 "add a cache to cart.py.')


def test_a_session_is_read_again_from_its_last_two_requests(root):
    with Store.open(root, create=True) as store:
        s = Session(store, "s1")
        for n in range(1, 4):
            s.ask(f"step {n}: change settings number {n}")
            s.edit("settings.py", f"A{n} = 0", f"A{n}_LIMIT = {n}")
        note_sessions(store)
        count, version, resume = store.noted_state("s1")
        assert (count, version) == (6, file_notes.EXTRACTION_VERSION)
        assert resume == 3  # the second to last request
        s.ask("undo step 1, it broke the import")
        s.edit("settings.py", "A1_LIMIT = 1", "A1 = 0")  # writes back the first edit
        assert note_sessions(store) == 1  # the session grew
        assert note_sessions(store) == 0  # nothing new: nothing read
        notes = store.file_note_rows("settings.py")
        rows = store.file_request_rows("settings.py")
    assert len(rows) == 4  # the requests before the resume point were kept as they were
    # The undo of an edit read in an earlier reading is known by its digest, and
    # named by what it undid, not by the step just before the user's words.
    rejected = [row[4] for row in notes if row[3] == "rejected"]
    assert rejected == [
        "undone on request: adds `A1_LIMIT` — user: «undo step 1, it broke the import»"
    ]


def test_a_newer_extraction_reads_every_session_again(root, monkeypatch):
    with Store.open(root, create=True) as store:
        s = Session(store, "s1")
        s.ask("rename the helper")
        s.edit("util.py", "def old_name():", "def new_name():")
        note_sessions(store)
        monkeypatch.setattr(file_notes, "EXTRACTION_VERSION", file_notes.EXTRACTION_VERSION + 1)
        assert store.sessions_to_note(file_notes.EXTRACTION_VERSION) == ["s1"]
        assert note_sessions(store) == 1
        assert store.noted_state("s1")[1] == file_notes.EXTRACTION_VERSION


def test_notes_of_several_sessions_are_dated_and_said_once(root):
    with Store.open(root, create=True) as store:
        for session, day in (("old", "2026-03-01"), ("new", "2026-03-05")):
            s = Session(store, session, day)
            s.ask("keep the API stable. Never rename public functions.")
            s.edit("api.py", "def get():", "def get(limit=10):")
        note_sessions(store)
        text = brief(store, "api.py")
    # The same request in two sessions is listed once, the newest.
    assert text.count("Never rename public functions") == 1
    assert '1. 2026-03-05 10:01 +1 \u22121 \u2014 "keep the API stable.' in text


def test_a_brief_fits_its_room_and_keeps_the_newest_request(root):
    with Store.open(root, create=True) as store:
        s = Session(store, "s1")
        for n in range(12):
            s.ask(f"request {n}: never break the widget number {n} in any case at all")
            s.edit("widget.py", f"w{n} = 0", f"widget_{n}_size = {n}")
            s.add("assistant", f"`widget_{n}_size` now defaults to {n} so the layout holds.")
        note_sessions(store)
        for room in (200, 600, 1200):
            text = brief(store, "widget.py", room)
            assert len(text) <= room
            assert "What shaped this file, newest first:\n1. " in text
            assert "request 11" in text


def test_a_store_older_than_the_notes_still_briefs(root):
    with Store.open(root, create=True) as store:
        s = Session(store, "s1")
        s.ask("rename total")
        s.edit("cart.py", "def total():", "def subtotal():")
        store.connection.execute("DROP TABLE file_notes")
        store.connection.execute("DROP TABLE file_requests")
        store.connection.execute("DROP TABLE noted_sessions")
        store.connection.execute("PRAGMA user_version = 6")
    with Store.open(root, readonly=True) as store:
        assert '"rename total"' in brief(store, "cart.py")


# --- a long session, read in two passes ---------------------------------------------------------


def _long_session(store: Store) -> Session:
    """A session longer than the notes' cap on one file, with what each kind of note reads."""
    from karni_historian.condense.file_notes.extract import NOTED_REQUESTS

    s = Session(store, "long")
    s.add("assistant", "Resuming the migration of the flow module to stages.")
    s.edit("flow.py", "OLD = 1", "NEW = 1")
    s.ask("continue")
    for n in range(NOTED_REQUESTS + 6):
        s.ask(f"rename step_{n} in flow.py and keep the API stable, never touch api.py")
        s.edit("flow.py", f"step_{n} = 0", f"stage_{n} = 0")
        s.add("assistant", f"`stage_{n}` now replaces `step_{n}` in flow.py.")
        if n % 5 == 2:
            s.run("pytest -q", "FAILED test_flow.py::test_stage - NameError\n1 failed", failed=True)
            s.ask("no, keep the old name for now")
            s.edit("flow.py", f"stage_{n} = 0", f"step_{n} = 0")  # undoes the edit above
        s.edit("notes.md", "", f"step {n} done\n")
        s.run("pytest -q", "5 passed")
    s.ask("undo the rename of step_1, it broke the import")
    s.edit("flow.py", "stage_1 = 0", "step_1 = 0")  # undoes an edit of an early request
    return s


def test_ingest_reads_a_long_session_in_two_passes_as_it_would_in_memory(root):
    from karni_historian.condense.file_notes.extract import file_notes
    from karni_historian.condense.file_notes.session import read_requests
    from karni_historian.condense.window import stream_messages

    with Store.open(root, create=True) as store:
        _long_session(store)
        assert note_sessions(store) == 1
        found = file_notes(read_requests(stream_messages(store, "long", 1)))
        rows = store.connection.execute(
            "SELECT path, request, ordinal, kind, text, weight FROM file_notes"
            " ORDER BY 1, 2, 3, 4, 5"
        ).fetchall()
        shaped = store.connection.execute(
            "SELECT path, request, timestamp, text, added, removed FROM file_requests ORDER BY 1, 2"
        ).fetchall()
        digests = store.connection.execute(
            "SELECT ordinal, path, forward, inverse FROM file_edits ORDER BY 1, 2, 3"
        ).fetchall()
    assert rows == sorted(
        {(n.path, n.request, n.ordinal, n.kind, n.text, n.weight) for n in found.notes}
    )
    assert shaped == sorted(tuple(r) for r in found.requests)
    assert digests == sorted(set(found.digests))
    texts = [row[4] for row in rows]
    assert (
        "undone on request: adds `stage_1`; removes `step_1` — user: «undo the rename of step_1,"
        " it broke the import»" in texts
    )
    assert any(
        t.startswith("`pytest -q` failed: 1 failed; FAILED test_flow.py::test_stage") for t in texts
    )
    # The session began with work resumed: its first request is what the agent said it resumed.
    assert ("flow.py", 0) in {(row[0], row[1]) for row in shaped}
    assert shaped[0][3] == "Resuming the migration of the flow module to stages."


def test_only_the_requests_worth_noting_are_read_whole(root, monkeypatch):
    with Store.open(root, create=True) as store:
        _long_session(store)
        read: list[int] = []
        batch = Store.message_batch

        def recorded(self, session_id, start, limit, **kwargs):
            found = batch(self, session_id, start, limit, **kwargs)
            read.extend(message.ordinal for message in found)
            return found

        monkeypatch.setattr(Store, "message_batch", recorded)
        note_sessions(store)
        noted_from = store.connection.execute(
            "SELECT min(request) FROM file_notes WHERE path = 'flow.py'"
        ).fetchone()[0]
        asked_step_1 = store.connection.execute(
            "SELECT request FROM file_requests WHERE text LIKE 'rename step\\_1 %' ESCAPE '\\'"
        ).fetchone()[0]
        count = store.message_count("long")
    # Each file's newest requests were read whole, to the session's end; of the older
    # ones, outlined from the stored rows, only the edit the last request undid was read
    # back (to name what it undid).
    assert sorted(set(read)) == [asked_step_1 + 1, *range(noted_from, count + 1)]
    assert noted_from > asked_step_1 + 1


def test_the_store_is_not_locked_while_a_session_is_read(root, monkeypatch):
    monkeypatch.setenv("KARNI_HISTORIAN_BUSY_TIMEOUT", "0")
    written: list[str] = []
    rows = Store.stored_messages

    def rows_and_another_writer(self, session_id, start):
        for row in rows(self, session_id, start):
            if row[0] == 40:  # midway: another process writes to the store
                with Store.open(root) as other, other.transaction():
                    other.ensure_session("other", "pi")
                    written.append("other")
            yield row

    monkeypatch.setattr(Store, "stored_messages", rows_and_another_writer)
    with Store.open(root, create=True) as store:
        _long_session(store)
        assert note_sessions(store) == 1
        assert store.noted_state("long")[0] == store.message_count("long")
        assert store.file_request_rows("flow.py")
    assert written == ["other"]  # it did not wait for the reading (nor fail: no busy store)


# --- what blame reads, worked out in the outline's pass -----------------------------------------

_TABLES = {
    "file_notes": "path, request, ordinal, kind, text, weight",
    "file_requests": "path, request, timestamp, text, added, removed",
    "file_edits": "ordinal, path, forward, inverse",
    "written_ranges": "path, request, ordinal, position, timestamp, hash, lines, loose",
    "session_commits": "ordinal, request, hash, subject, timestamp, request_text, request_time",
}


def _rows(store: Store, session_id: str) -> dict[str, list[tuple]]:
    return {
        table: store.connection.execute(
            f"SELECT {columns} FROM {table} WHERE session_id = ? ORDER BY {columns}",
            (session_id,),
        ).fetchall()
        for table, columns in _TABLES.items()
    }


def test_blames_rows_cover_every_edit_as_a_reading_in_memory_would(root):
    from karni_historian.condense.file_notes.attribution import attribution_rows
    from karni_historian.condense.file_notes.extract import request_words
    from karni_historian.condense.file_notes.prose import in_project_terms
    from karni_historian.condense.file_notes.session import read_requests
    from karni_historian.condense.window import stream_messages

    with Store.open(root, create=True) as store:
        s = _long_session(store)
        s.run('git commit -am "stages in flow.py"', "[main 1a2b3c4] stages in flow.py\n 2 files")
        commit_at = s.ordinal
        note_sessions(store)
        rows = _rows(store, "long")
        written, commits = attribution_rows(
            read_requests(stream_messages(store, "long", 1)),
            lambda text: in_project_terms(request_words(text), str(root)),
        )
        noted_from = store.connection.execute(
            "SELECT min(request) FROM file_notes WHERE path = 'flow.py'"
        ).fetchone()[0]
        stamps = dict(
            store.connection.execute("SELECT ordinal, timestamp FROM raw_messages").fetchall()
        )
    assert rows["written_ranges"] == sorted(written)
    assert rows["session_commits"] == sorted(commits)
    # Every request that wrote flow.py has its ranges, not only those whose notes were worked out.
    requests = {row[1] for row in rows["written_ranges"] if row[0] == "flow.py"}
    assert min(requests) < noted_from
    assert len(requests) == len({row[1] for row in rows["file_requests"] if row[0] == "flow.py"})
    assert all(row[4] == stamps[row[2]] for row in rows["written_ranges"])  # each edit's time
    ((ordinal, request, short, subject, when, text, _asked),) = rows["session_commits"]
    assert (ordinal, short, subject, when) == (
        commit_at,
        "1a2b3c4",
        "stages in flow.py",
        stamps[commit_at],
    )
    assert text == "undo the rename of step_1, it broke the import"
    assert request < commit_at


def test_a_resumed_reading_leaves_every_table_as_a_whole_reading_would(root):
    with Store.open(root, create=True) as store:
        s = _long_session(store)
        note_sessions(store)
        resumed_from = store.noted_state("long")[2]
        assert resumed_from > 1
        s.ask("commit the stages and add a changelog line")
        s.edit("CHANGES.md", "", "- stages replace steps\n")
        s.run('git commit -am "stages"', "[main 9f8e7d6] stages\n 2 files changed")
        s.edit("flow.py", "stage_3 = 0", "stage_3 = 1")
        assert note_sessions(store) == 1  # read again from its last two requests only
        resumed = _rows(store, "long")
        store.connection.execute("DELETE FROM noted_sessions")
        assert note_sessions(store) == 1  # read whole, from the start
        whole = _rows(store, "long")
    # The notes of requests before the reading's start are the earlier reading's (it noted
    # each file's newest requests then); every other row is as a whole reading gives it.
    later = [row for row in resumed.pop("file_notes") if row[1] >= resumed_from]
    assert later == [row for row in whole.pop("file_notes") if row[1] >= resumed_from]
    assert later
    assert resumed == whole
    assert [row[2] for row in whole["session_commits"]] == ["9f8e7d6"]
    assert any(row[0] == "CHANGES.md" for row in whole["written_ranges"])


def test_a_session_from_shared_history_is_never_noted_again(root):
    with Store.open(root, create=True) as store:
        s = Session(store, "shared")
        s.ask("rename the helper")
        s.edit("util.py", "def old_name():", "def new_name():")
        with store.transaction():
            store.connection.execute(
                "INSERT INTO written_ranges (path, session_id, request, ordinal, position,"
                " timestamp, hash, lines, loose) VALUES ('util.py', 'shared', 1, 2, 0, NULL,"
                " 'h', 'l', 'l')"
            )
            store.connection.execute(
                "INSERT INTO noted_sessions (session_id, message_count, version, resume_from)"
                " VALUES ('shared', 0, -1, 0)"
            )
        before = _rows(store, "shared")
        note_sessions(store, ["shared"])  # even when ingest names it
        assert _rows(store, "shared") == before
        assert store.noted_state("shared") == (0, -1, 0)


def _statements(store: Store, path: str, room: int | None) -> tuple[str, list[str]]:
    seen: list[str] = []
    store.connection.set_trace_callback(seen.append)
    try:
        return brief(store, path, room), seen
    finally:
        store.connection.set_trace_callback(None)


def test_a_brief_its_notes_fill_reads_no_episode_and_a_roomy_one_does(root):
    """Sections the room cannot show are never read: the cost follows what is shown.

    A room the notes and requests fill (less than a heading and a line left)
    reads no compartment and no fact's sources; the full brief reads them.
    """
    with Store.open(root, create=True) as store:
        for n in range(12):
            s = Session(store, f"s{n:02d}", day=f"2026-03-{n + 1:02d}")
            s.ask(f"rename the cart helper, step {n}")
            s.edit("cart.py", f"def helper_{n}():", f"def helper_{n + 1}():")
            s.add("assistant", f"Decided to keep `helper_{n + 1}` as the cart's public name.")
            renamed = [Compartment(1, 3, f"Renamed {n}", p1="Renamed.")]
            store.publish(s.id, renamed, [], RunRecord(s.id, "wrapup", "ok"))
        note_sessions(store)
        filled = []
        for room in range(200, 700, 10):
            tight, reads = _statements(store, "cart.py", room)
            if len(tight) + 1 > room - len("Project memory:") - 5:
                filled.append(room)
                assert tight.startswith("Decided:") and "Episodes that touched" not in tight
                assert not any("compartments" in sql or "memory_sources" in sql for sql in reads)
        roomy, roomy_reads = _statements(store, "cart.py", None)
    assert len(filled) >= 5
    assert any("FROM compartments" in sql for sql in roomy_reads)
    assert "Renamed 11" in roomy


@pytest.mark.parametrize("second", ["", "\n\ndef grand_total_with_tax(items):\n    return 0\n"])
def test_a_line_that_only_lists_names_a_kept_line_says_is_left_out(root, second):
    """``adds `total_price``` repeats the decision that names it; a name said nowhere else stays."""
    with Store.open(root, create=True) as store:
        s = Session(store, "s1")
        s.ask("add a total helper to cart.py")
        added = "def empty():\n    return []\n\ndef total_price(items):\n    return sum(items)"
        s.edit("cart.py", "def empty():", added + second)
        s.add("assistant", "`total_price()` now sums the items' prices in cart.py for checkout.")
        note_sessions(store)
        full, sized = brief(store, "cart.py", None), brief(store, "cart.py", 400)
    assert "- `total_price()` now sums the items' prices in cart.py for checkout." in sized
    if second:
        assert "- adds `total_price`, `grand_total_with_tax`" in sized
    else:
        assert "- adds `total_price`" in full  # the full brief lists every note
        assert "adds `total_price`" not in sized
