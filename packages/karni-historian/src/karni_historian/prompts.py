"""The meaningful text of a user prompt, read from the store's text parts.

A file brief ties each edit to the prompt that asked for it, and the chunk
builder keeps a session's prompts; both read them here
(``docs/historian/chunk.md``):
``<system-reminder>`` blocks, the internal-initiator marker and harness
directives are not the user's words. This module works on plain strings, so
the brief needs neither the model classes nor the chunk builder on the hot
path of ``karni context``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DIRECTIVE_PREFIX",
    "INTERNAL_INITIATOR_MARKER",
    "SCENE_WORDS",
    "clean_prompt_part",
    "first_word",
    "prompt_text",
]

INTERNAL_INITIATOR_MARKER = "<!-- OMO_INTERNAL_INITIATOR -->"
"""A marker some harnesses add to prompts they send themselves; not user text."""
DIRECTIVE_PREFIX = "[SYSTEM DIRECTIVE: MAGIC-CONTEXT"
"""How a harness directive starts: not a prompt."""
SCENE_WORDS = frozenset((
    "our", "the", "this", "that", "these", "those", "it", "its", "there", "my",
    "currently", "recently", "lately", "today", "yesterday",
))  # fmt: skip
"""First words of a sentence that sets the scene or reports what happened
(``Our client keeps getting HTTP 429.``) rather than asks or rules."""
_REMINDER_OPEN = "<system-reminder>"
_REMINDER_CLOSE = "</system-reminder>"


def _without_reminders(text: str) -> str:
    """``text`` without its closed ``<system-reminder>`` blocks (an unclosed one stays)."""
    kept: list[str] = []
    position = 0
    while (start := text.find(_REMINDER_OPEN, position)) >= 0:
        end = text.find(_REMINDER_CLOSE, start + len(_REMINDER_OPEN))
        if end < 0:
            break
        kept.append(text[position:start])
        position = end + len(_REMINDER_CLOSE)
    kept.append(text[position:])
    return "".join(kept)


def clean_prompt_part(text: str, *, lines: bool = False) -> str:
    """One text part without reminders and markers; ``""`` for a directive.

    Whitespace is collapsed, or with ``lines`` only within each line (blank
    lines kept as one), for readers that tell pasted output by its lines.
    """
    if _REMINDER_OPEN in text:
        text = _without_reminders(text)
    text = text.replace(INTERNAL_INITIATOR_MARKER, "")
    if lines:
        text = "\n".join(" ".join(line.split()) for line in text.strip().splitlines())
    else:
        text = " ".join(text.split())
    return "" if text.startswith(DIRECTIVE_PREFIX) else text


def prompt_text(texts: Sequence[str], *, lines: bool = False) -> str:
    """The meaningful text of a user message's (not ignored) text parts, joined by `` / ``.

    With ``lines``, each part keeps its line breaks (see :func:`clean_prompt_part`).
    """
    parts = (clean_prompt_part(text, lines=lines) for text in texts)
    return (" /\n" if lines else " / ").join(part for part in parts if part)


def first_word(sentence: str) -> str:
    """The sentence's first word, lowercased, without the quotes or marks around it."""
    words = sentence.split(None, 1)
    return words[0].lower().strip("\"'`*,:") if words else ""
