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

    from karni_historian.model import Message, ToolPart

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


def _relative_input(part: ToolPart, root: str, cache: dict[str, str | None]) -> dict[str, object]:
    """The path keys of the part's input that name a file inside the project, made relative."""
    from karni_historian.model import PATH_KEYS

    assert isinstance(part.input, dict)
    updates: dict[str, object] = {}
    for key in PATH_KEYS:
        value = part.input.get(key)
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
    from dataclasses import replace

    from karni_historian.model import ToolPart

    cache = {} if cache is None else cache
    viewed: list[Message] = []
    for message in messages:
        parts = list(message.parts)
        changed = False
        for index, part in enumerate(parts):
            if isinstance(part, ToolPart) and isinstance(part.input, dict):
                updates = _relative_input(part, root, cache)
                if updates:
                    parts[index] = replace(part, input={**part.input, **updates})
                    changed = True
        viewed.append(replace(message, parts=tuple(parts)) if changed else message)
    return viewed
