"""Chronicle's line templates, for briefs built from JSON rather than Markdown.

A ``context`` reply without ``markdown`` and every ``knowledge`` reply are
briefed from their items. The lines follow the templates of Chronicle's own
Markdown (its ``<when>``, prompt and knowledge-bullet forms), so a brief reads
the same whichever way it was built. Every field read from the store (a
text, a kind, a role, a date, the churn) is one clean line (karni-core's
``clean_field``): none can start a line of its own.
"""

from __future__ import annotations

__all__ = ["knowledge_line", "prompt_line", "when"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PROMPT_CHARS = 100
"""Chronicle shows at most this many characters of a prompt (99 and an ellipsis)."""


def _text(value: Any) -> str | None:
    from karni.agent.common.sanitize import clean_field

    if not isinstance(value, str):
        return None
    return " ".join(clean_field(value).split()) or None


def when(ts: Any) -> str:
    """Chronicle's ``<when>``: ``YYYY-MM-DD HH:MM`` in UTC, or ``unknown``."""
    text = _text(ts)
    if text is None:
        return "unknown"
    return text.replace("T", " ")[:16]


def prompt_line(number: int, item: dict[str, Any]) -> str:
    """One line of the prompt list: ``<n>. <when> <churn> — "<prompt>"``."""
    text = _text(item.get("text"))
    if text is None:
        prompt = "(prompt text unavailable)"
    else:
        if len(text) > _PROMPT_CHARS:
            text = text[: _PROMPT_CHARS - 1] + "…"
        prompt = f'"{text}"'
    churn = _text(item.get("churn"))
    parts = [f"{number}.", when(item.get("ts"))]
    if churn:
        parts.append(churn)
    return " ".join([*parts, "—", prompt])


def knowledge_line(item: dict[str, Any], *, with_kind: bool = True) -> str | None:
    """A knowledge bullet: ``- **[<kind>]** <text> _(<role>, <when>)_``; None without text."""
    text = _text(item.get("text"))
    if text is None:
        return None
    kind = _text(item.get("kind"))
    label = f"**[{kind}]** " if with_kind and kind else ""
    role = _text(item.get("role"))
    origin = f"{role}, {when(item.get('ts'))}" if role else when(item.get("ts"))
    return f"- {label}{text} _({origin})_"
