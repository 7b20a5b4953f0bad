"""The MCP server of ``karni-historian mcp``: the project's history, pulled on demand.

:mod:`~karni_historian.mcp_server.tools` answers (plain functions, no SDK);
:mod:`~karni_historian.mcp_server.app` serves them over stdio with the
official MCP Python SDK (the ``mcp`` extra). ``docs/how-to/search-and-mcp.md``
describes the tools.
"""
