"""The built-in model-free historian ``local/extractive``."""

from __future__ import annotations

import itertools
import random

import pytest
from karni_historian.condense.boundaries import completed_arcs
from karni_historian.condense.chunk import build_chunk
from karni_historian.condense.compartment_xml import HistorianOutputError, parse, validate
from karni_historian.condense.extractive import HISTORIAN_NAME, summarize, summarize_parsed
from karni_historian.condense.extractive.scan import episodes
from karni_historian.model import Fact, Message, TextPart, ToolPart


def U(o: int, *parts) -> Message:
    return Message(o, "user", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))


def A(o: int, *parts) -> Message:
    return Message(o, "assistant", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))


def compartmentalize(chunk, messages, **options):
    """The built-in historian's output for ``chunk``, parsed and validated as a run does."""
    return validate(parse(summarize(chunk, messages)), chunk, **options)


def tool(name: str, call_id: str, output: str = "ok", **data) -> ToolPart:
    return ToolPart(name, data, output, call_id=call_id)


def session() -> list[Message]:
    read = tool("Read", "a", file_path="src/session/store.py")
    edit1 = tool("Edit", "b", file_path="src/session/store.py")
    edit2 = tool("Edit", "c", file_path="src/session/store.py")
    bash = tool(
        "Bash",
        "d",
        "1 failed",
        command="pytest tests/test_refresh.py",
        description="Run refresh tests",
    )
    edit3 = tool("Edit", "e", file_path="tests/test_refresh.py")
    return [
        U(1, "Please add a session store to src/session/store.py backed by PostgreSQL."),
        A(2, "I'll read the existing module first.", read),
        U(3, read),
        A(4, "We'll use psycopg with a connection pool instead of raw sockets.", edit1),
        U(5, edit1),
        U(6, "No, never store raw tokens in the sessions table. Always hash them with sha256."),
        A(7, "Understood. I changed the store to hash tokens before insert.", edit2),
        U(8, edit2),
        U(9, "ok commit it"),
        A(10, "Committed 3f2a9c1 with the hashed session store."),
        U(11, "Now fix the flaky refresh-token test in tests/test_refresh.py, it fails on CI."),
        A(12, bash),
        U(13, bash),
        A(
            14,
            "The test depends on wall-clock time; I froze the clock. "
            "The timeout default is 30 seconds.",
            edit3,
        ),
        U(15, edit3),
        U(16, "thanks"),
        A(17, "Done."),
    ]


def chunk_of(ms: list[Message], budget: int = 32_000):
    return build_chunk(
        ms, offset=ms[0].ordinal, eligible_end=ms[-1].ordinal + 1, budget_tokens=budget
    )


def test_name() -> None:
    assert HISTORIAN_NAME == "local/extractive"


def test_summary_snapshot_and_determinism(snapshot_text) -> None:
    ms = session()
    xml = summarize(chunk_of(ms), ms)
    assert summarize_parsed(chunk_of(ms), ms) == parse(xml)  # what a run validates
    assert xml == summarize(chunk_of(list(ms)), list(reversed(ms)))
    assert xml == snapshot_text


def test_episodes_split_where_the_objective_changes() -> None:
    ms = session()
    result = compartmentalize(chunk_of(ms), ms, arcs=completed_arcs(ms), force_keep=True)
    first, second = result.compartments
    assert (first.start, first.end, second.start, second.end) == (1, 10, 11, 17)
    assert first.title == "Add a session store to src/session/store.py backed by PostgreSQL"
    assert second.title.startswith("Fix the flaky refresh-token test")
    assert first.episode_type == "implementation,commit,decision"
    # The test failed and no run passed afterwards: tested work, not yet a fix.
    assert second.episode_type == "implementation,testing"


def test_tiers_condense_progressively_and_keep_commit_hashes() -> None:
    ms = session()
    first = compartmentalize(chunk_of(ms), ms, force_keep=True).compartments[0]
    assert len(first.p1) > len(first.p2) > len(first.p3) > len(first.p4) > 0
    for body in (first.p1, first.p2, first.p3, first.p4):
        assert "3f2a9c1" in body
    assert 'U: "No, never store raw tokens in the sessions table."' in first.p1
    assert "ok commit it" not in first.p1  # not a constraint: dropped
    assert first.p4 == "3f2a9c1, store.py"
    assert first.content == first.p1


def test_importance_follows_signals() -> None:
    ms = session()
    first, second = compartmentalize(chunk_of(ms), ms, force_keep=True).compartments
    # constraints +20, decision +15, one commit cluster +10, edits +5 over the base 35.
    assert first.importance == 85
    # edits +5 over the base 35; a failing run with no passing one after it is no fix.
    assert second.importance == 40


def test_facts_promoted_by_category() -> None:
    ms = session()
    facts = compartmentalize(chunk_of(ms), ms, force_keep=True).facts
    assert facts == [
        Fact("CONSTRAINTS", "Never store raw tokens in the sessions table."),
        Fact("PROJECT_RULES", "Always hash them with sha256."),
        Fact("ARCHITECTURE", "We'll use psycopg with a connection pool instead of raw sockets."),
    ]  # the agent's "The timeout default is 30 seconds." is a report, not a setting


def test_facts_are_never_requests_progress_reports_or_contradicted_choices() -> None:
    ms = [
        U(1, "Please record that decision: we decided to use Redis for the cache."),
        A(2, "I'll go with a plain dict instead of Redis for now."),
        A(3, "We decided to keep the cache in process, instead of Redis."),
        U(4, "No, the cache must be Redis, never an in-process dict."),
        A(5, "Switched to Redis as you asked."),
        U(6, "The cache timeout default is 300 seconds."),
        A(7, "Done: the retries limit is 5 by default."),
    ]
    facts = compartmentalize(chunk_of(ms), ms, force_keep=True).facts
    assert Fact("CONFIG_VALUES", "The cache timeout default is 300 seconds.") in facts
    contents = " ".join(f.content for f in facts)
    assert "Please record" not in contents  # a request
    assert "I'll go with" not in contents  # a progress report
    assert "keep the cache in process" not in contents  # contradicted by the user
    assert "retries limit" not in contents  # the agent's report of a value


def test_facts_land_in_sensible_categories() -> None:
    # One-off renames and instructions are not naming rules; a decision that says
    # "must" is architecture, and only the reason after "request:" is promoted.
    ms = [
        U(1, "Rename the total() helper in cart.py to subtotal()"),
        A(
            2,
            "Renamed `total()` to `subtotal()` in shop/cart.py.",
            tool("Edit", "a", file_path="c"),
        ),
        U(3, "Run the tests, then commit the rename."),
        A(4, "Committed 3f9a1c0 with the rename."),
        U(5, "Revert the discount change: we decided pricing must stay separate from the cart."),
        A(6, "Reverted it."),
        U(7, "Test modules are named after the module they test. Use snake_case for helpers."),
        A(8, "Noted."),
        U(9, "Every public helper must have a docstring."),
        A(10, "Will do. The save hook is called before every write, named in the docs."),
        U(11, "Signal handlers should be called on_<event>, like on_save."),
        A(12, "Noted."),
    ]
    facts = compartmentalize(chunk_of(ms), ms, force_keep=True).facts
    assert facts == [
        Fact("ARCHITECTURE", "We decided pricing must stay separate from the cart."),
        Fact("NAMING", "Test modules are named after the module they test."),
        Fact("NAMING", "Use snake_case for helpers."),
        Fact("NAMING", "Signal handlers should be called on_<event>, like on_save."),
        Fact("PROJECT_RULES", "Every public helper must have a docstring."),
    ]


def test_default_validation_discards_the_open_last_episode() -> None:
    ms = session()
    result = compartmentalize(chunk_of(ms), ms)
    assert [(c.start, c.end) for c in result.compartments] == [(1, 10)]
    assert result.discarded_last and result.unprocessed_from == 11
    assert result.facts == []  # unanchored facts wait for the re-run


def test_acknowledgements_and_corrections_do_not_split() -> None:
    ms = [
        U(1, "Add retries to the HTTP client."),
        A(2, "Added a retry loop."),
        U(3, "thanks!"),
        A(4, "You're welcome."),
        U(5, "Actually, use exponential backoff instead."),
        A(6, "Switched to exponential backoff."),
        U(7, "also log each retry"),
        A(8, "Logging added."),
    ]
    groups = episodes(chunk_of(ms), ms)
    assert len(groups) == 1
    only = compartmentalize(chunk_of(ms), ms).compartments[0]
    assert 'U: "Actually, use exponential backoff instead."' in only.p1


def test_new_request_starts_a_new_episode() -> None:
    ms = [
        U(1, "Rename the config module."),
        A(2, "Renamed config.py to settings.py."),
        U(3, "Write a README section about installation."),
        A(4, "Wrote the section."),
    ]
    result = compartmentalize(chunk_of(ms), ms, force_keep=True)
    assert [(c.start, c.end) for c in result.compartments] == [(1, 2), (3, 4)]
    assert [c.title for c in result.compartments] == [
        "Rename the config module",
        "Write a README section about installation",
    ]


def test_after_a_commit_a_follow_up_starts_a_new_phase() -> None:
    ms = [
        U(1, "Fix the login bug."),
        A(2, "Fixed and committed abc1234."),
        U(3, "also add a regression test"),
        A(4, "Added the test."),
    ]
    assert len(episodes(chunk_of(ms), ms)) == 2


def test_long_episode_closes_at_next_request() -> None:
    ms = [U(1, "Build the importer.")]
    for i in range(2, 90, 2):
        ms.append(A(i, f"Step {i} done."))
        ms.append(U(i + 1, "and continue with the next step"))
    groups = episodes(chunk_of(ms), ms)
    assert len(groups) >= 2
    assert all(len(g) <= 41 for g in groups)


def test_low_signal_episode_has_empty_anchor() -> None:
    ms = [U(1, "What does the parse function return?"), A(2, "It returns a list of rows.")]
    only = compartmentalize(chunk_of(ms), ms).compartments[0]
    assert only.importance == 25
    assert only.p4 == ""
    assert only.episode_type == "discussion"


def test_types_come_from_what_happened_not_from_words() -> None:
    # Only talking about a revert is no revert, an edit that is undone is one.
    ms = [U(1, "Revert the caching change, it broke the build."), A(2, "Reverted the cache layer.")]
    talk = compartmentalize(chunk_of(ms), ms).compartments[0]
    assert talk.episode_type == "discussion"
    do = tool("Edit", "e1", file_path="cache.py", old_string="x = 1", new_string="x = 2")
    undo = tool("Edit", "e2", file_path="cache.py", old_string="x = 2", new_string="x = 1")
    ms = [U(1, "Try a bigger cache in cache.py"), A(2, do), U(3, do), A(4, undo), U(5, undo)]
    undone = compartmentalize(chunk_of(ms), ms).compartments[0]
    assert "revert" in undone.episode_type
    assert undone.importance == 50  # a revert +10 and edits +5 over the base 35
    # A failing test run, an edit, then a passing run: a fix.
    fail = tool("Bash", "t1", "2 failed, 10 passed", command="pytest -q")
    edit = tool("Edit", "e3", file_path="cache.py", old_string="a", new_string="b")
    ok = tool("Bash", "t2", "12 passed", command="pytest -q")
    ms = [U(1, "Make the cache tests pass"), A(2, fail), U(3, fail), A(4, edit), U(5, edit)]
    ms += [A(6, ok), U(7, ok)]
    fixed = compartmentalize(chunk_of(ms), ms).compartments[0]
    assert fixed.episode_type == "debugging,testing"


def test_paraphrases_drop_narration_markdown_and_machine_paths() -> None:
    ms = [
        U(1, "Update the CLAUDE.md file to the latest state"),
        A(
            2,
            "I'll help you update the CLAUDE.md file to the latest state.\n"
            "I'll help you update the CLAUDE.md file to the latest state.\n"
            "## Acceptance Tests\n> - **GIVEN** a user, the page loads:\n"
            "Let me read /home/ana/.claude/commands/init.md first.\n"
            "Updated CLAUDE.md with the new test commands.",
            tool("Read", "r", file_path="/home/ana/.claude/commands/init.md"),
            tool("Glob", "g", pattern="**/*.md", path="docs/**"),
        ),
    ]
    only = compartmentalize(chunk_of(ms), ms).compartments[0]
    for tier in (only.p1, only.p2, only.p3):
        assert "I'll help" not in tier and "Let me" not in tier
        assert "/home/ana" not in tier and "##" not in tier and "**" not in tier
        assert ":." not in tier and "> -" not in tier
    assert "GIVEN a user, the page loads." in only.p1
    assert "Updated CLAUDE.md with the new test commands." in only.p1
    assert "Read " not in only.p1  # nothing read inside the project; no glob listed as a read
    assert only.title == "Update the CLAUDE.md file to the latest state"


def test_tool_only_and_headless_chunks() -> None:
    g = tool("Grep", "g", pattern="TODO")
    ms = [A(5, g), U(6, g), A(7, "Found three TODOs in the parser.")]
    c = build_chunk(ms, offset=5, eligible_end=8, budget_tokens=32_000)
    only = compartmentalize(c, ms).compartments[0]
    assert (only.start, only.end) == (5, 7)
    assert only.title == "Found three TODOs in the parser"
    r = tool("Read", "r", file_path="a/b.py")
    ms = [A(1, r), U(2, r)]
    only = compartmentalize(chunk_of(ms), ms).compartments[0]
    assert only.title == "Read b.py"  # what the tools did, in the past tense


def test_markup_in_text_round_trips() -> None:
    ms = [U(1, 'Make <Widget> render "a & b" correctly.'), A(2, "Fixed the escaping of <Widget>.")]
    assert summarize_parsed(chunk_of(ms), ms) == parse(summarize(chunk_of(ms), ms))
    only = compartmentalize(chunk_of(ms), ms).compartments[0]
    assert only.title == 'Make <Widget> render "a & b" correctly'
    assert "<Widget>" in only.p1


def test_empty_chunk_is_rejected_by_the_validator() -> None:
    ms = [U(1, "hi")]
    empty = build_chunk(ms, offset=2, eligible_end=5, budget_tokens=1000)
    assert parse(summarize(empty, ms)).compartments == []
    with pytest.raises(HistorianOutputError, match="no usable compartments"):
        compartmentalize(empty, ms)


def test_property_random_sessions_always_validate() -> None:
    rng = random.Random(20)
    texts = [
        "Add a feature to the parser.",
        "ok",
        "thanks",
        "No, don't touch the CLI.",
        "Now write docs for the API.",
        "also handle errors",
        "Refactor the store module.",
        "Committed 1a2b3c4d with tests.",
        "We'll use sqlite instead of json files.",
        "Set the timeout to 30 seconds.",
    ]
    for _ in range(60):
        ms: list[Message] = []
        for ordinal in range(1, rng.randint(2, 60)):
            kind = rng.random()
            if kind < 0.35:
                ms.append(U(ordinal, rng.choice(texts)))
            elif kind < 0.75:
                ms.append(A(ordinal, rng.choice(texts)))
            elif kind < 0.9:
                ms.append(A(ordinal, tool("Edit", f"c{ordinal}", file_path=f"f{ordinal % 4}.py")))
            else:
                ms.append(Message(ordinal, "system", (TextPart("sys"),)))
        c = chunk_of(ms, budget=rng.choice([200, 32_000]))
        assert summarize_parsed(c, ms) == parse(summarize(c, ms))
        if c.is_empty:
            continue
        result = compartmentalize(c, ms, force_keep=True)
        spans = [(x.start, x.end) for x in result.compartments]
        assert spans[0][0] == c.start and spans[-1][1] == c.end
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(spans))
        assert all(1 <= x.importance <= 100 and x.p1 for x in result.compartments)


def test_one_prompt_splits_where_commits_todos_and_the_edited_folder_change() -> None:
    ms = [U(1, "Tidy up the parser and then the printer")]
    for n in range(9):
        folder = "parser" if n < 4 else "printer"
        edit = tool("Edit", f"e{n}", file_path=f"{folder}/m{n}.py", old_string="a", new_string="b")
        ms += [A(2 + 2 * n, edit), U(3 + 2 * n, edit)]
    groups = episodes(chunk_of(ms), ms)
    assert [(g[0].start, g[-1].end) for g in groups] == [(1, 9), (10, 19)]
    todo = tool(
        "TodoWrite",
        "t",
        todos=[
            {"content": "Tidy the parser", "status": "completed"},
            {"content": "Tidy the printer", "status": "in_progress"},
        ],
    )
    ms = [U(1, "Tidy up the parser and then the printer")]
    ms += [A(o, f"Working on step {o} of the parser.") for o in range(2, 10)]
    ms += [A(10, todo), U(11, todo)]
    for o in range(12, 24, 2):
        read = tool("Read", f"r{o}", file_path="printer/m.py")
        ms += [A(o, read), U(o + 1, read)]
    only = compartmentalize(chunk_of(ms), ms, force_keep=True).compartments
    assert [(c.start, c.end, c.title) for c in only] == [
        (1, 11, "Tidy up the parser and then the printer"),
        (12, 23, "Tidy the printer"),  # named by the todo item in progress
    ]


def test_each_subagent_taking_over_starts_a_phase_named_by_its_task() -> None:
    def reads(first: int, folder: str, owner: str | None) -> list[Message]:
        found = []
        for o in range(first, first + 10, 2):
            meta = {"subagent": owner} if owner else None
            read = ToolPart("Read", {"file_path": f"{folder}/f{o}.ts"}, "x", f"r{o}", False, meta)
            found += [A(o, read), U(o + 1, read)]
        return found

    tasks = [
        ToolPart("Task", {"description": d, "prompt": f"{d} for the todo app."}, "done", call_id=c)
        for c, d in (("t1", "Create data models"), ("t2", "Build the components"))
    ]
    ms = [U(1, "Build a todo app"), *reads(2, "docs", None), A(12, *tasks)]
    ms += [A(13, "I'll work in types/ now."), *reads(14, "types", "t1")]
    ms += [A(24, "I'll work in components/ now."), *reads(25, "components", "t2")]
    ms += [U(35, *tasks), A(36, "Both parts are in place.")]
    only = compartmentalize(chunk_of(ms), ms, force_keep=True).compartments
    assert [(c.start, c.title) for c in only] == [
        (1, "Build a todo app"),
        (13, "Create data models"),  # the subagent's words before its first call are its own
        (24, "Build the components"),
    ]


def test_shorter_tiers_leave_sentences_out_instead_of_cutting_them() -> None:
    said = [
        f"Changed handler number {n} so that it retries {n} times before failing."
        for n in range(40)
    ]
    edit = tool("Edit", "e", file_path="app/handlers.py", old_string="a", new_string="b")
    commit = tool("Bash", "c", "[main 1b2c3d4] retries", command='git commit -m "retries"')
    ms = [U(1, "Make every handler retry"), A(2, " ".join(said), edit), U(3, edit)]
    ms += [A(4, commit), U(5, commit)]
    only = compartmentalize(chunk_of(ms), ms, force_keep=True).compartments[0]
    for tier in (only.p1, only.p2, only.p3):
        assert not tier.endswith("…"), tier
        assert "1b2c3d4" in tier
    assert len(only.p1) <= 1600 and len(only.p2) <= 700 and len(only.p3) <= 260
    kept = [s for s in said if s in only.p1]
    assert 0 < len(kept) < len(said)


def test_lower_case_search_of_ascii_text_answers_as_the_case_insensitive_pattern() -> None:
    import re

    from karni_historian.condense.extractive import sentences

    rng = random.Random(7)
    pieces = [
        "We DECIDED", "we'll Use", "Don't", "NEVER", "always", "From Now On", "MUST",
        "rolled back", "Fixes", "crashed", "TIMEOUT", "max", "Named After", "snake_case",
        "PyTest", "specs", "Refactored", "passing", "decide_d", "undecided", "x", "-", "'",
        "ſ", "K", "İ", "é", "  ", ".", "\n",
    ]  # fmt: skip
    for _ in range(3000):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", "_"]) for _ in range(6))
        for name in sentences._WORD_PATTERNS:
            source, flags = sentences._PATTERNS[name]
            expected = re.compile(source, flags).search(text) is not None
            assert sentences.has(name, text) is expected, (name, text)
        source, flags = sentences._PATTERNS["words"]
        words = tuple(w.lower() for w in re.compile(source, flags).findall(text))
        assert sentences.words_of(text) == words, text


def test_sentences_end_at_line_breaks_and_after_closing_punctuation() -> None:
    """The same pieces as splitting at ``(?<=[.!?])\\s+|\\n+``, whitespace collapsed."""
    import re

    from karni_historian.condense.extractive.sentences import split_sentences

    boundary = re.compile(r"(?<=[.!?])\s+|\n+")
    rng = random.Random(3)
    pieces = ["a", "b", ".", "!", "?", " ", "\n", "\t", "\r", "\u2028", "\x1c", "\xa0", "x.y"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        expected = [" ".join(p.split()) for p in boundary.split(text) if p.split()]
        assert split_sentences(text) == expected, repr(text)
    assert split_sentences("Done. Now the tests!\n- one\n\nIs it? yes") == [
        "Done.",
        "Now the tests!",
        "- one",
        "Is it?",
        "yes",
    ]


def _literal_prefixes(sequence) -> set[str]:
    """Strings one of which starts every match of a parsed pattern (its literal prefixes)."""
    from re import _constants as ops

    found = {""}
    for op, argument in sequence:
        if op is ops.LITERAL:
            found = {prefix + chr(argument) for prefix in found}
        elif op is ops.AT and found == {""}:
            continue  # a leading boundary or anchor matches no character
        elif op is ops.SUBPATTERN:
            found = {p + q for p in found for q in _literal_prefixes(argument[3])}
        elif op is ops.BRANCH:
            found = {p + q for p in found for alt in argument[1] for q in _literal_prefixes(alt)}
        else:
            return found
    return found


def _sound(literals, source) -> bool:
    """Whether every match of ``source`` contains one of ``literals``."""
    from re import _parser

    prefixes = _literal_prefixes(_parser.parse(source))
    return "" not in prefixes and all(any(w in p for w in literals) for p in prefixes)


def test_every_match_of_a_word_pattern_holds_one_of_its_literals() -> None:
    from karni_historian.condense import message_text
    from karni_historian.condense.extractive import sentences

    assert set(sentences._LITERALS) == set(sentences._WORD_PATTERNS)
    for name, literals in sentences._LITERALS.items():
        assert _sound(literals, sentences._PATTERNS[name][0]), name
    assert not _sound(("decid",), sentences._PATTERNS["decision"][0])  # the check can fail
    verb = message_text._regex("verb").pattern
    assert _sound(message_text._VERB_LITERALS, verb)


def test_the_path_pattern_shortens_what_the_look_behind_first_pattern_did() -> None:
    import re

    from karni_historian.condense import prose

    before = re.compile(r"(?<![\w.])(?:~|/)(?:[\w.@+-]+/)+([\w.@+-]+)")
    rng = random.Random(5)
    pieces = ["/", "~", "a", "b.c", "_", ".", " ", "-", "@", "é", "x/", "(", "9", "~/"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 14)))
        assert prose._re("path").sub(r"\1", text) == before.sub(r"\1", text), text


def test_commits_are_pulled_from_text_as_without_the_verb_look(monkeypatch) -> None:
    from karni_historian.condense import message_text

    rng = random.Random(9)
    pieces = ["Committed", "MERGED", "rebasing", "cherry-pick", "commits", "deadbeef1", "(",
              ")", "`abc1234`", " ", ",", "ſ", "İ", "merge", "0123456789abc", "x", "."]  # fmt: skip
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9))) for _ in range(3000)]
    looked = [message_text.extract_commits(text) for text in texts]
    monkeypatch.setattr(message_text, "_VERB_LITERALS", ("",))  # every text goes on to the patterns
    assert looked == [message_text.extract_commits(text) for text in texts]
    assert any(hashes for _text, hashes in looked)


def test_polite_openings_and_emphasis_go_as_the_patterns_take_them() -> None:
    from karni_historian.condense import prose
    from karni_historian.condense.extractive.sentences import COMPILED

    rng = random.Random(13)
    pieces = ["please ", "Please,", "OK, ", "ok", "can you ", "so, ", "help me to ", "  ", "fix",
              "**", "*", "__", "_", "```py", "``", "`", "x", " ", "\t", "."]  # fmt: skip
    polite, emphasis = COMPILED.polite, prose._re("emphasis")
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 8)))
        assert COMPILED.polite.sub("", text) == (
            text[m.end() :] if (m := polite.match(text)) else text
        ), text
        marked = "**" in text or "__" in text or "```" in text
        assert (emphasis.search(text) is not None) == marked, text


def test_a_sentence_two_categories_take_is_promoted_once_under_the_first() -> None:
    """A prohibition that also names a setting is one constraint, not a second config fact."""
    ms = [
        U(1, "Never set the cache timeout default to 0 seconds: it disables the cache."),
        A(2, "Understood.", tool("Edit", "a", file_path="settings.py")),
    ]
    facts = compartmentalize(chunk_of(ms), ms, force_keep=True).facts
    said = [f for f in facts if "cache timeout default" in f.content]
    assert [f.category for f in said] == ["CONSTRAINTS"]


def test_a_fact_stored_under_two_categories_is_listed_once() -> None:
    """Stores written before facts were promoted once still read as one line per fact."""
    from karni_historian.brief.lines import by_priority
    from karni_historian.store.records import FactRecord

    facts = [
        FactRecord("CONFIG_VALUES", "Keep the default manager unfiltered."),
        FactRecord("NAMING", "Helpers are snake_case."),
        FactRecord("CONSTRAINTS", "Keep the default  manager unfiltered."),
    ]
    assert [(f.category, f.content) for f in by_priority(facts)] == [
        ("CONSTRAINTS", "Keep the default  manager unfiltered."),
        ("NAMING", "Helpers are snake_case."),
    ]
