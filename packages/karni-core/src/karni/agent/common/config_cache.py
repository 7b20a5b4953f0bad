"""Parsed configuration files, remembered by their exact text, so most runs skip ``tomllib``.

Importing :mod:`tomllib` brings in ``re``, ``typing``, ``datetime`` and
``string``: more work than a bare interpreter start, paid by every
``karni check`` of a project or user with a settings file. So a document
parsed once is kept in Karni's cache folder (:mod:`karni.agent.common.cache`),
one cache file per configuration path, holding the text it was parsed from
and the document as JSON. It is used only while the file's text is exactly
that text: a changed file is parsed again whatever its timestamps say, and
a file that is not valid TOML is never remembered. A document holding a
TOML date or time (which JSON cannot hold), or a text over
:data:`MAX_CACHED_TEXT` characters, is not cached. Every failure here means
"parse it", never an error. See docs/performance.md.
"""

from __future__ import annotations

from karni.agent.common.cache import cache_file, read_cache, write_cache
from karni.agent.common.jsontext import dumps, loads

__all__ = ["MAX_CACHED_TEXT", "TAG", "cached_document", "remember_document"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAG = "karni-config 1"
"""The cache files' format tag."""

MAX_CACHED_TEXT = 64 << 10
"""The longest configuration text (in characters) whose document is cached."""

_KIND = "config"


def cached_document(path: str, text: str) -> dict[str, Any] | None:
    """The document parsed from ``text`` when ``path`` was last read with that text, else None."""
    file = cache_file(_KIND, path) if len(text) <= MAX_CACHED_TEXT else None
    body = None if file is None else read_cache(file, TAG)
    if body is None:
        return None

    try:
        stored = loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(stored, list) or len(stored) != 2 or stored[0] != text:
        return None
    document = stored[1]
    return document if isinstance(document, dict) else None


def remember_document(path: str, text: str, document: dict[str, Any]) -> None:
    """Keep ``document``, parsed from ``text`` read at ``path``, for :func:`cached_document`."""
    file = cache_file(_KIND, path) if len(text) <= MAX_CACHED_TEXT else None
    if file is None:
        return

    try:
        body = dumps([text, document], compact=True)
    except (TypeError, RecursionError):  # a date or time value: JSON has none
        return
    write_cache(file, TAG, body)
