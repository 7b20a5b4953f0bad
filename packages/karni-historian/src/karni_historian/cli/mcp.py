"""``karni-historian mcp``: serve the project's history to MCP clients over stdio."""

from __future__ import annotations

from karni_historian.cli.common import CliError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]

_SDK = frozenset({"mcp", "pydantic", "pydantic_core", "anyio"})
"""The MCP SDK and what it brings: missing, the ``mcp`` extra is not installed."""


def run(args: argparse.Namespace, root: str) -> int:
    """Serve until the client closes stdin; 1 when the MCP SDK is not installed."""
    try:
        from karni_historian.mcp_server.app import serve
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in _SDK:
            raise
        raise CliError(
            "the MCP server needs the MCP Python SDK; install karni-historian with its mcp "
            "extra: `pip install 'karni-historian[mcp]'` (or `pipx inject karni-historian mcp`)"
        ) from None
    serve(root)
    return 0
