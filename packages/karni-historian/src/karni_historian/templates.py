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
from karni_historian.template_syntax import parse_segments
from karni_historian.template_values import EXPANSION_CAP, Root, cap, render_placeholder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from karni_historian.template_syntax import Placeholder

__all__ = [
    "BUILTIN_TEMPLATES",
    "CompiledTemplate",
    "TemplateError",
    "compile_template",
    "expand",
    "expand_tool",
    "resolve_templates",
]

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
    # Claude Code's own tool names (PascalCase; see docs/historian/harnesses.md).
    "TodoWrite": 'Todos (${input.todos.count}): ${input.todos.each("${status}: ${content}")}',
    "Task": (
        "Task ${input.subagent_type} (${input.description}): ${input.prompt.truncate(200)} → "
        "${output.truncate(200)}"
    ),
    "Agent": (
        "Agent ${input.subagent_type} (${input.description}): ${input.prompt.truncate(200)} → "
        "${output.truncate(200)}"
    ),
    "AskUserQuestion": (
        'Asked user: ${input.questions[*].question.join(" / ")} → ${output.truncate(300)}'
    ),
    "ExitPlanMode": "Plan: ${input.plan.truncate(500)} → ${output.truncate(120)}",
}
"""The built-in templates (``docs/historian/templates.md``), Claude Code's tool names included."""


class CompiledTemplate:
    """A parsed template, ready to evaluate many times.

    Attributes:
        source: The template text.
    """

    __slots__ = ("_segments", "source")

    def __init__(self, source: str, segments: list[str | Placeholder]) -> None:
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
        root = Root(input, output)
        parts = []
        for seg in self._segments:
            if isinstance(seg, str):
                parts.append(seg)
            else:
                parts.append(render_placeholder(seg, root, None))
        return cap("".join(parts), EXPANSION_CAP)


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
        compiled = CompiledTemplate(template, parse_segments(template, relative=False))
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
