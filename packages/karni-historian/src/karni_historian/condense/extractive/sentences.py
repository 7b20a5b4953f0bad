"""How the built-in historian reads sentences: its patterns, and what each asks of a text.

A sentence is asked whether it decides, prohibits, sets a rule, a setting or
a name, reports a result, or corrects (``docs/historian/validation.md``); the
patterns are compiled on first use, and a cheaper look for a literal each
match contains runs first. User turns that only acknowledge ("ok", "thanks")
or continue ("also…", "no, …") are told apart here too.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "COMPILED",
    "any_user_signal",
    "cap",
    "classifiable",
    "clause",
    "has",
    "is_ack",
    "opens_as_continuation",
    "split_sentences",
    "words_of",
]

_ACKS = frozenset(
    [
        "ok",
        "okay",
        "k",
        "y",
        "yes",
        "yep",
        "yeah",
        "sure",
        "thanks",
        "thank",
        "you",
        "thx",
        "continue",
        "go",
        "on",
        "go",
        "ahead",
        "proceed",
        "do",
        "it",
        "lgtm",
        "looks",
        "good",
        "great",
        "good",
        "perfect",
        "nice",
        "right",
        "correct",
        "fine",
        "cool",
        "done",
    ]
)
_CONTINUATIONS = (
    "also",
    "and",
    "then",
    "but",
    "plus",
    "additionally",
    "one more",
    "what about",
    "why",
    "no",
    "not",
    "nope",
    "actually",
    "instead",
    "wait",
    "hmm",
    "try again",
    "still",
    "same",
    "that",
    "this",
    "it",
    "commit",
    "push",
    "merge",
    "open a pr",
    "ship it",
)
_CONTINUATION_WORDS = frozenset(_CONTINUATIONS)
_CONTINUATION_PREFIXES = tuple(c + " " for c in _CONTINUATIONS)
_LEADING_ACK = ("ok", "okay", "yes", "yep", "great", "good", "thanks", "perfect", "nice", "cool")

_I = 2  # re.IGNORECASE, without importing re at module load
_PATTERNS: dict[str, tuple[str, int]] = {
    "words": (r"[a-z0-9']+", _I),
    "polite": (
        r"^(?:please|pls|ok(?:ay)?,?|so,?|hey,?|now,?|next,?|also,?|can you|could you|"
        r"would you|will you|i want you to|i'd like you to|i need you to|let's|lets|"
        r"we need to|we should|i want to|help me(?: to)?)\s+",
        _I,
    ),
    "decision": (
        r"\b(decid(?:e|ed|ing)|decision|we(?:'ll| will) (?:use|go with|keep)|going with|"
        r"let's (?:use|go with|keep|switch)|switch(?:ed)? to|instead of|chose|"
        r"opt(?:ed)? for|settled on|agreed)\b",
        _I,
    ),
    "prohibit": (
        r"\b(never|must not|mustn't|do not|don't|cannot|can't|should not|shouldn't|"
        r"not allowed|forbidden|avoid)\b",
        _I,
    ),
    "rule": (r"\b(always|from now on|every time|make sure)\b", _I),
    "soft_rule": (r"\b(must|required)\b", _I),
    "revert": (r"\b(revert(?:ed|ing|s)?|roll(?:ed)? ?back|undo|undid|back(?:ed)? out)\b", _I),
    "fix": (r"\b(fix(?:ed|es|ing)?|bug|error|fail(?:s|ed|ing|ure)?|broken|crash(?:es|ed)?)\b", _I),
    "config": (
        r"\b(timeout|port|limit|max(?:imum)?|min(?:imum)?|default|threshold|retries|"
        r"interval|ttl|version|budget)\b",
        _I,
    ),
    "value": (r"\d|=|:\s*\S", 0),
    "naming": (
        r"\b(naming|named? (?:after|in|using|like)|(?:should|must) be (?:called|named)|"
        r"are (?:called|named)|call (?:them|these|those|every|each|all)|"
        r"(?:prefix|suffix)(?:ed|es)? (?:with|by)|snake_case|camel_?case|kebab-case|"
        r"pascal_?case|upper_case)\b",
        _I,
    ),
    "test": (r"\b(pytest|tests?|spec)\b", _I),
    "correction": (r"^(?:no|not|nope|actually|instead|wait|but|don't|do not)\b", _I),
    "result": (
        r"\b(changed|added|fixed|implemented|created|updated|removed|froze|wrote|moved|"
        r"renamed|replaced|refactored|reverted|passes|passing|works|now)\b",
        _I,
    ),
    "progress": (
        r"^(?:i|i'll|i will|i'm|i've|i have|let me|let's|now|next|first|then|done|"
        r"ok(?:ay)?|great|perfect|sure)\b",
        _I,
    ),
    "undo_command": (r"\bgit\s+(?:revert|restore|checkout\s+--|reset\s+--hard|stash)\b", 0),
    "failed_run": (r"\b\d+ (?:failed|errors?)\b|\bFAILED\b|\bTraceback\b", 0),
    "lead": (r"^(?:no|nope|ok(?:ay)?|also|and|so|but|well|yes|right|actually)\b[,:]?\s+", _I),
    "sentence_end": (r"(?<=[.!?]) ", 0),
    "opinion": (
        r"^(?:hm+,?\s+|ok(?:ay)?,?\s+|well,?\s+)*i (?:do ?n[o']?t |don't )?(?:think|tink|guess|"
        r"believe|understand|know|wonder|suppose|see|feel)\b",
        _I,
    ),
}
"""The sentence patterns the extractive historian reads with, compiled on first use."""

_WORD_PATTERNS = frozenset(
    (
        "decision",
        "prohibit",
        "rule",
        "soft_rule",
        "revert",
        "fix",
        "config",
        "naming",
        "test",
        "result",
        "user_signal",
    )
)
"""The case-insensitive patterns written in lower case, only ever asked whether they match."""

_LITERALS: dict[str, tuple[str, ...]] = {
    "decision": (
        "agreed", "chose", "decid", "decision", "going with", "instead of", "let's ", "opt",
        "settled on", "switch", "we will ", "we'll ",
    ),
    "prohibit": (
        "avoid", "can't", "cannot", "do not", "don't", "forbidden", "must", "never",
        "not allowed", "should",
    ),
    "rule": ("always", "every time", "from now on", "make sure"),
    "soft_rule": ("must", "required"),
    "revert": ("back", "revert", "roll", "undid", "undo"),
    "fix": ("broken", "bug", "crash", "error", "fail", "fix"),
    "config": (
        "budget", "default", "interval", "limit", "max", "min", "port", "retries", "threshold",
        "timeout", "ttl", "version",
    ),
    "naming": (
        "are called", "are named", "be called", "be named", "call ", "camel", "kebab-case", "nam",
        "pascal", "prefix", "snake_case", "suffix", "upper_case",
    ),
    "test": ("spec", "test"),
    "result": (
        "added", "changed", "created", "fixed", "froze", "implemented", "moved", "now", "pass",
        "refactored", "removed", "renamed", "replaced", "reverted", "updated", "works", "wrote",
    ),
}  # fmt: skip
"""Per word pattern, strings one of which every match contains (in lower-cased ASCII text).

Looking for them is cheaper than the search, which runs only when one is
there; the tests derive each pattern's literal prefixes to check the lists.
"""

_USER_SIGNALS = ("decision", "prohibit", "rule", "soft_rule", "config", "naming")
"""What a user's sentence is asked about; :func:`any_user_signal` asks all at once."""
_PATTERNS["user_signal"] = ("|".join(f"(?:{_PATTERNS[n][0]})" for n in _USER_SIGNALS), _I)
_LITERALS["user_signal"] = tuple(dict.fromkeys(w for n in _USER_SIGNALS for w in _LITERALS[n]))


class _Patterns:
    """:data:`_PATTERNS` as attributes, each compiled on first use and kept on the instance.

    With ``case_sensitive`` the flags leave out ``re.IGNORECASE``: what
    :func:`has` searches lower-cased ASCII text with.
    """

    def __init__(self, *, case_sensitive: bool = False) -> None:
        self._case_sensitive = case_sensitive

    def __getattr__(self, name: str) -> Any:
        source, flags = _PATTERNS[name]
        if self._case_sensitive:
            flags &= ~re.IGNORECASE
        pattern = re.compile(source, flags)
        setattr(self, name, pattern)
        return pattern


COMPILED = _Patterns()
_LOWER_P = _Patterns(case_sensitive=True)


def has(name: str, text: str) -> bool:
    """Whether ``text`` carries the pattern ``name`` (one of :data:`_WORD_PATTERNS`).

    ASCII text is lower-cased and searched without ``re.IGNORECASE``: for
    these lower-case patterns the same answer, several times faster; and
    only when it holds one of the pattern's :data:`_LITERALS`.
    """
    if text.isascii():
        lowered = text.lower()
        for literal in _LITERALS[name]:
            if literal in lowered:
                return getattr(_LOWER_P, name).search(lowered) is not None
        return False
    return getattr(COMPILED, name).search(text) is not None


def any_user_signal(text: str) -> bool:
    """Whether any of :data:`_USER_SIGNALS` matches ``text``: one search, not six.

    A search for alternatives finds a match exactly when one of them would.
    """
    return has("user_signal", text)


def clause(sentence: str, pattern: str) -> str:
    """The part of ``sentence`` after a leading ``request: `` that carries ``pattern`` (a name).

    "Revert the change in cart.py: we decided pricing must stay separate" is a
    request followed by the durable reason; only the reason is a fact.
    """
    head, colon, tail = sentence.partition(": ")
    if colon and has(pattern, tail) and not has(pattern, head) and len(words_of(tail)) >= 4:
        return tail[:1].upper() + tail[1:]
    return sentence


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, whitespace collapsed.

    A sentence ends at a line break, and at the whitespace after a ``.``,
    ``!`` or ``?``: after a word that ends with one of them.
    """
    split: Callable[[str], list[str]] = COMPILED.sentence_end.split
    if "\n" not in text:  # one line: the loop below, once
        collapsed = " ".join(text.split())
        if ". " in collapsed or "! " in collapsed or "? " in collapsed:
            return split(collapsed)
        return [collapsed] if collapsed else []
    out: list[str] = []
    for line in text.split("\n"):
        collapsed = " ".join(line.split())
        if ". " in collapsed or "! " in collapsed or "? " in collapsed:
            out += split(collapsed)  # words are single-spaced: end at a space after . ! ?
        elif collapsed:
            out.append(collapsed)
    return out


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, at a space when one is near, ending with ``…``."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


_WORDS: dict[str, tuple[str, ...]] = {}
"""Sentences already split into words: each is asked about several times per episode."""

_WORDS_LIMIT = 4096


def words_of(text: str) -> tuple[str, ...]:
    """The lower-cased words of ``text`` (remembered: each sentence is asked several times)."""
    words = _WORDS.get(text)
    if words is None:
        if len(_WORDS) >= _WORDS_LIMIT:
            _WORDS.clear()
        if text.isascii():  # lower-cased first: the same words (as for has)
            words = tuple(_LOWER_P.words.findall(text.lower()))
        else:
            words = tuple(w.lower() for w in COMPILED.words.findall(text))
        _WORDS[text] = words
    return words


def classifiable(sentence: str) -> bool:
    """Whether a sentence may carry a decision, a rule or a setting: no question, no fragment."""
    return not (sentence.endswith("?") or len(words_of(sentence)) < 4 or len(sentence) > 220)


def is_ack(text: str) -> bool:
    """Whether ``text`` only acknowledges ("ok", "thanks", "go ahead"): four words at most."""
    words = words_of(text)
    if not words or len(words) > 4:
        return False
    return all(w in _ACKS for w in words) or " ".join(words) in _ACKS


def opens_as_continuation(text: str) -> bool:
    """Whether ``text`` (past leading acknowledgements) opens with a continuation."""
    words = words_of(text)
    while len(words) > 1 and words[0] in _LEADING_ACK:
        words = words[1:]
    # The continuations have at most three words: four tell as much as all of them.
    lowered = " ".join(words[:4])
    return lowered in _CONTINUATION_WORDS or lowered.startswith(_CONTINUATION_PREFIXES)
