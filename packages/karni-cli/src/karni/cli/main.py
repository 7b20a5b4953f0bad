"""The ``karni`` entry point: dispatches to one command module, imported lazily.

Each command lives in ``karni.cli.commands.<name>`` and exposes
``run(argv: list[str]) -> int`` plus a one-line ``SUMMARY``. Only the module
of the command being run is imported, so ``karni context`` pays for nothing
else.
"""

from __future__ import annotations

import sys

from karni.cli.errors import KarniError

__all__ = ["COMMANDS", "main"]

COMMANDS: dict[str, str] = {
    "context": "karni.cli.commands.context",
    "rules": "karni.cli.commands.rules",
    "doctor": "karni.cli.commands.doctor",
    "check": "karni.cli.commands.check",
    "config": "karni.cli.commands.config",
    "new": "karni.cli.commands.new",
    "hooks": "karni.cli.commands.hooks",
    "hook": "karni.cli.commands.hook",
}
"""Command name → module. The order is the order ``karni --help`` lists them in."""


def _usage() -> str:
    import importlib

    lines = ["usage: karni COMMAND [OPTIONS]", "", "commands:"]
    for name, module_name in COMMANDS.items():
        try:
            summary = importlib.import_module(module_name).SUMMARY
        except ImportError:
            continue
        lines.append(f"  {name:<9} {summary}")
    lines += ["", "Run `karni COMMAND --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run ``karni`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        from karni.cli.version import cli_version

        print(f"karni {cli_version() or 'unknown'}")
        return 0
    module_name = COMMANDS.get(args[0])
    if module_name is None:
        print(
            f"karni: unknown command `{args[0]}`; run `karni --help` for the list",
            file=sys.stderr,
        )
        return 2
    import importlib

    command = importlib.import_module(module_name)
    try:
        return int(command.run(args[1:]))
    except KarniError as error:
        print(f"karni: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("karni: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        from karni.agent.common.pipes import stop_on_broken_pipe

        return stop_on_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
