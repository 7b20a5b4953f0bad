"""XML text escaping shared by the history renderer and the historian's XML format.

The ``<session-history>`` block and the historian's output escape the same
way (``docs/historian/blocks.md``): bodies escape ``&``, ``<`` and ``>`` (``&``
first); attribute values also escape ``"``; apostrophes are never escaped.
Reading unescapes the five XML entities, ``&amp;`` last.
"""

from __future__ import annotations

__all__ = ["escape_attr", "escape_body", "unescape"]


def escape_body(text: str) -> str:
    """Escape element text: ``&``, ``<`` and ``>``."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attr(text: str) -> str:
    """Escape an attribute value: ``&``, ``<``, ``>`` and ``"``, in that order."""
    return escape_body(text).replace('"', "&quot;")


def unescape(text: str) -> str:
    """Undo ``&lt; &gt; &quot; &apos; &amp;`` (``&amp;`` last, so ``&amp;lt;`` stays ``&lt;``)."""
    if "&" not in text:
        return text
    return (
        text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&apos;", "'")
        .replace("&amp;", "&")
    )
