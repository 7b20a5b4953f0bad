"""A small parser for the flag-and-positional command lines of ``doctor``, ``check``, ``config``.

``argparse`` prints its own error format and exits by itself; Karni's
commands report every mistake the same way (one ``karni: ...`` line, exit 2)
through :class:`~karni.cli.errors.UsageError`, so they share this instead.
"""

from __future__ import annotations

from karni.cli.errors import UsageError

__all__ = ["parse", "parse_flags"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


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
        ``({name: given}, positionals)``; ``--`` ends the options.

    Raises:
        UsageError: An option that is not in ``flags``.
    """
    given = dict.fromkeys(flags, False)
    spelled = {spelling: name for name, spellings in flags.items() for spelling in spellings}
    positionals: list[str] = []
    options_done = False
    for argument in argv:
        if options_done or not argument.startswith("-") or argument == "-":
            positionals.append(argument)
        elif argument == "--":
            options_done = True
        elif argument in spelled:
            given[spelled[argument]] = True
        else:
            raise UsageError(f"unknown option `{argument}` for `{command}`; {usage}")
    return given, positionals


def parse_flags(
    argv: list[str], command: str, flags: Mapping[str, tuple[str, ...]], usage: str
) -> dict[str, bool]:
    """Parse a command line of flags only, such as ``karni doctor``'s.

    Returns:
        ``{name: given}``; with ``help`` given, any positional argument is ignored.

    Raises:
        UsageError: An unknown option, or a positional argument.
    """
    given, positionals = parse(argv, command, flags, usage)
    if positionals and not given.get("help"):
        raise UsageError(f"`{command}` takes no arguments, got `{positionals[0]}`; {usage}")
    return given
