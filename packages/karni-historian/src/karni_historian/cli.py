"""The ``karni-historian`` command: ingest, condense, render and inspect history.

Subcommands: ``ingest``, ``run``, ``wrapup``, ``render``, ``status``,
``expand``, ``sessions`` and ``brief``. The project is the nearest directory
at or above the working directory holding ``manage.py`` or
``karni.rules.py`` (or ``--project DIR``). Errors are one line on stderr,
naming the thing and the fix; usage errors exit 2, other failures 1.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from karni_historian.model import Compartment
    from karni_historian.store import Store

__all__ = ["CliError", "main"]

PROG = "karni-historian"
PROJECT_MARKERS = ("manage.py", "karni.rules.py")
EXPAND_TOKEN_BUDGET = 15_000
"""The token budget of one ``expand`` answer (§2.3)."""


class CliError(Exception):
    """A failure reported as one line; ``exit_code`` 1 (failure) or 2 (usage)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        """Create the error."""
        super().__init__(message)
        self.exit_code = exit_code


def _parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise CliError(f"{message}; run `{self.prog} --help` for usage", 2)

    parser = Parser(prog=PROG, description="A local historian for coding-agent transcripts.")
    parser.add_argument(
        "--project", metavar="DIR", help="the project root (default: found from the cwd)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True

    ingest = commands.add_parser("ingest", help="import new transcript lines into the store")
    ingest.add_argument(
        "--from",
        dest="sources",
        metavar="PATH",
        action="append",
        help="a transcript file or folder (repeatable); default: the project's Claude Code "
        "sessions and .chronicle/sessions/",
    )

    run = commands.add_parser("run", help="condense settled messages (before the protected tail)")
    run.add_argument("--session", metavar="ID", help="only this session (default: every one)")

    wrapup = commands.add_parser("wrapup", help="condense all but the newest KEEP messages")
    wrapup.add_argument("keep", nargs="?", default=None, metavar="KEEP", help="default 20")
    wrapup.add_argument("--session", metavar="ID", help="only this session (default: every one)")

    render = commands.add_parser("render", help="print the <session-history> block")
    render.add_argument("--session", metavar="ID", help="default: the newest session")
    render.add_argument("--budget", metavar="TOKENS", help="history budget in tokens")

    status = commands.add_parser("status", help="history compression facts of a session")
    status.add_argument("--session", metavar="ID", help="default: the newest session")

    expand = commands.add_parser(
        "expand", help="recover raw messages: a range START END, or --message N"
    )
    expand.add_argument("--session", metavar="ID", help="default: the newest session")
    expand.add_argument("--message", metavar="N", help="one message, in full")
    expand.add_argument(
        "--verbose",
        action="store_true",
        help="range: one preview line per part; --message: add time and files",
    )
    expand.add_argument("range", nargs="*", metavar="START END")

    commands.add_parser("sessions", help="list the stored sessions, newest first")

    brief = commands.add_parser("brief", help="the full, uncapped history brief")
    brief.add_argument("path", nargs="?", metavar="PATH", help="a file (default: the project)")
    return parser


def find_project_root(start: str | None = None) -> str:
    """The nearest directory at or above ``start`` (the cwd) with a project marker."""
    current = os.path.abspath(start or os.getcwd())
    origin = current
    while True:
        if any(os.path.isfile(os.path.join(current, marker)) for marker in PROJECT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            raise CliError(
                f"no Karni project at or above {origin}: looked for manage.py or "
                f"karni.rules.py; run inside a project or pass --project DIR"
            )
        current = parent


def _root(args: argparse.Namespace) -> str:
    project: str | None = args.project
    if project:
        if not os.path.isdir(project):
            raise CliError(f"--project {project} is not a directory; pass a project folder", 2)
        return os.path.abspath(project)
    return find_project_root()


def _open(root: str, *, create: bool = False) -> Store:
    from karni_historian.store import Store, StoreError

    try:
        return Store.open(root, create=create)
    except StoreError as error:
        raise CliError(str(error)) from None


def _settings(root: str) -> Any:
    from karni_historian.condense.runner import load_settings
    from karni_historian.errors import ConfigurationError

    try:
        return load_settings(root)
    except ConfigurationError as error:
        raise CliError(f"configuration error: {error}") from None


def _session(store: Store, wanted: str | None) -> str:
    sessions = store.sessions()
    if wanted is not None:
        if store.session(wanted) is not None:
            return wanted
        matches = [s.id for s in sessions if s.id.startswith(wanted)]
        if len(matches) == 1:
            return matches[0]
        raise CliError(
            f"no session {wanted!r} in the store; run `{PROG} sessions` to list them"
            if not matches
            else f"session prefix {wanted!r} is ambiguous; give more of the id"
        )
    if not sessions:
        raise CliError(f"the store has no session yet; run `{PROG} ingest` first")
    return sessions[0].id


def _sessions_to_run(store: Store, wanted: str | None) -> list[str]:
    if wanted is not None:
        return [_session(store, wanted)]
    ids = [s.id for s in store.sessions()]
    if not ids:
        raise CliError(f"the store has no session yet; run `{PROG} ingest` first")
    return sorted(ids)


def _positive(value: str, what: str) -> int:
    text = value.strip()
    if not text.isascii() or not text.isdigit() or int(text) <= 0:
        raise CliError(f"{what} must be a positive integer (got {value!r})", 2)
    return int(text)


# --- commands ---------------------------------------------------------------------------------


def _ingest(args: argparse.Namespace, root: str) -> int:
    from karni_historian.ingest import IngestError, check_sources, ingest

    try:
        check_sources(args.sources or ())  # before the store is created
        with _open(root, create=True) as store:
            report = ingest(store, root, args.sources, progress_stream=sys.stderr)
    except IngestError as error:
        raise CliError(str(error), 2) from None
    for warning in report.warnings():
        print(f"{PROG}: {warning}", file=sys.stderr)
    print(report.summary())
    return 0


def _condense(args: argparse.Namespace, root: str) -> int:
    from karni_historian.condense import runner

    settings = _settings(root)
    keep = 20
    if args.command == "wrapup":
        from karni_historian.brief.budget import parse_wrapup_keep
        from karni_historian.errors import ConfigurationError

        try:
            keep = parse_wrapup_keep(args.keep)
        except ConfigurationError:
            raise CliError(f"KEEP must be a positive integer (got {args.keep!r})", 2) from None
    failed = False
    with _open(root) as store:
        for session_id in _sessions_to_run(store, args.session):
            if args.command == "wrapup":
                outcome = runner.wrapup(store, session_id, keep, settings)
            else:
                outcome = runner.run(store, session_id, settings)
            if outcome.failed:
                failed = True
                print(f"{PROG}: {outcome.message()}", file=sys.stderr)
            else:
                print(outcome.message())
    return 1 if failed else 0


def _stored_compartments(store: Store, session_id: str) -> list[Compartment]:
    return [stored.compartment for stored in store.compartments(session_id)]


def _render(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.render import render_history

    settings = _settings(root)
    budget = (
        _positive(args.budget, "--budget") if args.budget is not None else settings.history_budget
    )
    with _open(root) as store:
        compartments = _stored_compartments(store, _session(store, args.session))
    print(render_history(compartments, budget, dates=settings.temporal_awareness))
    return 0


def status_text(store: Store, session_id: str, settings: Any) -> str:
    """The ``status`` report of one session (§3.11 "History Compression")."""
    from karni_historian.brief.budget import estimate_tokens, history_budget_tokens

    session = store.session(session_id)
    assert session is not None
    compartments = _stored_compartments(store, session_id)
    covered = store.last_compartment_end(session_id)
    raw = store.message_count(session_id)
    tokens = sum(
        estimate_tokens(f"## {c.start}-{c.end} · {c.title}\n{c.content}\n") for c in compartments
    )
    budget = history_budget_tokens(
        settings.context_limit,
        min(settings.execute_threshold_percentage, 80),
        settings.history_budget_percentage,
    )
    failures, last_error = store.failure(session_id)
    lines = [
        f"Session {session_id} ({session.source}): {session.title or 'untitled'}",
        f"- Raw messages: {raw} ({raw - covered} after the last compartment)",
        f"- Historian: {'not run yet' if not compartments else f'messages 1-{covered} condensed'}",
    ]
    if failures:
        lines.append(f"- Historian failures in a row: {failures} (last: {last_error})")
    lines += [
        "",
        "### History Compression",
        f"- Compartments: {len(compartments)}",
        f"- History block: ~{tokens} tokens",
        f"- History budget: ~{budget} tokens ({round(tokens * 100 / budget)}% used)",
        "- Older compartments demote tiers automatically at render time to fit the budget",
    ]
    return "\n".join(lines)


def _status(args: argparse.Namespace, root: str) -> int:
    settings = _settings(root)
    with _open(root) as store:
        print(status_text(store, _session(store, args.session), settings))
    return 0


def _sessions(args: argparse.Namespace, root: str) -> int:
    with _open(root) as store:
        sessions = store.sessions()
        if not sessions:
            print(f"no sessions yet; run `{PROG} ingest`", file=sys.stderr)
            return 0
        for session in sessions:
            count = len(store.compartments(session.id))
            print(
                f"{session.id}  {session.source}  {session.message_count} messages  "
                f"{count} compartments  {session.last_ts or '-'}  {session.title or 'untitled'}"
            )
    return 0


def _brief(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.provider import file_brief, project_brief

    with _open(root) as store:
        if args.path is None:
            text = project_brief(store)
            what = "the project"
        else:
            relative = _project_path(root, args.path)
            text = file_brief(store, relative)
            what = relative
    if not text:
        print(f"{PROG}: no history recorded for {what}", file=sys.stderr)
        return 0
    print(text)
    return 0


def _project_path(root: str, path: str) -> str:
    absolute = os.path.normpath(os.path.join(os.getcwd(), path))
    for base in (root, os.path.realpath(root)):
        relative = os.path.relpath(absolute, base)
        if relative == ".":
            return "."
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    raise CliError(f"{path} lies outside the project {root}; pass a path inside it", 2)


# --- expand -----------------------------------------------------------------------------------


def full_message(store: Store, session_id: str, ordinal: int, *, verbose: bool = False) -> str:
    """One message recovered in full from the raw store (§2.3 ``message=N``)."""
    import json

    from karni_historian.condense.chunk import role_letter
    from karni_historian.model import TextPart

    message = store.message(session_id, ordinal)
    if message is None:
        raise CliError(
            f"No message at ordinal {ordinal} in this session's stored history — the ordinal "
            f"is wrong (run `{PROG} sessions` to see each session's message count)."
        )
    lines = [f"[{ordinal}] {role_letter(message.role)} ({message.role}) — full recovery:", ""]
    if verbose:
        lines.append(f"  time: {message.timestamp or 'unknown'}")
        files = store.files(session_id, ordinal)
        if files:
            lines.append("  files: " + ", ".join(f"{path} ({action})" for path, action in files))
    for part in message.parts:
        if isinstance(part, TextPart):
            lines += ["  [text]", part.text]
            continue
        call = f" #{part.call_id}" if part.call_id else ""
        lines.append(f"  [tool: {part.name}{call}]")
        if isinstance(part.input, dict) and isinstance(part.input.get("description"), str):
            lines.append(f"  description: {part.input['description']}")
        lines.append(f"  input: {json.dumps(part.input, ensure_ascii=False, sort_keys=True)}")
        if part.output is not None:
            lines += ["  output:" + (" (error)" if part.is_error else ""), part.output]
    return "\n".join(lines)


def expand_range(
    store: Store, session_id: str, start: int, end: int, settings: Any, *, verbose: bool = False
) -> str:
    """Messages ``start``-``end`` as the compact chunk, or verbose previews (§2.3)."""
    from karni_historian.condense.runner import project_view

    messages = project_view(store.messages(session_id, start, end), store.root)
    nothing = (
        f"No messages found in range {start}-{end}. "
        f"The range may be outside this session's history."
    )
    if not messages:
        return nothing
    if verbose:
        return _verbose(messages, session_id, start, end, settings)
    from karni_historian.brief.budget import estimate_tokens
    from karni_historian.condense.chunk import build_chunk

    chunk = build_chunk(
        messages,
        offset=start,
        eligible_end=end + 1,
        budget_tokens=EXPAND_TOKEN_BUDGET,
        expand_tools={},
    )
    if chunk.is_empty:
        return nothing
    count = chunk.end - chunk.start + 1
    text = (
        f"Messages {chunk.start}-{chunk.end} ({count} messages, "
        f"~{estimate_tokens(chunk.text)} tokens):\n\n{chunk.text}"
    )
    if chunk.end < min(end, messages[-1].ordinal):
        text += (
            f"\n\nTruncated at message {chunk.end} (budget: ~{EXPAND_TOKEN_BUDGET} tokens). "
            f"Run `{PROG} expand --session {session_id} {chunk.end + 1} {end}` for more."
        )
    return text


def _preview(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _verbose(messages: Sequence[Any], session_id: str, start: int, end: int, settings: Any) -> str:
    from karni_historian.brief.budget import estimate_tokens
    from karni_historian.condense.chunk import role_letter, tool_summary
    from karni_historian.condense.templates import expand_tool
    from karni_historian.model import TextPart

    blocks: list[str] = []
    used = 0
    last = start
    for message in messages:
        lines = [f"[{message.ordinal}] {role_letter(message.role)} ({message.role})"]
        for part in message.parts:
            if isinstance(part, TextPart):
                if part.text.strip():
                    lines.append(f"    • {_preview(part.text, 200)}")
                continue
            expansion = expand_tool(part.name, part.input, part.output, settings.expand_tools)
            if expansion is not None:
                lines.append(f"    • tool {part.name}: {expansion}")
                continue
            summary = tool_summary(part)
            call = summary[4:] if summary.startswith("TC: ") else summary
            if not call.startswith(part.name):
                call = f"{part.name}({call})"  # a description stands in for the key argument
            cost = estimate_tokens(part.output) if part.output else 0
            lines.append(f"    • tool {call} → output ~{cost} tok")
        block = "\n".join(lines)
        cost = estimate_tokens(block)
        if blocks and used + cost > EXPAND_TOKEN_BUDGET:
            break
        blocks.append(block)
        used += cost
        last = message.ordinal
    header = (
        f"Messages {start}-{last} (verbose). Recover any one in full with "
        f"`{PROG} expand --session {session_id} --message <ordinal>`:"
    )
    text = header + "\n\n" + "\n\n".join(blocks)
    if last < min(end, messages[-1].ordinal):
        text += (
            f"\n\nTruncated at message {last} (budget: ~{EXPAND_TOKEN_BUDGET} tokens). "
            f"Run `{PROG} expand --session {session_id} --verbose {last + 1} {end}` for more."
        )
    return text


def _expand(args: argparse.Namespace, root: str) -> int:
    usage = (
        "provide either --message N, or START and END (positive integers, START <= END); "
        f"run `{PROG} expand --help` for usage"
    )
    if args.message is not None:
        if args.range:
            raise CliError(usage, 2)
        ordinal = _positive(args.message, "--message")
    else:
        if len(args.range) != 2:
            raise CliError(usage, 2)
        start = _positive(args.range[0], "START")
        end = _positive(args.range[1], "END")
        if end < start:
            raise CliError(usage, 2)
    settings = _settings(root)
    with _open(root) as store:
        session_id = _session(store, args.session)
        if args.message is not None:
            print(full_message(store, session_id, ordinal, verbose=args.verbose))
        else:
            print(expand_range(store, session_id, start, end, settings, verbose=args.verbose))
    return 0


_COMMANDS = {
    "ingest": _ingest,
    "run": _condense,
    "wrapup": _condense,
    "render": _render,
    "status": _status,
    "expand": _expand,
    "sessions": _sessions,
    "brief": _brief,
}


def _run_command(args: argparse.Namespace, root: str) -> int:
    """Run one command; a failure of the store or the disk is one line, never a traceback."""
    import sqlite3

    try:
        return _COMMANDS[args.command](args, root)
    except BrokenPipeError:
        raise
    except (sqlite3.Error, OSError) as error:
        from karni_historian.store.failures import describe_failure
        from karni_historian.store.schema import db_path

        raise CliError(describe_failure(db_path(root), error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``karni-historian`` with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(arguments)
        root = _root(args)
        return _run_command(args, root)
    except CliError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the store keeps its state before this run", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
