"""The ``karni-history-adr`` command: the full, uncapped view of the records.

``karni context --with-history`` caps every brief; when it cuts this
provider's, its last line names ``karni-history-adr show PATH``, which prints
the same brief whole, with each record's file. ``list`` prints every record
(or, with ``--accepted``, the project brief).
"""

from __future__ import annotations

import os
import sys

from karni_history_adr.discovery import ADR_DIRECTORIES, has_adr_directory

__all__ = ["find_root", "main"]

PROG = "karni-history-adr"

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


class CommandError(Exception):
    """A problem the user can fix; printed as one line, exit status 1."""


def find_root(start: str) -> str:
    """The nearest directory at or above ``start`` that holds an ADR folder.

    Raises:
        CommandError: No directory up to the file-system root has one.
    """
    from karni.agent.common.ownership import find_upwards

    def adr_folder_in(folder: str) -> str | None:
        return next(
            (name for name in ADR_DIRECTORIES if os.path.isdir(os.path.join(folder, name))), None
        )

    # A folder another user owns is passed over (docs/security.md).
    found = find_upwards(start, adr_folder_in)
    if found is None:
        folders = ", ".join(f"{folder}/" for folder in ADR_DIRECTORIES)
        raise CommandError(
            f"no ADR folder ({folders}) at or above {os.path.abspath(start)}; "
            f"run it inside a project with decision records, or pass --root DIR"
        )
    return found


def _project_path(root: str, path: str) -> str:
    """``path`` (relative to the working directory, or absolute) relative to ``root``.

    Symlinks follow karni-core's one rule (:mod:`karni.agent.common.paths`).
    """
    from karni.agent.common.paths import project_relative

    relative = project_relative(root, path)
    if relative is None:
        raise CommandError(f"`{path}` is outside the project {root}; pass a path inside it")
    return relative


def _parser() -> argparse.ArgumentParser:
    from karni.agent.common.arguments import command_parser

    parser = command_parser(
        PROG, "Print the Architecture Decision Records that concern a file, uncapped."
    )
    parser.add_argument(
        "--root", help="the project root (default: the nearest folder holding an ADR folder)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    show = commands.add_parser("show", help="the records that mention PATH, its module or folder")
    show.add_argument("path", metavar="PATH", help="a file, relative to the working directory")
    listing = commands.add_parser("list", help="every record, newest first")
    listing.add_argument(
        "--accepted", action="store_true", help="only the accepted decisions (the project brief)"
    )
    return parser


def _run(args: argparse.Namespace) -> str:
    from karni_history_adr.brief import format_context, format_project, record_line
    from karni_history_adr.matching import records_mentioning
    from karni_history_adr.records import load_records

    root_option = getattr(args, "root", None)
    if root_option:
        if not has_adr_directory(root_option):
            raise CommandError(
                f"--root {root_option} holds none of "
                f"{', '.join(f'{folder}/' for folder in ADR_DIRECTORIES)}; pass the project root"
            )
        root = os.path.abspath(root_option)
    else:
        root = find_root(os.getcwd())
    records = load_records(root)
    if getattr(args, "command", None) == "show":
        path = _project_path(root, args.path)
        brief = format_context(records_mentioning(records, path), records, with_files=True)
        return brief or f"No decision record mentions {path}, its module or its folder."
    if getattr(args, "accepted", False):
        return format_project(records, with_files=True) or "No accepted decision records."
    ordered = sorted(records, key=lambda record: record.number, reverse=True)
    lines: list[str] = []
    for record in ordered:
        lines.append(record_line(record, records))
        lines.append(f"  {record.file}")
    return "\n".join(lines) or "No decision records."


def main(argv: list[str] | None = None) -> int:
    """Run the command with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    from karni.agent.common.arguments import CommandLineError, answer_version_or_bare

    arguments = list(sys.argv[1:] if argv is None else argv)
    early = answer_version_or_bare(arguments, "karni-history-adr", _parser)
    if early is not None:
        return early
    try:
        output = _run(_parser().parse_args(arguments))
    except (CommandError, CommandLineError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2 if isinstance(error, CommandLineError) else 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    from karni.agent.common.sanitize import one_line

    # Titles and paths come from the repository: nothing may drive the terminal.
    try:
        print("\n".join(one_line(line) for line in output.split("\n")))
    except BrokenPipeError:
        from karni.agent.common.pipes import stop_on_broken_pipe

        return stop_on_broken_pipe()
    return 0


if __name__ == "__main__":
    sys.exit(main())
