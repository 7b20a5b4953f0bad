"""The ``karni`` entry point: dispatches to one command module, imported lazily.

Each command lives in ``karni.cli.commands.<name>`` and exposes
``run(argv: list[str]) -> int`` plus a one-line ``SUMMARY``. Only the module
of the command being run is imported, so ``karni context`` pays for nothing
else.
"""

from __future__ import annotations

import gc
import sys

from karni.agent.common.output import claim, finish

__all__ = ["COMMANDS", "YOUNG_COLLECTION_OBJECTS", "console", "main"]

COMMANDS: dict[str, str] = {
    "context": "karni.cli.commands.context",
    "rules": "karni.cli.commands.rules",
    "doctor": "karni.cli.commands.doctor",
    "check": "karni.cli.commands.check",
    "config": "karni.cli.commands.config",
    "trust": "karni.cli.commands.trust",
    "new": "karni.cli.commands.new",
    "hooks": "karni.cli.commands.hooks",
    "hook": "karni.cli.commands.hook",
    "completion": "karni.cli.commands.completion",
}
"""Command name → module. The order is the order ``karni --help`` lists them in."""


def _usage() -> str:
    # bench row "karni context" runs without it
    import importlib

    lines = ["usage: karni COMMAND [OPTIONS]", "", "commands:"]
    for name, module_name in COMMANDS.items():
        try:
            summary = importlib.import_module(module_name).SUMMARY
        except ImportError:
            continue
        lines.append(f"  {name:<11} {summary}")
    lines += [
        "",
        "options:",
        "  -h, --help     show this help and exit",
        "  -V, --version  print karni's version and exit",
        "",
        "Run `karni help COMMAND` (or `karni COMMAND --help`) for a command's options.",
        "Exit status: 0 success, 1 failure, 2 usage error, 130 interrupted.",
    ]
    return "\n".join(lines)


def _help(args: list[str]) -> int:
    """``karni help [COMMAND]``: the top-level usage, or one command's help."""
    if not args:
        # bench row "karni context" runs without it
        from karni.cli.helptext import write_help

        write_help(_usage() + "\n")
        return 0
    if args[0] not in COMMANDS:
        return _unknown_command(args[0])
    return main([args[0], "--help"])


def _unknown_command(name: str) -> int:
    # bench row "karni context" runs without it
    from karni.agent.common.terminal import did_you_mean

    if name.startswith("-"):
        hint = did_you_mean(name.partition("=")[0], ["--help", "--version"])
        what, tail = "option", "usage"
    else:
        hint = did_you_mean(name, [*COMMANDS, "help"])
        what, tail = "command", "the list"
    print(f"karni: unknown {what} `{name}`{hint}; run `karni --help` for {tail}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run ``karni`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    try:
        return _dispatch(sys.argv[1:] if argv is None else list(argv))
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        # bench row "karni context" runs without it
        from karni.agent.common.pipes import stop_on_broken_pipe

        return stop_on_broken_pipe()


def _interrupted() -> int:
    print("karni: interrupted", file=sys.stderr)
    return 130


YOUNG_COLLECTION_OBJECTS = 10_000
"""Allocations between two collections of the youngest generation in a ``karni`` process."""


def console() -> None:
    """The ``karni`` command and ``python -m karni.cli``: :func:`main` in a process Karni owns.

    Karni's stdout and stderr move out of reach of provider code first
    (:mod:`karni.agent.common.output`); once the command is done the process
    ends at once with its status, so nothing a provider left behind can add
    output or keep it alive. Ctrl-C at any point after this module is
    imported ends with "karni: interrupted" and status 130.

    The collector's youngest generation is collected every
    :data:`YOUNG_COLLECTION_OBJECTS` allocations instead of 700: a command
    lasts tens of milliseconds and mostly imports modules, whose objects
    live to the end, so the default collected them over and over (about 4 %
    of ``karni doctor``'s instructions, see ``docs/performance.md``).
    """
    gc.set_threshold(YOUNG_COLLECTION_OBJECTS)
    try:
        claim()
        status = main()
    except KeyboardInterrupt:
        status = _interrupted()
    except SystemExit as stop:
        status = _exit_status(stop)
    except BaseException:  # a bug in Karni itself: show it, as the interpreter would
        # bench row "karni context" runs without it
        import traceback

        traceback.print_exc()
        status = 1

    finish(status)


def _exit_status(stop: SystemExit) -> int:
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    print(stop.code, file=sys.stderr)
    return 1


def _dispatch(args: list[str]) -> int:
    if not args:
        # bench row "karni context" runs without it
        from karni.cli.helptext import write_help

        write_help(_usage() + "\n", sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        return _help([])
    if args[0] == "help":
        return _help(args[1:])
    if args[0] in ("-V", "--version"):
        # bench row "karni context" runs without it
        from karni.cli.version import cli_version

        print(f"karni {cli_version() or 'unknown'}")
        return 0
    module_name = COMMANDS.get(args[0])
    if module_name is None:
        return _unknown_command(args[0])
    return _run(module_name, args[1:])


def _run(module_name: str, args: list[str]) -> int:
    # bench row "karni --version" runs without it
    from karni.cli.errors import KarniError

    try:
        # `__import__` rather than `importlib.import_module`: `importlib` imports `warnings`.
        __import__(module_name)
        return int(sys.modules[module_name].run(args))
    except KarniError as error:
        # bench row "karni context" runs without it
        from karni.agent.common.sanitize import clean_line

        # A message may quote a name from a project file (karni.rules.py, a setting's key).
        print(f"karni: {clean_line(' '.join(str(error).splitlines()))}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    console()
