import json
import os
import random
import sqlite3
import stat
from dataclasses import replace

import pytest
from karni_historian import fastjson
from karni_historian.model import Compartment, Fact, TextPart, ToolPart
from karni_historian.store import (
    SCHEMA_VERSION,
    RunRecord,
    Store,
    StoreError,
    db_path,
    parts_from_json,
    parts_to_json,
)
from karni_historian.store.messages import tool_part_rows


@pytest.fixture
def root(tmp_path):
    (tmp_path / "manage.py").write_text("")
    return tmp_path


def test_created_owner_only_with_gitignore(root):
    with Store.open(root, create=True) as store:
        assert store.schema_version == SCHEMA_VERSION
    folder = root / ".karni" / "local"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(db_path(root)).st_mode) == 0o600
    assert (folder / ".gitignore").read_text() == "*\n"


def test_a_new_store_has_8_kib_pages_and_an_old_one_keeps_its_own(root, tmp_path):
    from karni_historian.store.database import PAGE_SIZE

    with Store.open(root, create=True) as store:
        assert store.connection.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 8192
    old = tmp_path / "old"
    (old / ".karni" / "local").mkdir(parents=True)
    (old / "manage.py").write_text("")
    connection = sqlite3.connect(db_path(old))
    connection.execute("CREATE TABLE placeholder (x)")  # written with SQLite's default pages
    connection.execute("DROP TABLE placeholder")
    default = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    with Store.open(old) as store:
        assert store.connection.execute("PRAGMA page_size").fetchone()[0] == default != 8192
        assert store.schema_version == SCHEMA_VERSION


def test_missing_store_is_a_one_line_error(root):
    with pytest.raises(StoreError) as error:
        Store.open(root)
    assert str(error.value) == (
        f"no historian store at {db_path(root)}; run `karni-historian ingest` first"
    )
    assert not (root / ".karni").exists()


def test_readonly_never_creates(root):
    with pytest.raises(StoreError):
        Store.open(root, create=True, readonly=True)
    assert not (root / ".karni").exists()


def test_newer_schema_is_refused(root):
    Store.open(root, create=True).close()
    connection = sqlite3.connect(db_path(root))
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(StoreError, match="newer than this karni-historian understands"):
        Store.open(root)


def test_empty_database_is_migrated(root):
    folder = root / ".karni" / "local"
    folder.mkdir(parents=True)
    sqlite3.connect(db_path(root)).close()
    with Store.open(root) as store:
        assert store.schema_version == SCHEMA_VERSION
        tables = {
            row[0]
            for row in store.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert {
        "sessions",
        "raw_messages",
        "message_files",
        "compartments",
        "memories",
        "historian_runs",
        "ingest_cursors",
    } <= tables


def test_readonly_refuses_an_old_schema(root):
    folder = root / ".karni" / "local"
    folder.mkdir(parents=True)
    sqlite3.connect(db_path(root)).close()
    with pytest.raises(StoreError, match="needs an upgrade"):
        Store.open(root, readonly=True)


def test_readonly_reads_a_store_whose_tables_are_current(root):
    # Version 4 changed how results are written, versions 5 and 6 tables a brief
    # never reads (the staging of recomp, the tool parts): a brief reads a version-3
    # store as it is, and the next writer upgrades it, listing the tool parts its
    # messages already hold.
    from conftest import store_at_version

    connection = store_at_version(root, 3)
    connection.execute(
        "INSERT INTO sessions (id, source, created_at, updated_at)"
        " VALUES ('s', 'claude-code', '', '')"
    )
    messages = [
        ("assistant", '[{"type":"text","text":"hi"},{"type":"tool","name":"Read","call_id":"t1"}]'),
        ("user", '[{"type":"tool","call_id":"t1","copy_of":1}]'),
        ("user", '[{"type":"tool","call_id":"t2"'),  # malformed: no tool part
    ]
    connection.executemany(
        "INSERT INTO raw_messages (session_id, ordinal, role, parts_json) VALUES ('s', ?, ?, ?)",
        [(ordinal, role, parts) for ordinal, (role, parts) in enumerate(messages, 1)],
    )
    connection.close()
    with Store.open(root, readonly=True) as store:
        assert store.schema_version == 3
        assert store.message("s", 1).parts[0] == TextPart("hi")
    with Store.open(root) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert list(store.tool_part_calls("s")) == [(1, "assistant", "t1"), (2, "user", "t1")]
    connection = sqlite3.connect(db_path(root))
    connection.execute("PRAGMA user_version = 2")
    connection.close()
    with pytest.raises(StoreError, match="needs an upgrade"):
        Store.open(root, readonly=True)


def test_the_migration_to_version_8_keeps_each_compartment_body_in_p1_alone(root):
    # A version-7 store holds each body twice (``content``, a copy of p1) and a
    # legacy row's only in ``content``: after the migration every body is p1, the
    # column is gone, and every other field of every row is as it was.
    from conftest import store_at_version

    connection = store_at_version(root, 7)
    connection.execute(
        "INSERT INTO sessions (id, source, created_at, updated_at)"
        " VALUES ('s', 'claude-code', '', '')"
    )
    columns = (
        "id, session_id, sequence, start_message, end_message, start_message_id, end_message_id,"
        " title, content, p1, p2, p3, p4, importance, episode_type, legacy, start_date, end_date,"
        " created_at"
    )
    connection.executemany(
        f"INSERT INTO compartments ({columns}) VALUES ({', '.join('?' * 19)})",
        [
            (7, "s", 0, 1, 4, "m1", "m4", "Tiered", "Body.", "Body.", "Two.", "Three.", "",
             80, "commit", 0, "2026-01-02", "2026-01-03", "2026-01-04T00:00:00Z"),
            (9, "s", 1, 5, 8, "m5", "m8", "Legacy", "The legacy body.", None, None, None, None,
             50, None, 1, None, None, "2026-01-05T00:00:00Z"),
        ],
    )  # fmt: skip
    kept = "id, session_id, sequence, start_message, end_message, start_message_id, end_message_id"
    kept += (
        ", title, p2, p3, p4, importance, episode_type, legacy, start_date, end_date, created_at"
    )
    before = connection.execute(f"SELECT {kept} FROM compartments ORDER BY id").fetchall()
    connection.close()
    with Store.open(root, readonly=True) as store:  # a brief reads it as it is
        assert store.schema_version == 7
        assert [(e.id, e.p1, e.content) for e in store.episodes_after(0, 10)] == [
            (7, "Body.", "Body."),
            (9, "The legacy body.", "The legacy body."),
        ]
    with Store.open(root) as store:
        assert store.schema_version == SCHEMA_VERSION
        names = [row[1] for row in store.connection.execute("PRAGMA table_info(compartments)")]
        assert "content" not in names and "p1" in names
        rows = store.connection.execute(f"SELECT {kept} FROM compartments ORDER BY id").fetchall()
        assert rows == before
        assert [c.compartment for c in store.compartments("s")] == [
            Compartment(1, 4, "Tiered", "Body.", "Two.", "Three.", "", 80, "2026-01-02",
                        "2026-01-03", episode_type="commit", content="Body."),
            Compartment(5, 8, "Legacy", "The legacy body.", legacy=True,
                        content="The legacy body."),
        ]  # fmt: skip
        assert [(e.id, e.p1) for e in store.episodes_after(0, 10)] == [
            (7, "Body."),
            (9, "The legacy body."),
        ]
        store.insert_compartments("s", 2, [Compartment(9, 9, "New", "Fresh.")])
        assert store.compartments("s")[-1].compartment.content == "Fresh."


def test_parts_round_trip():
    parts = (
        TextPart("hello"),
        TextPart("<system-reminder>x</system-reminder>", ignored=True),
        ToolPart("Edit", {"file_path": "a.py"}, "done", call_id="t1", is_error=True),
        ToolPart("Read", {"file_path": "b.py"}),
    )
    assert parts_from_json(parts_to_json(parts)) == parts


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (' [{"type": "text", "text": "padded"}] ', (TextPart("padded"),)),
        ('[{"type":"tool","name":"Bash","input":{}}]\n', (ToolPart("Bash", {}),)),
    ],
)
def test_stored_parts_not_in_the_compact_form_still_decode(text, parts):
    assert parts_from_json(text) == parts


ROWS_ORJSON_READS_OTHERWISE = [
    '[{"type":"tool","name":"Run","input":{"n":18446744073709551616,"m":[1,-9223372036854775809]}}]',
    '[{"type":"tool","name":"Run","input":{"timeout":1.5,"zero":-0.0,"tiny":1e-7}}]',
    '[{"type":"tool","name":"Run","input":{"deep":[[{"x":[18446744073709551616]}]]}}]',
    '[{"type":"tool","name":"Run","input":{},"metadata":{"cost":12345678901234567890123}}]',
    '[{"type":"text","text":18446744073709551616},{"type":"tool","name":18446744073709551617}]',
    '[{"type":"tool","name":"Run","output":-9223372036854775809,"call_id":1e3}]',
    '{"type":"text","text":"an object, not a list"}',
    '[{"type":"tool","name":"Run","input":[1, 2.0, {"deep": [[99999999999999999999]]}]}]',
    '[{"type":"tool","name":"Run","input":{"x":NaN,"y":[-Infinity]}}]',
    '[{"type":"text","text":"\\ud83d alone"}]',
    '[{"type":"tool","name":"Run","input":{"n":18446744073709551615},"output":"caf\\u00e9"}]',
]


def _typed(value):
    """A decoded value with every number's type kept, to tell an int from a float."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_typed(item) for item in value]
    if isinstance(value, (TextPart, ToolPart)):
        return [type(value).__name__, *(_typed(getattr(value, f)) for f in value.__slots__)]
    return (type(value).__name__, repr(value))


def _decoded(text):
    try:
        return _typed(parts_from_json(text))
    except (AttributeError, ValueError) as error:
        return repr(error)


@pytest.mark.parametrize("text", ROWS_ORJSON_READS_OTHERWISE)
def test_stored_parts_decode_alike_with_and_without_orjson(text, monkeypatch):
    with_orjson = _decoded(text)
    monkeypatch.setattr(fastjson, "_orjson_loads", None)  # as without the speedups extra
    assert _decoded(text) == with_orjson


@pytest.mark.parametrize("text", ["", "[", '[{"type": "text"}] x', "[1"])
def test_stored_parts_that_are_not_json_fail_as_json_does(text):
    import json

    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as raised:
        parts_from_json(text)
    assert str(raised.value) == str(expected.value)


def test_exception_mid_transaction_keeps_previous_state(root):
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            store.write_message("s", 1, "user", parts_to_json([TextPart("one")]))
        with pytest.raises(KeyboardInterrupt), store.transaction():
            store.write_message("s", 2, "assistant", parts_to_json([TextPart("two")]))
            store.add_fact(Fact("CONSTRAINTS", "never"))
            raise KeyboardInterrupt
    with Store.open(root) as store:
        assert [m.ordinal for m in store.messages("s")] == [1]
        assert store.facts() == []
        assert store.session("s").message_count == 1


def test_publish_appends_compartments_and_deduplicates_facts(root):
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            for ordinal in range(1, 5):
                store.write_message("s", ordinal, "user", parts_to_json([TextPart(str(ordinal))]))
        first = Compartment(1, 2, "First", p1="one", p2="o", p3="o", p4="")
        second = Compartment(3, 4, "Second", p1="two", p2="t", p3="t", p4="t", importance=80)
        store.publish(
            "s",
            [first],
            [Fact("constraints", "Never apply discounts to gift cards.")],
            RunRecord("s", "wrapup", "ok", compartments_produced=1, importances=[50]),
        )
        store.publish(
            "s",
            [second],
            [Fact("CONSTRAINTS", "never apply  discounts to gift cards")],
            RunRecord("s", "wrapup", "ok", compartments_produced=1, importances=[80]),
        )
        stored = store.compartments("s")
        # content mirrors p1 (docs/historian/store.md).
        assert [(c.sequence, c.compartment) for c in stored] == [
            (0, replace(first, content="one")),
            (1, replace(second, content="two")),
        ]
        assert store.last_compartment_end("s") == 4
        assert store.facts() == [Fact("CONSTRAINTS", "Never apply discounts to gift cards.")]
        seen = store.connection.execute("SELECT seen_count FROM memories").fetchone()[0]
        assert seen == 2
        assert store.facts_for_spans([("s", 4, 4)]) == store.facts()
        assert store.facts_for_spans([("other", 1, 4)]) == []
        assert [run[:3] for run in store.runs("s")] == [("s", "wrapup", "ok")] * 2


def test_failure_counter_counts_and_resets(root):
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            store.write_message("s", 1, "user", parts_to_json([TextPart("x")]))
        assert store.record_failure(RunRecord("s", "run", "failed", failure_reason="boom")) == 1
        assert store.record_failure(RunRecord("s", "run", "failed", failure_reason="again")) == 2
        assert store.failure("s") == (2, "again")
        store.publish("s", [Compartment(1, 1, "T", p1="x")], [], RunRecord("s", "run", "ok"))
        assert store.failure("s") == (0, "again")


def test_titles_rank(root):
    with Store.open(root, create=True) as store:
        store.ensure_session("s", "claude-code")
        store.set_title("s", "first prompt", 1)
        store.set_title("s", "second prompt", 1)
        assert store.session("s").title == "first prompt"
        store.set_title("s", "AI title", 3)
        store.set_title("s", "a later prompt", 1)
        assert store.session("s").title == "AI title"
        store.set_title("s", "Better AI title", 3)
        assert store.session("s").title == "Better AI title"


def test_touching_covers_folders(root):
    with Store.open(root, create=True) as store:
        store.ensure_session("s", "generic")
        store.add_file("s", 3, "shop/cart.py", "edit")
        store.add_file("s", 5, "shop2/x.py", "read")
        assert store.touching("shop/cart.py") == [("s", 3)]
        assert store.touching("shop") == [("s", 3)]
        assert store.touching("shop/") == [("s", 3)]
        assert store.touching("cart.py") == []


def test_message_id_lookups_use_the_index(root):
    # Ingest looks up each new message id; a scan of the session would make a long
    # session quadratic. SQLite's progress handler counts the VM steps a lookup takes.
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            rows = [(n, "user", "[]", None, f"m{n}") for n in range(1, 5001)]
            store.insert_messages("s", rows)
        steps = []
        store.connection.set_progress_handler(lambda: steps.append(1) and 0, 100)
        assert store.ordinal_of_message_id("s", "m4321") == 4321
        assert store.ordinal_of_message_id("s", "absent") is None
        store.connection.set_progress_handler(None, 0)
    assert len(steps) < 10  # a scan of 5,000 rows takes hundreds


@pytest.mark.parametrize("malformed_at", [None, 1, 3, 5])
def test_tool_part_calls_skip_rows_that_are_not_json(root, malformed_at):
    """The calls and results in order; a row whose parts are not JSON has none."""
    rows = [
        ("assistant", [TextPart("look"), ToolPart("Read", {"path": "a"}, call_id="t1")]),
        ("user", [ToolPart("Read", {"path": "a"}, "text", call_id="t1")]),
        ("assistant", [ToolPart("Bash", {"command": "ls"}, call_id="t2"), ToolPart("X", {})]),
        ("user", [ToolPart("Bash", {"command": "ls"}, "out", call_id="t2")]),
        ("assistant", [ToolPart("Edit", {"call_id": "nested"}, call_id="t3")]),
    ]
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            for ordinal, (role, parts) in enumerate(rows, 1):
                stored = '[{"type": "tool", "call_id": "x"' if ordinal == malformed_at else None
                store.write_message("s", ordinal, role, stored or parts_to_json(parts))
        calls = list(store.tool_part_calls("s"))
        from_two = list(store.tool_part_calls("s", 2))
    expected = [(1, "assistant", "t1"), (2, "user", "t1"), (3, "assistant", "t2")]
    expected += [(4, "user", "t2"), (5, "assistant", "t3")]
    expected = [row for row in expected if row[0] != malformed_at]
    assert calls == expected
    assert from_two == [row for row in expected if row[0] >= 2]


ODD_CALL_ROWS = [
    ('{"type":"tool","call_id":"top-level object"}', [(1, "assistant", "t1")]),
    ('[{"type":"tool","call_id":7}]', [(1, "assistant", "t1"), (2, "assistant", 7)]),
    (
        '[{"type":"tool","call_id":""},{"type":"tool","call_id":null},'
        '{"type":"text","call_id":"t"},{"type":"tool","call_id":false}]',
        [(1, "assistant", "t1")],
    ),
    (
        '[{"type":"tool","name":"A","input":{"call_id":"nested"},"call_id":"c1"}, "x", 3]',
        [(1, "assistant", "t1"), (2, "assistant", "c1")],
    ),
    ('[{"type":"tool","call\\u005fid":"escaped"}]', [(1, "assistant", "t1")]),
    ('[{"type":"tool","call_id":"c3",}]', [(1, "assistant", "t1")]),
    ('[{"type":"tool","call_id":"c4"}] trailing', [(1, "assistant", "t1")]),
]


@pytest.mark.parametrize(("odd", "before_the_result"), ODD_CALL_ROWS)
def test_tool_parts_are_read_as_sqlite_json_functions_read_the_row(root, odd, before_the_result):
    rows = [
        '[{"type":"tool","name":"Read","input":{},"call_id":"t1"}]',
        odd,
        '[{"type":"tool","name":"Read","input":{},"output":"ok","call_id":"t1"}]',
    ]
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            for ordinal, stored in enumerate(rows, 1):
                store.write_message("s", ordinal, "assistant", stored)
        assert list(store.tool_part_calls("s")) == [*before_the_result, (3, "assistant", "t1")]
        assert list(store.tool_part_calls("s", 3)) == [(3, "assistant", "t1")]


def test_a_replaced_message_replaces_its_tool_parts(root):
    call = [ToolPart("Read", {"path": "a"}, call_id="t1")]
    answered = [ToolPart("Read", {"path": "a"}, "text", call_id="t1"), TextPart("and more")]
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            store.write_message("s", 1, "assistant", parts_to_json(call))
            store.write_message("s", 1, "assistant", parts_to_json([TextPart("x"), *answered]))
        assert list(store.tool_part_calls("s")) == [(1, "assistant", "t1")]
        assert store.connection.execute("SELECT position FROM tool_parts").fetchall() == [(1,)]


def _random_parts(rng: random.Random) -> list[dict[str, object]]:
    parts: list[dict[str, object]] = []
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.3:
            parts.append({"type": "text", "text": rng.choice(["a", "call_id", '"call_id"'])})
        else:
            part: dict[str, object] = {"type": "tool", "name": "Bash", "input": {"n": 1}}
            call_id = rng.choice([None, "", "c1", "c2", "ü-ñ", 'q"uote'])
            if rng.random() < 0.05:
                call_id = rng.choice([0, 5, False, True, {}])  # never from a reader
            if call_id is not None or rng.random() < 0.5:
                part["call_id"] = call_id
            if rng.random() < 0.2:
                part["copy_of"] = 1
            parts.append(part)
    return parts


@pytest.mark.parametrize("speedups", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_the_writers_tool_parts_are_those_the_store_reads_from_the_json(
    tmp_path, speedups, seed, monkeypatch
):
    """tool_part_rows (what ingest hands the store) must give what the stored JSON holds."""
    if not speedups:
        monkeypatch.setattr(fastjson, "_orjson_loads", None)
        monkeypatch.setattr(fastjson, "_orjson_dumps", None)
    rng = random.Random(seed)
    messages = [(rng.choice(["user", "assistant"]), _random_parts(rng)) for _ in range(80)]
    tables = []
    for given in (True, False):
        root = tmp_path / str(given)
        root.mkdir()
        with Store.open(root, create=True) as store:
            with store.transaction():
                store.ensure_session("s", "generic")
                rows = [
                    (n, role, fastjson.dumps(parts), None, "")
                    for n, (role, parts) in enumerate(messages[:40], 1)
                ]
                known = [
                    tool_part_rows(n, role, parts)
                    for n, (role, parts) in enumerate(messages[:40], 1)
                ]
                joined = None if None in known else [row for rows_ in known for row in rows_]
                store.insert_messages("s", rows, joined if given else None)
                for n, (role, parts) in enumerate(messages[40:], 41):
                    found = tool_part_rows(n, role, parts) if given else None
                    store.write_message("s", n, role, fastjson.dumps(parts), tool_parts=found)
            tables.append(list(store.tool_part_calls("s")))
    assert tables[0] == tables[1]
    assert len(tables[0]) > 20  # the messages' parts hold calls of every kind


def test_messages_at_ordinals_come_in_order_in_one_query(root):
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            for ordinal in range(1, 6):
                store.write_message("s", ordinal, "user", parts_to_json([TextPart(f"m{ordinal}")]))
        queries = []
        store.connection.set_trace_callback(queries.append)
        found = store.messages_at("s", [4, 2, 9])
        store.connection.set_trace_callback(None)
        assert [(m.ordinal, m.parts) for m in found] == [
            (2, (TextPart("m2"),)),
            (4, (TextPart("m4"),)),
        ]
        assert len(queries) == 1 and store.messages_at("s", []) == []


def test_a_scratch_table_left_by_a_failed_block_is_replaced_by_the_next(tmp_path):
    from karni_historian.store.database import ScratchTable

    with Store.open(tmp_path, create=True) as store:
        connection = store.connection

        def numbers(last):
            return ScratchTable(
                connection,
                "numbers",
                "n INTEGER PRIMARY KEY",
                "SELECT value FROM json_each(?)",
                (json.dumps(list(range(1, last + 1))),),
            )

        with pytest.raises(RuntimeError), numbers(5) as count:  # no transaction: the table stays
            assert count == 5
            raise RuntimeError
        assert connection.execute("SELECT COUNT(*) FROM temp.numbers").fetchone() == (5,)
        with numbers(3) as count:
            assert count == 3
            assert connection.execute("SELECT MAX(n) FROM temp.numbers").fetchone() == (3,)
        tables = connection.execute("SELECT name FROM sqlite_temp_master").fetchall()
        assert ("numbers",) not in tables
