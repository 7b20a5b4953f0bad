"""The ``karni-historian`` command: ingest, condense, render and inspect history.

Subcommands: ``ingest``, ``run``, ``wrapup``, ``recomp``, ``render``, ``status``,
``expand``, ``sessions``, ``brief``, ``timeline``, ``blame`` and ``models check``, each in its own
Subcommands: ``ingest``, ``run``, ``wrapup``, ``share``, ``recomp``, ``render``, ``status``,
``expand``, ``sessions``, ``brief`` and ``models check``, each in its own
module of this package (its name), imported only when it runs. The project
is the nearest directory at or above the working directory holding
``manage.py`` or ``karni.rules.py`` (or ``--project DIR``). Errors are one
line on stderr, naming the thing and the fix; usage errors exit 2, other
failures 1.
"""

from __future__ import annotations

import importlib
import sqlite3
import sys

from karni.agent.common.arguments import CommandLineError, answer_version_or_bare
from karni.agent.common.sanitize import CleanStream

from karni_historian.cli.common import PROG, CliError, project_root
from karni_historian.cli.parser import SESSION_COMMANDS, parser
from karni_historian.store.database import failure_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``karni-historian`` with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Everything printed goes through karni-core's sanitiser: transcripts and
    the store are a repository's text (``docs/security.md``).
    """
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
    try:
        early = answer_version_or_bare(arguments, PROG, parser)
        if early is not None:
            return early
        args = parser().parse_args(arguments)
        if args.quiet and args.verbose:
            raise CliError("-q and -v ask for less and for more; pass one of them", 2)
        if args.session is not None and args.command not in SESSION_COMMANDS:
            raise CliError(
                f"{args.command} takes no --session; it applies to {', '.join(SESSION_COMMANDS)}",
                2,
            )
        root = project_root(args)
        return _run_command(args, root)
    except (CliError, CommandLineError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the store keeps its state before this run", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # bench row "karni-historian brief FILE" runs without it
        from karni.agent.common.pipes import stop_on_broken_pipe

        return stop_on_broken_pipe()


def _run_command(args: argparse.Namespace, root: str) -> int:
    """Run one command; a failure of the store or the disk is one line, never a traceback."""
    try:
        # Each command is the module of its name, looked up on use: bench row
        # "karni-historian brief FILE" runs without condensing, ingest or models.
        command = importlib.import_module(f"karni_historian.cli.{args.command}")
        return int(command.run(args, root))
    except BrokenPipeError:
        raise
    except (sqlite3.Error, OSError) as error:
        raise CliError(failure_line(root, error)) from None
