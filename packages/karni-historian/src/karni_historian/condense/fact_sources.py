"""Where a promoted fact was said, and by whom; quoted tool output is never promoted.

A fact in project memory is only as good as its source. Before a run's facts
are published, each is looked up in the messages of the run's compartments:
said in a user prompt, its origin is ``user``; in the agent's own words,
``agent``. Text that also appears in a tool's output (a file read, a fetched
page, a command's output) is a quotation, not a statement: the fact is dropped
unless the user said it. A fact found nowhere (a model's paraphrase) keeps no
source message and its origin is ``historian``.
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.condense.message_text import meaningful_user_text
from karni_historian.model import TextPart, ToolPart

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from karni_historian.model import Compartment, Fact, Message

__all__ = ["TracedFacts", "trace_facts"]


@dataclass(slots=True)
class TracedFacts:
    """The facts to publish, each with its compartment span and its source.

    Attributes:
        facts: The facts kept.
        spans: Per fact, the compartment it came from, or None (the whole run).
        sources: Per fact, ``(message ordinal or None, origin)``.
    """

    facts: list[Fact]
    spans: list[tuple[int, int] | None]
    sources: list[tuple[int | None, str]]


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def _said(message: Message) -> tuple[str, str, str]:
    """``(origin, what the user or agent wrote, tool output)`` of a message, flattened."""
    outputs = " ".join(p.output or "" for p in message.parts if isinstance(p, ToolPart))
    if message.role == "user":
        return "user", _flat(meaningful_user_text(message)), _flat(outputs)
    texts = " ".join(p.text for p in message.parts if isinstance(p, TextPart) and not p.ignored)
    return "agent", _flat(texts), _flat(outputs)


def _find(
    needle: str, compartments: Sequence[Compartment], by_ordinal: Mapping[int, Message]
) -> tuple[tuple[int, int] | None, int | None, str, bool]:
    """Span, message and origin of the first statement of ``needle``; and whether it is quoted."""
    quoted = False
    for compartment in compartments:
        for ordinal in range(compartment.start, compartment.end + 1):
            message = by_ordinal.get(ordinal)
            if message is None:
                continue
            origin, written, output = _said(message)
            quoted = quoted or needle in output
            if needle in written:
                return (compartment.start, compartment.end), ordinal, origin, quoted
    return None, None, "historian", quoted


def trace_facts(
    facts: Sequence[Fact], compartments: Sequence[Compartment], by_ordinal: Mapping[int, Message]
) -> TracedFacts:
    """Find each fact's source in the compartments' messages; drop quoted tool output.

    Args:
        facts: The run's facts.
        compartments: The run's compartments.
        by_ordinal: The session's messages by ordinal.

    Returns:
        The kept facts with their spans and sources, in order.
    """
    traced = TracedFacts([], [], [])
    for fact in facts:
        needle = _flat(fact.content).rstrip(".")
        span, ordinal, origin, quoted = _find(needle, compartments, by_ordinal)
        if not needle or (quoted and origin != "user"):
            continue
        traced.facts.append(fact)
        traced.spans.append(span)
        traced.sources.append((ordinal, origin))
    return traced
