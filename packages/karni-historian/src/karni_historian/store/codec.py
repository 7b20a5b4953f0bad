"""Message parts as the JSON the ``raw_messages`` table stores.

A message's parts (:class:`~karni_historian.model.TextPart` and
:class:`~karni_historian.model.ToolPart`) are kept as one JSON list per row, with
default values left out so the rows stay small.

A tool result whose call holds its output is stored as a reference to that
call: ``{"type": "tool", "name": …, "call_id": …, "copy_of": ordinal}``, where
``ordinal`` is the message of the call (see
:meth:`karni_historian.ingest.sink.SessionWriter.answer`). Decoding gives it the
call's part, so it reads as the copy older stores hold.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

__all__ = [
    "json_reader",
    "part_to_dict",
    "parts_decoder",
    "parts_from_json",
    "parts_to_json",
]


def parts_to_json(parts: Iterable[Any]) -> str:
    """Encode model parts (``TextPart``/``ToolPart``) as the stored, compact JSON list."""
    # bench row "karni-historian brief FILE" runs without it
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
    resolve: Callable[[int, str], Any] | None = None,
) -> Callable[[str], tuple[Any, ...]]:
    """:func:`parts_from_json` with its imports and lookups done once, for many rows.

    Stored rows are compact JSON (:func:`parts_to_json`). With the
    ``speedups`` extra they are read by orjson, which gives the objects
    ``json.loads`` gives except that it reads an integer beyond 64 bits as a
    float: a row whose parts would hold a float, or that is not a list of
    objects, is read again by the standard library, and so is one orjson
    refuses. Without the extra, the JSON module's scanner reads each row
    directly; anything else goes through ``json.loads``, which decodes it, or
    raises, as it always does. ``tool_input``, when given, maps each tool
    part's input to the one the part gets (how a reader shows paths
    project-relative without copying every message afterwards).
    ``resolve(ordinal, call_id)``, when given, returns the part a stored
    reference stands for (the call's, or None when it cannot be found); a
    reference it does not resolve reads as a part with only the name and
    the call id.
    """
    return _Decoder(tool_input, resolve).decode


class _Decoder:
    """Stored rows decoded into parts, :func:`parts_decoder`'s imports and lookups done once."""

    __slots__ = ("_exact", "_fast", "_resolve", "_text_part", "_tool_input", "_tool_part")

    def __init__(
        self,
        tool_input: Callable[[Any], Any] | None,
        resolve: Callable[[int, str], Any] | None,
    ) -> None:
        # bench row "karni-historian brief FILE" runs without it
        from karni_historian.fastjson import orjson_loads
        from karni_historian.model import TextPart, ToolPart

        self._fast = orjson_loads()
        self._exact = _stdlib_reader()
        self._tool_input = tool_input
        self._resolve = resolve
        self._text_part = TextPart
        self._tool_part = ToolPart

    def decode(self, text: str) -> tuple[Any, ...]:
        """The parts of one stored row: read by orjson when it reads them right, else exactly."""
        fast = self._fast
        if fast is not None and type(text) is str:
            try:
                items = fast(text)
            except ValueError:
                pass  # the standard library accepts more, or raises its own error
            else:
                if type(items) is list:
                    parts = self._parts(items, True)
                    if parts is not None:
                        return parts
        found = self._parts(self._exact(text), False)
        assert found is not None  # only a checked reading gives up
        return found

    def _parts(self, items: Any, checked: bool) -> tuple[Any, ...] | None:
        """The parts of the decoded items; None when ``checked`` finds what orjson may misread."""
        parts: list[Any] = []
        tool, text_part = self._tool, self._text_part
        for item in items:
            if checked and type(item) is not dict:
                return None
            get = item.get
            if get("type") == "tool":
                part = tool(get, checked)
                if part is None:
                    return None
            else:
                text = get("text", "")
                if checked and type(text) is float:
                    return None
                part = text_part(text, bool(get("ignored")))
            parts.append(part)
        return tuple(parts)

    def _tool(self, get: Callable[..., Any], checked: bool) -> Any:
        """A tool item's part (a reference's resolved one); None when ``checked`` finds a float."""
        name, data, output = get("name", ""), get("input"), get("output")
        call_id, metadata = get("call_id", ""), get("metadata")
        copy_of = get("copy_of")
        if copy_of is not None:
            if checked and type(copy_of) is float:
                return None
            if type(copy_of) is int and type(call_id) is str and call_id:
                found = self._resolve(copy_of, call_id) if self._resolve is not None else None
                return found if found is not None else self._tool_part(name, None, None, call_id)
        if checked and (
            type(name) is float
            or type(output) is float
            or type(call_id) is float
            or _holds_float(data)
            or (metadata is not None and _holds_float(metadata))
        ):
            return None
        if self._tool_input is not None:
            data = self._tool_input(data)
        return self._tool_part(name, data, output, call_id, bool(get("is_error")), metadata)


def json_reader() -> Callable[[str], Any]:
    """A decoder of stored rows for readers of their strings: orjson's, with the extra.

    It decodes what ``json.loads`` decodes, to the same objects but for an
    integer beyond 64 bits, which orjson reads as a float (never a string,
    so a reader that only takes strings reads the same); it raises
    ``ValueError`` (or ``TypeError`` for what is not text) where
    ``json.loads`` raises.
    """
    # bench row "karni-historian brief FILE" runs without it
    from karni_historian.fastjson import orjson_loads

    fast = orjson_loads()
    exact = _stdlib_reader()

    def items_of(text: str) -> Any:
        if fast is not None and type(text) is str:
            try:
                return fast(text)
            except ValueError:
                pass  # the standard library accepts more, or raises its own error
        return exact(text)

    return items_of


def _stdlib_reader() -> Callable[[str], Any]:
    """The JSON module's scanner on compact rows, ``json.loads`` on anything else."""
    # bench row "karni-historian brief FILE" runs without it
    import json

    decoder = json.JSONDecoder()
    scan: Callable[[str, int], tuple[Any, int]] = decoder.scan_once  # type: ignore[attr-defined]
    loads = json.loads

    def items_of(text: str) -> Any:
        try:
            items, end = scan(text, 0)
        except (StopIteration, TypeError, ValueError):
            items, end = None, -1
        return items if end == len(text) else loads(text)

    return items_of


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
