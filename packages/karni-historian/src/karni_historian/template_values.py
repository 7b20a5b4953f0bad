"""Evaluating a template's placeholders against one tool call: paths, lists, caps, JSON.

A placeholder (:class:`~karni_historian.template_syntax.Placeholder`) is
resolved against the call's input and output (the output read as JSON when
it is an object), rendered as text the way a browser's ``JSON.stringify``
would, and capped: 300 code points per placeholder and list element, 10
list elements, 1,000 per expansion, newlines collapsed
(``docs/historian/templates.md``).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.template_syntax import Placeholder

__all__ = ["EXPANSION_CAP", "LIST_LIMIT", "PLACEHOLDER_CAP", "Root", "cap", "render_placeholder"]

PLACEHOLDER_CAP = 300
"""Default cap, in code points, of one placeholder (and of one list element)."""

LIST_LIMIT = 10
"""Most list elements shown before ``… +N more``."""

EXPANSION_CAP = 1000
"""Cap, in code points, of a whole expansion."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()
_NEWLINES: Any = None


class Root:
    """The input and output of the call a template is evaluated for."""

    __slots__ = ("_structured", "input", "output")

    def __init__(self, input: Any, output: Any) -> None:
        self.input = _MISSING if input is None else input
        self.output = output
        self._structured: Any = None

    def structured_output(self) -> Any:
        """The output as a JSON object when it is one (read once), else missing."""
        if self._structured is None:
            out = self.output
            if out is None:
                value = _MISSING
            elif isinstance(out, str):
                value = _MISSING
                stripped = out.lstrip()
                if stripped.startswith("{"):
                    # bench row "karni-historian brief FILE" runs without it
                    import json

                    try:
                        parsed = json.loads(out)
                    except ValueError:
                        parsed = None
                    if isinstance(parsed, dict):
                        value = parsed
            else:
                value = out
            self._structured = (value,)
        return self._structured[0]


def _get(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        return value.get(name, _MISSING)
    return _MISSING


def _at(value: Any, index: int) -> Any:
    if isinstance(value, list) and index < len(value):
        return value[index]
    return _MISSING


def _resolve(steps: list[tuple[Any, ...]], root: Root | None, element: Any) -> tuple[Any, bool]:
    value: Any = _MISSING
    is_list = False
    for step in steps:
        kind = step[0]
        if kind == "root":
            assert root is not None
            value = root.input if step[1] == "input" else root.structured_output()
        elif kind == "self":
            value = element
        elif kind == "rel":
            value = _get(element, step[1])
        elif kind == "field":
            value = [_get(v, step[1]) for v in value] if is_list else _get(value, step[1])
        elif kind == "index":
            value = [_at(v, step[1]) for v in value] if is_list else _at(value, step[1])
        else:  # project
            if is_list:
                value = [
                    [_get(x, step[1]) for x in v] if isinstance(v, list) else _MISSING
                    for v in value
                ]
            else:
                value = [_get(v, step[1]) for v in value] if isinstance(value, list) else _MISSING
                is_list = True
    return value, is_list


def render_placeholder(p: Placeholder, root: Root | None, element: Any) -> str:
    """The text of ``p`` for the call ``root`` (or, inside ``.each``, for ``element``), capped."""
    if p.bare_output:
        assert root is not None
        out = root.output
        text = "" if out is None else out if isinstance(out, str) else _json(out)
    else:
        value, is_list = _resolve(p.steps, root, element)
        if p.count:
            text = str(len(value)) if isinstance(value, list) else ""
        elif p.each is not None or p.join is not None or is_list:
            text = _render_list(p, value)
        else:
            text = _scalar(value)
    return cap(text, PLACEHOLDER_CAP if p.truncate is None else p.truncate)


def _render_list(p: Placeholder, value: Any) -> str:
    if not isinstance(value, list):
        return ""
    rendered = []
    for item in value[:LIST_LIMIT]:
        if p.each is not None:
            text = "".join(
                seg if isinstance(seg, str) else render_placeholder(seg, None, item)
                for seg in p.each
            )
        else:
            text = _scalar(item)
        rendered.append(cap(text, PLACEHOLDER_CAP))
    if len(value) > LIST_LIMIT:
        rendered.append(f"… +{len(value) - LIST_LIMIT} more")
    separator = p.join if p.join is not None else ("; " if p.each is not None else ", ")
    return separator.join(rendered)


def _scalar(value: Any) -> str:
    if value is _MISSING:
        return ""
    if isinstance(value, str):
        return value
    return _json(value)


def _js_number(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text and "E" not in text and abs(value) >= 1e-6:
        return text
    # bench row "karni-historian brief FILE" runs without it
    from decimal import Decimal

    sign, digits, exponent = Decimal(text).as_tuple()
    mantissa = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # position of the decimal point in the digit string
    prefix = "-" if sign else ""
    if -6 < point <= 21:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{mantissa}"
        if point >= len(mantissa):
            return f"{prefix}{mantissa}{'0' * (point - len(mantissa))}"
        return f"{prefix}{mantissa[:point]}.{mantissa[point:]}"
    e = point - 1
    body = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{prefix}{body}e{'+' if e > 0 else '-'}{abs(e)}"


def _json(value: Any) -> str:
    # bench row "karni-historian brief FILE" runs without it
    import json

    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: _utf16_key(str(kv[0])))
        return "{" + ",".join(f"{_json(str(k))}:{_json(v)}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_json(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def cap(text: str, limit: int) -> str:
    """``text`` with its newlines collapsed to spaces, cut at ``limit`` code points with ``…``."""
    global _NEWLINES
    if "\r" in text or "\n" in text or "\u2028" in text or "\u2029" in text:
        if _NEWLINES is None:
            _NEWLINES = re.compile("[\r\n\u2028\u2029]+")
        text = _NEWLINES.sub(" ", text)
    if len(text) > limit:
        return text[:limit] + "…"
    return text
