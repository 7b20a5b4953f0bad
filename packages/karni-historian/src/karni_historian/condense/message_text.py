"""What one message says on a chunk's line: its role letter, its user text, its tool calls.

The chunk builder (:mod:`karni_historian.condense.chunk`), the protected
tail (:mod:`karni_historian.condense.boundaries`), the built-in historian and
``expand`` read messages the same way (``docs/historian/chunk.md``): a user
turn's meaningful text, a tool call's compact ``TC:`` summary, the commit
hashes a line names, and the raw tokens a message counts for the triggers.
"""

from __future__ import annotations

import json
import re

from karni_historian.budget import estimate_tokens
from karni_historian.condense.prose import rules_out
from karni_historian.model import Message, TextPart, ToolPart
from karni_historian.prompts import clean_prompt_part, prompt_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

__all__ = [
    "collapse",
    "extract_commits",
    "is_meaningful_user_message",
    "json_text",
    "meaningful_user_text",
    "raw_tokens",
    "role_letter",
    "tool_summary",
]

_KEY_ARGS_CUT = ("filePath", "file_path", "notebook_path", "path", "pattern", "query")
_KEY_ARGS_WHOLE = ("symbol", "module", "action")

_RE: dict[str, re.Pattern[str]] = {}


def _regex(name: str) -> re.Pattern[str]:
    pattern = _RE.get(name)
    if pattern is None:
        _RE["hash"] = re.compile(r"`?\b([0-9a-f]{7,12})\b`?", re.I)
        _RE["verb"] = re.compile(
            r"\b(commit(ted|ting|s)?|cherry-?pick(ed|ing|s)?|merge[ds]?|merging|rebas(e|ed|es|ing))\b",
            re.I,
        )
        _RE["parens"] = re.compile(r"\(\s*\)")
        _RE["space_comma"] = re.compile(r"\s+,")
        _RE["commas"] = re.compile(r",\s*,+")
        _RE["spaces"] = re.compile(r"\s{2,}")
        _RE["space_punct"] = re.compile(r"\s+([,.;:])")
        pattern = _RE[name]
    return pattern


_ROLE_LETTERS = {"assistant": "A", "user": "U"}


def role_letter(role: str) -> str:
    """The chunk's letter for a role: ``A`` for assistant, ``U`` for user, else its initial."""
    return _ROLE_LETTERS.get(role) or (role[:1].upper() or "?")


def collapse(text: str) -> str:
    """``text`` on one line, its whitespace runs as single spaces."""
    return " ".join(text.split())


def meaningful_user_text(message: Message) -> str:
    """Return the meaningful text of a user message, parts joined by `` / ``.

    Ignored parts, ``<system-reminder>`` blocks, the internal-initiator marker
    and harness directives are not meaningful (``docs/historian/chunk.md``).

    Args:
        message: Any message.

    Returns:
        The cleaned text, or ``""`` for non-user messages and messages with
        nothing meaningful.
    """
    if message.role != "user":
        return ""
    return prompt_text(
        [part.text for part in message.parts if isinstance(part, TextPart) and not part.ignored]
    )


def is_meaningful_user_message(message: Message) -> bool:
    """Tell whether ``message`` is a user turn with meaningful text (``docs/historian/chunk.md``).

    Args:
        message: Any message.

    Returns:
        True for a user message with at least one meaningful text part.
    """
    if message.role != "user":
        return False
    for part in message.parts:
        if isinstance(part, TextPart) and not part.ignored and clean_prompt_part(part.text):
            return True
    return False


def tool_summary(part: ToolPart) -> str:
    """Return the compact ``TC:`` summary of a tool call (the legacy form).

    Args:
        part: The tool call.

    Returns:
        ``TC: <description>`` when the input or metadata has one, else
        ``TC: tool(keyArg)`` when a key argument is a string, else ``TC: tool``.
    """
    data = part.input if isinstance(part.input, dict) else {}
    meta = part.metadata if isinstance(part.metadata, dict) else {}
    for source in (data, meta):
        description = source.get("description")
        if isinstance(description, str) and description.strip():
            return f"TC: {collapse(description)}"
    for key in _KEY_ARGS_CUT:
        value = data.get(key)
        if isinstance(value, str):
            value = collapse(value)
            if len(value) > 60:
                value = value[:60] + "…"
            return f"TC: {part.name}({value})"
    for key in _KEY_ARGS_WHOLE:
        value = data.get(key)
        if isinstance(value, str):
            return f"TC: {part.name}({collapse(value)})"
    return f"TC: {part.name}"


_VERB_LITERALS = ("commit", "cherry", "merg", "rebas")
"""What lower-cased ASCII text holds when the ``verb`` pattern matches it."""


def extract_commits(text: str) -> tuple[str, list[str]]:
    """``text`` without the commit hashes it names after a commit verb, and those hashes."""
    if rules_out(text, _VERB_LITERALS):
        return text, []  # no verb: no commit, whatever hashes it names
    hash_re = _regex("hash")
    found = hash_re.findall(text)
    if not found or not _regex("verb").search(text):
        return text, []
    hashes: list[str] = []
    for h in found:
        h = h.lower()
        if h not in hashes:
            hashes.append(h)
    cleaned = hash_re.sub("", text)
    cleaned = _regex("parens").sub("", cleaned)
    cleaned = _regex("space_comma").sub(",", cleaned)
    cleaned = _regex("commas").sub(", ", cleaned)
    cleaned = _regex("spaces").sub(" ", cleaned)
    cleaned = _regex("space_punct").sub(r"\1", cleaned).strip()
    return (cleaned or text), hashes


json_text = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""A tool input as the raw tokens count it: ``json.dumps(v, ensure_ascii=False, default=str)``."""


def raw_tokens(message: Message, estimate: Callable[[str], int] = estimate_tokens) -> int:
    """Estimate the true-raw tokens of a message, tool inputs and outputs included.

    Args:
        message: Any message.
        estimate: The token estimator.

    Returns:
        The estimated tokens of every text part, tool input (as JSON) and output.
    """
    total = 0
    for part in message.parts:
        if isinstance(part, TextPart):
            total += estimate(part.text)
        else:
            try:
                total += estimate(json_text(part.input))
            except (TypeError, ValueError):
                total += estimate(str(part.input))
            if part.output:
                total += estimate(part.output)
    return total
