"""expand_tools templates (docs/historian/templates.md)."""

from __future__ import annotations

import pytest
from karni_historian.budget import ConfigurationError
from karni_historian.templates import (
    BUILTIN_TEMPLATES,
    TemplateError,
    compile_template,
    expand,
    expand_tool,
    resolve_templates,
)

B = BUILTIN_TEMPLATES


def test_ctx_note() -> None:
    got = expand(
        B["ctx_note"], {"action": "write", "content": "Review parser boundaries"}, "Saved note #7."
    )
    assert got == "Note write : Review parser boundaries → Saved note #7."


def test_todowrite() -> None:
    todos = [
        {"content": "Inspect schema", "status": "completed"},
        {"content": "Test renderer", "status": "in_progress"},
    ]
    assert expand(B["todowrite"], {"todos": todos}, None) == (
        "Todos (2): completed: Inspect schema; in_progress: Test renderer"
    )


def test_ask_keeps_two_spaces() -> None:
    got = expand(B["ask"], {"question": "Which mode?", "options": ["Strict", "Fast"]}, "Strict")
    assert got == "Asked: Which mode? [options: Strict / Fast]  → Strict"


def test_peer_send() -> None:
    got = expand(
        B["peer_send"],
        {"agent_id": "Ada", "message": "Check the parser.\nReport edge cases."},
        None,
    )
    assert got == "PM to Ada: Check the parser. Report edge cases."


def test_board_keeps_trailing_space() -> None:
    ops = [
        {"op": "item", "item": "Parser", "state": "done"},
        {
            "op": "lane",
            "lane": {
                "title": "Tests",
                "status": "active",
                "items": [{"text": "Golden fixtures", "state": "done"}],
            },
        },
        {"op": "post", "props": {"text": "Ready for review"}},
    ]
    got = expand(B["board"], {"verb": "update", "ops": ops}, None)
    assert got == (
        "Board update: item Parser done ; lane Tests active Golden fixtures; "
        "post  Ready for review "
    )


def test_task() -> None:
    got = expand(
        B["task"],
        {"subagent_type": "explore", "prompt": "Find the config loader."},
        "task_id: ses_123\n<task_result>Found loader.ts</task_result>",
    )
    assert got == (
        "Task explore: Find the config loader. → task_id: ses_123 "
        "<task_result>Found loader.ts</task_result>"
    )


def test_nested_fields_and_json_output() -> None:
    got = expand(
        "${input.nested.text} → ${output.answer}",
        {"nested": {"text": "Choose\r\nmode"}},
        '{"answer":"Strict"}',
    )
    assert got == "Choose mode → Strict"


def test_bare_output_is_verbatim() -> None:
    assert expand("${output}", {}, '{ "answer": "Strict" }') == '{ "answer": "Strict" }'


def test_missing_everything() -> None:
    assert expand("${input.absent}/${output.answer}/${output}", {}, None) == "//"


def test_non_strings_are_compact_sorted_json() -> None:
    data = {"ops": [{"state": "done", "op": "item"}], "enabled": True, "n": 4, "nil": None}
    assert expand("${input.ops} ${input.enabled} ${input.n} ${input.nil}", data, None) == (
        '[{"op":"item","state":"done"}] true 4 null'
    )


def test_index_and_projection() -> None:
    todos = [{"content": "Inspect"}]
    assert (
        expand("${input.todos[0].content}/${input.todos[8].content}", {"todos": todos}, None)
        == "Inspect/"
    )
    todos = [{"content": "A"}, {"content": "B"}, {}]
    assert (
        expand(
            '${input.todos[*].content} | ${input.todos[*].content.join(" / ")}',
            {"todos": todos},
            None,
        )
        == "A, B,  | A / B / "
    )


def test_each_join_count_with_more_marker() -> None:
    names = list(range(1, 13))
    got = expand(
        '${input.names.each("${.}")} / ${input.names.join(",")} / ${input.names.count}',
        {"names": names},
        None,
    )
    assert got == "1; 2; 3; 4; 5; 6; 7; 8; 9; 10; … +2 more / 1,2,3,4,5,6,7,8,9,10,… +2 more / 12"


def test_caps() -> None:
    assert expand("${input.text.truncate(3)}", {"text": "🙂日ab"}, None) == "🙂日a…"
    names = [{"name": "Ada"}, {"name": "Lin"}]
    assert (
        expand('${input.names[*].name.join(" | ").truncate(5)}', {"names": names}, None) == "Ada |…"
    )
    assert expand("${input.text}", {"text": "x" * 310}, None) == "x" * 300 + "…"
    assert (
        expand('${input.names.each("${.}").truncate(900)}', {"names": ["y" * 310]}, None)
        == "y" * 300 + "…"
    )
    assert expand("${input.text.truncate(1200)}", {"text": "z" * 1200}, None) == "z" * 1000 + "…"


def test_whole_expansion_cap_also_collapses_literal_newlines() -> None:
    assert expand("a\nb\r\n\nc ${input.x}", {"x": "1"}, None) == "a b c 1"
    assert expand("${input.x}" * 5, {"x": "w" * 250}, None) == "w" * 1000 + "…"


def test_integration_lives_in_chunk_tests() -> None:
    # See test_chunk.py::test_t14_expand_tools_in_chunk; here, the two templates it relies on.
    assert expand(B["peer_send"], {"agent": "Ada", "message": "Check the parser."}, None) == (
        "PM to Ada: Check the parser."
    )


T15 = [
    ("${", 3),
    ("${input.x", 10),
    ("${input.x.upper()}", 16),
    ("${input.x.truncate(-1)}", 20),
    ('${input.x.truncate(1).join(",")}', 22),
    ("${input.x[bad]}", 11),
    ("${input.x[*]}", 11),
    ('${input.x.each("${items.each(\\"${.}\\")}")}', 14),
    ("${input.x.join(' / ')}", 16),
    ('${input.x.each("${.}").each("${.}")}', 23),
    ("${environment.secret}", 14),
]


@pytest.mark.parametrize(("template", "position"), T15)
def test_invalid_templates(template: str, position: int) -> None:
    with pytest.raises(TemplateError) as info:
        expand(template, {"x": "v"}, "out")
    assert str(info.value) == f"Invalid tool expansion template at character {position}"
    assert info.value.position == position


@pytest.mark.parametrize(
    "template",
    [
        "${.}",
        "${input.x.count.count}",
        '${input.x.each("${.}").count}',
        '${input.x.join(",").count}',
        '${input.x.each("${.name}")}',
        "${input.x.truncate(9007199254740992)}",
        '${input.x.join("unterminated)}',
        "${input..x}",
        "${input.x[1}",
        "${output(}",
        "${input.x.truncate()}",
    ],
)
def test_more_invalid_templates(template: str) -> None:
    with pytest.raises(TemplateError):
        compile_template(template)


def test_valid_corner_templates() -> None:
    assert expand("$ {input.x} $x }", {"x": 1}, None) == "$ {input.x} $x }"
    assert expand("${input.x.count.truncate(1)}", {"x": list(range(12))}, None) == "1…"
    assert expand("${input.x.truncate(0)}", {"x": "abc"}, None) == "…"
    assert expand("${input.x.truncate(0)}", {"x": ""}, None) == ""
    assert expand('${input.rows.each("${.[1]}")}', {"rows": [[1, 2], [3]]}, None) == "2; "
    assert expand("${input.a-b_c}", {"a-b_c": "ok"}, None) == "ok"


def test_builtin_templates_are_valid() -> None:
    for template in BUILTIN_TEMPLATES.values():
        compile_template(template)


def test_claude_code_tool_names_have_templates() -> None:
    todos = {
        "todos": [
            {"content": "Inspect schema", "status": "completed", "activeForm": "Inspecting"},
            {"content": "Test renderer", "status": "in_progress", "activeForm": "Testing"},
        ]
    }
    assert expand_tool("TodoWrite", todos, "Todos have been modified", BUILTIN_TEMPLATES) == (
        "Todos (2): completed: Inspect schema; in_progress: Test renderer"
    )
    task = {"subagent_type": "Explore", "description": "Find callers", "prompt": "Find total()"}
    assert expand_tool("Task", task, "Two callers.", BUILTIN_TEMPLATES) == (
        "Task Explore (Find callers): Find total() → Two callers."
    )
    assert expand_tool("Agent", task, "Two.", BUILTIN_TEMPLATES) == (
        "Agent Explore (Find callers): Find total() → Two."
    )
    questions = {"questions": [{"question": "Which DB?", "options": [{"label": "SQLite"}]}]}
    answer = 'User has answered your questions: "Which DB?"="SQLite".'
    assert expand_tool("AskUserQuestion", questions, answer, BUILTIN_TEMPLATES) == (
        f"Asked user: Which DB? → {answer}"
    )
    plan = {"plan": "1. Add soft delete\n2. Test it"}
    assert expand_tool("ExitPlanMode", plan, "User has approved your plan.", BUILTIN_TEMPLATES) == (
        "Plan: 1. Add soft delete 2. Test it → User has approved your plan."
    )


def test_non_list_in_list_position_is_empty() -> None:
    assert (
        expand('${input.x.join(",")}|${input.x.count}|${input.x[*].y}', {"x": "str"}, None) == "||"
    )


def test_output_fields_need_a_json_object() -> None:
    assert expand("${output.a}", {}, '["a"]') == ""
    assert expand("${output.a}", {}, "not json") == ""
    assert expand("${output.a}", {}, {"a": [1, 2.5]}) == "[1,2.5]"
    assert expand("${output}", {}, {"b": 1, "a": 2}) == '{"a":2,"b":1}'


def test_numbers_render_in_their_shortest_json_form() -> None:
    values = {
        "a": 4.0,
        "b": 1e21,
        "c": 1e-7,
        "d": 0.00001,
        "e": 1.5,
        "f": 123456789012345680.0,
        "g": -2.5e-8,
    }
    got = expand(
        "${input.a} ${input.b} ${input.c} ${input.d} ${input.e} ${input.f} ${input.g}", values, None
    )
    assert got == "4 1e+21 1e-7 0.00001 1.5 123456789012345680 -2.5e-8"


def test_expand_tool_never_raises() -> None:
    templates = {"good": "G ${input.x}", "bad": "${", "off": False}
    assert expand_tool("good", {"x": 1}, None, templates) == "G 1"
    assert expand_tool("bad", {}, None, templates) is None
    assert expand_tool("off", {}, None, templates) is None
    assert expand_tool("none", {}, None, templates) is None
    assert expand_tool("good", {}, None, None) is None


def test_resolve_templates_merging() -> None:
    user = {"ask": "U ${input.question}", "board": False, "mine": "M"}
    project = {"ask": "P ${input.question}", "mine": False}
    merged = resolve_templates(None, user, project)
    assert merged["ask"] == "P ${input.question}"
    assert "board" not in merged
    assert "mine" not in merged
    assert merged["todowrite"] == BUILTIN_TEMPLATES["todowrite"]
    assert resolve_templates({}, None, None) == {}
    assert resolve_templates() == BUILTIN_TEMPLATES
    assert resolve_templates(None, None, {"board": "B"})["board"] == "B"


def test_resolve_templates_reports_invalid_entries() -> None:
    with pytest.raises(ConfigurationError) as info:
        resolve_templates(None, None, {"ask": "Asked ${input.q.upper()}"})
    assert str(info.value) == (
        "`historian.expand_tools.ask` in the project configuration: "
        "Invalid tool expansion template at character 22; fix the template or set it to false"
    )
    with pytest.raises(ConfigurationError, match="must be a template string or false"):
        resolve_templates(None, {"ask": True}, None)
    with pytest.raises(ConfigurationError, match="must be a table"):
        resolve_templates(None, ["ask"], None)  # type: ignore[arg-type]
