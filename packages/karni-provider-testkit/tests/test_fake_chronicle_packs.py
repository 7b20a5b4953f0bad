"""The double's context packs and knowledge: selection, ordering, memory groups, privacy."""

from __future__ import annotations

import json
import re

import pytest


def reply(fake_chronicle, *arguments, cwd):
    result = fake_chronicle.run(*arguments, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.decode("utf-8"))


@pytest.fixture
def store(fake_chronicle, tmp_path):
    return fake_chronicle.create_store(tmp_path)


def test_limit_keeps_the_most_recent_turns_that_touched_the_path_oldest_first(
    fake_chronicle, store
):
    store.add_session()
    for n in range(12):
        files = {"a.py": (n, 0)} if n % 2 == 0 else {"b.py": (1, 1)}
        store.add_prompt(f"turn {n}", files)
    five = reply(fake_chronicle, "context", "a.py", "--json", "--limit", "3", cwd=store.root)
    assert [p["text"] for p in five["prompts"]] == ["turn 6", "turn 8", "turn 10"]
    default = reply(fake_chronicle, "context", "a.py", "--json", cwd=store.root)
    assert [p["text"] for p in default["prompts"]] == [f"turn {n}" for n in range(0, 12, 2)]


def test_turns_are_ordered_by_event_id_not_by_fixture_order(fake_chronicle, store):
    session = store.add_session()
    store.add_prompt("later", {"a.py": (1, 0)}, session=session, ts="2026-07-21T10:00:00.000Z")
    store.add_prompt("earlier", {"a.py": (1, 0)}, session=session, ts="2026-07-20T10:00:00.000Z")
    pack = reply(fake_chronicle, "context", "a.py", "--json", cwd=store.root)
    assert [p["text"] for p in pack["prompts"]] == ["earlier", "later"]


def test_a_directory_sums_churn_and_binary_wins(fake_chronicle, store):
    store.add_session()
    store.add_prompt("touch two files", {"src/a.py": (3, 1), "src/b.py": (4, 2), "c.py": (9, 9)})
    store.add_prompt("add a logo", {"src/logo.png": "bin", "src/a.py": (1, 0)})
    pack = reply(fake_chronicle, "context", "src", "--json", cwd=store.root)
    assert [p["churn"] for p in pack["prompts"]] == ["+7 −3", "bin"]
    assert '1. 2026-07-20 09:01  +7 −3  — "touch two files"' in pack["markdown"]
    only = reply(fake_chronicle, "context", "src/a", "--json", cwd=store.root)
    assert only["empty"] is True  # a pathspec, not a prefix: src/a does not cover src/a.py


def test_prompt_text_in_markdown_is_collapsed_and_cut_at_100_chars(fake_chronicle, store):
    store.add_session()
    text = "word " * 30 + "\n\n  tail"
    store.add_prompt(text, {"a.py": (1, 0)})
    store.add_prompt("   ", {"a.py": (1, 0)})
    pack = reply(fake_chronicle, "context", "a.py", "--json", cwd=store.root)
    assert pack["prompts"][0]["text"] == text  # the JSON keeps the raw body
    assert pack["prompts"][1]["text"] is None  # blank text is null
    lines = pack["markdown"].split("\n")
    first = lines[7]
    quoted = re.search(r'"(.*)"$', first).group(1)
    assert len(quoted) == 100 and quoted.endswith("…")
    assert quoted == " ".join(text.split())[:99] + "…"
    assert lines[8] == "2. 2026-07-20 09:02  +1 −0  — (prompt text unavailable)"


def test_a_private_session_hides_its_prompts_and_knowledge(fake_chronicle, store):
    hidden = store.add_session(private=True)
    store.add_prompt("secret plan", {"a.py": (2, 0)}, session=hidden)
    store.add_knowledge("decision", "We decided to keep the secret plan")
    pack = reply(fake_chronicle, "context", "a.py", "--json", cwd=store.root)
    assert pack["prompts"] == [
        {
            "eventId": pack["prompts"][0]["eventId"],
            "ts": None,
            "session": None,
            "text": None,
            "churn": "+2 −0",
        }
    ]
    assert pack["knowledge"] == []
    assert pack["markdown"].split("\n")[7:11] == [
        "1. unknown  +2 −0  — (prompt text unavailable)",
        "",
        "---",
        "_Derived from the Chronicle record on this machine. Chronicle never calls a model;",
    ]
    assert reply(fake_chronicle, "knowledge", "--json", cwd=store.root)["count"] == 0


def test_knowledge_comes_in_scan_order_one_block_per_session(fake_chronicle, store):
    first = store.add_session(ts="2026-07-01T09:00:00.000Z")
    second = store.add_session(ts="2026-07-02T09:00:00.000Z")
    store.add_knowledge(
        "decision",
        "Going with plan B",
        session=second,
        event_id="evt_B1",
        ts="2026-07-02T10:00:00.000Z",
    )
    store.add_knowledge(
        "decision",
        "Going with plan A",
        session=first,
        event_id="evt_A1",
        ts="2026-07-01T10:00:00.000Z",
    )
    store.add_knowledge(
        "decision",
        "Going with plan A2 days later",
        session=first,
        event_id="evt_A2",
        ts="2026-07-05T10:00:00.000Z",
    )
    items = reply(fake_chronicle, "knowledge", "--json", cwd=store.root)["items"]
    assert [item["text"] for item in items] == [
        "Going with plan A",
        "Going with plan A2 days later",  # newer than plan B, but its session is older
        "Going with plan B",
    ]


def test_knowledge_is_deduplicated_collapsed_and_cut_at_200(fake_chronicle, store):
    session = store.add_session()
    store.add_knowledge("decision", "Let's use   httpx", session=session, event_id="evt_1")
    store.add_knowledge("decision", "let's USE httpx", session=session, event_id="evt_2")
    store.add_knowledge("todo", "let's use httpx", session=session, event_id="evt_3")
    store.add_knowledge("todo", "TODO " + "x" * 300, session=session, event_id="evt_4")
    items = reply(fake_chronicle, "knowledge", "--json", cwd=store.root)["items"]
    assert [(item["kind"], item["eventId"]) for item in items] == [
        ("decision", "evt_1"),
        ("todo", "evt_3"),
        ("todo", "evt_4"),
    ]
    assert items[0]["text"] == "Let's use httpx"
    assert len(items[2]["text"]) == 200 and items[2]["text"].endswith("…")
    todos = reply(fake_chronicle, "knowledge", "--type", "todo", "--json", cwd=store.root)
    assert todos["count"] == 2


def test_memory_groups_order_and_filters(fake_chronicle, store):
    session = store.add_session()
    store.add_prompt("shape it", {"a.py": (1, 0)})
    add = store.add_memory
    add("todo", "TODO: done already", status="resolved")
    add("todo", "TODO: still open", status="open")
    add("failed_approach", "Tried a global lock", memory_id="mem_000000000001")
    add("decision", "Rejected: use a cron job", status="rejected", memory_id="mem_ffffffffffff")
    add("decision", "Use a queue", status="active", memory_id="mem_100000000000")
    add("decision", "Maybe use Kafka?", status="candidate")
    add("constraint", "Rejected constraint", status="rejected")
    add("known_issue", "Flaky on CI", status="open")
    add("known_issue", "Fixed leak", status="resolved")
    add("requirement", "Must be fast")
    add("current_work", "Working on it")
    add("decision", "Unrelated decision", sessions=["ses_OTHER"])
    add("decision", "   Spaced \n  out   content  " + "y" * 300, memory_id="mem_200000000000")
    pack = reply(fake_chronicle, "context", "a.py", "--json", cwd=store.root)
    body = pack["markdown"].split("## Why this file looks the way it does (Project Memory)\n\n")[1]
    long_line = "- " + ("Spaced out content " + "y" * 300)[:239] + "…"
    expected = [
        "**Active decisions**",
        "- Use a queue",
        long_line,
        "",
        "**Known issues**",
        "- Flaky on CI",
        "",
        "**Failed / superseded approaches (do NOT repeat)**",
        "- Rejected: use a cron job",
        "- Tried a global lock",
        "",
        "**Open TODOs**",
        "- TODO: still open",
        "",
        "",
        "---",
    ]
    assert body.split("\n")[: len(expected)] == expected
    assert session in {p["session"] for p in pack["prompts"]}


def test_memory_with_only_unrendered_kinds_prints_neither_block(fake_chronicle, store):
    store.add_session()
    store.add_prompt("shape it", {"a.py": (1, 0)})
    store.add_knowledge("decision", "Going with the simple plan")
    store.add_memory("requirement", "Must be simple")
    pack = reply(fake_chronicle, "context", "a.py", "--json", cwd=store.root)
    assert pack["knowledge"] != []
    assert "## " not in pack["markdown"].split("## What shaped this file")[1]


def test_the_minimal_example(fake_chronicle, store):
    store.add_session()
    text = "let's use JWT — add token auth to auth.js\nTODO: revisit later for refresh rotation"
    store.add_prompt(text, {"auth.js": (1, 0)}, ts="2026-07-14T10:00:00.000Z")
    store.add_knowledge("decision", "let's use JWT — add token auth to auth.js")
    store.add_knowledge("todo", "TODO: revisit later for refresh rotation")
    store.add_memory("decision", "let's use JWT — add token auth to auth.js")
    store.add_memory("todo", "TODO: revisit later for refresh rotation", status="open")
    pack = reply(fake_chronicle, "context", "auth.js", "--json", cwd=store.root)
    assert (pack["empty"], len(pack["prompts"])) == (False, 1)
    assert len(pack["knowledge"]) >= 1
    markdown = pack["markdown"]
    for needle in (
        "# Context for auth.js",
        "let's use JWT",
        "Why this file looks the way it does",
        "Active decisions",
        "never calls a model",
    ):
        assert needle in markdown
    assert (
        "1. 2026-07-14 10:00  +1 −0  — \"let's use JWT — add token auth to auth.js TODO: "
        'revisit later for refresh rotation"'
    ) in markdown
    assert "**Active decisions**\n- let's use JWT — add token auth to auth.js\n" in markdown
    assert "**Open TODOs**\n- TODO: revisit later for refresh rotation\n" in markdown
