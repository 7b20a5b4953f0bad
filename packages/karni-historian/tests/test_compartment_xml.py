"""Historian output: parsing, validation and writing (docs/historian/validation.md)."""

from __future__ import annotations

import pytest
from karni_historian.condense.chunk import Chunk, ChunkLine
from karni_historian.condense.compartment_writer import emit, read_back
from karni_historian.condense.compartment_xml import HistorianOutputError, parse, validate
from karni_historian.model import Compartment, Fact

PREFIX = "Historian returned invalid compartment output: "


def lines_chunk(start: int, end: int, tool_only: tuple[tuple[int, int], ...] = ()) -> Chunk:
    """A chunk whose lines are msg-start..msg-end, one per ordinal."""
    lines = tuple(ChunkLine(o, o, "U" if o % 2 else "A", f"msg-{o}") for o in range(start, end + 1))
    return Chunk(
        text="\n".join(ln.text for ln in lines),
        start=start,
        end=end,
        has_more=False,
        commit_clusters=0,
        tool_only_ranges=tool_only,
        lines=lines,
        token_estimate=0,
    )


def comp(start: int, end: int, title: str = "t", importance: int | None = None) -> str:
    imp = f' importance="{importance}"' if importance is not None else ""
    return (
        f'<compartment start="{start}" end="{end}" title="{title}"{imp}>'
        f"<p1>full {start}</p1><p2>p2</p2><p3>p3</p3><p4/></compartment>"
    )


def output(*compartments: str, extra: str = "", unprocessed: int | None = None) -> str:
    meta = f"<unprocessed_from>{unprocessed}</unprocessed_from>" if unprocessed else ""
    return (
        f"<output><compartments>{''.join(compartments)}</compartments>{extra}"
        f"<meta>{meta}</meta></output>"
    )


def check(xml: str, chunk: Chunk, **kw):
    return validate(parse(xml), chunk, **kw)


def test_valid_with_side_channels() -> None:
    extra = (
        "<facts><PROJECT_RULES>\n* Run tests with uv.\n</PROJECT_RULES></facts>"
        '<events><causal_incident at_compartment="1"><summary>broke</summary></causal_incident>'
        '<trajectory_correction at_compartment="2"><summary>pivot</summary></trajectory_correction>'
        "</events>"
        '<primer_candidates><primer at_compartment="2">Why uv?</primer></primer_candidates>'
    )
    r = check(output(comp(1, 2), comp(3, 4), extra=extra, unprocessed=5), lines_chunk(1, 7))
    assert [(c.start, c.end) for c in r.compartments] == [(1, 2), (3, 4)]
    assert r.unprocessed_from == 5
    assert not r.discarded_last
    assert r.facts == [Fact("PROJECT_RULES", "Run tests with uv.")]
    assert [(e.kind, e.at_compartment) for e in r.events] == [
        ("causal_incident", 1),
        ("trajectory_correction", 2),
    ]
    assert r.primer == (2, "Why uv?")


def test_overlap() -> None:
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 3), comp(3, 4)), lines_chunk(1, 4))
    assert str(info.value) == PREFIX + "overlap before message 4 (saw 3-4)"


def test_gap_outside_tool_only_ranges() -> None:
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 2), comp(19, 22)), lines_chunk(1, 24))
    assert str(info.value) == PREFIX + "gap before message 19 (expected 3)"


def test_tool_only_gap_healed_then_discard_last() -> None:
    r = check(output(comp(1, 2), comp(23, 24)), lines_chunk(1, 24, ((3, 22),)))
    assert [(c.start, c.end) for c in r.compartments] == [(1, 22)]
    assert r.unprocessed_from == 23
    assert r.discarded_last


def test_gap_must_lie_inside_one_tool_only_range() -> None:
    with pytest.raises(HistorianOutputError, match="gap before message 23"):
        check(output(comp(1, 2), comp(23, 24)), lines_chunk(1, 24, ((3, 10), (12, 22))))


def test_unprocessed_from_mismatch() -> None:
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 2), unprocessed=4), lines_chunk(1, 5))
    assert (
        str(info.value) == PREFIX + "<unprocessed_from> 4 does not match next uncovered message 3"
    )


def test_discard_last_and_its_guards() -> None:
    extra = (
        "<facts><CONSTRAINTS>\n* keep\n</CONSTRAINTS></facts>"
        "<user_observations>\n* o\n</user_observations>"
    )
    r = check(output(comp(1, 2), comp(3, 4), extra=extra), lines_chunk(1, 4))
    assert [(c.start, c.end) for c in r.compartments] == [(1, 2)]
    assert (r.unprocessed_from, r.discarded_last, r.facts, r.user_observations) == (3, True, [], [])
    r = check(output(comp(1, 2), comp(3, 4), extra=extra), lines_chunk(1, 4), emergency=True)
    assert [(c.start, c.end) for c in r.compartments] == [(1, 2), (3, 4)]
    assert r.facts == [Fact("CONSTRAINTS", "keep")] and r.user_observations == ["o"]
    assert r.unprocessed_from is None
    r = check(output(comp(1, 2), comp(3, 4)), lines_chunk(1, 4), force_keep=True)
    assert len(r.compartments) == 2
    r = check(output(comp(1, 4)), lines_chunk(1, 4))  # the k1 guard
    assert [(c.start, c.end) for c in r.compartments] == [(1, 4)] and not r.discarded_last


def test_discard_last_skipped_when_it_would_split_an_arc() -> None:
    r = check(output(comp(1, 2), comp(3, 4)), lines_chunk(1, 4), arcs=[(2, 3)])
    assert len(r.compartments) == 2 and not r.discarded_last


@pytest.mark.parametrize(
    "xml",
    [
        '<output><compartment start="1" end="2" title="bad">missing close',
        "",
        "no xml at all",
        '<output><compartments><compartment start="1" end="2" title="x" /></compartments></output>',
    ],
)
def test_no_usable_compartments(xml: str) -> None:
    with pytest.raises(HistorianOutputError) as info:
        check(xml, lines_chunk(1, 2))
    assert str(info.value) == "Historian returned no usable compartments."


def test_events_past_the_compartments_are_dropped() -> None:
    extra = (
        '<events><causal_incident at_compartment="3"><summary>x</summary></causal_incident>'
        '<causal_incident at_compartment="2"><summary>y</summary></causal_incident></events>'
    )
    r = check(output(comp(1, 2), comp(3, 4), extra=extra, unprocessed=5), lines_chunk(1, 9))
    assert [e.at_compartment for e in r.events] == [2]


def test_events_pointing_at_discarded_compartment_are_dropped() -> None:
    extra = (
        '<events><causal_incident at_compartment="2"><summary>x</summary>'
        "</causal_incident></events>"
        '<primer_candidates><primer at_compartment="2">q?</primer></primer_candidates>'
    )
    r = check(output(comp(1, 2), comp(3, 4), extra=extra), lines_chunk(1, 4))
    assert r.events == [] and r.primer is None


def test_flat_rows_are_rejected() -> None:
    xml = output(comp(1, 2), '<compartment start="3" end="4" title="flat">just text</compartment>')
    with pytest.raises(HistorianOutputError) as info:
        check(xml, lines_chunk(1, 4), force_keep=True)
    assert str(info.value) == PREFIX + (
        "compartment 2 is missing the tiered paraphrase structure (p1..p4); "
        "re-emit with all four tiers"
    )


def test_range_errors() -> None:
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 9)), lines_chunk(1, 4))
    assert str(info.value) == PREFIX + "Compartment range 1-9 does not map to raw session lines 1-4"
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(3, 2)), lines_chunk(1, 4))
    assert str(info.value) == PREFIX + "invalid range 3-2"
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(2, 4)), lines_chunk(1, 4))
    assert str(info.value) == PREFIX + "gap before message 2 (expected 1)"


def test_outside_chunk_when_lines_extend_beyond_the_claimed_end() -> None:
    chunk = lines_chunk(1, 4)
    chunk.end = 3
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 4)), chunk)
    assert str(info.value) == PREFIX + "range 1-4 is outside chunk 1-3"


def test_unprocessed_from_rules() -> None:
    r = check(output(comp(1, 2), unprocessed=5), lines_chunk(1, 4))  # chunk end + 1: accepted
    assert r.unprocessed_from is None
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 2), unprocessed=9), lines_chunk(1, 4))
    assert str(info.value) == PREFIX + "<unprocessed_from> 9 is outside chunk 1-4"
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 2)), lines_chunk(1, 7))
    assert (
        str(info.value) == PREFIX + "output left uncovered messages 3-7 without <unprocessed_from>"
    )


def test_terminal_arc_heal_and_split() -> None:
    # The last compartment ends at 5, inside the completed arc 5→7: extended to 7.
    r = check(output(comp(1, 5), unprocessed=6), lines_chunk(1, 10), arcs=[(5, 7)])
    assert [(c.start, c.end) for c in r.compartments] == [(1, 7)]
    assert r.unprocessed_from == 8
    # An arc that ends beyond the chunk cannot be healed.
    with pytest.raises(HistorianOutputError) as info:
        check(output(comp(1, 5)), lines_chunk(1, 5), arcs=[(5, 7)])
    assert (
        str(info.value)
        == "Historian terminal boundary splits a completed tool invocation/result arc"
    )


def test_parse_tiers_and_defaults() -> None:
    xml = (
        '<compartment end="4" importance="170" start="3" title="b &amp; c">'
        "<p1>one &lt;x&gt;</p2><p3/>"
        "</compartment>"
        '<compartment start="1" end="2" title="a" episode_type="fix,test"><p1>\n hi </p1>'
        "<p2>two<p3>three</p3><p4>anchor &apos;q&apos; &quot;</p4></compartment>"
        '<compartment start="5" end="6" title=""><p1>x</p1></compartment>'
        '<compartment start="7" title="no end"><p1>x</p1></compartment>'
        '<compartment start="8" end="8" title="p1 only"><p1>solo</p1></compartment>'
        '<compartment start="9" end="9" title="unclosed"><p1>runs to the end</compartment>'
    )
    rows = parse(xml).compartments
    assert [(c.start, c.title) for c in rows] == [
        (1, "a"),
        (3, "b & c"),
        (8, "p1 only"),
        (9, "unclosed"),
    ]
    a, b, solo, unclosed = rows
    assert (a.p1, a.p2, a.p3, a.p4, a.episode_type, a.importance) == (
        "hi",
        "two",
        "three",
        "anchor 'q' \"",
        "fix,test",
        50,
    )
    assert (b.p1, b.p2, b.p3, b.p4, b.importance, b.content) == (
        "one <x>",
        "one <x>",
        "",
        "",
        100,
        "one <x>",
    )
    assert (solo.p2, solo.p3, solo.p4) == ("solo", "solo", "")
    assert unclosed.p1 == "runs to the end"


def test_parse_facts_without_facts_block() -> None:
    xml = (
        '<compartment start="1" end="1" title="t"><p1>* not a fact</p1></compartment>'
        '<events><X_Y at_compartment="1"><NAMING>\n* no\n</NAMING></X_Y></events>'
        "<NAMING>\n* Use snake_case.\n  *  Twice \n* Use snake_case.\n</NAMING>"
    )
    assert parse(xml).facts == [Fact("NAMING", "Use snake_case."), Fact("NAMING", "Twice")]


def test_parse_primer_bullets_and_observations() -> None:
    xml = (
        "<primer_candidates>\n- first?\n* second?\n</primer_candidates>"
        "<user_observations>\n* likes tests\n</user_observations>"
    )
    parsed = parse(xml)
    assert parsed.primer == (None, "first?")
    assert parsed.user_observations == ["likes tests"]
    numbered = parse("<primer_candidates>\n1. numbered?\n</primer_candidates>")
    assert numbered.primer == (None, "numbered?")


def test_parse_meta() -> None:
    parsed = parse(
        "<meta><messages_processed>3-9</messages_processed><unprocessed_from>8</unprocessed_from></meta>"
    )
    assert (parsed.messages_processed, parsed.unprocessed_from) == ((3, 9), 8)


def test_emit_round_trips_through_parse_and_validate() -> None:
    rows = [
        Compartment(
            1,
            3,
            'Fix "parser" & <lexer>',
            p1="Full <a> & b",
            p2="Two",
            p3="Three",
            p4="",
            importance=80,
            episode_type="fix,test",
        ),
        Compartment(4, 5, "Anchor", p1="One", p2="Two", p3="Three", p4="Four", importance=20),
    ]
    facts = [Fact("CONSTRAINTS", "Never  use\nRedis."), Fact("NAMING", "snake_case")]
    xml = emit(rows, facts, messages_processed=(1, 5))
    parsed = parse(xml)
    assert [
        (c.start, c.end, c.title, c.p1, c.p2, c.p3, c.p4, c.importance, c.episode_type)
        for c in parsed.compartments
    ] == [
        (1, 3, 'Fix "parser" & <lexer>', "Full <a> & b", "Two", "Three", "", 80, "fix,test"),
        (4, 5, "Anchor", "One", "Two", "Three", "Four", 20, None),
    ]
    assert parsed.facts == [Fact("CONSTRAINTS", "Never use Redis."), Fact("NAMING", "snake_case")]
    assert parsed.messages_processed == (1, 5)
    r = validate(parsed, lines_chunk(1, 5), force_keep=True)
    assert [(c.start, c.end) for c in r.compartments] == [(1, 3), (4, 5)]
    assert r.unprocessed_from is None


def test_emit_format(snapshot_text) -> None:
    rows = [
        Compartment(
            1, 2, "Set up", p1="Did A.", p2="A.", p3="A", p4="", importance=55, episode_type="setup"
        )
    ]
    out = emit(
        rows, [Fact("PROJECT_RULES", "Run uv.")], messages_processed=(1, 3), unprocessed_from=3
    )
    assert out == snapshot_text


def test_read_back_is_what_parse_reads_from_emit() -> None:
    """Escaping, padding, empty and blank tiers, importance out of range, facts to group."""
    compartments = [
        Compartment(2, 3, 'Fix "a & b" <now>', p1=" <p2> one & two ", p2="two\n", p3="three"),
        Compartment(1, 1, "First", p1="x", p2="", p3="&amp;", p4="  ", importance=0),
        Compartment(4, 4, "Four", p1="p", p2="q", p3="r", p4="a, b", importance=150),
        Compartment(5, 5, "Five", p1="p", p2="q", p3="r", importance=-3, episode_type=""),
        Compartment(6, 6, "Six", p1="p", p2="q", p3="r", episode_type='x "y"'),
    ]
    facts = [
        Fact("NAMING", "use  snake_case\n names"),
        Fact("CONSTRAINTS", "never <drop> & forget"),
        Fact("NAMING", "use snake_case names"),
        Fact("CONSTRAINTS", "   "),
        Fact("NAMING", "* starred"),
    ]
    for processed in (None, (1, 6)):
        expected = parse(emit(compartments, facts, messages_processed=processed))
        assert read_back(compartments, facts, messages_processed=processed) == expected
    assert read_back([]) == parse(emit([]))


@pytest.mark.parametrize(
    ("compartments", "facts"),
    [
        ([Compartment(1, 1, "", p1="x", p2="y", p3="z")], []),
        ([Compartment(1, 1, "T", p1="  ", p2="y", p3="z")], []),
        ([Compartment(1, 1, "T", p1="x", p2="y", p3="z")], [Fact("lower_case", "dropped")]),
    ],
)
def test_read_back_of_rows_parse_treats_specially(compartments, facts) -> None:
    """An empty title or first tier, or a category that is no tag: as the document reads."""
    assert read_back(compartments, facts) == parse(emit(compartments, facts))
