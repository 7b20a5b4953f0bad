"""``historian.expand_tools``: the template language that makes tool calls readable.

Most tool calls reach the historian as a compact ``TC: name(arg)`` line. For a
few tools whose inputs and results carry the story (notes, todos, questions,
delegation), a template turns the call into one readable line instead, for
example ``Todos (2): completed: Inspect schema; in_progress: Test renderer``.
This module parses and evaluates those templates (with the implicit caps of
300 characters per placeholder, 10 list elements and 1,000 characters per
expansion), and merges the built-in, user and project template maps. The
grammar and the evaluation rules are in ``docs/historian/templates.md``.

Grammar, in short: ``${input.a.b}``, ``${output.x}``, ``${input.list[0]}``,
``${input.list[*].field}``, then optionally, in this order, ``.each("…")``,
``.join("…")``, ``.count`` and ``.truncate(N)``. Inside ``.each`` the paths are
relative (``${.}`` is the element). Anything else is rejected with
:class:`TemplateError` naming the 1-based character where parsing failed.

Details:

- An index step ``[N]`` after a projection applies to each projected element,
  like a field step does.
- Numbers render in the shortest JSON form a browser writes (``4`` not
  ``4.0``; exponents only below 1e-6 or from 1e21).
- ``input=None`` behaves as a missing input; ``output=None`` as a pending result.
- A template map value must be a string or ``false``; ``true`` and other types
  are configuration errors, like invalid templates.
"""

from __future__ import annotations

from karni_historian.errors import ConfigurationError, TemplateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = [
    "BUILTIN_TEMPLATES",
    "EXPANSION_CAP",
    "LIST_LIMIT",
    "PLACEHOLDER_CAP",
    "CompiledTemplate",
    "TemplateError",
    "compile_template",
    "expand",
    "expand_tool",
    "resolve_templates",
]

PLACEHOLDER_CAP = 300
"""Default cap, in code points, of one placeholder (and of one list element)."""

LIST_LIMIT = 10
"""Most list elements shown before ``… +N more``."""

EXPANSION_CAP = 1000
"""Cap, in code points, of a whole expansion."""

MAX_SAFE_INTEGER = 2**53 - 1

BUILTIN_TEMPLATES: dict[str, str] = {
    "ctx_note": (
        "Note ${input.action} ${input.note_ids}: ${input.content} → ${output.truncate(160)}"
    ),
    "ctx_memory": (
        "Memory ${input.action} ${input.category} ${input.ids}: ${input.content} → "
        "${output.truncate(160)}"
    ),
    "todowrite": 'Todos (${input.todos.count}): ${input.todos.each("${status}: ${content}")}',
    "question": 'Asked user: ${input.questions[*].question.join(" / ")} → ${output}',
    "task": "Task ${input.subagent_type}: ${input.prompt} → ${output.truncate(200)}",
    "ask": (
        'Asked: ${input.question.truncate(250)} [options: ${input.options.join(" / ")}] '
        "${input.resolution} → ${output.truncate(300)}"
    ),
    "peer_send": "PM to ${input.agent}${input.agent_id}: ${input.message.truncate(400)}",
    "board": (
        'Board ${input.verb}: ${input.ops.each("${op} ${item}${lane.title} '
        '${state}${lane.status}${props.text} ${lane.items[*].text}")}'
    ),
    "room": "Room ${input.action} ${input.room_id}: ${input.text.truncate(400)}",
    "work": (
        "Work ${input.action} ${input.id}: ${input.prompt_file}${input.prompt.truncate(200)}"
        "${input.notes.truncate(200)} → ${output.truncate(160)}"
    ),
    "knowhow": "Looked up how-to: ${input.query}${input.id}",
}
"""The built-in templates (``docs/historian/templates.md``)."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()
_OPERATORS = (".each(", ".join(", ".truncate(")
_NEWLINES: Any = None


class _Placeholder:
    __slots__ = ("bare_output", "count", "each", "join", "steps", "truncate")

    def __init__(
        self,
        steps: list[tuple[Any, ...]],
        each: list[str | _Placeholder] | None,
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


class CompiledTemplate:
    """A parsed template, ready to evaluate many times.

    Attributes:
        source: The template text.
    """

    __slots__ = ("_segments", "source")

    def __init__(self, source: str, segments: list[str | _Placeholder]) -> None:
        """Wrap parsed segments; use :func:`compile_template` to build one."""
        self.source = source
        self._segments = segments

    def render(self, input: Any, output: Any) -> str:
        """Evaluate the template for one tool call.

        Args:
            input: The tool input (usually a mapping), or ``None``.
            output: The result: a string, any JSON value, or ``None`` if pending.

        Returns:
            The expansion, newlines collapsed and capped at 1,000 code points.
        """
        root = _Root(input, output)
        parts = []
        for seg in self._segments:
            if isinstance(seg, str):
                parts.append(seg)
            else:
                parts.append(_render_placeholder(seg, root, None))
        return _cap("".join(parts), EXPANSION_CAP)


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


def _parse_expr(s: str, pos: int, relative: bool) -> tuple[_Placeholder, int]:
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
        each = _parse_segments(text, relative=True)
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
    return _Placeholder(steps, each, join, count, truncate), pos


def _parse_segments(s: str, *, relative: bool) -> list[str | _Placeholder]:
    segments: list[str | _Placeholder] = []
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


_CACHE: dict[str, CompiledTemplate] = {}


def compile_template(template: str) -> CompiledTemplate:
    """Parse ``template`` once; results are cached by text.

    Args:
        template: The template source.

    Returns:
        The compiled template.

    Raises:
        TemplateError: The template does not follow the grammar.
    """
    compiled = _CACHE.get(template)
    if compiled is None:
        if not isinstance(template, str):
            raise TypeError("a tool expansion template must be a string")
        compiled = CompiledTemplate(template, _parse_segments(template, relative=False))
        if len(_CACHE) < 512:
            _CACHE[template] = compiled
    return compiled


def expand(template: str, input: Any, output: Any) -> str:
    """Expand ``template`` for one tool call.

    Args:
        template: The template source, for example ``Asked: ${input.question}``.
        input: The tool's input object (a mapping decoded from JSON).
        output: The tool's result text or JSON value; ``None`` while pending.

    Returns:
        The expansion: placeholders capped at 300 code points (or their
        ``.truncate(N)``), lists at 10 elements, the whole at 1,000 code points,
        newlines collapsed to spaces.

    Raises:
        TemplateError: The template is invalid; the message is
            ``Invalid tool expansion template at character N``.

    Examples:
        >>> expand("Asked: ${input.q} → ${output}", {"q": "Which mode?"}, "Strict")
        'Asked: Which mode? → Strict'
    """
    return compile_template(template).render(input, output)


def expand_tool(
    name: str,
    input: Any,
    output: Any,
    templates: Mapping[str, str | bool] | None,
) -> str | None:
    """Expand one tool call with the resolved template map, never raising.

    Args:
        name: The exact tool name.
        input: The tool input.
        output: The tool result, or ``None``.
        templates: The resolved map (see :func:`resolve_templates`); ``None``
            or a missing key means no expansion.

    Returns:
        The expansion, or ``None`` when the tool has no (valid) template, so the
        caller falls back to the compact summary.
    """
    if not templates:
        return None
    template = templates.get(name)
    if not isinstance(template, str):
        return None
    try:
        return expand(template, input, output)
    except TemplateError:
        return None


def resolve_templates(
    builtin: Mapping[str, str] | None = None,
    user: Mapping[str, Any] | None = None,
    project: Mapping[str, Any] | None = None,
    *,
    user_source: str = "the user configuration",
    project_source: str = "the project configuration",
) -> dict[str, str]:
    """Merge template maps: built-ins, then user, then project, key by key.

    A ``false`` value removes the template for that tool (restoring the compact
    summary); a string replaces it. Every string is compiled so an invalid one
    is reported now, as a configuration error.

    Args:
        builtin: The built-in templates; ``None`` for :data:`BUILTIN_TEMPLATES`.
        user: ``historian.expand_tools`` from the user configuration.
        project: ``historian.expand_tools`` from the project configuration.
        user_source: How error messages name where ``user`` came from (its file).
        project_source: How error messages name where ``project`` came from.

    Returns:
        The active templates by exact tool name.

    Raises:
        ConfigurationError: A value is neither a string nor ``false``, or a
            template is invalid (the message names the key and the character).
    """
    merged: dict[str, str] = dict(BUILTIN_TEMPLATES if builtin is None else builtin)
    for source, entries in ((user_source, user), (project_source, project)):
        if entries is not None:
            _merge_entries(merged, entries, source)
    return merged


def _merge_entries(merged: dict[str, str], entries: Any, source: str) -> None:
    """Apply one file's ``expand_tools`` to ``merged``, checking every value."""
    if not hasattr(entries, "items"):
        raise ConfigurationError(
            f"`historian.expand_tools` in {source} must be a table of "
            "tool names to templates or false"
        )
    for name, value in entries.items():
        key = f"`historian.expand_tools.{name}` in {source}"
        if value is False:
            merged.pop(name, None)
            continue
        if not isinstance(value, str):
            raise ConfigurationError(f"{key} must be a template string or false")
        try:
            compile_template(value)
        except TemplateError as error:
            raise ConfigurationError(
                f"{key}: {error}; fix the template or set it to false"
            ) from None
        merged[name] = value


class _Root:
    __slots__ = ("_structured", "input", "output")

    def __init__(self, input: Any, output: Any) -> None:
        self.input = _MISSING if input is None else input
        self.output = output
        self._structured: Any = None

    def structured_output(self) -> Any:
        if self._structured is None:
            out = self.output
            if out is None:
                value = _MISSING
            elif isinstance(out, str):
                value = _MISSING
                stripped = out.lstrip()
                if stripped.startswith("{"):
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


def _resolve(steps: list[tuple[Any, ...]], root: _Root | None, element: Any) -> tuple[Any, bool]:
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


def _render_placeholder(p: _Placeholder, root: _Root | None, element: Any) -> str:
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
    return _cap(text, PLACEHOLDER_CAP if p.truncate is None else p.truncate)


def _render_list(p: _Placeholder, value: Any) -> str:
    if not isinstance(value, list):
        return ""
    rendered = []
    for item in value[:LIST_LIMIT]:
        if p.each is not None:
            text = "".join(
                seg if isinstance(seg, str) else _render_placeholder(seg, None, item)
                for seg in p.each
            )
        else:
            text = _scalar(item)
        rendered.append(_cap(text, PLACEHOLDER_CAP))
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


def _cap(text: str, limit: int) -> str:
    global _NEWLINES
    if "\r" in text or "\n" in text or "\u2028" in text or "\u2029" in text:
        if _NEWLINES is None:
            import re

            _NEWLINES = re.compile("[\r\n\u2028\u2029]+")
        text = _NEWLINES.sub(" ", text)
    if len(text) > limit:
        return text[:limit] + "…"
    return text
