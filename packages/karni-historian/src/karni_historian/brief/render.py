"""The ``<session-history>`` block: compartments rendered with deterministic decay.

One ``<compartment>`` element per rendered compartment, oldest first, joined by
a blank line, archived ones omitted (``docs/historian/blocks.md``). The tier of
each compartment comes from :mod:`karni_historian.brief.decay` (one pressure
pass), then the budget guard demotes the oldest compartments while the body is
over budget, and a tightening loop re-renders with a smaller effective budget
while the whole block is more than 5 % over (``docs/historian/budgets.md``).
The same inputs always give the same bytes; no model is called.

- Titles are sanitised: runs of control, line-separator and
  paragraph-separator characters collapse to one space, before attribute
  escaping.
- An empty ``p2`` or ``p3`` counts as missing (the body falls back to the next
  denser tier); an empty ``p4`` is a real anchor and renders self-closing.
- Date attributes are emitted verbatim from ``start_date``/``end_date`` (the
  store writes local ``YYYY-MM-DD``), only when both are non-empty.
"""

from __future__ import annotations

import re

from karni_historian.brief.decay import ARCHIVED, pressure, tier
from karni_historian.brief.paraphrase import paraphrase
from karni_historian.budget import budget_guard, estimate_tokens
from karni_historian.xml_text import escape_attr, escape_body

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from re import Pattern

    from karni_historian.model import Compartment

__all__ = [
    "EMPTY_HISTORY",
    "assign_tiers",
    "compartment_element",
    "paraphrase",
    "render_body",
    "render_history",
    "xml_characters",
]

EMPTY_HISTORY = "<session-history></session-history>"
"""The block when no compartment is rendered."""

_SEPARATOR = "\n\n"
_TITLE_BREAKS = None
_NOT_XML: Pattern[str] | None = None


def xml_characters(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids, so the block stays well-formed.

    Those are the C0 controls but tab and the newlines (ESC among them), lone
    surrogates, U+FFFE and U+FFFF: a prompt may hold any of them.
    """
    global _NOT_XML
    if _NOT_XML is None:
        _NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
    return _NOT_XML.sub("", text)


def _sanitize_title(title: str) -> str:
    global _TITLE_BREAKS
    if _TITLE_BREAKS is None:
        _TITLE_BREAKS = re.compile("[\u0000-\u001f\u007f-\u009f\u2028\u2029]+")
    if title.isprintable():
        return title
    return _TITLE_BREAKS.sub(" ", title)


def compartment_element(c: Compartment, t: int, *, dates: bool = True) -> str:
    """Render one compartment at tier ``t`` as its ``<compartment>`` element.

    Args:
        c: The compartment.
        t: The tier, 1–5; tier 5 renders as ``""`` (omitted).
        dates: Emit ``start-date``/``end-date`` when both dates are present
            (``temporal_awareness``).

    Returns:
        A self-closing element when the body is empty, else the three-line form.
    """
    if t >= ARCHIVED:
        return ""
    attrs = f'start="{c.start}" end="{c.end}"'
    if dates and c.start_date and c.end_date:
        start, end = xml_characters(c.start_date), xml_characters(c.end_date)
        attrs += f' start-date="{escape_attr(start)}" end-date="{escape_attr(end)}"'
    attrs += f' title="{escape_attr(xml_characters(_sanitize_title(c.title or "")))}"'
    body = paraphrase(c, t)
    if not body:
        return f"<compartment {attrs} />"
    return f"<compartment {attrs}>\n{escape_body(xml_characters(body))}\n</compartment>"


def assign_tiers(
    compartments: Sequence[Compartment],
    budget: float,
    *,
    estimate: Callable[[str], int] = estimate_tokens,
    dates: bool = True,
) -> list[int]:
    """Choose the rendered tier of every compartment, oldest first.

    Every compartment takes a curve position counted from the newest (index 1).
    Pressure is computed once, then the budget guard demotes oldest-first
    while the joined body is over ``budget`` (``docs/historian/decay.md``).

    Args:
        compartments: Compartments of one session, oldest first.
        budget: The history budget in tokens; ``<= 0`` means no budget.
        estimate: Token estimator used by the guard.
        dates: Whether elements carry date attributes (affects the guard's
            measurements only).

    Returns:
        One tier per compartment: 1–4, or 5 when omitted.
    """
    count = len(compartments)
    curve = [
        (count - i, c.importance if c.importance is not None else 50)
        for i, c in enumerate(compartments)
    ]
    p = pressure(curve, budget)
    tiers = [tier(index, importance, p) for index, importance in curve]
    if budget > 0:

        def render_one(i: int, t: int) -> str:
            return compartment_element(compartments[i], t, dates=dates)

        budget_guard(tiers, render_one, budget, estimate)
    return tiers


def render_body(
    compartments: Sequence[Compartment], tiers: Sequence[int], *, dates: bool = True
) -> str:
    """Join the rendered elements of ``compartments`` at ``tiers`` with blank lines.

    Args:
        compartments: Compartments, oldest first.
        tiers: One tier per compartment.
        dates: Emit date attributes when both dates are present.

    Returns:
        The body of the ``<session-history>`` block (may be empty).
    """
    parts = []
    for c, t in zip(compartments, tiers, strict=True):
        if t < ARCHIVED:
            parts.append(compartment_element(c, t, dates=dates))
    return _SEPARATOR.join(parts)


def _wrap(body: str) -> str:
    if not body:
        return EMPTY_HISTORY
    return f"<session-history>\n{body}\n</session-history>"


def render_history(
    compartments: Sequence[Compartment],
    budget: float,
    *,
    estimate: Callable[[str], int] = estimate_tokens,
    dates: bool = True,
    max_attempts: int = 3,
) -> str:
    r"""Render the ``<session-history>`` block for one session's compartments.

    Tiers come from :func:`assign_tiers`. When the whole block is still more
    than 5 % over ``budget``, the tiers are chosen again for ``budget / 1.15``,
    then ``budget / 1.15²``, at most ``max_attempts`` renders in all.

    Args:
        compartments: Compartments of one session, oldest first.
        budget: The history budget in tokens; ``<= 0`` means no budget.
        estimate: The token estimator (default ``ceil(len / 3.5)``).
        dates: Emit date attributes (``temporal_awareness``, default on).
        max_attempts: Renders allowed by the tightening loop.

    Returns:
        ``<session-history>\\n…\\n</session-history>``, or
        ``<session-history></session-history>`` when nothing is rendered.

    Examples:
        >>> from karni_historian.model import Compartment
        >>> print(render_history([Compartment(1, 9, "T", p1="VERBOSE")], 10_000_000))
        <session-history>
        <compartment start="1" end="9" title="T">
        VERBOSE
        </compartment>
        </session-history>
    """
    multiplier = 1.0
    attempts = 1
    tiers = assign_tiers(compartments, budget, estimate=estimate, dates=dates)
    block = _wrap(render_body(compartments, tiers, dates=dates))
    if budget <= 0:
        return block
    while estimate(block) > budget * 1.05 and attempts < max_attempts:
        multiplier *= 1.15
        attempts += 1
        tiers = assign_tiers(compartments, budget / multiplier, estimate=estimate, dates=dates)
        block = _wrap(render_body(compartments, tiers, dates=dates))
    return block
