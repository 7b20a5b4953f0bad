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

from karni.agent.common.errors import KarniCoreError
from karni.agent.common.terminal import help_width, parser_error_hint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["USAGE_EXIT", "CommandLineError", "CommandParser", "option_strings"]

USAGE_EXIT = 2
"""The exit status of a wrong command line, the same for every Karni command."""


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
        hint = parser_error_hint(message, option_strings(self))
        raise CommandLineError(f"{message}{hint}; run `{self.prog} --help` for usage")
