"""Each file's notes (``docs/historian/file-notes.md``): what was tried, decided, required, found.

The sessions here are written message by message in the store's model, in the
shapes the readers give them (a Claude Code or Pi session, after ingest): an
edit with its replaced and written text, a shell call with its output, the
agent's words, the user's prompts.
"""

from __future__ import annotations

import pytest
from karni_historian.condense.file_notes.changes import change_of, comments_added, inverse_of
from karni_historian.condense.file_notes.commands import read_run, shell_writes
from karni_historian.condense.file_notes.extract import file_notes
from karni_historian.condense.file_notes.prompts import (
    CONTINUATION,
    CORRECTION,
    LOCAL,
    REQUEST,
    constraints,
    pasted_error,
    prompt_kind,
    user_words,
    without_pasted_output,
)
from karni_historian.condense.file_notes.prose import in_project_terms, is_statement, units
from karni_historian.condense.file_notes.session import read_requests
from karni_historian.model import Message, TextPart, ToolPart


def U(o: int, text: str) -> Message:
    return Message(o, "user", (TextPart(text),), timestamp=f"2026-03-02T10:{o:02d}:00Z")


def A(o: int, *parts) -> Message:
    return Message(o, "assistant", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))


def edit(path: str, old: str, new: str, *, error: str | None = None, call: str = "") -> ToolPart:
    data = {"file_path": path, "old_string": old, "new_string": new}
    return ToolPart("Edit", data, error or "ok", call_id=call or path + old, is_error=bool(error))


def bash(command: str, output: str, *, failed: bool = False) -> ToolPart:
    return ToolPart("Bash", {"command": command}, output, call_id=command, is_error=failed)


def notes_of(messages, path):
    found = file_notes(read_requests(messages))
    ranked = sorted((n for n in found.notes if n.path == path), key=lambda n: -n.weight)
    return list(dict.fromkeys((n.kind, n.text) for n in ranked)), found


def texts(notes, kind):
    return [text for k, text in notes if k == kind]


# --- prompts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("continue", CONTINUATION),
        ("yes, do it", CONTINUATION),
        ("yeah, do it all", CONTINUATION),
        ("/model", LOCAL),
        ("/orchestrator create a TODO app", REQUEST),
        ("no, keep the old name", CORRECTION),
        ("i undid your changes, read the whole file first", CORRECTION),
        ("you broke the login page", CORRECTION),
        ("make the footer dimmer", REQUEST),
        ("#b5bd68 for the code blocks", REQUEST),
    ],
)
def test_a_prompt_is_a_request_a_follow_up_or_a_command(text, kind):
    assert prompt_kind(text) == kind


def test_pasted_terminal_output_is_not_the_users_words():
    prompt = (
        "this exploded when i restarted. invalid themes must NEVER explode\n\n"
        "➜  app git:(main) ✗ npx tsx src/cli.ts -r\n"
        "Debugger attached.\n"
        "Error: Invalid hex color: #000cc\n"
        "    at hexToRgb (/Users/ann/app/src/theme.ts:148:9)\n"
    )
    assert without_pasted_output(prompt) == (
        "this exploded when i restarted. invalid themes must NEVER explode"
    )
    assert pasted_error(prompt) == "Error: Invalid hex color: #000cc"
    assert constraints(prompt) == ["invalid themes must NEVER explode"]
    assert user_words("ok, no console logs please", 40) == "no console logs please"


def test_a_pasted_diff_is_not_the_users_words_but_a_bullet_with_a_number_is():
    prompt = "+314 - Tips for creating harmonious themes\n + 315\n\nkill this section"
    assert without_pasted_output(prompt) == "kill this section"
    assert without_pasted_output("- 5 retries at most\n- 2 s apart") == (
        "- 5 retries at most\n- 2 s apart"
    )


def test_a_list_of_values_is_one_constraint():
    assert constraints("accent #8abeb7\nerror cc6666\nuser bg 343541") == [
        "accent #8abeb7; error cc6666; user bg 343541"
    ]


def test_a_number_seen_or_a_verb_that_keeps_going_is_not_a_rule():
    """``keeps getting HTTP 429`` describes a symptom; a value given or a rule stated is kept."""
    prompt = (
        "Our billing client keeps getting HTTP 429 from the API. The error shows up after 1000"
        " calls. Quote fields per RFC 4180. The md link colour is 666666. Keep the old client."
    )
    assert constraints(prompt) == [
        "Quote fields per RFC 4180.",
        "The md link colour is 666666.",
        "Keep the old client.",
    ]


# --- prose ------------------------------------------------------------------------------------


def test_units_split_bullets_and_sentences_but_not_code_or_names():
    text = (
        "Perfect! Now:\n\n1. **`initTheme()`** - falls back to the dark theme. Then it logs.\n"
        "```ts\nconst x = 1;\n```\n## Summary\nSee `a.b()` e.g. here."
    )
    assert units(text) == [
        "`initTheme()` - falls back to the dark theme.",
        "It logs.",
        "See `a.b()` e.g. here.",
    ]


@pytest.mark.parametrize(
    ("sentence", "statement"),
    [
        ("Let me run the tests to ensure nothing broke.", False),
        ("Now I'll update the viewset.", False),
        ("I apologize for the confusion.", False),
        ("It seems the directory got lost.", False),
        ("I have a good understanding of the available components.", False),
        ("Should I also add a migration?", False),
        ("Both should now render identically!", False),
        ("You can test it with npm test.", False),
        ("`setTheme()` returns an error instead of throwing.", True),
    ],
)
def test_narration_questions_guesses_and_advice_are_not_statements(sentence, statement):
    assert is_statement(sentence) is statement


def test_paths_are_shown_as_the_project_knows_them():
    root = "/home/ann/shop"
    text = "Edited /home/ann/shop/cart.py and /Users/bob/notes/todo.md in ~/workspaces/pi-mono"
    assert in_project_terms(text, root) == "Edited cart.py and todo.md in pi-mono"


# --- commands and changes ---------------------------------------------------------------------


def test_a_check_says_how_it_ended():
    failed = read_run(
        "cd app && uv run pytest -q",
        "F..\nFAILED tests/t.py::test_x - boom\n1 failed, 2 passed",
        True,
    )
    assert (failed.kind, failed.failed) == ("test", True)
    assert failed.summary == "1 failed, 2 passed; FAILED tests/t.py::test_x"
    build = read_run(
        "npm run build",
        "npm warn config\n> Build error occurred\n[TypeError: x is not a function]",
        True,
    )
    assert build.summary == "[TypeError: x is not a function]"
    commit = read_run(
        'git commit -m "make events soft"', "[main 1a7c3e91] make events soft\n 1 file", False
    )
    assert (commit.kind, commit.commit) == ("commit", ("1a7c3e91", "make events soft"))
    undo = read_run("git checkout -- apps/models.py", "", False)
    assert (undo.kind, undo.targets) == ("undo", ("apps/models.py",))


def test_files_written_by_a_shell_command_are_edits():
    assert shell_writes("cat > types/index.ts << 'EOF'\nexport {};\nEOF") == [
        ("types/index.ts", "export {};")
    ]
    assert shell_writes("npm run build 2>&1 | tail -3") == []


def test_a_change_is_said_by_the_names_it_adds_and_removes():
    change = change_of([('"toolText": "",', '"toolTitle": "",\n"toolOutput": "gray",')])
    assert (change.added, change.removed) == (["toolTitle", "toolOutput"], ["toolText"])
    assert comments_added("x = 1", "# Theme is invalid - fall back to dark theme\nx = 1") == [
        "Theme is invalid - fall back to dark theme"
    ]
    assert comments_added("", "// console.error(`x`);") == []
    assert inverse_of([("b", "a")], [("a", "b")])


# --- notes of a session -----------------------------------------------------------------------


def test_a_rejected_attempt_is_noted_with_what_was_taken_out_and_the_users_words():
    manager = "class AliveManager(Manager):\n    pass\n"
    ms = [
        U(1, "make events soft-deletable. Never cascade the delete to tickets."),
        A(
            2,
            edit(
                "apps/models.py",
                "class Event(BaseModel):",
                manager + "class Event(SoftDeleteModel):",
            ),
        ),
        A(
            3,
            bash(
                "uv run pytest -q",
                "FAILED t.py::test_restore - DoesNotExist\n1 failed, 9 passed",
                failed=True,
            ),
        ),
        U(4, "no, don't hide them in the default manager: staff must see deleted events"),
        A(5, edit("apps/models.py", manager, "")),
        A(6, bash("uv run pytest -q", "10 passed")),
        A(7, bash('git commit -am "soft delete"', "[main 1a7c3e9] soft delete")),
        A(8, "`Event` now subclasses `SoftDeleteModel`: deleting it keeps the row."),
    ]
    notes, found = notes_of(ms, "apps/models.py")
    rejected = texts(notes, "rejected")
    assert rejected == [
        "adds `AliveManager` — user: «no, don't hide them in the default manager: "
        "staff must see deleted events»"
    ]
    assert texts(notes, "failed") == [
        "`uv run pytest -q` failed: 1 failed, 9 passed; FAILED t.py::test_restore; "
        "fixed: removed `AliveManager`"
    ]
    assert "`Event` now subclasses `SoftDeleteModel`: deleting it keeps the row." in texts(
        notes, "decision"
    )
    assert "«Never cascade the delete to tickets.»" in texts(notes, "constraint")
    assert set(texts(notes, "outcome")) == {
        "committed 1a7c3e9 «soft delete»",
        "`uv run pytest -q` passed: 10 passed",
    }
    # What shaped the file: the request, and the correction that asked for the second edit.
    assert [(r.request, r.text[:20]) for r in found.requests] == [
        (1, "make events soft-del"),
        (4, "no, don't hide them "),
    ]


def test_a_bare_continuation_counts_for_the_request_it_continues():
    ms = [
        U(1, "add explicit tokens for the thinking border"),
        A(2, "Started with the schema."),
        U(3, "continue"),
        A(4, edit("theme.json", '"a": 1', '"thinkingOff": "#303030"')),
    ]
    _, found = notes_of(ms, "theme.json")
    assert [r.text for r in found.requests] == ["add explicit tokens for the thinking border"]


def test_an_edit_that_never_landed_says_where_the_change_went():
    ms = [
        U(1, "simplify the hook"),
        A(
            2,
            edit(
                "hooks/useTodos.ts",
                "a",
                "b",
                error="<tool_use_error>File has not been read yet.</tool_use_error>",
            ),
        ),
        A(
            3,
            ToolPart(
                "Write", {"file_path": "hooks/useSimple.ts", "content": "x"}, "ok", call_id="w"
            ),
        ),
    ]
    notes, _ = notes_of(ms, "hooks/useTodos.ts")
    assert texts(notes, "failed") == [
        "Edit never landed (File has not been read yet.); wrote useSimple.ts instead"
    ]
    assert texts(notes, "outcome") == ["not written: every edit of useTodos.ts failed"]


def test_a_refused_edit_and_a_git_checkout_are_noted():
    ms = [
        U(1, "write the guide"),
        A(
            2,
            ToolPart(
                "Write",
                {"file_path": "GUIDE.md", "content": "x"},
                "Claude requested permissions to write to GUIDE.md,"
                " but you haven't granted it yet.",
                call_id="w",
                is_error=True,
            ),
        ),
        U(3, "try the settings"),
        A(4, edit("settings.py", "DEBUG = False", "DEBUG = True")),
        A(5, bash("git checkout -- settings.py", "")),
    ]
    guide, _ = notes_of(ms, "GUIDE.md")
    assert texts(guide, "failed") == [
        "Write refused: Claude requested permissions to write to GUIDE.md,"
        " but you haven't granted it yet."
    ]
    settings, _ = notes_of(ms, "settings.py")
    assert texts(settings, "rejected") == ["discarded with `git checkout -- settings.py`"]


def test_an_edit_that_writes_back_an_earlier_one_is_the_session_undoing_itself():
    ms = [
        U(1, "cache the totals"),
        A(2, edit("cart.py", "return total", "return cached_total(items)")),
        U(3, "also log the cart"),
        A(4, edit("cart.py", "return cached_total(items)", "return total")),
    ]
    notes, _ = notes_of(ms, "cart.py")
    assert texts(notes, "rejected") == ["reverted its own edit (adds `cached_total`)"]


def test_a_failing_check_is_blamed_on_the_file_its_output_names():
    ms = [
        U(1, "add the hook and its test"),
        A(
            2,
            ToolPart(
                "Write",
                {"file_path": "src/useTodos.ts", "content": "export const a = 1"},
                "ok",
                call_id="a",
            ),
        ),
        A(
            3,
            ToolPart(
                "Write",
                {
                    "file_path": "src/useTodos.test.ts",
                    "content": "import { renderHook } from '@testing-library/react';",
                },
                "ok",
                call_id="b",
            ),
        ),
        A(
            4,
            bash(
                "npx tsc --noEmit",
                "src/useTodos.test.ts(1,30): error TS2307:"
                " Cannot find module '@testing-library/react'.",
                failed=True,
            ),
        ),
        A(
            5,
            edit(
                "src/useTodos.test.ts", "import { renderHook } from '@testing-library/react';", ""
            ),
        ),
        A(6, bash("npx tsc --noEmit", "")),
    ]
    test, _ = notes_of(ms, "src/useTodos.test.ts")
    assert texts(test, "failed") == [
        "`npx tsc --noEmit` failed: error TS2307: Cannot find module '@testing-library/react'.; "
        "fixed: removed `@testing-library/react`"
    ]
    hook, _ = notes_of(ms, "src/useTodos.ts")
    assert texts(hook, "failed") == []


def test_the_agents_narration_and_other_files_are_not_a_files_decisions():
    ms = [
        U(1, "soft delete events"),
        A(
            2,
            "Let me update the model first.",
            edit("models.py", "class Event(BaseModel):", "class Event(SoftDeleteModel):"),
        ),
        A(
            3,
            edit(
                "views.py", "Event.objects.all()", "Event.objects.filter(deleted_at__isnull=True)"
            ),
        ),
        A(
            4,
            "`Event` now subclasses `SoftDeleteModel`. `EventViewSet` filters deleted events out."
            " Should I add a migration?",
        ),
    ]
    models, _ = notes_of(ms, "models.py")
    views, _ = notes_of(ms, "views.py")
    assert texts(models, "decision")[0] == "`Event` now subclasses `SoftDeleteModel`."
    assert "`Event` now subclasses `SoftDeleteModel`." not in texts(views, "decision")
    assert not any("Let me" in text or "?" in text for text in texts(models, "decision"))


# --- a long backlog ----------------------------------------------------------------------------


def test_a_long_backlog_notes_each_files_newest_requests_and_lists_them_all():
    from karni_historian.condense.file_notes.extract import NOTED_REQUESTS

    ms = []
    for n in range(NOTED_REQUESTS + 4):
        ms += [
            U(3 * n + 1, f"rename step_{n} in flow.py, never touch the API"),
            A(3 * n + 2, edit("flow.py", f"step_{n} = 0", f"stage_{n} = 0")),
            A(3 * n + 3, f"`stage_{n}` now replaces `step_{n}` in flow.py."),
        ]
    found = file_notes(read_requests(ms))
    assert len(found.requests) == NOTED_REQUESTS + 4  # every request shaped the file
    noted = {note.request for note in found.notes}
    assert noted == {3 * n + 1 for n in range(4, NOTED_REQUESTS + 4)}  # the newest ones


def test_names_that_start_at_the_same_place_come_in_the_same_order_in_every_process():
    import os
    import subprocess
    import sys

    program = (
        "from karni_historian.condense.file_notes.changes import change_of\n"
        "new = 'interface TodoItemProps { id: number }\\nexport function TodoItem() {}\\n'\n"
        "print(change_of([('', new)]).added)\n"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(6)
    }
    assert seen == {"['TodoItem', 'TodoItemProps']\n"}
