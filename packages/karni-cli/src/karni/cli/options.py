"""Parsing the command lines of ``config``, ``new`` and ``hooks`` with argparse.

Karni reports every mistake the same way, one ``karni: ...`` line and exit
status 2, through :class:`~karni.cli.errors.UsageError`, and prints its own
help text. So the parser here never prints or exits by itself: it raises.
``context`` and ``rules`` parse by hand instead, and ``check`` and ``doctor``
use :mod:`karni.cli.flags`: importing ``argparse`` would cost them more than
their own work.
"""

from __future__ import annotations

import argparse

from karni.agent.common.terminal import parser_error_parts
from karni.cli.errors import UsageError, unknown_option

__all__ = ["parse", "parser"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose mistakes are :class:`UsageError`, never an exit."""

    def __init__(self, command: str, usage: str) -> None:
        super().__init__(prog=command, add_help=False, allow_abbrev=False, exit_on_error=False)
        self.command = command
        self.usage_line = usage

    def error(self, message: str) -> NoReturn:
        what, hint = parser_error_parts(message, self._option_string_actions)
        raise UsageError(f"{what} for `{self.command}`{hint}; {self.usage_line}")


def parser(command: str, usage: str) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` for ``command`` that raises :class:`UsageError` on a mistake."""
    return _Parser(command, usage)


def parse(
    argv: list[str], command: str, flags: Mapping[str, tuple[str, ...]], usage: str
) -> tuple[dict[str, bool], list[str]]:
    """Split ``argv`` into the flags that were given and the positional arguments.

    Args:
        argv: The arguments after the command name.
        command: The command, for error messages (``karni doctor``).
        flags: Flag name → its spellings, e.g. ``{"quiet": ("-q", "--quiet")}``.
        usage: The usage line shown with a mistake.

    Returns:
        ``({name: given}, positionals)``; flags may come anywhere, ``--`` ends them.

    Raises:
        UsageError: An option that is not in ``flags``.
    """
    parser = _Parser(command, usage)
    for name, spellings in flags.items():
        parser.add_argument(*spellings, dest=name, action="store_true")
    parser.add_argument("positionals", nargs="*")
    try:
        namespace, unknown = parser.parse_known_intermixed_args(argv)
    except argparse.ArgumentError as error:
        parser.error(str(error))
    for argument in unknown:
        if argument.startswith("-") and argument != "-":
            known = [spelling for spellings in flags.values() for spelling in spellings]
            raise unknown_option(argument, command, known, usage)
    given = {name: bool(getattr(namespace, name)) for name in flags}
    return given, [*namespace.positionals, *unknown]
