"""The MCP server over stdio, on the official MCP Python SDK's ``MCPServer``.

Four read-only tools over one project's history, each described for the model
that calls it (when to use it, what it returns); the answers come from
:mod:`karni_historian.mcp_server.tools` (imported as ``answers``). A failure
the tools anticipate (a bad id, a query FTS5 cannot read, a path outside the
project) is a tool error result with one line saying why; arguments of the
wrong type are refused by the SDK the same way. Nothing is printed on stdout but the protocol.
"""

from __future__ import annotations

import sqlite3
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from karni_historian.errors import HistorianError
from karni_historian.mcp_server import tools as answers
from karni_historian.store.database import failure_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["INSTRUCTIONS", "build_server", "serve"]

INSTRUCTIONS = (
    "The history of this project's coding-agent sessions: what was asked, tried, decided and "
    "reverted, condensed into episodes, with the project's promoted facts. Start with "
    "search_history or timeline (compact: ids, dates, titles, one-line snippets), or "
    "file_history before changing a file; then get_history on the few ids worth reading. "
    "Every answer ends with its size in tokens."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

SEARCH = (
    "Search the project's past sessions by words: episodes, promoted facts, the user's "
    "prompts, the assistant's replies (tool output with tools=true). Use it for questions "
    "like 'did we ever try Redis?' or 'why is capacity nullable?'. Words all match by "
    'default; "a phrase", prefix*, OR and NOT work. Returns one line per hit: an id '
    "(SESSION:START-END), date, kind, title and a snippet with **matched** words; pass ids "
    "to get_history for the full text."
)
FILE = (
    "The history brief of one file (or folder) of this project: what shaped it (the requests "
    "that edited it, with lines added and removed), what was tried, decided or reverted "
    "there, and rules to respect. Use it before changing a file you have not worked on in "
    "this session. budget: tokens (default 1500, up to 20000) for a longer brief."
)
GET = (
    "The full text of history items by id, as search_history and timeline list them: "
    "SESSION:START-END (an episode's whole paraphrase; with raw=true, the messages "
    "themselves) or SESSION:N (one message in full). Use it only on the few ids worth "
    "reading; at most 10 per call."
)
TIMELINE = (
    "What happened around a date (YYYY-MM-DD: the sessions active then and their episodes, "
    "days before and after) or around a message (SESSION:N: that session's episodes before "
    "and after it). Use it for 'what did the agent do yesterday?' or to see what came "
    "before and after a search hit."
)


def build_server(root: str) -> MCPServer:
    """The server of the project at ``root``: its four tools, nothing else."""
    server: MCPServer = MCPServer("karni-historian", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(description=SEARCH, annotations=_READ_ONLY)
    def search_history(
        query: Annotated[str, Field(description="the words to look for")],
        file: Annotated[
            str | None, Field(description="only history that touched this path")
        ] = None,
        session: Annotated[
            str | None, Field(description="only this session (id or prefix)")
        ] = None,
        since: Annotated[
            str | None, Field(description="only from this date on (YYYY-MM-DD)")
        ] = None,
        author: Annotated[str | None, Field(description="only this author's sessions")] = None,
        limit: Annotated[int, Field(description="at most this many hits", ge=1, le=50)] = 10,
        tools: Annotated[bool, Field(description="match tool inputs and outputs too")] = False,
    ) -> str:
        return _answer(
            lambda: answers.search_history(
                root, query, file=file, session=session, since=since, author=author,
                limit=limit, tools=tools,
            )
        )  # fmt: skip

    @server.tool(description=FILE, annotations=_READ_ONLY)
    def file_history(
        path: Annotated[str, Field(description="a file or folder of this project")],
        budget: Annotated[int | None, Field(description="tokens, 100 to 20000")] = None,
    ) -> str:
        return _answer(lambda: answers.file_history(root, path, budget))

    @server.tool(description=GET, annotations=_READ_ONLY)
    def get_history(
        ids: Annotated[list[str], Field(description="ids such as 9c2f41d7:12-30 or 9c2f41d7:12")],
        raw: Annotated[
            bool, Field(description="an episode's messages, not its paraphrase")
        ] = False,
    ) -> str:
        return _answer(lambda: answers.get_history(root, ids, raw))

    @server.tool(description=TIMELINE, annotations=_READ_ONLY)
    def timeline(
        around: Annotated[str, Field(description="a date YYYY-MM-DD or a message SESSION:N")],
        days: Annotated[int, Field(description="days before and after a date", ge=0, le=60)] = 3,
        limit: Annotated[int, Field(description="at most this many episodes", ge=1, le=100)] = 20,
    ) -> str:
        return _answer(lambda: answers.timeline(root, around, days, limit))

    return server


def _answer(compute: Callable[[], str]) -> str:
    """``compute()``'s answer; an anticipated failure as a tool error of one line."""
    try:
        return compute()
    except HistorianError as error:
        raise ToolError(answers.clean(str(error))) from None
    except sqlite3.Error as error:
        raise ToolError(answers.clean(_store_failure(error))) from None


def _store_failure(error: sqlite3.Error) -> str:
    """The one line a store failure is told in; an index not built yet says how to build it."""
    if "no such table: search_index" in str(error):
        return "the store has no search index yet; run `karni-historian ingest` once"
    return failure_line(".", error)


def serve(root: str) -> None:
    """Serve the project at ``root`` over stdio until the client closes the connection."""
    build_server(root).run("stdio")
