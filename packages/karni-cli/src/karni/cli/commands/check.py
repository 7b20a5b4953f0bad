"""``karni check [-q/--quiet]``: check the project, exit 1 on any failure, naming each.

Runs the agent-adapter freshness check (as ``karni rules sync --check``),
validates ``karni.rules.py`` and the settings, runs every check registered
under ``karni.checks``, and Django's system checks through the project's own
interpreter (skipped when it has none with Django). A clean run ends
``karni check: ok`` and, outside CI, may print the one-time tip on stderr.
"""

from __future__ import annotations

import sys

__all__ = ["SUMMARY", "USAGE", "run"]

SUMMARY = "check adapters, karni.rules.py, settings, registered checks and Django's checks"

USAGE = "usage: karni check [-q/--quiet]"

HELP = f"""{USAGE}

Check the project and exit 1 if anything fails, naming each failure:
  agent adapters        fresh, as `karni rules sync --check` requires
  karni.rules.py        valid
  settings              .karni/config.toml (and the global settings) valid
  karni.checks          every check other packages register under this entry-point group
  django system checks  `.venv/bin/python manage.py check`, skipped without a
                        project .venv that has Django

options:
  -q, --quiet  print only failures and the final line; never print the one-time tip
  -h, --help   show this help and exit
"""

FLAGS = {"quiet": ("-q", "--quiet"), "help": ("-h", "--help")}

LABELS = {"ok": "ok", "failed": "FAILED", "skipped": "skipped"}


def run(argv: list[str]) -> int:
    """Run ``karni check``."""
    from karni.cli.flags import parse_flags

    flags = parse_flags(argv, "karni check", FLAGS, USAGE)
    if flags["help"]:
        sys.stdout.write(HELP)
        return 0
    from karni.cli.checks import (
        FAILED,
        builtin_checks,
        django_system_checks,
        registered_checks,
    )
    from karni.cli.project import find_project_root

    root = find_project_root()
    quiet = flags["quiet"]
    results = [check(root) for check in builtin_checks()]
    results += registered_checks(root)
    results.append(django_system_checks(root))

    failed = [result for result in results if result.status == FAILED]
    for result in results:
        if quiet and result.status != FAILED:
            continue
        detail = f": {result.detail}" if result.detail else ""
        sys.stdout.write(f"{LABELS[result.status]:<8} {result.name}{detail}\n")
    if failed:
        names = ", ".join(result.name for result in failed)
        sys.stdout.write(f"karni check: {len(failed)} failed ({names})\n")
        return 1
    sys.stdout.write("karni check: ok\n")
    sys.stdout.flush()
    from karni.cli.tip import offer_tip

    offer_tip(root, sys.stderr, quiet=quiet)
    return 0
