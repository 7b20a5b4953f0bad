"""Parsing the double's command line the way commander parses Chronicle's.

Chronicle's program option ``--json`` is recognised before and after the
subcommand; everything after the first unknown option is handed to the
subcommand, which parses its own options. Usage errors carry commander's
messages (exit 2). ``--limit`` is converted with JavaScript's ``Number()``,
so :func:`js_number` reproduces it.
"""

from __future__ import annotations

__all__ = [
    "COMMANDS",
    "Invocation",
    "UsageError",
    "command_help",
    "js_number",
    "parse_arguments",
    "program_help",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# subcommand -> (argument names, {option: value placeholder or None for a flag})
COMMANDS: dict[str, tuple[tuple[str, ...], dict[str, str | None]]] = {
    "context": (("file",), {"--limit": "<n>", "--copy": None}),
    "knowledge": ((), {"--type": "<kind>", "--session": "<id>"}),
}
HELP_FLAGS = ("-h", "--help")
VERSION_FLAGS = ("-V", "--version")


class UsageError(Exception):
    """A command-line usage error: exit 2 with the message on stderr."""


class Invocation:
    """The parsed command line."""

    def __init__(self) -> None:
        """Start with no command, no operands and no options."""
        self.json = False
        self.command: str | None = None
        self.operands: list[str] = []
        self.options: dict[str, str | bool] = {}
        self.help = False
        self.version = False


def _maybe_option(arg: str) -> bool:
    if len(arg) < 2 or not arg.startswith("-"):
        return False
    return not _is_negative_number(arg)


def _is_negative_number(arg: str) -> bool:
    body = arg[1:]
    return body.replace(".", "", 1).isdigit() and body[-1:].isdigit()


def _split(
    args: Sequence[str], operands: list[str], consume: Callable[[str, list[str]], bool]
) -> list[str]:
    """Commander's split: operands up to the first unknown option, the rest after it.

    Args:
        args: The arguments to split.
        operands: Where operands are appended.
        consume: Handles a known option (popping its value from the remaining
            arguments it is given) and returns True; False for anything else.

    Returns:
        The first unknown option and everything after it (``--`` included
        when it came after an unknown option).
    """
    unknown: list[str] = []
    destination = operands
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            if destination is unknown:
                destination.append(arg)
            destination.extend(rest)
            break
        if consume(arg, rest):
            continue
        if _maybe_option(arg):
            destination = unknown
        destination.append(arg)
    return unknown


def parse_arguments(argv: Sequence[str]) -> Invocation:
    """Parse ``argv`` the way commander does for Chronicle's program.

    Program options (``--json``, ``--version``) are recognised anywhere before
    ``--``; everything after the first unknown option is handed to the
    subcommand, which parses its own options.

    Raises:
        UsageError: With commander's message, for exit 2.
    """
    result = Invocation()

    def program_option(arg: str, rest: list[str]) -> bool:
        if arg == "--json":
            result.json = True
            return True
        if arg in VERSION_FLAGS:
            result.version = True
            rest.clear()
            return True
        return False

    operands: list[str] = []
    unknown = _split(argv, operands, program_option)
    if result.version:
        return result
    help_flag = any(arg in HELP_FLAGS for arg in _before_separator(unknown))
    if operands and operands[0] in COMMANDS:
        result.command = operands[0]
        result.help = help_flag
        if not help_flag:
            _parse_subcommand(result, operands[1:], unknown)
        return result
    if operands and operands[0] == "help":
        result.help = True
        topic = operands[1] if len(operands) > 1 else None
        result.command = topic if topic in COMMANDS else None
        return result
    if help_flag:
        result.help = True
        return result
    if operands:
        raise UsageError(f"error: unknown command '{operands[0]}'")
    if unknown:
        raise UsageError(f"error: unknown option '{unknown[0]}'")
    raise UsageError("error: missing command (usage: chronicle [options] [command])")


def _before_separator(args: list[str]) -> list[str]:
    return args[: args.index("--")] if "--" in args else args


def _parse_subcommand(result: Invocation, operands: list[str], args: list[str]) -> None:
    assert result.command is not None
    names, options = COMMANDS[result.command]

    def command_option(arg: str, rest: list[str]) -> bool:
        name, has_value, inline = arg.partition("=")
        if not _maybe_option(arg) or name not in options:
            return False
        placeholder = options[name]
        if placeholder is None:
            if has_value:  # a flag given a value is an unknown option
                return False
            result.options[name] = True
        elif has_value:
            result.options[name] = inline
        else:
            if not rest:
                raise UsageError(f"error: option '{name} {placeholder}' argument missing")
            result.options[name] = rest.pop(0)
        return True

    operands = list(operands)
    unknown = _split(args, operands, command_option)
    if unknown and _maybe_option(unknown[0]):
        raise UsageError(f"error: unknown option '{unknown[0]}'")
    operands += unknown
    if len(operands) < len(names):
        raise UsageError(f"error: missing required argument '{names[len(operands)]}'")
    if len(operands) > len(names):
        expected = len(names)
        plural = "" if expected == 1 else "s"
        raise UsageError(
            f"error: too many arguments for '{result.command}'. "
            f"Expected {expected} argument{plural} but got {len(operands)}."
        )
    result.operands = operands


def program_help() -> str:
    """``chronicle --help``."""
    return (
        "Usage: chronicle [options] [command]\n\n"
        "Options:\n"
        "  -V, --version               output the version number\n"
        "  --json                      machine-readable output (stable, versioned)\n"
        "  -h, --help                  display help for command\n\n"
        "Commands:\n"
        "  context [options] <file>    assemble a paste-ready context pack for a file\n"
        "  knowledge [options]         decisions and TODOs extracted from the record\n"
        "  help [command]              display help for command\n"
    )


def command_help(command: str) -> str:
    """``chronicle <command> --help``."""
    names, options = COMMANDS[command]
    usage = " ".join([f"chronicle {command} [options]", *(f"<{name}>" for name in names)])
    lines = [f"Usage: {usage}", "", "Options:"]
    for option, placeholder in options.items():
        lines.append(f"  {option}{' ' + placeholder if placeholder else ''}")
    lines.append("  -h, --help  display help for command")
    return "\n".join(lines) + "\n"


def js_number(value: str) -> float:
    """JavaScript's ``Number(value)`` for a string (NaN when it is not a number)."""
    text = value.strip(" \t\n\r\v\f\u00a0\ufeff\u2028\u2029")
    if not text:
        return 0.0
    lowered = text.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if lowered.startswith(prefix):
            try:
                return float(int(text[2:], base))
            except ValueError:
                return float("nan")
    if text in ("Infinity", "+Infinity", "-Infinity"):
        return float(text.replace("Infinity", "inf"))
    allowed = set("0123456789.eE+-")
    if not set(text) <= allowed or text.lower() in ("nan", "inf"):
        return float("nan")
    try:
        return float(text)
    except ValueError:
        return float("nan")
