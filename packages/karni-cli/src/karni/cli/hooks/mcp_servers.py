"""Registering the historian's MCP server where a harness reads a project's MCP servers.

``karni hooks install`` for Claude Code or OpenCode also registers
``karni-historian mcp`` (a read-only server of the project's history) when
karni-historian is installed with its ``mcp`` extra (``karni-historian mcp
--check`` says so), and ``uninstall`` removes exactly that entry:

- Claude Code: ``.mcp.json`` at the project root, ``mcpServers`` →
  ``{"command": "karni-historian", "args": ["mcp"]}``
  (https://code.claude.com/docs/en/mcp, project scope);
- OpenCode: ``opencode.json`` at the project root, ``mcp`` →
  ``{"type": "local", "command": ["karni-historian", "mcp"], "enabled": true}``
  (https://opencode.ai/docs/mcp-servers).

The entry names no path: the harness starts it in the project, and the file
may be shared with a team. Pi has no MCP. The user's other servers and keys
are kept; a file holding comments is refused rather than rewritten without
them; nothing is written through a link. See ``docs/how-to/search-and-mcp.md``.
"""

from __future__ import annotations

import os

from karni.agent.common.jsontext import loads
from karni.cli.hooks.claude_settings import dump
from karni.cli.hooks.install import HooksError, _read, _refuse_links, _shown, _write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MCP_AGENTS", "SERVER_NAME", "mcp_status", "register", "unregister"]

SERVER_NAME = HISTORIAN = "karni-historian"
"""The name Karni's server is registered under, and the command that serves it."""

OPENCODE_SCHEMA = "https://opencode.ai/config.json"

MCP_AGENTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "claude-code": (".mcp.json", "mcpServers", {"command": HISTORIAN, "args": ["mcp"]}),
    "opencode": (
        "opencode.json",
        "mcp",
        {"type": "local", "command": [HISTORIAN, "mcp"], "enabled": True},
    ),
}
"""Per harness with MCP: its project file, the key holding the servers, Karni's entry."""


def _config(root: str, path: str) -> tuple[str, dict[str, Any]]:
    """The file's text and its JSON object (empty when there is no file)."""
    _refuse_links(root, path)
    text = _read(path) or ""
    if not text.strip():
        return text, {}
    try:
        config = loads(text)
    except (ValueError, RecursionError) as error:
        why = (
            "it holds comments, which Karni would lose by rewriting it"
            if "//" in text
            else (f"not valid JSON ({error})")
        )
        raise HooksError(
            f"cannot parse {_shown(root, path)}: {why}; add the MCP server by hand "
            f"(docs/how-to/search-and-mcp.md) or fix the file"
        ) from None
    if not isinstance(config, dict):
        raise HooksError(f"{_shown(root, path)} is not a JSON object; fix it and run again")
    return text, config


def _servers(root: str, path: str, config: dict[str, Any], key: str) -> dict[str, Any]:
    servers = config.get(key, {})
    if not isinstance(servers, dict):
        raise HooksError(f"{_shown(root, path)}: `{key}` is not an object; fix it and run again")
    return servers


def register(root: str, agent: str, scope: str) -> str | None:
    """Register the server for ``agent`` in the project; the line to print, or None.

    None when the harness has no MCP, the hooks go to the user's folder
    (``--scope user``: the server is the project's), or karni-historian is
    not installed.

    Raises:
        HooksError: A link on the way, an unreadable file, or another server of that name.
    """
    if agent not in MCP_AGENTS or scope == "user":
        return None
    # bench row "karni doctor" runs without it (subprocess and fcntl): only install asks
    from karni.cli.hooks.historian import find_historian

    historian = find_historian()
    if historian is None:
        return None
    missing = _without_sdk(historian)
    if missing is not None:
        return f"{agent} MCP server {SERVER_NAME} not registered: {missing}"
    name, key, entry = MCP_AGENTS[agent]
    path = os.path.join(root, name)
    text, config = _config(root, path)
    servers = _servers(root, path, config, key)
    shown = _shown(root, path)
    if servers.get(SERVER_NAME) == entry:
        return f"{agent} MCP server {SERVER_NAME} already registered in {shown}"
    if SERVER_NAME in servers:
        raise HooksError(
            f"{shown} already has an MCP server named {SERVER_NAME} that Karni did not write; "
            f"remove or rename it and run again"
        )
    if not config and agent == "opencode":
        config["$schema"] = OPENCODE_SCHEMA
    config[key] = {**servers, SERVER_NAME: entry}
    _write(root, path, dump(config, text))
    return f"{agent} MCP server {SERVER_NAME} registered in {shown}"


def _without_sdk(historian: str) -> str | None:
    """Why ``historian mcp`` cannot serve (its ``--check`` fails), or None when it can."""
    # bench row "karni doctor" runs without it: only install asks
    import subprocess

    try:
        done = subprocess.run(
            [historian, "mcp", "--check"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"`{HISTORIAN} mcp --check` could not run ({error})"
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    why = lines[-1] if lines else f"`{HISTORIAN} mcp --check` exited {done.returncode}"
    return why.removeprefix(f"{HISTORIAN}: ")


def unregister(root: str, agent: str, scope: str) -> str | None:
    """Remove exactly the entry :func:`register` wrote; the line to print, or None.

    Raises:
        HooksError: A link on the way or an unreadable file.
    """
    if agent not in MCP_AGENTS or scope == "user":
        return None
    name, key, entry = MCP_AGENTS[agent]
    path = os.path.join(root, name)
    text, config = _config(root, path)
    servers = _servers(root, path, config, key)
    if servers.get(SERVER_NAME) != entry:
        return None
    rest = {server: value for server, value in servers.items() if server != SERVER_NAME}
    if rest:
        config[key] = rest
    else:
        del config[key]
    shown = _shown(root, path)
    if not config or config == {"$schema": OPENCODE_SCHEMA}:
        try:
            os.unlink(path)
        except OSError as error:
            raise HooksError(f"cannot remove {shown}: {error}") from None
    else:
        _write(root, path, dump(config, text))
    return f"{agent} MCP server {SERVER_NAME} removed from {shown}"


def mcp_status(root: str) -> list[dict[str, Any]]:
    """Per harness with MCP: where its server would be registered, and what is there.

    ``state`` is ``registered`` (Karni's entry), ``other`` (a server of that
    name Karni did not write), ``absent``, or ``error`` (with ``error``).
    """
    rows = []
    for agent, (name, key, entry) in MCP_AGENTS.items():
        path = os.path.join(root, name)
        row: dict[str, Any] = {"agent": agent, "path": _shown(root, path), "error": None}
        try:
            _text, config = _config(root, path)
            found = _servers(root, path, config, key).get(SERVER_NAME)
        except HooksError as error:
            row.update(state="error", error=str(error))
        else:
            row["state"] = (
                "absent" if found is None else "registered" if found == entry else "other"
            )
        rows.append(row)
    return rows
