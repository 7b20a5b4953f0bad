"""Reading one JSON document without importing :mod:`json`.

``import json`` compiles regular expressions, so it brings in ``re``,
``enum``, ``functools`` and ``collections``: several milliseconds on a
command that runs before every edit (a provider reading a program's JSON
reply). The scanner :mod:`json` itself uses is the compiler-level ``_json``
module, which needs none of that; this module drives it the way
``json.loads`` does, with the same results and the same strictness, and
falls back to :mod:`json` where ``_json`` is missing. See docs/performance.md.
"""

from __future__ import annotations

__all__ = ["loads"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _Options:
    """What ``_json.make_scanner`` reads from a decoder: ``json.loads``'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


_scanner: list[Callable[[str, int], tuple[Any, int]]] = []


def loads(text: str) -> Any:
    """The value of the JSON document ``text``, as ``json.loads(text)`` gives it.

    Raises:
        ValueError: ``text`` is not one JSON document.
        RecursionError: It nests too deeply.
    """
    if not _scanner:
        try:
            from _json import make_scanner
        except ImportError:  # an interpreter without the C scanner
            import json

            return json.loads(text)
        _scanner.append(make_scanner(_Options()))  # type: ignore[arg-type]  # duck-typed context
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scanner[0](text, start)
    except StopIteration as stop:
        raise ValueError(f"not JSON: nothing readable at character {stop.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"not JSON: extra data at character {end}")
    return value
