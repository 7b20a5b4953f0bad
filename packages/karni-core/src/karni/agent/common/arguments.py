"""The argument parser the provider commands share, so they all behave alike.

``karni-historian`` and ``karni-history-adr`` parse with
:class:`CommandParser`: help wrapped to the terminal (79 columns when not a
terminal), and every mistake raised as :class:`CommandLineError` (exit
status 2) with a did-you-mean for a mistyped command or option, which the
command prints as its one ``<prog>: <message>`` line on stderr. Only those
commands import this module; ``karni context`` never does.
"""

from __future__ import annotations

import argparse
import sys

from karni.agent.common.errors import KarniCoreError
from karni.agent.common.terminal import distribution_version, help_width, parser_error_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

__all__ = [
    "USAGE_EXIT",
    "CommandLineError",
    "CommandParser",
    "answer_version_or_bare",
    "command_parser",
    "option_strings",
]

USAGE_EXIT = 2
"""The exit status of a wrong command line, the same for every Karni command."""

EXIT_STATUS = "Exit status: 0 success, 1 failure, 2 usage error, 130 interrupted."
"""The line every Karni command's help ends with."""


class CommandLineError(KarniCoreError):
    """The command line is wrong; the message names the mistake and the fix."""

    exit_code = USAGE_EXIT


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=help_width())


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every option spelling of ``parser`` and of its subcommands."""
    found: list[str] = []
    for action in parser._actions:
        found.extend(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                found.extend(option_strings(subparser))
    return list(dict.fromkeys(found))


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that wraps help to the terminal and raises on a mistake."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Create the parser; ``formatter_class`` defaults to one sized to the terminal."""
        kwargs.setdefault("formatter_class", _formatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Raise :class:`CommandLineError` for ``message``, with a did-you-mean."""
        what, hint = parser_error_parts(message, option_strings(self))
        raise CommandLineError(f"{what}{hint}; run `{self.prog} --help` for usage")


def command_parser(prog: str, description: str) -> CommandParser:
    """A command's top-level parser: ``-V/--version``, and help ending in the exit statuses."""
    parser = CommandParser(prog=prog, description=description, epilog=EXIT_STATUS)
    parser.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    return parser


def answer_version_or_bare(
    arguments: list[str], distribution: str, parser: Callable[[], argparse.ArgumentParser]
) -> int | None:
    """Handle ``PROG --version`` and a bare ``PROG``; the exit status, or None to go on.

    ``--version`` (``-V``) prints ``PROG VERSION`` on stdout (exit 0); no
    arguments at all prints the usage on stderr (exit 2), as every Karni
    command does.
    """
    if arguments[:1] in (["-V"], ["--version"]):
        print(f"{parser().prog} {distribution_version(distribution)}")
        return 0
    if not arguments:
        parser().print_help(sys.stderr)
        return USAGE_EXIT
    return None
