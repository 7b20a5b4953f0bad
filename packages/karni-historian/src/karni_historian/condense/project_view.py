"""Messages as the project knows them: absolute tool paths shown project-relative.

Agents pass absolute paths to their tools. The chunk and the ``expand``
previews read better, and stay the same on every machine, with the path the
project knows the file by. Only the view changes; stored messages do not.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_historian.model import Message, TextPart, ToolPart

__all__ = ["project_view"]


_CACHE_LIMIT = 4096
"""Paths remembered per call of :func:`project_view`; the cache starts over when full."""


def _relative(root: str, path: str, cache: dict[str, str | None]) -> str | None:
    """``path`` relative to ``root`` when inside it, from ``cache`` or one look at the disk."""
    try:
        return cache[path]
    except KeyError:
        pass
    from karni.agent.common.paths import project_relative

    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    relative = project_relative(root, path)
    found = relative if relative and relative != "." else None
    cache[path] = found
    return found


def _relative_input(
    data: dict[str, object], root: str, cache: dict[str, str | None]
) -> dict[str, object]:
    """The path keys of a tool input that name a file inside the project, made relative."""
    from karni_historian.model import PATH_KEYS

    updates: dict[str, object] = {}
    for key in PATH_KEYS:
        value = data.get(key)
        if isinstance(value, str) and os.path.isabs(value):
            relative = _relative(root, value, cache)
            if relative:
                updates[key] = relative
    return updates


def project_view(
    messages: Iterable[Message], root: str, cache: dict[str, str | None] | None = None
) -> list[Message]:
    """The messages with absolute tool paths inside ``root`` shown project-relative.

    ``cache`` remembers resolved paths across calls (one dict per run).
    """
    cache = {} if cache is None else cache
    viewed: list[Message] = []
    for message in messages:
        parts = _viewed_parts(message.parts, root, cache)
        viewed.append(message if parts is None else _with_parts(message, parts))
    return viewed


def _viewed_parts(
    parts: tuple[TextPart | ToolPart, ...], root: str, cache: dict[str, str | None]
) -> tuple[TextPart | ToolPart, ...] | None:
    """``parts`` with project-relative tool paths, or None when no path changes."""
    from karni_historian.model import ToolPart

    changed: list[TextPart | ToolPart] | None = None
    for index, part in enumerate(parts):
        data = getattr(part, "input", None)
        if not isinstance(data, dict):
            continue
        updates = _relative_input(data, root, cache)
        if updates:
            assert isinstance(part, ToolPart)
            changed = changed or list(parts)
            changed[index] = ToolPart(
                part.name,
                {**data, **updates},
                part.output,
                part.call_id,
                part.is_error,
                part.metadata,
            )
    return None if changed is None else tuple(changed)


def _with_parts(message: Message, parts: tuple[TextPart | ToolPart, ...]) -> Message:
    from karni_historian.model import Message

    return Message(
        message.ordinal,
        message.role,
        parts,
        message.session_id,
        message.timestamp,
        message.message_id,
    )
