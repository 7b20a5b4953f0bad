"""What an edit wrote, as ranges and hashes (``karni_historian.written_ranges``), and their store.

The hashes are what ``blame`` matches today's lines by, and what ``share``
writes for teammates: the same text must always give the same hashes.
"""

from __future__ import annotations

from karni_historian.store import SCHEMA_VERSION, Store
from karni_historian.written_ranges import (
    decode_hashes,
    encode_hashes,
    is_distinctive,
    line_hash,
    loose_line,
    normal_line,
    range_hash,
    written_ranges,
)


def test_an_edit_wrote_only_the_lines_its_replaced_text_did_not_hold():
    old = "def empty():\n    return []\n"
    new = "def empty():\n    return []\n\n\ndef total(items):\n    return sum(items)\n"
    (only,) = written_ranges(old, new)
    assert only.lines == ("def total(items):", "    return sum(items)")


def test_a_write_wrote_every_line_and_blank_ends_are_left_out():
    (only,) = written_ranges("", "\n\nx = 1\n\ny = 2\n\n")
    assert only.lines == ("x = 1", "", "y = 2")


def test_a_replacement_in_two_places_gives_two_ranges():
    old = "a = 1\nkeep = True\nb = 2\n"
    new = "a = 10\nkeep = True\nb = 20\n"
    assert [r.lines for r in written_ranges(old, new)] == [("a = 10",), ("b = 20",)]


def test_whitespace_at_line_ends_does_not_change_a_hash_but_the_text_does():
    assert normal_line("x = 1  \r") == "x = 1"
    (first,) = written_ranges("", "x = 1   \ny = 2\n")
    (second,) = written_ranges("", "x = 1\ny = 2\t\n")
    assert first.hash == second.hash == range_hash(["x = 1", "y = 2"])
    assert first.hash.startswith("blake2b:") and len(first.hash) == len("blake2b:") + 16
    assert first.line_hashes == second.line_hashes
    assert range_hash(["x = 1", "y = 3"]) != first.hash


def test_loose_hashes_survive_a_formatter():
    assert loose_line("x = {'a': 1}") == loose_line('x = {"a":1}')
    (before,) = written_ranges("", "x = {'a': 1}\n")
    (after,) = written_ranges("", 'x = {"a":1}\n')
    assert before.loose_hashes == after.loose_hashes
    assert before.line_hashes != after.line_hashes


def test_line_hashes_round_trip_as_stored_and_malformed_ones_are_dropped():
    hashes = [line_hash("a"), line_hash("b")]
    assert all(len(h) == 8 for h in hashes)
    assert decode_hashes(encode_hashes(hashes)) == hashes
    assert decode_hashes("zz " + hashes[0] + " 123") == [hashes[0]]


def test_distinctive_lines_can_name_their_writer_alone():
    assert is_distinctive("    return sum(item.price for item in items)")
    assert not any(
        is_distinctive(x) for x in ("", "    }", "return", "pass", '"""', "});", "x = 1")
    )


def test_the_migration_keeps_every_row_and_adds_the_blame_tables(root):
    from conftest import store_at_version

    connection = store_at_version(root, SCHEMA_VERSION - 1)
    connection.execute(
        "INSERT INTO sessions (id, source, message_count, created_at, updated_at)"
        " VALUES ('s', 'pi', 4, '', '')"
    )
    connection.execute(
        "INSERT INTO file_requests (path, session_id, request, timestamp, text, added, removed)"
        " VALUES ('a.py', 's', 1, '2026-01-01T00:00:00Z', 'Add a', 3, 0)"
    )
    connection.execute(
        "INSERT INTO noted_sessions (session_id, message_count, version, resume_from)"
        " VALUES ('s', 4, 1, 1)"
    )
    connection.close()
    with Store.open(root) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.file_requests_of("a.py") == {("s", 1): ("2026-01-01T00:00:00Z", "Add a")}
        assert store.written_to("a.py") == []
        assert store.commits_named(["abc1234"], ["Add a"]) == []
        # noted by an older extraction: the next ingest reads it again for blame
        assert store.sessions_behind(2) == 1
