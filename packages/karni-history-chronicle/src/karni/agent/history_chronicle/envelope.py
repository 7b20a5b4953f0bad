"""Accepting only Chronicle's own reply: its ``apiVersion: 1`` JSON envelope.

Chronicle prints one compact JSON object per ``--json`` run. Anything else on
stdout (not UTF-8, not JSON, not an object, another API version, the reply to
another command) means this is not the Chronicle the provider was written
for, and the provider stays silent (docs/chronicle-contract.md, "The reply").
"""

from __future__ import annotations

__all__ = ["API_VERSION", "parse_envelope"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

API_VERSION = 1
"""The only envelope version this provider understands."""


def parse_envelope(stdout: bytes, command: str) -> dict[str, Any] | None:
    """The decoded reply to ``command``, or None when it is not Chronicle's envelope.

    Args:
        stdout: Everything the command printed on stdout.
        command: The subcommand that was run (``context`` or ``knowledge``);
            the envelope's ``command`` key must name it.
    """
    from karni.agent.common.jsontext import loads  # json.loads without importing json

    try:
        data = loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    version = data.get("apiVersion")
    if type(version) is not int or version != API_VERSION:  # `true == 1` must not pass
        return None
    if data.get("command") != command:
        return None
    return data
