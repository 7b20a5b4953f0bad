"""Writing the historian's XML, and what parsing it would read back without writing it.

The built-in historian and the tests write the ``<output>`` document every
historian produces (:func:`emit`, ``docs/historian/validation.md``); a run of
the built-in historian takes what :func:`~karni_historian.condense.compartment_xml.parse`
would read from it without writing and parsing it (:func:`read_back`).
"""

from __future__ import annotations

from karni_historian.condense.compartment_xml import FACT_CATEGORIES, ParsedOutput, parse
from karni_historian.model import Compartment, Fact
from karni_historian.xml_text import escape_attr, escape_body

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["emit", "read_back"]


def emit(
    compartments: Sequence[Compartment],
    facts: Sequence[Fact] = (),
    *,
    messages_processed: tuple[int, int] | None = None,
    unprocessed_from: int | None = None,
) -> str:
    """Write historian output in the format of ``docs/historian/validation.md``.

    Args:
        compartments: Compartments with all four tiers (``p4`` may be empty).
        facts: Project-memory facts; empty categories are omitted.
        messages_processed: The processed ``(first, last)`` range for ``<meta>``.
        unprocessed_from: Where processing stopped, if before the chunk end.

    Returns:
        The ``<output>…</output>`` document.
    """
    lines = ["<output>", "<compartments>"]
    for c in compartments:
        attrs = f'start="{c.start}" end="{c.end}" title="{escape_attr(c.title)}"'
        if c.episode_type:
            attrs += f' episode_type="{escape_attr(c.episode_type)}"'
        attrs += f' importance="{c.importance}"'
        lines.append(f"<compartment {attrs}>")
        for n, body in enumerate((c.p1, c.p2, c.p3), 1):
            lines.append(f"<p{n}>{escape_body(body)}</p{n}>")
        lines.append(f"<p4>{escape_body(c.p4)}</p4>" if c.p4 else "<p4/>")
        lines.append("</compartment>")
    lines.append("</compartments>")
    lines += _fact_lines(facts)
    lines += _meta_lines(messages_processed, unprocessed_from)
    lines.append("</output>")
    return "\n".join(lines)


def read_back(
    compartments: Sequence[Compartment],
    facts: Sequence[Fact] = (),
    *,
    messages_processed: tuple[int, int] | None = None,
) -> ParsedOutput:
    """What :func:`parse` reads from :func:`emit`'s document, without writing and reading it.

    Escaping and unescaping cancel out, so reading back only trims the tiers,
    fills ``content`` from ``p1``, clamps the importance, and groups and
    deduplicates the facts by category. Rows that :func:`parse` would treat
    specially (an empty title or first tier, a category that is not a tag)
    go through the document itself.
    """
    if any(not c.title or not c.p1.strip() for c in compartments) or any(
        f.category not in FACT_CATEGORIES for f in facts
    ):
        return parse(emit(compartments, facts, messages_processed=messages_processed))
    rows = [_read_back_row(c) for c in compartments]
    rows.sort(key=lambda c: c.start)
    by_category: dict[str, dict[str, None]] = {}
    for fact in facts:
        item = " ".join(fact.content.split())
        if item:
            by_category.setdefault(fact.category, {})[item] = None
    return ParsedOutput(
        compartments=rows,
        facts=[Fact(category, item) for category, items in by_category.items() for item in items],
        events=[],
        user_observations=[],
        primer=None,
        unprocessed_from=None,
        messages_processed=messages_processed,
    )


def _read_back_row(c: Compartment) -> Compartment:
    """``c`` as :func:`parse` reads it back: ``c`` itself when it already reads back so."""
    p1 = c.p1.strip()
    if (
        c.content == p1 == c.p1
        and c.p2 == c.p2.strip()
        and c.p3 == c.p3.strip()
        and c.p4 == c.p4.strip()
        and 1 <= c.importance <= 100
        and c.episode_type != ""
        and c.start_date is None
        and c.end_date is None
        and not c.legacy
    ):
        return c  # what the built-in historian writes: no copy
    return Compartment(
        start=c.start,
        end=c.end,
        title=c.title,
        p1=p1,
        p2=c.p2.strip(),
        p3=c.p3.strip(),
        p4=c.p4.strip(),
        importance=min(max(c.importance, 1), 100) if c.importance >= 0 else 50,
        episode_type=c.episode_type or None,
        content=p1,
    )


def _fact_lines(facts: Sequence[Fact]) -> list[str]:
    """The ``<facts>`` block, one element per category in first-seen order; none when empty."""
    by_category: dict[str, list[str]] = {}
    for fact in facts:
        by_category.setdefault(fact.category, []).append(" ".join(fact.content.split()))
    if not by_category:
        return []
    lines = ["<facts>"]
    for category, items in by_category.items():
        lines.append(f"<{category}>")
        lines.extend(f"* {escape_body(item)}" for item in items)
        lines.append(f"</{category}>")
    lines.append("</facts>")
    return lines


def _meta_lines(processed: tuple[int, int] | None, unprocessed_from: int | None) -> list[str]:
    """The ``<meta>`` block: the processed range and where processing stopped."""
    lines = ["<meta>"]
    if processed is not None:
        lines.append(f"<messages_processed>{processed[0]}-{processed[1]}</messages_processed>")
    if unprocessed_from is not None:
        lines.append(f"<unprocessed_from>{unprocessed_from}</unprocessed_from>")
    lines.append("</meta>")
    return lines
