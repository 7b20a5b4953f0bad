"""Deterministic decay: which tier each compartment renders at (``docs/historian/decay.md``).

A compartment's detail shrinks with its age, measured in compartments from the
newest one, against a half-life of 24 compartments at importance 50. Every 25
importance points double or halve that half-life, and budget pressure scales it
down when the history budget is tight. The tier boundaries are fixed
empirical constants. Pressure is computed once per render
pass from the natural (pressure 1) tiers, so the whole choice is linear in the
number of compartments and needs no model call.

Tiers: 1 full paraphrase, 2 compressed, 3 concise, 4 anchor-only, 5 archived
(not rendered). Only the standard library's :mod:`math` is used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "ARCHIVED",
    "HALF_LIFE",
    "IMPORTANCE_DOUBLING",
    "PRESSURE_FLOOR",
    "TIER_BOUNDARIES",
    "TIER_COST",
    "base_tier",
    "half_life",
    "newest_visible",
    "pressure",
    "stretch",
    "tier",
    "tier_at",
]

HALF_LIFE = 24.0
"""Half-life in compartments at importance 50 and pressure 1 (``H50``)."""

IMPORTANCE_DOUBLING = 25.0
"""Importance points that double (or halve) the half-life (``D``)."""

PRESSURE_FLOOR = 0.1
"""The lowest pressure ever used (``P_FLOOR``)."""

TIER_BOUNDARIES = (0.201, 0.729, 1.322, 2.587)
"""``Z1..Z4``: the tier boundaries in half-life units."""

TIER_COST = (0, 322, 109, 35, 20, 5)
"""Average token cost of tiers 1..5 (index 0 unused); tier 5 is never charged."""

ARCHIVED = 5
"""The tier of a compartment that is not rendered at all."""

_Z1, _Z2, _Z3, _Z4 = TIER_BOUNDARIES


def half_life(importance: float, pressure: float) -> float:
    """Return the importance-adjusted, pressure-scaled half-life in compartments.

    Args:
        importance: The compartment's importance; clamped to 1–100.
        pressure: The budget pressure; floored at 0.1.

    Returns:
        ``24 * 2 ** ((importance - 50) / 25) / pressure``.
    """
    return stretch(importance) / max(pressure, PRESSURE_FLOOR)


def stretch(importance: float) -> float:
    """The half-life at pressure 1: ``24 * 2 ** ((importance - 50) / 25)``, importance 1–100."""
    known = _STRETCHES.get(importance)
    if known is None:
        imp = min(max(importance, 1), 100)
        doubling: float = 2.0 ** ((imp - 50) / IMPORTANCE_DOUBLING)  # a positive base
        known = _STRETCHES[importance] = HALF_LIFE * doubling
    return known


_STRETCHES: dict[float, float] = {}
""":func:`stretch` by importance (a store holds at most 100 distinct ones)."""


def tier_at(z: float) -> int:
    """The curve tier, 1–5, at ``z`` half-lives of age (the boundaries ``Z1..Z4``)."""
    if z < _Z1:
        return 1
    if z < _Z2:
        return 2
    if z < _Z3:
        return 3
    if z < _Z4:
        return 4
    return 5


def base_tier(index: int, importance: float, pressure: float) -> int:
    """Return the curve tier, 1–5, before the archiving rule.

    Args:
        index: The curve position, 1 for the newest compartment.
        importance: The compartment's importance (clamped to 1–100).
        pressure: The budget pressure (floored at 0.1).

    Returns:
        1 when ``z < 0.201``, 2 below 0.729, 3 below 1.322, 4 below 2.587, else 5,
        where ``z = (index - 1) / half_life``.
    """
    return tier_at((max(index, 1) - 1) / half_life(importance, pressure))


def tier(index: int, importance: float, pressure: float) -> int:
    """Return the rendered tier of a compartment: 1–4, or 5 when archived.

    A compartment is archived exactly when ``z >= 2.587``.

    Args:
        index: The curve position, 1 for the newest compartment.
        importance: The compartment's importance (clamped to 1–100).
        pressure: The budget pressure (floored at 0.1).

    Returns:
        The tier: 1 full, 2 compressed, 3 concise, 4 anchor-only, 5 archived.

    Examples:
        >>> tier(1, 1, 8), tier(8, 50, 1), tier(89, 50, 1)
        (1, 2, 5)
    """
    return base_tier(index, importance, pressure)


def _natural_cost(items: Iterable[tuple[int, float]], pressure: float) -> int:
    cost = 0
    for index, importance in items:
        t = base_tier(index, importance, pressure)
        if t < ARCHIVED:
            cost += TIER_COST[t]
    return cost


def pressure(items: Iterable[tuple[int, float]], budget: float) -> float:
    """Return the budget pressure for one render pass (``docs/historian/decay.md``).

    The natural cost is the sum of the tier costs at pressure 1; archived
    compartments cost nothing. Because the half-life scales as ``1 / p``, the
    pressure ``natural / budget`` lands the total cost near the budget.

    Args:
        items: ``(index, importance)`` pairs of the non-legacy compartments,
            ``index`` 1 for the newest.
        budget: The history budget in tokens; ``<= 0`` means no budget.

    Returns:
        ``max(0.1, natural / budget)``, or 1.0 when there is no budget.
    """
    if budget <= 0:
        return 1.0
    return max(PRESSURE_FLOOR, _natural_cost(items, 1.0) / budget)


def newest_visible() -> int:
    """How many of the newest compartments can ever be shown; older ones always archive.

    The most important compartment at the lowest pressure has the longest
    half-life, so no compartment past this curve position reaches a tier
    below :data:`ARCHIVED`: a brief never needs to read further back.
    """
    longest = half_life(100, PRESSURE_FLOOR)
    index = int(_Z4 * longest) + 1
    while base_tier(index + 1, 100, PRESSURE_FLOOR) < ARCHIVED:
        index += 1
    return index
