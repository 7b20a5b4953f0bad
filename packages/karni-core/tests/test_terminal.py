"""Help wrapped to a width, and the nearest spelling of a typo."""

from __future__ import annotations

import pytest
from karni.agent.common.terminal import did_you_mean, fit, help_width, parser_error_parts


def test_a_long_option_line_continues_under_its_description() -> None:
    line = "  --with-history [PATH]  also print what history providers recorded about PATH"
    assert fit(line, 50).split("\n") == [
        "  --with-history [PATH]  also print what history",
        "                         providers recorded about",
        "                         PATH",
    ]


def test_short_lines_and_blank_lines_are_kept_and_long_words_stay_whole() -> None:
    text = "usage: karni\n\n" + "x" * 30 + " tail\n"
    assert fit(text, 20) == "usage: karni\n\n" + "x" * 30 + "\ntail\n"


HELP = """usage: karni hooks install|uninstall|status [--agent claude-code|opencode|pi] [--json]

Hooks make a coding agent's harness run Karni by itself: before the first edit
of a file the agent gets the file's brief.
Exit status: 0 done.

options:
  --scope SCOPE  local (Claude Code's settings.local.json, its default),
                 project or user
  --json         status as JSON
Install it:
  karni completion bash > ~/.local/share/bash-completion/completions/karni
"""


def test_a_block_with_a_line_too_long_is_refilled_whole() -> None:
    assert fit(HELP, 60) == (
        "usage: karni hooks install|uninstall|status [--agent\n"
        "       claude-code|opencode|pi] [--json]\n"
        "\n"
        "Hooks make a coding agent's harness run Karni by itself:\n"
        "before the first edit of a file the agent gets the file's\n"
        "brief. Exit status: 0 done.\n"
        "\n"
        "options:\n"
        "  --scope SCOPE  local (Claude Code's settings.local.json,\n"
        "                 its default), project or user\n"
        "  --json         status as JSON\n"
        "Install it:\n"
        "  karni completion bash >\n"
        "  ~/.local/share/bash-completion/completions/karni\n"
    )


def test_what_fits_is_printed_as_written() -> None:
    assert fit(HELP, 90) == HELP
    lines = fit(HELP, 79).split("\n")
    assert lines[:2] == [
        "usage: karni hooks install|uninstall|status [--agent claude-code|opencode|pi]",
        "       [--json]",
    ]
    assert lines[2:] == HELP.split("\n")[1:]  # the paragraph's lines all fit: kept as they are


def test_width_from_columns_else_79_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "64")
    assert help_width() == 64
    monkeypatch.setenv("COLUMNS", "wide")
    assert help_width() == 79  # pytest captures stdout: not a terminal


def test_suggestions() -> None:
    assert did_you_mean("contxt", ["context", "check"]) == " (did you mean `context`?)"
    assert did_you_mean("zzz", ["context", "check"]) == ""
    message = "argument COMMAND: invalid choice: 'ingst' (choose from 'ingest', 'run')"
    assert parser_error_parts(message, []) == (
        "unknown command `ingst`",
        " (did you mean `ingest`?)",
    )
    unquoted = "argument COMMAND: invalid choice: 'ingst' (choose from ingest, run)"  # 3.12.8+
    assert parser_error_parts(unquoted, [])[1] == " (did you mean `ingest`?)"
    assert parser_error_parts("unrecognized arguments: --forse=1", ["--force"]) == (
        "unknown option `--forse=1`",
        " (did you mean `--force`?)",
    )
    assert parser_error_parts("unrecognized arguments: extra", ["--x"]) == (
        "unexpected argument `extra`",
        "",
    )
    option = "argument --harness: invalid choice: 'pii' (choose from 'pi', 'omp')"
    assert parser_error_parts(option, []) == (
        "`--harness` takes one of pi, omp, not `pii`",
        " (did you mean `pi`?)",
    )
    required = "the following arguments are required: PATH"
    assert parser_error_parts(required, ["--x"]) == (required, "")
