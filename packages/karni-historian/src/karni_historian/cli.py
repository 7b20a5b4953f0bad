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
    from typing import Any

    from karni_historian.condense.runner import RunOutcome
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = ["CliError", "main"]

PROG = "karni-historian"


class CliError(Exception):
    """A failure reported as one line; ``exit_code`` 1 (failure) or 2 (usage)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        """Create the error."""
        super().__init__(message)
        self.exit_code = exit_code


def _parser() -> argparse.ArgumentParser:
    from karni.agent.common.arguments import CommandParser, command_parser

    parser = command_parser(PROG, "A local historian for coding-agent transcripts.")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars and no per-session lines; errors are still printed",
    )
    parser.add_argument(
        "--project", metavar="DIR", help="the project root (default: found from the cwd)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    commands.required = True
    _add_writing_commands(commands)
    _add_reading_commands(commands)
    return parser


def _add_writing_commands(commands: Any) -> None:
    """``ingest``, ``run`` and ``wrapup``: the commands that change the store."""
    ingest = commands.add_parser("ingest", help="import new transcript lines into the store")
    ingest.add_argument(
        "--from",
        dest="sources",
        metavar="PATH",
        action="append",
        help="a transcript file or folder (repeatable); default: the project's Claude Code "
        "sessions and .chronicle/sessions/",
    )

    run = commands.add_parser(
        "run", help="condense settled messages (before the protected tail) when a trigger fires"
    )
    run.add_argument("--session", metavar="ID", help="only this session (default: every one)")
    run.add_argument("--force", action="store_true", help="condense even when no trigger fires")
    run.add_argument(
        "--dry-run", action="store_true", help="print the decision for each session; write nothing"
    )

    wrapup = commands.add_parser("wrapup", help="condense all but the newest KEEP messages")
    wrapup.add_argument("keep", nargs="?", default=None, metavar="KEEP", help="default 20")
    wrapup.add_argument("--session", metavar="ID", help="only this session (default: every one)")


def _add_reading_commands(commands: Any) -> None:
    """``render``, ``status``, ``expand``, ``sessions`` and ``brief``: read-only."""
    render = commands.add_parser("render", help="print the <session-history> block")
    render.add_argument("--session", metavar="ID", help="default: the newest session")
    render.add_argument("--budget", metavar="TOKENS", help="history budget in tokens")

    status = commands.add_parser("status", help="history compression facts of a session")
    status.add_argument("--session", metavar="ID", help="default: the newest session")
    status.add_argument("--json", action="store_true", help="print the facts as one JSON object")

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

    sessions = commands.add_parser("sessions", help="list the stored sessions, newest first")
    sessions.add_argument(
        "--json", action="store_true", help='print {"sessions": [...]}, one object per session'
    )

    brief = commands.add_parser("brief", help="the full, uncapped history brief")
    brief.add_argument("path", nargs="?", metavar="PATH", help="a file (default: the project)")


def _root(args: argparse.Namespace) -> str:
    project: str | None = args.project
    if project:
        if not os.path.isdir(project):
            raise CliError(f"--project {project} is not a directory; pass a project folder", 2)
        return os.path.abspath(project)
    from karni.agent.common.root import MARKERS_TEXT, find_project_root

    root = find_project_root()
    if root is None:
        raise CliError(
            f"no Karni project at or above {os.path.abspath(os.getcwd())}: looked for "
            f"{MARKERS_TEXT}; run inside a project or pass --project DIR"
        )
    return root


def _open(root: str, *, create: bool = False) -> Store:
    from karni_historian.store import Store, StoreError

    try:
        return Store.open(root, create=create)
    except StoreError as error:
        raise CliError(str(error)) from None


def _settings(root: str) -> Settings:
    from karni_historian.condense.settings import load_settings
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
            report = ingest(store, root, args.sources, progress_stream=_progress_stream(args))
    except IngestError as error:
        raise CliError(str(error), 2) from None
    for warning in report.warnings():
        print(f"{PROG}: {warning}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    return 0


def _progress_stream(args: argparse.Namespace) -> Any:
    """Where progress bars go: stderr (drawn only on a terminal), or nowhere with ``-q``."""
    return None if args.quiet else sys.stderr


def _report(outcome: RunOutcome, args: argparse.Namespace) -> bool:
    """Print a run's outcome (a failure on stderr, always); True when it failed."""
    if outcome.failed:
        print(f"{PROG}: {outcome.message()}", file=sys.stderr)
    elif not args.quiet:
        print(outcome.message())
    return outcome.failed


def _wrapup(args: argparse.Namespace, root: str) -> int:
    from karni_historian.condense import runner

    settings = _settings(root)
    keep = 20 if args.keep is None or not args.keep.strip() else _positive(args.keep, "KEEP")
    failed = False
    with _open(root) as store:
        for session_id in _sessions_to_run(store, args.session):
            outcome = runner.wrapup(
                store, session_id, keep, settings, progress_stream=_progress_stream(args)
            )
            failed |= _report(outcome, args)
    return 1 if failed else 0


def _run_session(
    store: Store, session_id: str, settings: Settings, args: argparse.Namespace
) -> RunOutcome | None:
    """Condense one session when a trigger fires (or ``--force``); None when nothing ran."""
    from karni_historian.condense import runner

    plan = runner.plan_run(store, session_id, settings)
    if not plan.settled:
        return runner.run(store, session_id, plan=plan)  # says why nothing is settled
    decision = None if args.force else plan.decision()
    name = f"session {session_id}"
    if args.dry_run:
        span = f"messages {plan.covered_to + 1}-{plan.target - 1}"
        if decision is None or decision.fire:
            why = "forced" if decision is None else f"trigger {decision.reason}: {decision.detail}"
            print(f"{name}: would condense {span} with {runner.historian_name(None)} ({why})")
        else:
            print(f"{name}: would not condense {span}: no trigger fired ({decision.detail})")
        return None
    if decision is not None and not decision.fire:
        if args.quiet:
            return None
        print(
            f"{name}: no trigger fired ({decision.detail}); nothing condensed, "
            f"pass --force to condense now"
        )
        return None
    if decision is not None and not args.quiet:
        print(
            f"{PROG}: {name}: trigger {decision.reason} fired: {decision.detail}", file=sys.stderr
        )
    return runner.run(store, session_id, plan=plan, progress_stream=_progress_stream(args))


def _run(args: argparse.Namespace, root: str) -> int:
    settings = _settings(root)
    failed = False
    with _open(root) as store:
        for session_id in _sessions_to_run(store, args.session):
            outcome = _run_session(store, session_id, settings, args)
            failed |= outcome is not None and _report(outcome, args)
    return 1 if failed else 0


def _render(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.render import render_history

    settings = _settings(root)
    budget = (
        _positive(args.budget, "--budget") if args.budget is not None else settings.history_budget
    )
    with _open(root) as store:
        session_id = _session(store, args.session)
        compartments = [stored.compartment for stored in store.compartments(session_id)]
    print(render_history(compartments, budget, dates=settings.temporal_awareness))
    return 0


def _status(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.status import status_facts, status_text

    settings = _settings(root)
    with _open(root) as store:
        session_id = _session(store, args.session)
        if args.json:
            import dataclasses
            import json

            facts = dataclasses.asdict(status_facts(store, session_id, settings))
            print(json.dumps(facts, indent=2))
        else:
            print(status_text(store, session_id, settings))
    return 0


def _sessions(args: argparse.Namespace, root: str) -> int:
    with _open(root) as store:
        rows = [
            {
                "id": session.id,
                "source": session.source,
                "messages": session.message_count,
                "compartments": len(store.compartments(session.id)),
                "last_message_at": session.last_ts,
                "title": session.title,
            }
            for session in store.sessions()
        ]
    if args.json:
        import json

        print(json.dumps({"sessions": rows}, indent=2))
        return 0
    if not rows:
        print(f"no sessions yet; run `{PROG} ingest`", file=sys.stderr)
        return 0
    for row in rows:
        print(
            f"{row['id']}  {row['source']}  {row['messages']} messages  "
            f"{row['compartments']} compartments  {row['last_message_at'] or '-'}  "
            f"{row['title'] or 'untitled'}"
        )
    return 0


def _brief(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.briefs import file_brief, project_brief

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
    from karni.agent.common.paths import project_relative

    relative = project_relative(root, path)
    if relative is None:
        raise CliError(f"{path} lies outside the project {root}; pass a path inside it", 2)
    return relative


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
    from karni_historian.brief.expand import expand_range, full_message

    settings = _settings(root)
    with _open(root) as store:
        session_id = _session(store, args.session)
        if args.message is not None:
            text = full_message(store, session_id, ordinal, verbose=args.verbose)
            if text is None:
                raise CliError(
                    f"No message at ordinal {ordinal} in this session's stored history — the "
                    f"ordinal is wrong (run `{PROG} sessions` to see each session's message count)."
                )
            print(text)
        else:
            print(expand_range(store, session_id, start, end, settings, verbose=args.verbose))
    return 0


_COMMANDS = {
    "ingest": _ingest,
    "run": _run,
    "wrapup": _wrapup,
    "render": _render,
    "status": _status,
    "expand": _expand,
    "sessions": _sessions,
    "brief": _brief,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``karni-historian`` with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    from karni.agent.common.arguments import CommandLineError, answer_version_or_bare

    try:
        early = answer_version_or_bare(arguments, "karni-historian", _parser)
        if early is not None:
            return early
        args = _parser().parse_args(arguments)
        root = _root(args)
        return _COMMANDS[args.command](args, root)
    except (CliError, CommandLineError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the store keeps its state before this run", file=sys.stderr)
        return 130
    except BrokenPipeError:
        from karni.agent.common.pipes import stop_on_broken_pipe

        return stop_on_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
