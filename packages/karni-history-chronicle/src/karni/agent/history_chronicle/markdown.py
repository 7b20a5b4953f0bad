"""Compacting the Markdown of ``chronicle context`` into a brief that survives the cap.

Chronicle's Markdown is written to be pasted into a chat: a title, an italic
paragraph of boilerplate, the prompt list, the Project Memory (or the older
"Decisions & TODOs") block and an italic footer after ``---``. Karni keeps
only the start of a brief, so the compact form drops the title, the
boilerplate, the footer and blank lines, collapses runs of spaces, and moves
every section that is not the prompt list ahead of it: decisions and failed
approaches are what an agent must see before an edit. Headings are matched
leniently and unknown sections are kept, since Chronicle's wording changes.
"""

from __future__ import annotations

__all__ = ["compact_markdown", "is_prompt_list_heading"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_PROMPT_LIST_HEADING = "what shaped"


def is_prompt_list_heading(line: str) -> bool:
    """Whether ``line`` opens the prompt list (``## What shaped this file``)."""
    return line.startswith("## ") and line[3:].strip().lower().startswith(_PROMPT_LIST_HEADING)


def _collapse(line: str) -> str:
    return " ".join(part for part in line.replace("\t", " ").split(" ") if part)


def _without_footer(lines: list[str]) -> list[str]:
    """Everything before the last line that is exactly ``---``."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip() == "---":
            return lines[:index]
    return lines


def _without_title(lines: list[str]) -> list[str]:
    for index, line in enumerate(lines):
        if line.strip():
            return lines[index + 1 :] if line.startswith("# ") else lines
    return []


def _paragraphs(lines: Iterable[str]) -> list[list[str]]:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [paragraph for paragraph in paragraphs if paragraph]


def _is_italic(paragraph: list[str]) -> bool:
    first, last = paragraph[0].strip(), paragraph[-1].strip()
    return first.startswith("_") and last.endswith("_") and len(first + last) > 2


def compact_markdown(markdown: str) -> str:
    r"""The compact brief for Chronicle's ``markdown``: non-blank lines joined by ``\\n``.

    Returns:
        The brief, or ``""`` when nothing is left (an empty pack's Markdown
        compacts to nothing).
    """
    lines = [line.rstrip("\r") for line in markdown.split("\n")]
    lines = _without_title(_without_footer(lines))
    preamble: list[str] = []
    sections: list[list[str]] = []
    for line in lines:
        if line.startswith("## "):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
        else:
            preamble.append(line)
    kept_preamble = [
        line
        for paragraph in _paragraphs(preamble)
        if not _is_italic(paragraph)
        for line in paragraph
    ]
    ahead = [section for section in sections if not is_prompt_list_heading(section[0])]
    behind = [section for section in sections if is_prompt_list_heading(section[0])]
    ordered = [kept_preamble, *ahead, *behind]
    compact = (_collapse(line) for block in ordered for line in block)
    return "\n".join(line for line in compact if line)
