"""A search query as FTS5 reads it, and the snippet of a hit with the matched words marked.

The index keeps no text (``store/search_sql.py``), so FTS5's own ``snippet()``
has nothing to cut from: the snippet is cut here, from the matched row's
text, with the words split and folded as the index's tokenizer does
(``unicode61 remove_diacritics 2``: runs of letters and digits, case and
accents ignored).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MARK", "fts_query", "query_terms", "snippet"]

MARK = "**"
"""What stands on both sides of a matched word in a snippet."""

_WORD = re.compile(r"[^\W_]+")
"""A token of the index's tokenizer: a run of letters and digits."""

_PIECES = re.compile(r'"(?:[^"]|"")*"?|[^\s"]+')
"""A query's pieces: a quoted phrase (maybe unterminated), or a run without spaces or quotes."""

_BAREWORD = re.compile(r"^\^?[(]*\^?[\w]+\*?[)]*$")
"""A piece FTS5 reads as it is: a word (an initial ``^``, a final ``*``) maybe in parentheses."""

_OPERATORS = frozenset({"AND", "OR", "NOT"})
_KEEP = re.compile(r"^(?:[(){}]+|\w+:|\{[\w ]*\}:?|NEAR\(.*|[+*^])$")
"""Pieces left as they are: brackets, a column filter, ``NEAR(``, a lone operator sign."""


def fts_query(query: str) -> str:
    """``query`` as FTS5 reads it: a word holding other characters (``models.py``) quoted.

    Phrases, operators (``AND``, ``OR``, ``NOT``, ``NEAR``), prefixes
    (``cap*``), column filters and brackets are left as they are, so a query
    FTS5 cannot read still fails, and says why.
    """
    out = []
    for piece in _PIECES.findall(query):
        if (
            piece.startswith('"')
            or piece in _OPERATORS
            or _BAREWORD.match(piece)
            or _KEEP.match(piece)
        ):
            out.append(piece)
            continue
        star = "*" if piece.endswith("*") and len(piece) > 1 else ""
        body = piece[:-1] if star else piece
        out.append('"' + body.replace('"', '""') + '"' + star)
    return " ".join(out)


def fold(word: str) -> str:
    """``word`` as the index compares it: case-folded, accents removed."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def query_terms(query: str) -> list[tuple[str, bool]]:
    """The words a query looks for, folded, each with whether it is a prefix (``cap*``)."""
    terms: list[tuple[str, bool]] = []
    for piece in _PIECES.findall(query):
        if piece in _OPERATORS or piece.startswith("NEAR(") or piece.endswith(":"):
            continue
        quoted = piece.startswith('"')
        words = _WORD.findall(piece)
        for index, word in enumerate(words):
            prefix = not quoted and index == len(words) - 1 and piece.rstrip(")").endswith("*")
            terms.append((fold(word), prefix))
    return terms


def snippet(text: str, terms: list[tuple[str, bool]], words: int = 24) -> str | None:
    """The ``words``-word stretch of ``text`` with the most matched words, each marked.

    One line; ``…`` where the text goes on. None when no word of ``text``
    matches (the match was elsewhere: another column, a stale index row).
    """
    tokens = list(_WORD.finditer(text))
    if not tokens:
        return None
    exact = {term for term, prefix in terms if not prefix}
    prefixes = tuple(term for term, prefix in terms if prefix)
    hits = [
        index
        for index, token in enumerate(tokens)
        if (folded := fold(token.group())) in exact or (prefixes and folded.startswith(prefixes))
    ]
    if not hits:
        return None
    first = _best_window(hits, words)
    last = min(len(tokens), first + words) - 1
    marked = set(hits)
    pieces = []
    cursor = tokens[first].start()
    for index in range(first, last + 1):
        token = tokens[index]
        pieces.append(text[cursor : token.start()])
        pieces.append(f"{MARK}{token.group()}{MARK}" if index in marked else token.group())
        cursor = token.end()
    line = " ".join("".join(pieces).split())
    head = "…" if first > 0 else ""
    tail = "…" if last < len(tokens) - 1 else ""
    return f"{head}{line}{tail}"


def _best_window(hits: list[int], words: int) -> int:
    """The first token of the ``words``-token window holding the most hits, a few words early."""
    best_low, best_high = 0, 0
    low = 0
    for high, position in enumerate(hits):
        while position - hits[low] >= words:
            low += 1
        if high - low > best_high - best_low:
            best_low, best_high = low, high
    slack = words - (hits[best_high] - hits[best_low] + 1)
    return max(0, hits[best_low] - min(4, slack))
