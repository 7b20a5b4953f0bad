"""The grammar of ``historian.expand_tools`` templates: the text parsed into segments.

A template is literal text and ``${…}`` placeholders; :func:`parse_segments`
reads it once into a list of both, each placeholder a :class:`Placeholder`
(its path of steps, then its operators), or raises
:class:`~karni_historian.errors.TemplateError` naming the 1-based character
where parsing failed. Evaluating them is :mod:`karni_historian.template_values`'
concern; the grammar is in ``docs/historian/templates.md``.
"""

from __future__ import annotations

from karni_historian.errors import TemplateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Placeholder", "parse_segments"]

MAX_SAFE_INTEGER = 2**53 - 1
_OPERATORS = (".each(", ".join(", ".truncate(")


class Placeholder:
    """One ``${…}`` of a template: its steps from the root, then its operators."""

    __slots__ = ("bare_output", "count", "each", "join", "steps", "truncate")

    def __init__(
        self,
        steps: list[tuple[Any, ...]],
        each: list[str | Placeholder] | None,
        join: str | None,
        count: bool,
        truncate: int | None,
    ) -> None:
        self.steps = steps
        self.each = each
        self.join = join
        self.count = count
        self.truncate = truncate
        self.bare_output = (
            steps == [("root", "output")] and each is None and join is None and not count
        )


def _ident_end(s: str, pos: int) -> int:
    n = len(s)
    if pos >= n or not (s[pos].isascii() and (s[pos].isalpha() or s[pos] == "_")):
        return pos
    j = pos + 1
    while j < n and s[j].isascii() and (s[j].isalnum() or s[j] in "_-"):
        j += 1
    return j


def _digits_end(s: str, pos: int) -> int:
    j = pos
    while j < len(s) and "0" <= s[j] <= "9":
        j += 1
    return j


def _is_operator(s: str, pos: int) -> bool:
    if s.startswith(_OPERATORS, pos):
        return True
    return s.startswith(".count", pos) and s[pos + 6 : pos + 7] in (".", "}")


def _json_string(s: str, pos: int) -> tuple[str, int]:
    # bench row "karni-historian brief FILE" runs without it
    import json

    if s[pos : pos + 1] != '"':
        raise TemplateError(pos + 1)
    j = pos + 1
    while j < len(s):
        if s[j] == "\\":
            j += 2
        elif s[j] == '"':
            break
        else:
            j += 1
    if j >= len(s):
        raise TemplateError(len(s) + 1)
    try:
        value = json.loads(s[pos : j + 1])
    except ValueError:
        raise TemplateError(pos + 1) from None
    return value, j + 1


def _expect(s: str, pos: int, char: str) -> int:
    if s[pos : pos + 1] != char:
        raise TemplateError(pos + 1)
    return pos + 1


def _parse_field(s: str, pos: int) -> tuple[str, int]:
    end = _ident_end(s, pos)
    if end == pos:
        raise TemplateError(pos + 1)
    if s[end : end + 1] == "(":
        raise TemplateError(end + 1)
    return s[pos:end], end


def _parse_root(s: str, pos: int, relative: bool) -> tuple[tuple[Any, ...], int]:
    """The first step: ``input``/``output``, or inside ``.each`` ``.`` or a field name."""
    if relative and s[pos : pos + 1] == "." and not _is_operator(s, pos):
        return ("self",), pos + 1
    end = _ident_end(s, pos)
    if end == pos:
        raise TemplateError(pos + 1)
    name = s[pos:end]
    if not relative and name not in ("input", "output"):
        raise TemplateError(end + 1)
    if s[end : end + 1] == "(":
        raise TemplateError(end + 1)
    return (("rel", name) if relative else ("root", name)), end


def _parse_steps(s: str, pos: int, steps: list[tuple[Any, ...]]) -> int:
    """Field, ``[N]`` and ``[*].field`` steps after the root, up to the first operator."""
    while pos < len(s):
        c = s[pos]
        if c == "." and not _is_operator(s, pos):
            if steps[0] == ("self",):
                raise TemplateError(pos + 1)
            name, pos = _parse_field(s, pos + 1)
            steps.append(("field", name))
        elif c == "[" and s.startswith("[*].", pos):
            name, pos = _parse_field(s, pos + 4)
            steps.append(("project", name))
        elif c == "[":
            end = _digits_end(s, pos + 1)
            if end == pos + 1:
                raise TemplateError(pos + 2)
            steps.append(("index", int(s[pos + 1 : end])))
            pos = _expect(s, end, "]")
        else:
            break
    return pos


def _parse_truncate(s: str, pos: int) -> tuple[int, int]:
    """The N of ``.truncate(N)`` starting at ``pos``, and where parsing goes on."""
    start = pos + len(".truncate(")
    end = _digits_end(s, start)
    if end == start:
        raise TemplateError(start + 1)
    limit = int(s[start:end])
    if limit > MAX_SAFE_INTEGER:
        raise TemplateError(start + 1)
    return limit, _expect(s, end, ")")


def _parse_expr(s: str, pos: int, relative: bool) -> tuple[Placeholder, int]:
    """One placeholder after ``${``: root, steps, then the operators in their order."""
    root, pos = _parse_root(s, pos, relative)
    steps: list[tuple[Any, ...]] = [root]
    pos = _parse_steps(s, pos, steps)
    each = join = truncate = None
    count = False
    if s.startswith(".each(", pos):
        if relative:
            raise TemplateError(pos + 7)  # only one .each level
        text, pos = _json_string(s, pos + 6)
        each = parse_segments(text, relative=True)
        pos = _expect(s, pos, ")")
    if s.startswith(".join(", pos):
        join, pos = _json_string(s, pos + 6)
        pos = _expect(s, pos, ")")
    if s.startswith(".count", pos) and s[pos + 6 : pos + 7] in (".", "}"):
        if each is not None or join is not None:
            raise TemplateError(pos + 1)
        count = True
        pos += 6
    if s.startswith(".truncate(", pos):
        truncate, pos = _parse_truncate(s, pos)
    pos = _expect(s, pos, "}")
    return Placeholder(steps, each, join, count, truncate), pos


def parse_segments(s: str, *, relative: bool) -> list[str | Placeholder]:
    """The literal texts and placeholders of ``s`` (``relative`` inside ``.each``).

    Raises:
        TemplateError: ``s`` does not follow the grammar.
    """
    segments: list[str | Placeholder] = []
    pos = 0
    while True:
        i = s.find("${", pos)
        if i < 0:
            if pos < len(s):
                segments.append(s[pos:])
            return segments
        if i > pos:
            segments.append(s[pos:i])
        placeholder, pos = _parse_expr(s, i + 2, relative)
        segments.append(placeholder)
