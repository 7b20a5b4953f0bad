"""``karni rules``: the project's rules for an agent, and ``karni rules sync`` for the adapters.

This runs before almost every task an agent starts, so arguments are parsed
by hand (importing ``argparse`` would cost more than the listing itself) and
anything not needed for the plain listing (``json``, the adapter code) is
imported only when asked for.
"""

from __future__ import annotations

import sys

from karni.agent.common.errors import UnsafePathError
from karni.cli.errors import KarniError, UsageError, unknown_option
from karni.cli.project import find_project_root
from karni.cli.rules.conditions import LAYOUT_CONDITIONS, active_conditions
from karni.cli.rules.file import load_rules_file
from karni.cli.rules.registry import (
    KARNI_RULES,
    effective_rules,
    format_explanation,
    format_listing,
    inactive_reason,
    left_out_for_layout,
)

__all__ = ["SUMMARY", "run"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from karni.cli.rules.model import Rule, RulesFile

SUMMARY = "print the project's rules (--explain CODE, --json); `sync` the agent adapters"

USAGE = """\
usage: karni rules [--json | --explain CODE]
       karni rules sync [--check | --force]

Print the rules of this Karni project: Karni's conventions, the project's own
rules from karni.rules.py, and K008 when a prompt-history store is detected.
In a project not laid out as Karni's, the rules about Karni's folders and
bases (K002-K005, K010, K011) are left out, and a line names them.

options:
  --explain CODE  the full rule, why it exists and how to fix a breach
  --json          the whole registry, the active conditions and the rule file
  -h, --help      show this help

sync writes the agent adapters (AGENTS.md, CLAUDE.md, .cursor/rules/karni.mdc,
.github/copilot-instructions.md, .windsurf/rules/karni.md, .clinerules/karni.md,
CONVENTIONS.md) as ADAPTERS in karni.rules.py asks:
  --check         write nothing; list stale files on stderr and exit 1
  --force         replace hand-written files, saving them under .karni/backup/
"""

_SYMLINKED = (
    "reached through a symlink, which Karni never writes through; "
    "replace the link with a real file or folder"
)

_STALE = {
    "missing": "missing",
    "outdated": "out of date",
    "hand-written": (
        "hand-written where a generated adapter belongs; "
        "`karni rules sync --force` saves it under .karni/backup/ and replaces it"
    ),
    "not-a-file": "not a file; move it away so the adapter can be written",
    "symlinked": _SYMLINKED,
    "unwanted": "generated for an adapter that is switched off or moved; sync removes it",
}


def run(argv: list[str]) -> int:
    """Run ``karni rules`` with the arguments after ``rules``; return the exit status."""
    if argv and argv[0] == "sync":
        return _sync(argv[1:])
    as_json, explain, show_help = _parse(argv)
    if show_help:
        # bench row "karni rules" runs without it
        from karni.cli.helptext import write_help

        write_help(USAGE)
        return 0

    root = find_project_root()
    rules_file = load_rules_file(root)
    conditions = active_conditions(root)
    rules = effective_rules(conditions, rules_file)
    if explain is not None:
        return _explain(explain, rules, conditions, rules_file)
    if as_json:
        return _json(rules, conditions, rules_file)
    left_out = left_out_for_layout(conditions, LAYOUT_CONDITIONS, rules_file)
    sys.stdout.write(format_listing(rules, left_out))
    return 0


def _parse(argv: list[str]) -> tuple[bool, str | None, bool]:
    """``(as_json, explain, show_help)`` from the arguments of the plain listing.

    Raises:
        UsageError: An unknown option or argument, ``--explain`` without a
            code, or ``--json`` with ``--explain``.
    """
    as_json = False
    explain: str | None = None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            return False, None, True
        if arg == "--json":
            as_json = True
        elif arg == "--explain":
            explain = _code(args.pop(0) if args and not args[0].startswith("-") else "")
        elif arg.startswith("--explain="):
            explain = _code(arg.partition("=")[2])
        elif arg.startswith("-"):
            known = ("--json", "--explain", "--help")
            raise unknown_option(arg, "karni rules", known, "run `karni rules --help`")
        else:
            raise UsageError(
                f"unknown argument `{arg}` for `karni rules`; run `karni rules --help`"
            )
    if as_json and explain is not None:
        raise UsageError("use either `--json` or `--explain CODE`, not both")
    return as_json, explain, False


def _code(value: str) -> str:
    """``--explain``'s value, which must name a rule code."""
    if not value.strip():
        raise UsageError("`--explain` needs a rule code, e.g. `karni rules --explain K004`")
    return value


def _explain(
    code: str, rules: list[Rule], conditions: frozenset[str], rules_file: RulesFile
) -> int:
    wanted = code.strip().upper()
    for rule in rules:
        if rule.code == wanted:
            sys.stdout.write(format_explanation(rule))
            return 0
    raise KarniError(inactive_reason(wanted, conditions, rules_file))


def _json(rules: list[Rule], conditions: frozenset[str], rules_file: RulesFile) -> int:
    # bench row "karni rules" runs without it
    import json

    active = {rule.code: rule for rule in rules}
    override = rules_file.override
    registry = []
    for rule in KARNI_RULES:
        shown = active.get(rule.code) or rule.replace(**override.get(rule.code, {}))
        registry.append(
            {
                **shown.as_dict(),
                "active": rule.code in active,
                "disabled": rule.code in rules_file.disable,
                "overridden": sorted(override.get(rule.code, {})),
            }
        )
    for rule in rules_file.add:
        registry.append({**rule.as_dict(), "active": True, "disabled": False, "overridden": []})
    document = {
        "conditions": sorted(conditions),
        "rules_file": rules_file.as_dict() if rules_file.path is not None else None,
        "rules": registry,
    }
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return 0


def _sync(argv: list[str]) -> int:
    check = force = False
    for arg in argv:
        if arg in ("-h", "--help"):
            # bench row "karni rules" runs without it
            from karni.cli.helptext import write_help

            write_help(USAGE)
            return 0
        if arg == "--check":
            check = True
        elif arg == "--force":
            force = True
        else:
            raise UsageError(
                f"unknown argument `{arg}` for `karni rules sync`; use --check or --force"
            )
    if check and force:
        raise UsageError("use either `--check` (write nothing) or `--force`, not both")

    # bench row "karni rules" runs without it
    from pathlib import Path

    root = Path(find_project_root())
    return _check(root) if check else _write(root, force)


def _check(root: Path) -> int:
    # bench row "karni rules" runs without it
    from karni.cli.rules.adapters import adapter_states

    stale = [state for state in adapter_states(root) if state.state != "fresh"]
    for state in stale:
        print(f"karni: {state.path}: {_STALE[state.state]}", file=sys.stderr)
    if stale:
        count = f"{len(stale)} adapter file{'s' if len(stale) != 1 else ''}"
        print(f"karni: {count} stale; run `karni rules sync`", file=sys.stderr)
        return 1
    print("adapters are up to date")
    return 0


def _write(root: Path, force: bool) -> int:
    # bench row "karni rules" runs without it
    from karni.cli.rules.adapters import sync

    try:
        report = sync(root, force=force)
    except UnsafePathError as error:
        raise KarniError(
            f"cannot write the agent adapters: {error}; nothing was written; "
            f"replace the link with a real file or folder and run `karni rules sync` again"
        ) from None
    backups = dict(report.backed_up)
    for state in report.written:
        if state.path in backups:
            print(
                f"replaced {state.path} (the hand-written file is saved as {backups[state.path]})"
            )
        else:
            print(f"{'created' if state.state == 'missing' else 'updated'} {state.path}")
    for path in report.removed:
        print(f"removed {path}")
    for state in report.conflicts:
        if state.state == "hand-written":
            message = (
                f"{state.path} is hand-written, left alone; move what matters into "
                f"karni.rules.py, then run `karni rules sync --force` (it saves the file "
                f"under .karni/backup/ first)"
            )
        elif state.state == "symlinked":
            message = f"{state.path} is {_SYMLINKED}, left alone"
        else:
            message = (
                f"{state.path} is not a file, left alone; move it away and run `karni rules sync`"
            )
        print(f"karni: {message}", file=sys.stderr)
    if not (report.written or report.removed or report.conflicts):
        print("adapters are up to date")
    return 1 if report.conflicts else 0
