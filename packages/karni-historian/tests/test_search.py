"""``karni-historian search``: the full-text index, kept by every writer, and the command.

The bundled example session (``examples/sessions/``) is installed where Claude
Code keeps it, ingested and condensed by the real commands; the index is then
checked against one rebuilt from scratch, and searched as a user would.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import EXAMPLE_ID
from karni_historian.brief.snippets import fts_query, query_terms, snippet
from karni_historian.model import Compartment, Fact, TextPart, ToolPart
from karni_historian.store import MIGRATIONS, RunRecord, Store, StoreError, parts_to_json
from karni_historian.store.schema import SEARCH_VERSION, db_path
from karni_historian.store.search_sql import SEARCH_MIGRATION

SESSION = EXAMPLE_ID


def index_answers(connection: sqlite3.Connection) -> dict[str, list[int]]:
    """For every word the stored text holds, the index rows that match it."""
    words: set[str] = set()
    for (text,) in connection.execute(
        "SELECT parts_json FROM raw_messages UNION ALL SELECT title || ' ' || coalesce(p1, '')"
        " || ' ' || coalesce(p2, '') FROM compartments UNION ALL SELECT content FROM memories"
    ):
        words.update(w.lower() for w in re.findall(r"[^\W_]+", text) if w.isalpha())
    return {
        word: [
            row[0]
            for row in connection.execute(
                "SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rowid",
                (f'"{word}"',),
            )
        ]
        for word in sorted(words)
    }


def assert_index_is_rebuilt_alike(path: Path, least: int = 50) -> None:
    """The index the writers kept answers every word as one rebuilt from the rows does."""
    with sqlite3.connect(path) as connection:
        kept = index_answers(connection)
        connection.execute("INSERT INTO search_index (search_index) VALUES ('delete-all')")
        for statement in SEARCH_MIGRATION[2:]:
            connection.execute(statement)
        rebuilt = index_answers(connection)
        connection.rollback()
    assert kept == rebuilt
    assert sum(map(len, kept.values())) >= least


def test_every_command_that_writes_keeps_the_index(example, historian):
    """ingest, wrapup, run and recomp each leave the index as a rebuild would make it."""
    database = Path(db_path(example))
    assert_index_is_rebuilt_alike(database)
    assert historian("-q", "run", "--force")[0] == 0
    assert_index_is_rebuilt_alike(database)
    assert historian("-q", "recomp", "1-20")[0] == 0
    assert_index_is_rebuilt_alike(database)


def test_a_replaced_message_is_searched_as_it_is_now(root):
    """A message whose parts grow (a later block, a tool result) is found by its new words only."""
    with Store.open(root, create=True) as store, store.transaction():
        store.ensure_session("s", "generic")
        store.write_message("s", 1, "assistant", parts_to_json([TextPart("first draft")]))
        store.write_message(
            "s",
            1,
            "assistant",
            parts_to_json([TextPart("final answer"), ToolPart("Bash", {"c": "ls"}, "zebra.txt")]),
        )
    assert_index_is_rebuilt_alike(Path(db_path(root)), least=5)
    with Store.open(root) as store:
        assert store.connection.execute(
            "SELECT count(*) FROM search_index WHERE search_index MATCH 'draft'"
        ).fetchone() == (0,)


def test_an_older_store_gets_its_index_from_every_row(root):
    """Opening a store of the version before the index builds it, keeping every row."""
    from conftest import store_at_version

    path = Path(db_path(root))
    old = store_at_version(root, SEARCH_VERSION - 1)
    try:
        old.execute(
            "INSERT INTO sessions (id, source, created_at, updated_at, last_ts)"
            " VALUES ('old', 'generic', 't', 't', '2026-01-02T00:00:00Z')"
        )
        old.execute(
            "INSERT INTO raw_messages (session_id, ordinal, role, parts_json, timestamp)"
            " VALUES ('old', 1, 'user', ?, '2026-01-02T00:00:00Z')",
            (parts_to_json([TextPart("Shall we try Redis for sessions?")]),),
        )
        old.execute(
            "INSERT INTO compartments (session_id, sequence, start_message, end_message, title,"
            " p1, start_date, end_date, created_at) VALUES ('old', 0, 1, 1, 'Redis tried',"
            " 'Redis was tried and dropped', '2026-01-02', '2026-01-02', 't')"
        )
        old.execute(
            "INSERT INTO memories (category, content, normalized_hash, source_session_id,"
            " created_at, updated_at) VALUES ('DECISIONS', 'Sessions stay in Postgres', 'h',"
            " 'old', 't', 't')"
        )
    finally:
        old.close()
    with Store.open(root) as store:
        assert store.schema_version == len(MIGRATIONS)
        assert store.message_count("old") == 1
        assert store.connection.execute("SELECT author FROM sessions").fetchall() == [(None,)]
    assert_index_is_rebuilt_alike(path, least=10)
    with sqlite3.connect(path) as connection:
        kinds = connection.execute(
            "SELECT rowid & 3 FROM search_index WHERE search_index MATCH 'redis OR postgres'"
            " ORDER BY 1"
        ).fetchall()
    assert kinds == [(0,), (1,), (2,)]


def test_a_store_whose_index_is_declared_otherwise_is_refused(root):
    """The index table must be declared exactly as the migration declares it."""
    with Store.open(root, create=True):
        pass
    path = db_path(root)
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE search_index")
        connection.execute("CREATE VIRTUAL TABLE search_index USING fts5(title, body, tools)")
    with pytest.raises(StoreError, match="virtual table `search_index`"):
        Store.open(root)


def search_json(historian, *args):
    code, out, err = historian("search", "--json", *args)
    assert code == 0, err
    return json.loads(out)


def test_search_finds_compartments_facts_and_prompts_of_the_example(example, historian):
    found = search_json(historian, "cascade")
    assert set(found) == {"query", "matched", "hits"}
    assert found["matched"] == "all"
    kinds = {hit["kind"] for hit in found["hits"]}
    assert {"fact", "prompt", "compartment"} <= kinds
    for hit in found["hits"]:
        assert set(hit) == {
            "kind", "session", "start", "end", "date", "author", "title", "snippet", "expand",
            "score",
        }  # fmt: skip
        assert hit["session"] == SESSION
        assert hit["author"] == "you"
        assert "**cascade**" in hit["snippet"].lower()
    scores = [hit["score"] for hit in found["hits"]]
    assert scores == sorted(scores)


def test_each_hit_names_the_expand_command_that_shows_it(example, historian):
    (hit,) = search_json(historian, "--limit", "1", '"soft-deletable"')["hits"]
    command = hit["expand"].split()
    assert command[:2] == ["karni-historian", "expand"]
    code, out, err = historian(*command[1:])
    assert code == 0, err
    assert "soft-deletable" in out.lower()


def test_the_text_listing_has_a_snippet_and_a_command_per_hit(example, historian):
    code, out, err = historian("search", "--limit", "2", "soft", "delete")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 6
    assert lines[0].startswith(SESSION)
    assert "**soft**" in lines[1].lower() and "**delete**" in lines[1].lower()
    assert lines[2].strip().startswith("karni-historian expand --session " + SESSION)


def test_phrase_and_prefix_queries(example, historian):
    phrase = search_json(historian, '"hard delete"')["hits"]
    together = re.compile(r"\*\*hard\*\*\W+\*\*delete\*\*", re.IGNORECASE)
    assert phrase and all(together.search(hit["snippet"]) for hit in phrase)
    prefix = search_json(historian, "accountan*")["hits"]
    assert prefix and all("**accountan" in hit["snippet"].lower() for hit in prefix)
    assert search_json(historian, '"delete hard"')["hits"] == []


def test_a_question_with_no_row_holding_every_word_finds_rows_with_some(example, historian):
    found = search_json(historian, "did we ever cascade the tickets?")
    assert found["matched"] == "any"
    assert found["hits"] and "**tickets**" in found["hits"][0]["snippet"]


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("foo AND", "syntax error at its end"),
        ('"unterminated', "unterminated string"),
        ("nowhere: x", "no such column: nowhere"),
    ],
)
def test_a_query_fts5_cannot_read_is_one_line(example, historian, query, why):
    code, out, err = historian("search", query)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert why in err and "Traceback" not in err


def test_filters(example, historian):
    everything = search_json(historian, "--limit", "50", "events")["hits"]
    assert len(everything) > 3
    touched = search_json(historian, "--limit", "50", "--file", "apps/events/models.py", "events")
    assert 0 < len(touched["hits"]) < len(everything)
    assert search_json(historian, "--file", "apps/nothing.py", "events")["hits"] == []
    assert search_json(historian, "--session", SESSION[:8], "events")["hits"]
    assert search_json(historian, "--since", "2999-01-01", "events")["hits"] == []
    assert search_json(historian, "--since", "2000-01-01", "events")["hits"]
    assert search_json(historian, "--author", "you", "events")["hits"]
    assert search_json(historian, "--author", "somebody-else", "events")["hits"] == []
    assert len(search_json(historian, "--limit", "2", "events")["hits"]) == 2


def test_filters_are_checked(example, historian):
    assert historian("search", "--since", "yesterday", "x")[0] == 2
    assert historian("search", "--limit", "0", "x")[0] == 2
    assert historian("search", "--limit", "500", "x")[0] == 2
    code, _out, err = historian("search", "--file", "/elsewhere/x.py", "x")
    assert code == 2 and "outside the project" in err
    code, _out, err = historian("search", "--session", "nope", "x")
    assert code == 1 and "no session 'nope'" in err


def test_an_author_set_on_a_session_is_shown_and_filtered(example, historian):
    with Store.open(example) as store:
        store.connection.execute("UPDATE sessions SET author = 'Ada'")
    assert {hit["author"] for hit in search_json(historian, "events")["hits"]} == {"Ada"}
    assert search_json(historian, "--author", "ada", "events")["hits"]
    assert search_json(historian, "--author", "you", "events")["hits"] == []


def test_tool_output_is_searched_only_with_tools(root, historian):
    with Store.open(root, create=True) as store, store.transaction():
        store.ensure_session("s", "generic")
        parts = [TextPart("Looking at the config"), ToolPart("Bash", {"cmd": "cat"}, "quokka=1")]
        store.insert_messages("s", [(1, "assistant", parts_to_json(parts), None, "")])
    assert search_json(historian, "quokka")["hits"] == []
    (hit,) = search_json(historian, "--tools", "quokka")["hits"]
    assert hit["kind"] == "tool" and "**quokka**" in hit["snippet"]


def test_recency_breaks_a_tie(root, historian):
    with Store.open(root, create=True) as store, store.transaction():
        for name, day in (("old", "2020-01-01T00:00:00Z"), ("new", "2026-12-01T00:00:00Z")):
            store.ensure_session(name, "generic")
            parts = parts_to_json([TextPart("the walrus migration")])
            store.insert_messages(name, [(1, "user", parts, day, "")])
    hits = search_json(historian, "walrus")["hits"]
    assert [hit["session"] for hit in hits] == ["new", "old"]


def test_published_facts_and_compartments_are_found_at_once(root, historian):
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            store.insert_messages("s", [(1, "user", parts_to_json([TextPart("go")]), None, "")])
        store.publish(
            "s",
            [Compartment(1, 1, "Narwhal cache", p1="Built the narwhal cache", p2="n", p3="n")],
            [Fact("DECISIONS", "The narwhal cache stays")],
            RunRecord("s", "test", "ok"),
        )
    kinds = sorted(hit["kind"] for hit in search_json(historian, "narwhal")["hits"])
    assert kinds == ["compartment", "fact"]


def test_the_query_is_read_as_fts5_reads_it():
    assert fts_query("models.py capacity") == '"models.py" capacity'
    assert fts_query('"a phrase" cap* OR x') == '"a phrase" cap* OR x'
    assert fts_query("why nullable?") == 'why "nullable?"'
    assert fts_query("title: redis") == "title: redis"
    assert query_terms('"Hard Delete" cap* OR Élan') == [
        ("hard", False),
        ("delete", False),
        ("cap", True),
        ("elan", False),
    ]


def test_a_snippet_marks_the_words_and_cuts_around_them():
    text = " ".join(f"w{n}" for n in range(100)) + " the Capacity field"
    cut = snippet(text, [("capacity", False)], words=8)
    assert cut is not None and cut.startswith("…") and cut.endswith("**Capacity** field")
    assert snippet("nothing here", [("capacity", False)]) is None
    assert snippet("capacities grow", [("capac", True)]) == "**capacities** grow"


def test_the_local_user_is_you_or_their_git_name(example, historian):
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q"], cwd=example, check=True)
    subprocess.run(["git", "config", "user.name", "Grace Hopper"], cwd=example, check=True)
    assert search_json(historian, "--author", "grace hopper", "events")["hits"]
    assert search_json(historian, "--author", "YOU", "events")["hits"]
    assert search_json(historian, "--author", "Grace", "events")["hits"] == []


def test_hits_carry_no_control_characters_even_in_json(root, historian):
    with Store.open(root, create=True) as store, store.transaction():
        store.ensure_session("s", "generic")
        text = "the \x1b]52;c;cGF3bmVk\x07 okapi \x1b[2J moved\u202e"
        store.insert_messages("s", [(1, "user", parts_to_json([TextPart(text)]), None, "")])
    (hit,) = search_json(historian, "okapi")["hits"]
    assert "**okapi**" in hit["snippet"]
    assert not any(
        ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 or ch == "\u202e" for ch in hit["snippet"]
    )
