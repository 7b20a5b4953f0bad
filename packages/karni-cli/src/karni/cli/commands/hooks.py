"""``karni hooks install|uninstall|status``: switch the harness hooks on and off.

A thin command: it parses the options and calls :mod:`karni.cli.hooks.install`,
which knows where each harness keeps its hooks. See ``docs/hooks.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys

from karni.cli.errors import UsageError
from karni.cli.helptext import write_help
from karni.cli.hooks import install
from karni.cli.hooks.events import AGENTS
from karni.cli.hooks.install import HOOKLESS, SCOPES
from karni.cli.hooks.mcp_servers import mcp_status, register, unregister
from karni.cli.hooks.respond import BEFORE_EDIT_MODES, CONTEXT
from karni.cli.options import parser
from karni.cli.project import find_project_root

__all__ = ["SUMMARY", "USAGE", "parse_args", "render_status", "run"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUMMARY = "install, remove or show the hooks that brief agents before every edit"

USAGE = (
    "usage: karni hooks install|uninstall|status [--agent claude-code|opencode|pi|codex|gemini] "
    "[--scope local|project|user] [--before-edit context|block-first] [--share] [--json]"
)

HELP = f"""{USAGE}

Hooks make a coding agent's harness run Karni by itself: before the first edit
of a file in a session the agent gets the file's history brief; at session
start, the project-level brief; after a session, karni-historian (when
installed) ingests the transcript in the background. For Claude Code and
OpenCode, install also registers karni-historian's MCP server (when
karni-historian is installed with its mcp extra) in .mcp.json or
opencode.json, so the agent can search the project's history itself;
uninstall removes that entry.

commands:
  install    merge Karni's hooks into the harness's settings (idempotent)
  uninstall  remove exactly what install added
  status     where the hooks of every harness are installed, and the MCP server

options:
  --agent AGENT        claude-code, opencode, pi, codex or gemini (aider has no
                       hooks: `karni-historian ingest` reads its sessions)
  --scope SCOPE        local (Claude Code's .claude/settings.local.json, its default),
                       project (.claude/settings.json, .opencode/plugins/,
                       .pi/extensions/, .codex/hooks.json, .gemini/settings.json:
                       the default for the others) or user
  --before-edit MODE   context: add the brief to what the model reads (default);
                       block-first: deny the first edit of a file with history,
                       the brief as the reason, so the agent reconsiders with it
  --share              at the end of a session, also run `karni-historian share
                       --auto`: your condensed session is written to
                       .karni/history/ for you to commit, only when your own
                       settings opt the project in (historian.share)
  --json               status as JSON
  -h, --help           show this help and exit
"""


def parse_args(argv: list[str]) -> dict[str, Any]:
    """The command and its options.

    Raises:
        UsageError: A missing or unknown command, option or value.
    """
    hooks = parser("karni hooks", USAGE)
    hooks.add_argument("command", nargs="?", choices=("install", "uninstall", "status"))
    hooks.add_argument("--agent", choices=(*AGENTS, *HOOKLESS))
    hooks.add_argument("--scope", choices=SCOPES)
    hooks.add_argument("--before-edit", dest="before_edit", choices=BEFORE_EDIT_MODES)
    hooks.add_argument("--share", action="store_true")
    hooks.add_argument("--json", action="store_true")
    hooks.add_argument("-h", "--help", action="store_true")
    try:
        options = vars(hooks.parse_args(argv))
    except argparse.ArgumentError as error:
        hooks.error(str(error))
    options["before_edit"] = options["before_edit"] or CONTEXT
    if options["help"]:
        return options
    if options["command"] is None:
        raise UsageError(f"`karni hooks` needs install, uninstall or status; {USAGE}")
    if options["command"] != "status" and options["agent"] is None:
        raise UsageError(f"`karni hooks {options['command']}` needs --agent; {USAGE}")
    return options


def render_status(rows: list[dict[str, Any]]) -> str:
    """The status table for humans: one line per agent and scope."""
    lines = []
    for row in rows:
        state = row["state"]
        if state in ("installed", "partial"):
            state = f"{state} (before an edit: {row['before_edit']})"
        elif state == "error":
            state = f"error: {row['error']}"
        elif state == "unsupported":
            lines.append(f"  {row['agent']:<11} no hooks: {row['error']}")
            continue
        else:
            state = "not installed"
        lines.append(f"  {row['agent']:<11} {row['scope']:<7} {row['path']}: {state}")
    return "\n".join(lines) + "\n"


def render_mcp(rows: list[dict[str, Any]]) -> str:
    """Where karni-historian's MCP server is registered, one line per harness with MCP."""
    states = {
        "registered": "registered",
        "absent": "not registered",
        "other": "another server of that name (not Karni's)",
    }
    lines = [
        f"  {row['agent']:<11} {row['path']}: "
        + (f"error: {row['error']}" if row["state"] == "error" else states[row["state"]])
        for row in rows
    ]
    return "\n".join(["karni-historian MCP server (pi has no MCP):", *lines]) + "\n"


def _path_warning() -> str | None:
    """A warning when the harnesses cannot start ``karni`` by name, else None."""
    if shutil.which("karni") is not None:
        return None
    return "warning: `karni` is not on PATH, so the harness cannot run the hooks; put it there"


def run(argv: list[str]) -> int:
    """Run ``karni hooks``."""
    options = parse_args(argv)
    if options["help"]:
        write_help(HELP)
        return 0

    root = find_project_root()
    agent: str = options["agent"] or ""
    scope: str = options["scope"] or install.DEFAULT_SCOPES.get(agent, "")
    warning = _path_warning()
    if options["command"] == "status":
        rows = install.status(root)
        if options["json"]:
            facts = {
                "project": root,
                "karni_on_path": warning is None,
                "hooks": rows,
                "mcp_servers": mcp_status(root),
            }
            sys.stdout.write(json.dumps(facts, indent=2) + "\n")
            return 0
        sys.stdout.write(f"hooks of {root}:\n" + render_status(rows) + render_mcp(mcp_status(root)))
    elif options["command"] == "install":
        print(install.install(root, agent, scope, options["before_edit"], options["share"]))
        _also(register(root, agent, scope))
    else:
        print(install.uninstall(root, agent, scope))
        _also(unregister(root, agent, scope))
    if warning is not None:
        print(f"karni: {warning}", file=sys.stderr)
    return 0


def _also(line: str | None) -> None:
    """Print what the MCP registration did, when it did anything."""
    if line is not None:
        print(line)
