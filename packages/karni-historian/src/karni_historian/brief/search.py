"""Searching the project's history: the query module ``search`` and the MCP server share.

:func:`search` runs a query through the store's full-text index
(:mod:`karni_historian.store.search`) and turns each match into a
:class:`SearchHit`: what it is, which session and messages, when, a title, a
one-line snippet with the matched words marked, and the exact ``expand``
command that shows it in full. ``docs/how-to/search-and-mcp.md`` describes
the query language and the ranking.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from karni.agent.common.sanitize import clean_field, clean_line

from karni_historian.brief.snippets import fts_query, query_terms, snippet
from karni_historian.errors import QueryError
from karni_historian.store.codec import parts_from_json
from karni_historian.store.schema import SEARCH_VERSION
from karni_historian.store.search import SearchFilters
from karni_historian.store.search_sql import KIND_COMPARTMENT, KIND_FACT, KIND_MESSAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.store import Store
    from karni_historian.store.search import SearchMatch

__all__ = [
    "COMMON_WORDS",
    "LOCAL_AUTHOR",
    "MAX_LIMIT",
    "SearchFilters",
    "SearchHit",
    "SearchResult",
    "any_words",
    "author_filter",
    "check_since",
    "expand_command",
    "search",
]

LOCAL_AUTHOR = "you"
"""The author of the sessions recorded on this machine (they have no author of their own)."""

MAX_LIMIT = 200
"""The most hits one search returns."""

PROG = "karni-historian"

_SINCE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?$")
_QUERY_ERRORS = ("fts5:", "unterminated string", "no such column", "unknown special query")


COMMON_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "ever",
    ]
)
"""Words too common to search for when a plain query falls back to any of its words."""

_PLAIN = re.compile(r"^[\w\s'’?!.,;-]+$")
"""A query of plain words: no quotes, brackets, prefixes or column filters."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result.

    Attributes:
        kind: ``compartment``, ``fact``, ``prompt`` (the user's), ``reply``
            (the assistant's text), ``tool`` (a tool call matched, with
            ``--tools``) or ``message`` (any other role).
        session_id: The session, when known (a fact may have none).
        start: The first message of the hit's range.
        end: The last message of the hit's range.
        date: The hit's date (``YYYY-MM-DD``), when known.
        author: Who ran the session: :data:`LOCAL_AUTHOR` for local sessions.
        title: The compartment's title, the fact's category, or for a
            message the title of the compartment holding it (else the session's).
        snippet: One line of the matched text, each matched word between ``**``.
        expand: The ``karni-historian expand`` command that shows the hit in
            full; None when the hit has no message range.
        score: The rank (lower is better): BM25 times the recency factor.
    """

    kind: str
    session_id: str | None
    start: int | None
    end: int | None
    date: str | None
    author: str
    title: str
    snippet: str
    expand: str | None
    score: float

    def as_json(self) -> dict[str, object]:
        """The hit as the stable JSON object of ``search --json``."""
        return {
            "kind": self.kind,
            "session": self.session_id,
            "start": self.start,
            "end": self.end,
            "date": self.date,
            "author": self.author,
            "title": self.title,
            "snippet": self.snippet,
            "expand": self.expand,
            "score": round(self.score, 6),
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search found.

    Attributes:
        hits: The hits, best first.
        any_word: No row held every word, so these hold any of them.
    """

    hits: list[SearchHit]
    any_word: bool = False


def any_words(query: str) -> str | None:
    """The FTS5 query for rows holding any uncommon word of a plain ``query``; None otherwise."""
    if not _PLAIN.match(query) or {"AND", "OR", "NOT"} & set(query.split()):
        return None
    words = dict.fromkeys(
        w for w in re.findall(r"[^\W_]+", query.casefold()) if w not in COMMON_WORDS
    )
    if len(words) < 2:
        return None
    return " OR ".join(f'"{word}"' for word in words)


def check_since(since: str) -> str:
    """``since`` when it is a date (``YYYY-MM-DD``, maybe with a time); else a QueryError."""
    text = since.strip()
    if not _SINCE.match(text):
        raise QueryError(f"--since {since!r} is not a date; give YYYY-MM-DD (or YYYY-MM-DDTHH:MM)")
    return text.replace(" ", "T")


def expand_command(session_id: str | None, start: int | None, end: int | None) -> str | None:
    """The ``expand`` command that shows messages ``start`` to ``end`` of the session in full."""
    if session_id is None or start is None or end is None:
        return None
    if start == end:
        return f"{PROG} expand --session {session_id} --message {start}"
    return f"{PROG} expand --session {session_id} {start} {end}"


def search(store: Store, query: str, filters: SearchFilters, limit: int = 10) -> SearchResult:
    """The best ``limit`` hits of ``query`` in the project's history, best first.

    Words match in any order, each in the same row. When no row holds every
    word of a query of plain words (no quotes, operators, prefixes or
    filters), rows holding any of them are searched instead, common words
    (:data:`COMMON_WORDS`) left out, and the result says so.

    Raises:
        QueryError: The query is empty, or FTS5 cannot read it (the message
            says why); ``limit`` is out of range.
    """
    if not query.strip():
        raise QueryError("the query is empty; give one or more words to look for")
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"--limit {limit} is out of range; give 1 to {MAX_LIMIT}")
    if store.schema_version < SEARCH_VERSION:  # an older store, opened read-only as it is
        raise QueryError("the store has no search index yet; run `karni-historian ingest` once")
    matches = _matches(store, query, fts_query(query), filters, limit)
    words = None if matches else any_words(query)
    if words is not None:
        matches = _matches(store, query, words, filters, limit)
    terms = query_terms(query if words is None else words)
    return SearchResult(_hits(store, matches, terms, filters.tools), words is not None)


def _matches(
    store: Store, query: str, match: str, filters: SearchFilters, limit: int
) -> list[SearchMatch]:
    """The store's matches of the FTS5 query ``match`` (read from ``query``)."""
    if not filters.tools:
        match = f"{{title body}} : ({match})"
    try:
        return store.search_matches(match, filters, limit)
    except sqlite3.OperationalError as error:
        if not str(error).startswith(_QUERY_ERRORS):
            raise
        reason = _unreadable(fts_query(query)) or str(error)
        reason = reason.replace('near ""', "at its end")
        raise QueryError(
            f'cannot read the query {query!r}: {reason}; quote a phrase as "…", end a '
            f"prefix with *, join words with AND, OR, NOT"
        ) from None


def _unreadable(match: str) -> str | None:
    """Why FTS5 cannot read ``match`` on its own (not wrapped in a column filter), or None."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE q USING fts5(title, body, tools)")
        probe.execute("SELECT rowid FROM q WHERE q MATCH ?", (match,)).fetchall()
    except sqlite3.OperationalError as error:
        return str(error)
    finally:
        probe.close()
    return None


def _hits(
    store: Store, matches: Sequence[SearchMatch], terms: list[tuple[str, bool]], tools: bool
) -> list[SearchHit]:
    """The hits of ``matches``: their text read back for titles and snippets."""
    ids = {kind: [m.row_id for m in matches if m.kind == kind] for kind in range(3)}
    compartments = store.compartment_texts(ids[KIND_COMPARTMENT])
    facts = store.fact_texts(ids[KIND_FACT])
    messages = store.message_parts(ids[KIND_MESSAGE])
    hits = []
    for found in matches:
        start, end = found.start, found.end
        if found.kind == KIND_COMPARTMENT:
            title, text = compartments.get(found.row_id, ("", ""))
            kind, cut = "compartment", snippet(text, terms) or snippet(title, terms)
        elif found.kind == KIND_FACT:
            title, text, span = facts.get(found.row_id, ("", "", None))
            kind, cut = "fact", snippet(text, terms) or snippet(title, terms)
            start, end = span if span is not None else (None, None)
        else:
            kind, cut = _message_snippet(found, messages.get(found.row_id, "[]"), terms, tools)
            title = _message_title(store, found)
        hits.append(
            SearchHit(
                kind=kind,
                session_id=found.session_id,
                start=start,
                end=end,
                date=found.timestamp[:10] if found.timestamp else None,
                author=clean_field(found.author) if found.author else LOCAL_AUTHOR,
                title=clean_field(title),
                snippet=clean_line(cut) if cut else "",
                expand=expand_command(found.session_id, start, end),
                score=found.score,
            )
        )
    return hits


def _message_title(store: Store, found: SearchMatch) -> str:
    """A message's title: its compartment's, else its session's, else empty."""
    if found.session_id is None or found.start is None:
        return ""
    return store.covering_title(found.session_id, found.start) or ""


def _message_snippet(
    found: SearchMatch, parts_json: str, terms: list[tuple[str, bool]], tools: bool
) -> tuple[str, str | None]:
    """A message hit's kind and snippet: from its text, else (with ``tools``) its tool calls."""
    texts, calls = [], []
    for part in parts_from_json(parts_json):
        if hasattr(part, "text"):
            if not part.ignored:
                texts.append(part.text)
        elif tools:
            calls.append(f"{part.name} {part.input} {part.output or ''}")
    kind = {"user": "prompt", "assistant": "reply"}.get(found.role or "", "message")
    cut = snippet("\n".join(texts), terms)
    if cut is None and calls:
        kind, cut = "tool", snippet("\n".join(calls), terms)
    return kind, cut


def author_filter(filters: SearchFilters, name: str, root: str) -> None:
    """Set ``filters`` to keep the sessions of ``name``: an author, or the local user.

    Local sessions have no author; ``name`` names the local user when it is
    :data:`LOCAL_AUTHOR` or the ``user.name`` git has for the project.
    """
    filters.author = name.strip()
    folded = filters.author.casefold()
    filters.local = folded == LOCAL_AUTHOR or folded == (_git_user(root) or "").casefold()


def _git_user(root: str) -> str | None:
    """The ``user.name`` git has for the project at ``root``, when git is there and has one."""
    # bench row "karni-historian search QUERY (100,000 compartments, 1,000,000 messages)"
    # runs without it: only --author asks
    import subprocess

    try:
        done = subprocess.run(
            ["git", "config", "user.name"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name = done.stdout.strip()
    return name if done.returncode == 0 and name else None
