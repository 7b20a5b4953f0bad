"""Turning a value a provider returned into text any output stream can write.

A provider may return a ``str`` subclass whose methods raise or hang, or a
string holding lone surrogates that no encoder accepts. :func:`plain_text`
runs inside the isolated provider call (``docs/how-to/write-a-provider.md``), so
whatever such a value does happens under the call's deadline, and what
reaches Karni is an exact ``str`` that encodes as UTF-8.
"""

from __future__ import annotations

__all__ = ["plain_text"]

_SURROGATES = "[\ud800-\udfff]"


def plain_text(value: object) -> str | None:
    """``value`` as an exact, encodable ``str``; None when it is not a string.

    Lone surrogates become U+FFFD. A ``str`` subclass is copied through
    ``str``'s own method, so none of its overrides runs.
    """
    if not isinstance(value, str):
        return None
    text = str.__str__(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # bench row "karni hook PreToolUse (brief printed)" runs without it
        import re

        text = re.sub(_SURROGATES, "\ufffd", text)
    return text
