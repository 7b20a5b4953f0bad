"""Rendering the <session-history> block (docs/historian/blocks.md)."""

from __future__ import annotations

import random

import pytest
from karni_historian import Compartment
from karni_historian.brief import render as render_module
from karni_historian.brief.render import (
    EMPTY_HISTORY,
    assign_tiers,
    compartment_element,
    render_body,
    render_history,
)
from karni_historian.budget import estimate_tokens

LOOSE = 10_000_000


def block(*elements: str) -> str:
    return "<session-history>\n" + "\n\n".join(elements) + "\n</session-history>"


def test_single_compartment() -> None:
    c = Compartment(1, 9, "T", p1="VERBOSE", p2="dense")
    assert render_history([c], LOOSE) == block(
        '<compartment start="1" end="9" title="T">\nVERBOSE\n</compartment>'
    )


def test_escaping() -> None:
    c = Compartment(1, 2, 'a "b" & <c>', p1="x < y & z")
    assert render_history([c], LOOSE) == block(
        '<compartment start="1" end="2" title="a &quot;b&quot; &amp; &lt;c&gt;">\n'
        "x &lt; y &amp; z\n</compartment>"
    )


def test_apostrophes_are_not_escaped_and_body_quotes_stay() -> None:
    c = Compartment(1, 2, "it's", p1='say "hi"')
    assert compartment_element(c, 1) == (
        '<compartment start="1" end="2" title="it\'s">\nsay "hi"\n</compartment>'
    )


def test_dates() -> None:
    c = Compartment(1, 2, "Dated", p1="dated body", start_date="2026-01-02", end_date="2026-01-03")
    assert render_history([c], LOOSE) == block(
        '<compartment start="1" end="2" start-date="2026-01-02" end-date="2026-01-03" '
        'title="Dated">\ndated body\n</compartment>'
    )


@pytest.mark.parametrize(("start_date", "end_date"), [("2026-01-02", None), (None, "x"), ("", "y")])
def test_one_date_gives_no_date_attributes(start_date: str | None, end_date: str | None) -> None:
    c = Compartment(1, 2, "Dated", p1="b", start_date=start_date, end_date=end_date)
    assert (
        compartment_element(c, 1)
        == '<compartment start="1" end="2" title="Dated">\nb\n</compartment>'
    )


def test_dates_can_be_turned_off() -> None:
    c = Compartment(1, 2, "Dated", p1="b", start_date="2026-01-02", end_date="2026-01-03")
    assert "start-date" not in render_history([c], LOOSE, dates=False)


def test_a_compartment_without_paraphrases_renders_its_content() -> None:
    c = Compartment(1, 2, "Pseudo", p1="", content="flat body here")
    assert render_history([c], LOOSE) == block(
        '<compartment start="1" end="2" title="Pseudo">\nflat body here\n</compartment>'
    )


def test_pseudo_v2_takes_a_curve_position() -> None:
    pseudo = Compartment(1, 2, "Pseudo", content="flat")
    newer = [Compartment(i, i, f"c{i}", p1="x") for i in range(3, 10)]
    # 8 curve rows: the pseudo row is index 8 → tier 2 at pressure 1.
    assert assign_tiers([pseudo, *newer], 0)[0] == 2
    assert compartment_element(pseudo, 4) == '<compartment start="1" end="2" title="Pseudo" />'
    assert (
        compartment_element(Compartment(1, 2, "E"), 1)
        == '<compartment start="1" end="2" title="E" />'
    )


def test_empty_p4_self_closes_and_tier5_leaves_no_residue() -> None:
    c = Compartment(3, 4, "Anchor", p1="one", p2="two", p3="three", p4="")
    assert compartment_element(c, 4) == '<compartment start="3" end="4" title="Anchor" />'
    assert (
        render_body([c, c], [5, 1])
        == '<compartment start="3" end="4" title="Anchor">\none\n</compartment>'
    )
    assert (
        render_body([c, c], [1, 5])
        == '<compartment start="3" end="4" title="Anchor">\none\n</compartment>'
    )
    assert render_body([c, c], [5, 5]) == ""


def test_empty_list() -> None:
    assert render_history([], LOOSE) == EMPTY_HISTORY == "<session-history></session-history>"
    assert render_history([], 0) == EMPTY_HISTORY


def test_all_archived_gives_empty_block() -> None:
    old = [Compartment(i, i, f"c{i}", p1="x", importance=1) for i in range(1, 30)]
    tiers = assign_tiers(old, 0)
    assert tiers[0] == 5
    only_oldest_archived = render_history(old[:1] + old[-1:], 0)
    assert 'title="c29"' in only_oldest_archived


def test_tier_body_choice() -> None:
    c = Compartment(1, 2, "T", p1=" one ", p2=" two ", p3=" three ", p4=" four ")
    assert [compartment_element(c, t).split("\n")[1] for t in (1, 2, 3)] == ["one", "two", "three"]
    assert (
        compartment_element(c, 4)
        == '<compartment start="1" end="2" title="T">\nfour\n</compartment>'
    )
    # Empty p2/p3 mean "missing": fall back to the next denser non-empty tier.
    sparse = Compartment(1, 2, "T", p1="one", p2="", p3="", p4="")
    assert compartment_element(sparse, 2).split("\n")[1] == "one"
    assert compartment_element(sparse, 3).split("\n")[1] == "one"
    assert compartment_element(sparse, 4) == '<compartment start="1" end="2" title="T" />'
    no_p3 = Compartment(1, 2, "T", p1="one", p2="two")
    assert compartment_element(no_p3, 3).split("\n")[1] == "two"


def test_none_tiers_are_missing() -> None:
    c = Compartment(1, 2, "T", p1="one", p2=None, p3=None, p4=None)  # type: ignore[arg-type]
    assert compartment_element(c, 4).split("\n")[1] == "one"


def test_title_control_characters_collapse() -> None:
    c = Compartment(1, 2, "line\none\r\n\ttwo\u2028three", p1="b")
    assert 'title="line one two three"' in compartment_element(c, 1)


def test_tier_assignment() -> None:
    cs = [Compartment(i, i, f"c{i}", p1="a", p2="b", p3="c", p4="d") for i in range(1, 41)]
    tiers = assign_tiers(cs, 5000)
    newest_first = tiers[::-1]
    assert newest_first == [1] * 7 + [2] * 17 + [3] * 16


R2_IMPORTANCES = [90, 10, 50, 50, 75, 25, 100, 1, 50, 50]


def r2_compartments() -> list[Compartment]:
    return [
        Compartment(
            5 * i + 1,
            5 * i + 5,
            f"c{i + 1}",
            p1="full",
            p2="dense",
            p3="short",
            p4="",
            importance=imp,
        )
        for i, imp in enumerate(R2_IMPORTANCES)
    ]


def test_tier_assignment_and_render(snapshot_text) -> None:
    from karni_historian.brief.decay import pressure, tier

    cs = r2_compartments()
    items = [(10 - i, imp) for i, imp in enumerate(R2_IMPORTANCES)]
    assert [tier(idx, imp, 1.0) for idx, imp in items] == [1, 3, 2, 2, 1, 2, 1, 2, 1, 1]
    assert pressure(items, 1000) == pytest.approx(2.081)
    assert assign_tiers(cs, 1000) == [2, 4, 2, 2, 2, 2, 1, 2, 1, 1]
    out = render_history(cs, 1000)
    assert '<compartment start="6" end="10" title="c2" />' in out
    assert out == snapshot_text


def test_render_is_deterministic() -> None:
    cs = r2_compartments()
    assert render_history(cs, 1000) == render_history(list(cs), 1000)


def test_budget_guard_demotes_oldest_first() -> None:
    # Importance 100 keeps all three at tier 1 on the curve (pressure 966/200 < 9.6).
    cs = [
        Compartment(i, i, f"c{i}", p1="P" * 40, p2="p" * 20, p3="s", p4="", importance=100)
        for i in (1, 2, 3)
    ]
    assert assign_tiers(cs, 10_000, estimate=len) == [1, 1, 1]
    full = len(render_body(cs, [1, 1, 1]))
    # Just enough room for the oldest at tier 2: one demotion.
    budget = full - 20
    assert assign_tiers(cs, budget, estimate=len) == [2, 1, 1]
    # The oldest walks down to omission before the next one moves.
    tight = len(render_body(cs, [5, 1, 1]))
    assert assign_tiers(cs, tight, estimate=len) == [5, 1, 1]
    assert assign_tiers(cs, tight - 1, estimate=len) == [5, 2, 1]


def test_budget_guard_never_fires_without_budget() -> None:
    cs = [Compartment(i, i, "t", p1="x" * 5000) for i in range(1, 4)]
    assert assign_tiers(cs, 0, estimate=len) == [1, 1, 1]


def test_tightening_loop_rerenders_with_smaller_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []
    real = render_module.assign_tiers

    def spy(compartments, budget, **kwargs):
        seen.append(budget)
        return real(compartments, budget, **kwargs)

    monkeypatch.setattr(render_module, "assign_tiers", spy)
    cs = [Compartment(i, i, f"c{i}", p1="x", importance=1) for i in range(1, 41)]
    out = render_history(cs, 1)  # even the empty block is over budget: 3 attempts
    assert out == EMPTY_HISTORY
    assert seen == pytest.approx([1, 1 / 1.15, 1 / 1.15**2])
    seen.clear()
    render_history(cs, LOOSE)
    assert seen == [LOOSE]


def test_property_tiers_never_improve_with_age_at_equal_importance() -> None:
    rng = random.Random(3)
    for _ in range(30):
        n = rng.randint(1, 120)
        imp = rng.randint(1, 100)
        cs = [Compartment(i, i, "t", p1="x", importance=imp) for i in range(1, n + 1)]
        tiers = assign_tiers(cs, rng.choice([0, 300, 3000, 60000]), estimate=lambda s: 0)
        assert tiers == sorted(tiers, reverse=True)
        assert tiers[-1] == 1


def test_ten_thousand_compartments_cost_a_bounded_number_of_estimates() -> None:
    # Rendering is linear: the guard measures each shown element about once, however
    # many compartments are archived (counted, not timed).
    def compartments(n):
        return [
            Compartment(
                5 * i + 1,
                5 * i + 5,
                f"title {i}",
                p1="full paraphrase " * 10,
                p2="compressed " * 5,
                p3="concise",
                p4="",
                importance=(i * 37) % 100 + 1,
            )
            for i in range(n)
        ]

    def estimates(n):
        calls = 0

        def counting(text: str) -> int:
            nonlocal calls
            calls += 1
            return estimate_tokens(text)

        render_history(compartments(n), 60_000, estimate=counting)
        return calls

    assert estimates(10_000) < 2 * estimates(1_000)
    assert estimates(10_000) < 2_000


def test_tier_choice_is_linear(monkeypatch) -> None:
    # One pressure pass and one tier per compartment: 2 curve evaluations each.
    from karni_historian.brief import decay

    calls = []
    original = decay.base_tier

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(decay, "base_tier", counting)
    for n in (1_000, 4_000):
        calls.clear()
        cs = [Compartment(i, i, f"t{i}", p1="p", importance=i % 100 + 1) for i in range(1, n + 1)]
        render_history(cs, 10_000_000)
        assert len(calls) == 2 * n
