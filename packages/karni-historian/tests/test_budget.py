"""Budgets, the guard and triggers: reference §1.4, §1.8, §3.2, §3.3, §3.11 and §5 (B1–B5)."""

from __future__ import annotations

import math

import pytest
from karni_historian.brief.budget import (
    ConfigurationError,
    TriggerDecision,
    TriggerState,
    budget_guard,
    estimate_tokens,
    evaluate_trigger,
    execute_threshold_from_tokens,
    historian_chunk_tokens,
    history_budget_tokens,
    js_round,
    parse_wrapup_keep,
    protected_tail_tokens,
    run_cap_tokens,
    trigger_budget,
    trigger_thresholds,
)


@pytest.mark.parametrize(
    ("limit", "thr", "pct", "expected"),
    [
        (200_000, 65, 0.15, 19_500),  # B2
        (128_000, 65, 0.15, 12_480),
        (1_000_000, 40, 0.15, 60_000),
        (1_000_000, 65, 0.15, 97_500),  # the seed's 1M example
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


def test_execute_threshold_from_tokens() -> None:
    assert execute_threshold_from_tokens(130_000, 200_000) == 65
    assert execute_threshold_from_tokens(190_000, 200_000) == 90
    with pytest.raises(ConfigurationError):
        execute_threshold_from_tokens(1000, 0)


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
def test_chunk_tokens(ctx: int | None, expected: int) -> None:  # B3
    assert historian_chunk_tokens(ctx) == expected


@pytest.mark.parametrize(
    ("limit", "thr", "expected"),
    [
        (1_000_000, 40, 20_000),
        (200_000, 65, 6_500),
        (128_000, 65, 5_000),
        (32_000, 40, 5_000),
        (2_000_000, 80, 50_000),
        (1_000_000, 100, 50_000),
        (0, 65, 5_000),
        (-1, 65, 5_000),
        (float("nan"), 65, 5_000),
        (128_000, -10, 5_000),
        (128_000, 200, 12_800),
    ],
)
def test_trigger_budget(limit: float, thr: float, expected: int) -> None:  # B1
    assert trigger_budget(limit, thr) == expected


def test_trigger_thresholds() -> None:
    t = trigger_thresholds(1_000_000, 40)
    assert t["trigger_budget"] == 20_000
    assert t["tail_size_threshold"] == 60_000  # 15 % of usable
    assert t["proactive_floor_pct"] == 38
    assert t["post_drop_target_pct"] == 30
    assert t["force_band_pct"] == 85
    assert t["block_until_done_pct"] == 95
    assert trigger_thresholds(200_000, 65)["tail_size_threshold"] == 19_500
    assert trigger_thresholds(200_000, 88)["force_band_pct"] == 90
    assert trigger_thresholds(200_000, 95)["force_band_pct"] == 92


@pytest.mark.parametrize(("usage", "expected"), [(0, 39_000), (50, 19_500), (90, 10_400)])
def test_protected_tail_b4(usage: float, expected: int) -> None:
    assert protected_tail_tokens(200_000, 65, usage) == expected


def test_run_cap() -> None:
    assert run_cap_tokens(200_000, 65, 0) == 78_000
    n80 = protected_tail_tokens(200_000, 65, 85)
    assert run_cap_tokens(200_000, 65, 85) == min(500_000, max(3 * n80, min(45_500, 150_000)))
    n95 = protected_tail_tokens(200_000, 65, 96)
    assert run_cap_tokens(200_000, 65, 96) == min(750_000, max(4 * n95, 65_000))


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


@pytest.mark.parametrize(("arg", "expected"), [(None, 20), ("", 20), ("  ", 20), ("5", 5)])
def test_wrapup_keep(arg: str | None, expected: int) -> None:  # B5
    assert parse_wrapup_keep(arg) == expected


def test_wrapup_keep_errors() -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_wrapup_keep("abc")
    assert str(info.value) == (
        "Usage: `/ctx-wrapup [messages_to_keep]` where messages_to_keep is a positive integer."
    )
    with pytest.raises(ConfigurationError) as info:
        parse_wrapup_keep("0")
    assert str(info.value) == "messages_to_keep must be a positive integer."
    with pytest.raises(ConfigurationError):
        parse_wrapup_keep("-3")


def fire(reason: str) -> TriggerDecision:
    return TriggerDecision(True, reason)


def test_trigger_decision_order() -> None:
    limit, thr = 200_000, 65  # trigger budget 6,500
    assert evaluate_trigger(
        TriggerState(usage_pct=99, in_progress=True), limit, thr
    ) == TriggerDecision(False, "in_flight")
    assert evaluate_trigger(
        TriggerState(usage_pct=99, has_raw_after_last=False), limit, thr
    ) == TriggerDecision(False, "no_new_raw_history")
    assert evaluate_trigger(TriggerState(usage_pct=86), limit, thr) == fire("force_band")
    # Pending drops would bring usage to 86 * 0.4 = 34.4 % <= 48.75 %: no run.
    drops = TriggerState(usage_pct=86, droppable_bytes=60, active_bytes=100)
    assert evaluate_trigger(drops, limit, thr) == TriggerDecision(False, "drops_suffice")
    clusters = TriggerState(usage_pct=10, commit_cluster_count=3, chunk_token_estimate=6_500)
    assert evaluate_trigger(clusters, limit, thr) == fire("commit_clusters")
    assert evaluate_trigger(clusters, limit, thr, commit_trigger_enabled=False) == TriggerDecision(
        False, "below_proactive_floor"
    )
    assert evaluate_trigger(clusters, limit, thr, min_clusters=4) == TriggerDecision(
        False, "below_proactive_floor"
    )
    tail = TriggerState(usage_pct=10, chunk_token_estimate=19_500)
    assert evaluate_trigger(tail, limit, thr) == fire("tail_size")
    assert evaluate_trigger(
        TriggerState(usage_pct=10, chunk_token_estimate=19_499), limit, thr
    ) == TriggerDecision(False, "below_proactive_floor")
    assert evaluate_trigger(
        TriggerState(usage_pct=10, has_more=True, chunk_token_estimate=1), limit, thr
    ) == fire("tail_size")
    small = TriggerState(usage_pct=64, eligible_messages=3, chunk_token_estimate=100)
    assert evaluate_trigger(small, limit, thr) == TriggerDecision(False, "below_min_chunk")
    ready = TriggerState(usage_pct=64, eligible_messages=12, chunk_token_estimate=100)
    assert evaluate_trigger(ready, limit, thr) == fire("projected_headroom")
    assert evaluate_trigger(
        TriggerState(usage_pct=62, eligible_messages=12), limit, thr
    ) == TriggerDecision(False, "below_proactive_floor")


def test_context_limit_from_usage() -> None:
    from karni_historian.brief.budget import context_limit_from_usage

    assert context_limit_from_usage(50_000, 25) == 200_000
    assert context_limit_from_usage(0, 25) is None
    assert context_limit_from_usage(50_000, 0) is None
    assert history_budget_tokens(context_limit_from_usage(0, 0), 65, 0.15) == 60_000
