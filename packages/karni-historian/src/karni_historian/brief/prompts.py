"""The meaningful text of a user prompt, read from the store's text parts.

A file brief ties each edit to the prompt that asked for it. What counts as
a prompt is what the chunk builder counts (``docs/historian/chunk.md``):
``<system-reminder>`` blocks, the internal-initiator marker and harness
directives are not the user's words. This module works on plain strings, so
the brief needs neither the model classes nor the chunk builder on the hot
path of ``karni context``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from re import Pattern

__all__ = ["prompt_text"]

_INTERNAL_INITIATOR_MARKER = "<!-- OMO_INTERNAL_INITIATOR -->"
_DIRECTIVE_PREFIX = "[SYSTEM DIRECTIVE: MAGIC-CONTEXT"
_PATTERNS: dict[str, Pattern[str]] = {}


def _pattern(name: str) -> Pattern[str]:
    if not _PATTERNS:
        import re

        _PATTERNS["reminder"] = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
        _PATTERNS["space"] = re.compile(r"\s+")
    return _PATTERNS[name]


def _cleaned(text: str) -> str:
    """One text part without reminders and markers, whitespace collapsed; ``""`` for a directive."""
    if "<system-reminder>" in text:
        text = _pattern("reminder").sub("", text)
    text = text.replace(_INTERNAL_INITIATOR_MARKER, "")
    text = _pattern("space").sub(" ", text).strip()
    return "" if text.startswith(_DIRECTIVE_PREFIX) else text


def prompt_text(texts: Sequence[str]) -> str:
    """The meaningful text of a user message's (not ignored) text parts, joined by `` / ``."""
    return " / ".join(cleaned for cleaned in map(_cleaned, texts) if cleaned)
