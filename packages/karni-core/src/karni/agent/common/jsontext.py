"""Reading and writing one JSON document without importing :mod:`json`.

``import json`` compiles regular expressions, so it brings in ``re``,
``enum``, ``functools`` and ``collections``: several milliseconds on a
command that runs before every edit (a provider reading a program's JSON
reply). The scanner :mod:`json` itself uses is the compiler-level ``_json``
module, which needs none of that; this module drives it the way
``json.loads`` does, with the same results and the same strictness, and
falls back to :mod:`json` where ``_json`` is missing. :func:`dumps` writes
what ``json.dumps`` writes for plain data (dicts with string keys, lists,
strings, numbers, booleans, None), escaping strings with the same ``_json``
function. See docs/performance.md.
"""

from __future__ import annotations

__all__ = ["dumps", "load_scanner", "loads"]

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


def load_scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    """The C scanner :func:`loads` reads with, made on first use; None without ``_json``.

    A caller that waits on something anyway (a program's reply) may call it
    first, so the first :func:`loads` does not pay for it.
    """
    if not _scanner:
        try:
            from _json import make_scanner
        except ImportError:  # an interpreter without the C scanner
            return None
        _scanner.append(make_scanner(_Options()))  # type: ignore[arg-type]  # duck-typed context
    return _scanner[0]


def loads(text: str) -> Any:
    """The value of the JSON document ``text``, as ``json.loads(text)`` gives it.

    Raises:
        ValueError: ``text`` is not one JSON document.
        RecursionError: It nests too deeply.
    """
    scanner = _scanner[0] if _scanner else load_scanner()
    if scanner is None:
        # bench row "karni hook PreToolUse (brief printed)" runs without it
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = scanner(text, start)
    except StopIteration as stop:
        raise ValueError(f"not JSON: nothing readable at character {stop.value}") from None
    except SystemError:
        # bench row "karni hook PreToolUse (brief printed)" runs without it
        # Inside an object or array the scanner raises `json.decoder`'s error
        # class, which it finds only once `json` is imported: let `json` say it.
        import json

        return json.loads(text)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"not JSON: extra data at character {end}")
    return value


def dumps(value: Any, *, compact: bool = False) -> str:
    """``value`` as ``json.dumps(value)`` writes it (``compact``: ``separators=(",", ":")``).

    Only plain data is written: dicts with ``str`` keys, lists, tuples,
    strings, ints, floats, booleans and None.

    Raises:
        TypeError: Anything else, or a dict key that is not a string.
        RecursionError: ``value`` contains itself, or nests too deeply.
    """
    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:  # an interpreter without the C encoder
        # bench row "karni hook PreToolUse (brief printed)" runs without it
        import json

        return json.dumps(value, separators=(",", ":") if compact else None)
    parts: list[str] = []
    _write(value, parts.append, quote, ("," if compact else ", ", ":" if compact else ": "))
    return "".join(parts)


def _write(
    value: Any, out: Callable[[str], object], quote: Callable[[str], str], seps: tuple[str, str]
) -> None:
    if isinstance(value, str):
        out(quote(value))
    elif value is None or value is True or value is False:
        out("null" if value is None else "true" if value else "false")
    elif isinstance(value, int):
        out(int.__repr__(value))
    elif isinstance(value, float):
        out(_float_text(value))
    elif isinstance(value, dict):
        out("{")
        for index, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            out(f"{seps[0] if index else ''}{quote(key)}{seps[1]}")
            _write(item, out, quote, seps)
        out("}")
    elif isinstance(value, list | tuple):
        out("[")
        for index, item in enumerate(value):
            if index:
                out(seps[0])
            _write(item, out, quote, seps)
        out("]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _float_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)
