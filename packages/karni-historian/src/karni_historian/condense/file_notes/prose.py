"""Sentences worth keeping from what the user and the agent wrote, and how to cut them.

A file's notes quote people and agents. Agents write markdown for a terminal
(headings, bullets, bold, fenced code) and narrate what they are about to do
("Let me check…", "Now I'll…"); users paste terminal output into their
prompts. This module turns such text into clean, whole units (a bullet or a
sentence each), tells narration, questions and words addressed to the user
apart from statements, and shortens a unit without cutting a word or a
backticked name in two (``docs/historian/file-notes.md``).
"""

from __future__ import annotations

import re

__all__ = [
    "addresses_user",
    "clean_unit",
    "in_project_terms",
    "is_narration",
    "is_question",
    "is_statement",
    "units",
    "without_code_blocks",
    "word_count",
]

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_MARKERS = re.compile(r"^\s*(?:[-*+•>]\s+|\d+[.)]\s+|\[[ xX]\]\s+)+")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)")
_EMOJI = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff\u2705\u274c\u2b50\ufe0f]")
_INTERJECTION = re.compile(
    r"^(?:(?:perfect|great|excellent|good|nice|done|awesome|alright|all right|ok(?:ay)?|sure|"
    r"got it|understood|right|yes|ah|hmm|oh|so|now|also|finally|first|next|then|well)"
    r"(?:[!.,:]+|\s*-)?(?:\s+|$)|you'?re (?:absolutely |totally )?right[!.,]?\s*)+",
    re.I,
)
_NARRATION = re.compile(
    r"^(?:let me|let's|let us|i apologi[sz]e|(?:i'm |i am )?sorry|my apologies|it seems|"
    r"i (?:now )?(?:have|'ve got) a (?:good|clear|better|full) (?:understanding|picture|view)|"
    r"(?:now )?i understand|"
    r"i'll|i will|i'm going to|i am going to|i need to|i should|"
    r"i want to|i can see|i can|i see|i notice|i found|looking at|checking|now let|next,? let|"
    r"time to|we need to|we should|here's (?:what|the)|this (?:will|should) (?:now )?(?:help|"
    r"allow)|to (?:do|fix) this|(?:update|add|fix|check|run|create|remove|make|use|change|"
    r"replace|verify|test|build|rebuild|look|find|read|write|edit|move|rename|install|try|"
    r"start|stop|kill|see|wrap|implement|refactor|delete|clean|ensure|update|also)\s+(?:the|a|"
    r"an|it|this|that|these|those|them|all|each|every|our|its|out|up|in|to|if|for|with|"
    r"`)\b)",
    re.I,
)
_CLAIM = re.compile(
    r"\b(?:should now|will now|should (?:be|look) (?:fixed|working|good|fine|exactly)|exactly like|"
    r"looks? like|i bet|might be|may be|probably|seems? to|appears? to)\b|^(?:and|but|or)\b",
    re.I,
)
_TO_USER = re.compile(
    r"\b(?:let me know|you can|you could|you might|you'll|you should|try (?:it|this|running)|"
    r"test it|do you|would you|want me to|should i|shall i|feel free|if you want|if you'd)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z`\"'(\[*_])|。")
_ABSOLUTE = re.compile(r"(?<![\w.~/-])(?:~/|/)(?:[\w.@+-]+/)*[\w.@+-]+/?")
_WIDE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def without_code_blocks(text: str) -> str:
    """``text`` without fenced code blocks (an unclosed fence runs to the end)."""
    return _FENCE.sub(" ", text) if "```" in text else text


def _split_sentences(line: str) -> list[str]:
    """``line`` cut after ``.``, ``!`` or ``?`` before a capital, outside backticks and brackets."""
    if not _SENTENCE_END.search(line):
        return [line.strip()] if line.strip() else []
    pieces: list[str] = []
    start = depth = 0
    ticks = False
    for index, char in enumerate(line):
        if char == "`":
            ticks = not ticks
        elif not ticks and char in "([{":
            depth += 1
        elif not ticks and char in ")]}" and depth:
            depth -= 1
        elif not ticks and not depth and char in ".!?。" and _SENTENCE_END.match(line, index):
            before = line[max(0, index - 4) : index].lower()
            if before.endswith(("e.g", "i.e", "etc", " vs")) or line[start:index].strip().isdigit():
                continue
            pieces.append(line[start : index + 1])
            start = index + 1
    pieces.append(line[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


_UNITS: dict[str, tuple[str, ...]] = {}
"""Each text's units: the agent's words are read again for every file an attempt edited."""


def units(text: str) -> list[str]:
    """The bullets and sentences of ``text``, cleaned, in order; headings and code dropped."""
    found = _UNITS.get(text)
    if found is None:
        if len(_UNITS) >= 4096:
            _UNITS.clear()
        found = _UNITS[text] = tuple(_units(text))
    return list(found)


def _units(text: str) -> list[str]:
    found: list[str] = []
    for line in without_code_blocks(text).splitlines():
        if not line.strip() or _HEADING.match(line):
            continue
        for sentence in _split_sentences(line):
            cleaned = clean_unit(sentence)
            if cleaned:
                found.append(cleaned)
    return found


def clean_unit(text: str) -> str:
    """One unit without markdown markers, emphasis, emoji or opening interjections."""
    text = _MARKERS.sub("", text.strip())
    if "*" in text or "__" in text:
        text = _EMPHASIS.sub("", text)
    text = _EMOJI.sub("", text)
    text = _INTERJECTION.sub("", " ".join(text.split()))
    text = text.strip(" :;,-")
    if not any(char.isalnum() for char in text):
        return ""
    return text[:1].upper() + text[1:] if text[:1].islower() and not text.startswith("`") else text


def word_count(text: str) -> int:
    """Words in ``text``; in Chinese, Japanese or Korean text, about one per three characters."""
    wide = len(_WIDE.findall(text))
    return len(text.split()) + wide // 3


def in_project_terms(text: str, root: str) -> str:
    """``text`` with absolute paths inside ``root`` made project-relative and others cut to a name.

    A path outside the project tells a later reader nothing and names
    someone's machine, so only its last part stays.
    """
    if "/" not in text and "~" not in text:
        return text
    prefix = root.rstrip("/") + "/"

    def replace(match: re.Match[str]) -> str:
        path = match.group(0)
        if path.startswith(prefix):
            return path[len(prefix) :] or "."
        if path.rstrip("/") == root.rstrip("/"):
            return "the project"
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return name if "." in name[1:] or path.count("/") > 1 else path

    return _ABSOLUTE.sub(replace, text)


def is_statement(unit: str) -> bool:
    """Whether an agent's ``unit`` states what is so or was done.

    Not narration of what it is about to do, not a question, not words to the
    user, not a guess or a promise ("this should now work", "probably").
    """
    return not (
        _CLAIM.search(unit) or is_narration(unit) or is_question(unit) or addresses_user(unit)
    )


def is_narration(unit: str) -> bool:
    """Whether ``unit`` announces what the agent is about to do, rather than what is so."""
    return bool(_NARRATION.match(_INTERJECTION.sub("", unit.strip())))


def is_question(unit: str) -> bool:
    """Whether ``unit`` asks something."""
    return unit.rstrip(" )").endswith("?")


def addresses_user(unit: str) -> bool:
    """Whether ``unit`` talks to the user (advice, offers, questions) rather than about the code."""
    return bool(_TO_USER.search(unit))
