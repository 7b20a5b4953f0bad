"""Cleaning a provider's text before it reaches an agent or a terminal.

A store's text must never drive the reader's terminal: escape sequences and
control characters are removed, tabs become spaces, blank lines are dropped
and trailing whitespace is trimmed. Lines are produced lazily so a huge brief
costs only what the cap can show.
"""

from __future__ import annotations

__all__ = ["clean_line", "iter_brief_lines"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from re import Pattern

_ESCAPES: Pattern[str] | None = None
_CONTROLS: Pattern[str] | None = None


def _patterns() -> tuple[Pattern[str], Pattern[str]]:
    global _ESCAPES, _CONTROLS
    if _ESCAPES is None or _CONTROLS is None:
        import re

        _ESCAPES = re.compile(
            r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
            r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
            r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\|$)"  # OSC, DCS, SOS, PM, APC strings
            r"|[\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x9c|$)"  # their 8-bit forms
            r"|\x1b[ -/]*[0-~]"  # two-character escapes
        )
        _CONTROLS = re.compile(
            "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
        )
    return _ESCAPES, _CONTROLS


def clean_line(line: str) -> str:
    """Return ``line`` without escape sequences or control characters, right-trimmed.

    Tabs become single spaces; bidirectional overrides are removed too, since
    they reorder what a terminal shows.
    """
    if not line.isprintable():
        escapes, controls = _patterns()
        line = controls.sub("", escapes.sub("", line.replace("\t", " ")))
    return line.rstrip()


def iter_brief_lines(text: str) -> Iterator[str]:
    """Yield the cleaned, non-blank lines of ``text``, reading only as far as asked."""
    start = 0
    length = len(text)
    while start < length:
        end = text.find("\n", start)
        if end == -1:
            end = length
        line = clean_line(text[start:end])
        if line.strip():
            yield line
        start = end + 1
