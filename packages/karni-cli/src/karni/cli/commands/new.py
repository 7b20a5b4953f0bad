"""``karni new NAME``: scaffold a Karni project (Django + React) in a new or empty folder.

Nothing is written when the target is not empty, and the command never
prints the prompt-history tip: its output may be read by a program.
"""

from __future__ import annotations

import os
import shlex

from karni.cli.errors import UsageError
from karni.cli.helptext import write_help
from karni.cli.options import parse
from karni.cli.scaffold import create_project

__all__ = ["SUMMARY", "run"]

SUMMARY = "create a Karni project in a new folder"

USAGE = """\
usage: karni new NAME [--example]

Create a Karni project (Django + React) in the folder NAME, which must be new
or empty: manage.py, config/, apps/, frontend/src/pages/, karni.rules.py,
.karni/config.toml, README.md, .gitignore and the agent adapters.

options:
  --example   create the bundled example project instead: an event site with
              models, viewsets, pages and Architecture Decision Records in
              doc/adr/, to try `karni context --with-history` on
  -h, --help  show this help
"""

FLAGS = {"help": ("-h", "--help"), "example": ("--example",)}

EXAMPLE_FILE = "apps/events/models.py"
"""The example's file with the richest history: what ``next:`` suggests asking about."""


def run(argv: list[str]) -> int:
    """Run ``karni new`` with the arguments after ``new``; return the exit status."""
    flags, positional = parse(argv, "karni new", FLAGS, "run `karni new --help`")
    if flags["help"]:
        write_help(USAGE)
        return 0
    if len(positional) != 1:
        raise UsageError("`karni new` takes one folder name, e.g. `karni new my-shop`")

    path, files = create_project(positional[0], example=flags["example"])
    relative = os.path.relpath(path)
    shown = path if relative.startswith("..") else relative
    print(f"created {shown}/ ({len(files)} files)")
    then = f"karni context --with-history {EXAMPLE_FILE}" if flags["example"] else "karni context"
    if shown == ".":
        print(f"next: {then} && karni rules")
    else:
        print(f"next: cd {shlex.quote(shown)} && {then} && karni rules")
    return 0
