"""``karni-historian mcp``: serve the project's history to MCP clients over stdio."""

from __future__ import annotations

from karni_historian.cli.common import PROG, CliError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]

_SDK = frozenset({"mcp", "pydantic", "pydantic_core", "anyio"})
"""The MCP SDK and what it brings: missing, the ``mcp`` extra is not installed."""


def run(args: argparse.Namespace, root: str) -> int:
    """Serve until the client closes stdin (``--check``: only load); 1 without the MCP SDK."""
    try:
        from karni_historian.mcp_server.app import serve
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in _SDK:
            raise
        raise CliError(
            "the MCP server needs the MCP Python SDK; install karni-historian with its mcp "
            "extra: `pip install 'karni-historian[mcp]'` beside karni, or "
            "`scripts/install 'karni-historian[mcp]'` in a clone of Karni"
        ) from None
    if args.check:
        print(f"{PROG} mcp: the MCP SDK is installed; the server is ready to start")
        return 0
    serve(root)
    return 0
