"""Message parts as the JSON the ``raw_messages`` table stores.

A message's parts (:class:`~karni_historian.model.TextPart` and
:class:`~karni_historian.model.ToolPart`) are kept as one JSON list per row, with
default values left out so the rows stay small.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

__all__ = [
    "has_fast_json",
    "json_reader",
    "part_to_dict",
    "parts_decoder",
    "parts_from_json",
    "parts_to_json",
]


def parts_to_json(parts: Iterable[Any]) -> str:
    """Encode model parts (``TextPart``/``ToolPart``) as the stored, compact JSON list."""
    from karni_historian.fastjson import dumps

    return dumps([part_to_dict(part) for part in parts])


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
    return parts_decoder()(text)


def parts_decoder(
    tool_input: Callable[[Any], Any] | None = None,
) -> Callable[[str], tuple[Any, ...]]:
    """:func:`parts_from_json` with its imports and lookups done once, for many rows.

    Stored rows are compact JSON (:func:`parts_to_json`): with the
    ``speedups`` extra they are read by orjson (to the same objects, see
    :func:`json_reader`), else by the JSON module's scanner directly; anything
    else goes through ``json.loads``, which decodes it, or raises, as it
    always does. ``tool_input``, when given, maps each tool part's input to
    the one the part gets (how a reader shows paths project-relative
    without copying every message afterwards).
    """
    from karni_historian.model import TextPart, ToolPart

    items_of = json_reader()

    def decode(text: str) -> tuple[Any, ...]:
        parts: list[Any] = []
        for item in items_of(text):
            get = item.get
            if get("type") == "tool":
                data = get("input")
                parts.append(
                    ToolPart(
                        get("name", ""),
                        data if tool_input is None else tool_input(data),
                        get("output"),
                        get("call_id", ""),
                        bool(get("is_error", False)),
                        get("metadata"),
                    )
                )
            else:
                parts.append(TextPart(get("text", ""), bool(get("ignored", False))))
        return tuple(parts)

    return decode


def json_reader() -> Callable[[str], Any]:
    """The JSON decoder of stored rows: orjson's when the ``speedups`` extra is installed.

    orjson decodes a row to the objects ``json.loads`` gives, except that it
    reads an integer beyond 64 bits as a float: a row that decodes to any
    float is decoded again by the standard library, and so is one orjson
    refuses (``karni_historian.fastjson`` says which). This reads the text
    itself, not its UTF-8 bytes, and needs no look for long runs of digits.
    """
    import json

    fast_loads = _orjson_loads()

    decoder = json.JSONDecoder()
    scan: Callable[[str, int], tuple[Any, int]] = decoder.scan_once  # type: ignore[attr-defined]
    loads = json.loads

    def items_of(text: str) -> Any:
        if fast_loads is not None and type(text) is str:
            try:
                items = fast_loads(text)
            except ValueError:
                pass  # the standard library accepts more, or raises its own error
            else:
                if not _holds_float(items):
                    return items
        try:
            items, end = scan(text, 0)
        except (StopIteration, TypeError, ValueError):
            items, end = None, -1
        return items if end == len(text) else loads(text)

    return items_of


def has_fast_json() -> bool:
    """Whether :func:`json_reader` decodes with orjson (the ``speedups`` extra)."""
    return _orjson_loads() is not None


def _orjson_loads() -> Callable[[str], Any] | None:
    try:
        from orjson import loads
    except ImportError:  # the extra is not installed
        return None
    return loads


def _holds_float(value: Any) -> bool:
    """Whether a decoded JSON value has a float anywhere in it (only containers are walked)."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return kind is float
    stack = [value]
    while stack:
        container = stack.pop()
        for item in container.values() if type(container) is dict else container:
            kind = type(item)
            if kind is float:
                return True
            if kind is dict or kind is list:
                stack.append(item)
    return False
