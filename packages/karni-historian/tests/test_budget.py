"""Budgets as the commands show them: ``status`` and ``render`` share one history budget.

The pure functions behind them (docs/historian/budgets.md) are checked on the
examples the page gives.
"""

from __future__ import annotations

import math

import pytest
from karni_historian.budget import (
    ConfigurationError,
    budget_guard,
    check_history_budget_percentage,
    estimate_tokens,
    historian_chunk_tokens,
    history_budget_tokens,
    js_round,
)
from karni_historian.model import Compartment
from karni_historian.store import RunRecord, Store


def many_compartments(root, count=120, words=300):
    body = " ".join(f"word{i}" for i in range(words))
    with Store.open(root, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
        compartments = [
            Compartment(i, i, f"Episode {i}", p1=body, p2=body[:400], p3=body[:100], p4="")
            for i in range(1, count + 1)
        ]
        store.publish("s", compartments, [], RunRecord("s", "wrapup", "ok"))


def test_status_and_render_use_one_history_budget_at_threshold_90(root, historian, configure):
    configure(root, "execute_threshold_percentage = 90")
    many_compartments(root)
    code, status, _ = historian("status")
    assert code == 0
    assert "- History budget: ~27000 tokens (" in status  # 200k x 90% x 0.15
    _, rendered, _ = historian("render")
    _, at_27000, _ = historian("render", "--budget", "27000")
    _, at_24000, _ = historian("render", "--budget", "24000")
    assert rendered == at_27000
    assert rendered != at_24000
    assert estimate_tokens(rendered) <= 27000 * 1.05


def test_status_shows_the_default_budget(root, historian):
    many_compartments(root, count=2, words=10)
    _, status, _ = historian("status")
    assert "- History budget: ~19500 tokens (" in status  # 200k x 65% x 0.15


@pytest.mark.parametrize("value", ["0.04", "0.51", "true"])
def test_an_out_of_range_share_is_a_configuration_error(root, historian, configure, value):
    configure(root, f"history_budget_percentage = {value}")
    many_compartments(root, count=1, words=1)
    code, out, err = historian("status")
    assert (code, out) == (1, "")
    assert err.startswith("karni-historian: configuration error: ")
    assert "history_budget_percentage" in err and str(root) in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("limit", "thr", "pct", "expected"),
    [
        (200_000, 65, 0.15, 19_500),
        (128_000, 65, 0.15, 12_480),
        (1_000_000, 40, 0.15, 60_000),
        (1_000_000, 65, 0.15, 97_500),  # a 1M window
        (200_000, 65, 0.05, 6_500),
        (200_000, 65, 0.5, 65_000),
        (200_000, 95, 0.15, 27_000),  # threshold capped at 90
    ],
)
def test_history_budget(limit: int, thr: float, pct: float, expected: int) -> None:
    assert history_budget_tokens(limit, thr, pct) == expected


def test_history_budget_defaults() -> None:
    assert history_budget_tokens(200_000) == 19_500
    assert history_budget_tokens(None) == 60_000
    assert history_budget_tokens(0, 65, 0.15) == 60_000
    assert history_budget_tokens(float("nan"), 65, 0.15) == 60_000
    assert history_budget_tokens(200_000, 65, None) == 60_000


@pytest.mark.parametrize("pct", [0.0, 0.04, 0.51, 1, -0.1, True])
def test_history_budget_percentage_out_of_range(pct: float) -> None:
    with pytest.raises(ConfigurationError) as info:
        history_budget_tokens(200_000, 65, pct)
    message = str(info.value)
    assert message.startswith("`history_budget_percentage` must be between 0.05 and 0.5")
    assert "\n" not in message


@pytest.mark.parametrize("pct", [0.0, 0.04, 0.51, 1, -0.1, True])
def test_check_history_budget_percentage(pct: float) -> None:
    with pytest.raises(ConfigurationError) as info:
        check_history_budget_percentage(pct)
    assert str(info.value).startswith("`history_budget_percentage` must be between 0.05 and 0.5")
    assert check_history_budget_percentage(0.05) == 0.05


@pytest.mark.parametrize(
    ("ctx", "expected"),
    [
        (128_000, 32_000),
        (200_000, 50_000),
        (400_000, 50_000),
        (1_000_000, 50_000),
        (16_000, 8_000),
        (None, 32_000),
    ],
)
def test_chunk_tokens(ctx: int | None, expected: int) -> None:
    assert historian_chunk_tokens(ctx) == expected


def test_js_round_is_half_up() -> None:
    assert js_round(2.5) == 3
    assert js_round(-2.5) == -2
    assert js_round(0.49) == 0


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 35, 36, 1000])
def test_estimate_tokens_is_ceil_len_over_3_5(n: int) -> None:
    assert estimate_tokens("x" * n) == math.ceil(n / 3.5)


def test_budget_guard_oldest_first_with_injected_estimator() -> None:
    widths = {1: 10, 2: 6, 3: 3, 4: 1}

    def render_one(i: int, t: int) -> str:
        return "" if t >= 5 else "#" * widths[t]

    tiers = [1, 1, 1]
    # 30 characters + 2 separators of 2 = 34 > 25; at tier 3 it is still 27, at 4 it is 25.
    assert budget_guard(tiers, render_one, 25, len) == [4, 1, 1]
    assert budget_guard([1, 1, 1], render_one, 10, len) == [5, 5, 1]
    assert budget_guard([1, 1], render_one, 0, len) == [1, 1]
    assert budget_guard([], render_one, 10, len) == []


def test_budget_guard_is_bounded_by_five_per_compartment() -> None:
    calls = 0

    def render_one(i: int, t: int) -> str:
        nonlocal calls
        calls += 1
        return "x"

    # Nothing can fit a budget of 0.5 with an estimator that always says 1 per char.
    tiers = budget_guard([1, 1], render_one, 0.5, len)
    assert tiers == [5, 5]


def test_budget_guard_rechecks_the_exact_joined_body() -> None:
    # A non-additive estimator: the joined text costs more than the sum of its parts.
    def estimate(text: str) -> int:
        return len(text) + (100 if "\n\n" in text else 0)

    def render_one(i: int, t: int) -> str:
        return "" if t >= 5 else "ab"

    assert budget_guard([1, 1], render_one, 50, estimate) == [5, 1]
