"""Secrets out of every text that leaves the machine or lands in a dump.

Before a prompt is sent to a model, and before an error, a note or a failure
dump is written, the text goes through :class:`Redactor`, which replaces each
secret by :data:`MARKER` (and text the user wrapped in ``<private>…</private>``
by :data:`PRIVATE_MARK`): API keys and tokens of the common providers,
private key blocks, ``Authorization`` (and ``x-api-key``) header values,
values assigned to names that say they are secret, the values of ``.env``
files the agent read, and the credentials Karni itself took from the
environment. The patterns are :mod:`karni_historian.secret_patterns`' list,
documented in ``docs/historian-models.md``.
"""

from __future__ import annotations

import re

from karni_historian.model import PATH_KEYS, ToolPart
from karni_historian.secret_patterns import (
    ASSIGNMENT,
    BEARER,
    HEADER,
    PRIVATE_KEY,
    TOKEN_PATTERNS,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from karni_historian.model import Message

__all__ = ["MARKER", "PRIVATE_MARK", "PRIVATE_SPAN", "Redactor", "env_file_values"]

MARKER = "[REDACTED]"
"""What a secret is replaced by."""

_ENV_LINE = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.\-]*\s*=\s*(.*?)\s*$")
_ENV_FILE = re.compile(r"(?:^|[\\/])\.env(?:\.[A-Za-z0-9_\-]+)?$|(?:^|[\\/])[^\\/]+\.env$")
_MIN_SECRET = 6


PRIVATE_MARK = "[private]"
"""What text the user wrapped in ``<private>…</private>`` is replaced by."""

PRIVATE_SPAN = r"(?i)<private>.*?(?:</private>|\Z)"
"""A ``<private>`` span of a prompt (an unclosed one runs to the end of the text)."""


def _compiled() -> list[tuple[re.Pattern[str], str]]:
    patterns = [(re.compile(PRIVATE_SPAN, re.DOTALL), PRIVATE_MARK)]
    patterns += [(re.compile(PRIVATE_KEY, re.DOTALL), MARKER)]
    patterns += [(re.compile(HEADER), rf"\1\2\3{MARKER}")]
    patterns += [(re.compile(BEARER), rf"\1{MARKER}")]
    patterns += [(re.compile(rf"(?<![A-Za-z0-9]){p}"), MARKER) for _, p in TOKEN_PATTERNS]
    patterns += [(re.compile(ASSIGNMENT), rf"\1\2{MARKER}")]
    return patterns


_PATTERNS: list[tuple[re.Pattern[str], str]] = []


class Redactor:
    """Replaces secrets in text by :data:`MARKER`.

    Args:
        values: Exact secrets to remove wherever they appear (credentials
            read from the environment, ``.env`` values the agent read);
            values shorter than six characters are ignored, so that common
            words are never blanked.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        """Create the redactor for the patterns and these exact ``values``."""
        if not _PATTERNS:
            _PATTERNS.extend(_compiled())
        self._values = sorted(
            {value for value in values if len(value.strip()) >= _MIN_SECRET},
            key=len,
            reverse=True,
        )

    def with_values(self, values: Iterable[str]) -> Redactor:
        """A redactor that also removes ``values``."""
        return Redactor([*self._values, *values])

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by the marker."""
        for value in self._values:
            if value in text:
                text = text.replace(value, MARKER)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value.split(" #", 1)[0].strip()


def env_file_values(messages: Sequence[Message]) -> list[str]:
    """The values of the ``.env`` files the agent read, from its tool calls' outputs.

    A tool call whose input names a ``.env`` file (``.env``, ``.env.local``,
    ``prod.env`` …) contributes the right-hand side of every ``NAME=value``
    line of its output, so those values can be redacted wherever they reappear.
    """
    values: list[str] = []
    for message in messages:
        for part in message.parts:
            if not isinstance(part, ToolPart) or not part.output:
                continue
            given = part.input if isinstance(part.input, dict) else {}
            paths = [given.get(key) for key in PATH_KEYS]
            command = given.get("command")
            named = [p for p in paths if isinstance(p, str)]
            if isinstance(command, str):
                named += command.split()
            if not any(_ENV_FILE.search(path) for path in named):
                continue
            for line in part.output.splitlines():
                match = _ENV_LINE.match(line.split("→", 1)[-1])
                if match:
                    values.append(_unquote(match.group(1)))
    return values
