"""Sentences worth keeping from an agent's words: no filler, no markdown, no machine paths.

Agents narrate ("Let me read the file.", "Now I'll run the tests."), format
for a terminal (headings, quotes, bullets, bold) and name files by absolute
paths of their own machine. A later agent needs none of that, so the built-in
historian (``docs/historian/blocks.md``) cleans each sentence before it keeps
it: markdown markers go, absolute paths shrink to the file name, and
narration that carries no decision, result or failure is dropped.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["clean_sentence", "is_filler", "rules_out"]

_RE: dict[str, Any] = {}
_MARKER_STARTS = frozenset("#>*+-|[")
"""The first characters of the markdown markers (and digits, of a numbered item)."""


def _re(name: str) -> Any:
    if not _RE:
        _RE["markers"] = re.compile(r"^(?:[#>*+\-|]+\s*|\d+[.)]\s+|\[[ xX]\]\s*)+")
        _RE["emphasis"] = re.compile(r"\*\*|__|`{3,}\w*")
        # A path starts at a ~ or / not preceded by [\w.]; the look back comes after
        # that first character so that the search skips to each ~ and / directly.
        _RE["path"] = re.compile(r"[~/](?<![\w.][~/])(?:[\w.@+-]+/)+([\w.@+-]+)")
        _RE["filler"] = re.compile(
            r"^(?:let me|let's|i'll|i will|i'm going to|i am going to|now,? (?:let|i)|"
            r"now\b|next,? (?:let|i)|first,? (?:let|i)|ok(?:ay)?\b|great\b|perfect\b|good\b|"
            r"excellent\b|sure\b|alright\b|got it\b|understood\b)",
            re.I,
        )
        _RE["keeps"] = re.compile(
            r"\b(decid\w*|instead|because|fail\w*|error|revert\w*|broke\w*|commit\w*|"
            r"passe[sd]|passing)\b",
            re.I,
        )
    return _RE[name]


def clean_sentence(sentence: str) -> str:
    """``sentence`` without markdown markers, with absolute paths shown by file name."""
    text = sentence.strip()
    if text[:1] in _MARKER_STARTS or text[:1].isdecimal():  # how every marker starts
        text = _re("markers").sub("", text)
    if "**" in text or "__" in text or "```" in text:  # what every emphasis match holds
        text = _re("emphasis").sub("", text)
    if "/" in text and ("~" in text or text.count("/") > 1):  # what every path it shortens has
        text = _re("path").sub(r"\1", text)
    text = " ".join(text.split()).rstrip(" :;,")
    return text if text[:1].isalnum() or any(map(str.isalnum, text)) else ""


_FILLER_STARTS = frozenset("lLiInNfFoOgGpPeEsSaAuU\u0130\u0131\u017f")
"""The first letters of the filler openings, as the pattern matches them ignoring case."""


_KEEP_LITERALS = (
    "decid",
    "instead",
    "because",
    "fail",
    "error",
    "revert",
    "broke",
    "commit",
    "pass",
)
"""What lower-cased ASCII text holds when the ``keeps`` pattern matches it."""


def is_filler(sentence: str) -> bool:
    """Whether ``sentence`` is narration: "Let me…", "I'll…", "Now…" with nothing to keep."""
    if sentence[:1] not in _FILLER_STARTS or not _re("filler").match(sentence):
        return False  # the first letter opens no filler, or the words do not
    return rules_out(sentence, _KEEP_LITERALS) or not _re("keeps").search(sentence)


def rules_out(text: str, literals: tuple[str, ...]) -> bool:
    """Whether ``text`` is ASCII and, lower-cased, holds none of ``literals``.

    A case-insensitive pattern each match of which holds one of them (in
    lower-cased ASCII text) cannot match it then: no need to search.
    """
    if not text.isascii():
        return False
    lowered = text.lower()
    for literal in literals:  # noqa: SIM110 (a loop costs less than a generator)
        if literal in lowered:
            return False
    return True
