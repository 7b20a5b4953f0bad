"""Message parts as the JSON the ``raw_messages`` table stores.

A message's parts (:class:`~karni_historian.model.TextPart` and
:class:`~karni_historian.model.ToolPart`) are kept as one JSON list per row, with
default values left out so the rows stay small.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["part_to_dict", "parts_from_json", "parts_to_json"]


def parts_to_json(parts: Iterable[Any]) -> str:
    """Encode model parts (``TextPart``/``ToolPart``) as the stored JSON list."""
    import json

    return json.dumps([part_to_dict(part) for part in parts], ensure_ascii=False)


def part_to_dict(part: Any) -> dict[str, Any]:
    """One part as the stored JSON object; defaults are left out."""
    if hasattr(part, "text"):
        out: dict[str, Any] = {"type": "text", "text": part.text}
        if part.ignored:
            out["ignored"] = True
        return out
    out = {"type": "tool", "name": part.name, "input": part.input}
    if part.output is not None:
        out["output"] = part.output
    if part.call_id:
        out["call_id"] = part.call_id
    if part.is_error:
        out["is_error"] = True
    if part.metadata:
        out["metadata"] = part.metadata
    return out


def parts_from_json(text: str) -> tuple[Any, ...]:
    """Decode the stored JSON list into model parts."""
    import json

    from karni_historian.model import TextPart, ToolPart

    parts: list[Any] = []
    for item in json.loads(text):
        if item.get("type") == "tool":
            parts.append(
                ToolPart(
                    name=item.get("name", ""),
                    input=item.get("input"),
                    output=item.get("output"),
                    call_id=item.get("call_id", ""),
                    is_error=bool(item.get("is_error", False)),
                    metadata=item.get("metadata"),
                )
            )
        else:
            parts.append(TextPart(item.get("text", ""), bool(item.get("ignored", False))))
    return tuple(parts)
