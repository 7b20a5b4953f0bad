"""recomp's publishing in SQL: the same rows as renumbering every compartment in Python."""

import json
import random
from dataclasses import fields, replace

from karni_historian.model import Compartment
from karni_historian.store import RunRecord, Store


def compartment(start, end, seed):
    rng = random.Random(seed)
    text = "".join(rng.choice(["a", "é", "🙂", '"', "\\", "\n", "\x00", " "]) for _ in range(12))
    return Compartment(
        start,
        end,
        f"t{start}{text if seed % 3 == 0 else ''}",
        p1=f"p1 {text}",
        p2="p2",
        p3="",
        importance=rng.choice([1, 50, 100, 150, -3]),
        start_date=rng.choice([None, "2026-03-02"]),
        episode_type=rng.choice([None, "debugging"]),
    )


def spans(rng, first, last):
    """Contiguous random spans covering first-last."""
    out, start = [], first
    while start <= last:
        end = min(last, start + rng.randint(0, 4))
        out.append((start, end))
        start = end + 1
    return out


def rows_of(store):
    return [(s.sequence, s.compartment) for s in store.compartments("s")]


def ids(store):
    return store.connection.execute(
        "SELECT sequence, start_message_id, end_message_id FROM compartments ORDER BY sequence"
    ).fetchall()


def expected(kept, staged):
    """Kept compartments and staged ones in order of start, kept first on a tie."""
    merged = sorted(
        [(c.start, 0, seq, c) for seq, c in kept] + [(c.start, 1, 0, c) for c in staged],
        key=lambda item: item[:3],
    )
    return [(sequence, item[3]) for sequence, item in enumerate(merged)]


def published_as_stored(compartment):
    """What a published row reads back as: importance clamped, the body in ``content``."""
    import dataclasses

    importance = max(1, min(100, compartment.importance))
    return dataclasses.replace(
        compartment, importance=importance, legacy=False, content=compartment.p1
    )


def session_of_messages(store, last):
    """Session "s" holding user messages 1..last, each with the message id m<ordinal>."""
    store.ensure_session("s", "claude-code")
    with store.transaction():
        for ordinal in range(1, last + 1):
            store.write_message("s", ordinal, "user", "[]", message_id=f"m{ordinal}")


def test_publishing_matches_a_full_renumbering(tmp_path):
    for seed in range(30):
        rng = random.Random(seed)
        root = tmp_path / str(seed)
        root.mkdir()
        last = rng.randint(8, 40)
        with Store.open(root, create=True) as store:
            session_of_messages(store, last)
            old = [compartment(a, b, seed * 100 + a) for a, b in spans(rng, 1, last)]
            with store.transaction():
                store.insert_compartments("s", 0, old)
            start, end = store.snapped_range(
                "s", rng.randint(1, last), rng.randint(1, last) if rng.random() < 0.5 else last
            )
            if start > end:
                start, end = end, start
                start, end = store.snapped_range("s", start, end)
            kept = [
                (s.sequence, s.compartment)
                for s in store.compartments("s")
                if s.compartment.end < start or s.compartment.start > end
            ]
            new = [compartment(a, b, seed * 1000 + a) for a, b in spans(rng, start, end)]
            store.start_recomp("s", start, end)
            half = len(new) // 2
            store.stage("s", new[:half], [(f"m{c.start}", f"m{c.end}") for c in new[:half]])
            store.stage("s", new[half:])  # ids unknown: looked up
            count = store.publish_recomp("s", RunRecord("s", "recomp", "ok", historian="x"))
            assert count == len(new)
            want = [(seq, published_as_stored(c)) for seq, c in expected(kept, new)]
            assert rows_of(store) == want, seed
            assert ids(store) == [(seq, f"m{c.start}", f"m{c.end}") for seq, c in want]
            assert store.staged("s") == [] and store.recomp_job("s") is None


def test_a_kept_row_starting_inside_the_range_renumbers_the_whole_session(tmp_path):
    # A row whose start lies after its end survives the range's removal inside it.
    with Store.open(tmp_path, create=True) as store:
        session_of_messages(store, 10)
        old = [compartment(a, b, a) for a, b in [(1, 3), (6, 2), (4, 8), (9, 10)]]
        with store.transaction():
            store.insert_compartments("s", 0, old)
        kept = [(0, old[0]), (1, old[1]), (3, old[3])]
        new = [compartment(4, 5, 40), compartment(6, 8, 60)]
        store.start_recomp("s", 4, 8)
        store.stage("s", new)
        assert store.publish_recomp("s", RunRecord("s", "recomp", "ok", historian="x")) == 2
        want = [(seq, published_as_stored(c)) for seq, c in expected(kept, new)]
        assert [c.start for _, c in want] == [1, 4, 6, 6, 9]
        assert rows_of(store) == want


def test_a_recomp_staged_by_version_4_is_published_after_the_upgrade(tmp_path):
    # Version 4 staged JSON: rows with the message ids, without them (earlier
    # versions, or text holding a NUL, which SQLite's JSON functions cut short)
    # and in the standard library's spaced form. Version 5 moves them to columns.
    from conftest import store_at_version

    old = [compartment(1, 4, 3), compartment(5, 9, 6), compartment(10, 12, 9)]
    new = [
        compartment(1, 2, 30),
        replace(compartment(3, 9, 60), title="NUL \x00 and \\u0000", p3="\x00"),
        replace(compartment(10, 12, 90), legacy=True, content="body"),
    ]
    rows = [
        json.dumps({**vars_of(new[0]), "start_message_id": "m1", "end_message_id": "m2"}),
        json.dumps(vars_of(new[1]), ensure_ascii=False),
        json.dumps({**vars_of(new[2]), "start_message_id": None, "end_message_id": None}),
    ]
    connection = store_at_version(tmp_path, 4)
    connection.execute(
        "INSERT INTO sessions (id, source, created_at, updated_at)"
        " VALUES ('s', 'claude-code', '', '')"
    )
    connection.executemany(
        "INSERT INTO raw_messages (session_id, ordinal, role, parts_json, message_id)"
        " VALUES ('s', ?, 'user', '[]', ?)",
        [(ordinal, f"m{ordinal}") for ordinal in range(1, 13)],
    )
    connection.execute(
        "INSERT INTO recomp_jobs (session_id, range_start, range_end, created_at)"
        " VALUES ('s', 1, 12, '')"
    )
    connection.executemany(
        "INSERT INTO recomp_staging (session_id, start_message, compartment_json)"
        " VALUES ('s', ?, ?)",
        [(c.start, text) for c, text in zip(new, rows, strict=True)],
    )
    connection.close()
    with Store.open(tmp_path) as store:
        tables = store.connection.execute("SELECT name FROM sqlite_master").fetchall()
        assert ("recomp_staging",) not in tables and ("recomp_staged",) in tables
        assert store.recomp_job("s") == (1, 12)
        assert store.staged("s") == new
        assert store.last_staged_end("s") == 12
        with store.transaction():
            store.insert_compartments("s", 0, old)
        assert store.publish_recomp("s", RunRecord("s", "recomp", "ok", historian="x")) == 3
        assert rows_of(store) == [(seq, published_as_stored(c)) for seq, c in enumerate(new)]
        assert ids(store) == [(0, "m1", "m2"), (1, "m3", "m9"), (2, "m10", "m12")]


def vars_of(compartment):
    return {field.name: getattr(compartment, field.name) for field in fields(compartment)}


def test_publishing_keeps_the_staging_of_another_session(tmp_path):
    # Sessions "a" < "s" < "z": the staging is emptied whole only when none is left.
    with Store.open(tmp_path, create=True) as store:
        for session in ("a", "s", "z"):
            store.ensure_session(session, "claude-code")
            with store.transaction():
                store.insert_compartments(session, 0, [compartment(1, 4, 1)])
            store.start_recomp(session, 1, 4)
            store.stage(session, [compartment(1, 2, 2), compartment(3, 4, 3)])
        for session, left in (("s", ["a", "z"]), ("a", ["z"]), ("z", [])):
            assert store.publish_recomp(session, RunRecord(session, "recomp", "ok")) == 2
            assert [len(store.staged(other)) for other in left] == [2] * len(left)
            assert [store.recomp_job(other) for other in left] == [(1, 4)] * len(left)
            assert store.staged(session) == [] and store.recomp_job(session) is None
        assert store.connection.execute("SELECT COUNT(*) FROM recomp_staged").fetchone() == (0,)


def test_published_rows_get_their_ids_in_order_of_start(tmp_path):
    # The staged rows are numbered apart from the copy: their row ids still
    # follow their starts, as one ordered INSERT … SELECT gave them.
    with Store.open(tmp_path, create=True) as store:
        session_of_messages(store, 20)
        with store.transaction():
            store.insert_compartments("s", 0, [compartment(a, a + 1, a) for a in range(1, 21, 2)])
        store.start_recomp("s", 1, 20)
        new = [compartment(a, a, a) for a in range(1, 21)]
        store.stage("s", new[10:])
        store.stage("s", new[:10])
        store.publish_recomp("s", RunRecord("s", "recomp", "ok", historian="x"))
        rows = store.connection.execute(
            "SELECT id, sequence, start_message FROM compartments ORDER BY id"
        ).fetchall()
        assert [(sequence, start) for _, sequence, start in rows] == [(n, n + 1) for n in range(20)]


def test_publishing_leaves_secure_delete_as_it_found_it(tmp_path):
    with Store.open(tmp_path, create=True) as store:
        store.ensure_session("s", "claude-code")
        with store.transaction():
            store.write_message("s", 1, "user", "[]", message_id="m1")
            store.insert_compartments("s", 0, [compartment(1, 1, 1)])
        for setting, read_back in (("1", 1), ("0", 0), ("FAST", 2), ("1", 1)):
            store.connection.execute(f"PRAGMA secure_delete = {setting}")
            store.start_recomp("s", 1, 1)
            staged = compartment(1, 1, read_back + 10)
            store.stage("s", [staged])
            store.publish_recomp("s", RunRecord("s", "recomp", "ok", historian="x"))
            assert store.connection.execute("PRAGMA secure_delete").fetchone()[0] == read_back
            assert store.staged("s") == []
            assert [c.title for _, c in rows_of(store)] == [staged.title]
