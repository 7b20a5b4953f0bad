"""The ~300-token cap: everything appended, headings included, shared by all providers."""

from __future__ import annotations

from pathlib import Path

import pytest
from karni.agent.history import HISTORY_TOKEN_CAP, compose, estimate_tokens

CAP_CHARS = HISTORY_TOKEN_CAP * 4
ROOT = Path("/project")


def heading(path="apps/a.py", name="static"):
    return f"HISTORY: {path} ({name})"


def brief_of_block_length(total: int, path="apps/a.py", name="static") -> str:
    """A one-line brief whose composed block is exactly `total` characters."""
    return "x" * (total - len(heading(path, name)) - 1)


def test_cap_constant_and_estimate():
    assert HISTORY_TOKEN_CAP == 300
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_block_of_exactly_1200_characters_is_kept_whole(kinds):
    brief = brief_of_block_length(CAP_CHARS)
    block = compose(ROOT, "apps/a.py", providers=[kinds.Static(brief=brief, command="tool show")])
    assert block == f"{heading()}\n{brief}"
    assert len(block) == 1200
    assert estimate_tokens(block) == 300


def test_one_character_more_is_cut_with_the_full_command(kinds):
    brief = brief_of_block_length(CAP_CHARS + 1)
    block = compose(
        ROOT, "apps/a.py", providers=[kinds.Static(brief=brief, command="tool show apps/a.py")]
    )
    lines = block.split("\n")
    assert lines[0] == heading()
    assert lines[-1] == "… truncated at ~300 tokens; full brief: tool show apps/a.py"
    assert lines[1].endswith("…") and set(lines[1][:-1]) == {"x"}
    assert len(block) <= CAP_CHARS


def test_cut_is_at_a_line_boundary(kinds):
    brief = "\n".join(f"line {i:03d} " + "y" * 40 for i in range(100))
    block = compose(ROOT, "apps/a.py", providers=[kinds.Static(brief=brief, command="tool show")])
    lines = block.split("\n")
    kept = lines[1:-1]
    assert kept == brief.split("\n")[: len(kept)]
    assert lines[-1] == "… truncated at ~300 tokens; full brief: tool show"
    assert len(block) <= CAP_CHARS
    # Nothing more would have fitted: one more line would pass the cap.
    assert len(block) + len(brief.split("\n")[len(kept)]) + 1 > CAP_CHARS


def test_without_full_command_the_provider_is_named(kinds):
    brief = "\n".join("z" * 50 for _ in range(40))
    block = compose(ROOT, "apps/a.py", providers=[kinds.Static(name="my-history", brief=brief)])
    assert block.split("\n")[-1] == "… truncated at ~300 tokens; my-history holds the full brief"


def test_10000_line_brief(kinds):
    brief = "\n".join(f"prompt {i}: make it better" for i in range(10_000))
    provider = kinds.Static(brief=brief, command="tool show apps/a.py")
    block = compose(ROOT, "apps/a.py", providers=[provider])
    lines = block.split("\n")
    assert lines[1] == "prompt 0: make it better"
    assert lines[-1] == "… truncated at ~300 tokens; full brief: tool show apps/a.py"
    assert len(block) <= CAP_CHARS


def test_ten_megabyte_single_line_is_cut_inside_the_line(kinds):
    brief = "q" * 10_000_000
    block = compose(ROOT, "apps/a.py", providers=[kinds.Static(brief=brief, command="tool")])
    lines = block.split("\n")
    assert len(lines) == 3
    assert lines[1].endswith("…")
    assert len(block) == CAP_CHARS


def test_two_providers_share_the_budget_fairly(kinds):
    long_a = "\n".join(f"alpha {i} " + "a" * 30 for i in range(200))
    long_b = "\n".join(f"beta {i} " + "b" * 30 for i in range(200))
    block = compose(
        ROOT,
        "apps/a.py",
        providers=[
            kinds.Static(name="beta", brief=long_b, command="beta show"),
            kinds.Static(name="alpha", brief=long_a, command="alpha show"),
        ],
    )
    assert len(block) <= CAP_CHARS
    text_a, text_b = block.split(heading(name="beta"))
    assert text_a.startswith(heading(name="alpha"))
    assert "… truncated at ~300 tokens; full brief: alpha show" in text_a
    assert text_b.rstrip().endswith("… truncated at ~300 tokens; full brief: beta show")
    # Neither starves the other: each keeps a comparable share.
    assert abs(len(text_a) - len(text_b)) < 80


def test_a_short_brief_leaves_the_rest_to_a_long_one(kinds):
    long_b = "\n".join(f"beta {i} " + "b" * 30 for i in range(200))
    block = compose(
        ROOT,
        "apps/a.py",
        providers=[
            kinds.Static(name="alpha", brief="one decision"),
            kinds.Static(name="beta", brief=long_b, command="beta show"),
        ],
    )
    assert block.startswith(f"{heading(name='alpha')}\none decision\n{heading(name='beta')}\n")
    assert len(block) <= CAP_CHARS
    assert len(block) > CAP_CHARS - 45  # beta used what alpha left


@pytest.mark.parametrize("count", [2, 3, 7, 12])
def test_no_number_of_providers_passes_the_cap(kinds, count):
    providers = [
        kinds.Static(
            name=f"p{i:02d}", brief="\n".join("w" * 70 for _ in range(50)), command="c" * 60
        )
        for i in range(count)
    ]
    block = compose(ROOT, "apps/a.py", providers=providers)
    assert block is not None
    assert len(block) <= CAP_CHARS
    for line in block.split("\n"):
        if line.startswith("HISTORY:"):
            continue
        assert line  # never a heading alone followed by nothing


def test_a_huge_full_command_falls_back_to_naming_the_provider(kinds):
    brief = "\n".join("v" * 60 for _ in range(40))
    block = compose(ROOT, "apps/a.py", providers=[kinds.Static(brief=brief, command="c" * 5000)])
    assert block.split("\n")[-1] == "… truncated at ~300 tokens; static holds the full brief"
    assert len(block) <= CAP_CHARS


def test_smaller_max_tokens_is_honoured_and_named(kinds):
    brief = "\n".join("u" * 30 for _ in range(40))
    block = compose(
        ROOT, "apps/a.py", providers=[kinds.Static(brief=brief, command="tool")], max_tokens=50
    )
    assert len(block) <= 200
    assert block.split("\n")[-1] == "… truncated at ~50 tokens; full brief: tool"


def test_full_command_is_asked_only_when_cutting(kinds):
    provider = kinds.Static(brief="short", command="tool")
    compose(ROOT, "apps/a.py", providers=[provider])
    assert [call[0] for call in provider.calls] == ["detect", "context"]


def test_full_command_is_asked_once_even_when_blocks_are_refitted(kinds):
    # So many providers that some cannot fit and are dropped, which refits the rest.
    providers = [
        kinds.Static(
            name=f"p{i:02d}", brief="\n".join("w" * 70 for _ in range(50)), command="c" * 60
        )
        for i in range(30)
    ]
    block = compose(ROOT, "apps/a.py", providers=providers)
    assert 0 < block.count("HISTORY:") < len(providers)
    for provider in providers:
        assert [call[0] for call in provider.calls].count("full_command") <= 1


@pytest.mark.parametrize("count", [3, 5, 8])
def test_every_block_shown_carries_a_line_of_content_not_only_sub_headings(kinds, count):
    subheaded = "Episodes that touched this file, oldest first:\n" + "\n".join(
        f"- 2026-03-02 Episode {i} (messages {i}-{i + 1}): " + "e" * 300 for i in range(20)
    )
    others = "\n".join(f"other {i} " + "o" * 60 for i in range(40))
    providers = [kinds.Static(name="historian", brief=subheaded, command="historian brief")]
    providers += [
        kinds.Static(name=f"p{n}", brief=others, command=f"p{n} show") for n in range(count - 1)
    ]
    block = compose(ROOT, "apps/a.py", providers=providers)
    assert len(block) <= CAP_CHARS
    lines = block.split("\n")
    start = lines.index(heading(name="historian"))
    end = lines.index("… truncated at ~300 tokens; full brief: historian brief")
    shown = lines[start + 1 : end]
    assert shown[-1].startswith("- 2026-03-02 Ep"), shown  # an episode, cut if it must be
    for n in range(count - 1):
        own = lines.index(heading(name=f"p{n}"))
        assert lines[own + 1].startswith("other 0"), block


def test_a_sub_heading_is_kept_before_its_first_line_when_both_fit(kinds):
    brief = "Decisions:\n" + "d" * 2000
    block = compose(ROOT, "apps/a.py", providers=[kinds.Static(name="adr", brief=brief)])
    lines = block.split("\n")
    assert lines[:2] == [heading(name="adr"), "Decisions:"]
    assert lines[2].startswith("ddd") and lines[2].endswith("…")
    assert len(block) <= CAP_CHARS
