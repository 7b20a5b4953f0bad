"""``karni-historian blame FILE``: each line's commit, and the request and session that wrote it."""

from __future__ import annotations

import json
import sys

from karni.agent.common.paths import project_relative

from karni_historian.blame import blame_file
from karni_historian.blame.report import as_agent_trace, as_json, as_text
from karni_historian.cli.common import PROG, CliError, open_store
from karni_historian.errors import BlameError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["line_range", "run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print the blame of ``args.path`` as text, JSON or an Agent Trace record."""
    relative = project_relative(root, args.path)
    if relative is None or relative == ".":
        raise CliError(f"{args.path} lies outside the project {root}; pass a file inside it", 2)
    lines = None if args.lines is None else line_range(args.lines)
    form = "json" if args.json else args.format
    with open_store(root) as store:
        try:
            report = blame_file(store, root, relative, lines, revision=form == "agent-trace")
        except BlameError as error:
            raise CliError(str(error)) from None
    if report.pending and not args.quiet:
        print(
            f"{PROG}: {report.pending} stored session(s) not yet read for blame;"
            f" run `{PROG} ingest` to add them",
            file=sys.stderr,
        )
    if form == "text":
        text = as_text(report)
        if text:
            print(text)
        return 0
    data = as_json(report) if form == "json" else as_agent_trace(report)
    print(json.dumps(data, indent=2, ensure_ascii=False))
    return 0


def line_range(text: str) -> tuple[int, int]:
    """``START,END`` (or ``N``) as 1-based inclusive line numbers; a usage error otherwise."""
    start, _, end = text.partition(",")
    numbers = []
    for part in (start, end or start):
        part = part.strip()
        if not part.isascii() or not part.isdigit() or int(part) <= 0:
            raise CliError(f"-L takes START,END (positive line numbers), not {text!r}", 2)
        numbers.append(int(part))
    if numbers[0] > numbers[1]:
        raise CliError(f"-L {text}: START comes after END; pass START,END with START <= END", 2)
    return numbers[0], numbers[1]
