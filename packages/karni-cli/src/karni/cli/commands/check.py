"""``karni check [-q/--quiet] [-v/--verbose] [--json]``: check the project, exit 1 on any failure.

Runs the agent-adapter freshness check (as ``karni rules sync --check``),
validates ``karni.rules.py`` and both settings files against every declared
setting (one failure per bad key, naming the file and the key: see
:mod:`karni.cli.config.checking`), runs every check registered
under ``karni.checks``, and Django's system checks through the project's own
interpreter (skipped when it has none with Django, and, with one line on
stderr, when the user has not trusted the project: see ``karni trust``). A clean run ends
``karni check: ok`` and, outside CI, may print the one-time tip on stderr.
``--json`` prints the same results as one JSON document instead (its shape
is in the package README and stays stable): ``{"ok": bool, "checks": [{"name",
"status", "detail"}]}``.
"""

from __future__ import annotations

import sys

from karni.agent.common.sanitize import clean_line
from karni.cli.checks import (
    FAILED,
    NOT_TRUSTED,
    builtin_checks,
    django_system_checks,
    registered_checks,
)
from karni.cli.config.checking import settings_results
from karni.cli.errors import UsageError
from karni.cli.flags import parse_flags
from karni.cli.project import find_project_root
from karni.cli.tip import offer_tip

__all__ = ["SUMMARY", "USAGE", "run"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.cli.checks import CheckResult

SUMMARY = "check adapters, karni.rules.py, settings, registered checks and Django's checks"

USAGE = "usage: karni check [-q/--quiet] [-v/--verbose] [--json]"

HELP = f"""{USAGE}

Check the project and exit 1 if anything fails, naming each failure:
  agent adapters        fresh, as `karni rules sync --check` requires
  karni.rules.py        valid
  settings              .karni/config.toml and the global settings file: every
                        key known to an installed package, of its type and in
                        its range, user-only keys (profiles) only in the global
                        file, a selected profile defined; historian model
                        chains are checked without calling a model
  karni.checks          every check other packages register under this entry-point group
  django system checks  `.venv/bin/python manage.py check`, skipped without a
                        project .venv that has Django, and run only for a project
                        trusted with `karni trust` (or KARNI_TRUST_PROJECT=1):
                        the other checks never run the project's code

options:
  -q, --quiet    print only failures and the final line; never print the one-time tip
  -v, --verbose  list every check that passed, each valid setting on its own line
  --json         print the results as one JSON object, {{"ok": true|false,
                 "checks": [{{"name", "status", "detail"}}]}}; never the tip
  -h, --help     show this help and exit

Exit status: 0 every check passed or was skipped, 1 one failed, 2 usage error.
"""

FLAGS = {
    "quiet": ("-q", "--quiet"),
    "verbose": ("-v", "--verbose"),
    "json": ("--json",),
    "help": ("-h", "--help"),
}

LABELS = {"ok": "ok", "failed": "FAILED", "skipped": "skipped"}


def _say_untrusted(root: str) -> None:
    # bench row "karni check" runs without it
    from karni.agent.common.trust import TRUST_VARIABLE

    sys.stderr.write(
        f"karni check: skipped Django's system checks: {clean_line(root)} is not trusted to "
        f"run its own .venv interpreter; run `karni trust` (in CI: {TRUST_VARIABLE}=1) "
        f"to run them\n"
    )


def run(argv: list[str]) -> int:
    """Run ``karni check``."""
    flags = parse_flags(argv, "karni check", FLAGS, USAGE)
    if flags["help"]:
        # bench row "karni check" runs without it
        from karni.cli.helptext import write_help

        write_help(HELP)
        return 0
    if flags["quiet"] and flags["verbose"]:
        raise UsageError(f"-q/--quiet and -v/--verbose cannot go together; {USAGE}")

    root = find_project_root()
    quiet = flags["quiet"]
    results = [check(root) for check in builtin_checks()]
    results += settings_results(root, verbose=flags["verbose"])
    results += registered_checks(root)
    django = django_system_checks(root)
    results.append(django)
    if django.detail == NOT_TRUSTED:
        _say_untrusted(root)

    failed = [result for result in results if result.status == FAILED]
    if flags["json"]:
        return _print_json(results, failed)
    for result in results:
        if quiet and result.status != FAILED:
            continue
        detail = f": {result.detail}" if result.detail else ""
        sys.stdout.write(_printable(f"{LABELS[result.status]:<8} {result.name}{detail}") + "\n")
    if failed:
        names = _printable(", ".join(dict.fromkeys(result.name for result in failed)))
        sys.stdout.write(f"karni check: {len(failed)} failed ({names})\n")
        return 1
    sys.stdout.write("karni check: ok\n")
    sys.stdout.flush()

    offer_tip(root, sys.stderr, quiet=quiet)
    return 0


def _printable(text: str) -> str:
    """``text`` with each line cleaned: a detail may quote a key or a name from a project file."""
    return "\n".join(clean_line(line) for line in text.split("\n"))


def _print_json(results: list[CheckResult], failed: list[CheckResult]) -> int:
    """The ``--json`` document: every result, in the order run; exit 1 on a failure."""
    # bench row "karni check" runs without it
    import json

    document = {
        "ok": not failed,
        "checks": [
            {"name": result.name, "status": result.status, "detail": result.detail}
            for result in results
        ],
    }
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
    return 1 if failed else 0
