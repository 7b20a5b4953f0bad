"""Parsing a command line of flags only (``karni check``, ``karni doctor``) by hand.

Importing ``argparse`` costs more than either command's own work
(docs/performance.md), and a line of on/off flags needs none of it. Mistakes
are reported like every other command's, as :class:`~karni.cli.errors.UsageError`.
"""

from __future__ import annotations

from karni.cli.errors import UsageError

__all__ = ["parse_flags"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def parse_flags(
    argv: list[str], command: str, flags: Mapping[str, tuple[str, ...]], usage: str
) -> dict[str, bool]:
    """Parse a command line of flags only, such as ``karni doctor``'s.

    Flags may come in any order and short ones may be combined (``-hq``); ``--``
    ends them.

    Returns:
        ``{name: given}``; with ``help`` given, any positional argument is ignored.

    Raises:
        UsageError: An unknown option, or a positional argument.
    """
    by_spelling = {spelling: name for name, spellings in flags.items() for spelling in spellings}
    given = dict.fromkeys(flags, False)
    positionals: list[str] = []
    for index, argument in enumerate(argv):
        if argument == "--":
            positionals += argv[index + 1 :]
            break
        if not argument.startswith("-") or argument == "-":
            positionals.append(argument)
            continue
        for spelling in _spellings(argument):
            if spelling not in by_spelling:
                # bench row "karni check" runs without it
                from karni.agent.common.terminal import did_you_mean  # only on a mistake

                hint = did_you_mean(argument, list(by_spelling))
                raise UsageError(f"unknown option `{argument}` for `{command}`{hint}; {usage}")
            given[by_spelling[spelling]] = True
    if positionals and not given.get("help"):
        raise UsageError(f"`{command}` takes no arguments, got `{positionals[0]}`; {usage}")
    return given


def _spellings(argument: str) -> list[str]:
    """``-hq`` is ``-h`` and ``-q``; a long option is itself."""
    if argument.startswith("--"):
        return [argument]
    return [f"-{letter}" for letter in argument[1:]]
