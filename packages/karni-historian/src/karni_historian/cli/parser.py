"""The ``karni-historian`` command line: every command, its arguments and its help.

Building the parser imports no command: each runs from its own module of
this package, imported only when it is the one asked for (:mod:`karni_historian.cli`).
"""

from __future__ import annotations

import argparse

from karni.agent.common.arguments import CommandParser, command_parser

from karni_historian.cli.common import PROG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SESSION_COMMANDS", "parser"]

SESSION_COMMANDS = ("run", "wrapup", "recomp", "render", "status", "expand", "search")
"""The commands that work on one session (or, for ``run`` and ``wrapup``, every one)."""


def parser() -> argparse.ArgumentParser:
    """The parser of ``karni-historian``'s arguments, its commands' included."""
    parser = command_parser(PROG, "A local historian for coding-agent transcripts.")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars and no per-session lines; errors are still printed",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="tell more on stderr: ingest each file read with its message counts; run, wrapup "
        "and recomp each chunk and model call with its duration; status the whole chain",
    )
    parser.add_argument(
        "--project", metavar="DIR", help="the project root (default: found from the cwd)"
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="the session, for " + ", ".join(SESSION_COMMANDS) + " (before or after the command)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    commands.required = True
    _add_writing_commands(commands)
    _add_reading_commands(commands)
    _add_model_commands(commands)
    _accept_output_flags_after(parser)
    return parser


def _accept_output_flags_after(parser: argparse.ArgumentParser) -> None:
    """Let ``-q`` and ``-v`` follow the command too (``karni-historian ingest -q``)."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for command in action.choices.values():
            for flags, dest in ((("-q", "--quiet"), "quiet"), (("-v", "--verbose"), "verbose")):
                free = [flag for flag in flags if flag not in command._option_string_actions]
                if free:
                    command.add_argument(
                        *free,
                        dest=dest,
                        action="store_true",
                        default=argparse.SUPPRESS,
                        help=f"as `{PROG} {flags[0]}`",
                    )
            _accept_output_flags_after(command)


def _add_model_commands(commands: Any) -> None:
    """``models check``: the configured historian models."""
    models = commands.add_parser("models", help="the configured historian models")
    models_commands = models.add_subparsers(dest="models_command", metavar="COMMAND")
    models_commands.required = True
    models_commands.add_parser("check", help="call each configured model once with a tiny request")


def _add_writing_commands(commands: Any) -> None:
    """``ingest``, ``run``, ``wrapup``, ``share`` and ``recomp``: the commands that write."""
    ingest = commands.add_parser("ingest", help="import new transcript lines into the store")
    ingest.add_argument(
        "--from",
        dest="sources",
        metavar="PATH",
        action="append",
        help="a transcript file or folder (repeatable); default: the project's Claude Code "
        "sessions and .chronicle/sessions/",
    )
    ingest.add_argument(
        "--accept-other-project",
        action="store_true",
        help="with --from: take a session recorded in another project's folder too "
        "(default: refuse its file, naming where it ran)",
    )

    run = commands.add_parser(
        "run", help="condense settled messages (before the protected tail) when a trigger fires"
    )
    run.add_argument(
        "--session",
        metavar="ID",
        help="only this session (default: every one)",
        default=argparse.SUPPRESS,
    )
    run.add_argument("--force", action="store_true", help="condense even when no trigger fires")
    run.add_argument(
        "--dry-run", action="store_true", help="print the decision for each session; write nothing"
    )

    wrapup = commands.add_parser("wrapup", help="condense all but the newest KEEP messages")
    wrapup.add_argument("keep", nargs="?", default=None, metavar="KEEP", help="default 20")
    wrapup.add_argument(
        "--session",
        metavar="ID",
        help="only this session (default: every one)",
        default=argparse.SUPPRESS,
    )

    _add_share(commands)

    recomp = commands.add_parser(
        "recomp", help="rebuild compartments from the raw messages (resumes an interrupted one)"
    )
    recomp.add_argument(
        "range", nargs="?", metavar="START-END", help="default: everything condensed so far"
    )
    recomp.add_argument(
        "--session", metavar="ID", help="default: the newest session", default=argparse.SUPPRESS
    )


def _add_share(commands: Any) -> None:
    """``share``: the user's sessions, condensed, into ``.karni/history/`` for the team."""
    share = commands.add_parser(
        "share", help="write sessions' condensed history to .karni/history/ for the team"
    )
    chosen = share.add_mutually_exclusive_group()
    chosen.add_argument(
        "--session", dest="share_session", metavar="ID", help="this session (default: the newest)"
    )
    chosen.add_argument("--all", action="store_true", help="every session of yours")
    share.add_argument(
        "--dry-run", action="store_true", help="print each file's text instead of writing it"
    )
    share.add_argument(
        "--auto",
        action="store_true",
        help="share only when your user settings opt this project in (historian.share); "
        "what the end-of-session hook runs",
    )


def _add_reading_commands(commands: Any) -> None:
    """``render``, ``status``, ``expand``, ``sessions``, ``brief`` and ``timeline``: read-only."""
    render = commands.add_parser("render", help="print the <session-history> block")
    render.add_argument(
        "--session", metavar="ID", help="default: the newest session", default=argparse.SUPPRESS
    )
    render.add_argument("--budget", metavar="TOKENS", help="history budget in tokens")
    render.add_argument(
        "--rebuild", action="store_true", help="recalculate every tier now (a cache rebuild)"
    )

    status = commands.add_parser("status", help="history compression facts of a session")
    status.add_argument(
        "--session", metavar="ID", help="default: the newest session", default=argparse.SUPPRESS
    )
    status.add_argument(
        "--json", action="store_true", help="print every fact as one JSON object (stable shape)"
    )

    expand = commands.add_parser(
        "expand", help="recover raw messages: a range START END, or --message N"
    )
    expand.add_argument(
        "--session", metavar="ID", help="default: the newest session", default=argparse.SUPPRESS
    )
    expand.add_argument("--message", metavar="N", help="one message, in full")
    expand.add_argument(
        "--verbose",
        dest="expand_verbose",
        action="store_true",
        help="range: one preview line per part; --message: add time and files",
    )
    expand.add_argument("range", nargs="*", metavar="START END")

    sessions = commands.add_parser("sessions", help="list the stored sessions, newest first")
    sessions.add_argument(
        "--json", action="store_true", help='print {"sessions": [...]}, one object per session'
    )

    _add_blame(commands)
    _add_search(commands)
    _add_mcp(commands)

    brief = commands.add_parser(
        "brief", help="the history brief, sized to the history budget (--all: everything)"
    )
    brief.add_argument("path", nargs="?", metavar="PATH", help="a file (default: the project)")
    brief.add_argument(
        "--all",
        action="store_true",
        help="every request, every episode at full detail, every title (slow on a large store)",
    )
    _add_timeline(commands)


def _add_mcp(commands: Any) -> None:
    """``mcp``: the MCP server over stdio (read-only)."""
    mcp = commands.add_parser(
        "mcp",
        help="serve this project's history to MCP clients over stdio (needs the mcp extra)",
        description="An MCP server over stdio, read-only and scoped to this project: the tools "
        "search_history, file_history, get_history and timeline. Registered for Claude Code and "
        "OpenCode by `karni hooks install`; needs `pip install 'karni-historian[mcp]'`.",
    )
    mcp.add_argument(
        "--check",
        action="store_true",
        help="only check that the MCP SDK is installed (exit 0) or say what to install (exit 1)",
    )


def _add_timeline(commands: Any) -> None:
    """``timeline``: the history as one HTML page (read-only)."""
    timeline = commands.add_parser(
        "timeline",
        help="write the history as one self-contained HTML page: sessions and episodes on a "
        "time axis, a file filter, what shaped each file",
    )
    timeline.add_argument(
        "--html",
        metavar="OUT",
        required=True,
        help="the page to write (its folder must exist; replaced atomically, never through a "
        "symlink)",
    )
    timeline.add_argument(
        "--file",
        metavar="PATH",
        help="a file or folder inside the project the page's file filter starts on",
    )


def _add_blame(commands: Any) -> None:
    """``blame FILE``: each line's commit, and the request and session that wrote it."""
    blame = commands.add_parser(
        "blame",
        help="git blame of a file, plus the request and session that wrote each range",
    )
    blame.add_argument("path", metavar="FILE", help="a tracked file inside the project")
    blame.add_argument(
        "-L",
        dest="lines",
        metavar="START,END",
        help="only these lines (1-based, inclusive), as `git blame -L`",
    )
    output = blame.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON object (stable shape)")
    output.add_argument(
        "--format",
        choices=("text", "json", "agent-trace"),
        default="text",
        help="text (default), json, or agent-trace: an Agent Trace v0.1 record",
    )


def _add_search(commands: Any) -> None:
    """``search``: the full-text index of the project's history."""
    search = commands.add_parser(
        "search",
        help="search the history: compartments, facts, prompts and replies, best first",
        description="Search the project's history (compartments of every tier, promoted facts, "
        "the user's prompts, the assistant's text) with SQLite FTS5: words match in any "
        'order, "a phrase" matches as written, cap* matches a prefix, and AND, OR, NOT '
        "combine; the best matches (BM25, newer first among equals) come first, each with "
        "the expand command that shows it in full.",
    )
    search.add_argument("query", nargs="+", metavar="QUERY", help="the words to look for")
    search.add_argument(
        "--file", metavar="PATH", help="only history that touched this file (or folder)"
    )
    search.add_argument(
        "--session",
        metavar="ID",
        help="only this session (a unique prefix will do)",
        default=argparse.SUPPRESS,
    )
    search.add_argument("--since", metavar="DATE", help="only history from DATE on (YYYY-MM-DD)")
    search.add_argument(
        "--author",
        metavar="NAME",
        help="only sessions of NAME (local sessions: `you` or your git user.name)",
    )
    search.add_argument("--limit", metavar="N", default="10", help="at most N hits (default 10)")
    search.add_argument(
        "--tools", action="store_true", help="match tool calls (inputs and outputs) too"
    )
    search.add_argument(
        "--json", action="store_true", help='print {"query": ..., "hits": [...]} (stable shape)'
    )
