"""``karni doctor [-q/--quiet] [--json]``: what Karni sees, for a human or a machine.

The report names the project root, the interpreter, whether the agent
adapters are fresh, and every installed history provider: its distribution
and version, whether it detects a store for this project, every provider
that failed to load with its error, and every store a walk-up passed over
because another user owns it. Detection only: no provider is asked for
a brief. It exits 0 unless the CLI itself is broken; ``--json`` gives the
same facts for machines (and never a tip).
"""

from __future__ import annotations

import os
import sys

from karni.cli.errors import KarniError
from karni.cli.version import cli_version

__all__ = ["SUMMARY", "USAGE", "collect", "render_text", "run"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni.agent.history import Discovery

SUMMARY = "report the project, interpreter, agent adapters and history providers"

USAGE = "usage: karni doctor [-q/--quiet] [--json]"

HELP = f"""{USAGE}

Report what Karni sees: the project root, the interpreter, whether the agent
adapters are fresh, every installed history provider (distribution, version,
whether it detects a store for this project) and every provider that failed to
load. Providers are only asked to detect a store, never for a brief.

options:
  --json       print the same facts as JSON, for machines
  -q, --quiet  never print the one-time tip
  -h, --help   show this help and exit
"""

FLAGS = {"json": ("--json",), "quiet": ("-q", "--quiet"), "help": ("-h", "--help")}


def _adapters(root: str | None) -> dict[str, Any]:
    """Whether the agent adapters are fresh: status, stale files and any error."""
    if root is None:
        return {"status": "no-project", "stale": [], "error": None}
    try:
        from karni.cli.rules.adapters import find_stale
    except ImportError as error:
        return {
            "status": "unavailable",
            "stale": [],
            "error": f"cannot check agent adapters ({error}); reinstall karni-cli",
        }
    try:
        stale = list(find_stale(root))
    except KarniError as error:
        return {"status": "error", "stale": [], "error": str(error)}
    return {"status": "stale" if stale else "fresh", "stale": stale, "error": None}


def collect(root: str | None, discovery: Discovery) -> dict[str, Any]:
    """Every fact the report shows, as plain data (the ``--json`` document)."""
    from karni.agent.history import detect
    from karni.cli.distributions import is_third_party

    providers = []
    for installed in discovery.providers:
        providers.append(
            {
                "name": installed.name,
                "distribution": installed.distribution,
                "version": installed.version,
                "builtin": installed.builtin,
                "third_party": is_third_party(installed.distribution),
                "detects_store": None if root is None else detect(installed.provider, root),
            }
        )
    failures = [
        {
            "name": failure.name,
            "value": failure.value or None,
            "distribution": failure.distribution,
            "error": failure.message,
        }
        for failure in discovery.failures
    ]
    facts: dict[str, Any] = {
        "project": root,
        "interpreter": {
            "executable": sys.executable,
            "version": "{}.{}.{}".format(*sys.version_info[:3]),
        },
        "karni_cli_version": cli_version(),
        "adapters": _adapters(root),
        "hooks": _hooks(root),
        "history": {"providers": providers, "failures": failures},
    }
    ignored = _ignored_stores()
    if ignored:
        facts["history"]["ignored_stores"] = ignored
    return facts


def _ignored_stores() -> list[dict[str, str]]:
    """Stores a walk-up passed over because another user owns them (only when there are some)."""
    from karni.agent.common.ownership import ignored_folders
    from karni.agent.common.root import PROJECT_MARKERS

    return [
        {"folder": ignored.folder, "marker": ignored.marker, "reason": ignored.reason}
        for ignored in ignored_folders()
        if ignored.marker not in PROJECT_MARKERS
    ]


def _hooks(root: str | None) -> list[dict[str, Any]]:
    """Where the harness hooks are installed (see ``karni hooks status``)."""
    if root is None:
        return []
    from karni.cli.hooks.install import status

    return [row for row in status(root) if row["state"] != "absent"]


def _hooks_line(hooks: list[dict[str, Any]]) -> str:
    if not hooks:
        return "none installed (`karni hooks install --agent AGENT` switches them on)"
    parts = []
    for row in hooks:
        detail = row["error"] if row["state"] == "error" else row["state"]
        parts.append(f"{row['agent']} {row['scope']} ({detail})")
    return ", ".join(parts)


def _adapters_line(adapters: dict[str, Any]) -> str:
    status = adapters["status"]
    if status == "fresh":
        return "fresh"
    if status == "stale":
        return f"stale: {', '.join(adapters['stale'])}; run `karni rules sync`"
    if status == "no-project":
        return "not checked (no project)"
    return f"not checked: {adapters['error']}"


def render_text(facts: dict[str, Any], project_error: str | None = None) -> str:
    """The human-readable report."""
    interpreter = facts["interpreter"]
    lines = [
        f"project:     {facts['project'] or f'none ({project_error})'}",
        f"interpreter: {interpreter['executable']} (Python {interpreter['version']})",
        f"karni-cli:   {facts['karni_cli_version'] or 'unknown (no package metadata)'}",
        f"adapters:    {_adapters_line(facts['adapters'])}",
    ]
    if facts["project"]:
        lines.append(f"hooks:       {_hooks_line(facts['hooks'])}")
    providers = facts["history"]["providers"]
    failures = facts["history"]["failures"]
    if not providers:
        lines.append("history providers: none installed")
    else:
        lines.append("history providers:")
        rows = []
        for provider in providers:
            origin = " ".join(
                part for part in (provider["distribution"], provider["version"]) if part
            )
            notes = []
            if provider["builtin"]:
                notes.append("built in")
            elif provider["third_party"]:
                notes.append("third-party")
            if origin and notes:
                origin = f"{origin} ({', '.join(notes)})"
            detected = provider["detects_store"]
            store = "-" if detected is None else "store detected" if detected else "no store"
            rows.append((provider["name"], origin or "-", store))
        name_width = max(len(row[0]) for row in rows)
        origin_width = max(len(row[1]) for row in rows)
        for name, origin, store in rows:
            lines.append(f"  {name:<{name_width}}  {origin:<{origin_width}}  {store}")
    if failures:
        lines.append("history providers that failed to load:")
        for failure in failures:
            lines.append(f"  {failure['name']}: {failure['error']}")
    ignored = facts["history"].get("ignored_stores", [])
    if ignored:
        lines.append("stores ignored:")
        for store in ignored:
            lines.append(f"  {store['reason']}")
    from karni.agent.common.sanitize import one_line

    # Names, versions and errors come from installed packages and the file system.
    return "\n".join(one_line(line) for line in lines) + "\n"


def run(argv: list[str]) -> int:
    """Run ``karni doctor``."""
    from karni.cli.flags import parse_flags

    flags = parse_flags(argv, "karni doctor", FLAGS, USAGE)
    if flags["help"]:
        from karni.cli.helptext import write_help

        write_help(HELP)
        return 0
    from karni.agent.history import discover
    from karni.cli.errors import ProjectNotFoundError
    from karni.cli.project import find_project_root

    root: str | None
    project_error = None
    try:
        root = find_project_root()
    except ProjectNotFoundError:
        root = None
        project_error = f"no manage.py or karni.rules.py at or above {os.getcwd()}"
    discovery = discover()
    facts = collect(root, discovery)
    if flags["json"]:
        import json

        sys.stdout.write(json.dumps(facts, indent=2) + "\n")
        return 0
    sys.stdout.write(render_text(facts, project_error))
    sys.stdout.flush()
    if root is not None:
        from karni.cli.tip import offer_tip

        detected = [p["name"] for p in facts["history"]["providers"] if p["detects_store"]]
        offer_tip(root, sys.stdout, quiet=flags["quiet"], discovery=discovery, detected=detected)
    return 0
