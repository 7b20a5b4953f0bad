"""The hand-written readers of karni_history_adr.scanning against the patterns they replace.

Each reader's docstring gives its meaning as a regular expression; these
tests hold them to it over a few thousand generated lines built from the
characters that matter (digits, ``#``, separators, link brackets, spaces,
letters, a non-ASCII digit and space).
"""

from __future__ import annotations

import random
import re

import pytest
from karni_history_adr import scanning

ALPHABET = [*"0123456789#-_ .:)*+<>[]()/aAdDrRsStTuUeE\t", "\u2013", "\u0663", "\u00a0", "é"]
WORDS = [
    "adr",
    "ADR",
    "status",
    "Status",
    "date",
    "**",
    "__",
    "](",
    ".md",
    ".markdown",
    "2024-01-31",
]


def _samples(count: int, seed: int) -> list[str]:
    chooser = random.Random(seed)
    samples = []
    for _ in range(count):
        parts = []
        for _ in range(chooser.randint(0, 8)):
            if chooser.random() < 0.35:
                parts.append(chooser.choice(WORDS))
            else:
                parts.append("".join(chooser.choices(ALPHABET, k=chooser.randint(1, 4))))
        samples.append("".join(parts))
    return samples


SAMPLES = [
    *_samples(4000, 18),
    "0001-use-x.md",
    "adr-0007-use-x.md",
    "ADR_12_use_x.markdown",
    "README.md",
    "0001-use-x.txt",
    "2024-01-01-notes.md",
    "1234567-x.md",
    "0001.MD",
    "adr0003.md",
    "0004-.md",
    "05 x.md",
    "# 1. Title",
    "# ADR-0004: Soft-delete events #",
    "## Status",
    "####### deep",
    "#",
    "# C#",
    "* Status: accepted",
    "- **Date:** 2024-01-31",
    "__status__ : x",
    "Date:2024-1-31",
    "Superseded by [5. Title](0005-title.md)",
    "](< x)",
    "](<)",
    "see ADR-0005 and 12",
    "v2 3",
]

FILE_NAME = re.compile(r"^(?:adr[-_ ]?)?(\d{1,6})(?:[-_ .].*)?\.(?:md|markdown)$", re.IGNORECASE)
DATED_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}[-_]")
TITLE = re.compile(r"^#(?!#)\s*(.*?)\s*#*\s*$")
TITLE_NUMBER = re.compile(r"^(?:adr[-_ #]*)?0*(\d{1,6})\s*(?:[.:)\-–—]\s*|\s+)", re.IGNORECASE)
HEADING = re.compile(r"^#{1,6}\s*(.*?)\s*#*\s*$")
FIELD = re.compile(r"^\s*(?:[*+-]\s+)?(?:\*\*|__)?(status|date)(?:\*\*|__)?\s*:\s*(.*)$", re.I)
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
LINK_TARGET = re.compile(r"\]\(\s*<?([^)>\s]+)")
REFERENCE = re.compile(r"(?:adr[-_ #]*)?\b0*(\d{1,6})\b", re.IGNORECASE)
WORD = re.compile(r"[a-z]+")


def _expected_name_number(name: str) -> int | None:
    if DATED_NAME.match(name):
        return None
    match = FILE_NAME.match(name)
    return int(match.group(1)) if match else None


def _group(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.match(text)
    return match.group(1) if match else None


def _title_number(text: str) -> tuple[int, int] | None:
    match = TITLE_NUMBER.match(text)
    return (int(match.group(1)), match.end()) if match else None


def _field(text: str) -> tuple[str, str] | None:
    match = FIELD.match(text)
    return (match.group(1).lower(), match.group(2).strip()) if match else None


def _found_field(text: str) -> tuple[str, str] | None:
    found = scanning.header_field(text)
    return (found[0], found[1].strip()) if found else None


def _iso_date(text: str) -> tuple[str, ...] | None:
    match = ISO_DATE.search(text)
    return match.groups() if match else None


def _reference(text: str) -> int | None:
    match = REFERENCE.search(text)
    return int(match.group(1)) if match else None


def _word(text: str) -> str | None:
    words = WORD.findall(text.lower())
    return words[0] if words else None


def _heading(reader, text: str) -> str | None:
    found = reader(text)
    return None if found is None else found


READERS = [
    ("name_number", _expected_name_number, scanning.name_number),
    ("title_text", lambda t: _group(TITLE, t), scanning.title_text),
    ("heading_text", lambda t: _group(HEADING, t), scanning.heading_text),
    ("title_number", _title_number, scanning.title_number),
    ("header_field", _field, _found_field),
    ("iso_date", _iso_date, scanning.iso_date),
    ("link_targets", LINK_TARGET.findall, scanning.link_targets),
    ("first_reference", _reference, scanning.first_reference),
    ("first_word", _word, scanning.first_word),
]


@pytest.mark.parametrize(("name", "expected", "reader"), READERS, ids=[r[0] for r in READERS])
def test_each_reader_answers_as_its_pattern(name, expected, reader) -> None:
    wrong = [(text, expected(text), reader(text)) for text in SAMPLES]
    wrong = [case for case in wrong if case[1] != case[2]]
    assert wrong[:5] == []


def _mention_regex(normal: str) -> re.Pattern[str]:
    """The pattern karni_history_adr.matching.Mention's docstring spells out."""
    import posixpath

    path_start, path_end = r"(?<![\w./\\-])(?:\./)?", r"(?![\w/\\-]|\.\w)"
    module_start, module_end = r"(?<![\w.])", r"(?![\w]|\.[a-z_0-9])"
    alternatives = [path_start + re.escape(normal) + path_end]
    parts = normal[:-3].split("/") if normal.endswith(".py") else []
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if len(parts) >= 2 and all(part.isidentifier() for part in parts):
        alternatives.append(module_start + re.escape(".".join(parts)) + module_end)
    directory = posixpath.dirname(normal)
    if directory:
        slash = "/?" if "/" in directory else "/"
        alternatives.append(path_start + re.escape(directory) + slash + r"(?![\w/\\.-])")
        folders = directory.split("/")
        if len(folders) >= 2 and all(part.isidentifier() for part in folders):
            alternatives.append(module_start + re.escape(".".join(folders)) + module_end)
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives))


MENTION_PATHS = ["apps/events/models.py", "config/settings.py", "manage.py", "a/b/__init__.py"]
MENTION_PIECES = [
    "apps/events/models.py",
    "apps.events.models",
    "apps/events",
    "apps.events",
    "config/",
    "config.settings",
    "config",
    "manage.py",
    "a/b",
    "a.b",
    "a/b/__init__.py",
    "./",
    ".",
    "/",
    "\\",
    "-",
    "_",
    "x",
    "É",
    " ",
    "py",
    "c",
    "Event",
    "/x",
]


@pytest.mark.parametrize("path", MENTION_PATHS)
def test_mentions_are_found_as_the_pattern_finds_them(path: str) -> None:
    from karni_history_adr.matching import mention_pattern

    chooser = random.Random(path)
    texts = ["".join(chooser.choices(MENTION_PIECES, k=chooser.randint(1, 5))) for _ in range(3000)]
    mention, pattern = mention_pattern(path), _mention_regex(path)
    assert mention is not None
    wrong = [text for text in texts if mention.search(text) != bool(pattern.search(text))]
    assert wrong[:5] == []
    assert sum(mention.search(text) for text in texts) > 20  # the samples do mention it
