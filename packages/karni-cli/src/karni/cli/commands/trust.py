"""``karni trust [PATH] | --list | --revoke [PATH]``: say which projects may run their own code.

Only ``karni check`` ever runs a project's code (Django's system checks
through its ``.venv`` interpreter), and only for a project trusted here. The
record lives in the user's configuration folder, never in a repository; see
:mod:`karni.agent.common.trust` and ``docs/security.md``.
"""

from __future__ import annotations

import os
import sys

from karni.agent.common.sanitize import clean_line
from karni.agent.common.trust import TrustError, revoke, trust, trusted_projects
from karni.cli.errors import KarniError, UsageError
from karni.cli.helptext import write_help
from karni.cli.options import parse
from karni.cli.project import find_project_root

__all__ = ["SUMMARY", "USAGE", "run"]

SUMMARY = "let `karni check` run a project's own code (--list, --revoke)"

USAGE = "usage: karni trust [PATH] [--force] | --list | --revoke [PATH]"

HELP = f"""{USAGE}

Trust a project (PATH, or the project around the working folder) so that
`karni check` runs Django's system checks through its own .venv interpreter.
Nothing else Karni does runs a project's code. Trust is recorded in the user's
configuration folder, keyed by the project's resolved path and its owner;
setting KARNI_TRUST_PROJECT=1 trusts the working project for one run (for CI).

options:
  --list        print every trusted project
  --revoke      forget a project (PATH, or the project around the working folder)
  --force       trust a project owned by another user (its code would run as you)
  -h, --help    show this help and exit
"""

FLAGS = {
    "list": ("--list",),
    "revoke": ("--revoke",),
    "force": ("--force",),
    "help": ("-h", "--help"),
}


def _target(positionals: list[str]) -> str:
    if len(positionals) > 1:
        raise UsageError(f"`karni trust` takes at most one PATH; {USAGE}")
    if positionals:
        path = os.path.abspath(positionals[0])
        if not os.path.isdir(path):
            raise UsageError(f"{positionals[0]} is not a folder; name a project folder")
        return path
    return find_project_root()


def _list() -> int:
    for project in trusted_projects():
        owner = "unknown owner" if project.owner is None else f"uid {project.owner}"
        sys.stdout.write(f"{clean_line(project.path)} ({owner})\n")
    return 0


def _change(flags: dict[str, bool], positionals: list[str]) -> int:
    target = _target(positionals)
    if flags["revoke"]:
        done = "no longer trusted" if revoke(target) else "not trusted"
        sys.stdout.write(f"{done}: {clean_line(os.path.realpath(target))}\n")
        return 0
    record = trust(target, force=flags["force"])
    sys.stdout.write(f"trusted: {clean_line(record.path)}\n")
    return 0


def run(argv: list[str]) -> int:
    """Run ``karni trust``."""
    flags, positionals = parse(argv, "karni trust", FLAGS, USAGE)
    if flags["help"]:
        write_help(HELP)
        return 0
    if flags["list"] and (positionals or flags["revoke"] or flags["force"]):
        raise UsageError(f"`karni trust --list` takes nothing else; {USAGE}")
    try:
        return _list() if flags["list"] else _change(flags, positionals)
    except TrustError as error:
        raise KarniError(str(error)) from None
