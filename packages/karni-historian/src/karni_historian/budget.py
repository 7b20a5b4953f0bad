"""Token budgets of the historian: the history budget, its guard and the chunk size.

Every number the historian sizes its output by lives here, as pure functions
of the model's context limit and the execute threshold, so the renderer, the
``status`` report and the chunk builder agree on them
(``docs/historian/budgets.md``). Rounding is half up (:func:`js_round`), and
tokens are estimated as ``ceil(len / 3.5)`` unless a caller passes its own
estimator.
"""

from __future__ import annotations

import math

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
    "budget_guard",
    "check_history_budget_percentage",
    "estimate_tokens",
    "historian_chunk_tokens",
    "history_budget_tokens",
    "js_round",
    "tokens_for_length",
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
"""Cap on the execute threshold, in percent."""

DEFAULT_HISTORIAN_CONTEXT = 128_000
"""Context window assumed for the historian model when none is configured."""

CHARS_PER_TOKEN_FALLBACK = 3.5
"""Characters per token of the default estimator."""


def js_round(value: float) -> int:
    """Round half up (``floor(value + 0.5)``), not to the nearest even number.

    Args:
        value: Any finite number.

    Returns:
        ``floor(value + 0.5)``.
    """
    return math.floor(value + 0.5)


def estimate_tokens(text: str) -> int:
    """Estimate tokens as ``ceil(len(text) / 3.5)``, the historian's default estimator.

    Args:
        text: Any text.

    Returns:
        The estimated token count.
    """
    return tokens_for_length(len(text))


def tokens_for_length(chars: int) -> int:
    """:func:`estimate_tokens` of a text ``chars`` characters long."""
    return -(-chars * 2 // 7)


def _finite_positive(value: float | None) -> bool:
    return value is not None and value == value and 0 < value < float("inf")


def check_history_budget_percentage(value: float) -> float:
    """Check a ``history_budget_percentage``: a number from 0.05 to 0.5.

    Args:
        value: The configured share.

    Returns:
        ``value``, unchanged.

    Raises:
        ConfigurationError: ``value`` is a boolean or outside 0.05–0.5.
    """
    low, high = MIN_HISTORY_BUDGET_PERCENTAGE, MAX_HISTORY_BUDGET_PERCENTAGE
    if isinstance(value, bool) or not low <= value <= high:
        raise ConfigurationError(
            f"`history_budget_percentage` must be between {low} and {high} (got {value!r}); "
            f"set it in that range or remove it for the default {DEFAULT_HISTORY_BUDGET_PERCENTAGE}"
        )
    return value


def history_budget_tokens(
    context_limit: float | None,
    execute_threshold_pct: float = DEFAULT_EXECUTE_THRESHOLD_PCT,
    history_budget_percentage: float | None = DEFAULT_HISTORY_BUDGET_PERCENTAGE,
) -> int:
    """Return the token budget of the session-history block (``docs/historian/budgets.md``).

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
    if history_budget_percentage is None:
        return DEFAULT_HISTORY_BUDGET_TOKENS
    check_history_budget_percentage(history_budget_percentage)
    if context_limit is None or not _finite_positive(context_limit):
        return DEFAULT_HISTORY_BUDGET_TOKENS
    threshold = min(max(execute_threshold_pct, 0.0), MAX_EXECUTE_THRESHOLD_PCT)
    # This order of multiplication fixes the float rounding of the documented examples.
    return math.floor(context_limit * (threshold / 100) * history_budget_percentage)


def historian_chunk_tokens(historian_context: float | None = DEFAULT_HISTORIAN_CONTEXT) -> int:
    """Return the token budget of one historian chunk (``docs/historian/budgets.md``).

    Args:
        historian_context: The historian model's context window in tokens;
            ``None`` or non-positive for the 128k default.

    Returns:
        ``clamp(round(0.25 * context), 8_000, 50_000)``: 32,000 for 128k.
    """
    if historian_context is None or not _finite_positive(historian_context):
        historian_context = DEFAULT_HISTORIAN_CONTEXT
    return min(max(js_round(0.25 * historian_context), 8_000), 50_000)


class _Guard:
    """The running cost of the rendered elements while the guard demotes them."""

    def __init__(
        self,
        tiers: MutableSequence[int],
        render_one: Callable[[int, int], str],
        estimate: Callable[[str], int],
    ) -> None:
        self.tiers = tiers
        self.render_one = render_one
        self.estimate = estimate
        self.moves_left = 5 * len(tiers)
        self.costs = [self._cost(i, t) for i, t in enumerate(tiers)]
        self.shown = sum(1 for cost in self.costs if cost)
        self.oldest = 0

    def _cost(self, index: int, tier: int) -> int:
        text = self.render_one(index, tier) if tier < 5 else ""
        return self.estimate(text) if text else 0

    def total(self, separator_cost: int) -> int:
        """The estimated tokens of the joined body, from the per-element costs."""
        return sum(self.costs) + separator_cost * max(self.shown - 1, 0)

    def demote(self) -> bool:
        """Move the oldest element still shown one tier down; False when none is left."""
        tiers = self.tiers
        while self.oldest < len(tiers) and tiers[self.oldest] >= 5:
            self.oldest += 1
        if self.oldest >= len(tiers) or self.moves_left <= 0:
            return False
        index = self.oldest
        tiers[index] += 1
        old, new = self.costs[index], self._cost(index, tiers[index])
        self.shown += (1 if new else 0) - (1 if old else 0)
        self.costs[index] = new
        self.moves_left -= 1
        return True

    def body(self, separator: str) -> str:
        """The joined body at the current tiers."""
        parts = (self.render_one(i, t) for i, t in enumerate(self.tiers) if t < 5)
        return separator.join(part for part in parts if part)


def budget_guard(
    tiers: MutableSequence[int],
    render_one: Callable[[int, int], str],
    budget: float,
    estimate: Callable[[str], int] = estimate_tokens,
    *,
    separator: str = "\n\n",
) -> MutableSequence[int]:
    """Demote the oldest rendered compartments until the joined body fits.

    While the estimate of the joined body exceeds the budget, the oldest
    compartment whose tier is below 5 moves one tier down, at most
    ``5 * len(tiers)`` times (``docs/historian/budgets.md``). The per-element
    sum drives the loop; the exact joined body is re-checked at the end, which
    gives the same result for an additive estimator.

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
    guard = _Guard(tiers, render_one, estimate)
    separator_cost = estimate(separator)
    while guard.total(separator_cost) > budget:
        if not guard.demote():
            return tiers
    while estimate(guard.body(separator)) > budget and guard.demote():
        pass
    return tiers
