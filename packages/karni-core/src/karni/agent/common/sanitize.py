"""Cleaning text read from a repository or a store before it reaches an agent or a terminal.

Every Karni package prints text it did not write: app labels and file names,
provider briefs, ADR titles, history from a store. None of it may drive the
reader's terminal or pass for Karni's own output (see ``docs/security.md``):

- escape sequences (CSI, OSC such as a clipboard write, DCS…) and C0/C1
  control characters are removed; a tab becomes a space;
- every Unicode format character (category Cf: zero-width characters,
  bidirectional controls, the soft hyphen, the U+E0000–E007F tag characters)
  and the line and paragraph separators are removed;
- a lone surrogate becomes U+FFFD;
- in a brief, a line that starts the way Karni's own lines do (``HISTORY:``,
  an inventory key such as ``MODELS:``, a rule line such as ``K008 …``, the
  ``…`` truncation line, ``tip:``) is indented by two spaces
  (:data:`NEUTRAL_PREFIX`), since Karni's own lines never are.

Lines are produced lazily so a huge brief costs only what the cap can show.
"""

from __future__ import annotations

__all__ = [
    "NEUTRAL_PREFIX",
    "CleanStream",
    "clean_field",
    "clean_line",
    "clean_text",
    "imitates_karni",
    "iter_brief_lines",
    "neutralise",
    "one_line",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from re import Pattern
    from typing import Any, TextIO

NEUTRAL_PREFIX = "  "
"""What a brief line imitating Karni's own output is prefixed with."""

_ESCAPES: Pattern[str] | None = None
_CONTROLS: Pattern[str] | None = None


def _patterns() -> tuple[Pattern[str], Pattern[str]]:
    global _ESCAPES, _CONTROLS
    if _ESCAPES is None or _CONTROLS is None:
        # bench row "karni hook PreToolUse (brief printed)" runs without it
        import re

        _ESCAPES = re.compile(
            r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
            r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
            r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\|$)"  # OSC, DCS, SOS, PM, APC strings
            r"|[\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x9c|$)"  # their 8-bit forms
            r"|\x1b[ -/]*[0-~]"  # two-character escapes
        )
        _CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
    return _ESCAPES, _CONTROLS


def _without_format_characters(line: str) -> str:
    # bench row "karni hook PreToolUse (brief printed)" runs without it
    from unicodedata import category

    kept = []
    for character in line:
        if "\ud800" <= character <= "\udfff":
            kept.append("\ufffd")
        elif category(character) != "Cf":
            kept.append(character)
    return "".join(kept)


def clean_line(line: str, *, keep_tabs: bool = False) -> str:
    """Return ``line`` without escape sequences, controls or format characters, right-trimmed.

    Tabs become single spaces (unless ``keep_tabs``, for recovered file
    contents) and lone surrogates U+FFFD; see the module docstring for what
    is removed.
    """
    if line.isprintable():
        return line.rstrip()
    if keep_tabs and "\t" in line:
        return "\t".join(clean_line(part) for part in line.split("\t")).rstrip()
    escapes, controls = _patterns()
    line = controls.sub("", escapes.sub("", line.replace("\t", " ")))
    if not line.isprintable():
        line = _without_format_characters(line)
    return line.rstrip()


def clean_text(text: str, *, keep_tabs: bool = False) -> str:
    """``text`` with every line cleaned as :func:`clean_line` does; line breaks are kept."""
    if text.isprintable():
        return text
    return "\n".join(clean_line(line, keep_tabs=keep_tabs) for line in text.split("\n"))


class CleanStream:
    """A text stream that cleans everything written to it (see :func:`clean_text`).

    A command that prints store text in many places wraps ``sys.stdout`` and
    ``sys.stderr`` in it once, so no print can forget the sanitiser.
    """

    def __init__(self, stream: TextIO, *, keep_tabs: bool = False) -> None:
        self.stream = stream
        self.keep_tabs = keep_tabs

    def write(self, text: str) -> int:
        """Write ``text`` cleaned; returns the length given, as a stream does."""
        self.stream.write(clean_text(text, keep_tabs=self.keep_tabs))
        return len(text)

    def flush(self) -> None:
        """Flush the underlying stream."""
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def one_line(text: str) -> str:
    """``text`` as one clean line: line breaks (and whitespace around them) become one space.

    Cleaned as :func:`clean_line` does; leading whitespace is kept, so an
    indented report line stays indented.
    """
    parts = text.splitlines()
    if len(parts) > 1:
        text = parts[0].rstrip() + " " + " ".join(p.strip() for p in parts[1:] if p.strip())
    return clean_line(text)


def clean_field(value: str) -> str:
    """One field read from a store (a title, a date, a category) as a single clean line.

    As :func:`one_line`, and stripped on both sides.
    """
    return one_line(value).strip()


_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_KEY_CHARACTERS = _UPPER | frozenset("0123456789_")
_OWN_PREFIXES = ("…", "tip:", "karni:", "karni ")


def imitates_karni(line: str) -> bool:
    """Whether ``line`` starts the way one of Karni's own output lines does.

    That is ``HISTORY:`` or another inventory key (capitals, digits and
    underscores, then a colon), a rule code (one to three capitals and three
    digits, then a space or the end), the ``…`` truncation line, ``tip:``, or
    ``karni:``/``karni …``.
    """
    if not line:
        return False
    if line.startswith(_OWN_PREFIXES):
        return True
    if line[0] not in _UPPER:
        return False
    head, colon, _ = line.partition(":")
    if colon and set(head) <= _KEY_CHARACTERS:
        return True
    letters = len(head) - len(head.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    code = line[: letters + 3]
    return (
        1 <= letters <= 3
        and code[letters:].isdigit()
        and code[letters:].isascii()
        and len(code) == letters + 3
        and (len(line) == len(code) or line[len(code)].isspace())
    )


def neutralise(line: str) -> str:
    """``line`` indented by :data:`NEUTRAL_PREFIX` when it imitates Karni's own output."""
    return NEUTRAL_PREFIX + line if imitates_karni(line) else line


def iter_brief_lines(text: str) -> Iterator[str]:
    """Yield the cleaned, neutralised, non-blank lines of ``text``, reading only as far as asked."""
    start = 0
    length = len(text)
    while start < length:
        end = text.find("\n", start)
        if end == -1:
            end = length
        line = clean_line(text[start:end])
        if line.strip():
            yield neutralise(line)
        start = end + 1
