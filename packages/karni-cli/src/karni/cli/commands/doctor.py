"""``karni doctor [-v/--verbose] [-q/--quiet] [--json]``: what Karni sees, for a human or a machine.

The report names the project root, the interpreter, whether the agent
adapters are fresh, and every installed history provider: its distribution
and version, whether it detects a store for this project, every provider
that failed to load with its error, every note a provider has about its
store (a shared history file it skipped, a setting the project recommends),
and every store a walk-up passed over because another user owns it.
Detection only: no provider is asked for a brief. It exits 0 unless the
CLI itself is broken; ``--json`` gives the same facts for machines (and
never a tip). ``-v`` adds where things are and
how long each provider took: its entry point, load and detect times and the
store marker it was seen by, Karni's own folder and its cache folder.
"""

from __future__ import annotations

import os
import sys
import time

import karni.cli
from karni.agent.common.cache import cache_dir
from karni.agent.common.ownership import forget_ignored, ignored_folders
from karni.agent.common.root import PROJECT_MARKERS
from karni.agent.common.sanitize import one_line
from karni.agent.history import detect, discover
from karni.agent.history.compose import ended_detect
from karni.agent.history.discovery import ALLOW_LIST_VARIABLE, ended_call
from karni.agent.history.markers import store_marker
from karni.cli.distributions import is_third_party
from karni.cli.errors import KarniError, ProjectNotFoundError
from karni.cli.flags import parse_flags
from karni.cli.hooks.install import status
from karni.cli.hooks.mcp_servers import mcp_status
from karni.cli.project import find_project_root, found_below, projects_below
from karni.cli.tip import offer_tip
from karni.cli.version import cli_version

__all__ = ["SUMMARY", "USAGE", "collect", "render_text", "run"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni.agent.history import Discovery, InstalledProvider

SUMMARY = "report the project, interpreter, agent adapters and history providers"

USAGE = "usage: karni doctor [-v/--verbose] [-q/--quiet] [--json]"

HELP = f"""{USAGE}

Report what Karni sees: the project root, the interpreter, whether the agent
adapters are fresh, every installed history provider (distribution, version,
whether it detects a store for this project) and every provider that failed to
load. Providers are only asked to detect a store, never for a brief.

options:
  --json         print the same facts as JSON, for machines
  -v, --verbose  also show each provider's entry point, load and detect times
                 and store marker, Karni's folder and its cache folder
  -q, --quiet    never print the one-time tip
  -h, --help     show this help and exit
"""

FLAGS = {
    "json": ("--json",),
    "verbose": ("-v", "--verbose"),
    "quiet": ("-q", "--quiet"),
    "help": ("-h", "--help"),
}


def _adapters(root: str | None) -> dict[str, Any]:
    """Whether the agent adapters are fresh: status, missing and stale files, and any error."""
    if root is None:
        return {"status": "no-project", "stale": [], "missing": [], "error": None}
    try:
        from karni.cli.rules.adapters import missing_and_stale
    except ImportError as error:
        return {
            "status": "unavailable",
            "stale": [],
            "missing": [],
            "error": f"cannot check agent adapters ({error}); reinstall karni-cli",
        }
    try:
        missing, stale = missing_and_stale(root)
    except KarniError as error:
        return {"status": "error", "stale": [], "missing": [], "error": str(error)}
    status = "stale" if stale else "missing" if missing else "fresh"
    return {"status": status, "stale": stale, "missing": missing, "error": None}


def collect(root: str | None, discovery: Discovery, *, verbose: bool = False) -> dict[str, Any]:
    """Every fact the report shows, as plain data (the ``--json`` document).

    ``verbose`` adds the facts of ``karni doctor -v`` (see :func:`_verbose_facts`).
    """
    providers = []
    ended = []
    for installed in discovery.providers:
        row: dict[str, Any] = {
            "name": installed.name,
            "distribution": installed.distribution,
            "version": installed.version,
            "builtin": installed.builtin,
            "third_party": is_third_party(installed.distribution),
        }
        row.update(_detection(installed, root, verbose))
        failure = ended_call(installed, "detect", ended_detect(installed.provider))
        if failure is not None:  # its detect ended its process: no brief can come of it
            ended.append(failure)
            continue
        providers.append(row)
    failures = [
        {
            "name": failure.name,
            "value": failure.value or None,
            "distribution": failure.distribution,
            "error": failure.message,
        }
        for failure in sorted([*discovery.failures, *ended], key=lambda failure: failure.name)
    ]
    facts: dict[str, Any] = {
        "project": root,
        "interpreter": {
            "executable": sys.executable,
            "version": "{}.{}.{}".format(*sys.version_info[:3]),
        },
        "karni_cli_version": cli_version(),
        "adapters": _adapters(root),
        "settings": {"problems": _settings_problems(root)},
        "hooks": _hooks(root),
        "mcp_servers": _mcp(root),
        "history": {"providers": providers, "failures": failures},
    }
    ignored = _ignored_stores()
    if ignored:
        facts["history"]["ignored_stores"] = ignored
    if verbose:
        facts.update(_verbose_facts())
    return facts


def _settings_problems(root: str | None) -> list[str]:
    """Each configuration file (the project's, the user's) that cannot be read, and the fix.

    Only whether the files are readable TOML: ``karni check`` validates the values.
    """
    from karni.agent.common.config import project_config_path, read_config, user_config_path
    from karni.agent.common.errors import ConfigFileError

    paths = (
        [user_config_path()] if root is None else [project_config_path(root), user_config_path()]
    )
    problems = []
    for path in paths:
        try:
            read_config(path)
        except ConfigFileError as error:
            problems.append(str(error))
    return problems


def _detection(installed: InstalledProvider, root: str | None, verbose: bool) -> dict[str, Any]:
    """Whether the provider detects a store; with ``verbose``, also how it was found and timed."""
    started = time.perf_counter()
    detected = None if root is None else detect(installed.provider, root)
    found: dict[str, Any] = {"detects_store": detected, "store_problem": None, "notes": []}
    if detected and root is not None:
        # bench row "karni doctor" runs without it
        from karni.agent.history import doctor_notes, store_problem

        found["store_problem"] = store_problem(installed.provider, root)
        found["notes"] = doctor_notes(installed.provider, root)
    if verbose:
        load = installed.load_seconds
        found["entry_point"] = installed.value
        found["load_ms"] = None if load is None else round(load * 1000, 1)
        found["detect_ms"] = None if root is None else _milliseconds(started)
        found["store_marker"] = None if root is None else store_marker(installed.provider, root)
    return found


def _milliseconds(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _verbose_facts() -> dict[str, Any]:
    """Where Karni runs from and keeps its caches, and which providers it may load."""
    return {
        "karni_cli_path": os.path.dirname(os.path.abspath(karni.cli.__file__)),
        "cache_dir": cache_dir(),
        "allowed_providers": os.environ.get(ALLOW_LIST_VARIABLE),
    }


def _ignored_stores() -> list[dict[str, str]]:
    """Stores a walk-up passed over because another user owns them (only when there are some)."""
    return [
        {"folder": ignored.folder, "marker": ignored.marker, "reason": ignored.reason}
        for ignored in ignored_folders()
        if ignored.marker not in PROJECT_MARKERS
    ]


def _hooks(root: str | None) -> list[dict[str, Any]]:
    """Where the harness hooks are installed (see ``karni hooks status``)."""
    if root is None:
        return []

    return [row for row in status(root) if row["state"] not in ("absent", "unsupported")]


def _mcp(root: str | None) -> list[dict[str, Any]]:
    """Where karni-historian's MCP server is registered (see ``karni hooks status``)."""
    if root is None:
        return []
    return [row for row in mcp_status(root) if row["state"] != "absent"]


def _has_historian(facts: dict[str, Any]) -> bool:
    """Whether karni-historian is among the history providers (its MCP server can be set up)."""
    return any(p["name"] == "historian" for p in facts["history"]["providers"])


def _mcp_line(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "karni-historian's server not registered (`karni hooks install` registers it)"
    shown = [(row, row["error"] if row["state"] == "error" else row["state"]) for row in rows]
    return ", ".join(f"{row['agent']} {row['path']} ({detail})" for row, detail in shown)


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
    if status in ("stale", "missing"):
        parts = []
        if adapters["missing"]:
            parts.append(f"missing: {', '.join(adapters['missing'])}")
        if adapters["stale"]:
            parts.append(f"stale: {', '.join(adapters['stale'])}")
        return f"{'; '.join(parts)}; run `karni rules sync`"
    if status == "no-project":
        return "not checked (no project)"
    return f"not checked: {adapters['error']}"


def render_text(facts: dict[str, Any], project_error: str | None = None) -> str:
    """The human-readable report (with ``-v``'s details when ``facts`` hold them)."""
    interpreter = facts["interpreter"]
    lines = [
        f"project:     {facts['project'] or f'none ({project_error})'}",
        f"interpreter: {interpreter['executable']} (Python {interpreter['version']})",
        f"karni-cli:   {facts['karni_cli_version'] or 'unknown (no package metadata)'}",
    ]
    if "karni_cli_path" in facts:
        lines[-1] += f" in {facts['karni_cli_path']}"
        lines.append(f"cache:       {facts['cache_dir'] or 'off (KARNI_CACHE_DIR is empty)'}")
        if facts["allowed_providers"] is not None:
            lines.append(f"allowed:     KARNI_HISTORY_PROVIDERS={facts['allowed_providers']}")
    lines.append(f"adapters:    {_adapters_line(facts['adapters'])}")
    lines += [f"settings:    {problem}" for problem in facts["settings"]["problems"]]
    if facts["project"]:
        lines.append(f"hooks:       {_hooks_line(facts['hooks'])}")
        if facts["mcp_servers"] or _has_historian(facts):
            lines.append(f"mcp:         {_mcp_line(facts['mcp_servers'])}")
    lines += _provider_lines(facts["history"]["providers"])
    unusable = [p for p in facts["history"]["providers"] if p["store_problem"]]
    if unusable:
        lines.append("history stores that cannot be read:")
        lines += [f"  {p['name']}: {p['store_problem']}" for p in unusable]
    noted = [p for p in facts["history"]["providers"] if p.get("notes")]
    if noted:
        lines.append("history notes:")
        lines += [f"  {p['name']}: {note}" for p in noted for note in p["notes"]]
    failures = facts["history"]["failures"]
    if failures:
        lines.append("history providers that failed to load:")
        for failure in failures:
            lines.append(f"  {failure['name']}: {failure['error']}")
    ignored = facts["history"].get("ignored_stores", [])
    if ignored:
        lines.append("stores ignored:")
        for store in ignored:
            lines.append(f"  {store['reason']}")

    # Names, versions and errors come from installed packages and the file system.
    return "\n".join(one_line(line) for line in lines) + "\n"


def _provider_lines(providers: list[dict[str, Any]]) -> list[str]:
    """One aligned row per provider; with ``-v``, an indented line of details under each."""
    if not providers:
        return ["history providers: none installed"]
    rows = [
        (p["name"], _origin(p) or "-", _store_text(p["detects_store"], p["store_problem"]))
        for p in providers
    ]
    name_width = max(len(row[0]) for row in rows)
    origin_width = max(len(row[1]) for row in rows)
    lines = ["history providers:"]
    for (name, origin, store), provider in zip(rows, providers, strict=True):
        lines.append(f"  {name:<{name_width}}  {origin:<{origin_width}}  {store}")
        if "entry_point" in provider:
            lines.append(f"      {_details(provider)}")
    return lines


def _origin(provider: dict[str, Any]) -> str:
    origin = " ".join(part for part in (provider["distribution"], provider["version"]) if part)
    notes = []
    if provider["builtin"]:
        notes.append("built in")
    elif provider["third_party"]:
        notes.append("third-party")
    return f"{origin} ({', '.join(notes)})" if origin and notes else origin


def _store_text(detected: bool | None, problem: str | None = None) -> str:
    if problem:
        return "store detected, cannot be read (below)"
    return "-" if detected is None else "store detected" if detected else "no store"


def _details(provider: dict[str, Any]) -> str:
    """``-v``'s line under a provider: entry point, times and the store marker seen."""
    parts = [f"entry point {provider['entry_point']}"]
    if provider["load_ms"] is not None:
        parts.append(f"loaded in {provider['load_ms']:.1f} ms")
    if provider["detect_ms"] is not None:
        parts.append(f"detect {provider['detect_ms']:.1f} ms")
    if provider["store_marker"] is not None:
        parts.append(f"store marker {provider['store_marker']}")
    return "; ".join(parts)


def run(argv: list[str]) -> int:
    """Run ``karni doctor``."""
    flags = parse_flags(argv, "karni doctor", FLAGS, USAGE)
    if flags["help"]:
        # bench row "karni doctor" runs without it
        from karni.cli.helptext import write_help

        write_help(HELP)
        return 0

    forget_ignored()  # a fresh report: only the folders this run passed over
    root: str | None
    project_error = None
    try:
        root = find_project_root()
    except ProjectNotFoundError:
        root = None
        here = os.getcwd()
        project_error = f"no manage.py or karni.rules.py at or above {here}"
        below = projects_below(here)
        if below:
            project_error += f"; {found_below(below)}"
    discovery = discover()
    facts = collect(root, discovery, verbose=flags["verbose"])
    if flags["json"]:
        # bench row "karni doctor" runs without it
        import json

        sys.stdout.write(json.dumps(facts, indent=2) + "\n")
        return 0
    sys.stdout.write(render_text(facts, project_error))
    sys.stdout.flush()
    if root is not None:
        detected = [p["name"] for p in facts["history"]["providers"] if p["detects_store"]]
        offer_tip(root, sys.stdout, quiet=flags["quiet"], discovery=discovery, detected=detected)
    return 0
