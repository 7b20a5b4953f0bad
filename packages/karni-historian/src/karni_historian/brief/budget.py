"""Token budgets of the historian: history budget, guard, chunk size and triggers.

Every number the historian sizes itself by lives here, as pure functions of the
model's context limit and the execute threshold (reference §1.4, §1.8, §3.2,
§3.3 and §5), so the renderer, the chunk builder and the store agree on them.

Choices where the reference leaves room (see §8 of the reference):

- The execute threshold is capped at 90 % (the newer schema); v0.21 capped at 80.
  A threshold given as tokens is converted to a percentage and clamped to 90 %
  of the limit.
- ``history_budget_percentage`` outside 0.05–0.5 raises
  :class:`ConfigurationError`; ``None`` means "not configured" and gives the
  reference default of 60,000 tokens, as does an unknown context limit.
- JavaScript's ``Math.round`` (half up) is used wherever the reference rounds,
  not Python's banker's rounding.
- The default token estimator is the reference fallback ``ceil(len / 3.5)``;
  upstream's Claude BPE is not available offline, so callers can inject any
  estimator.
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.errors import ConfigurationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, MutableSequence

__all__ = [
    "DEFAULT_EXECUTE_THRESHOLD_PCT",
    "DEFAULT_HISTORIAN_CONTEXT",
    "DEFAULT_HISTORY_BUDGET_PERCENTAGE",
    "DEFAULT_HISTORY_BUDGET_TOKENS",
    "MAX_EXECUTE_THRESHOLD_PCT",
    "MAX_HISTORY_BUDGET_PERCENTAGE",
    "MIN_HISTORY_BUDGET_PERCENTAGE",
    "ConfigurationError",
    "TriggerDecision",
    "TriggerState",
    "budget_guard",
    "context_limit_from_usage",
    "estimate_tokens",
    "evaluate_trigger",
    "execute_threshold_from_tokens",
    "historian_chunk_tokens",
    "history_budget_tokens",
    "js_round",
    "parse_wrapup_keep",
    "protected_tail_tokens",
    "run_cap_tokens",
    "trigger_budget",
    "trigger_thresholds",
]

DEFAULT_HISTORY_BUDGET_PERCENTAGE = 0.15
"""Default share of the usable context reserved for the session-history block."""

MIN_HISTORY_BUDGET_PERCENTAGE = 0.05
"""Lowest allowed ``history_budget_percentage``."""

MAX_HISTORY_BUDGET_PERCENTAGE = 0.5
"""Highest allowed ``history_budget_percentage``."""

DEFAULT_HISTORY_BUDGET_TOKENS = 60_000
"""History budget used when the context limit or the percentage is unknown."""

DEFAULT_EXECUTE_THRESHOLD_PCT = 65.0
"""Default execute threshold, in percent of the context limit."""

MAX_EXECUTE_THRESHOLD_PCT = 90.0
"""Cap on the execute threshold (newer schema; v0.21 capped at 80)."""

DEFAULT_HISTORIAN_CONTEXT = 128_000
"""Context window assumed for the historian model when none is configured."""

CHARS_PER_TOKEN_FALLBACK = 3.5
"""Characters per token of the reference's fallback estimator."""


def js_round(value: float) -> int:
    """Round half up, like JavaScript's ``Math.round``.

    Args:
        value: Any finite number.

    Returns:
        ``floor(value + 0.5)``.
    """
    import math

    return math.floor(value + 0.5)


def estimate_tokens(text: str) -> int:
    """Estimate tokens as ``ceil(len(text) / 3.5)``, the reference fallback estimator.

    Args:
        text: Any text.

    Returns:
        The estimated token count.
    """
    return -(-len(text) * 2 // 7)


def _finite_positive(value: float | None) -> bool:
    return value is not None and value == value and 0 < value < float("inf")


def history_budget_tokens(
    context_limit: float | None,
    execute_threshold_pct: float = DEFAULT_EXECUTE_THRESHOLD_PCT,
    history_budget_percentage: float | None = DEFAULT_HISTORY_BUDGET_PERCENTAGE,
) -> int:
    """Return the token budget of the session-history block (§1.4).

    ``floor(context_limit * (min(threshold, 90) / 100) * percentage)``.

    Args:
        context_limit: The model's context limit in tokens; ``None`` or a
            non-positive value when unknown.
        execute_threshold_pct: The resolved execute threshold, in percent.
        history_budget_percentage: The configured share, 0.05–0.5, or ``None``
            when not configured.

    Returns:
        The budget in tokens; 60,000 when the limit or the percentage is unknown.

    Raises:
        ConfigurationError: ``history_budget_percentage`` is outside 0.05–0.5.

    Examples:
        >>> history_budget_tokens(200_000, 65, 0.15)
        19500
    """
    import math

    if history_budget_percentage is None:
        return DEFAULT_HISTORY_BUDGET_TOKENS
    if (
        isinstance(history_budget_percentage, bool)
        or not MIN_HISTORY_BUDGET_PERCENTAGE
        <= history_budget_percentage
        <= MAX_HISTORY_BUDGET_PERCENTAGE
    ):
        raise ConfigurationError(
            f"`history_budget_percentage` must be between {MIN_HISTORY_BUDGET_PERCENTAGE} and "
            f"{MAX_HISTORY_BUDGET_PERCENTAGE} (got {history_budget_percentage!r}); "
            f"set it in that range or remove it for the default {DEFAULT_HISTORY_BUDGET_PERCENTAGE}"
        )
    if context_limit is None or not _finite_positive(context_limit):
        return DEFAULT_HISTORY_BUDGET_TOKENS
    threshold = min(max(execute_threshold_pct, 0.0), MAX_EXECUTE_THRESHOLD_PCT)
    # Multiply in the reference's order so float rounding matches upstream.
    return math.floor(context_limit * (threshold / 100) * history_budget_percentage)


def context_limit_from_usage(input_tokens: float, usage_pct: float) -> int | None:
    """Back-derive an unknown context limit from the current usage (§1.4).

    Args:
        input_tokens: Tokens currently in the prompt.
        usage_pct: The harness's reported usage, in percent.

    Returns:
        ``input_tokens / (usage_pct / 100)`` rounded down, or ``None`` when it
        cannot be derived (no usage or no tokens); the budget then falls back
        to 60,000 tokens.
    """
    if not _finite_positive(input_tokens) or not _finite_positive(usage_pct):
        return None
    return int(input_tokens / (usage_pct / 100))


def execute_threshold_from_tokens(tokens: float, context_limit: float) -> float:
    """Convert a per-model ``execute_threshold_tokens`` entry to a percentage.

    Args:
        tokens: The threshold in tokens.
        context_limit: The model's context limit in tokens.

    Returns:
        The threshold in percent, clamped to 90 % of the limit.

    Raises:
        ConfigurationError: The limit is not a positive number.
    """
    if not _finite_positive(context_limit):
        raise ConfigurationError(
            "`execute_threshold_tokens` needs the model's context limit; "
            "configure `execute_threshold_percentage` instead"
        )
    return min(tokens / context_limit * 100, MAX_EXECUTE_THRESHOLD_PCT)


def historian_chunk_tokens(historian_context: float | None = DEFAULT_HISTORIAN_CONTEXT) -> int:
    """Return the token budget of one historian chunk (§3.3).

    Args:
        historian_context: The historian model's context window in tokens;
            ``None`` or non-positive for the 128k default.

    Returns:
        ``clamp(round(0.25 * context), 8_000, 50_000)``: 32,000 for 128k.
    """
    if historian_context is None or not _finite_positive(historian_context):
        historian_context = DEFAULT_HISTORIAN_CONTEXT
    return min(max(js_round(0.25 * historian_context), 8_000), 50_000)


def trigger_budget(context_limit: float | None, execute_threshold_pct: float) -> int:
    """Return the trigger budget: 5 % of the usable context, clamped to 5k–50k (§5).

    Args:
        context_limit: The model's context limit; invalid values give 5,000.
        execute_threshold_pct: The execute threshold in percent.

    Returns:
        ``clamp(round(limit * threshold / 100 * 0.05), 5_000, 50_000)``.
    """
    if context_limit is None or not _finite_positive(context_limit):
        return 5_000
    thr = execute_threshold_pct
    if thr != thr:
        return 5_000
    return min(max(js_round(context_limit * thr / 100 * 0.05), 5_000), 50_000)


def trigger_thresholds(
    context_limit: float | None, execute_threshold_pct: float
) -> dict[str, float]:
    """Return the derived trigger thresholds of §5.

    Args:
        context_limit: The model's context limit in tokens.
        execute_threshold_pct: The execute threshold in percent.

    Returns:
        A mapping with ``trigger_budget``, ``proactive_floor_pct``,
        ``post_drop_target_pct``, ``force_band_pct``, ``block_until_done_pct``
        and ``tail_size_threshold``.
    """
    thr = execute_threshold_pct
    budget = trigger_budget(context_limit, thr)
    return {
        "trigger_budget": budget,
        "proactive_floor_pct": max(0.0, thr - 2),
        "post_drop_target_pct": thr * 0.75,
        "force_band_pct": max(85.0, min(thr, 90.0) + 2),
        "block_until_done_pct": 95.0,
        "tail_size_threshold": 3 * budget,
    }


def _usable(context_limit: float | None, execute_threshold_pct: float) -> tuple[float, int]:
    """The context limit (128k when unknown) and its usable part, ``round(limit * thr / 100)``."""
    limit: float = 128_000
    if context_limit is not None and _finite_positive(context_limit):
        limit = context_limit
    return limit, js_round(limit * execute_threshold_pct / 100)


def protected_tail_tokens(
    context_limit: float | None,
    execute_threshold_pct: float = DEFAULT_EXECUTE_THRESHOLD_PCT,
    usage_pct: float = 0.0,
) -> int:
    """Return ``N``, the token size of the protected tail (token-based rule of §3.2).

    Args:
        context_limit: The model's context limit (128k when unknown).
        execute_threshold_pct: The execute threshold in percent.
        usage_pct: The current context usage in percent.

    Returns:
        The number of newest tokens kept raw; 39,000 for 200k at 65 % and 0 % usage.
    """
    import math

    limit, usable = _usable(context_limit, execute_threshold_pct)
    trig = trigger_budget(limit, execute_threshold_pct)
    reserve = max(1000, js_round(usable * 0.02))
    raw_n = js_round(usable * 0.30 * (1 - usage_pct / 100))
    floor_n = min(12_000, max(2_000, js_round(usable * 0.08)))
    headroom = min(trig + reserve, math.floor(usable * 0.5))
    ceiling_n = max(1, min(96_000, math.floor(usable * 0.4), usable - headroom))
    return min(ceiling_n, max(min(floor_n, ceiling_n), raw_n))


def run_cap_tokens(
    context_limit: float | None,
    execute_threshold_pct: float = DEFAULT_EXECUTE_THRESHOLD_PCT,
    usage_pct: float = 0.0,
) -> int:
    """Return the cap on the eligible head of one historian run (§3.2 step 8).

    The arguments are those of :func:`protected_tail_tokens`.

    Returns:
        The most tokens one run may take; 78,000 for 200k at 65 % and 0 % usage.
    """
    limit, usable = _usable(context_limit, execute_threshold_pct)
    n = protected_tail_tokens(limit, execute_threshold_pct, usage_pct)
    if usage_pct >= 95:
        return min(750_000, max(4 * n, min(js_round(0.5 * usable), 250_000)))
    if usage_pct >= 80:
        return min(500_000, max(3 * n, min(js_round(0.35 * usable), 150_000)))
    return min(250_000, max(2 * n, min(js_round(0.25 * usable), 100_000)))


def budget_guard(
    tiers: MutableSequence[int],
    render_one: Callable[[int, int], str],
    budget: float,
    estimate: Callable[[str], int] = estimate_tokens,
    *,
    separator: str = "\n\n",
) -> MutableSequence[int]:
    """Demote the oldest rendered compartments until the joined body fits (§1.8).

    While the estimate of the joined body exceeds the budget, the oldest
    compartment whose tier is below 5 moves one tier down, at most
    ``5 * len(tiers)`` times. A memoised per-element sum drives the loop and
    the exact joined body is re-checked at the end, as upstream's newer
    renderer does; both give the same result for an additive estimator.

    Args:
        tiers: Tiers per compartment, oldest first; changed in place.
        render_one: Renders compartment ``i`` at tier ``t``; returns ``""`` for
            tier 5 (an element that is omitted with its separator).
        budget: The budget in tokens; ``<= 0`` disables the guard.
        estimate: The token estimator.
        separator: The text between rendered elements.

    Returns:
        ``tiers``, demoted as needed.
    """
    if budget <= 0 or not tiers:
        return tiers
    guard = 5 * len(tiers)
    sep_cost = estimate(separator)
    costs = [0] * len(tiers)
    total = 0
    shown = 0
    for i, t in enumerate(tiers):
        if t < 5:
            text = render_one(i, t)
            if text:
                costs[i] = estimate(text)
                total += costs[i]
                shown += 1
    oldest = 0

    def demote() -> bool:
        nonlocal oldest, total, shown, guard
        while oldest < len(tiers) and tiers[oldest] >= 5:
            oldest += 1
        if oldest >= len(tiers):
            return False
        tiers[oldest] += 1
        text = render_one(oldest, tiers[oldest]) if tiers[oldest] < 5 else ""
        new_cost = estimate(text) if text else 0
        if costs[oldest] and not new_cost:
            shown -= 1
        elif new_cost and not costs[oldest]:
            shown += 1
        total += new_cost - costs[oldest]
        costs[oldest] = new_cost
        guard -= 1
        return True

    while guard > 0 and total + sep_cost * max(shown - 1, 0) > budget:
        if not demote():
            return tiers
    while guard > 0:
        parts = [render_one(i, t) for i, t in enumerate(tiers) if t < 5]
        body = separator.join(p for p in parts if p)
        if estimate(body) <= budget or not demote():
            break
    return tiers


def parse_wrapup_keep(argument: str | None) -> int:
    """Parse the ``wrapup [KEEP]`` argument (§3.11); empty means 20.

    Args:
        argument: The raw argument text, or ``None``.

    Returns:
        The positive number of newest raw messages to keep.

    Raises:
        ConfigurationError: With the reference's usage text for non-digits, or
            ``messages_to_keep must be a positive integer.`` for 0.
    """
    text = (argument or "").strip()
    if not text:
        return 20
    if not text.isascii() or not text.isdigit():
        raise ConfigurationError(
            "Usage: `/ctx-wrapup [messages_to_keep]` where messages_to_keep is a positive integer."
        )
    keep = int(text)
    if keep <= 0:
        raise ConfigurationError("messages_to_keep must be a positive integer.")
    return keep


@dataclass(slots=True, kw_only=True)
class TriggerState:
    """The facts one trigger evaluation looks at (§5 decision order).

    Attributes:
        usage_pct: Current context usage in percent.
        has_raw_after_last: There is raw history after the last compartment.
        in_progress: A historian run is already in progress.
        droppable_bytes: Bytes that pending drops would remove.
        active_bytes: Bytes currently in the active context.
        commit_cluster_count: Commit clusters in the scanned eligible head.
        chunk_token_estimate: Compact-chunk tokens of the scanned eligible head.
        has_more: The scan stopped on its budget.
        eligible_raw_tokens: True-raw tokens of the eligible head.
        eligible_messages: Messages in the eligible head.
    """

    usage_pct: float
    has_raw_after_last: bool = True
    in_progress: bool = False
    droppable_bytes: int = 0
    active_bytes: int = 0
    commit_cluster_count: int = 0
    chunk_token_estimate: int = 0
    has_more: bool = False
    eligible_raw_tokens: int = 0
    eligible_messages: int = 0


@dataclass(frozen=True, slots=True)
class TriggerDecision:
    """Whether to run the historian, and why (§5).

    Attributes:
        fire: True when a run should start.
        reason: ``force_band``, ``commit_clusters``, ``tail_size`` or
            ``projected_headroom`` when firing; otherwise a short no-fire cause.
    """

    fire: bool
    reason: str


def evaluate_trigger(
    state: TriggerState,
    context_limit: float | None,
    execute_threshold_pct: float = DEFAULT_EXECUTE_THRESHOLD_PCT,
    *,
    commit_trigger_enabled: bool = True,
    min_clusters: int = 3,
) -> TriggerDecision:
    """Decide whether the historian should run now, in the order of §5.

    The cheap-skip optimisation (step 2) is left to the caller, which knows how
    to bound the tail cheaply; the decision is the same without it.

    Args:
        state: The facts of this evaluation.
        context_limit: The model's context limit in tokens.
        execute_threshold_pct: The execute threshold in percent.
        commit_trigger_enabled: ``commit_cluster_trigger.enabled``.
        min_clusters: ``commit_cluster_trigger.min_clusters`` (at least 1).

    Returns:
        The decision and its reason.
    """
    thr = execute_threshold_pct
    limits = trigger_thresholds(context_limit, thr)
    budget = limits["trigger_budget"]
    if state.in_progress:
        return TriggerDecision(False, "in_flight")
    if not state.has_raw_after_last:
        return TriggerDecision(False, "no_new_raw_history")
    projected: float | None = None
    if state.droppable_bytes > 0 and state.active_bytes > 0:
        projected = state.usage_pct * (1 - state.droppable_bytes / state.active_bytes)
    if state.usage_pct >= limits["force_band_pct"]:
        if projected is not None and projected <= limits["post_drop_target_pct"]:
            return TriggerDecision(False, "drops_suffice")
        return TriggerDecision(True, "force_band")
    if (
        commit_trigger_enabled
        and state.commit_cluster_count >= max(1, min_clusters)
        and state.chunk_token_estimate >= budget
    ):
        return TriggerDecision(True, "commit_clusters")
    if state.chunk_token_estimate >= 3 * budget or (
        state.has_more and state.chunk_token_estimate > 0
    ):
        return TriggerDecision(True, "tail_size")
    if state.usage_pct < limits["proactive_floor_pct"]:
        return TriggerDecision(False, "below_proactive_floor")
    if projected is not None and projected <= limits["post_drop_target_pct"]:
        return TriggerDecision(False, "drops_suffice")
    meaningful = (
        state.has_more
        or state.eligible_raw_tokens >= 6000
        or state.chunk_token_estimate >= 6000
        or state.eligible_messages >= 12
    )
    if not meaningful:
        return TriggerDecision(False, "below_min_chunk")
    return TriggerDecision(True, "projected_headroom")
