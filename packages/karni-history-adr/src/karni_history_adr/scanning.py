r"""The small text patterns of a decision record, read without regular expressions.

``import re`` brings in ``enum``, ``functools`` and ``collections``, and
compiling the record patterns costs as much again: together more than the
rest of a brief, which Karni asks for before every edit. Each function here
reads one shape by hand, with the meaning the docstring gives in regular
expression syntax (``\d`` any decimal digit, ``\w`` any letter, digit or
underscore, ``\s`` any whitespace, as Python's ``re`` reads them in text).
"""

from __future__ import annotations

__all__ = [
    "first_reference",
    "first_word",
    "header_field",
    "heading_text",
    "iso_date",
    "link_targets",
    "name_number",
    "title_number",
    "title_text",
]

_RECORD_EXTENSIONS = (".md", ".markdown")
_NAME_SEPARATORS = "-_ ."
_PREFIX_SEPARATORS = "-_ #"
_NUMBER_ENDINGS = ".:)-\u2013\u2014"  # . : ) - – —
_FIELDS = ("status", "date")
_MAX_DIGITS = 6


def _is_word(char: str) -> bool:
    r"""``\w``: a letter, a digit or an underscore."""
    return char.isalnum() or char == "_"


def _digits_end(text: str, start: int) -> int:
    """Where the run of decimal digits starting at ``start`` ends."""
    end = start
    while end < len(text) and text[end].isdecimal():
        end += 1
    return end


def _number(digits: str) -> int | None:
    r"""``0*(\d{1,6})`` over a whole run of digits: its value, or None when too long."""
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) <= _MAX_DIGITS else None


def _skip_prefix(text: str, start: int) -> int:
    """After ``adr[-_ #]*`` at ``start`` (any case); ``start`` itself without one."""
    if text[start : start + 3].lower() != "adr":
        return start
    end = start + 3
    while end < len(text) and text[end] in _PREFIX_SEPARATORS:
        end += 1
    return end


def name_number(name: str) -> int | None:
    r"""``^(?:adr[-_ ]?)?(\d{1,6})(?:[-_ .].*)?\.(?:md|markdown)$`` (any case): the number.

    A name starting with a date (``\d{4}-\d{2}-\d{2}[-_]``) has none.
    """
    if iso_date(name[:10]) is not None and name[10:11] in ("-", "_"):
        return None
    start = 0
    if name[:3].lower() == "adr":
        start = 4 if name[3:4] in ("-", "_", " ") else 3
    end = _digits_end(name, start)
    if end == start or end - start > _MAX_DIGITS:
        return None
    rest = name[end:].lower()
    if rest not in _RECORD_EXTENSIONS and not (
        rest[:1] in tuple(_NAME_SEPARATORS) and rest[1:].endswith(_RECORD_EXTENSIONS)
    ):
        return None
    return int(name[start:end])


def title_text(line: str) -> str | None:
    r"""``^#(?!#)\s*(.*?)\s*#*\s*$``: the text of a ``# Title`` line, or None."""
    if not line.startswith("#") or line.startswith("##"):
        return None
    return _heading_body(line[1:])


def heading_text(line: str) -> str | None:
    r"""``^#{1,6}\s*(.*?)\s*#*\s*$``: the text of a heading of any level, or None."""
    if not line.startswith("#"):
        return None
    level = min(len(line) - len(line.lstrip("#")), 6)
    return _heading_body(line[level:])


def _heading_body(rest: str) -> str:
    r"""``\s*(.*?)\s*#*\s*$``: the text without surrounding space and closing ``#``s."""
    return rest.strip().rstrip("#").rstrip()


def title_number(title: str) -> tuple[int, int] | None:
    r"""``^(?:adr[-_ #]*)?0*(\d{1,6})\s*(?:[.:)\-–—]\s*|\s+)`` (any case).

    Returns:
        The number and where the title proper starts, or None.
    """
    for start in dict.fromkeys((_skip_prefix(title, 0), 0)):
        found = _numbered_start(title, start)
        if found is not None:
            return found
    return None


def _numbered_start(title: str, start: int) -> tuple[int, int] | None:
    end = _digits_end(title, start)
    number = _number(title[start:end]) if end > start else None
    if number is None:
        return None
    after_space = len(title) - len(title[end:].lstrip())
    if title[after_space : after_space + 1] in tuple(_NUMBER_ENDINGS):
        return number, len(title) - len(title[after_space + 1 :].lstrip())
    return (number, after_space) if after_space > end else None


def header_field(line: str) -> tuple[str, str] | None:
    r"""``^\s*(?:[*+-]\s+)?(?:\*\*|__)?(status|date)(?:\*\*|__)?\s*:\s*(.*)$`` (any case).

    Returns:
        The field's name in lower case and its value (leading space removed), or None.
    """
    text = line.lstrip()
    if text[:1] in ("*", "+", "-") and text[1:2].isspace():
        text = text[1:].lstrip()
    text = text[2:] if text.startswith(("**", "__")) else text
    for name in _FIELDS:
        if text[: len(name)].lower() == name:
            rest = text[len(name) :]
            rest = rest[2:] if rest.startswith(("**", "__")) else rest
            rest = rest.lstrip()
            if rest.startswith(":"):
                return name, rest[1:].lstrip()
    return None


def iso_date(text: str) -> tuple[str, str, str] | None:
    r"""The first ``\b(\d{4})-(\d{2})-(\d{2})\b`` in ``text``: year, month, day."""
    for start in range(len(text) - 9):
        if start and _is_word(text[start - 1]):
            continue
        candidate = text[start : start + 10]
        parts = candidate.split("-")
        if (
            [len(part) for part in parts] == [4, 2, 2]
            and all(part.isdecimal() for part in parts)
            and not (start + 10 < len(text) and _is_word(text[start + 10]))
        ):
            return parts[0], parts[1], parts[2]
    return None


def link_targets(text: str) -> list[str]:
    r"""Every ``\]\(\s*<?([^)>\s]+)`` in ``text``: the targets of Markdown links."""
    targets = []
    position = text.find("](")
    while position != -1:
        start = len(text) - len(text[position + 2 :].lstrip())
        end = _target_end(text, start + 1) if text[start : start + 1] == "<" else start
        if text[start : start + 1] == "<" and end > start + 1:
            start += 1
        elif end == start:
            end = _target_end(text, start)
        if end > start:
            targets.append(text[start:end])
            position = text.find("](", end)
        else:
            position = text.find("](", position + 1)
    return targets


def _target_end(text: str, start: int) -> int:
    """Where the run of characters other than ``)``, ``>`` and whitespace ends."""
    end = start
    while end < len(text) and text[end] not in ")>" and not text[end].isspace():
        end += 1
    return end


def first_reference(text: str) -> int | None:
    r"""The number of the first ``(?:adr[-_ #]*)?\b0*(\d{1,6})\b`` (any case) in ``text``."""
    start = 0
    while start < len(text):
        if text[start].isdecimal() and not (start and _is_word(text[start - 1])):
            end = _digits_end(text, start)
            number = _number(text[start:end])
            if number is not None and not (end < len(text) and _is_word(text[end])):
                return number
            start = end
        start += 1
    return None


def first_word(line: str) -> str | None:
    """The first run of ``[a-z]`` letters in ``line`` lower-cased, or None."""
    word: list[str] = []
    for char in line.lower():
        if "a" <= char <= "z":
            word.append(char)
        elif word:
            break
    return "".join(word) or None
