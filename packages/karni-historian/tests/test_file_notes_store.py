"""Files' notes in the store and in the brief: noted at ingest, read again incrementally, capped."""

from __future__ import annotations

import pytest
from karni_historian.brief.briefs import file_brief
from karni_historian.condense import file_notes
from karni_historian.condense.file_notes import note_sessions
from karni_historian.model import TextPart, ToolPart
from karni_historian.store import Store, parts_to_json


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
