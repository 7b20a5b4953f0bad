"""When ``karni-historian run`` condenses: the three triggers and their order.

A run only condenses a session when one trigger fires (``docs/historian/triggers.md``):

- **pressure**: the session's live context is near the execute threshold;
- **commit clusters**: the settled messages hold at least three distinct
  commit clusters, finished phases of work, and enough text for a compartment;
- **tail size**: the settled tail has grown large enough to be worth
  condensing.

Every threshold derives from the *trigger budget*, about 5 % of the usable
context (the context limit at the execute threshold), clamped to 5k–50k
tokens. The facts are measured from the store: the raw messages after the last
compartment stand in for the live context, and the settled ones are read as
the compact chunk the historian would get.
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.budget import js_round
from karni_historian.condense.chunk import ChunkBuilder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_historian.condense.settings import Settings
    from karni_historian.model import Message

__all__ = [
    "MIN_COMMIT_CLUSTERS",
    "TriggerDecision",
    "TriggerState",
    "TriggerThresholds",
    "evaluate_trigger",
    "session_state",
    "trigger_budget",
]

MIN_COMMIT_CLUSTERS = 3
"""Distinct commit clusters that mark enough finished work to condense."""

MEANINGFUL_TOKENS = 6_000
"""Settled tokens (raw or chunk) that make a useful compartment under pressure."""

MEANINGFUL_MESSAGES = 12
"""Settled messages that make a useful compartment under pressure."""


def trigger_budget(context_limit: float | None, execute_threshold_pct: float) -> int:
    """Return the trigger budget: 5 % of the usable context, clamped to 5k–50k tokens.

    Args:
        context_limit: The model's context limit; an unknown or invalid one gives 5,000.
        execute_threshold_pct: The execute threshold in percent.

    Returns:
        ``clamp(round(limit * threshold / 100 * 0.05), 5_000, 50_000)``.
    """
    if context_limit is None or not 0 < context_limit < float("inf"):
        return 5_000
    if execute_threshold_pct != execute_threshold_pct:  # NaN
        return 5_000
    usable_share = js_round(context_limit * execute_threshold_pct / 100 * 0.05)
    return min(max(usable_share, 5_000), 50_000)


@dataclass(frozen=True, slots=True)
class TriggerThresholds:
    """The thresholds one evaluation compares against, all derived from the settings.

    Attributes:
        budget: The trigger budget in tokens.
        proactive_floor_pct: Below this usage the pressure trigger never fires.
        force_band_pct: At or above this usage the pressure trigger always fires.
        tail_size_tokens: Chunk tokens that fire the tail-size trigger (3 budgets).
    """

    budget: int
    proactive_floor_pct: float
    force_band_pct: float
    tail_size_tokens: int

    @classmethod
    def derive(cls, context_limit: float | None, execute_threshold_pct: float) -> TriggerThresholds:
        """The thresholds for a context limit and execute threshold."""
        budget = trigger_budget(context_limit, execute_threshold_pct)
        return cls(
            budget=budget,
            proactive_floor_pct=max(0.0, execute_threshold_pct - 2),
            force_band_pct=max(85.0, min(execute_threshold_pct, 90.0) + 2),
            tail_size_tokens=3 * budget,
        )


@dataclass(frozen=True, slots=True)
class TriggerState:
    """The facts of one session that the triggers look at.

    Attributes:
        usage_pct: The live context in use, in percent of the context limit.
        commit_clusters: Commit clusters in the scanned settled messages.
        chunk_tokens: Compact-chunk tokens of the scanned settled messages.
        has_more: The scan stopped on its budget before the settled end.
        settled_raw_tokens: True-raw tokens of the settled messages.
        settled_messages: How many messages are settled.
        usage_at_least: The count stopped once the usage reached the force
            band (:func:`session_state`'s ``stop_at_pct``): ``usage_pct`` and
            the settled figures cover only the messages counted.
    """

    usage_pct: float
    commit_clusters: int = 0
    chunk_tokens: int = 0
    has_more: bool = False
    settled_raw_tokens: int = 0
    settled_messages: int = 0
    usage_at_least: bool = False


@dataclass(frozen=True, slots=True)
class TriggerDecision:
    """Whether to condense now, and why.

    Attributes:
        fire: True when a trigger fired.
        reason: ``force_band``, ``commit_clusters``, ``tail_size`` or
            ``projected_headroom`` when firing; ``below_proactive_floor`` or
            ``below_min_chunk`` when not.
        detail: The reason in words, with the numbers behind it.
    """

    fire: bool
    reason: str
    detail: str


def _is_meaningful(state: TriggerState) -> bool:
    """Whether the settled messages are enough for a useful compartment."""
    return (
        state.has_more
        or state.settled_raw_tokens >= MEANINGFUL_TOKENS
        or state.chunk_tokens >= MEANINGFUL_TOKENS
        or state.settled_messages >= MEANINGFUL_MESSAGES
    )


def _work_trigger(state: TriggerState, limits: TriggerThresholds) -> TriggerDecision | None:
    """The commit-cluster or tail-size trigger, when one fires."""
    if state.commit_clusters >= MIN_COMMIT_CLUSTERS and state.chunk_tokens >= limits.budget:
        return TriggerDecision(
            True,
            "commit_clusters",
            f"{state.commit_clusters} commit clusters in ~{state.chunk_tokens} tokens "
            f"of settled work",
        )
    if state.chunk_tokens >= limits.tail_size_tokens:
        return TriggerDecision(
            True,
            "tail_size",
            f"the settled tail is ~{state.chunk_tokens} tokens, at least {limits.tail_size_tokens}",
        )
    if state.has_more and state.chunk_tokens > 0:
        return TriggerDecision(True, "tail_size", "the settled tail is larger than one scan")
    return None


def evaluate_trigger(
    state: TriggerState, context_limit: float | None, execute_threshold_pct: float
) -> TriggerDecision:
    """Decide whether to condense now, in the order of ``docs/historian/triggers.md``.

    Args:
        state: The session's facts.
        context_limit: The model's context limit in tokens.
        execute_threshold_pct: The execute threshold in percent.

    Returns:
        The decision, its reason and the numbers behind it.
    """
    limits = TriggerThresholds.derive(context_limit, execute_threshold_pct)
    usage = f"context use ~{state.usage_pct:.0f}%"
    if state.usage_pct >= limits.force_band_pct:
        detail = f"{usage}, at or above {limits.force_band_pct:g}%"
        if state.usage_at_least:
            detail = f"context use reached {limits.force_band_pct:g}% (counted up to there)"
        return TriggerDecision(True, "force_band", detail)
    work = _work_trigger(state, limits)
    if work is not None:
        return work
    if state.usage_pct < limits.proactive_floor_pct:
        detail = (
            f"{usage}, below {limits.proactive_floor_pct:g}%; {state.commit_clusters} commit "
            f"cluster(s) in ~{state.chunk_tokens} settled tokens ({MIN_COMMIT_CLUSTERS} need "
            f"{limits.budget} tokens, a tail {limits.tail_size_tokens})"
        )
        return TriggerDecision(False, "below_proactive_floor", detail)
    if not _is_meaningful(state):
        detail = f"{usage}, but the {state.settled_messages} settled messages are too few"
        return TriggerDecision(False, "below_min_chunk", detail)
    detail = f"{usage}, within 2 points of the execute threshold {execute_threshold_pct:g}%"
    return TriggerDecision(True, "projected_headroom", detail)


def session_state(
    counts: Iterable[tuple[int, int]],
    scan: Iterable[Message],
    offset: int,
    target: int,
    settings: Settings,
    stop_at_pct: float | None = None,
) -> TriggerState:
    """Measure a session for :func:`evaluate_trigger`.

    Args:
        counts: ``(ordinal, true-raw tokens)`` of the session's messages from
            ``offset`` on (after the last compartment), in ordinal order, as
            :func:`karni_historian.condense.message_text.raw_tokens` measures them
            (:func:`karni_historian.condense.trigger_facts.raw_token_counts`
            reads them from the store).
        scan: The session's messages from ``offset`` on, in ordinal order,
            for the chunk scan: read only until the scan is full or has read
            the last settled ordinal, so it may be a lazy iterator.
        offset: The first ordinal after the last compartment.
        target: The exclusive end of the settled messages.
        settings: The project's settings.
        stop_at_pct: Stop counting once the usage reaches this (the force
            band, which then fires whatever the rest holds): a session far
            past it is not read to its end.

    Returns:
        The usage of the raw messages after the last compartment, and the
        settled messages scanned as a chunk of at most
        ``max(6000, 3 * trigger budget)`` tokens.
    """
    limit = settings.context_limit
    budget = trigger_budget(limit, settings.execute_threshold_percentage)
    builder = ChunkBuilder(
        offset=offset,
        eligible_end=target,
        budget_tokens=max(MEANINGFUL_TOKENS, 3 * budget),
        expand_tools=settings.expand_tools,
    )
    for message in scan:
        # A message after the last settled one changes nothing the scan says: the
        # settled end bounds how far it looks for more (``has_more``).
        if not builder.read(message) or message.ordinal >= target - 1:
            break
    live_tokens = settled_tokens = settled = 0
    stopped = False
    for ordinal, tokens in counts:
        if ordinal < offset:
            continue
        live_tokens += tokens
        if ordinal < target:
            settled_tokens += tokens
            settled += 1
        if stop_at_pct is not None and live_tokens * 100 / limit >= stop_at_pct:
            stopped = True
            break
    scanned = builder.chunk()
    return TriggerState(
        usage_pct=live_tokens * 100 / limit,
        commit_clusters=scanned.commit_clusters,
        chunk_tokens=scanned.token_estimate,
        has_more=scanned.has_more,
        settled_raw_tokens=settled_tokens,
        settled_messages=settled,
        usage_at_least=stopped,
    )
