"""The ``karni-historian`` command: ingest, condense, render and inspect history.

Subcommands: ``ingest``, ``run``, ``wrapup``, ``recomp``, ``render``, ``status``,
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
    from collections.abc import Callable, Sequence
    from typing import Any

    from karni_historian.brief.cache import BlockShape
    from karni_historian.condense.models.session import PreparedSession
    from karni_historian.condense.models.settings import ConfigFiles
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


STATUS_SESSIONS = 10
"""The newest sessions ``status`` reports, without ``--session``."""

SESSION_COMMANDS = ("run", "wrapup", "recomp", "render", "status", "expand")
"""The commands that work on one session (or, for ``run`` and ``wrapup``, every one)."""


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
    import argparse

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
    """``ingest``, ``run`` and ``wrapup``: the commands that change the store."""
    import argparse

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

    recomp = commands.add_parser(
        "recomp", help="rebuild compartments from the raw messages (resumes an interrupted one)"
    )
    recomp.add_argument(
        "range", nargs="?", metavar="START-END", help="default: everything condensed so far"
    )
    recomp.add_argument(
        "--session", metavar="ID", help="default: the newest session", default=argparse.SUPPRESS
    )


def _add_reading_commands(commands: Any) -> None:
    """``render``, ``status``, ``expand``, ``sessions`` and ``brief``: read-only."""
    import argparse

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

    brief = commands.add_parser(
        "brief", help="the history brief, sized to the history budget (--all: everything)"
    )
    brief.add_argument("path", nargs="?", metavar="PATH", help="a file (default: the project)")
    brief.add_argument(
        "--all",
        action="store_true",
        help="every request, every episode at full detail, every title (slow on a large store)",
    )


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
        store = Store.open(root, create=create)
    except StoreError as error:
        raise CliError(str(error)) from None
    if store.note:
        print(f"{PROG}: {store.note}", file=sys.stderr)
    return store


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
            report = ingest(
                store,
                root,
                args.sources,
                progress_stream=_progress_stream(args),
                other_projects=args.accept_other_project,
            )
            from karni_historian.condense.file_notes import note_sessions

            note_sessions(store, report.sessions)
    except IngestError as error:
        raise CliError(str(error), 2) from None
    for warning in report.warnings():
        print(f"{PROG}: {warning}", file=sys.stderr)
    if args.verbose:
        for line in report.file_lines():
            print(f"{PROG}: {line}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    return 1 if any(file.other_project for file in report.files) else 0


def _progress_stream(args: argparse.Namespace) -> Any:
    """Where progress bars go: stderr (drawn only on a terminal), or nowhere with ``-q``.

    The bar is Karni's own text and needs its carriage returns, so it goes to
    the stream under the sanitiser :func:`main` puts on stderr.
    """
    from karni.agent.common.sanitize import CleanStream

    if args.quiet:
        return None
    return sys.stderr.stream if isinstance(sys.stderr, CleanStream) else sys.stderr


def _traced(args: argparse.Namespace, session_id: str, historian: Any) -> Any:
    """The historian hook to run with: with ``-v``, one that tells each chunk and call."""
    if not args.verbose:
        return historian
    from karni_historian.condense.trace import TracedHistorian

    def write(line: str) -> None:
        print(f"{PROG}: session {session_id}: {line}", file=sys.stderr, flush=True)

    return TracedHistorian(historian, write)


def _report(outcome: RunOutcome, args: argparse.Namespace) -> bool:
    """Print a run's outcome (a failure on stderr, always); True when it failed."""
    if outcome.failed:
        print(f"{PROG}: {outcome.message()}", file=sys.stderr)
    elif not args.quiet:
        print(outcome.message())
    return outcome.failed


def _prepared(
    store: Store, session_id: str, settings: Settings, files: ConfigFiles
) -> PreparedSession | None:
    """The session's configured historian; prints why when it is disabled (then None)."""
    from karni_historian.condense.models.session import prepare_session

    prepared = prepare_session(store, session_id, settings, files)
    if prepared.disabled:
        print(f"session {session_id}: {prepared.disabled_message()}")
        return None
    return prepared


def _notes(session_id: str, prepared: PreparedSession) -> None:
    for note in prepared.notes:
        print(f"{PROG}: session {session_id}: note: {note}", file=sys.stderr)


def _each_session(
    args: argparse.Namespace,
    root: str,
    condense: Callable[[Store, str, PreparedSession], RunOutcome | None],
) -> int:
    """Condense every session asked for with its configured historian; the exit code."""
    settings = _settings(root)
    files = _config_files(root)
    failed = False
    with _open(root) as store:
        for session_id in _sessions_to_run(store, args.session):
            prepared = _prepared(store, session_id, settings, files)
            if prepared is None:
                continue
            outcome = condense(store, session_id, prepared)
            _notes(session_id, prepared)
            failed |= outcome is not None and _report(outcome, args)
    return 1 if failed else 0


def _wrapup(args: argparse.Namespace, root: str) -> int:
    from karni_historian.condense import runner

    keep = 20 if args.keep is None or not args.keep.strip() else _positive(args.keep, "KEEP")
    settings, files = _settings(root), _config_files(root)

    def condense(store: Store, session_id: str, prepared: PreparedSession) -> RunOutcome:
        outcome = runner.wrapup(
            store,
            session_id,
            keep,
            prepared.settings,
            historian=_traced(args, session_id, prepared.historian),
            progress_stream=_progress_stream(args),
        )
        if outcome.compartments and args.verbose:  # cache-safe detail, no step to take
            print(f"{PROG}: {_rebuild_note(store, session_id, settings, files)}", file=sys.stderr)
        return outcome

    return _each_session(args, root, condense)


def _recomp_range(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    start, dash, end = text.partition("-")
    usage = f"the range must be START-END, positive integers with START <= END (got {text!r})"
    if not dash:
        raise CliError(usage, 2)
    first, last = _positive(start, "START"), _positive(end, "END")
    if last < first:
        raise CliError(usage, 2)
    return first, last


def _recomp(args: argparse.Namespace, root: str) -> int:
    from karni_historian.condense.recomp import recomp
    from karni_historian.errors import RecompError

    wanted = _recomp_range(args.range)
    settings = _settings(root)
    files = _config_files(root)
    with _open(root) as store:
        session_id = _session(store, args.session)
        prepared = _prepared(store, session_id, settings, files)
        if prepared is None:
            return 0
        try:
            outcome = recomp(
                store,
                session_id,
                wanted,
                prepared.settings,
                historian=_traced(args, session_id, prepared.historian),
                progress_stream=_progress_stream(args),
            )
        except RecompError as error:
            raise CliError(str(error)) from None
        _notes(session_id, prepared)
    if outcome.failed:
        print(f"{PROG}: session {session_id}: recomp failed: {outcome.error}", file=sys.stderr)
        return 1
    print(f"session {session_id}: {outcome.note}; {outcome.compartments} compartment(s) published")
    return 0


def _run_session(
    store: Store, session_id: str, prepared: PreparedSession, args: argparse.Namespace
) -> RunOutcome | None:
    """Condense one session when a trigger fires (or ``--force``); None when nothing ran."""
    from karni_historian.condense import runner

    historian = _traced(args, session_id, prepared.historian)
    plan = runner.plan_run(store, session_id, prepared.settings)
    if not plan.settled:
        return runner.run(store, session_id, plan=plan)  # says why nothing is settled
    decision = None if args.force else plan.decision(exact=False)
    name = f"session {session_id}"
    if args.dry_run:
        span = f"messages {plan.covered_to + 1}-{plan.target - 1}"
        if decision is None or decision.fire:
            why = "forced" if decision is None else f"trigger {decision.reason}: {decision.detail}"
            print(f"{name}: would condense {span} with {prepared.chain.name} ({why})")
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
    return runner.run(
        store, session_id, plan=plan, historian=historian, progress_stream=_progress_stream(args)
    )


def _run(args: argparse.Namespace, root: str) -> int:
    return _each_session(
        args,
        root,
        lambda store, session_id, prepared: _run_session(store, session_id, prepared, args),
    )


def _config_files(root: str) -> ConfigFiles:
    """The configuration files, with every historian model setting checked."""
    from karni_historian.condense.models.settings import ConfigFiles, validate_config
    from karni_historian.errors import ConfigurationError

    try:
        files = ConfigFiles.load(root)
        validate_config(files)
    except ConfigurationError as error:
        raise CliError(f"configuration error: {error}") from None
    return files


def _models(args: argparse.Namespace, root: str) -> int:
    from karni_historian.condense.models.check import check_models
    from karni_historian.condense.models.redaction import Redactor

    settings = _settings(root)
    results = check_models(
        _config_files(root), default_window=settings.historian_context, redactor=Redactor()
    )
    if not results:
        print("no historian model is configured: every session uses local/extractive")
        return 0
    for result in results:
        print(result.line())
    return 0 if all(result.ok for result in results) else 1


def _render(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.cache import history_block

    settings = _settings(root)
    budget = (
        _positive(args.budget, "--budget") if args.budget is not None else settings.history_budget
    )
    files = _config_files(root)
    with _open(root) as store:
        session_id = _session(store, args.session)
        shape = _block_shape(store, session_id, settings, files, budget)
        print(history_block(store, session_id, shape, rebuild=args.rebuild))
    return 0


def _block_shape(
    store: Store, session_id: str, settings: Settings, files: ConfigFiles, budget: int
) -> BlockShape:
    """What shapes the session's block: the budget, dates and its historian chain."""
    from karni_historian.brief.cache import BlockShape
    from karni_historian.condense.models.session import chain_for_session

    chain = chain_for_session(store, session_id, files, default_window=settings.historian_context)
    return BlockShape(budget, settings.temporal_awareness, chain.name)


def _rebuild_note(store: Store, session_id: str, settings: Settings, files: ConfigFiles) -> str:
    """After ``wrapup``: whether the next ``render`` rebuilds the history, and how to apply it."""
    from karni_historian.brief.cache import pending_rebuild

    if store.last_rebuild(session_id) is None:
        reason: str | None = "first render"  # known without reading every compartment
    else:
        shape = _block_shape(store, session_id, settings, files, settings.history_budget)
        reason = pending_rebuild(store, session_id, shape)
    if reason is not None:
        return (
            f"session {session_id}: a history rebuild is pending ({reason}); "
            f"the next `{PROG} render` applies it"
        )
    return (
        f"session {session_id}: no history rebuild pending; new compartments are added after "
        f"the rebuilt block: run `{PROG} render --rebuild` to recalculate the tiers now"
    )


def _status(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.status import status_data, status_text

    settings = _settings(root)
    files = _config_files(root)
    with _open(root) as store:
        if args.json or args.session is not None:
            chosen = [_session(store, args.session)]
        else:
            chosen = [session.id for session in store.sessions()]
            _session(store, None)  # an empty store gets its one line
        shown = chosen[:STATUS_SESSIONS]
        found = [status_data(store, session_id, settings, files) for session_id in shown]
    if args.json:
        import json

        print(json.dumps(found[0], ensure_ascii=False, indent=2, sort_keys=True))
        return 0
    print("\n\n".join(status_text(data, verbose=args.verbose) for data in found))
    if len(chosen) > len(shown):
        older = len(chosen) - len(shown)
        print(f"\n{older} older session(s): `{PROG} sessions` lists them, `--session ID` shows one")
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


BRIEF_REQUESTS = 100
"""The most requests ``brief FILE`` lists without ``--all``."""
BRIEF_TITLES = 200
"""The most episode titles ``brief`` (of the project) lists without ``--all``."""


def _brief(args: argparse.Namespace, root: str) -> int:
    from karni_historian.brief.briefs import file_brief, project_brief

    room = None if args.all else _brief_room(root)
    relative = None if args.path is None else _project_path(root, args.path)
    with _open(root) as store:
        if relative is None:
            titles = None if room is None else BRIEF_TITLES
            text = project_brief(store, max_titles=titles, room_chars=room)
            what = "the project"
        else:
            text = file_brief(store, relative, room_chars=room, max_requests=BRIEF_REQUESTS)
            what = relative
    if not text:
        print(f"{PROG}: no history recorded for {what}", file=sys.stderr)
        return 0
    print(text)
    return 0


def _brief_room(root: str) -> int:
    """The characters ``brief`` may print without ``--all``: the history budget's."""
    from karni_historian.budget import CHARS_PER_TOKEN_FALLBACK

    return int(_settings(root).history_budget * CHARS_PER_TOKEN_FALLBACK)


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
    verbose = args.verbose or args.expand_verbose
    with _open(root) as store:
        session_id = _session(store, args.session)
        if args.message is not None:
            text = full_message(store, session_id, ordinal, verbose=verbose)
            if text is None:
                raise CliError(
                    f"No message at ordinal {ordinal} in this session's stored history — the "
                    f"ordinal is wrong (run `{PROG} sessions` to see each session's message count)."
                )
            print(text)
        else:
            print(expand_range(store, session_id, start, end, settings, verbose=verbose))
    return 0


_COMMANDS = {
    "ingest": _ingest,
    "run": _run,
    "wrapup": _wrapup,
    "recomp": _recomp,
    "render": _render,
    "status": _status,
    "expand": _expand,
    "sessions": _sessions,
    "brief": _brief,
    "models": _models,
}


def _run_command(args: argparse.Namespace, root: str) -> int:
    """Run one command; a failure of the store or the disk is one line, never a traceback."""
    import sqlite3

    try:
        return _COMMANDS[args.command](args, root)
    except BrokenPipeError:
        raise
    except (sqlite3.Error, OSError) as error:
        from karni_historian.store.database import failure_line

        raise CliError(failure_line(root, error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``karni-historian`` with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Everything printed goes through karni-core's sanitiser: transcripts and
    the store are a repository's text (``docs/security.md``).
    """
    from karni.agent.common.sanitize import CleanStream

    saved = sys.stdout, sys.stderr
    # Tabs stay: `expand` prints recovered file contents.
    sys.stdout = CleanStream(sys.stdout, keep_tabs=True)
    sys.stderr = CleanStream(sys.stderr, keep_tabs=True)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = saved


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    from karni.agent.common.arguments import CommandLineError, answer_version_or_bare

    try:
        early = answer_version_or_bare(arguments, "karni-historian", _parser)
        if early is not None:
            return early
        args = _parser().parse_args(arguments)
        if args.quiet and args.verbose:
            raise CliError("-q and -v ask for less and for more; pass one of them", 2)
        if args.session is not None and args.command not in SESSION_COMMANDS:
            raise CliError(
                f"{args.command} takes no --session; it applies to {', '.join(SESSION_COMMANDS)}",
                2,
            )
        root = _root(args)
        return _run_command(args, root)
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
