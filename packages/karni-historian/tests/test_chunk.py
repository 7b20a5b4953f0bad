"""Chunk building and the protected tail (docs/historian/chunk.md)."""

from __future__ import annotations

import pytest
from karni_historian.condense.boundaries import (
    completed_arcs,
    fence_arcs,
    fence_boundary,
    protected_tail_start,
    wrapup_boundary,
)
from karni_historian.condense.chunk import (
    TRUNCATION_MARKER,
    Chunk,
    ChunkCoverageError,
    ChunkLine,
    build_chunk,
    check_coverage,
)
from karni_historian.condense.message_text import (
    is_meaningful_user_message,
    meaningful_user_text,
    tool_summary,
)
from karni_historian.model import Message, TextPart, ToolPart

T = TextPart


def U(o: int, *parts) -> Message:
    return Message(o, "user", tuple(T(p) if isinstance(p, str) else p for p in parts))


def A(o: int, *parts) -> Message:
    return Message(o, "assistant", tuple(T(p) if isinstance(p, str) else p for p in parts))


def chunk(messages, *, offset=1, eligible_end=1000, budget=32_000, **kw) -> Chunk:
    return build_chunk(
        messages, offset=offset, eligible_end=eligible_end, budget_tokens=budget, **kw
    )


def test_noise_and_tool_results_merge() -> None:
    ms = [
        U(1, "<system-reminder>ignore</system-reminder>"),
        A(2, "I will inspect"),
        U(3, ToolPart("read", {"path": "src/lib.rs"})),
        U(4, "continue"),
    ]
    c = chunk(ms)
    assert c.text == "[1-3] A: I will inspect / TC: read(src/lib.rs)\n[4] U: continue"
    assert c.tool_only_ranges == ()
    assert (c.start, c.end, c.has_more) == (1, 4, False)


def test_tool_only_block_from_offset() -> None:
    ms = [U(1, "before"), U(2, ToolPart("read", {"path": "src/lib.rs"})), U(3, "after")]
    c = chunk(ms, offset=2)
    assert c.text == "[2] A: TC: read(src/lib.rs)\n[3] U: after"
    assert c.tool_only_ranges == ((2, 2),)


def test_commit_clusters() -> None:
    ms = [
        U(1, "go"),
        A(2, "committed abcdef1 with fix"),
        U(3, "again"),
        A(4, "commit abcdef2 with more"),
    ]
    c = chunk(ms)
    assert c.text == (
        "[1] U: go\n[2] A: commits: abcdef1 committed with fix\n[3] U: again\n"
        "[4] A: commits: abcdef2 commit with more"
    )
    assert c.commit_clusters == 2
    assert c.lines[1].commits == ("abcdef1",)


def test_at_most_five_commits() -> None:
    c = chunk([A(1, "committed 1111111 2222222 3333333 4444444 5555555 6666666 with cap")])
    assert (
        c.text == "[1] A: commits: 1111111, 2222222, 3333333, 4444444, 5555555 committed with cap"
    )
    assert c.commit_clusters == 1


def test_commit_text_cleanup() -> None:
    assert chunk([A(1, "committed (abcdef1) , , cleanup")]).text == (
        "[1] A: commits: abcdef1 committed, cleanup"
    )


def test_noise_absorbed_into_next_block() -> None:
    ms = [U(1, "hello"), Message(2, "user", (T(""),)), A(3, "done")]
    assert chunk(ms).text == "[1] U: hello\n[2-3] A: done"


def test_adjacent_tool_only_messages() -> None:
    ms = [
        A(1, ToolPart("read", {"path": "one"})),
        A(2, ToolPart("read", {"path": "two"})),
        U(3, "narrative"),
    ]
    c = chunk(ms)
    assert c.text == "[1-2] A: TC: read(one) / TC: read(two)\n[3] U: narrative"
    assert c.tool_only_ranges == ((1, 2),)


def t14_messages() -> list[Message]:
    return [
        U(1, "Delegate and ask about mode."),
        A(
            2,
            ToolPart("peer_send", {"agent": "Ada", "message": "Check the parser."}, "sent"),
            "I am coordinating.",
            ToolPart("ask", {"question": "Which mode?", "options": ["Strict", "Fast"]}, "Strict"),
            ToolPart("read", {"path": "README.md"}, "# readme"),
        ),
        A(
            3,
            ToolPart("read", {"path": "README.md"}),
            ToolPart("peer_send", {"agent": "Lin", "message": "Review tests."}),
        ),
    ]


def test_expand_tools_in_chunk() -> None:
    assert chunk(t14_messages()).text == (
        "[1] U: Delegate and ask about mode.\n[2-3] A: TC: PM to Ada: Check the parser. / "
        "I am coordinating. / TC: Asked: Which mode? [options: Strict / Fast]  → Strict / "
        "TC: read(README.md) / TC: PM to Lin: Review tests."
    )


def test_without_expansions_tools_are_compact_summaries() -> None:
    c = chunk(t14_messages(), expand_tools={})
    assert (
        c.text.split("\n")[1] == "[2-3] A: I am coordinating. / TC: read(README.md) / TC: peer_send"
    )


def test_expand_tools_false_and_overrides() -> None:
    off = chunk(t14_messages(), expand_tools={"ask": "Q=${input.question}", "peer_send": False})
    assert off.text.split("\n")[1] == (
        "[2-3] A: I am coordinating. / TC: Q=Which mode? / TC: read(README.md) / TC: peer_send"
    )


def test_invalid_template_falls_back_to_summary() -> None:
    c = chunk([A(1, ToolPart("ask", {"question": "q"}))], expand_tools={"ask": "${"})
    assert c.text == "[1] A: TC: ask"


def test_tool_summary_rules() -> None:
    assert tool_summary(ToolPart("bash", {"description": "Run the\ntests", "command": "x"})) == (
        "TC: Run the tests"
    )
    assert tool_summary(ToolPart("bash", {}, metadata={"description": "meta"})) == "TC: meta"
    assert tool_summary(ToolPart("edit", {"filePath": "a.py", "path": "b"})) == "TC: edit(a.py)"
    assert tool_summary(ToolPart("Read", {"file_path": "/x/y.py"})) == "TC: Read(/x/y.py)"
    assert tool_summary(ToolPart("grep", {"pattern": "p" * 70})) == "TC: grep(" + "p" * 60 + "…)"
    assert tool_summary(ToolPart("lsp", {"symbol": "s" * 70})) == "TC: lsp(" + "s" * 70 + ")"
    assert tool_summary(ToolPart("db", {"action": "drop", "module": "m"})) == "TC: db(m)"
    assert tool_summary(ToolPart("x", {"path": 3})) == "TC: x"
    assert tool_summary(ToolPart("x", "not a dict")) == "TC: x"


def test_text_parts_drop_tool_summaries_and_collapse_whitespace() -> None:
    ms = [
        A(1, "  two\n\nlines  ", ToolPart("read", {"path": "p"}), T("ignored", ignored=True), " ")
    ]
    assert chunk(ms).text == "[1] A: two lines"


def test_user_text_cleanup() -> None:
    m = U(
        1,
        "<system-reminder>a\nb</system-reminder> real  ask <!-- OMO_INTERNAL_INITIATOR -->",
        "[SYSTEM DIRECTIVE: MAGIC-CONTEXT do things]",
        T("synthetic", ignored=True),
    )
    assert meaningful_user_text(m) == "real ask"
    assert chunk([m]).text == "[1] U: real ask"
    assert not is_meaningful_user_message(U(2, "<system-reminder>x</system-reminder>"))
    assert not is_meaningful_user_message(A(3, "assistant text"))
    assert meaningful_user_text(A(3, "assistant text")) == ""


def test_system_and_empty_messages_are_noise() -> None:
    ms = [Message(1, "system", (T("sys"),)), A(2), U(3, "q"), Message(4, "tool", (T("out"),))]
    c = chunk(ms)
    assert c.text == "[1-3] U: q\n[4] T: out"


def test_trailing_noise_is_not_claimed() -> None:
    c = chunk([U(1, "q"), A(2)])
    assert (c.text, c.end, c.has_more) == ("[1] U: q", 1, False)


def test_commits_need_a_commit_verb_and_only_for_assistants() -> None:
    assert chunk([A(1, "build deadbeef1 failed")]).text == "[1] A: build deadbeef1 failed"
    assert chunk([U(1, "committed abcdef1")]).text == "[1] U: committed abcdef1"
    # Hash-only text keeps the original when stripping would leave nothing... except the verb.
    assert chunk([A(1, "merged `ABCDEF12`")]).text == "[1] A: commits: abcdef12 merged"


def test_commits_merge_across_a_block_and_cluster_once() -> None:
    ms = [
        A(1, "committed aaaaaaa"),
        A(2, "committed bbbbbbb and aaaaaaa"),
        U(3, "ok"),
        A(4, "rebased ccccccc"),
    ]
    c = chunk(ms)
    assert c.lines[0].text == "[1-2] A: commits: aaaaaaa, bbbbbbb committed / committed and"
    assert c.commit_clusters == 2


def test_claude_code_tool_results_are_not_shown_twice() -> None:
    call = ToolPart("Read", {"file_path": "a.py"}, "content", call_id="toolu_1")
    result = ToolPart("Read", {"file_path": "a.py"}, "content", call_id="toolu_1")
    c = chunk([U(1, "look"), A(2, call), U(3, result), A(4, "done")])
    assert c.text == "[1] U: look\n[2-4] A: TC: Read(a.py) / done"
    # With text on the call message, the summary comes from the result instead.
    c = chunk([U(1, "look"), A(2, "reading", call), U(3, result)])
    assert c.text == "[1] U: look\n[2-3] A: reading / TC: Read(a.py)"


def test_budget_stop_and_has_more() -> None:
    ms = [U(1, "a" * 35), A(2, "b" * 35), U(3, "c" * 35)]
    # Each line "[n] X: " + 35 chars = 42 chars = 12 tokens; "\n" is 1 token: 12 + 13 + 13.
    full = chunk(ms, budget=1000)
    assert full.token_estimate == 37 and not full.has_more  # estimate of the joined text
    c = chunk(ms, budget=37)
    assert c.text.count("\n") == 1 and c.end == 2 and c.has_more
    c = chunk(ms, budget=38)
    assert c.end == 3 and not c.has_more
    first_only = chunk(ms, budget=5)  # the first block is always emitted, then truncated
    assert first_only.end == 1 and first_only.has_more and first_only.truncated


def test_has_more_when_range_is_cut_by_eligible_end() -> None:
    ms = [U(1, "a"), A(2, "b"), U(3, "c"), A(4, "d")]
    c = chunk(ms, eligible_end=3)
    assert (c.text, c.end, c.has_more) == ("[1] U: a\n[2] A: b", 2, False)


def test_preflight_truncation() -> None:
    c = chunk([U(1, "x" * 1000)], budget=100)
    assert c.truncated
    assert c.text.endswith(TRUNCATION_MARKER)
    assert c.token_estimate <= 100
    longer = c.text[: len(c.text) - len(TRUNCATION_MARKER)] + "x" + TRUNCATION_MARKER
    assert -(-len(longer) * 2 // 7) > 100


def test_empty_chunk() -> None:
    c = chunk([U(1, "a")], offset=2)
    assert (c.text, c.start, c.end, c.is_empty, c.has_more) == ("", 2, 1, True, False)
    check_coverage(c)


def test_coverage_check() -> None:
    ms = [U(1, "a"), A(2, "b"), A(4, "d"), U(5, "e")]
    c = chunk(ms)
    with pytest.raises(ChunkCoverageError) as info:
        check_coverage(c)
    assert str(info.value) == "chunk omits raw message 3 while still claiming coverage through 5"
    bad = Chunk(
        text="",
        start=1,
        end=5,
        has_more=False,
        commit_clusters=0,
        tool_only_ranges=(),
        lines=(ChunkLine(1, 3, "U", "x"),),
        token_estimate=0,
    )
    with pytest.raises(ChunkCoverageError) as info:
        check_coverage(bad)
    assert str(info.value) == "chunk coverage ends at 3 but chunk end is 5"
    check_coverage(chunk([U(1, "a"), A(2, "b")]))


def test_protected_tail_v021() -> None:
    ms = []
    ordinal = 0
    for turn in range(7):
        ordinal += 1
        ms.append(U(ordinal, f"turn {turn}"))
        ordinal += 1
        ms.append(A(ordinal, "ok"))
        ordinal += 1
        ms.append(U(ordinal, ToolPart("read", {"path": "x"})))
    # Meaningful user turns are at 1, 4, 7, 10, 13, 16, 19: the 5th from last is 7.
    assert protected_tail_start(ms) == 7
    assert protected_tail_start(ms[:12]) == 1  # only 4 turns: nothing settled
    assert protected_tail_start(ms, turns=1) == 19
    c = chunk(ms, eligible_end=protected_tail_start(ms))
    assert c.end == 6


def test_arcs_and_fences() -> None:
    ms = [
        U(1, "go"),
        A(2, ToolPart("bash", {}, call_id="c1")),
        U(3, ToolPart("bash", {}, "out", call_id="c1")),
        A(4, ToolPart("bash", {}, call_id="c2")),  # open: no result yet
        U(5, "next"),
    ]
    arcs = completed_arcs(ms)
    assert arcs == [(2, 3)]
    assert fence_boundary(3, arcs) == 2
    assert fence_boundary(4, arcs) == 4
    assert fence_boundary(2, arcs) == 2


def test_wrapup_boundary() -> None:
    ms = [
        U(1, "a"),
        A(2, "b"),
        U(3, "c"),
        A(4, ToolPart("bash", {}, call_id="k")),
        U(5, ToolPart("bash", {}, "o", call_id="k")),
        A(6, "e"),
    ]
    # KEEP is a count of messages: keep 2 → target 5 splits the 4→5 arc, so the
    # boundary moves a message later (6: one message kept, not back to 3).
    assert wrapup_boundary(ms, 2) == 6
    assert wrapup_boundary(ms, 3) == 4  # target 4 splits nothing
    assert wrapup_boundary(ms, 1) == 6
    assert wrapup_boundary(ms, 100) == 1
    assert wrapup_boundary([], 5) == 1


def test_wrapup_boundary_moves_back_when_no_clean_place_is_a_few_messages_later() -> None:
    # Six parallel calls answered one result per message: every place from 3 to 8 splits one.
    calls = A(2, *(ToolPart("bash", {}, call_id=f"k{n}") for n in range(6)))
    results = [U(3 + n, ToolPart("bash", {}, "o", call_id=f"k{n}")) for n in range(6)]
    ms = [U(1, "a"), calls, *results, A(9, "done")]
    assert wrapup_boundary(ms, 6) == 2  # target 4; 4-7 split the arcs: back before the calls


def test_a_subagent_between_a_call_and_its_result_is_no_fence() -> None:
    # A Task call answered 40 messages later (its subagent's work in between) is no arc:
    # the boundary may fall inside the subagent's work, where its own calls allow.
    work = [A(n, ToolPart("bash", {}, call_id=f"s{n}")) for n in range(3, 43, 2)]
    answers = [U(n + 1, ToolPart("bash", {}, "o", call_id=f"s{n}")) for n in range(3, 43, 2)]
    ms = sorted(
        [U(1, "go"), A(2, ToolPart("Task", {}, call_id="task")), *work, *answers],
        key=lambda m: m.ordinal,
    )
    ms.append(U(43, ToolPart("Task", {}, "report", call_id="task")))
    assert (2, 43) in completed_arcs(ms)
    assert (2, 43) not in fence_arcs(completed_arcs(ms))
    assert wrapup_boundary(ms, 10) == 35  # target 34 splits 33→34: one later


def test_the_arc_index_finds_the_arc_an_end_splits_as_a_scan_of_every_arc_does() -> None:
    import random

    from karni_historian.condense.boundaries import ArcIndex, arcs_of_calls

    rng = random.Random(11)
    for _ in range(300):
        calls = []  # parallel calls answered in any order, some never
        for ordinal in range(1, 40):
            role = rng.choice(["assistant", "assistant", "user"])
            calls += [(ordinal, role, f"c{rng.randrange(12)}") for _ in range(rng.randrange(3))]
        arcs = arcs_of_calls(calls)
        index = ArcIndex(arcs)
        assert list(index) == arcs
        for end in range(0, 42):
            scanned = next(((c, r) for c, r in arcs if c <= end < r), None)
            assert index.splitting(end) == scanned, (arcs, end)


def test_the_arc_index_refuses_arcs_out_of_call_order() -> None:
    from karni_historian.condense.boundaries import ArcIndex

    with pytest.raises(ValueError, match="sorted"):
        ArcIndex([(5, 9), (2, 3)])
