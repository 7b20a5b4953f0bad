"""``karni-historian search``: full-text search of the project's history."""

from __future__ import annotations

import json
import sys

from karni.agent.common.paths import project_relative

from karni_historian.brief.search import (
    SearchFilters,
    author_filter,
    check_since,
    search,
)
from karni_historian.cli.common import PROG, CliError, open_store, positive, session_of
from karni_historian.errors import QueryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from karni_historian.brief.search import SearchHit

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print the hits of the query, best first (or ``--json``); the exit code."""
    query = " ".join(args.query)
    limit = positive(args.limit, "--limit")
    filters = SearchFilters(tools=args.tools)
    try:
        if args.since is not None:
            filters.since = check_since(args.since)
        if args.author is not None:
            author_filter(filters, args.author, root)
    except QueryError as error:
        raise CliError(str(error), 2) from None
    if args.file is not None:
        filters.path = project_relative(root, args.file)
        if filters.path is None:
            raise CliError(f"{args.file} lies outside the project {root}; pass a path inside it", 2)
    with open_store(root) as store:
        if args.session is not None:
            filters.session_id = session_of(store, args.session)
        try:
            found = search(store, query, filters, limit)
        except QueryError as error:
            raise CliError(str(error), 2) from None
    hits = found.hits
    if args.json:
        matched = "any" if found.any_word else "all"
        shape = {"query": query, "matched": matched, "hits": [hit.as_json() for hit in hits]}
        print(json.dumps(shape, indent=2))
        return 0
    if not hits:
        print(f"{PROG}: no history matches {query!r}", file=sys.stderr)
        return 0
    if found.any_word:
        print(f"{PROG}: no history holds every word; these hold some of them", file=sys.stderr)
    for hit in hits:
        print(_hit_lines(hit))
    return 0


def _hit_lines(hit: SearchHit) -> str:
    """A hit as three lines: where and what, the snippet, the expand command."""
    span = (
        ""
        if hit.start is None
        else f" {hit.start}"
        if hit.start == hit.end
        else f" {hit.start}-{hit.end}"
    )
    head = (
        f"{hit.session_id or '-'}{span}  {hit.date or '-'}  {hit.author}  {hit.kind}"
        f"  {hit.title or 'untitled'}"
    )
    lines = [head, f"    {hit.snippet}" if hit.snippet else "    (no snippet)"]
    if hit.expand:
        lines.append(f"    {hit.expand}")
    return "\n".join(lines)
